//! One module per command that prints and exits; the TUI lives in `app` and `ui`.

pub mod check;
pub mod docs;
pub mod export;
pub mod parse;
pub mod pingd;
pub mod record;
pub mod snapshot;

use crate::collect::nxapi::NxapiTransport;
use crate::collect::source::{self, Remote, RemoteFactory, Source};
use crate::collect::ssh::{LegacyAlgorithms, PasswordSource, SshTarget, SshTransport};
use crate::collect::transport::{CollectError, Transport};
use crate::config::{self, Config, Secret, SwitchTransport};
use futures::StreamExt;
use std::path::PathBuf;
use std::sync::Arc;

/// The SSH target for a switch or node: `~/.ssh/config` first, then what rocetop's config says.
pub fn ssh_target(cfg: &Config, r: &Remote<'_>) -> SshTarget {
    let (name, host, port, user, identity) = match r {
        Remote::Switch(s) => (
            &s.name,
            &s.host,
            s.port,
            Some(s.user.clone()),
            &s.identity_file,
        ),
        Remote::Node(n) => (&n.name, &n.host, n.port, n.user.clone(), &n.identity_file),
    };
    let default_user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let mut t = SshTarget::new(name, host, 22, &default_user);
    t.apply_ssh_config(&cfg.ssh.ssh_config);
    // Port 22 is the default; anything else was written on purpose and beats ~/.ssh/config.
    if port != 22 {
        t.port = port;
    }
    if let Some(u) = user {
        t.user = u;
    }
    let explicit: Vec<PathBuf> = identity
        .iter()
        .chain(cfg.ssh.identity_file.iter())
        .cloned()
        .collect();
    if !explicit.is_empty() {
        let mut files = explicit;
        files.append(&mut t.identity_files);
        files.dedup();
        t.identity_files = files;
    }
    t.known_hosts.clone_from(&cfg.ssh.known_hosts);
    t.policy = match cfg.ssh.host_key_policy {
        config::HostKeyPolicy::Strict => crate::collect::ssh::HostKeyPolicy::Strict,
        config::HostKeyPolicy::AcceptNew => crate::collect::ssh::HostKeyPolicy::AcceptNew,
    };
    t.connect_timeout = cfg.ssh.connect_timeout;
    t.max_answer_bytes = cfg.poll.max_answer_bytes;
    t.keepalive_interval = cfg.ssh.keepalive;
    t.stream = cfg.poll.mode == config::PollMode::Stream;
    if let Remote::Switch(s) = r {
        t.switch_mode = true;
        t.password = s.password.as_ref().map(|p| match p {
            Secret::Env(v) => PasswordSource::Env(v.clone()),
            Secret::Command(c) => PasswordSource::Command(c.clone()),
        });
        if !s.legacy_algorithms.is_empty() {
            let has = |a: &str| s.legacy_algorithms.iter().any(|x| x == a);
            t.extra_algorithms = Some(LegacyAlgorithms {
                dh_group14_sha1: has("dh-group14-sha1"),
                ecdh_nistp: has("ecdh-nistp"),
                hmac_sha1: has("hmac-sha1"),
            });
        }
    }
    t
}

/// The transport for a remote switch or node (SSH; NX-API for switches that say so).
pub fn remote_transport(cfg: &Config, r: Remote<'_>) -> Result<Arc<dyn Transport>, CollectError> {
    match r {
        Remote::Switch(s) if s.transport == SwitchTransport::Nxapi => Ok(Arc::new(
            NxapiTransport::from_switch(s, cfg.ssh.connect_timeout)?,
        )),
        _ => Ok(Arc::new(SshTransport::new(ssh_target(cfg, &r)))),
    }
}

pub fn remote() -> RemoteFactory<'static> {
    &remote_transport
}

pub use source::build as build_sources;

/// Open every remote connection before the first poll, `max_concurrent_connects` at a time.
/// Failures are not returned: the first poll reports them per source.
pub async fn warm_up(cfg: &Config, sources: &[Arc<Source>]) {
    let mut seen: Vec<*const ()> = Vec::new();
    let mut transports: Vec<Arc<dyn Transport>> = Vec::new();
    for s in sources {
        let p = Arc::as_ptr(&s.transport) as *const ();
        if !seen.contains(&p) {
            seen.push(p);
            transports.push(s.transport.clone());
        }
    }
    futures::stream::iter(transports)
        .map(|t| async move {
            let _ = t.warm_up().await;
        })
        .buffer_unordered(cfg.ssh.max_concurrent_connects)
        .collect::<Vec<()>>()
        .await;
}
