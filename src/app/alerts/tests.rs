use super::*;
use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};

fn cfg() -> Config {
    Config::reference()
}

fn links() -> Links {
    Links::from_config(&cfg())
}

/// A poll of the leaf's ingress MMU drop counter on Ethernet1/1/2 at `v`.
fn leaf_drops(v: u64) -> Parsed {
    poll(vec![Sample::counter(
        SW_INGRESS_DROPPED,
        &[
            ("switch", "NX_AI_Leaf1"),
            ("port", "Ethernet1/1/2"),
            ("reason", "mmu"),
        ],
        v,
    )])
}

fn poll(samples: Vec<Sample>) -> Parsed {
    Parsed::from(samples)
}

#[test]
fn first_drop_is_critical_and_keeps_its_start_time() {
    let mut st = Store::new(600_000, 1000);
    let src = st.add_source("NX_AI_Leaf1", 1000);
    let d = leaf_drops;
    let mut al = Alerts::default();
    st.ingest(src, 0, &d(5));
    st.ingest(src, 1000, &d(5));
    assert!(
        !al.evaluate(&st, &cfg(), &links(), 1000),
        "no growth, no alert"
    );
    st.ingest(src, 2000, &d(6));
    assert!(al.evaluate(&st, &cfg(), &links(), 2000));
    let act = al.active();
    assert_eq!(act.len(), 1);
    assert_eq!(act[0].severity, Severity::Crit);
    assert_eq!(act[0].since, 2000);
    assert_eq!(act[0].tab, Tab::Queues);
    assert!(
        act[0].what.contains("ingress mmu drops: 1"),
        "{}",
        act[0].what
    );
    let port = Subject::Port {
        switch: "NX_AI_Leaf1".into(),
        port: "Ethernet1/1/2".into(),
    };
    assert_eq!(al.worst_for(&port), Some(Severity::Crit));
    st.ingest(src, 3000, &d(9));
    al.evaluate(&st, &cfg(), &links(), 3000);
    assert_eq!(al.active()[0].since, 2000, "still the same alert");
    // A minute of quiet, then the hold: it ends and goes to history.
    for t in 4..75 {
        st.ingest(src, t * 1000, &d(9));
        al.evaluate(&st, &cfg(), &links(), t * 1000);
    }
    assert!(al.active().is_empty());
    assert_eq!(al.history.len(), 1);
}

#[test]
fn flowcontrol_on_an_edge_port_disagrees_with_config_and_a_change_is_held() {
    let mut st = Store::new(600_000, 1000);
    let src = st.add_source("NX_AI_Leaf1", 1000);
    let fc = |v| {
        poll(vec![Sample::gauge(
            SW_FLOWCONTROL_ENABLED,
            &[
                ("switch", "NX_AI_Leaf1"),
                ("port", "Ethernet1/1/1"),
                ("direction", "rx"),
            ],
            v,
        )])
    };
    let mut al = Alerts::default();
    st.ingest(src, 0, &fc(0.0));
    al.evaluate(&st, &cfg(), &links(), 0);
    assert!(al.active().is_empty());
    st.ingest(src, 1000, &fc(1.0));
    al.evaluate(&st, &cfg(), &links(), 1000);
    let whats: Vec<&str> = al.active().iter().map(|a| a.what.as_str()).collect();
    assert!(
        whats.iter().any(|w| w.contains("went off -> on")),
        "{whats:?}"
    );
    assert!(
        whats.iter().any(|w| w.contains("config expects off")),
        "{whats:?}"
    );
    st.ingest(src, 2000, &fc(0.0));
    al.evaluate(&st, &cfg(), &links(), 2000);
    assert_eq!(
        al.active().len(),
        2,
        "the on->off change, and the off->on one still held"
    );
}

