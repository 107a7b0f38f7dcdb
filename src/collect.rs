//! Collectors: sources, transports and the poll loop. A collector knows nothing of the screen.

pub mod host;
pub mod local;
pub mod logtail;
pub mod ssh;
pub mod switch;
pub mod transport;

pub use transport::{CollectError, Request, StreamEvent, Transport};
