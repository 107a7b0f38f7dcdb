use super::*;

#[test]
fn same_seed_same_story() {
    let cfg = Config::reference();
    let (mut a, mut b) = (Sim::new(&cfg), Sim::new(&cfg));
    a.advance_to(30_000);
    b.advance_to(12_000);
    b.advance_to(30_000);
    assert_eq!(a.nodes[5].devs[0].hw, b.nodes[5].devs[0].hw);
    assert_eq!(a.iteration, b.iteration);
}

#[test]
fn episodes_storm_the_internal_ports_and_drop_on_1_1_2() {
    let cfg = Config::reference();
    let mut s = Sim::new(&cfg);
    let ii = |s: &Sim| {
        s.switches[0]
            .ports
            .iter()
            .filter(|p| p.internal)
            .map(|p| p.pfc_rx)
            .sum::<u64>()
    };
    let mmu = |s: &Sim| s.switches[0].ports.iter().map(|p| p.mmu_drops).sum::<u64>();
    s.advance_to(14_000);
    let (ii0, mmu0, step0) = (ii(&s), mmu(&s), s.last_step_ms);
    assert!(step0 < 200.0, "calm step time {step0}");
    // Find the peak of the first episode.
    let peak = (15_000..40_000)
        .step_by(100)
        .find(|&t| s.congestion(t) >= 1.0)
        .expect("an episode");
    s.advance_to(peak + 5_000);
    assert!(ii(&s) - ii0 > 50_000, "PFC storm on ii ports");
    assert!(mmu(&s) > mmu0, "MMU drops during the episode");
    assert!(
        s.last_step_ms > step0 * 1.5,
        "step time climbs: {} vs {step0}",
        s.last_step_ms
    );
    assert!(s.logs[0].lines.iter().any(|l| l.starts_with("Iteration")));
}

#[test]
fn poisson_mean_is_about_right() {
    let mut r = Rng::new(7);
    let n = 20_000;
    let sum: u64 = (0..n).map(|_| r.poisson(2.0)).sum();
    let mean = sum as f64 / n as f64;
    assert!((mean - 2.0).abs() < 0.1, "{mean}");
}

/// The fabric's PFC travels hop by hop, a few hundred ms a hop: an incast's leaf pauses first,
/// then the spines, then the hosts on other leaves; and the same seed tells the same story.
#[test]
fn fabric_pauses_travel_hop_by_hop() {
    use crate::collect::demo::sim::hops::{EpisodeKind, Root};
    let cfg = crate::collect::demo::fabric::config(1);
    let mut sim = Sim::new(&cfg);
    let eps = sim.fabric_episodes(600_000);
    assert_eq!(
        eps,
        Sim::new(&cfg).fabric_episodes(600_000),
        "same seed, same episodes"
    );
    let ep = eps
        .iter()
        .find(|e| e.kind == EpisodeKind::Incast && !e.on_one_leaf)
        .expect("an incast over the spines in 10 minutes")
        .clone();
    let Root::Port(root) = &ep.root else {
        panic!("an incast's root is a port: {ep:?}")
    };
    let f = sim.fabric().expect("the fabric").clone();
    let tx = |sim: &Sim, pick: &dyn Fn(&str) -> bool| -> u64 {
        (sim.switches.iter())
            .filter(|s| pick(&s.name))
            .flat_map(|s| s.ports.iter())
            .map(|p| p.pfc_tx)
            .sum()
    };
    let far_hosts = |sim: &Sim| -> u64 {
        (f.hosts.iter())
            .filter(|h| h.leaf.switch != root.switch)
            .filter_map(|h| {
                let n = sim.nodes.iter().find(|n| n.name == h.node)?;
                n.netdevs
                    .iter()
                    .find(|d| d.name == h.netdev)
                    .map(|d| d.rx_pause)
            })
            .sum()
    };
    sim.advance_to(ep.start_ms - 1000);
    let (leaf0, spine0, host0) = (
        tx(&sim, &|n| n == root.switch),
        tx(&sim, &|n| n.starts_with("spine")),
        far_hosts(&sim),
    );
    let (mut leaf_at, mut spine_at, mut host_at) = (None, None, None);
    for t in (ep.start_ms - 900..ep.start_ms + 3000).step_by(STEP_MS as usize) {
        sim.advance_to(t);
        let now = Some(t - ep.start_ms);
        if leaf_at.is_none() && tx(&sim, &|n| n == root.switch) > leaf0 {
            leaf_at = now;
        }
        if spine_at.is_none() && tx(&sim, &|n| n.starts_with("spine")) > spine0 {
            spine_at = now;
        }
        if host_at.is_none() && far_hosts(&sim) > host0 {
            host_at = now;
        }
    }
    let (Some(l), Some(s), Some(h)) = (leaf_at, spine_at, host_at) else {
        panic!("leaf {leaf_at:?} spine {spine_at:?} far hosts {host_at:?}")
    };
    assert!((0..=300).contains(&l), "the root's leaf pauses at +{l} ms");
    assert!(
        (200..=600).contains(&(s - l)),
        "one hop to the spines: {} ms",
        s - l
    );
    assert!(
        (200..=600).contains(&(h - s)),
        "one hop to the far hosts: {} ms",
        h - s
    );
}