/// A GPU's XID is said when it changes to a code (or is one when first read), critical where the
/// GPU is out of service, and held a minute; the same code read again raises nothing new.
#[test]
fn a_new_xid_is_named_and_held() {
    let mut st = Store::new(600_000, 1000);
    let src = st.add_source("prometheus", 1000);
    let xid = |gpu: &str, v: f64| Sample::gauge(GPU_LAST_XID, &[("gpu", gpu), ("node", "gpu3")], v);
    let mut al = Alerts::default();
    let at = |al: &mut Alerts, st: &mut Store, t: Ts, g0: f64, g2: f64| {
        st.ingest(src, t, &poll(vec![xid("0", g0), xid("2", g2)]));
        al.evaluate(st, &cfg(), &links(), t);
        let mut v: Vec<(Severity, String)> = (al.active().iter())
            .filter(|a| a.id.starts_with("xid"))
            .map(|a| (a.severity, format!("{}: {}", a.subject.describe(), a.what)))
            .collect();
        v.sort();
        v
    };
    assert_eq!(at(&mut al, &mut st, 0, 0.0, 0.0), vec![], "no XID");
    assert_eq!(
        at(&mut al, &mut st, 1000, 0.0, 79.0),
        vec![(
            Severity::Crit,
            "gpu3: XID 79 on GPU 2: fallen off the bus".into()
        )]
    );
    // Read again: the same alert, held; then a lesser one on another GPU, a warning.
    let both = at(&mut al, &mut st, 2000, 13.0, 79.0);
    assert_eq!(
        both,
        vec![
            (
                Severity::Warn,
                "gpu3: XID 13 on GPU 0: graphics engine exception".into()
            ),
            (
                Severity::Crit,
                "gpu3: XID 79 on GPU 2: fallen off the bus".into()
            ),
        ]
    );
    let mut t = 2000;
    while t < 70_000 {
        t += 1000;
        at(&mut al, &mut st, t, 13.0, 79.0);
    }
    assert!(
        at(&mut al, &mut st, t + 1000, 13.0, 79.0).is_empty(),
        "a minute on, the same XIDs are old news"
    );
}

#[test]
fn pause_time_pfc_rate_rdma_errors_rtt_and_sources() {
    let mut st = Store::new(600_000, 1000);
    let n = st.add_source("ubunturdma6", 1000);
    let sw = st.add_source("NX_AI_Leaf1", 1000);
    let p = st.add_source("ping", 1000);
    let dead = st.add_source("ubunturdma2", 1000);
    let node = |us, oos| {
        poll(vec![
            Sample::counter_micros(
                NIC_PFC_RX_PAUSE_DURATION,
                &[
                    ("node", "ubunturdma6"),
                    ("netdev", "ens192"),
                    ("priority", "3"),
                ],
                us,
            ),
            Sample::counter(
                rdma_counter("out_of_sequence"),
                &[
                    ("node", "ubunturdma6"),
                    ("device", "rocep11s0"),
                    ("rdma_port", "1"),
                ],
                oos,
            ),
        ])
    };
    let pfc = |v| {
        poll(vec![Sample::counter(
            SW_PFC_RX,
            &[
                ("switch", "NX_AI_Leaf1"),
                ("port", "ii1/1/1"),
                ("priority", "all"),
            ],
            v,
        )])
    };
    let ping = |p50: f64, p99: f64| {
        poll(vec![
            Sample::gauge(
                PING_RTT_SECONDS,
                &[
                    ("peer", "ubunturdma2"),
                    ("transport", "tcp"),
                    ("quantile", "0.5"),
                ],
                p50,
            ),
            Sample::gauge(
                PING_RTT_SECONDS,
                &[
                    ("peer", "ubunturdma2"),
                    ("transport", "tcp"),
                    ("quantile", "0.99"),
                ],
                p99,
            ),
        ])
    };
    st.ingest(n, 0, &node(0, 7));
    st.ingest(sw, 0, &pfc(0));
    st.ingest(p, 0, &ping(50e-6, 80e-6));
    st.ingest(dead, 0, &poll(vec![]));
    let mut al = Alerts::default();
    al.evaluate(&st, &cfg(), &links(), 0);
    assert!(al.active().is_empty());
    st.ingest(n, 1000, &node(200_000, 9));
    st.ingest(sw, 1000, &pfc(5000));
    st.ingest(p, 1000, &ping(50e-6, 400e-6));
    st.fail(dead, 1000, "connection refused");
    al.evaluate(&st, &cfg(), &links(), 1000);
    let got: Vec<String> = al
        .active()
        .iter()
        .map(|a| format!("{} {}", a.severity.label(), a.what))
        .collect();
    let has = |s: &str| got.iter().any(|g| g.contains(s));
    assert!(has("CRIT source down: connection refused"), "{got:?}");
    assert!(has("rx paused 20.0% of the interval"), "{got:?}");
    assert!(has("PFC/s 5.0k (> 1.0k)"), "{got:?}");
    assert!(has("out_of_sequence +2 in 60 s on rocep11s0"), "{got:?}");
    assert!(has("RTT p99 400 µs > 3x recent p50 50.0 µs"), "{got:?}");
    assert_eq!(al.active()[0].severity, Severity::Crit, "worst first");
    assert_eq!(al.worst_in(Tab::Pfc), Some(Severity::Warn));
    // Stale: the node stops answering.
    al.evaluate(&st, &cfg(), &links(), 10_000);
    assert!(
        al.active()
            .iter()
            .any(|a| a.what.starts_with("stale")
                && a.subject == Subject::Source("ubunturdma6".into()))
    );
}

