//! One module per command that prints and exits; the TUI lives in `app` and `ui`.

pub mod parse;
pub mod snapshot;

use crate::collect::source::{self, Remote, RemoteFactory};
use crate::collect::transport::{CollectError, Transport};
use crate::config::Config;
use std::sync::Arc;

/// The transport for a remote switch or node (SSH, NX-API).
pub fn remote_transport(_cfg: &Config, r: Remote<'_>) -> Result<Arc<dyn Transport>, CollectError> {
    let name = match r {
        Remote::Switch(s) => &s.name,
        Remote::Node(n) => &n.name,
    };
    Err(CollectError::Unavailable(format!(
        "{name}: no SSH transport in this build"
    )))
}

pub fn remote() -> RemoteFactory<'static> {
    &remote_transport
}

pub use source::build as build_sources;
