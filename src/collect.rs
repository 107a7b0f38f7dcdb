//! Collectors: sources, transports and the poll loop. A collector knows nothing of the screen.

pub mod collected;
pub mod demo;
pub mod focus;
pub mod local;
pub mod logtail;
pub mod nxapi;
pub mod ping;
pub mod poll;
pub mod prometheus;
pub mod source;
pub mod spread;
pub mod ssh;
pub mod stream;
pub mod transport;

pub use collected::{Collected, KeepRaw};
pub use source::{Source, SourceKind};
pub use transport::{Answers, CollectError, Request, StreamEvent, Transport};
