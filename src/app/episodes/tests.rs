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
    let ep = d.worst_open().expect("open");
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
    assert!(d.open().len() > 0, "still settling");
    t += 1000;
    d.update(&obs(t, 0.156, 2.0, 0.0), &rules, &links);
    assert!(d.open().len() == 0, "closed after 10 s of calm");
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
    assert!(d.open().len() == 0);
    let mut d = Episodes::default();
    for t in 1..=20 {
        d.update(&obs(t * 1000, 0.156, 2.0, 0.0), &rules, &links);
    }
    // One second of one layer: not yet.
    d.update(&obs(21_000, 0.156, 900.0, 0.0), &rules, &links);
    d.update(&obs(22_000, 0.156, 2.0, 0.0), &rules, &links);
    assert!(d.open().len() == 0 && d.closed.is_empty());
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
        let ep = d.worst_open().expect("open");
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

/// A detector that keeps its chain's key order between instants judges as one that orders
/// afresh every instant: through a storm whose ports come one by one,
/// whose rates rise, fall and rise past their peaks, whose drops move to another port, which
/// settles and opens again, and whose pairing changes in the middle (LLDP puts a node behind
/// the dropping port).
#[test]
fn kept_order_equals_a_fresh_one() {
    let (rules, pairings) = lldp_pairing();
    let (mut kept, mut fresh) = (Episodes::default(), Episodes::default());
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
            // The first port drops most: the culprit (standing out) once LLDP places a node.
            let (port, per_s) = if k < 60 {
                ("Ethernet1/1/2", 80.0)
            } else {
                ("Ethernet1/1/7", 30.0)
            };
            o.drops.push(PortDrops {
                switch: "NX_AI_Leaf1".into(),
                port: port.into(),
                reason: "ingress mmu".into(),
                per_s: per_s + (k % 4) as f64,
            });
        }
        let links = &pairings[usize::from(k >= 70)];
        let a = kept.update(&o, &rules, links);
        // The other orders its chain afresh every instant.
        for op in &mut fresh.opened {
            op.by_key.made_for = None;
        }
        let b = fresh.update(&o, &rules, links);
        assert_eq!(a, b, "second {k}");
        assert_eq!(kept.all(), fresh.all(), "second {k}");
        if let Some(ep) = kept.worst_open() {
            let mut keys: Vec<_> = ep.chain.iter().map(|p| &p.key).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), ep.chain.len(), "second {k}: a key twice");
        }
    }
    // Both storms opened an episode (the drops moving to a port with no pauses standing out is
    // no place of its own), the first named the node once LLDP paired it.
    assert_eq!(kept.closed.len() + kept.open().len(), 2);
    assert!(kept.all().iter().any(|e| !e.culprit_nodes.is_empty()));
}

/// `obs` with the edge ports of the reference lab too, each sending `tx` pauses a second where
/// named in `edge_tx` (else 2), and no drops.
fn lossless_obs(at: Ts, step: f64, ii_rx: f64, edge_tx: &[(&str, f64)]) -> Obs<'static> {
    let mut o = obs(at, step, ii_rx, 0.0);
    for port in [
        "Ethernet1/1/1",
        "Ethernet1/1/2",
        "Ethernet1/2/1",
        "Ethernet1/2/2",
    ] {
        let tx = edge_tx
            .iter()
            .find(|(p, _)| *p == port)
            .map_or(2.0, |e| e.1);
        o.pfc.push(PortPfc {
            switch: "NX_AI_Leaf1".into(),
            port: port.into(),
            rx: 1.0,
            tx,
        });
    }
    o
}

