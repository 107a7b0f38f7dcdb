//! How a collector reaches a machine: run a request and get its output, or stream a request's
//! lines. Implementations: `ssh` (russh, one connection per host), `local`, `demo`, `replay`.
//!
//! Requests are data, not shell strings: every remote command line is built here from names that
//! config validation has already checked against a strict pattern (`config::validate_name`).

use async_trait::async_trait;
use std::fmt;
use std::time::Duration;
use tokio::sync::mpsc;

/// What a collector asks a transport for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Request {
    /// A network-OS CLI command (`show queuing interface ...`), sent as is.
    Cli(String),
    /// Every hw_counters and counters file of the given RDMA devices (all when empty), the port
    /// state and GID netdevs, and the kernel statistics of the netdevs, as `path:value` lines.
    SysfsDump {
        root: String,
        devices: Vec<String>,
        netdevs: Vec<String>,
    },
    /// `ethtool -S <netdev>`.
    Ethtool { netdev: String },
    /// The last `lines` lines of a file (the training log, for one-shot polls).
    Tail { path: String, lines: usize },
    /// Follow a file like `tail -F` (streams only).
    Follow { path: String, lines: usize },
    /// `lldpctl -f keyvalue` on a host (topology; polled rarely).
    Lldp,
    /// The lossless settings of netdevs (all RDMA netdevs when empty): `mlnx_qos -i`, `ethtool -a`,
    /// the MTU and the DCQCN enable knobs under `<root>/class/net/<if>/ecn/` (polled rarely).
    HostQos { root: String, netdevs: Vec<String> },
    /// Every query of a `[[prometheus]]` poll; the transport knows them (collect::prometheus).
    PromQueries,
    /// The node's GPUs (`nvidia-smi --query-gpu`), only where nvidia-smi exists, stopped after
    /// `secs` seconds so a hung driver never holds the rest of the dump.
    Gpu { secs: u64 },
    /// `nvidia-smi topo -m` (topology; polled rarely), with the same guard.
    GpuTopo { secs: u64 },
}

impl Request {
    /// The command line a POSIX shell on a Linux host runs for this request, with `LC_ALL=C`.
    /// CLI requests to network gear are sent verbatim.
    pub fn shell(&self) -> String {
        match self {
            Request::Cli(c) => c.clone(),
            Request::SysfsDump {
                root,
                devices,
                netdevs,
            } => {
                let ib = format!("{root}/class/infiniband");
                let devs: Vec<String> = if devices.is_empty() {
                    vec![format!("{ib}/*")]
                } else {
                    devices.iter().map(|d| format!("{ib}/{d}")).collect()
                };
                let mut paths = Vec::new();
                for d in &devs {
                    for sub in ["hw_counters", "counters", "state", "gid_attrs/ndevs"] {
                        paths.push(format!("{d}/ports/*/{sub}"));
                    }
                }
                for n in netdevs {
                    paths.push(format!("{root}/class/net/{n}/statistics"));
                }
                // grep prints `path:value`; unreadable or missing files are not an error here.
                format!("LC_ALL=C grep -rs . {} ; true", paths.join(" "))
            }
            // The echoed command line names the netdev inside the output itself, so a recording
            // replays with the right label.
            Request::Ethtool { netdev } => {
                format!("echo ethtool -S {netdev}; LC_ALL=C ethtool -S {netdev}")
            }
            Request::Tail { path, lines } => {
                format!("LC_ALL=C tail -n {lines} {}", shell_path(path))
            }
            Request::Follow { path, lines } => {
                format!("LC_ALL=C tail -n {lines} -F {} 2>&1", shell_path(path))
            }
            // A missing tool is a fact to show, not a failed poll: say so in the output.
            Request::Lldp => format!(
                "if command -v lldpctl >/dev/null 2>&1; then LC_ALL=C lldpctl -f keyvalue 2>&1; else echo '{}'; fi; true",
                crate::parse::lldp::NOT_INSTALLED
            ),
            Request::HostQos { root, netdevs } => host_qos_shell(root, netdevs),
            Request::PromQueries => "true".to_string(),
            Request::Gpu { secs } => nvidia_smi_shell(
                *secs,
                &format!(
                    "--query-gpu={} --format=csv,nounits",
                    crate::parse::host::gpu::QUERY_FIELDS.join(",")
                ),
            ),
            Request::GpuTopo { secs } => nvidia_smi_shell(*secs, "topo -m"),
        }
    }
}

