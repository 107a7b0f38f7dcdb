use super::*;

fn obs(at: Ts, step: f64, ii_rx: f64, drops: f64) -> Obs<'static> {
    let mut o = Obs {
        at,
        step_s: Some(step),
        ecn: Some(5.0),
        ..Default::default()
    };
    for i in 1..=6 {
        o.pfc.push(PortPfc {
            switch: "NX_AI_Leaf1".into(),
            port: format!("ii1/1/{i}").into(),
            rx: ii_rx,
            tx: ii_rx / 3.0,
        });
    }
    if drops > 0.0 {
        o.drops.push(PortDrops {
            switch: "NX_AI_Leaf1".into(),
            port: "Ethernet1/1/2".into(),
            reason: "ingress mmu".into(),
            per_s: drops,
        });
    }
    o
}

#[test]
fn opens_on_a_storm_names_the_chain_and_closes_after_settling() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let mut d = Episodes::default();
    let mut t = 0;
    for _ in 0..30 {
        t += 1000;
        assert!(!d.update(&obs(t, 0.156, 2.0, 0.0), &rules, &links), "quiet");
    }
    // A storm on the ii ports; two seconds later drops and a slower step.
    t += 1000;
    let storm_start = t;
    assert!(
        !d.update(&obs(t, 0.156, 25_000.0, 0.0), &rules, &links),
        "one layer for one second: not yet"
    );
    t += 1000;
    assert!(
        d.update(&obs(t, 0.156, 25_000.0, 0.0), &rules, &links),
        "the second abnormal second opens it"
    );
    for _ in 0..5 {
        t += 1000;
        d.update(&obs(t, 0.360, 25_000.0, 40.0), &rules, &links);
    }
    let ep = d.open.as_ref().expect("open");
    assert_eq!(ep.start, storm_start, "starts where the PFC went abnormal");
    assert_eq!(ep.chain[0].layer, Layer::Pfc, "cause order: PFC first");
    assert_eq!(
        ep.culprit,
        Some(("NX_AI_Leaf1".to_string(), "Ethernet1/1/2".to_string()))
    );
    assert_eq!(ep.culprit_nodes, ["ubunturdma6"]);
    assert_eq!(ep.dcqcn, Dcqcn::NotAbsorbing);
    let total = 6.0 * (25_000.0 + 25_000.0 / 3.0);
    assert!(
        (ep.pfc_total_peak - total).abs() < 1.0,
        "{}",
        ep.pfc_total_peak
    );
    // 5 s at 360 ms instead of 156: (1 - 156/360) * 5 s lost.
    assert!(
        (ep.lost_s - (1.0 - 0.156 / 0.360) * 5.0).abs() < 0.01,
        "{}",
        ep.lost_s
    );
    let line = text::line(ep, &links, t);
    assert!(
        line.contains("step 156→360 ms (+131%) · PFC storm ii1/1/1-6 200k/s · MMU drops Ethernet1/1/2 → ubunturdma6 · ECN 5.0/s: DCQCN not absorbing")
            || line.contains("ECN flat: DCQCN not absorbing"),
        "{line}"
    );
    let last_bad = t;
    for _ in 0..9 {
        t += 1000;
        d.update(&obs(t, 0.156, 2.0, 0.0), &rules, &links);
    }
    assert!(d.open.is_some(), "still settling");
    t += 1000;
    d.update(&obs(t, 0.156, 2.0, 0.0), &rules, &links);
    assert!(d.open.is_none(), "closed after 10 s of calm");
    assert_eq!(d.closed.back().and_then(|e| e.end), Some(last_bad));
}

#[test]
fn one_odd_second_opens_nothing_and_no_judgement_before_a_baseline() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let mut d = Episodes::default();
    // A storm before any baseline: nothing to compare with, so no episode (drops aside).
    for t in 1..=3 {
        d.update(&obs(t * 1000, 0.156, 25_000.0, 0.0), &rules, &links);
    }
    assert!(d.open.is_none());
    let mut d = Episodes::default();
    for t in 1..=20 {
        d.update(&obs(t * 1000, 0.156, 2.0, 0.0), &rules, &links);
    }
    // One second of one layer: not yet.
    d.update(&obs(21_000, 0.156, 900.0, 0.0), &rules, &links);
    d.update(&obs(22_000, 0.156, 2.0, 0.0), &rules, &links);
    assert!(d.open.is_none() && d.closed.is_empty());
}

