//! Configuration (docs/architecture.md): loaded, expanded (ranges, hostfiles) and validated, with
//! every problem reported at once by key path. The key names are a contract: add keys, rename none.

pub mod duration;
pub mod expand;
pub mod file;
pub mod fingerprint;
mod raw;
mod validate;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use validate::{is_safe_name, is_safe_path};

/// The reference config at the repository root, built in: `--demo` without a config plays its lab.
pub const REFERENCE: &str = include_str!("../config.toml");

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HostKeyPolicy {
    Strict,
    AcceptNew,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SwitchOs {
    Nxos,
    Sonic,
    Eos,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SwitchTransport {
    Ssh,
    Nxapi,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Secret {
    /// Name of the environment variable that holds it.
    Env(String),
    /// Command whose first output line is the secret (`pass show nexus`).
    Command(String),
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Ssh {
    pub known_hosts: PathBuf,
    pub host_key_policy: HostKeyPolicy,
    pub connect_timeout: Duration,
    pub command_timeout: Duration,
    pub identity_file: Option<PathBuf>,
    pub ssh_config: PathBuf,
    pub keepalive: Duration,
    pub max_concurrent_connects: usize,
    /// Names a fleet's labels may focus besides the `[[node]]`s (`ssh.focus_hosts`): host
    /// patterns whose `*` and `?` stand for letters, digits, `-` and `_` only, never a dot, so
    /// `gpu*` is `gpu17` and never `gpu17.attacker.example`. Empty: only `[[node]]`s.
    pub focus_hosts: Vec<String>,
    /// The host-key policy of a focus on a `focus_hosts` name (`ssh.focus_host_key_policy`):
    /// strict unless the config says otherwise, whatever `host_key_policy` is, since the name
    /// came from a label and not from the config.
    pub focus_host_key_policy: HostKeyPolicy,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Poll {
    pub interval: Duration,
    pub retention: Duration,
    pub switch_interval: Duration,
    pub ping_interval: Duration,
    /// How often LLDP neighbours, host QoS and the PFC watchdog are read (and once at start):
    /// they change rarely (`poll.topology_interval`, default 5 minutes).
    pub topology_interval: Duration,
    /// Which `ethtool -S` and kernel netdev counters the live collectors keep (glob patterns on
    /// the counter name; `default` is [`DEFAULT_NIC_COUNTERS`], `*` keeps all). PFC pause,
    /// RDMA hw_counters and the RDMA/kernel byte totals are always kept.
    pub nic_counters: Vec<String>,
    /// Most bytes one command or request may answer (`poll.max_answer_bytes`); a larger answer
    /// fails that poll with a message instead of taking the memory.
    pub max_answer_bytes: usize,
    /// How nodes are polled over SSH (switches always exec per poll).
    pub mode: PollMode,
}

/// `[poll] mode`: `exec` runs one batched exec per node per poll; `stream` keeps one channel per
/// node open with a shell loop that sends only the lines that changed (`collect::stream`). Stream
/// is the default: it costs about half the CPU of exec on both sides (docs/performance.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum PollMode {
    Exec,
    #[default]
    Stream,
}

/// Where `rocetop export` listens unless `--listen` says otherwise (loopback only). Kept here,
/// below both the command line and the command, so neither reaches into the other for it.
pub const DEFAULT_EXPORT_LISTEN: &str = "127.0.0.1:9464";

/// The default answer cap: the largest real switch answer seen (`show queuing interface` of a
/// 576-port NX-OS box, ~3 MB as text, ~6 MB as NX-API JSON) with room to spare.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 32 << 20;

/// The NIC counters kept by default: pause and storm events, discards and drops, errors, buffer
/// overruns, and the port's byte and packet totals (not the per-queue and size-bin counters).
/// Port-level names only (`rx_...`, `tx_...`): the per-queue `rx3_wqe_err`, `tx7_dropped` stay out.
pub const DEFAULT_NIC_COUNTERS: &[&str] = &[
    "rx_*pause*",
    "tx_*pause*",
    "*storm*",
    "rx_*discard*",
    "tx_*discard*",
    "rx_*drop*",
    "tx_*drop*",
    "rx_out_of_buffer",
    "rx_*err*",
    "tx_*err*",
    "rx_bytes",
    "tx_bytes",
    "rx_packets",
    "tx_packets",
    "rx_bytes_phy",
    "tx_bytes_phy",
    "rx_packets_phy",
    "tx_packets_phy",
    "*vport_rdma_unicast*",
];

#[derive(Clone, Debug, serde::Serialize)]
pub struct Switch {
    pub name: String,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub os: SwitchOs,
    pub transport: SwitchTransport,
    pub password: Option<Secret>,
    pub identity_file: Option<PathBuf>,
    /// As written (ranges kept: NX-OS accepts them in interface lists).
    pub port_patterns: Vec<String>,
    /// Expanded and normalised.
    pub ports: Vec<String>,
    pub legacy_algorithms: Vec<String>,
    pub nxapi_port: u16,
    pub nxapi_ca_file: Option<PathBuf>,
    pub nxapi_fingerprint: Option<String>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Node {
    pub name: String,
    pub host: String,
    pub port: u16,
    pub user: Option<String>,
    /// Empty: discovered.
    pub devices: Vec<String>,
    /// Empty: discovered.
    pub netdevs: Vec<String>,
    pub switch_port: Option<String>,
    /// The switch `switch_port` is on: named in it (`leaf2:Ethernet1/1/2`), else the one switch
    /// that lists the port. None where no switch is configured or none lists its ports.
    pub switch: Option<String>,
    pub sysfs_root: String,
    pub identity_file: Option<PathBuf>,
    pub local: bool,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Log {
    pub node: String,
    pub path: String,
    pub format_regex: Option<String>,
    pub lines: usize,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Ping {
    pub peer: String,
    pub address: String,
    pub rate: f64,
    /// RDMA pins (default: device and GID from the route to the peer).
    pub device: Option<String>,
    /// `device = "all"`: one RDMA session per port of every device, each its own row and
    /// `device` label (`device` is None then).
    pub every_rail: bool,
    pub ib_port: u8,
    pub gid_index: Option<u8>,
    pub traffic_class: u8,
    pub sl: u8,
    /// The local address the RDMA control connection is bound to (perftest's `--source_ip`):
    /// with several rails on one subnet it picks the rail, and so the device. None: the route's.
    pub source: Option<std::net::IpAddr>,
    /// RC (default: what RDMA traffic sees, resends included) or UD (no resends: real loss).
    pub qp_type: crate::collect::ping::QpType,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Ui {
    pub theme: String,
    pub mouse: bool,
    pub ascii: Option<bool>,
    pub max_fps: u32,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Alerts {
    pub pause_time_percent: f64,
    pub port_pfc_per_second: f64,
    pub rtt_p99_over_p50: f64,
    /// Expected 802.3x state on edge ports ("off" for a PFC fabric), if the user states one.
    pub flowcontrol: Option<String>,
    /// Episodes (app/episodes.rs): step/all-reduce time above this multiple of its recent median.
    pub episode_step_ratio: f64,
    /// PFC, ECN and CNP rates above this multiple of their recent median.
    pub episode_rate_ratio: f64,
    /// RTT p99 above this multiple of its recent median.
    pub episode_rtt_ratio: f64,
    /// An episode closes after this long with nothing abnormal.
    pub episode_settle_ms: i64,
}

/// How often topology is read when `poll.topology_interval` is not set.
pub const DEFAULT_TOPOLOGY_INTERVAL: Duration = Duration::from_secs(300);

/// `[[ping]] device` value that pings over every rail (each port of every RDMA device).
pub const ALL_RAILS: &str = "all";

/// The DSCP RoCEv2 traffic carries unless `[roce] dscp` says otherwise (NVIDIA's default, AF31).
pub const DEFAULT_ROCE_DSCP: u8 = 26;

/// A port of a configured switch, both named.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct SwitchPort {
    pub switch: String,
    pub port: String,
}

/// A `[[link]]`: both ends are ports of configured switches.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Link {
    pub a: SwitchPort,
    pub b: SwitchPort,
}

/// `[simulation]` beyond the seed: where the demo's congestion happens and how hard. Unset, the
/// demo draws the culprit and congested ports of each episode from the inventory with the seed.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Simulation {
    /// The port whose ingress drops in every episode (its nodes are the culprit's).
    pub culprit_port: Option<SwitchPort>,
    /// Ports whose nodes feel the congestion more than the rest (with the culprit set).
    pub congested_ports: Vec<SwitchPort>,
    /// The congestion counters' rates (ECN, CNP, pauses, PFC, drops) as a share of the lab's.
    pub rate_scale: f64,
    /// Which physics the demo runs. Not a config key: `--demo fabric` builds its own inventory
    /// with it (collect/demo/fabric.rs), since the fabric's cabling is not in the config's shape.
    pub scenario: Scenario,
}

/// The demo's physics: the lab's (the configured inventory, episodes at a culprit port and its
/// switch's fabric ports), or the built-in fabric's (PFC pauses hop by hop between two spines,
/// four leaves and their hosts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scenario {
    #[default]
    Lab,
    Fabric,
}

/// `[roce]`: what the RoCE traffic of this fabric looks like, for `check`'s lossless-path proof.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Roce {
    /// The DSCP RoCEv2 packets carry (26 by default: NVIDIA's AF31); the host and the switch must
    /// map it to the no-drop priority.
    pub dscp: u8,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Config {
    pub demo: bool,
    pub seed: u64,
    pub simulation: Simulation,
    pub ssh: Ssh,
    pub poll: Poll,
    pub switches: Vec<Switch>,
    /// `[[link]]`: switch↔switch links the config names (LLDP's word is overridden on their ports).
    pub links: Vec<Link>,
    pub nodes: Vec<Node>,
    pub logs: Vec<Log>,
    pub pings: Vec<Ping>,
    /// Fleets read from an existing Prometheus (`[[prometheus]]`).
    pub prometheus: Vec<Prometheus>,
    pub ui: Ui,
    pub alerts: Alerts,
    pub roce: Roce,
    /// Where it was read from (None: the built-in reference).
    pub path: Option<PathBuf>,
    /// Things that work but deserve attention (an identity file others can read).
    pub warnings: Vec<String>,
}

/// A `[[prometheus]]` source: a fleet read from a Prometheus HTTP API (Thanos, Mimir and
/// VictoriaMetrics speak the same); nodes and devices come from its labels.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Prometheus {
    pub name: String,
    pub url: PromUrl,
    /// Label matchers added to every query, braces removed (`cluster="a"`); empty: none.
    pub matchers: String,
    /// The label that names the node (its `:port` suffix is stripped).
    pub node_label: String,
    pub auth: PromAuth,
    pub ca_file: Option<PathBuf>,
    /// Queries are evaluated at multiples of this (the scrape interval): each poll reads one new
    /// scrape of every target, so the store's rates are per scrape interval.
    pub step: Duration,
    pub timeout: Duration,
    /// `poll.max_answer_bytes`: a larger API answer fails the poll before it takes the memory.
    pub max_answer_bytes: usize,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct PromUrl {
    pub tls: bool,
    pub host: String,
    pub port: u16,
    /// Path prefix before `/api/v1/...` (`/prometheus` behind a proxy), no trailing slash.
    pub prefix: String,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub enum PromAuth {
    None,
    Bearer(Secret),
    Basic { user: String, password: Secret },
}

/// Every problem found, each with its key path; shown as one message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.render())]
pub struct ConfigError {
    pub file: String,
    pub problems: Vec<String>,
}

impl ConfigError {
    fn render(&self) -> String {
        let n = self.problems.len();
        let mut s = format!(
            "{}: {n} problem{} in the config:",
            self.file,
            if n == 1 { "" } else { "s" }
        );
        for p in &self.problems {
            s.push_str("\n  - ");
            s.push_str(p);
        }
        s
    }
}

impl Config {
    /// Parse and validate config text. `file` names it in messages; `base` resolves relative paths.
    pub fn from_str(text: &str, file: &str, base: Option<&Path>) -> Result<Self, ConfigError> {
        validate::build(text, base).map_err(|problems| ConfigError {
            file: file.to_string(),
            problems,
        })
    }

    /// The reference config (the lab of docs/architecture.md), demo on.
    pub fn reference() -> Self {
        match Self::from_str(REFERENCE, "built-in config.toml", None) {
            Ok(c) => c,
            // The reference is checked by a test; this cannot be reached by a user's input.
            Err(e) => panic!("built-in reference config is invalid: {e}"),
        }
    }

    /// Lookup order: `--config`, then ./config.toml, then ~/.config/rocetop/config.toml.
    /// With `demo` and nothing found, the built-in reference.
    pub fn load(explicit: Option<&Path>, demo: bool) -> Result<Self, ConfigError> {
        let candidates: Vec<PathBuf> = match explicit {
            Some(p) => vec![p.to_path_buf()],
            None => {
                let mut v = vec![PathBuf::from("config.toml")];
                if let Some(home) = std::env::var_os("HOME") {
                    v.push(Path::new(&home).join(".config/rocetop/config.toml"));
                }
                v
            }
        };
        for (i, p) in candidates.iter().enumerate() {
            match file::read_text(p, file::MAX_CONFIG_BYTES) {
                Ok(text) => {
                    let mut c = Self::from_str(&text, &p.display().to_string(), p.parent())?;
                    c.path = Some(p.clone());
                    if demo {
                        c.demo = true;
                    }
                    return Ok(c);
                }
                Err(e) if explicit.is_some() || i + 1 == candidates.len() && !demo => {
                    let tried: Vec<String> =
                        candidates.iter().map(|p| p.display().to_string()).collect();
                    let why = if explicit.is_some() {
                        format!("cannot read it: {e}")
                    } else {
                        format!(
                            "no config found (looked for {}); pass --config FILE, or --demo to see the built-in demo cluster",
                            tried.join(", ")
                        )
                    };
                    return Err(ConfigError {
                        file: p.display().to_string(),
                        problems: vec![why],
                    });
                }
                Err(_) => continue,
            }
        }
        let mut c = Self::reference();
        c.demo = true;
        Ok(c)
    }

    /// Every identity file the config names (for permission checks and `check`).
    pub fn identity_files(&self) -> Vec<&Path> {
        let mut v: Vec<&Path> = Vec::new();
        v.extend(self.ssh.identity_file.as_deref());
        v.extend(
            self.switches
                .iter()
                .filter_map(|s| s.identity_file.as_deref()),
        );
        v.extend(self.nodes.iter().filter_map(|n| n.identity_file.as_deref()));
        v.sort();
        v.dedup();
        v
    }

    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_config_describes_the_lab() {
        let c = Config::reference();
        assert!(c.demo);
        assert_eq!(c.switches.len(), 1);
        let sw = &c.switches[0];
        assert_eq!(sw.name, "NX_AI_Leaf1");
        assert_eq!(sw.ports.len(), 14);
        assert!(sw.ports.contains(&"ii1/1/6".to_string()));
        assert_eq!(sw.password, Some(Secret::Env("NEXUS_PASSWORD".into())));
        assert_eq!(c.nodes.len(), 8);
        let devs: usize = c.nodes.iter().map(|n| n.devices.len()).sum();
        assert_eq!(devs, 10);
        assert_eq!(
            c.node("ubunturdma1").map(|n| n.netdevs.clone()),
            Some(vec!["ens224".to_string()])
        );
        let behind = |p: &str| {
            c.nodes
                .iter()
                .filter(|n| n.switch_port.as_deref() == Some(p))
                .count()
        };
        assert_eq!(behind("Ethernet1/1/1"), 3);
        assert_eq!(c.roce.dscp, DEFAULT_ROCE_DSCP);
        assert_eq!(c.poll.topology_interval, DEFAULT_TOPOLOGY_INTERVAL);
        assert_eq!(c.logs.len(), 1);
        assert_eq!(c.poll.interval, Duration::from_secs(1));
    }

    #[test]
    fn default_nic_counter_subset() {
        let pats: Vec<String> = DEFAULT_NIC_COUNTERS
            .iter()
            .map(|s| (*s).to_string())
            .collect();
        for (name, kept) in [
            ("rocetop_nic_rx_discards_phy_total", true),
            ("rocetop_nic_tx_pause_storm_warning_events_total", true),
            ("rocetop_nic_rx_bytes_total", true),
            ("rocetop_nic_rx0_bytes_total", false),
            ("rocetop_nic_rx3_wqe_err_total", false),
            ("rocetop_nic_tx7_dropped_total", false),
            ("rocetop_nic_rx_crc_errors_phy_total", true),
            ("rocetop_nic_rx_65_to_127_bytes_phy_total", false),
            ("rocetop_nic_ch3_events_total", false),
            ("rocetop_nic_pfc_rx_pause_frames_total", true),
            ("rocetop_node_kernel_bytes_total", true),
            ("rocetop_node_kernel_rx_dropped_total", true),
            ("rocetop_node_kernel_collisions_total", false),
            ("rocetop_rdma_np_cnp_sent_total", true),
        ] {
            assert_eq!(
                crate::parse::keep::keep_counter(name, &pats),
                kept,
                "{name}"
            );
        }
    }
}
