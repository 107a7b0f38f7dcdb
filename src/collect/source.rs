//! Sources built from the config: what to ask each switch, node and log, through which transport.

use super::demo::DemoCluster;
use super::local::LocalTransport;
use super::transport::{CollectError, Request, Transport};
use crate::config::{Config, Node, Switch, SwitchOs};
use crate::metrics::Store;
use crate::metrics::store::SourceId;
use crate::parse::{Ctx, ParseKind};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    Switch,
    Node,
    Log,
    Ping,
}

/// One request of a poll and the parser for its answer.
#[derive(Clone, Debug)]
pub struct Probe {
    pub kind: ParseKind,
    pub request: Request,
}

#[derive(Clone, Debug)]
pub struct Source {
    pub id: SourceId,
    pub name: String,
    pub kind: SourceKind,
    pub interval: Duration,
    pub timeout: Duration,
    pub transport: Arc<dyn Transport>,
    /// The first probe is the source's reason to exist: if it fails, the source is down.
    pub probes: Vec<Probe>,
    pub ctx: Ctx,
    /// Keep only samples of these ports (empty: all).
    pub ports: Vec<String>,
    /// Nodes whose netdevs are discovered from their sysfs dump (none configured).
    pub discovery: Option<Arc<Discovery>>,
    /// A log's custom line format (`[[log]] format_regex`), for its follower.
    pub format_regex: Option<String>,
    /// `[poll] nic_counters`: the NIC counters this source keeps (empty: all).
    pub nic_counters: Vec<String>,
    /// The `nic_counters` verdicts of the counters this source printed last poll (a cache).
    pub nic_memo: NicMemo,
}

/// The `nic_counters` verdict of each counter a source printed in its last poll, in order: a poll
/// prints the same ~750 names in the same order every second, so a name compare replaces matching
/// every pattern. A name that differs from last time is matched and remembered again.
#[derive(Debug, Default)]
pub struct NicMemo(std::sync::Mutex<Vec<(Box<str>, bool)>>);

impl Clone for NicMemo {
    /// A copy starts empty (it is only a cache).
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl NicMemo {
    /// More names than any NIC prints: a source that prints more is matched without the cache.
    const MAX: usize = 16_384;

    /// A matcher for one poll; the verdicts are kept for the next poll when it is dropped.
    pub fn keeper<'a>(&'a self, patterns: &'a [String]) -> NicKeeper<'a> {
        let memo = self
            .0
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        NicKeeper {
            owner: self,
            patterns,
            memo,
            pos: 0,
        }
    }
}

/// [`keep_nic`] through a source's [`NicMemo`], for the counters of one poll in order.
pub struct NicKeeper<'a> {
    owner: &'a NicMemo,
    patterns: &'a [String],
    memo: Vec<(Box<str>, bool)>,
    pos: usize,
}

impl NicKeeper<'_> {
    /// Whether an `ethtool -S` / netdev statistics counter name is in the `nic_counters` subset.
    pub fn keep_nic(&mut self, counter: &str) -> bool {
        if self.patterns.is_empty() {
            return true;
        }
        if let Some((name, keep)) = self.memo.get(self.pos)
            && **name == *counter
        {
            self.pos += 1;
            return *keep;
        }
        let keep = keep_nic(counter, self.patterns);
        if self.pos < NicMemo::MAX {
            self.memo.truncate(self.pos);
            self.memo.push((counter.into(), keep));
            self.pos += 1;
        }
        keep
    }

    /// [`keep_counter`], through the cache.
    pub fn keep_counter(&mut self, name: &str) -> bool {
        match nic_family_counter(name, self.patterns) {
            Some(counter) => self.keep_nic(counter),
            None => true,
        }
    }
}

impl Drop for NicKeeper<'_> {
    fn drop(&mut self) {
        if let Ok(mut v) = self.owner.0.lock() {
            *v = std::mem::take(&mut self.memo);
        }
    }
}

/// Whether a sample of metric `name` is kept under the `nic_counters` patterns: only the generic
/// `ethtool -S` (`rocetop_nic_<c>_total`) and kernel netdev (`rocetop_node_kernel_<c>_total`)
/// families are subject to them; PFC pause families and the RDMA/kernel byte totals always stay.
pub fn keep_counter(name: &str, patterns: &[String]) -> bool {
    match nic_family_counter(name, patterns) {
        Some(counter) => keep_nic(counter, patterns),
        None => true,
    }
}

