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
