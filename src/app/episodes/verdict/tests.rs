//! The culprit: the port that stands out by its drops, else by the pauses it sends, else where
//! the host paused most is cabled; the congestion said spread where none stands out.

use super::super::tests::lossless_obs;
use super::*;

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