/// The counter name inside a metric subject to the `nic_counters` patterns, if it is one.
fn nic_family_counter<'a>(name: &'a str, patterns: &[String]) -> Option<&'a str> {
    if patterns.is_empty()
        || name.starts_with("rocetop_nic_pfc_")
        || name == crate::metrics::names::NODE_KERNEL_BYTES
    {
        return None;
    }
    name.strip_prefix("rocetop_nic_")
        .or_else(|| name.strip_prefix("rocetop_node_kernel_"))
        .and_then(|c| c.strip_suffix("_total"))
}

/// Whether an `ethtool -S` / netdev statistics counter name is in the `nic_counters` subset.
pub fn keep_nic(counter: &str, patterns: &[String]) -> bool {
    patterns.is_empty() || patterns.iter().any(|p| glob(p, counter))
}

/// `*` matches any run of characters; everything else matches itself. No allocation and no
/// substring-searcher setup: this runs for every counter of every poll (~750 names × the patterns
/// per node and second), on names of a few dozen bytes.
fn glob(pat: &str, s: &str) -> bool {
    let (p, s) = (pat.as_bytes(), s.as_bytes());
    let Some(star) = p.iter().position(|&b| b == b'*') else {
        return p == s;
    };
    let (first, mut pat_rest) = p.split_at(star);
    let Some(mut rest) = s.strip_prefix(first) else {
        return false;
    };
    // pat_rest starts with '*': match each `*part` in turn, the last one at the end of `s`.
    while let Some((_, after)) = pat_rest.split_first() {
        let next = after.iter().position(|&b| b == b'*');
        let part = &after[..next.unwrap_or(after.len())];
        match next {
            None => return rest.len() >= part.len() && rest.ends_with(part),
            Some(n) => {
                match find(rest, part) {
                    Some(i) => rest = &rest[i + part.len()..],
                    None => return false,
                }
                pat_rest = &after[n..];
            }
        }
    }
    true
}

/// The first position of `needle` in `hay` (naive: both are a few dozen bytes at most).
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let Some((&b0, tail)) = needle.split_first() else {
        return Some(0);
    };
    let last = hay.len().checked_sub(needle.len())?;
    (0..=last).find(|&i| hay[i] == b0 && hay[i + 1..].starts_with(tail))
}

/// RDMA netdevs learned from a node's own sysfs (`gid_attrs/ndevs`), refreshed every poll: the next
/// poll asks `ethtool -S` and the kernel statistics of exactly those.
#[derive(Debug, Default)]
pub struct Discovery {
    netdevs: std::sync::Mutex<Vec<String>>,
}

impl Discovery {
    pub fn netdevs(&self) -> Vec<String> {
        self.netdevs.lock().map(|v| v.clone()).unwrap_or_default()
    }

    /// Learn from a dump; true when the set changed.
    pub fn learn(&self, dump: &str) -> bool {
        let mut found: Vec<String> = crate::collect::host::hw_counters::ports(dump)
            .into_iter()
            .filter_map(|p| p.netdev)
            .filter(|n| crate::config::is_safe_name(n) && !n.contains('/'))
            .collect();
        found.sort();
        found.dedup();
        match self.netdevs.lock() {
            Ok(mut v) if *v != found => {
                *v = found;
                true
            }
            _ => false,
        }
    }
}

impl Source {
    /// The probes of the next poll (a node's discovered netdevs included).
    pub fn probes_now(&self) -> Vec<Probe> {
        let Some(d) = &self.discovery else {
            return self.probes.clone();
        };
        let netdevs = d.netdevs();
        let mut v = self.probes.clone();
        if let Some(Probe {
            request: Request::SysfsDump { netdevs: nd, .. },
            ..
        }) = v.first_mut()
        {
            nd.clone_from(&netdevs);
        }
        v.extend(netdevs.into_iter().map(|netdev| Probe {
            kind: ParseKind::Ethtool,
            request: Request::Ethtool { netdev },
        }));
        v
    }
}

/// A transport that cannot exist in this build or configuration; every call says why.
#[derive(Debug)]
pub struct Unavailable(pub String);

#[async_trait]
impl Transport for Unavailable {
    async fn run(&self, _req: &Request, _timeout: Duration) -> Result<String, CollectError> {
        Err(CollectError::Unavailable(self.0.clone()))
    }
    fn describe(&self) -> String {
        format!("unavailable: {}", self.0)
    }
}

