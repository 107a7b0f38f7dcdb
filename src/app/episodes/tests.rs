use super::*;

pub(super) fn obs(at: Ts, step: f64, ii_rx: f64, drops: f64) -> Obs<'static> {
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
pub(super) fn lossless_obs(at: Ts, step: f64, ii_rx: f64, edge_tx: &[(&str, f64)]) -> Obs<'static> {
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