/// `nvidia-smi <args>` where the node has it (else a line saying it has none: a node without
/// GPUs, not an error), under `timeout` where the node has that: a driver that hangs costs the
/// dump `secs` seconds and prints a line saying so (exit 124), and the parts after it still run.
/// Where `timeout` is missing the command runs unguarded.
fn nvidia_smi_shell(secs: u64, args: &str) -> String {
    use crate::parse::host::gpu::{NOT_INSTALLED, TIMED_OUT};
    format!(
        "if command -v nvidia-smi >/dev/null 2>&1; then if command -v timeout >/dev/null 2>&1; then LC_ALL=C timeout {secs} nvidia-smi {args} 2>&1; [ $? -eq 124 ] && echo '{TIMED_OUT} after {secs} s'; else LC_ALL=C nvidia-smi {args} 2>&1; fi; else echo '{NOT_INSTALLED}'; fi; true"
    )
}

/// How long nvidia-smi may take on a node whose commands have `command_timeout`: half of it (at
/// least a second), so the rest of the dump still arrives within the poll's own limit.
pub fn gpu_secs(command_timeout: Duration) -> u64 {
    (command_timeout.as_secs() / 2).max(1)
}

/// Per netdev: `mlnx_qos -i` (echoed, so the output names the netdev), `ethtool -a`, and the mtu
/// and ecn knobs as `path:value` lines. Netdev names were validated (`config::is_safe_name`).
fn host_qos_shell(root: &str, netdevs: &[String]) -> String {
    let root = shell_path(root);
    let list = if netdevs.is_empty() {
        format!("$(cat {root}/class/infiniband/*/ports/*/gid_attrs/ndevs/* 2>/dev/null | sort -u)")
    } else {
        netdevs.join(" ")
    };
    format!(
        "for n in {list}; do echo mlnx_qos -i $n; if command -v mlnx_qos >/dev/null 2>&1; then LC_ALL=C mlnx_qos -i $n 2>&1; else echo '{}'; fi; echo ethtool -a $n; LC_ALL=C ethtool -a $n 2>&1; LC_ALL=C grep -s . {root}/class/net/$n/mtu {root}/class/net/$n/ecn/roce_np/enable/* {root}/class/net/$n/ecn/roce_rp/enable/*; done; true",
        crate::parse::host::qos::NOT_INSTALLED
    )
}

/// A path for a remote shell: `~/` stays expandable, the rest is single-quoted.
pub fn shell_path(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("~/'{}'", rest.replace('\'', r"'\''")),
        None => format!("'{}'", path.replace('\'', r"'\''")),
    }
}

/// Why a request failed, in words a person on call can act on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CollectError {
    #[error("connection refused{0}")]
    Refused(String),
    #[error("cannot connect: {0}")]
    Connect(String),
    #[error("auth failed: {0}")]
    Auth(String),
    #[error("host key: {0}")]
    HostKey(String),
    #[error("timed out after {}", fmt_secs(*.0))]
    Timeout(Duration),
    #[error("command failed ({status}): {stderr}")]
    Command { status: String, stderr: String },
    #[error("{0}")]
    Io(String),
    #[error("not available: {0}")]
    Unavailable(String),
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 && (s - s.round()).abs() < 1e-9 {
        format!("{} s", s.round())
    } else {
        format!("{s:.1} s")
    }
}

/// What one poll's requests answered, one slot each.
#[derive(Debug)]
pub struct Answers {
    pub each: Vec<Result<String, CollectError>>,
    /// The slots of requests sent in ONE exec (a switch that hangs up after each exec): their
    /// outputs came back together in the first of these slots, and the others hold nothing.
    /// Empty when every request had its own exec. Only the transport knows this: an empty slot
    /// beside a full one is also what a command that printed nothing looks like.
    pub joined: Vec<usize>,
}

/// One event of a streamed request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    Line(String),
    /// The stream broke; the follower reconnects.
    Error(CollectError),
}

