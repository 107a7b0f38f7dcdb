//! The fabric demo through the live path: every source's requests answered by the demo
//! transport's `answer` in each switch OS's own format, parsed by the source's real parsers and
//! filters, kept in the store; the injected episodes checked against what the store then holds.

use super::*;
use crate::collect::demo::sim::Sim;
use crate::collect::demo::sim::hops::{EpisodeKind, FabricEpisode, NodeNetdev, Root};
use crate::collect::demo::{Who, answer};
use crate::collect::poll::parse_outputs;
use crate::collect::source::{self, RemoteFactory, Source, SourceKind};
use crate::collect::transport::CollectError;
use crate::metrics::names::*;
use crate::metrics::{Store, Ts};
use crate::parse::ParseKind;

const T0: Ts = 1_700_000_000_000;

#[test]
fn the_inventory_is_the_documented_fabric() {
    let f = Fabric::builtin();
    let cfg = config(7);
    assert_eq!(cfg.seed, 7);
    assert_eq!(cfg.simulation.scenario, Scenario::Fabric);
    let names: Vec<&str> = cfg.switches.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"]
    );
    let os: Vec<SwitchOs> = cfg.switches.iter().map(|s| s.os).collect();
    use SwitchOs::*;
    assert_eq!(os, [Nxos, Eos, Nxos, Sonic, Eos, Nxos]);
    assert_eq!(cfg.nodes.len(), NODES);
    for n in &cfg.nodes {
        assert_eq!(n.netdevs.len(), RAILS, "{}", n.name);
        assert!(n.switch_port.is_none(), "{}: LLDP pairs both NICs", n.name);
        let leaves: Vec<&str> = f.nics(&n.name).map(|h| h.leaf.switch.as_str()).collect();
        let rails: Vec<usize> = f.nics(&n.name).map(|h| h.rail).collect();
        assert_eq!(rails, [0, 1], "{}", n.name);
        assert_ne!(leaves[0], leaves[1], "{}: two NICs on two leaves", n.name);
    }
    for leaf in ["leaf1", "leaf2", "leaf3", "leaf4"] {
        let ups: Vec<&str> = (f.uplinks.iter())
            .filter(|u| u.leaf.switch == leaf)
            .map(|u| u.spine.switch.as_str())
            .collect();
        assert_eq!(ups, ["spine1", "spine2"], "{leaf}");
        let hosts = f.hosts.iter().filter(|h| h.leaf.switch == leaf).count();
        assert_eq!(hosts, 16, "{leaf}");
    }
}

/// The benchmark's wide fabric: 64 switches, no more than 64 ports each, every NIC on its own
/// port of its rail's leaf, every leaf up to every spine, and a valid config.
#[test]
fn the_wide_fabric_is_64_switches_of_at_most_64_ports() {
    let shape = Shape::WIDE;
    let f = Fabric::sized(shape);
    assert_eq!(f.switches.len(), 64);
    assert!(f.switches.iter().all(|s| s.ports.len() <= 64));
    let leaf_ports: Vec<usize> = (f.switches.iter())
        .filter(|s| s.role == Role::Leaf)
        .map(|s| s.ports.len())
        .collect();
    assert_eq!(leaf_ports, vec![64; 56]);
    assert_eq!(f.nodes.len(), 1008);
    assert_eq!(f.nodes[0], "gpu0001");
    let ports: std::collections::BTreeSet<&SwitchPort> = f.hosts.iter().map(|h| &h.leaf).collect();
    assert_eq!(ports.len(), f.hosts.len(), "one NIC a port");
    assert_eq!(f.hosts.len(), 1008 * 2);
    for h in &f.hosts {
        let leaf: usize = h.leaf.switch["leaf".len()..].parse().expect("leaf number");
        assert_eq!((leaf - 1) % shape.rails, h.rail, "{h:?}: its rail's leaf");
    }
    assert_eq!(f.uplinks.len(), 56 * 8);
    let cfg = config_of(&f, 1);
    assert_eq!(cfg.switches.len(), 64);
    assert_eq!(cfg.nodes.len(), 1008);
}

/// Per switch port or NIC, how much a counter grew.
#[derive(Debug)]
struct PortCount {
    at: SwitchPort,
    n: u64,
}

#[derive(Debug)]
struct NicCount {
    nic: NodeNetdev,
    n: u64,
}

/// The growth of switch counter `name` since `since`, per port: the largest of its series (an
/// NX-OS port counts its pauses in two answers, SONiC per priority with the others at 0).
fn ports(store: &Store, name: &str, since: Ts) -> Vec<PortCount> {
    let mut out: Vec<PortCount> = Vec::new();
    for (id, s) in store.select(name, &[]) {
        let at = SwitchPort {
            switch: s.key.label("switch").unwrap_or_default().to_string(),
            port: s.key.label("port").unwrap_or_default().to_string(),
        };
        let n = store.increase_since(id, since).unwrap_or(0);
        match out.iter_mut().find(|p| p.at == at) {
            Some(p) => p.n = p.n.max(n),
            None => out.push(PortCount { at, n }),
        }
    }
    out
}