/// The reference config without ubunturdma6's `switch_port`, its rules, and its pairings: from
/// the config alone, and with LLDP putting ubunturdma6 behind NX_AI_Leaf1 Eth1/1/2.
fn lldp_pairing() -> (Rules, [Links; 2]) {
    let text = crate::config::REFERENCE.replacen("switch_port = \"Ethernet1/1/2\"\n", "", 1);
    let cfg = Config::from_str(&text, "t.toml", None).expect("config");
    let rules = Rules::of(&cfg);
    let mut store = crate::metrics::Store::new(600_000, 16);
    let id = store.add_source("ubunturdma6 topology", 300_000);
    let lldp = "lldp.ens192.chassis.name=NX_AI_Leaf1\nlldp.ens192.port.ifname=Eth1/1/2\n";
    let ctx = crate::parse::Ctx::named("ubunturdma6");
    store.ingest(
        id,
        1,
        &crate::parse::parse(crate::parse::ParseKind::Lldpctl, lldp, &ctx),
    );
    (rules, [Links::from_config(&cfg), Links::of(&cfg, &store)])
}

/// The nodes behind the dropping port come from LLDP where the config names no `switch_port`.
#[test]
fn the_chain_names_the_node_lldp_puts_behind_the_port() {
    let (rules, [by_config, by_lldp]) = lldp_pairing();
    for (links, want) in [
        (by_config, Vec::<String>::new()),
        (by_lldp, vec!["ubunturdma6".to_string()]),
    ] {
        let mut d = Episodes::default();
        let mut t = 0;
        for _ in 0..30 {
            t += 1000;
            d.update(&obs(t, 0.156, 2.0, 0.0), &rules, &links);
        }
        for _ in 0..6 {
            t += 1000;
            d.update(&obs(t, 0.360, 25_000.0, 40.0), &rules, &links);
        }
        let ep = d.open.as_ref().expect("open");
        assert_eq!(ep.culprit_nodes, want);
        let line = text::line(ep, &links, t);
        assert_eq!(line.contains("→ ubunturdma6"), !want.is_empty(), "{line}");
    }
}

/// The kept sorted baseline gives the median a sort of the calm values gives, through the
/// window sliding past BASE_KEEP, repeats, zeros of both signs and a NaN.
#[test]
fn kept_median_is_the_median_of_a_sort() {
    let mut s = Signal::default();
    let mut x: u64 = 7;
    for i in 0..400 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let v = match i % 50 {
            7 => f64::NAN,
            11 => -0.0,
            13 => 0.0,
            _ => ((x >> 40) % 37) as f64 * 0.5,
        };
        s.learn(v);
        let mut all: Vec<f64> = s.calm.iter().copied().collect();
        all.sort_by(f64::total_cmp);
        let want = (all.len() >= BASE_MIN).then(|| all[all.len() / 2]);
        assert_eq!(
            s.median().map(f64::to_bits),
            want.map(f64::to_bits),
            "after {i}"
        );
        assert_eq!(s.sorted.len(), s.calm.len());
        assert!(s.calm.len() <= BASE_KEEP);
    }
}

