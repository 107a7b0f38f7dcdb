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
    let cfg = crate::collect::demo::fabric::config(3);
    let mut sim = Sim::new(&cfg);
    let eps = sim.fabric_episodes(600_000);
    assert_eq!(
        eps,
        Sim::new(&cfg).fabric_episodes(600_000),
        "same seed, same episodes"
    );
    let ep = eps
        .iter()
        .find(|e| e.kind == EpisodeKind::Incast)
        .expect("an incast in 10 minutes")
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
    println!("incast at {root:?}: leaf +{l} ms, spines +{s} ms, hosts on other leaves +{h} ms");
}