/// The growth of NIC counter `name` since `since`, per node netdev (the largest of its series).
fn nics(store: &Store, name: &str, since: Ts) -> Vec<NicCount> {
    let mut out: Vec<NicCount> = Vec::new();
    for (id, s) in store.select(name, &[]) {
        let nic = NodeNetdev {
            node: s.key.label("node").unwrap_or_default().to_string(),
            netdev: s.key.label("netdev").unwrap_or_default().to_string(),
        };
        let n = store.increase_since(id, since).unwrap_or(0);
        match out.iter_mut().find(|p| p.nic == nic) {
            Some(p) => p.n = p.n.max(n),
            None => out.push(NicCount { nic, n }),
        }
    }
    out
}

fn of(counts: &[PortCount], at: &SwitchPort) -> u64 {
    counts.iter().find(|p| p.at == *at).map_or(0, |p| p.n)
}

/// The fabric run for `secs` seconds on `seed`, every source polled once a second (topology at
/// the first), each episode checked when it is over; the problems found, in words.
struct Run {
    store: Store,
    sim: Sim,
    problems: Vec<String>,
    /// Episodes checked, by kind.
    checked: Vec<EpisodeKind>,
}

fn poll(sim: &Sim, src: &Source, first: bool) -> Result<Vec<(ParseKind, String)>, String> {
    let who = if sim.switches.iter().any(|s| s.name == src.ctx.name) {
        Who::Switch(src.ctx.name.clone())
    } else {
        Who::Node(src.ctx.name.clone())
    };
    match src.kind {
        SourceKind::Switch | SourceKind::Node => {}
        SourceKind::Topology if first => {}
        _ => return Ok(Vec::new()),
    }
    src.probes_now()
        .iter()
        .map(|p| {
            answer(sim, &who, &p.request)
                .map(|t| (p.kind, t))
                .map_err(|e| format!("{} {:?}: {e}", src.name, p.request))
        })
        .collect()
}

fn run(seed: u64, secs: i64) -> Run {
    let cfg = config(seed);
    let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 1000);
    let none: RemoteFactory<'_> = &|_, _| Err(CollectError::Unavailable("test".into()));
    let sources = source::build(&cfg, &mut store, none);
    let mut sim = Sim::new(&cfg);
    let episodes = sim.fabric_episodes(secs * 1000);
    let mut r = Run {
        store,
        sim: Sim::new(&cfg),
        problems: Vec::new(),
        checked: Vec::new(),
    };
    for sec in 1..=secs {
        let t = sec * 1000;
        sim.advance_to(t);
        for src in &sources {
            let outputs = match poll(&sim, src, sec == 1) {
                Ok(o) if o.is_empty() => continue,
                Ok(o) => o,
                Err(e) => {
                    r.problems.push(e);
                    continue;
                }
            };
            let parsed = parse_outputs(src, &outputs);
            if parsed.unknown_lines > 0 {
                r.problems.push(format!(
                    "{}: {} lines not parsed: {:?}",
                    src.name, parsed.unknown_lines, parsed.unknown_examples
                ));
            }
            if parsed.samples.is_empty() {
                r.problems.push(format!("{}: nothing read", src.name));
            }
            r.store.ingest(src.id, T0 + t, &parsed);
        }
        for ep in &episodes {
            // Mid-deadlock (the ring holds), and once the tree has drained.
            if t == ep.end_ms / 1000 * 1000 - 1000 && ep.kind == EpisodeKind::Deadlock {
                check_ring_holds(&r.store, &sim, ep, &mut r.problems);
            }
            if t == (ep.end_ms / 1000 + 3) * 1000 {
                check(&r.store, &sim, ep, &mut r.problems);
                r.checked.push(ep.kind);
            }
            // Quiet before it: nothing paused in the 5 s before it starts (or its link drops).
            let from = ep.link_down.as_ref().map_or(ep.start_ms, |l| l.at_ms);
            if t == from / 1000 * 1000 && from >= 8000 {
                let since = T0 + t - 5000;
                let tx: u64 = ports(&r.store, SW_PFC_TX, since).iter().map(|p| p.n).sum();
                let nic: u64 = nics(&r.store, NIC_PFC_TX_PAUSE, since)
                    .iter()
                    .map(|p| p.n)
                    .sum();
                if tx + nic > 0 {
                    r.problems.push(format!(
                        "{} pauses in the quiet 5 s before {ep:?}",
                        tx + nic
                    ));
                }
            }
        }
    }
    r.sim = sim;
    r
}

