//! The pause tree against the fabric demo's truth: simulated minutes of `--demo fabric` (two
//! spines, four leaves of mixed OS, 32 nodes on two rails), headless, every poll through
//! `App::update` as the live screen gets it, the App's pause tree read once a second. Each
//! injected episode must have its root named (the switch and port, the node and NIC, the deadlock
//! as its ring of ports) within 5 s of its start; a root named while no episode is under way (or
//! another than the injected one while one is) is a false positive. Precision, recall and delays
//! are printed per kind and seed (`--nocapture`).

use crate::feed;

use feed::Lab;
use rocetop::app::fabric::Kind;
use rocetop::app::fabric::pause_tree::PauseTree;
use rocetop::collect::demo::fabric;
use rocetop::collect::demo::sim::hops::{EpisodeKind, FabricEpisode, NodeNetdev, Root};
use rocetop::config::SwitchPort;
use std::collections::BTreeSet;

/// How long after an episode ends the tree may still name its root (the rates' window drains).
const SETTLE_MS: i64 = 5000;
/// How soon after an episode starts its root must be named.
const WITHIN_MS: i64 = 5000;

/// A root as the score compares them.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Named {
    Port(SwitchPort),
    Nic(NodeNetdev),
    /// A deadlock: the egress ports its members pause each other on.
    Cycle(BTreeSet<SwitchPort>),
    /// Anything else the tree names (an unknown, a switch without its port): never right.
    Other(String),
}

fn port(switch: &str, port: &str) -> SwitchPort {
    SwitchPort {
        switch: switch.to_string(),
        port: port.to_string(),
    }
}

/// What the tree names now: its roots and its deadlocks.
fn named(t: &PauseTree) -> BTreeSet<Named> {
    let mut out = BTreeSet::new();
    for r in &t.roots {
        let d = &r.at.device;
        out.insert(match d.kind {
            Kind::Switch if !r.at.port.is_empty() => Named::Port(port(&d.name, &r.at.port)),
            Kind::Host if !r.at.port.is_empty() => Named::Nic(NodeNetdev {
                node: d.name.clone(),
                netdev: r.at.port.clone(),
            }),
            _ => Named::Other(format!(
                "{:?} {} {} ({:?})",
                d.kind, d.name, r.at.port, r.cause
            )),
        });
    }
    for cycle in &t.deadlocks {
        let ports = (t.edges.iter())
            .filter(|e| {
                cycle.contains(&e.pauser.device.name) && cycle.contains(&e.paused.device.name)
            })
            .filter(|e| e.paused.device.kind == Kind::Switch)
            .map(|e| port(&e.paused.device.name, &e.paused.port))
            .collect();
        out.insert(Named::Cycle(ports));
    }
    out
}

fn truth(ep: &FabricEpisode) -> Named {
    match &ep.root {
        Root::Port(p) => Named::Port(p.clone()),
        Root::Nic(n) => Named::Nic(n.clone()),
        Root::Cycle(ring) => Named::Cycle(ring.iter().cloned().collect()),
    }
}

/// One kind's figures over a run.
#[derive(Default)]
struct Tally {
    injected: usize,
    found: usize,
    delays_ms: Vec<i64>,
    /// Wrong namings while an episode of this kind was under way.
    wrong: usize,
    /// Other roots named in the settle after its end (the next hops drain a second after the
    /// root stops): said, not counted.
    settle: usize,
}

struct Score {
    seed: u64,
    kinds: [Tally; 4],
    /// Roots named in the quiet between episodes (distinct namings).
    quiet: usize,
    problems: Vec<String>,
}

const KINDS: [EpisodeKind; 4] = [
    EpisodeKind::Incast,
    EpisodeKind::PauseStorm,
    EpisodeKind::SpineCongestion,
    EpisodeKind::Deadlock,
];

impl Score {
    fn injected(&self) -> usize {
        self.kinds.iter().map(|k| k.injected).sum()
    }
    fn found(&self) -> usize {
        self.kinds.iter().map(|k| k.found).sum()
    }
    fn false_pos(&self) -> usize {
        self.quiet + self.kinds.iter().map(|k| k.wrong).sum::<usize>()
    }
    fn recall(&self) -> f64 {
        self.found() as f64 / self.injected().max(1) as f64
    }
    /// Right namings over all namings (each distinct root named in an episode's window, or in a
    /// quiet stretch, counts once).
    fn precision(&self) -> f64 {
        let right = self.found();
        right as f64 / (right + self.false_pos()).max(1) as f64
    }