/// In the lossless case (PFC holds, nothing drops) the culprit is the edge port sending most
/// pauses, and the sentence and the Episodes list name it and the nodes behind it, whether the
/// storm also runs on the internal ports or only on edge ports.
#[test]
fn without_drops_the_sentence_and_the_list_name_the_culprit_and_its_nodes() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    for (case, ii_storm, culprit) in [
        ("ii and edge", 25_000.0, "Ethernet1/2/1"),
        ("edge only", 2.0, "Ethernet1/1/1"),
    ] {
        let mut d = Episodes::default();
        let mut t = 0;
        for _ in 0..30 {
            t += 1000;
            d.update(&lossless_obs(t, 0.156, 2.0, &[]), &rules, &links);
        }
        let storm = [(culprit, 9_000.0), ("Ethernet1/1/2", 4_000.0)];
        for _ in 0..6 {
            t += 1000;
            d.update(&lossless_obs(t, 0.30, ii_storm, &storm), &rules, &links);
        }
        let ep = d.worst_open().expect("an episode");
        assert!(ep.parts(Layer::Drops).next().is_none(), "{case}: no drops");
        // The rule: the edge port sending the most pauses, and the nodes the map puts behind it.
        let most = ep
            .parts(Layer::Pfc)
            .filter(|p| !links.behind(switch_of(&p.key), port_of(&p.key)).is_empty())
            .max_by(|a, b| a.tx_peak.total_cmp(&b.tx_peak))
            .map(|p| port_of(&p.key).to_string());
        assert_eq!(ep.culprit.as_ref().map(|c| c.1.clone()), most, "{case}");
        let nodes = links.behind_names("NX_AI_Leaf1", culprit);
        assert!(!nodes.is_empty());
        assert_eq!(ep.culprit_nodes, nodes, "{case}");
        let line = text::line(ep, &links, t);
        let row = text::row(ep, &links, t);
        for said in [&line, &row] {
            let want = format!("{culprit} → {}", nodes.join(","));
            assert!(said.contains(&want), "{case}: {want:?} not in {said}");
        }
    }
}

/// With no switch read (none configured, or it never answers), the switch layer is unseen, not
/// calm: no DCQCN verdict (that PFC did not storm is not known), "switch not read" said, and the
/// hosts' own evidence still points at a place: the node paused most and its port in the map.
#[test]
fn a_switch_not_read_is_said_unseen_and_the_hosts_point_at_a_place() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let hosts = |at: Ts, pause6: f64, ecn: f64| Obs {
        at,
        step_s: Some(0.156),
        ecn: Some(ecn),
        pause: vec![
            ("ubunturdma5".into(), pause6 / 3.0),
            ("ubunturdma6".into(), pause6),
            ("ubunturdma2".into(), 0.001),
        ],
        ..Default::default()
    };
    let mut d = Episodes::default();
    let mut t = 0;
    for _ in 0..30 {
        t += 1000;
        d.update(&hosts(t, 0.002, 5.0), &rules, &links);
    }
    for _ in 0..6 {
        t += 1000;
        d.update(&hosts(t, 0.12, 900.0), &rules, &links);
    }
    let ep = d.worst_open().expect("an episode from the hosts alone");
    assert!(!ep.switch_read);
    assert_eq!(ep.dcqcn, Dcqcn::Unseen, "no verdict without PFC read");
    let port = links.ports_of("ubunturdma6")[0].to_string();
    assert_eq!(ep.culprit.as_ref().map(|c| &c.1), Some(&port));
    assert_eq!(
        ep.culprit_nodes,
        links.behind_names("NX_AI_Leaf1", &port),
        "the nodes on the paused node's port"
    );
    for said in [text::line(ep, &links, t), text::row(ep, &links, t)] {
        for calm in ["DCQCN absorbing", "did not storm", "DCQCN"] {
            assert!(!said.contains(calm), "{calm:?} in {said}");
        }
        assert!(said.contains("switch not read"), "{said}");
        assert!(said.contains(&format!("ubunturdma6 on {port}")), "{said}");
    }
    // The same fabric with its switch read and quiet: a verdict is given.
    let mut d = Episodes::default();
    let mut t = 0;
    let read = |o: Obs<'static>| Obs {
        pfc: lossless_obs(o.at, 0.156, 2.0, &[]).pfc,
        ..o
    };
    for _ in 0..30 {
        t += 1000;
        d.update(&read(hosts(t, 0.002, 5.0)), &rules, &links);
    }
    for _ in 0..6 {
        t += 1000;
        d.update(&read(hosts(t, 0.12, 900.0)), &rules, &links);
    }
    let ep = d.worst_open().expect("an episode");
    assert!(ep.switch_read);
    assert_eq!(ep.dcqcn, Dcqcn::Absorbing);
    assert!(!text::line(ep, &links, t).contains("switch not read"));
}