/// The leaf a NIC is cabled to.
fn leaf_of<'a>(sim: &'a Sim, nic: &NodeNetdev) -> Option<&'a str> {
    let f = sim.fabric()?;
    (f.hosts.iter())
        .find(|h| h.node == nic.node && h.netdev == nic.netdev)
        .map(|h| h.leaf.switch.as_str())
}

/// The physics of one episode as the store saw it: the root sends the most pauses and is paused
/// by nothing; the pauses reach hosts on other leaves than the root's.
fn check(store: &Store, sim: &Sim, ep: &FabricEpisode, problems: &mut Vec<String>) {
    let since = T0 + ep.start_ms;
    let tx = ports(store, SW_PFC_TX, since);
    let rx = ports(store, SW_PFC_RX, since);
    let nic_rx = nics(store, NIC_PFC_RX_PAUSE, since);
    let nic_tx = nics(store, NIC_PFC_TX_PAUSE, since);
    let top = tx.iter().max_by_key(|p| p.n);
    let mut bad = |why: String| problems.push(format!("{ep:?}: {why}"));
    // Hosts paused on a leaf other than `root_leaf`.
    let spread = |root_leaf: &str| {
        (nic_rx.iter())
            .filter(|c| c.n > 0 && leaf_of(sim, &c.nic).is_some_and(|l| l != root_leaf))
            .count()
    };
    match &ep.root {
        Root::Port(root) => {
            // WRED marks the backlog there, where the switch's output counts marks (SONiC's
            // wredcounters, EOS's ECN counters; the NX-OS queuing view has none).
            let ecn = ports(store, SW_QUEUE_ECN_MARKED, since);
            if ecn.iter().any(|p| p.at.switch == root.switch) && of(&ecn, root) == 0 {
                bad("the root port marked no packet ECN".into());
            }
            if of(&rx, root) != 0 {
                bad(format!("the root port was paused: rx {}", of(&rx, root)));
            }
            match top {
                Some(p) if p.at.switch == root.switch && p.n > 0 => {}
                other => bad(format!("the most pausing port is {other:?}")),
            }
            let leaf = match ep.kind {
                EpisodeKind::Incast => root.switch.as_str(),
                // A spine's hosts are those of every leaf but the one it congests toward.
                _ => (sim.fabric().into_iter())
                    .flat_map(|f| f.uplinks.iter())
                    .find(|u| u.spine == *root)
                    .map_or("", |u| u.leaf.switch.as_str()),
            };
            if spread(leaf) == 0 {
                bad("no host paused beyond the root's leaf".into());
            }
        }
        Root::Nic(nic) => {
            let own = |c: &[NicCount]| c.iter().find(|c| c.nic == *nic).map_or(0, |c| c.n);
            if own(&nic_rx) != 0 {
                bad(format!("the storming NIC was paused: rx {}", own(&nic_rx)));
            }
            let most = nic_tx.iter().max_by_key(|c| c.n).map(|c| &c.nic);
            if most != Some(nic) || own(&nic_tx) <= top.map_or(0, |p| p.n) {
                bad(format!(
                    "the storming NIC sent {} pauses, the most of any NIC: {most:?}, of any port: {top:?}",
                    own(&nic_tx)
                ));
            }
            if spread(leaf_of(sim, nic).unwrap_or("")) == 0 {
                bad("no host paused beyond the storm's leaf".into());
            }
        }
        Root::Cycle(ring) => {
            if ring.len() != 4 {
                bad(format!("a ring of {} links", ring.len()));
            }
            let Some(down) = &ep.link_down else {
                bad("a deadlock without its link down".into());
                return;
            };
            if ring.iter().any(|p| *p == down.leaf || *p == down.spine) {
                bad("the ring runs over the link that is down".into());
            }
            let hosts = (nic_rx.iter()).filter(|c| c.n > 0).count();
            if hosts == 0 {
                bad("no host paused by the deadlock".into());
            }
        }
    }
}

