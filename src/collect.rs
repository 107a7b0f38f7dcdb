//! Collectors: sources, transports and the poll loop. A collector knows nothing of the screen.

pub mod demo;
pub mod host;
pub mod local;
pub mod logtail;
pub mod ping;
pub mod poll;
pub mod source;
pub mod ssh;
pub mod switch;
pub mod transport;

pub use poll::Collected;
pub use source::{Source, SourceKind};
pub use transport::{CollectError, Request, StreamEvent, Transport};