/// The sentence in at most `max` lines of `width` columns: no line wider, every word of what is
/// shown whole (each is a word of the full sentence), the place and the status always kept, and
/// when all of it fits in the lines, all of it shown.
#[test]
fn the_sentence_takes_its_lines_and_leaves_out_pieces_never_cuts_a_word() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let mut d = Episodes::default();
    let mut t = 0;
    for _ in 0..30 {
        t += 1000;
        d.update(&obs(t, 0.156, 2.0, 0.0), &rules, &links);
    }
    for _ in 0..6 {
        t += 1000;
        let mut o = obs(t, 0.36, 25_000.0, 40.0);
        o.ecn = Some(600.0);
        o.pause = vec![("ubunturdma6".into(), 0.11)];
        o.rtt_p99 = vec![("ubunturdma2 rdma".into(), 9e-3)];
        d.update(&o, &rules, &links);
    }
    let ep = d.worst_open().expect("open");
    let ranked = text::ranked(ep, &links);
    let full = text::line(ep, &links, t);
    let words: std::collections::HashSet<&str> = full.split_whitespace().collect();
    for (width, max) in [(200, 3), (120, 3), (80, 3), (60, 3), (40, 2), (120, 1)] {
        let lines = text::lines(ep, &ranked, t, width, max);
        assert!(lines.len() <= max, "{width}x{max}: {lines:#?}");
        let mut shown = String::new();
        for l in &lines {
            assert!(l.chars().count() <= width, "{width}: {l:?} too wide");
            shown.push_str(l);
            shown.push(' ');
        }
        for w in shown.split_whitespace().filter(|w| *w != "·" && *w != "…") {
            assert!(
                words.contains(w),
                "{width}x{max}: {w:?} is no word of {full}"
            );
        }
        // Cut short (`…`) only where even the place and the status need more lines.
        let cut = shown.contains('…');
        assert_eq!(cut, width == 40, "{width}x{max}: {lines:#?}");
        for kept in ["MMU drops Ethernet1/1/2", "ongoing"]
            .iter()
            .take(if cut { 1 } else { 2 })
        {
            assert!(
                shown
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
                    .contains(kept),
                "{width}x{max}: {kept:?} left out: {lines:#?}"
            );
        }
        // A break between pieces takes the place of their ` · `.
        let words_of = |t: &str| -> Vec<String> {
            t.split_whitespace()
                .filter(|w| *w != "·")
                .map(str::to_string)
                .collect()
        };
        let (joined, all) = (words_of(&shown), words_of(&full));
        if width * (max - 1) >= full.chars().count() {
            assert_eq!(joined, all, "{width}x{max}: room for all of it");
        }
    }
}

/// The rule a culprit is held to: the largest of `sizes` is at least half their sum and twice
/// the next; otherwise none stands out.
#[test]
fn a_culprit_stands_out_by_share_and_by_the_next() {
    let ok = |v: &[f64]| stand_out(v.iter().copied().enumerate().collect()).ok();
    assert_eq!(ok(&[10.0]), Some(0));
    assert_eq!(ok(&[4.0, 10.0]), Some(1), "twice the next and most of all");
    assert_eq!(ok(&[10.0, 6.0]), None, "not twice the next");
    assert_eq!(ok(&[10.0, 4.0, 4.0, 4.0]), None, "less than half of all");
    assert_eq!(ok(&[7.0, 7.0]), None, "a tie stands out of nothing");
    assert_eq!(ok(&[]), None);
    assert_eq!(ok(&[0.0]), None, "nothing is not a culprit");
    let all = stand_out(vec![("a", 1.0), ("b", 3.0), ("c", 2.0)]);
    assert_eq!(all, Err(vec!["b", "c", "a"]), "spread: largest first");
}

/// Whether the episode's evidence has a port standing out: the ports' summed drop peaks (one
/// that dropped in two evaluations or more), else the edge ports' pauses sent.
fn stands_out_in(ep: &Episode, links: &Links) -> Option<String> {
    let mut drops: Vec<(String, f64, u32)> = Vec::new();
    for p in ep.parts(Layer::Drops) {
        let port = port_of(&p.key).to_string();
        match drops.iter_mut().find(|d| d.0 == port) {
            Some(d) => {
                d.1 += p.peak;
                d.2 = d.2.max(p.evals);
            }
            None => drops.push((port, p.peak, p.evals)),
        }
    }
    let edge: Vec<(String, f64)> = ep
        .parts(Layer::Pfc)
        .filter(|p| !links.behind(switch_of(&p.key), port_of(&p.key)).is_empty())
        .map(|p| (port_of(&p.key).to_string(), p.tx_peak))
        .collect();
    let top = |v: &[(String, f64)]| {
        let sum: f64 = v.iter().map(|d| d.1).sum();
        let mut s: Vec<f64> = v.iter().map(|d| d.1).collect();
        s.sort_by(|a, b| b.total_cmp(a));
        let best = v.iter().find(|d| Some(&d.1) == s.first())?;
        (best.1 >= sum / 2.0 && best.1 >= 2.0 * s.get(1).copied().unwrap_or(0.0))
            .then(|| best.0.clone())
    };
    let d: Vec<(String, f64)> = drops.iter().map(|d| (d.0.clone(), d.1)).collect();
    top(&d)
        .filter(|p| drops.iter().any(|d| d.0 == *p && d.2 >= 2))
        .or_else(|| top(&edge))
}

