//! One module per command that prints and exits; the TUI lives in `app` and `ui`.

pub mod parse;
pub mod snapshot;

use crate::collect::nxapi::NxapiTransport;
use crate::collect::source::{self, Remote, RemoteFactory};
use crate::collect::transport::{CollectError, Transport};
use crate::config::{Config, SwitchTransport};
use std::sync::Arc;

/// The transport for a remote switch or node (SSH, NX-API).
pub fn remote_transport(cfg: &Config, r: Remote<'_>) -> Result<Arc<dyn Transport>, CollectError> {
    let name = match r {
        Remote::Switch(s) if s.transport == SwitchTransport::Nxapi => {
            let t = NxapiTransport::from_switch(s, cfg.ssh.connect_timeout)?;
            return Ok(Arc::new(t));
        }
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
