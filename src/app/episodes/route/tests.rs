//! Episodes by place: incidents at different ports are different episodes, each with its own
//! culprit, nodes and paused host, whether one follows the other or they overlap; one storm with
//! its spread is one.

use super::super::tests::obs;
use super::*;

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