/// The deadlock's ring near its end: every ring egress paused by the next switch, which pauses
/// it from its own port; the link that went down carries nothing and shows no LLDP neighbour.
fn check_ring_holds(store: &Store, sim: &Sim, ep: &FabricEpisode, problems: &mut Vec<String>) {
    let Root::Cycle(ring) = &ep.root else { return };
    let since = T0 + ep.end_ms - 6000;
    let tx = ports(store, SW_PFC_TX, since);
    let rx = ports(store, SW_PFC_RX, since);
    let Some(f) = sim.fabric() else { return };
    for e in ring {
        let far = (f.uplinks.iter()).find_map(|u| {
            (u.leaf == *e)
                .then(|| u.spine.clone())
                .or_else(|| (u.spine == *e).then(|| u.leaf.clone()))
        });
        let far_tx = far.as_ref().map_or(0, |p| of(&tx, p));
        if of(&rx, e) == 0 || far_tx == 0 {
            problems.push(format!(
                "{ep:?}: ring egress {e:?} rx {} from {far:?} tx {far_tx}",
                of(&rx, e)
            ));
        }
    }
    if let Some(d) = &ep.link_down {
        let q = ports(store, SW_QUEUE_TX_PACKETS, T0 + d.at_ms + 1000);
        let moved = of(&q, &d.leaf) + of(&q, &d.spine);
        if moved != 0 {
            problems.push(format!("{ep:?}: the down link sent {moved} packets"));
        }
        let sw = sim.switches.iter().find(|s| s.name == d.leaf.switch);
        if let Some(text) = sw.and_then(|sw| super::super::switch_answer(sim, sw, lldp_cmd(sw.os)))
        {
            let spine = &d.spine.switch;
            let short = d.leaf.port.replacen("Ethernet", "Eth", 1);
            let listed = text.lines().any(|l| {
                l.contains(spine.as_str()) && (l.contains(&d.leaf.port) || l.contains(&short))
            });
            if listed {
                problems.push(format!("{ep:?}: LLDP still lists the down link\n{text}"));
            }
        }
    }
}

fn lldp_cmd(os: SwitchOs) -> &'static str {
    match os {
        SwitchOs::Sonic => "show lldp table",
        _ => "show lldp neighbors",
    }
}

/// Four simulated minutes on two seeds: all six switches and 32 nodes answer every poll and
/// every line parses; LLDP names every leaf↔spine link from both ends and both NICs of every
/// node; each of the four kinds is injected and its root is where the physics puts it.
#[test]
fn four_minutes_of_the_fabric_through_the_parsers_and_the_store() {
    for seed in [1, 2] {
        let r = run(seed, 240);
        assert!(
            r.problems.is_empty(),
            "seed {seed}:\n{}",
            r.problems.join("\n")
        );
        for k in [
            EpisodeKind::Incast,
            EpisodeKind::PauseStorm,
            EpisodeKind::SpineCongestion,
            EpisodeKind::Deadlock,
        ] {
            assert!(
                r.checked.contains(&k),
                "seed {seed}: no {k:?} in {:?}",
                r.checked
            );
        }
        let up: Vec<&str> = (r.store.sources())
            .filter(|(_, h)| h.up == Some(true) && h.polls_failed == 0)
            .map(|(_, h)| h.name.as_str())
            .collect();
        for s in &r.sim.switches {
            assert!(
                up.contains(&s.name.as_str()),
                "seed {seed}: {} not up",
                s.name
            );
        }
        for n in &r.sim.nodes {
            assert!(
                up.contains(&n.name.as_str()),
                "seed {seed}: {} not up",
                n.name
            );
        }
        let f = Fabric::builtin();
        let neighbour = |side: &str, switch: &str, node: &str, port: Option<&str>| {
            (r.store.select(LINK_NEIGHBOR_INFO, &[])).any(|(_, s)| {
                s.key.label("side") == Some(side)
                    && s.key.label("switch") == Some(switch)
                    && s.key.label("node") == Some(node)
                    && port.is_none_or(|p| s.key.label("netdev") == Some(p))
            })
        };
        for u in &f.uplinks {
            for (here, there) in [(&u.leaf, &u.spine), (&u.spine, &u.leaf)] {
                assert!(
                    neighbour("switch", &here.switch, &there.switch, Some(&there.port)),
                    "seed {seed}: {here:?} does not see {there:?} over LLDP"
                );
            }
        }
        for h in &f.hosts {
            for side in ["switch", "node"] {
                let seen = (r.store.select(LINK_NEIGHBOR_INFO, &[])).any(|(_, s)| {
                    s.key.label("side") == Some(side)
                        && s.key.label("switch") == Some(h.leaf.switch.as_str())
                        && s.key.label("port") == Some(h.leaf.port.as_str())
                        && s.key.label("node") == Some(h.node.as_str())
                        && s.key.label("netdev") == Some(h.netdev.as_str())
                });
                assert!(seen, "seed {seed}: {side} side of {h:?}");
            }
        }
    }
}

/// The lab is not the fabric: it injects no fabric episode and its switch keeps its own ports.
#[test]
fn the_lab_has_no_fabric() {
    let sim = Sim::new(&Config::reference());
    assert!(sim.fabric_episodes(600_000).is_empty());
    assert!(sim.fabric().is_none());
    assert!(sim.switches[0].ports.iter().all(|p| p.peer.is_none()));
}