/// A culprit has to stand out from the rest of the fabric: a stray drop (one evaluation, a
/// different port each time) is not the congestion point, drops shared alike by ports name none,
/// and pauses spread over the edge name none; then the sentence says the congestion is spread,
/// and over which switch and ports. A stray drop beside a real congestion point leaves the
/// pauses to name it.
#[test]
fn a_culprit_must_stand_out_else_the_congestion_is_said_spread() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let even = [
        ("Ethernet1/1/1", 5_000.0),
        ("Ethernet1/1/2", 4_000.0),
        ("Ethernet1/2/1", 5_000.0),
        ("Ethernet1/2/2", 4_500.0),
    ];
    let one = [("Ethernet1/2/1", 9_000.0), ("Ethernet1/1/2", 3_000.0)];
    let drop = |o: &mut Obs<'static>, port: &str, per_s: f64| {
        o.drops.push(PortDrops {
            switch: "NX_AI_Leaf1".into(),
            port: port.to_string().into(),
            reason: "queue wred".into(),
            per_s,
        })
    };
    /// One storm: the edge ports' pauses sent, the drops (each second, or at one only: a stray)
    /// and the culprit the rule names.
    struct Case<'a> {
        name: &'a str,
        pauses: &'a [(&'a str, f64)],
        drops: &'a [(&'a str, f64)],
        stray: bool,
        culprit: Option<&'a str>,
    }
    let stray = [("Ethernet1/1/1", 1.0)];
    let cases = [
        Case {
            name: "a stray drop, pauses even",
            pauses: &even,
            drops: &stray,
            stray: true,
            culprit: None,
        },
        Case {
            name: "a stray drop, one port pausing",
            pauses: &one,
            drops: &stray,
            stray: true,
            culprit: Some("Ethernet1/2/1"),
        },
        Case {
            name: "drops shared alike",
            pauses: &even,
            drops: &[("Ethernet1/1/1", 30.0), ("Ethernet1/2/2", 25.0)],
            stray: false,
            culprit: None,
        },
        Case {
            name: "one port dropping most",
            pauses: &even,
            drops: &[("Ethernet1/1/1", 60.0), ("Ethernet1/2/2", 2.0)],
            stray: false,
            culprit: Some("Ethernet1/1/1"),
        },
        Case {
            name: "pauses even, nothing dropped",
            pauses: &even,
            drops: &[],
            stray: false,
            culprit: None,
        },
    ];
    for c in cases {
        let (case, want) = (c.name, c.culprit);
        let mut d = Episodes::default();
        let mut t = 0;
        for _ in 0..30 {
            t += 1000;
            d.update(&lossless_obs(t, 0.156, 2.0, &[]), &rules, &links);
        }
        for s in 0..6 {
            t += 1000;
            let mut o = lossless_obs(t, 0.30, 2.0, c.pauses);
            if !c.stray || s == 2 {
                for (port, per_s) in c.drops {
                    drop(&mut o, port, *per_s);
                }
            }
            d.update(&o, &rules, &links);
        }
        let ep = d.worst_open().expect("an episode");
        // The rule, read from the episode's own chain.
        assert_eq!(
            stands_out_in(ep, &links).as_deref(),
            want,
            "{case}: the rule"
        );
        assert_eq!(ep.culprit.as_ref().map(|c| c.1.as_str()), want, "{case}");
        let said = [text::line(ep, &links, t), text::row(ep, &links, t)];
        match want {
            Some(port) => {
                assert!(ep.spread.is_empty(), "{case}");
                let nodes = links.behind_names("NX_AI_Leaf1", port).join(",");
                for s in &said {
                    assert!(s.contains(&format!("{port} → {nodes}")), "{case}: {s}");
                    assert!(!s.contains("spread"), "{case}: {s}");
                }
            }
            None => {
                assert!(
                    ep.culprit_nodes.is_empty(),
                    "{case}: {:?}",
                    ep.culprit_nodes
                );
                // Where: every port of the evidence, on its switch.
                let mut ports: Vec<&str> = ep.spread.iter().map(|s| s.port.as_str()).collect();
                ports.sort();
                let mut want_ports: Vec<&str> = even.iter().map(|e| e.0).collect();
                want_ports.sort();
                assert_eq!(ports, want_ports, "{case}");
                for s in &said {
                    assert!(
                        s.contains("no culprit stands out: spread over NX_AI_Leaf1 Ethernet1/1/1-2, Ethernet1/2/1-2"),
                        "{case}: {s}"
                    );
                    assert!(!s.contains(" → "), "{case}: a place named: {s}");
                }
                // Kept whole on a narrow screen: the place is never left out.
                let ranked = text::ranked(ep, &links);
                for (width, max) in [(80, 3), (60, 3)] {
                    let lines = text::lines(ep, &ranked, t, width, max);
                    assert!(
                        lines.iter().all(|l| l.chars().count() <= width),
                        "{lines:#?}"
                    );
                    let shown = lines
                        .join(" ")
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ");
                    assert!(
                        shown.contains("no culprit stands out"),
                        "{width}: {lines:#?}"
                    );
                }
            }
        }
    }
}