/// An incast whose senders share its leaf pauses that leaf's own hosts only: no uplink of it, no
/// spine and no other leaf sends a pause, and no host of another leaf is paused, while it lasts
/// and while its backlog drains after.
#[test]
fn an_incast_on_one_leaf_pauses_its_own_hosts_only() {
    use crate::collect::demo::sim::hops::{EpisodeKind, Root};
    let mut sim = Sim::new(&crate::collect::demo::fabric::config(4));
    let eps = sim.fabric_episodes(600_000);
    let ep = (eps.iter())
        .find(|e| e.kind == EpisodeKind::Incast && e.on_one_leaf)
        .expect("an incast on one leaf in 10 minutes")
        .clone();
    let Root::Port(root) = &ep.root else {
        panic!("{ep:?}")
    };
    let f = sim.fabric().expect("the fabric").clone();
    sim.advance_to(ep.start_ms - 1000);
    let before = PauseCounts::of(&sim);
    sim.advance_to(ep.end_ms + 3000);
    let after = PauseCounts::of(&sim);
    let mut own_hosts_paused = 0;
    for (si, sw) in sim.switches.iter().enumerate() {
        for (pi, p) in sw.ports.iter().enumerate() {
            let sent = after.port_tx[si][pi] - before.port_tx[si][pi];
            let to_host = f
                .hosts
                .iter()
                .any(|h| h.leaf.switch == sw.name && h.leaf.port == p.name);
            if sw.name == root.switch && to_host {
                own_hosts_paused += usize::from(sent > 0);
            } else {
                assert_eq!(sent, 0, "{} {} paused its far end", sw.name, p.name);
            }
        }
    }
    // Every host port of the leaf but the receiver's own.
    let leaf_hosts = f
        .hosts
        .iter()
        .filter(|h| h.leaf.switch == root.switch)
        .count();
    assert_eq!(own_hosts_paused, leaf_hosts - 1, "{ep:?}");
    for h in f.hosts.iter().filter(|h| h.leaf.switch != root.switch) {
        let n = sim
            .nodes
            .iter()
            .position(|n| n.name == h.node)
            .expect("node");
        let d = (sim.nodes[n].netdevs.iter())
            .position(|d| d.name == h.netdev)
            .expect("netdev");
        assert_eq!(after.nic_rx[n][d], before.nic_rx[n][d], "{h:?} paused");
    }
}

/// Every switch port's PFC counters (sent, received) and every NIC's, in Sim order.
#[derive(Clone, Debug, PartialEq)]
struct PauseCounts {
    port_tx: Vec<Vec<u64>>,
    port_rx: Vec<Vec<u64>>,
    nic_tx: Vec<Vec<u64>>,
    nic_rx: Vec<Vec<u64>>,
}

impl PauseCounts {
    fn of(sim: &Sim) -> PauseCounts {
        let ports = |f: fn(&PortSim) -> u64| -> Vec<Vec<u64>> {
            (sim.switches.iter())
                .map(|s| s.ports.iter().map(f).collect())
                .collect()
        };
        let nics = |f: fn(&NetdevSim) -> u64| -> Vec<Vec<u64>> {
            (sim.nodes.iter())
                .map(|n| n.netdevs.iter().map(f).collect())
                .collect()
        };
        PauseCounts {
            port_tx: ports(|p| p.pfc_tx),
            port_rx: ports(|p| p.pfc_rx),
            nic_tx: nics(|d| d.tx_pause),
            nic_rx: nics(|d| d.rx_pause),
        }
    }
}