#[test]
fn a_nan_loss_and_nccl_on_sockets_are_critical() {
    let mut st = Store::new(600_000, 1000);
    let src = st.add_source("ubunturdma1", 1000);
    let text = "Iteration 7 | Loss: 2.5 | Total: 100ms\n\
                n1:1:1 [0] NCCL INFO NET/IB : Using [0]rocep19s0:1/RoCE\n";
    let parsed = crate::parse::training::parse_text(text, "ubunturdma1", "t.log");
    st.ingest(src, 1_000, &parsed);
    let mut a = Alerts::default();
    a.evaluate(&st, &cfg(), &links(), 1_000);
    assert!(a.active().is_empty(), "{:?}", a.active());
    let text = "Iteration 8 | Loss: nan | Total: 100ms\n\
                n2:2:2 [0] NCCL INFO NET/Socket : Using [0]ens224:10.0.0.2<0>\n";
    let parsed = crate::parse::training::parse_text(text, "ubunturdma1", "t.log");
    st.ingest(src, 2_000, &parsed);
    a.evaluate(&st, &cfg(), &links(), 2_000);
    let what: Vec<_> = a
        .active()
        .iter()
        .map(|x| (x.severity, x.what.clone()))
        .collect();
    assert!(
        what.contains(&(Severity::Crit, "training loss is NaN (t.log)".to_string())),
        "{what:?}"
    );
    assert!(
        what.iter().any(|(s, w)| *s == Severity::Crit
            && w.starts_with("NCCL uses sockets, not RDMA (rank n2:2, ens224")),
        "{what:?}"
    );
}

#[test]
fn an_evaluation_that_changes_nothing_keeps_the_generation() {
    let mut st = Store::new(600_000, 1000);
    let src = st.add_source("NX_AI_Leaf1", 1000);
    let d = leaf_drops;
    let mut al = Alerts::default();
    st.ingest(src, 0, &d(5));
    st.ingest(src, 1000, &d(6));
    al.evaluate(&st, &cfg(), &links(), 1000);
    // The id is the one acks and mutes were keyed by before the keys were borrowed.
    assert_eq!(
        al.active()[0].id,
        r#"idrop ["NX_AI_Leaf1", "Ethernet1/1/2", "mmu"]"#
    );
    let g = al.generation();
    st.ingest(src, 2000, &d(6));
    al.evaluate(&st, &cfg(), &links(), 2000);
    assert_eq!(al.generation(), g, "the same alert, the same value");
    st.ingest(src, 3000, &d(8));
    al.evaluate(&st, &cfg(), &links(), 3000);
    assert_ne!(al.generation(), g, "its value moved (1 -> 3 in 60 s)");
    let g = al.generation();
    al.touch();
    assert_ne!(al.generation(), g);
}

/// The subject hash (`FxHasher`) tells apart what rows look up: 512 node names, the same as sources, ports of
/// names 8 bytes long and longer (a tail shorter than a word, and none), so `worst_for` stays
/// one probe a row.
#[test]
fn the_subject_hash_tells_apart_the_names_rows_look_up() {
    use std::hash::{BuildHasher, BuildHasherDefault};
    let h = BuildHasherDefault::<rustc_hash::FxHasher>::default();
    let mut subjects: Vec<Subject> = (1..=512)
        .flat_map(|i| {
            let n = format!("gpu{i}");
            [Subject::Node(n.clone()), Subject::Source(n)]
        })
        .collect();
    for p in [
        "Ethernet",
        "Ethernet1/1/1",
        "Ethernet1/1/10",
        "ii1/1/1",
        "ii1/1/1 ",
    ] {
        subjects.push(Subject::Port {
            switch: "leaf1".into(),
            port: p.into(),
        });
    }
    let mut hashes: Vec<u64> = subjects.iter().map(|s| h.hash_one(s)).collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), subjects.len());
}

/// A row's worst alert through an alert raised, held while its value moves, and ended.
#[test]
fn worst_for_follows_the_alert() {
    let mut st = Store::new(600_000, 1000);
    let src = st.add_source("NX_AI_Leaf1", 1000);
    let mut al = Alerts::default();
    let port = Subject::Port {
        switch: "NX_AI_Leaf1".into(),
        port: "Ethernet1/1/2".into(),
    };
    let mut seen = Vec::new();
    for k in 0..100i64 {
        // Drops grow for a few seconds, then stop: the alert is raised, moves, and ends.
        let v = k.min(6) as u64;
        st.ingest(src, k * 1000, &leaf_drops(v));
        al.evaluate(&st, &cfg(), &links(), k * 1000);
        seen.push(al.worst_for(&port));
    }
    assert!(seen.contains(&Some(Severity::Crit)), "{seen:?}");
    assert_eq!(seen.last(), Some(&None), "the alert ended: {seen:?}");
}