/// The commands a switch answers each poll, by OS.
pub fn switch_probes(sw: &Switch) -> Vec<Probe> {
    let cli = |kind, c: &str| Probe {
        kind,
        request: Request::Cli(c.to_string()),
    };
    match sw.os {
        SwitchOs::Nxos => {
            let edge: Vec<&str> = sw
                .port_patterns
                .iter()
                .map(String::as_str)
                .filter(|p| !p.starts_with("ii"))
                .collect();
            let queuing = if edge.is_empty() {
                "show queuing interface".to_string()
            } else {
                format!("show queuing interface {}", edge.join(", "))
            };
            vec![
                cli(ParseKind::NxosQueuing, &queuing),
                cli(ParseKind::NxosPfc, "show interface priority-flow-control"),
                cli(ParseKind::NxosFlowcontrol, "show interface flowcontrol"),
            ]
        }
        SwitchOs::Sonic => vec![
            cli(ParseKind::SonicPfc, "show pfc counters"),
            cli(ParseKind::SonicQueue, "show queue counters"),
            cli(ParseKind::SonicWred, "show queue wredcounters"),
        ],
        SwitchOs::Eos => vec![
            cli(
                ParseKind::EosPfc,
                "show priority-flow-control counters | json",
            ),
            cli(ParseKind::EosQueue, "show interfaces counters queue | json"),
            cli(
                ParseKind::EosEcn,
                "show qos interfaces ecn counters queue | json",
            ),
            cli(ParseKind::EosInterface, "show interfaces"),
        ],
    }
}

/// One dump of every hw_counters/counters file plus `ethtool -S` of each RDMA netdev.
pub fn node_probes(n: &Node) -> Vec<Probe> {
    let mut v = vec![Probe {
        kind: ParseKind::HwCounters,
        request: Request::SysfsDump {
            root: n.sysfs_root.clone(),
            devices: n.devices.clone(),
            netdevs: n.netdevs.clone(),
        },
    }];
    for nd in &n.netdevs {
        v.push(Probe {
            kind: ParseKind::Ethtool,
            request: Request::Ethtool { netdev: nd.clone() },
        });
    }
    v
}

/// Hooks for transports that live in other modules (SSH), so this file stays about sources.
pub type RemoteFactory<'a> =
    &'a dyn Fn(&Config, Remote<'_>) -> Result<Arc<dyn Transport>, CollectError>;

