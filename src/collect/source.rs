//! Sources built from the config: what to ask each switch, node and log, through which transport.

use super::demo::DemoCluster;
use super::local::LocalTransport;
use super::transport::{CollectError, Request, Transport};
use crate::config::{Config, Node, Switch, SwitchOs};
use crate::metrics::Store;
use crate::metrics::store::SourceId;
use crate::parse::keep::NicMemo;
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
    /// Rare reads of a switch or node (`poll.topology_interval`): LLDP neighbours, host QoS, the PFC
    /// watchdog, NX-OS port MTU (`*_topology_probes`).
    Topology,
    /// A fleet read from a Prometheus HTTP API (`[[prometheus]]`).
    Prometheus,
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
        let mut found: Vec<String> = crate::parse::host::hw_counters::ports(dump)
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

/// `show ... interface` of the switch's edge ports as configured (NX-OS takes the ranges as
/// written), or of every port when none is configured.
fn interface_cmd(show: &str, sw: &Switch) -> String {
    let edge: Vec<&str> = sw
        .port_patterns
        .iter()
        .map(String::as_str)
        .filter(|p| !p.starts_with("ii"))
        .collect();
    if edge.is_empty() {
        show.to_string()
    } else {
        format!("{show} {}", edge.join(", "))
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
            vec![
                cli(
                    ParseKind::NxosQueuing,
                    &interface_cmd("show queuing interface", sw),
                ),
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
pub fn node_probes(n: &Node, gpu_secs: u64) -> Vec<Probe> {
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
    // Every node is asked: one without nvidia-smi answers a line that gives no sample.
    v.push(Probe {
        kind: ParseKind::GpuQuery,
        request: Request::Gpu { secs: gpu_secs },
    });
    v
}

/// What a switch is asked rarely: its LLDP neighbours, its PFC watchdog, its QoS configuration (and,
/// NX-OS, its MTUs; SONiC has them in its CONFIG_DB).
pub fn switch_topology_probes(sw: &Switch) -> Vec<Probe> {
    let cli = |kind, c: &str| Probe {
        kind,
        request: Request::Cli(c.to_string()),
    };
    match sw.os {
        SwitchOs::Nxos => vec![
            cli(ParseKind::LldpNeighbors, "show lldp neighbors"),
            cli(ParseKind::NxosPfcwd, "show queuing pfc-queue detail"),
            // The edge ports' MTU (EOS prints it in the `show interfaces` of every poll).
            cli(ParseKind::NxosMtu, &interface_cmd("show interface", sw)),
            // How RoCE is classified (DSCP → qos-group → PFC CoS) and which queue marks ECN.
            cli(ParseKind::NxosQos, "show running-config ipqos"),
        ],
        SwitchOs::Sonic => vec![
            cli(ParseKind::LldpNeighbors, "show lldp table"),
            cli(ParseKind::SonicPfcwd, "show pfcwd stats"),
            // CONFIG_DB: DSCP maps, PFC priorities, WRED/ECN per queue and port MTUs.
            cli(ParseKind::SonicQos, "show runningconfiguration all"),
        ],
        SwitchOs::Eos => vec![
            cli(ParseKind::LldpNeighbors, "show lldp neighbors"),
            // DSCP map, trust, PFC no-drop priorities and ECN per queue, from the running config.
            cli(ParseKind::EosQos, "show running-config"),
        ],
    }
}

/// What a node is asked rarely: `lldpctl`, then the lossless settings of its netdevs.
pub fn node_topology_probes(n: &Node, gpu_secs: u64) -> Vec<Probe> {
    vec![
        Probe {
            kind: ParseKind::Lldpctl,
            request: Request::Lldp,
        },
        Probe {
            kind: ParseKind::HostQos,
            request: Request::HostQos {
                root: n.sysfs_root.clone(),
                netdevs: n.netdevs.clone(),
            },
        },
        Probe {
            kind: ParseKind::GpuTopo,
            request: Request::GpuTopo { secs: gpu_secs },
        },
    ]
}

/// The name of `host`'s topology source.
fn topology_label(host: &str) -> String {
    format!("{host}{TOPOLOGY}")
}

const TOPOLOGY: &str = " topology";

/// Whether a source named `label` is a topology source (LLDP, QoS settings: read rarely).
pub fn is_topology(label: &str) -> bool {
    label.ends_with(TOPOLOGY)
}

/// A rare source beside a switch or node, on the same transport (one connection per host).
fn topology_source(
    store: &mut Store,
    name: &str,
    transport: Arc<dyn Transport>,
    interval: Duration,
    timeout: Duration,
    probes: Vec<Probe>,
) -> Source {
    let label = topology_label(name);
    Source {
        id: store.add_source(&label, interval.as_millis() as i64),
        name: label,
        kind: SourceKind::Topology,
        interval,
        timeout,
        transport,
        probes,
        ctx: Ctx::named(name),
        ports: Vec::new(),
        discovery: None,
        format_regex: None,
        nic_counters: Vec::new(),
        nic_memo: NicMemo::default(),
    }
}

/// Hooks for transports that live in other modules (SSH), so this file stays about sources.
pub type RemoteFactory<'a> =
    &'a dyn Fn(&Config, Remote<'_>) -> Result<Arc<dyn Transport>, CollectError>;

pub enum Remote<'a> {
    Switch(&'a Switch),
    Node(&'a Node),
}

/// Build every source of the config and declare it in the store: the ones polled every interval,
/// then the rare topology reads of the same hosts ([`build_topology`]), whose pairing tells the
/// tabs and the episodes which node is behind which port.
pub fn build(cfg: &Config, store: &mut Store, remote: RemoteFactory<'_>) -> Vec<Source> {
    let mut out = build_counters(cfg, store, remote);
    let topology = build_topology(cfg, store, &out);
    out.extend(topology);
    out
}

/// The sources polled every interval: switches, nodes, logs, pings, fleets.
fn build_counters(cfg: &Config, store: &mut Store, remote: RemoteFactory<'_>) -> Vec<Source> {
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
            probes: node_probes(n, super::transport::gpu_secs(timeout)),
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
    for p in &cfg.prometheus {
        let transport: Arc<dyn Transport> = match (&demo, super::prometheus::PromTransport::live(p))
        {
            (Some(_), _) => Arc::new(Unavailable("the demo has no Prometheus".into())),
            // The store's history window, backfilled at start and after a gap.
            (None, Ok(t)) => Arc::new(t.with_history(cfg.poll.retention)),
            (None, Err(e)) => Arc::new(Unavailable(format!("{}: {e}", p.name))),
        };
        out.push(fleet_source(p, store, transport));
    }
    out
}

/// The rare topology sources (LLDP, host QoS, PFC watchdog) of the switches and nodes among
/// `built`, on their transports (one connection per host). They poll at start, then every
/// `poll.topology_interval`.
pub fn build_topology(cfg: &Config, store: &mut Store, built: &[Source]) -> Vec<Source> {
    let timeout = cfg.ssh.command_timeout;
    let interval = cfg.poll.topology_interval;
    let transport = |name: &str, kind: SourceKind| {
        built
            .iter()
            .find(|s| s.kind == kind && s.name == name)
            .map(|s| s.transport.clone())
    };
    let mut out = Vec::new();
    for sw in &cfg.switches {
        if let Some(t) = transport(&sw.name, SourceKind::Switch) {
            out.push(topology_source(
                store,
                &sw.name,
                t,
                interval,
                timeout,
                switch_topology_probes(sw),
            ));
        }
    }
    for n in &cfg.nodes {
        if let Some(t) = transport(&n.name, SourceKind::Node) {
            out.push(topology_source(
                store,
                &n.name,
                t,
                interval,
                timeout,
                node_topology_probes(n, super::transport::gpu_secs(timeout)),
            ));
        }
    }
    out
}

/// The one source of a `[[prometheus]]` section: one probe that asks every query of a poll.
pub fn fleet_source(
    p: &crate::config::Prometheus,
    store: &mut Store,
    transport: Arc<dyn Transport>,
) -> Source {
    let id = store.add_source(&p.name, p.step.as_millis() as i64);
    // Each poll answers every live series of the fleet: one left out is gone, not current.
    store.set_whole_answers(id);
    Source {
        id,
        name: p.name.clone(),
        kind: SourceKind::Prometheus,
        interval: p.step,
        timeout: p.timeout,
        transport,
        probes: vec![Probe {
            kind: ParseKind::PromApi,
            request: Request::PromQueries,
        }],
        ctx: Ctx::named(&p.name),
        ports: Vec::new(),
        discovery: None,
        format_regex: None,
        nic_counters: Vec::new(),
        nic_memo: NicMemo::default(),
    }
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
        // The rare reads of the same nine hosts, on their transports, every topology_interval.
        let topo: Vec<&Source> = s
            .iter()
            .filter(|s| s.kind == SourceKind::Topology)
            .collect();
        assert_eq!(topo.len(), 9);
        assert!(
            topo.iter()
                .all(|t| t.interval == cfg.poll.topology_interval)
        );
        let n1 = s.iter().find(|s| s.name == "ubunturdma1").expect("node 1");
        let t1 = s
            .iter()
            .find(|s| s.name == "ubunturdma1 topology")
            .expect("its topology");
        assert!(
            Arc::ptr_eq(&n1.transport, &t1.transport),
            "one connection per host"
        );
        let sw = &s[0];
        assert!(
            matches!(&sw.probes[0].request, Request::Cli(c) if c == "show queuing interface Ethernet1/1/1-4, Ethernet1/2/1-4")
        );
        let n5 = s.iter().find(|s| s.name == "ubunturdma5").expect("node 5");
        assert_eq!(n5.probes.len(), 3, "sysfs dump + ethtool ens192 + the GPUs");
        // nvidia-smi gets half the command timeout (5 s), so the rest of the dump still fits.
        assert!(matches!(n5.probes[2].request, Request::Gpu { secs: 2 }));
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
}