/// Floors scale with the fabric's own noise: on a fabric at a tenth of the lab's rates a 12×
/// ECN rise, a 95× pause rise and a 10× PFC rise on a port are abnormal (fixed floors sized for
/// the lab, +10/s, +2 points and +100/s, hid them), while on a noisy port a value inside twice
/// its calm reach is not (a fixed +100/s called it a storm).
#[test]
fn floors_come_from_the_signals_own_noise() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let port = |name: &str, tx: f64| PortPfc {
        switch: "NX_AI_Leaf1".into(),
        port: name.to_string().into(),
        rx: 0.0,
        tx,
    };
    let at = |i: i64, ecn: f64, pause: f64, edge: f64, noisy: f64| Obs {
        at: 1000 * (i + 1),
        step_s: Some(0.156),
        ecn: Some(ecn),
        pause: vec![("ubunturdma6".into(), pause)],
        pfc: vec![port("Ethernet1/1/2", edge), port("Ethernet1/2/1", noisy)],
        ..Default::default()
    };
    let mut d = Episodes::default();
    let calm = 60;
    for i in 0..calm {
        // A tenth of the lab: ECN 0.3-0.7/s, pause 0.01-0.03 %, 4-6 pauses a second; the noisy
        // port mostly silent with a burst of 300 every tenth second.
        let odd = i % 2 == 1;
        let ecn = if odd { 0.7 } else { 0.3 };
        let pause = if odd { 0.0003 } else { 0.0001 };
        let edge = if odd { 6.0 } else { 4.0 };
        let noisy = if i % 10 == 0 { 300.0 } else { 0.0 };
        d.update(&at(i, ecn, pause, edge, noisy), &rules, &links);
        assert!(d.open().len() == 0, "calm second {i} opened an episode");
    }
    for i in calm..calm + 4 {
        d.update(&at(i, 6.0, 0.019, 50.0, 350.0), &rules, &links);
    }
    let ep = d.worst_open().expect("the rises open an episode");
    let keys: Vec<&str> = ep.chain.iter().map(|p| p.key.as_str()).collect();
    for want in ["ecn", "pause ubunturdma6", "pfc NX_AI_Leaf1 Ethernet1/1/2"] {
        assert!(keys.contains(&want), "{want} not in {keys:?}");
    }
    assert!(
        !keys.contains(&"pfc NX_AI_Leaf1 Ethernet1/2/1"),
        "inside its own noise: {keys:?}"
    );
    let line = text::line(ep, &links, 1000 * (calm + 5));
    assert!(!line.contains("ECN flat"), "{line}");
}

/// One incident on the reference lab, seconds `from..to`: drops and pauses sent at `port`, the
/// nodes behind it paused most.
struct Incident {
    port: &'static str,
    from: i64,
    to: i64,
}

