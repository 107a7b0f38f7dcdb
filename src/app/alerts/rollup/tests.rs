use super::{Alert, Alerts, Group, Severity, Shape, Subject, shape, text_of};
use crate::app::Tab;
use crate::app::pairing::Links;

fn alert(id: &str, subject: Subject, what: &str, value: f64, sev: Severity) -> Alert {
    Alert {
        id: id.into(),
        value: Some(value),
        severity: sev,
        tab: Tab::Pfc,
        subject,
        what: what.into(),
        since: 1_000,
        last_seen: 1_000,
        ended: None,
        hold: 0,
        seen_in: 0,
    }
}

fn port(sw: &str, p: &str) -> Subject {
    Subject::Port {
        switch: sw.into(),
        port: p.into(),
    }
}

fn add(al: &mut Alerts, a: Alert) {
    al.active.insert(a.id.clone(), a);
    al.touch();
}

/// A port line's text, asked again after values moved and after a member ended (the line not
/// rolled again), is the text of its members as they are now.
#[test]
fn a_line_tells_its_members_as_they_are_now() {
    let mut al = Alerts::default();
    for i in 1..=4 {
        let p = format!("Ethernet1/1/{i}");
        let a = alert(
            &format!("pfc {p}"),
            port("leaf1", &p),
            "PFC 9 frames/s",
            9.0,
            Severity::Warn,
        );
        add(&mut al, a);
    }
    let line = al.rolled(None, &Links::default()).remove(0);
    let fresh = |al: &Alerts| {
        let m: Vec<&Alert> = line.members.iter().filter_map(|id| al.get(id)).collect();
        text_of(&m)
    };
    assert_eq!(line.text(&al), fresh(&al));
    assert!(
        line.text(&al).starts_with("leaf1 Ethernet1/1/1-4 "),
        "{}",
        line.text(&al)
    );
    if let Some(a) = al.active.get_mut("pfc Ethernet1/1/2") {
        a.value = Some(70.0);
        a.what = "PFC 70 frames/s".into();
    }
    assert_eq!(line.text(&al), fresh(&al));
    al.active.remove("pfc Ethernet1/1/3");
    assert_eq!(line.text(&al), fresh(&al));
    assert!(
        line.text(&al)
            .starts_with("leaf1 Ethernet1/1/1-2,Ethernet1/1/4 "),
        "{}",
        line.text(&al)
    );
}

