//! What it takes to reach one host: [`SshTarget`] and its parts, and how `~/.ssh/config`
//! fills it in.

use super::alias::{parse_jump, resolve_alias};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where a password for network gear comes from; never from the config file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PasswordSource {
    /// The value of this environment variable.
    Env(String),
    /// The first line this shell command prints (`pass show nexus`).
    Command(String),
}

/// What to do with a host whose key is not in known_hosts. A changed key is always refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HostKeyPolicy {
    #[default]
    Strict,
    /// Like OpenSSH `StrictHostKeyChecking=accept-new`: record the key and go on.
    AcceptNew,
}

/// Older algorithms some network OSes still need; enabled per device, never globally.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LegacyAlgorithms {
    pub dh_group14_sha1: bool,
    pub ecdh_nistp: bool,
    pub hmac_sha1: bool,
}

/// One host to reach over SSH, with everything needed to connect to it.
#[derive(Clone, Debug)]
pub struct SshTarget {
    /// The source name shown on screen.
    pub name: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    /// Tried in order after the agent; empty means `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`.
    pub identity_files: Vec<PathBuf>,
    pub password: Option<PasswordSource>,
    pub known_hosts: PathBuf,
    pub policy: HostKeyPolicy,
    pub connect_timeout: Duration,
    pub keepalive_interval: Duration,
    pub keepalive_max: usize,
    pub extra_algorithms: Option<LegacyAlgorithms>,
    pub proxy_jump: Option<Box<SshTarget>>,
    /// Exec channels open at once on the connection (OpenSSH allows 10 sessions).
    pub max_channels: usize,
    /// Network gear: may close the connection after each exec; see [`SshTransport::run_all`].
    pub switch_mode: bool,
    /// `[poll] mode = "stream"`: a node's polls come over one long-lived channel
    /// (`collect::stream`); switches ignore it.
    pub stream: bool,
    /// The ssh-agent socket; [`SshTarget::new`] takes `SSH_AUTH_SOCK`. `None`: no agent.
    pub agent_socket: Option<PathBuf>,
    /// First wait before reconnecting after a failure; doubles up to `reconnect_max`.
    pub reconnect_min: Duration,
    pub reconnect_max: Duration,
    /// Most stdout bytes read from one command: beyond it the command is stopped and the poll
    /// fails saying so (an endless answer must not take the memory).
    pub max_answer_bytes: usize,
}

impl SshTarget {
    /// A target with the config defaults (docs/architecture.md: known_hosts
    /// `~/.ssh/known_hosts`, strict, 5 s connect timeout, keepalive 5 s × 3, 4 channels, agent
    /// from `SSH_AUTH_SOCK`).
    pub fn new(name: &str, host: &str, port: u16, user: &str) -> Self {
        SshTarget {
            name: name.to_string(),
            host: host.to_string(),
            port,
            user: user.to_string(),
            identity_files: Vec::new(),
            password: None,
            known_hosts: home().join(".ssh/known_hosts"),
            policy: HostKeyPolicy::Strict,
            connect_timeout: Duration::from_secs(5),
            keepalive_interval: Duration::from_secs(5),
            keepalive_max: 3,
            extra_algorithms: None,
            proxy_jump: None,
            stream: false,
            max_channels: 4,
            switch_mode: false,
            agent_socket: std::env::var_os("SSH_AUTH_SOCK")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
            reconnect_min: Duration::from_secs(1),
            reconnect_max: Duration::from_secs(60),
            max_answer_bytes: crate::config::DEFAULT_MAX_ANSWER_BYTES,
        }
    }

    /// `[127.0.0.1]:2222` or `host` for port 22, as known_hosts writes it.
    pub fn host_port(&self) -> String {
        if self.port == 22 {
            self.host.clone()
        } else {
            format!("[{}]:{}", self.host, self.port)
        }
    }

    /// Fill in what `~/.ssh/config` says about this host (HostName, Port, User, IdentityFile,
    /// ProxyJump). Call it before applying settings given explicitly for this source.
    pub fn apply_ssh_config(&mut self, ssh_config: &Path) {
        apply_resolved(self, ssh_config, 0);
    }
}

fn apply_resolved(t: &mut SshTarget, ssh_config: &Path, depth: usize) {
    let r = resolve_alias(&t.host, ssh_config);
    t.host = r.host;
    if let Some(p) = r.port {
        t.port = p;
    }
    if let Some(u) = r.user {
        t.user = u;
    }
    if !r.identity_files.is_empty() {
        t.identity_files = r.identity_files;
    }
    // ProxyJump a,b: connect to a, through it to b, through b to the target. Depth-limited
    // so a config that jumps through itself cannot loop.
    let Some(chain) = r.proxy_jump.filter(|_| depth < 4) else {
        return;
    };
    let mut prev: Option<Box<SshTarget>> = None;
    for hop in chain.split(',').map(str::trim).filter(|h| !h.is_empty()) {
        let (user, host, port) = parse_jump(hop);
        let mut j = t.clone();
        j.name = format!("{} (jump {host})", t.name);
        j.host = host;
        j.port = 22;
        j.proxy_jump = None;
        j.switch_mode = false;
        apply_resolved(&mut j, ssh_config, depth + 1);
        if let Some(p) = port {
            j.port = p;
        }
        if let Some(u) = user {
            j.user = u;
        }
        if j.proxy_jump.is_none() {
            j.proxy_jump = prev.take();
        }
        prev = Some(Box::new(j));
    }
    t.proxy_jump = prev;
}

pub(crate) fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

/// A path as a person would type it: `$HOME/x` → `~/x`.
pub(crate) fn tilde(p: &Path) -> String {
    let h = home();
    match p.strip_prefix(&h) {
        Ok(rest) if h != Path::new("/") => format!("~/{}", rest.display()),
        _ => p.display().to_string(),
    }
}