const EDGE: [&str; 4] = [
    "Ethernet1/1/1",
    "Ethernet1/1/2",
    "Ethernet1/2/1",
    "Ethernet1/2/2",
];

/// The reference lab at second `s` with `incidents` under way: each drops at its port, which
/// sends 9000 pauses a second to the nodes behind it (paused 12 %); while any is, the ii ports
/// storm, the step slows and every other edge port and host is paused a little (the storm's
/// backpressure, as the lab's is).
fn lab_at(s: i64, incidents: &[Incident], links: &Links) -> Obs<'static> {
    let on: Vec<&Incident> = (incidents.iter())
        .filter(|i| (i.from..i.to).contains(&s))
        .collect();
    let storm = !on.is_empty();
    let (step, ii) = if storm {
        (0.30, 25_000.0)
    } else {
        (0.156, 2.0)
    };
    let mut o = obs(1000 * s, step, ii, 0.0);
    for port in EDGE {
        let culprit = on.iter().any(|i| i.port == port);
        let tx = match (culprit, storm) {
            (true, _) => 9_000.0,
            (false, true) => 1_500.0,
            (false, false) => 2.0,
        };
        o.pfc.push(PortPfc {
            switch: "NX_AI_Leaf1".into(),
            port: port.into(),
            rx: 1.0,
            tx,
        });
        if culprit {
            o.drops.push(PortDrops {
                switch: "NX_AI_Leaf1".into(),
                port: port.into(),
                reason: "ingress mmu".into(),
                per_s: 40.0,
            });
        }
    }
    for n in 1..=8 {
        let node = format!("ubunturdma{n}");
        let behind = (on.iter()).any(|i| links.behind("NX_AI_Leaf1", i.port).contains(&&*node));
        let pause = match (behind, storm) {
            (true, _) => 0.12,
            (false, true) => 0.02,
            (false, false) => 0.0005,
        };
        o.pause.push((node.into(), pause));
    }
    o
}

/// The reference lab run second by second through `secs` with `incidents`, 30 s calm first.
fn run_lab(incidents: &[Incident], secs: i64) -> (Episodes, Links) {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let mut d = Episodes::default();
    for s in 1..=secs {
        d.update(&lab_at(s, incidents, &links), &rules, &links);
    }
    (d, links)
}

/// The node paused most in `ep`'s chain.
fn paused_most(ep: &Episode) -> Option<&str> {
    ep.parts(Layer::HostPause)
        .max_by(|a, b| a.peak.total_cmp(&b.peak))
        .map(|p| p.key.trim_start_matches("pause "))
}

/// Each episode of `d` (in start order) is told with its own culprit, nodes and paused host, and
/// never with another's port or "(+N more)".
fn each_its_own(d: &Episodes, links: &Links, want: &[&str], t: Ts) {
    let mut eps = d.all();
    eps.reverse();
    let culprits: Vec<Option<&str>> = eps
        .iter()
        .map(|e| e.culprit.as_ref().map(|c| c.1.as_str()))
        .collect();
    let want_c: Vec<Option<&str>> = want.iter().map(|p| Some(*p)).collect();
    assert_eq!(culprits, want_c, "one episode per incident, in order");
    for (ep, port) in eps.iter().zip(want) {
        let nodes = links.behind_names("NX_AI_Leaf1", port);
        assert_eq!(ep.culprit_nodes, nodes, "{port}");
        let most = paused_most(ep).expect("a paused host");
        assert!(
            nodes.iter().any(|n| n == most),
            "{port}: {most} paused most"
        );
        let line = text::line(ep, links, t);
        assert!(!line.contains("more)"), "{line}");
        assert!(line.contains(&format!("drops {port} → ")), "{line}");
        for other in want.iter().filter(|o| *o != port) {
            assert!(!line.contains(*other), "{other} in {line}");
        }
    }
}