/// Every line's text, made on demand from its member ids, as the eager rollup made it from
/// its group: `text_of` the group's alerts as grouped. Checked on lines of every kind, then
/// after a value moves, an alert joins a group, a line is acknowledged and one muted.
#[test]
fn text_on_demand_equals_the_grouped_text() {
    let w = Severity::Warn;
    let mut al = Alerts::default();
    for (i, v) in [(1, 2000.0), (2, 25000.0), (3, 3000.0)] {
        let p = format!("Ethernet1/1/{i}");
        let what = format!("PFC {v} frames/s (> 1000)");
        add(
            &mut al,
            alert(&format!("pfc {p}"), port("leaf1", &p), &what, v, w),
        );
    }
    for (id, v) in [
        ("rdma out_of_buffer [n1, mlx5_0]", 3.0),
        ("rdma out_of_buffer [n1, mlx5_1]", 4.0),
        ("rdma rnr_nak [n1, mlx5_0]", 1.0),
    ] {
        add(
            &mut al,
            alert(id, Subject::Node("n1".into()), "errors", v, w),
        );
    }
    add(
        &mut al,
        alert(
            "drops Ethernet1/2/1",
            port("leaf2", "Ethernet1/2/1"),
            "mmu drops: 3 in 60 s",
            3.0,
            Severity::Crit,
        ),
    );
    add(
        &mut al,
        alert(
            "down s1",
            Subject::Source("s1".into()),
            "unreachable",
            0.0,
            Severity::Crit,
        ),
    );
    let peer = Subject::Peer {
        peer: "n2".into(),
        transport: "rdma".into(),
    };
    add(&mut al, alert("lat n2", peer, "RTT p99 2 ms", 0.002, w));
    let links = Links::default();
    let check = |al: &Alerts, want: &[&str]| {
        let lines = al.rolled(None, &links);
        let mut texts: Vec<String> = lines.iter().map(|l| l.text(al)).collect();
        let mut groups: std::collections::BTreeMap<Group, Vec<&Alert>> = Default::default();
        for a in al.active.values() {
            groups.entry(Group::of(a)).or_default().push(a);
        }
        let mut grouped: Vec<String> = groups.values().map(|m| text_of(m)).collect();
        texts.sort();
        grouped.sort();
        assert_eq!(texts, grouped);
        let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(texts, want);
    };
    check(
        &al,
        &[
            "leaf1 Ethernet1/1/1-3  PFC 25000 frames/s (> 1000) · 3 ports, total 30.0k",
            "leaf2 Ethernet1/2/1  mmu drops: 3 in 60 s",
            "n1  RDMA errors in 60 s: out_of_buffer +7, rnr_nak +1 (3 device counters)",
            "n2 (rdma)  RTT p99 2 ms",
            "s1  unreachable",
        ],
    );
    // A value moves, a port joins, a line is acknowledged and another muted.
    add(
        &mut al,
        alert(
            "pfc Ethernet1/1/1",
            port("leaf1", "Ethernet1/1/1"),
            "PFC 90000 frames/s (> 1000)",
            90000.0,
            w,
        ),
    );
    add(
        &mut al,
        alert(
            "pfc Ethernet1/1/4",
            port("leaf1", "Ethernet1/1/4"),
            "PFC 1000 frames/s (> 1000)",
            1000.0,
            w,
        ),
    );
    let lines = al.rolled(None, &links);
    let acked = lines
        .iter()
        .find(|l| l.key == "rdma n1")
        .expect("rdma line")
        .clone();
    al.toggle_ack(&acked);
    let muted = lines
        .iter()
        .find(|l| l.key == "lat n2")
        .expect("peer line")
        .clone();
    al.toggle_mute(&muted);
    check(
        &al,
        &[
            "leaf1 Ethernet1/1/1-4  PFC 90000 frames/s (> 1000) · 4 ports, total 119k",
            "leaf2 Ethernet1/2/1  mmu drops: 3 in 60 s",
            "n1  RDMA errors in 60 s: out_of_buffer +7, rnr_nak +1 (3 device counters)",
            "n2 (rdma)  RTT p99 2 ms",
            "s1  unreachable",
        ],
    );
    let lines = al.rolled(None, &links);
    assert!(lines.iter().any(|l| l.key == "rdma n1" && l.acked));
    assert!(lines.iter().any(|l| l.key == "lat n2" && l.muted));
}

/// Conditions group by their shape: equal exactly when the shaped texts are, and the key
/// mute refers to is the shaped text.
#[test]
fn shapes_compare_as_their_text() {
    let cases = [
        (
            "PFC 25000 frames/s (> 1000)",
            "PFC 3 frames/s (> 1000)",
            true,
        ),
        (
            "PFC 25000 frames/s (> 1000)",
            "PFC 3 frames/s (> 10.5)",
            true,
        ),
        ("drops 1.5 /s", "drops 2 /s", true),
        ("drops 2 /s", "drops 2 /min", false),
        ("pause 40 %", "pause 40%", false),
        ("a1b", "a22b", true),
        ("a1.b", "a2b", true),
        ("a.1", "a1", false),
        ("", "0", false),
        ("RTT 1.2 µs · 3", "RTT 40 µs · 3.5", true),
        ("RTT 1.2 µs · 3", "RTT 1.2 ms · 3", false),
        // A literal '#' is a number's mark; a '.' ends a number only after it.
        ("a#b", "a9.5b", true),
        ("1.", "2", true),
        (".1", "1", false),
        ("1 .", "1.", false),
        ("x1", "x", false),
    ];
    for (a, b, same) in cases {
        let by_text = shape(a).cmp(&shape(b));
        assert_eq!(Shape(a).cmp(&Shape(b)), by_text, "{a:?} vs {b:?}");
        assert_eq!(by_text.is_eq(), same, "{a:?} vs {b:?}");
    }
    let g = Group::Port {
        switch: "leaf1",
        severity: Severity::Warn,
        what: Shape("PFC 25000 frames/s (> 1000)"),
    };
    assert_eq!(g.key(), "port leaf1 Warn PFC # frames/s (> #)");
    // The key as it was `format!`ed, for either severity.
    for severity in [Severity::Warn, Severity::Crit] {
        let what = "drops 2.5 /s";
        let g = Group::Port {
            switch: "leaf1",
            severity,
            what: Shape(what),
        };
        assert_eq!(g.key(), format!("port leaf1 {severity:?} {}", shape(what)));
    }
    assert_eq!(Group::Rdma("gpu1").key(), "rdma gpu1");
    assert_eq!(Group::Alone("lat gpu1").key(), "lat gpu1");
}