/// An evaluation reading its counters' windows from intervals kept between seconds finds what
/// one from the store finds, every second: through growth, a minute of quiet (the window
/// empties), a reset, a second series appearing and a gap in the polls. A kept window that went
/// stale (missed new points, or old ones leaving it) would show as another count in a text.
#[test]
fn kept_windows_evaluate_as_the_store() {
    // As the App keeps them (a late poll reads older runs), and as long as the views do.
    for (keep, w) in [
        ("the App's", WindowsCache::keeping(KEPT_MS)),
        ("the views'", WindowsCache::default()),
    ] {
        kept_windows_evaluate_as_the_store_in(keep, w);
    }
}

fn kept_windows_evaluate_as_the_store_in(keep: &str, mut w: WindowsCache) {
    let mut st = Store::new(600_000, 1000);
    let src = st.add_source("NX_AI_Leaf1", 1000);
    let (cfg, links) = (cfg(), links());
    let (mut kept, mut fresh) = (Alerts::default(), Alerts::default());
    let mut ids = EvalIdsCache::default();
    let queue = |v: u64| {
        poll(vec![Sample::counter(
            SW_QUEUE_DROPPED,
            &[
                ("switch", "NX_AI_Leaf1"),
                ("port", "Ethernet1/1/3"),
                ("qos_group", "3"),
                ("reason", "wred"),
            ],
            v,
        )])
    };
    let (mut v, mut q) = (100u64, 0u64);
    for t in 0..200i64 {
        v = match t {
            0..=29 => v + (t as u64 % 3),
            30..=99 => v,
            100 => 4,
            _ => v + 1,
        };
        // Seconds 150-159 are not polled (a gap the window spans).
        if !(150..160).contains(&t) {
            st.ingest(src, t * 1000, &leaf_drops(v));
            if t >= 120 {
                q += 7;
                st.ingest(src, t * 1000 + 10, &queue(q));
            }
        }
        let now = t * 1000 + 500;
        ids.resolve(&st);
        let pfc = crate::app::episodes::port_pfc_in(&st, &ids);
        let a = kept.evaluate_with(&st, &cfg, &links, now, &pfc, &ids, Some(&mut w), None);
        let b = fresh.evaluate(&st, &cfg, &links, now);
        assert_eq!(a, b, "second {t}, keeping {keep}");
        assert_eq!(kept.active(), fresh.active(), "second {t}, keeping {keep}");
        assert_eq!(kept.history, fresh.history, "second {t}, keeping {keep}");
    }
    assert_eq!(kept.active().len(), 2, "both drop alerts at the end");
    let ended: Vec<&str> = kept.history.iter().map(|a| a.id.as_str()).collect();
    let first = r#"idrop ["NX_AI_Leaf1", "Ethernet1/1/2", "mmu"]"#;
    // The quiet minute ended the first; the gap made the switch stale for a while.
    assert_eq!(ended, [first, "stale NX_AI_Leaf1"]);
}

/// `device = "all"`: each rail's p99 is held against its own recent p50, so a rail that is slow
/// all along is no alert, and a spike on one rail is an alert named by its device.
#[test]
fn each_rail_is_held_against_its_own_p50() {
    let mut st = Store::new(600_000, 100);
    let p = st.add_source("ping ubunturdma2", 1000);
    let rail = |dev: &'static str, q: &'static str, v: f64| {
        Sample::gauge(
            PING_RTT_SECONDS,
            &[
                ("peer", "ubunturdma2"),
                ("transport", "rdma"),
                ("device", dev),
                ("quantile", q),
            ],
            v,
        )
    };
    // mlx5_0 answers in 10 µs; mlx5_1 always in 100 µs (a longer path, not a spike).
    let at = |fast_p99: f64| {
        Parsed::from(vec![
            rail("mlx5_0", "0.5", 10e-6),
            rail("mlx5_0", "0.99", fast_p99),
            rail("mlx5_1", "0.5", 100e-6),
            rail("mlx5_1", "0.99", 120e-6),
        ])
    };
    let mut al = Alerts::default();
    st.ingest(p, 0, &at(12e-6));
    al.evaluate(&st, &cfg(), &links(), 0);
    st.ingest(p, 1000, &at(12e-6));
    al.evaluate(&st, &cfg(), &links(), 1000);
    let rtt = |al: &Alerts| -> Vec<(String, String)> {
        al.active()
            .iter()
            .filter(|a| a.id.starts_with("rtt"))
            .map(|a| (a.id.to_string(), a.what.to_string()))
            .collect()
    };
    assert_eq!(
        rtt(&al),
        vec![],
        "a slow rail is not held against a fast one"
    );
    st.ingest(p, 2000, &at(90e-6));
    al.evaluate(&st, &cfg(), &links(), 2000);
    assert_eq!(
        rtt(&al),
        vec![(
            "rtt ubunturdma2 rdma mlx5_0".to_string(),
            "RTT p99 over mlx5_0 90.0 µs > 3x recent p50 10.0 µs".to_string()
        )]
    );
}