/// Two incidents on different ports 17 s apart (the first over, settling, when the second
/// starts): two episodes, each with its own culprit, nodes and paused host, the first ending
/// where its own storm did, not chained to the second's.
#[test]
fn incidents_17_s_apart_on_different_ports_are_two_episodes() {
    let incidents = [
        Incident {
            port: "Ethernet1/1/2",
            from: 31,
            to: 46,
        },
        Incident {
            port: "Ethernet1/2/1",
            from: 48,
            to: 63,
        },
    ];
    // Each closes on its own: the first settled (10 s after its storm) while the second is open.
    let (d, _) = run_lab(&incidents, 58);
    let open: Vec<Ts> = d.open().map(|e| e.start).collect();
    assert_eq!(open, [48_000]);
    assert_eq!(d.closed.len(), 1);
    let (d, links) = run_lab(&incidents, 90);
    assert_eq!(d.open().len(), 0, "both settled");
    assert_eq!(d.closed.len(), 2, "{:#?}", d.closed);
    each_its_own(&d, &links, &["Ethernet1/1/2", "Ethernet1/2/1"], 90_000);
    let first = &d.closed[0];
    assert_eq!((first.start, first.end), (31_000, Some(45_000)));
    let second = &d.closed[1];
    assert_eq!((second.start, second.end), (48_000, Some(62_000)));
    // The second storm's spread over the switch is its own: it storms its ii ports too.
    assert!(second.parts(Layer::Pfc).any(|p| p.key.contains(" ii1/1/")));
}

/// Two incidents on different ports overlapping (the second starting well after the first's
/// onset, while it still storms): two episodes open at once, each its own.
#[test]
fn overlapping_incidents_on_different_ports_are_open_at_once() {
    let incidents = [
        Incident {
            port: "Ethernet1/1/2",
            from: 31,
            to: 51,
        },
        Incident {
            port: "Ethernet1/2/2",
            from: 31 + ONSET_MS / 1000 + 3,
            to: 60,
        },
    ];
    let (d, links) = run_lab(&incidents, 50);
    assert_eq!(d.open().len(), 2, "{:#?}", d.all());
    each_its_own(&d, &links, &["Ethernet1/1/2", "Ethernet1/2/2"], 50_000);
    assert!(
        d.worst_open()
            .is_some_and(|w| d.open().any(|e| e.id == w.id))
    );
    assert_eq!(d.open_at(45_000).len(), 2);
}

/// The lab's story is one episode: the culprit port drops while the switch's ii ports storm and
/// every host pauses (the culprit's nodes most), all of it told in one sentence.
#[test]
fn the_labs_storm_with_its_spread_is_one_episode() {
    let incident = Incident {
        port: "Ethernet1/1/2",
        from: 31,
        to: 46,
    };
    let (d, links) = run_lab(&[incident], 70);
    assert_eq!(d.all().len(), 1, "{:#?}", d.all());
    let ep = d.all()[0];
    assert_eq!(ep.parts(Layer::HostPause).count(), 8, "every host in it");
    assert_eq!(ep.parts(Layer::Pfc).count(), 10, "ii and edge ports in it");
    assert_eq!((ep.start, ep.end), (31_000, Some(45_000)));
    each_its_own(&d, &links, &["Ethernet1/1/2"], 70_000);
}

/// Where the pause tree crosses switches it names its root in the sentence, kept from the
/// episode's PFC peak (a weaker tree later does not replace it); with no tree, no such piece.
#[test]
fn the_sentence_names_the_pause_trees_root_from_the_pfc_peak() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let root = "PFC root leaf2 E7 -> gpu17 ens1 (incast) · spread leaf2 -> spine1 -> leaf1 · 1 node paused";
    let with_root = |t: Ts, ii: f64, tree: Option<&str>| Obs {
        pause_root: tree.map(str::to_string),
        ..obs(t, 0.156, ii, 0.0)
    };
    let mut d = Episodes::default();
    let mut plain = Episodes::default();
    let mut t = 0;
    for _ in 0..30 {
        t += 1000;
        d.update(&with_root(t, 2.0, None), &rules, &links);
        plain.update(&with_root(t, 2.0, None), &rules, &links);
    }
    for k in 0..6 {
        t += 1000;
        // The storm peaks at k = 3; later the tree names a lesser root.
        let ii = if k == 3 { 40_000.0 } else { 25_000.0 };
        let tree = if k <= 3 {
            Some(root)
        } else {
            Some("PFC root leaf9 E1 -> x (incast) · spread leaf9 -> spine1 · 1 node paused")
        };
        d.update(&with_root(t, ii, tree), &rules, &links);
        plain.update(&with_root(t, ii, None), &rules, &links);
    }
    let ep = d.worst_open().expect("open");
    assert_eq!(ep.pause_root.as_deref(), Some(root));
    assert!(text::pieces(ep, &links).iter().any(|p| p == root));
    let ep = plain.worst_open().expect("open");
    assert_eq!(ep.pause_root, None);
    assert!(
        !text::pieces(ep, &links)
            .iter()
            .any(|p| p.starts_with("PFC root"))
    );
}