pub enum Remote<'a> {
    Switch(&'a Switch),
    Node(&'a Node),
}

/// Build every source of the config and declare it in the store.
pub fn build(cfg: &Config, store: &mut Store, remote: RemoteFactory<'_>) -> Vec<Source> {
    let demo = cfg.demo.then(|| DemoCluster::new(cfg));
    let mut out = Vec::new();
    let timeout = cfg.ssh.command_timeout;
    let transport_err =
        |e: CollectError| -> Arc<dyn Transport> { Arc::new(Unavailable(e.to_string())) };
    for sw in &cfg.switches {
        let transport: Arc<dyn Transport> = match &demo {
            Some(d) => Arc::new(d.switch(&sw.name)),
            None => remote(cfg, Remote::Switch(sw)).unwrap_or_else(transport_err),
        };
        let interval = cfg.poll.switch_interval;
        out.push(Source {
            id: store.add_source(&sw.name, interval.as_millis() as i64),
            name: sw.name.clone(),
            kind: SourceKind::Switch,
            interval,
            timeout,
            transport,
            probes: switch_probes(sw),
            ctx: Ctx::named(&sw.name),
            ports: sw.ports.clone(),
            discovery: None,
            format_regex: None,
            nic_counters: cfg.poll.nic_counters.clone(),
            nic_memo: NicMemo::default(),
        });
    }
    let mut node_transports = std::collections::HashMap::new();
    for n in &cfg.nodes {
        let transport: Arc<dyn Transport> = match &demo {
            Some(d) => Arc::new(d.node(&n.name)),
            None if n.local => Arc::new(LocalTransport),
            None => remote(cfg, Remote::Node(n)).unwrap_or_else(transport_err),
        };
        node_transports.insert(n.name.clone(), transport.clone());
        let interval = cfg.poll.interval;
        out.push(Source {
            id: store.add_source(&n.name, interval.as_millis() as i64),
            name: n.name.clone(),
            kind: SourceKind::Node,
            interval,
            timeout,
            transport,
            probes: node_probes(n),
            ctx: Ctx::named(&n.name),
            ports: Vec::new(),
            discovery: n.netdevs.is_empty().then(|| Arc::new(Discovery::default())),
            format_regex: None,
            nic_counters: cfg.poll.nic_counters.clone(),
            nic_memo: NicMemo::default(),
        });
    }
    for l in &cfg.logs {
        let Some(transport) = node_transports.get(&l.node).cloned() else {
            continue;
        };
        let name = format!("log {}:{}", l.node, l.path);
        let interval = cfg.poll.interval;
        out.push(Source {
            id: store.add_source(&name, interval.as_millis() as i64),
            name,
            kind: SourceKind::Log,
            interval,
            timeout,
            transport,
            probes: vec![Probe {
                kind: ParseKind::TrainingLog,
                request: Request::Tail {
                    path: l.path.clone(),
                    lines: l.lines,
                },
            }],
            ctx: Ctx {
                name: l.node.clone(),
                log: l.path.clone(),
            },
            ports: Vec::new(),
            discovery: None,
            format_regex: l.format_regex.clone(),
            nic_counters: Vec::new(),
            nic_memo: NicMemo::default(),
        });
    }
    for p in &cfg.pings {
        let name = format!("ping {}", p.peer);
        let interval = cfg.poll.ping_interval;
        out.push(Source {
            id: store.add_source(&name, interval.as_millis() as i64),
            name,
            kind: SourceKind::Ping,
            interval,
            timeout,
            transport: super::ping::transport(p, demo.as_ref()),
            probes: vec![Probe {
                kind: ParseKind::Ping,
                request: super::ping::request(&p.peer),
            }],
            ctx: Ctx::named(&p.peer),
            ports: Vec::new(),
            discovery: None,
            format_regex: None,
            nic_counters: cfg.poll.nic_counters.clone(),
            nic_memo: NicMemo::default(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lab_has_one_switch_eight_nodes_one_log() {
        let cfg = Config::reference();
        let mut store = Store::new(60_000, 100);
        let none: RemoteFactory<'_> = &|_, _| Err(CollectError::Unavailable("x".into()));
        let s = build(&cfg, &mut store, none);
        assert_eq!(s.iter().filter(|s| s.kind == SourceKind::Switch).count(), 1);
        assert_eq!(s.iter().filter(|s| s.kind == SourceKind::Node).count(), 8);
        assert_eq!(s.iter().filter(|s| s.kind == SourceKind::Log).count(), 1);
        assert_eq!(s.iter().filter(|s| s.kind == SourceKind::Ping).count(), 1);
        let sw = &s[0];
        assert!(
            matches!(&sw.probes[0].request, Request::Cli(c) if c == "show queuing interface Ethernet1/1/1-4, Ethernet1/2/1-4")
        );
        let n5 = s.iter().find(|s| s.name == "ubunturdma5").expect("node 5");
        assert_eq!(n5.probes.len(), 2, "sysfs dump + ethtool ens192");
        assert!(n5.discovery.is_none(), "netdevs configured");
    }

    #[test]
    fn discovered_netdevs_join_the_next_poll() {
        let d = Discovery::default();
        let dump = "/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0:ens1f0\n/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:1\n";
        assert!(d.learn(dump));
        assert!(!d.learn(dump), "unchanged");
        assert_eq!(d.netdevs(), vec!["ens1f0"]);
        assert!(
            d.learn("/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0:x;rm -rf ~\n"),
            "device vanished"
        );
        assert!(d.netdevs().is_empty(), "unsafe names are never used");
    }

    #[test]
    fn nic_counter_subset() {
        let pats: Vec<String> = crate::config::DEFAULT_NIC_COUNTERS
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
            assert_eq!(keep_counter(name, &pats), kept, "{name}");
        }
        assert!(keep_counter("rocetop_nic_ch3_events_total", &[]));
        assert!(keep_counter("rocetop_nic_ch3_events_total", &["*".into()]));
        assert!(glob("a*b*c", "axxbyyc") && !glob("a*b*c", "axxbyy") && !glob("ab", "abc"));
        assert!(glob("*_phy", "rx_bytes_phy") && !glob("x*x", "x"));
        assert!(glob("**", "") && glob("a**b", "ab") && glob("*ab*", "xaab") && !glob("", "a"));
    }

    /// The previous, obviously correct glob (str split + find): the byte-level one must agree.
    fn glob_ref(pat: &str, s: &str) -> bool {
        let mut parts = pat.split('*');
        let first = parts.next().unwrap_or("");
        let Some(mut rest) = s.strip_prefix(first) else {
            return false;
        };
        let mut parts = parts.peekable();
        let mut starred = false;
        while let Some(m) = parts.next() {
            starred = true;
            if parts.peek().is_none() {
                return rest.len() >= m.len() && rest.ends_with(m);
            }
            match rest.find(m) {
                Some(i) => rest = rest.get(i + m.len()..).unwrap_or(""),
                None => return false,
            }
        }
        !starred && rest.is_empty()
    }

    proptest::proptest! {
        #[test]
        fn glob_agrees_with_the_reference(pat in "[ab_*]{0,7}", s in "[ab_]{0,9}") {
            proptest::prop_assert_eq!(glob(&pat, &s), glob_ref(&pat, &s), "{} {}", pat, s);
        }
    }
}