#[test]
fn ports_pfc_rates_are_the_maps_rate_by_key_gives() {
    use crate::metrics::names::{SW_PFC_RX, SW_PFC_TX};
    use crate::metrics::{Parsed, Sample, Store, query};
    let mut store = Store::new(60_000, 100);
    let leaf = store.add_source("leaf", 1000);
    // Ports out of order, a port with two priorities, one port only sent on.
    let poll = |n: u64| Parsed {
        samples: [
            (SW_PFC_RX, "Eth1/9", "3"),
            (SW_PFC_RX, "Eth1/10", "3"),
            (SW_PFC_RX, "Eth1/10", "4"),
            (SW_PFC_RX, "Eth1/2", "3"),
            (SW_PFC_TX, "Eth1/2", "3"),
            (SW_PFC_TX, "Eth1/30", "3"),
        ]
        .iter()
        .enumerate()
        .map(|(i, (name, port, prio))| {
            let labels = [("switch", "leaf"), ("port", *port), ("priority", *prio)];
            Sample::counter(*name, &labels, n * (i as u64 + 1))
        })
        .collect(),
        ..Default::default()
    };
    for s in 1..=3 {
        store.ingest(leaf, s * 1000, &poll(s as u64 * 10));
    }
    let ids = crate::app::alerts::EvalIdsCache::of(&store);
    let ports = port_pfc_in(&store, &ids);
    // Ascending by key, each port once, each direction as its own map gives it.
    assert!(ports.windows(2).all(|w| w[0].key < w[1].key), "{ports:?}");
    for (dir, name) in [0, 1].into_iter().zip([SW_PFC_RX, SW_PFC_TX]) {
        let want = query::rate_by_key(&store, name, &[], &["switch", "port"]);
        let got: Vec<_> = ports
            .iter()
            .filter_map(|p| Some((p.key.map(String::from), [p.rx, p.tx][dir]?.rate)))
            .collect();
        let want: Vec<_> = want
            .iter()
            .map(|(k, a)| ([k[0].to_string(), k[1].to_string()], a.rate))
            .collect();
        assert_eq!(got, want, "{name}");
    }
    assert_eq!(
        ports.len(),
        4,
        "Eth1/10, Eth1/2 (both), Eth1/30 (sent only), Eth1/9"
    );
    let o = observe(&store, 3000);
    let ports: Vec<_> = o.pfc.iter().map(|p| (&*p.port, p.rx, p.tx)).collect();
    // rx ports only, in order, each with its own sent rate where it has one (else 0).
    assert_eq!(
        ports,
        [
            ("Eth1/10", 50.0, 0.0),
            ("Eth1/2", 40.0, 50.0),
            ("Eth1/9", 10.0, 0.0)
        ]
    );
}

/// A detector that keeps its chain's key order and its verdicts between instants judges as one
/// that orders and concludes afresh every instant: through a storm whose ports come one by one,
/// whose rates rise, fall and rise past their peaks, whose drops move to another port, which
/// settles and opens again, and whose pairing changes in the middle (LLDP puts a node behind
/// the dropping port).
#[test]
fn kept_order_and_verdicts_equal_fresh_ones() {
    let (rules, pairings) = lldp_pairing();
    let (mut kept, mut fresh) = (Episodes::default(), Episodes::default());
    let mut concluded_again = 0;
    for k in 0..160i64 {
        let t = 1000 * (k + 1);
        let storm = (30..90).contains(&k) || (110..140).contains(&k);
        let mut o = obs(t, if storm { 0.36 } else { 0.156 }, 2.0, 0.0);
        if storm {
            // Ports join one by one; their rates move up and down around a rising trend.
            for (i, p) in o.pfc.iter_mut().enumerate() {
                let on = k - 30 >= 3 * i as i64 || k >= 110;
                p.rx = if on {
                    20_000.0 + 500.0 * ((k * 7 + i as i64) % 11) as f64
                } else {
                    2.0
                };
                p.tx = p.rx / 4.0 + (k % 5) as f64;
            }
            let port = if k < 60 {
                "Ethernet1/1/2"
            } else {
                "Ethernet1/1/7"
            };
            o.drops.push(PortDrops {
                switch: "NX_AI_Leaf1".into(),
                port: port.into(),
                reason: "ingress mmu".into(),
                per_s: 30.0 + (k % 4) as f64,
            });
        }
        let links_gen = if k < 70 { 1 } else { 2 };
        let links = &pairings[links_gen as usize - 1];
        let a = kept.update_in(&o, &rules, links, Some(links_gen));
        // The other orders its chain and concludes afresh every instant.
        fresh.by_key.0 = None;
        let b = fresh.update(&o, &rules, links);
        assert_eq!(a, b, "second {k}");
        assert_eq!(kept.all(), fresh.all(), "second {k}");
        concluded_again += usize::from(kept.concluded.is_some_and(|c| c.links == links_gen));
        if let Some(ep) = &kept.open {
            let mut keys: Vec<_> = ep.chain.iter().map(|p| &p.key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), ep.chain.len(), "second {k}: a key twice");
        }
    }
    // Both storms opened an episode, the first named the node once LLDP paired it.
    assert_eq!(kept.closed.len() + usize::from(kept.open.is_some()), 2);
    assert!(kept.all().iter().any(|e| !e.culprit_nodes.is_empty()));
    assert!(concluded_again > 50, "{concluded_again}");
}