/// Where the fabric has rails and every switch of the episode that is on one is on rail 2, the
/// sentence says "rail 2 only"; a switch of another rail in it, or a fabric of one rail, says
/// none.
#[test]
fn an_episode_on_one_rail_says_so() {
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let story = |rails: &[(&str, u32)], other: Option<&str>| {
        let rails: std::collections::BTreeMap<String, u32> =
            rails.iter().map(|(s, r)| (s.to_string(), *r)).collect();
        let rails = std::sync::Arc::new(rails);
        let mut d = Episodes::default();
        let mut t = 0;
        for k in 0..36 {
            t += 1000;
            let ii = if k < 30 { 2.0 } else { 30_000.0 };
            let mut o = Obs {
                rails: rails.clone(),
                ..obs(t, 0.156, ii, 0.0)
            };
            if let Some(sw) = other {
                o.pfc.push(PortPfc {
                    switch: sw.into(),
                    port: "Ethernet9".into(),
                    rx: ii,
                    tx: ii,
                });
            }
            d.update(&o, &rules, &links);
        }
        let ep = d.worst_open().expect("open").clone();
        (ep.rail, text::story(&ep, &links))
    };
    let (rail, s) = story(&[("NX_AI_Leaf1", 2), ("leafB", 1)], None);
    assert_eq!(rail, Some(2), "{s}");
    assert!(s.contains("rail 2 only"), "{s}");
    // A spine (on no rail) in it changes nothing; a leaf of rail 1 does.
    let (rail, s) = story(&[("NX_AI_Leaf1", 2), ("leafB", 1)], Some("spine1"));
    assert_eq!(rail, Some(2), "{s}");
    let (rail, s) = story(&[("NX_AI_Leaf1", 2), ("leafB", 1)], Some("leafB"));
    assert_eq!(rail, None, "{s}");
    assert!(!s.contains("only"), "{s}");
    let (rail, s) = story(&[], None);
    assert_eq!(rail, None, "{s}");
    assert!(!s.contains("rail"), "{s}");
}

/// The episode keeps the whole pause tree of its PFC peak: a later, smaller storm's tree does not
/// replace it, and its JSON carries it under `peak_tree`.
#[test]
fn the_episode_keeps_the_pause_tree_of_its_pfc_peak() {
    use crate::app::fabric::pause_tree::PauseTree;
    use std::sync::Arc;
    let cfg = Config::reference();
    let rules = Rules::of(&cfg);
    let links = Links::from_config(&cfg);
    let tree = |hosts: &[&str]| {
        Arc::new(PauseTree {
            paused_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            ..Default::default()
        })
    };
    let with_tree = |t: Ts, ii: f64, tree: Arc<PauseTree>| Obs {
        pause_tree: Some(tree),
        ..obs(t, 0.156, ii, 0.0)
    };
    let mut d = Episodes::default();
    let mut t = 0;
    for _ in 0..30 {
        t += 1000;
        d.update(&with_tree(t, 2.0, tree(&[])), &rules, &links);
    }
    let mut peak_at = 0;
    for k in 0..6 {
        t += 1000;
        // The storm peaks at k = 3 with three nodes paused; later one only.
        let (ii, hosts): (f64, &[&str]) = match k {
            3 => (40_000.0, &["a", "b", "c"]),
            _ if k < 3 => (25_000.0, &["a", "b"]),
            _ => (25_000.0, &["a"]),
        };
        if k == 3 {
            peak_at = t;
        }
        d.update(&with_tree(t, ii, tree(hosts)), &rules, &links);
    }
    let ep = d.worst_open().expect("open");
    let kept = ep.peak_tree.as_ref().expect("a tree kept");
    assert_eq!(kept.at, peak_at);
    assert_eq!(kept.tree.paused_hosts, ["a", "b", "c"]);
    let j = text::json(&[ep], &links, t);
    assert_eq!(
        j[0]["peak_tree"]["paused_hosts"].as_array().map(Vec::len),
        Some(3)
    );
    assert_eq!(j[0]["peak_tree"]["at"], peak_at);
}