    fn lines(&self) -> String {
        let mut s = format!(
            "fabric seed {}: injected {} found {} false {}: precision {:.3} recall {:.3} (quiet {})\n",
            self.seed,
            self.injected(),
            self.found(),
            self.false_pos(),
            self.precision(),
            self.recall(),
            self.quiet
        );
        for (kind, t) in KINDS.iter().zip(&self.kinds) {
            let mean = t.delays_ms.iter().sum::<i64>() as f64 / t.delays_ms.len().max(1) as f64;
            let worst = t.delays_ms.iter().copied().max().unwrap_or(0);
            s += &format!(
                "  {kind:?}: {}/{} found, {} wrong, {} others in the settle; named after {mean:.0} ms mean, {worst} ms worst\n",
                t.found, t.injected, t.wrong, t.settle
            );
        }
        s
    }
}

/// A wrong naming and the tree it came from (`ROCETOP_FABRIC_DUMP=1`, to see why).
fn dump(t: &PauseTree, at_ms: i64, ep: &FabricEpisode, n: &Named) {
    println!(
        "--- +{} ms into {:?} (ends +{} ms): {n:?}",
        at_ms - ep.start_ms,
        ep.kind,
        ep.end_ms - ep.start_ms
    );
    for e in &t.edges {
        println!(
            "  {} {} -> {} {} {:?}",
            e.pauser.device.name, e.pauser.port, e.paused.device.name, e.paused.port, e.rate
        );
    }
}

/// `minutes` of the fabric demo on `seed`, the tree read each second and scored.
fn score(seed: u64, minutes: i64) -> Score {
    let mut lab = Lab::with(fabric::config(seed));
    let until = minutes * 60_000;
    let episodes = lab.sim.fabric_episodes(until);
    let mut sc = Score {
        seed,
        kinds: Default::default(),
        quiet: 0,
        problems: Vec::new(),
    };
    // Per episode: when its root was first named; the wrong namings seen in its window.
    let mut first: Vec<Option<i64>> = vec![None; episodes.len()];
    let mut wrong: Vec<BTreeSet<Named>> = vec![BTreeSet::new(); episodes.len()];
    let mut settle = wrong.clone();
    // Namings in quiet stretches, each distinct one counted once per stretch.
    let mut quiet_now: BTreeSet<Named> = BTreeSet::new();
    for _ in 0..minutes * 60 {
        lab.run(1);
        let t = lab.secs * 1000;
        let now = named(lab.app.pause_tree());
        let from = |e: &FabricEpisode| e.link_down.as_ref().map_or(e.start_ms, |l| l.at_ms);
        let active = (episodes.iter()).position(|e| from(e) <= t && t <= e.end_ms + SETTLE_MS);
        match active {
            Some(i) => {
                quiet_now.clear();
                let want = truth(&episodes[i]);
                for n in now {
                    if n == want {
                        first[i].get_or_insert(t);
                    } else if t > episodes[i].end_ms {
                        settle[i].insert(n);
                    } else {
                        if std::env::var("ROCETOP_FABRIC_DUMP").is_ok() {
                            dump(lab.app.pause_tree(), t, &episodes[i], &n);
                        }
                        wrong[i].insert(n);
                    }
                }
            }
            None => {
                for n in now {
                    if quiet_now.insert(n.clone()) {
                        sc.quiet += 1;
                        sc.problems.push(format!("+{} s quiet: {n:?}", t / 1000));
                    }
                }
            }
        }
    }
    for (i, ep) in episodes.iter().enumerate() {
        if ep.end_ms + SETTLE_MS > until {
            continue; // not over when the run ends
        }
        let k = &mut sc.kinds[ep.kind as usize];
        k.injected += 1;
        k.wrong += wrong[i].len();
        k.settle += settle[i].len();
        for w in &wrong[i] {
            sc.problems.push(format!(
                "+{} s {:?}: wrong {w:?}",
                ep.start_ms / 1000,
                ep.kind
            ));
        }
        match first[i].map(|t| t - ep.start_ms) {
            Some(d) if d <= WITHIN_MS => {
                k.found += 1;
                k.delays_ms.push(d.max(0));
            }
            d => sc.problems.push(format!(
                "+{} s {:?} {:?}: named after {d:?} ms",
                ep.start_ms / 1000,
                ep.kind,
                truth(ep)
            )),
        }
    }
    sc
}

#[test]
fn fabric_demo_every_injected_root_named() {
    let minutes: i64 = std::env::var("ROCETOP_FABRIC_MINUTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let seeds: Vec<u64> = std::env::var("ROCETOP_FABRIC_SEEDS")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 2, 3]);
    let mut bad = Vec::new();
    for seed in seeds {
        let sc = score(seed, minutes);
        print!("{}", sc.lines());
        for p in &sc.problems {
            println!("    {p}");
        }
        // The first four slots hold one episode of each kind.
        let kinds_seen = sc.kinds.iter().filter(|k| k.injected > 0).count();
        assert_eq!(kinds_seen, 4, "seed {seed}: every kind injected");
        if sc.precision() < 0.95 || sc.recall() < 0.95 {
            bad.push(format!("seed {seed}: {:#?}", sc.problems));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
