//! Collectors: sources, transports and the poll loop. A collector knows nothing of the screen.

pub mod host;
pub mod logtail;
pub mod switch;