/// One event of a raw byte stream (the streaming node collector, `collect::stream`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ByteEvent {
    Data(Vec<u8>),
    /// The stream ended or broke; the collector reconnects.
    End(CollectError),
}

/// A long-lived shell command: its stdout as it comes, and a way to poke its stdin.
pub struct ShellStream {
    pub rx: mpsc::Receiver<ByteEvent>,
    /// Each `()` sent writes one newline to the command's stdin (the streaming node loop waits
    /// for one before each dump, so the client sets the pace and the node runs no `sleep`).
    pub ticks: mpsc::Sender<()>,
    /// The most bytes one answer may hold on this transport (`poll.max_answer_bytes`): the
    /// stream's lines, frames and dumps are bounded by it as an exec's output is.
    pub max_bytes: usize,
}

#[async_trait]
pub trait Transport: Send + Sync + fmt::Debug {
    /// Run one request; the whole output, or why not. Implementations bound it by `timeout`.
    async fn run(&self, req: &Request, timeout: Duration) -> Result<String, CollectError>;

    /// Run several requests of one poll; transports that can batch them override this.
    async fn run_all(
        &self,
        reqs: &[Request],
        timeout: Duration,
    ) -> Vec<Result<String, CollectError>> {
        let mut out = Vec::with_capacity(reqs.len());
        for r in reqs {
            out.push(self.run(r, timeout).await);
        }
        out
    }

    /// [`run_all`](Transport::run_all), saying which requests were answered together.
    async fn run_poll(&self, reqs: &[Request], timeout: Duration) -> Answers {
        Answers {
            each: self.run_all(reqs, timeout).await,
            joined: Vec::new(),
        }
    }

    /// Stream a request's output line by line until the receiver is dropped.
    async fn stream(&self, req: &Request) -> Result<mpsc::Receiver<StreamEvent>, CollectError> {
        Err(CollectError::Unavailable(format!(
            "{} cannot stream {req:?}",
            self.describe()
        )))
    }

    /// Whether a node's polls should come over one long-lived stream (`[poll] mode = "stream"`)
    /// instead of an exec per poll.
    fn streams_polls(&self) -> bool {
        false
    }

    /// Run a long-lived shell command; its stdout bytes as they come, until the receiver is
    /// dropped (bounded: a slow reader stops the command, not memory).
    async fn stream_shell(&self, cmd: &str) -> Result<ShellStream, CollectError> {
        let _ = cmd;
        Err(CollectError::Unavailable(format!(
            "{} cannot stream a shell",
            self.describe()
        )))
    }

    /// Open connections ahead of the first poll (SSH); a no-op where there is nothing to open.
    async fn warm_up(&self) -> Result<(), CollectError> {
        Ok(())
    }

    /// The time the last answers describe, where the server says it (a Prometheus evaluation
    /// time); `None`: the time of the poll.
    fn answers_at(&self) -> Option<crate::metrics::Ts> {
        None
    }

    /// "ssh versa@192.168.11.152:22", "local", "demo".
    fn describe(&self) -> String;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_commands_are_fixed_strings() {
        let r = Request::SysfsDump {
            root: "/sys".into(),
            devices: vec!["rocep11s0".into()],
            netdevs: vec!["ens192".into()],
        };
        let s = r.shell();
        assert!(s.starts_with("LC_ALL=C grep -rs . "));
        assert!(s.contains("/sys/class/infiniband/rocep11s0/ports/*/hw_counters"));
        assert!(s.contains("/sys/class/net/ens192/statistics"));
        assert_eq!(
            Request::Tail {
                path: "~/training.log".into(),
                lines: 50
            }
            .shell(),
            "LC_ALL=C tail -n 50 ~/'training.log'"
        );
        assert_eq!(shell_path("/tmp/it's"), r"'/tmp/it'\''s'");
    }

    #[test]
    fn errors_read_like_advice() {
        assert_eq!(
            CollectError::Timeout(Duration::from_secs(5)).to_string(),
            "timed out after 5 s"
        );
        assert_eq!(
            CollectError::Timeout(Duration::from_millis(1500)).to_string(),
            "timed out after 1.5 s"
        );
    }
}