/// Thirty simulated minutes on five seeds, each episode's root where the physics puts it: a
/// root port sends from the switch that pauses most and is never paused itself, a storming NIC
/// out-pauses every port and NIC and is never paused, a ring's every egress is paused by its
/// far end; nothing pauses in the quiet before each episode.
#[test]
fn thirty_fabric_minutes_every_root_as_injected() {
    use crate::collect::demo::sim::hops::{EpisodeKind, Root};
    let mut bad = Vec::new();
    let mut kinds = [0usize; 4];
    for seed in 1..=5 {
        let cfg = crate::collect::demo::fabric::config(seed);
        let mut sim = Sim::new(&cfg);
        let eps = sim.fabric_episodes(30 * 60_000);
        assert!(eps.len() >= 28, "seed {seed}: {} episodes", eps.len());
        let find = |sim: &Sim, sp: &SwitchPort| {
            let s = sim.switches.iter().position(|s| s.name == sp.switch)?;
            let p = sim.switches[s]
                .ports
                .iter()
                .position(|p| p.name == sp.port)?;
            Some((s, p))
        };
        for ep in &eps {
            kinds[ep.kind as usize] += 1;
            let from = ep.link_down.as_ref().map_or(ep.start_ms, |l| l.at_ms);
            sim.advance_to(from - 5000);
            let quiet = PauseCounts::of(&sim);
            // Up to the step before: the step at `from` is the episode's first.
            sim.advance_to(from - 1);
            if PauseCounts::of(&sim) != quiet {
                bad.push(format!("seed {seed}: pauses in the quiet before {ep:?}"));
            }
            sim.advance_to(ep.start_ms - 1);
            let a = PauseCounts::of(&sim);
            sim.advance_to(ep.end_ms + 2000);
            let b = PauseCounts::of(&sim);
            let d = |x: &[Vec<u64>], y: &[Vec<u64>], i: usize, j: usize| y[i][j] - x[i][j];
            let top_port = (0..b.port_tx.len())
                .flat_map(|i| (0..b.port_tx[i].len()).map(move |j| (i, j)))
                .max_by_key(|&(i, j)| d(&a.port_tx, &b.port_tx, i, j));
            let top_port_n = top_port.map_or(0, |(i, j)| d(&a.port_tx, &b.port_tx, i, j));
            let mut no = |why: &str| bad.push(format!("seed {seed}: {why}: {ep:?}"));
            match &ep.root {
                Root::Port(p) => {
                    let Some((s, j)) = find(&sim, p) else {
                        no("no such root port");
                        continue;
                    };
                    if d(&a.port_rx, &b.port_rx, s, j) != 0 {
                        no("root port paused");
                    }
                    if top_port.map(|(i, _)| i) != Some(s) {
                        no("another switch paused most");
                    }
                }
                Root::Nic(nic) => {
                    let n = sim.nodes.iter().position(|n| n.name == nic.node);
                    let k = n.and_then(|n| {
                        sim.nodes[n]
                            .netdevs
                            .iter()
                            .position(|x| x.name == nic.netdev)
                    });
                    let (Some(n), Some(k)) = (n, k) else {
                        no("no such NIC");
                        continue;
                    };
                    if d(&a.nic_rx, &b.nic_rx, n, k) != 0 {
                        no("storming NIC paused");
                    }
                    let own = d(&a.nic_tx, &b.nic_tx, n, k);
                    let others = (0..b.nic_tx.len())
                        .flat_map(|i| (0..b.nic_tx[i].len()).map(move |j| (i, j)))
                        .filter(|&(i, j)| (i, j) != (n, k))
                        .map(|(i, j)| d(&a.nic_tx, &b.nic_tx, i, j))
                        .max()
                        .unwrap_or(0);
                    if own <= top_port_n || others > 0 {
                        no("the storm is not the most pausing sender");
                    }
                }
                Root::Cycle(ring) => {
                    if ring.len() != 4 || ep.kind != EpisodeKind::Deadlock {
                        no("not a ring of four");
                    }
                    for e in ring {
                        match find(&sim, e) {
                            Some((s, j)) if d(&a.port_rx, &b.port_rx, s, j) > 0 => {}
                            _ => no("a ring egress not paused"),
                        }
                    }
                }
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(
        kinds.iter().all(|&k| k >= 5 * 7),
        "each kind in every four: {kinds:?}"
    );
}
