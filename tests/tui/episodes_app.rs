//! Alerts and episodes through `App::update`: alerts rolled up (ports into ranges, a node's
//! counters into one line, the episode's under it), acknowledged and muted; Enter on an alert lands
//! on its row; live time travel with `[` `]` `{` `}` and back to live; the Overview's alert area
//! after two minutes.

use crate::feed;

use crossterm::event::KeyCode;
use feed::Lab;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rocetop::app::Tab;
use rocetop::app::alerts::Rolled;
use rocetop::app::travel::Overlay;
use rocetop::metrics::names::SW_PFC_RX;
use rocetop::ui;

fn screen(lab: &Lab, w: u16, h: u16) -> Vec<String> {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| ui::draw(f, &lab.app)).expect("draw");
    let b = t.backend().buffer().clone();
    (0..h)
        .map(|y| {
            (0..w)
                .map(|x| b[(x, y)].symbol().to_string())
                .collect::<String>()
        })
        .collect()
}

/// The alerts rolled up from nothing (no kept lines), as the kept ones must equal.
fn rolled_afresh(lab: &Lab) -> Vec<Rolled> {
    lab.app
        .alerts()
        .rolled(lab.app.episodes().worst_open(), lab.app.links())
}

/// Run until an episode is open and its storm has built up (drops on Ethernet1/1/2 alerting).
fn into_an_episode(lab: &mut Lab) {
    for _ in 0..120 {
        lab.run(1);
        let drops = lab
            .app
            .alerts()
            .active()
            .iter()
            .any(|a| a.what.contains("mmu drops"));
        if lab.app.episodes().worst_open().is_some() && drops {
            return;
        }
    }
    panic!("no episode within two minutes");
}

#[test]
fn ports_roll_up_into_a_range_and_nothing_is_lost() {
    let mut lab = Lab::new();
    into_an_episode(&mut lab);
    lab.run(3);
    let raw = lab.app.alerts().active().len();
    let lines = rolled_afresh(&lab);
    let members: usize = lines.iter().map(|l| l.members.len()).sum();
    assert_eq!(members, raw, "every active alert is in exactly one line");
    assert!(lines.len() < raw, "{} lines for {raw} alerts", lines.len());
    let ii = lines
        .iter()
        .find(|l| l.text(lab.app.alerts()).contains("ii1/1/1-6"))
        .unwrap_or_else(|| panic!("no ii range line: {lines:#?}"));
    assert!(ii.members.len() >= 6, "{ii:?}");
    let text = ii.text(lab.app.alerts());
    assert!(text.contains(" ports, total"), "{text}");
    assert!(ii.episode, "the storm's line belongs to the open episode");
    // The episode's lines come first, then by severity.
    let first_other = lines.iter().position(|l| !l.episode).unwrap_or(lines.len());
    assert!(lines[..first_other].iter().all(|l| l.episode));
    assert!(lines[first_other..].iter().all(|l| !l.episode));
    // Per-device RDMA counters: at most one line per node.
    let mut rdma_nodes: Vec<&str> = lines
        .iter()
        .filter(|l| l.key.starts_with("rdma "))
        .map(|l| l.key.as_str())
        .collect();
    let n = rdma_nodes.len();
    rdma_nodes.dedup();
    assert_eq!(rdma_nodes.len(), n);
}

#[test]
fn after_two_minutes_the_overview_alert_area_has_at_most_8_lines() {
    let mut lab = Lab::new();
    lab.run(120);
    let rows = screen(&lab, 120, 40);
    let start = rows
        .iter()
        .position(|r| r.starts_with("Alerts"))
        .unwrap_or_else(|| panic!("no alert area:\n{}", rows.join("\n")));
    // The area runs to the status bar (the last row).
    let area = &rows[start..rows.len() - 1];
    assert!(
        area.len() <= 8,
        "{} lines:\n{}",
        area.len(),
        area.join("\n")
    );
    let raw = lab.app.alerts().active().len();
    let shown = area.len() - 1;
    let more: usize = area
        .iter()
        .find_map(|r| r.trim().strip_prefix('+')?.split(' ').next()?.parse().ok())
        .unwrap_or(0);
    let lines = rolled_afresh(&lab);
    assert_eq!(
        shown - usize::from(more > 0) + more,
        lines.len(),
        "lines shown + `+N more` account for every line"
    );
    println!(
        "after 120 s: {raw} alerts in {} lines, {} on screen",
        lines.len(),
        area.len()
    );
    println!("{}", area.join("\n"));
}

#[test]
fn ack_dims_mute_hides_and_enter_jumps_to_the_row() {
    let mut lab = Lab::new();
    into_an_episode(&mut lab);
    // Put the Queues selection on a row of another port, so the jump has to move it.
    lab.chars("2");
    screen(&lab, 160, 40);
    let other = lab
        .app
        .shown(Tab::Queues)
        .rows
        .iter()
        .position(|r| !r.name.contains("Ethernet1/1/2"))
        .expect("a row of another port");
    for _ in 0..other {
        lab.chars("j");
    }
    assert!(
        lab.app
            .selected_row()
            .is_some_and(|r| !r.name.contains("Ethernet1/1/2")),
        "the selection starts on another port"
    );
    lab.chars("1");
    lab.chars("A");
    assert_eq!(lab.app.overlay(), Some(&Overlay::Alerts));
    let lines = rolled_afresh(&lab);
    let before = lab.app.alerts().active().len();
    lab.chars("a");
    let after = rolled_afresh(&lab);
    let same = after
        .iter()
        .find(|l| l.key == lines[0].key)
        .expect("still there");
    assert!(same.acked, "acknowledged");
    assert_eq!(lab.app.alerts().active().len(), before, "still counted");
    lab.chars("a");
    let again = rolled_afresh(&lab);
    assert!(
        !again.iter().any(|l| l.key == lines[0].key && l.acked),
        "a again: unacknowledged"
    );
    // Mute the second line: it sinks to the end, marked.
    lab.chars("jx");
    let muted = rolled_afresh(&lab);
    let m = muted
        .iter()
        .position(|l| l.key == lines[1].key)
        .expect("listed");
    assert!(muted[m].muted);
    assert!(muted[m..].iter().all(|l| l.muted), "muted lines last");
    // Enter on the MMU drop line jumps to Queues with Ethernet1/1/2's row selected.
    lab.key(KeyCode::Home);
    let i = muted
        .iter()
        .position(|l| l.text(lab.app.alerts()).contains("mmu drops") && !l.muted)
        .expect("drop line");
    for _ in 0..i {
        lab.chars("j");
    }
    lab.key(KeyCode::Enter);
    assert_eq!(lab.app.tab(), Tab::Queues);
    assert_eq!(lab.app.overlay(), None);
    screen(&lab, 160, 40); // the draw reports the rows
    lab.run(1);
    let sel = lab.app.selected_row().expect("a selected row");
    assert!(
        sel.name.contains("Ethernet1/1/2"),
        "selected {:?}",
        sel.name
    );
}

#[test]
fn brackets_travel_back_every_tab_reads_the_past_and_end_returns_live() {
    let mut lab = Lab::new();
    lab.run(120);
    let now = lab.now();
    lab.chars("[");
    let t = lab.app.travel().as_ref().map(|t| t.at);
    assert_eq!(t, Some(now - 10_000));
    assert_eq!(lab.app.view_now(), now - 10_000);
    lab.chars("{");
    assert_eq!(lab.app.view_now(), now - 70_000);
    // Collection goes on into the live store; the screen's store stays at the cursor.
    lab.run(5);
    let newest = |st: &rocetop::metrics::Store| {
        st.select(SW_PFC_RX, &[])
            .filter_map(|(_, s)| s.last_seen(st))
            .max()
    };
    assert_eq!(newest(&lab.app.store), Some(now - 70_000));
    assert_eq!(newest(lab.app.live()), Some(now + 5_000));
    let rows = screen(&lab, 120, 40);
    let banner = format!("at {} (−1m15s)", clock(now - 70_000));
    assert!(rows[0].contains(&banner), "{banner:?} not in {:?}", rows[0]);
    assert!(
        rows.iter().any(|r| r.contains("▼ cursor")),
        "timeline marks the cursor"
    );
    lab.chars("]");
    assert_eq!(lab.app.view_now(), now - 60_000);
    // Back past the start of history is clamped to it.
    for _ in 0..5 {
        lab.chars("{");
    }
    assert_eq!(lab.app.view_now(), lab.app.history_start());
    lab.key(KeyCode::End);
    assert!(lab.app.travel().is_none(), "End: live again");
    assert_eq!(newest(&lab.app.store), Some(lab.now()));
    lab.chars("[");
    lab.key(KeyCode::Esc);
    assert!(lab.app.travel().is_none(), "Esc: live again");
    lab.chars("[]");
    assert!(lab.app.travel().is_none(), "forward to now is live");
}

/// Time travel shows the state at T, not an approximation: every table tab's rows with the cursor
/// 60 s back equal the rows a second run of the same demo showed live at that moment (the demo is
/// seeded, so both runs see the same polls), and so do the alerts.
#[test]
fn the_past_at_the_cursor_equals_what_was_live_then() {
    let mut then = Lab::new();
    then.run(28);
    let mut later = Lab::new();
    later.run(88);
    later.chars("{");
    assert_eq!(later.app.view_now(), then.now());
    for tab in [Tab::Queues, Tab::Pfc, Tab::Congestion, Tab::Latency] {
        let live = then.app.table(tab);
        let past = later.app.table(tab);
        let rows =
            |v: &rocetop::app::table::TabView| -> Vec<(String, Vec<rocetop::app::table::Val>)> {
                let mut r: Vec<_> = v
                    .rows
                    .iter()
                    .map(|r| {
                        (
                            r.name.clone(),
                            r.cells.iter().map(|c| c.val.clone()).collect(),
                        )
                    })
                    .collect();
                r.sort_by(|a, b| a.0.cmp(&b.0));
                r
            };
        let (a, b) = (rows(&live), rows(&past));
        assert!(!a.is_empty(), "{tab:?}: no rows live");
        assert_eq!(a.len(), b.len(), "{tab:?}: row count");
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x, y, "{tab:?}: the past differs from what was live");
        }
    }
    let ids = |app: &rocetop::app::App| -> Vec<String> {
        let mut v: Vec<String> = app.alerts().active().iter().map(|a| a.id.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(
        ids(&later.app),
        ids(&then.app),
        "the alerts at the cursor are those that were live then"
    );
}

fn clock(t: i64) -> String {
    let s = t.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// Not a check: what one `[` costs with a full 15-minute history (the store copied as of the
/// cursor). Run with `--ignored --nocapture`; the figure is in the README's Time travel section.
#[test]
#[ignore]
fn cost_of_a_seek_with_full_history() {
    let mut lab = Lab::new();
    lab.run(15 * 60);
    let t = std::time::Instant::now();
    lab.chars("{");
    let seek = t.elapsed();
    let st = lab.app.live().stats();
    println!(
        "seek over {} series / {} points: {:.1} ms",
        st.series,
        st.points,
        seek.as_secs_f64() * 1e3
    );
}

/// The App keeps the series its evaluation reads resolved between polls (`alerts::EvalIdsCache`); a
/// shadow judged every second from nothing (`Alerts::evaluate`, `episodes::observe`) over the
/// same store gives the same alerts and episodes, through an episode, a new switch port's series
/// storming, a reset of it and a new source.
#[test]
fn kept_series_evaluate_as_from_nothing() {
    use rocetop::app::{alerts::Alerts, episodes};
    use rocetop::metrics::{Parsed, Sample};
    let mut lab = Lab::new();
    let mut al = Alerts::default();
    let mut eps = episodes::Episodes::default();
    let rules = episodes::Rules::of(lab.app.cfg());
    let leaf = lab.id("NX_AI_Leaf1");
    let pfc = |v: u64| Parsed {
        samples: vec![Sample::counter(
            SW_PFC_RX,
            &[
                ("switch", "NX_AI_Leaf1"),
                ("port", "Ethernet1/9/9"),
                ("priority", "3"),
            ],
            v,
        )],
        ..Default::default()
    };
    for s in 0..100 {
        // The App judged at the end of this second (its tick); the shadow judges the same store.
        // A node down from second 70 stays down (one coming back is judged at once, mid-second).
        lab.run_except(1, if s > 70 { &["ubunturdma3"] } else { &[] });
        let now = lab.now();
        al.evaluate(&lab.app.store, lab.app.cfg(), lab.app.links(), now);
        let mut obs = episodes::observe(&lab.app.store, now);
        // The tree is the App's own evaluation (the fabric graph is the App's); the episodes
        // keep it at their PFC peak.
        obs.pause_tree = Some(std::sync::Arc::new(lab.app.pause_tree().clone()));
        eps.update(&obs, &rules, lab.app.links());
        assert_eq!(al.active(), lab.app.alerts().active(), "second {s}");
        assert!(
            eps.open().eq(lab.app.episodes().open()),
            "second {s}: the open episodes differ"
        );
        assert_eq!(eps.closed, lab.app.episodes().closed, "second {s}");
        worst_as_from_nothing(lab.app.alerts(), s);
        match s {
            // A new series, then a storm on it (an alert), then a reset.
            40 => lab.collected(leaf, now + 100, pfc(5), None),
            41..=49 => lab.collected(leaf, now + 100, pfc(5 + 90_000 * (s - 40) as u64), None),
            50 => lab.collected(leaf, now + 100, pfc(7), None),
            // A new source with a queue drop series of its own.
            60 => {
                let extra = lab.app.store.add_source("extra", 1000);
                let drops = |v: u64| Parsed {
                    samples: vec![Sample::counter(
                        rocetop::metrics::names::SW_QUEUE_DROPPED,
                        &[
                            ("switch", "extra"),
                            ("port", "Ethernet1/1"),
                            ("qos_group", "3"),
                            ("reason", "mmu"),
                        ],
                        v,
                    )],
                    ..Default::default()
                };
                lab.collected(extra, now + 100, drops(1), None);
                lab.collected(extra, now + 600, drops(9), None);
            }
            // A node going down: the App judges at once, so does the shadow.
            70 => {
                lab.fail("ubunturdma3", "connection refused");
                al.evaluate(&lab.app.store, lab.app.cfg(), lab.app.links(), now);
                let obs = episodes::observe(&lab.app.store, now);
                eps.update(&obs, &rules, lab.app.links());
            }
            // A new node whose NIC is paused (a new pause signal and an alert on a new subject).
            80 => {
                let node = lab.app.store.add_source("extra-node", 1000);
                let paused = |us: u64| Parsed {
                    samples: vec![Sample::counter_micros(
                        rocetop::metrics::names::NIC_PFC_RX_PAUSE_DURATION,
                        &[("node", "extra-node"), ("netdev", "ens1")],
                        us,
                    )],
                    ..Default::default()
                };
                lab.collected(node, now + 100, paused(0), None);
                lab.collected(node, now + 600, paused(400_000), None);
            }
            _ => {}
        }
    }
    assert!(
        lab.app
            .alerts()
            .active()
            .iter()
            .any(|a| a.id.contains("extra")),
        "the new source's drops alert"
    );
    assert!(!lab.app.episodes().closed.is_empty() || lab.app.episodes().worst_open().is_some());
    let ever = |id: &str| {
        let al = lab.app.alerts();
        al.active()
            .into_iter()
            .chain(&al.history)
            .any(|a| a.id == id)
    };
    assert!(ever("down ubunturdma3"), "the node down");
    assert!(ever("pause rx [\"extra-node\"]"), "the new node paused");
}

/// The worst severity the rows are marked with, per subject (kept between evaluations), against
/// the one made from the active alerts.
fn worst_as_from_nothing(alerts: &rocetop::app::alerts::Alerts, s: i64) {
    use std::collections::BTreeMap;
    let mut worst = BTreeMap::new();
    for a in alerts.active() {
        let w = worst.entry(&a.subject).or_insert(a.severity);
        *w = (*w).max(a.severity);
    }
    for a in alerts.active().into_iter().chain(&alerts.history) {
        assert_eq!(
            alerts.worst_for(&a.subject),
            worst.get(&a.subject).copied(),
            "second {s}: {:?}",
            a.subject
        );
    }
}

/// The rolled-up lines the Overview draws equal lines rolled afresh, every second from before
/// the episode through its growth and past its end.
#[test]
fn drawn_lines_with_an_episode_roll_up_as_afresh() {
    let mut lab = Lab::new();
    let (mut marked, mut seconds_open) = (0, 0);
    for s in 0..200 {
        lab.run(1);
        let kept = lab.app.rolled();
        let fresh = rolled_afresh(&lab);
        assert_eq!(*kept, fresh, "second {s}");
        marked += fresh.iter().filter(|l| l.episode).count();
        seconds_open += usize::from(
            lab.app
                .episodes()
                .worst_open()
                .is_some_and(|e| e.end.is_none()),
        );
    }
    assert!(
        seconds_open > 10 && marked > 10,
        "{seconds_open} s open, {marked} lines marked"
    );
}

/// The rolled-up lines the Overview draws equal lines rolled afresh, every second through an
/// episode, a node going quiet and back, lines acknowledged and muted and taken back.
#[test]
fn drawn_lines_through_acks_and_mutes_equal_lines_rolled_afresh() {
    let mut lab = Lab::new();
    let mut port_lines = 0;
    for s in 0..180 {
        match s {
            50..=69 => lab.run_except(1, &["ubunturdma3"]),
            _ => lab.run(1),
        }
        // The alerts list: a line acknowledged, another muted, both taken back later.
        const ACK: &[KeyCode] = &[KeyCode::Char('A'), KeyCode::Char('a'), KeyCode::Esc];
        const MUTE: &[KeyCode] = &[
            KeyCode::Char('A'),
            KeyCode::Down,
            KeyCode::Char('x'),
            KeyCode::Esc,
        ];
        let keys: &[KeyCode] = match s {
            40 | 100 => ACK,
            45 | 110 => MUTE,
            _ => &[],
        };
        for k in keys {
            lab.key(*k);
        }
        let kept = lab.app.rolled();
        let fresh = rolled_afresh(&lab);
        assert_eq!(*kept, fresh, "second {s}");
        port_lines += fresh
            .iter()
            .filter(|l| l.members.len() > 1 && l.tab == Tab::Pfc)
            .count();
    }
    assert!(port_lines > 10, "{port_lines} port lines of several ports");
}

/// With no switch data (its counters never answer, or no switch configured) an episode's
/// sentence never tells the switch layer as calm ("DCQCN absorbing", "PFC did not storm"): it
/// says "switch not read", and the hosts' own evidence names the node paused most (with the
/// port the map puts it on, where the config names the switch).
#[test]
fn without_switch_data_the_sentence_says_unseen_never_calm() {
    use rocetop::app::episodes::text;
    let mut none = rocetop::config::Config::reference();
    none.switches.clear();
    for (case, cfg, silent) in [
        (
            "never answers",
            rocetop::config::Config::reference(),
            &["NX_AI_Leaf1"][..],
        ),
        ("none configured", none, &[][..]),
    ] {
        let mut lab = Lab::with(cfg);
        lab.run_except(120, silent);
        let eps = lab.app.episodes().all();
        assert!(!eps.is_empty(), "{case}: the hosts alone open episodes");
        for ep in eps {
            let line = text::line(ep, lab.app.links(), lab.now());
            for calm in ["DCQCN absorbing", "did not storm", "DCQCN not absorbing"] {
                assert!(!line.contains(calm), "{case}: {calm:?} in {line}");
            }
            assert!(line.contains("switch not read"), "{case}: {line}");
            assert!(!ep.switch_read, "{case}");
            assert!(
                ep.culprit_nodes.iter().any(|n| line.contains(n.as_str())),
                "{case}: the place ({:?}) in {line}",
                ep.culprit_nodes
            );
        }
        if case == "never answers" {
            let ep = lab.app.episodes().current().expect("an episode");
            let line = text::line(ep, lab.app.links(), lab.now());
            assert!(
                line.contains("ubunturdma6 on Ethernet1/1/2"),
                "the node paused most and its port: {line}"
            );
        }
    }
}

/// The Overview's sentence during an episode, at 80x24 and 120x40: in at most three lines,
/// every word shown a whole word of the sentence (never cut inside one), the dropping port and
/// its node always there; at 120x40 (room enough) all of it.
#[test]
fn the_overview_sentence_gets_its_lines_and_never_cuts_a_word() {
    use rocetop::app::episodes::text;
    let mut lab = Lab::new();
    into_an_episode(&mut lab);
    lab.run(6);
    for (w, h) in [(80u16, 24u16), (120, 40)] {
        let rows = screen(&lab, w, h);
        let ep = lab.app.episode_in_view().expect("an episode");
        let full = text::line(ep, lab.app.links(), lab.app.view_now());
        let words: std::collections::HashSet<&str> = full.split_whitespace().collect();
        let at = rows
            .iter()
            .position(|r| r.contains(" Episode: "))
            .unwrap_or_else(|| panic!("{w}x{h}: no sentence in {rows:#?}"));
        let mut shown = vec![rows[at].clone()];
        shown.extend(
            rows[at + 1..]
                .iter()
                .take_while(|r| r.starts_with(text::INDENT) && !r.trim().is_empty())
                .cloned(),
        );
        assert!(shown.len() <= 3, "{w}x{h}: {shown:#?}");
        let said: Vec<&str> = shown
            .iter()
            .flat_map(|r| r.split_whitespace())
            .filter(|w| !["·", "…", "(e:", "episodes)"].contains(w))
            .collect();
        for word in &said {
            assert!(
                words.contains(word),
                "{w}x{h}: {word:?} cut? {shown:#?}\n{full}"
            );
        }
        let said = said.join(" ");
        assert!(
            said.contains("MMU drops Ethernet1/1/2 → ubunturdma6"),
            "{w}x{h}: {said}"
        );
        if w == 120 {
            let all: Vec<&str> = full.split_whitespace().filter(|w| *w != "·").collect();
            assert_eq!(said, all.join(" "), "{w}x{h}: all of it in three lines");
        }
    }
}

/// While time travelling, the Overview's alerts are those active at the cursor, timed from it: an
/// alert raised after the cursor is not shown (nor counted in the status bar), and one already
/// active shows its live start with "(N ago)" counted back from the cursor, not from now.
#[test]
fn time_travel_shows_the_alerts_at_the_cursor_timed_from_it() {
    use rocetop::ui::fmt;
    let mut lab = Lab::new();
    into_an_episode(&mut lab);
    let drops = |app: &rocetop::app::App| {
        app.alerts()
            .active()
            .iter()
            .find(|a| a.what.contains("mmu drops"))
            .map(|a| (a.id.clone(), a.since))
    };
    let (id, since) = drops(&lab.app).expect("a drop alert live");
    lab.run(15);
    assert!(drops(&lab.app).is_some(), "the drop alert lasts 15 s");

    // 10 s back: the alert was already active; its line is timed from the cursor.
    lab.chars("[");
    let at = lab.app.view_now();
    assert!(since < at, "the alert started before the cursor");
    let shown = drops(&lab.app).expect("active at the cursor");
    assert_eq!(shown, (id.clone(), since), "its live start");
    let rows = screen(&lab, 120, 40).join("\n");
    let line = rows
        .lines()
        .find(|r| r.contains("mmu drops"))
        .unwrap_or_else(|| panic!("no drop alert line at the cursor:\n{rows}"));
    let rolled = lab
        .app
        .rolled()
        .iter()
        .find(|l| l.members.contains(&id))
        .map(|l| l.since)
        .expect("its rolled line");
    let ago = format!("({} ago)", fmt::age(at - rolled));
    assert!(
        line.contains(&ago),
        "{ago:?} (from the cursor) not in {line:?}"
    );

    // Back to before the alert started: it is not shown, and the status bar does not count it.
    while lab.app.view_now() >= since && lab.app.view_now() > lab.app.history_start() {
        lab.chars("[");
    }
    assert!(
        lab.app.view_now() < since,
        "the cursor went back past the alert's start"
    );
    assert!(
        lab.app.alerts().active().iter().all(|a| a.id != id),
        "an alert raised after the cursor is not among the alerts at it"
    );
    let rows = screen(&lab, 120, 40);
    assert!(
        !rows.iter().any(|r| r.contains("mmu drops")),
        "no drop alert before the drops began:\n{}",
        rows.join("\n")
    );
    let live = lab.app.live_alerts().active().len();
    let past = lab.app.alerts().active().len();
    assert!(
        past < live,
        "fewer alerts at the cursor ({past}) than now ({live})"
    );

    // Live again: the alerts of now.
    lab.key(KeyCode::End);
    assert_eq!(drops(&lab.app).map(|d| d.0), Some(id));
}

/// While time travelling, the alert lines put first as the episode's are those of the episode
/// open at the cursor: inside it they are marked, before it began none is (they were marked
/// from the live open episode).
#[test]
fn time_travel_marks_the_lines_of_the_episode_open_at_the_cursor() {
    let mut lab = Lab::new();
    into_an_episode(&mut lab);
    lab.run(15);
    let start = lab.app.episodes().worst_open().expect("open").start;
    assert!(
        lab.app.rolled().iter().any(|l| l.episode),
        "live: the open episode's lines"
    );
    lab.chars("[");
    assert!(
        lab.app.view_now() > start,
        "the cursor is inside the episode"
    );
    assert!(
        lab.app.rolled().iter().any(|l| l.episode),
        "inside the episode its lines are marked"
    );
    while lab.app.view_now() >= start && lab.app.view_now() > lab.app.history_start() {
        lab.chars("[");
    }
    assert!(
        lab.app.view_now() < start,
        "the cursor is before the episode"
    );
    assert!(
        lab.app.rolled().iter().all(|l| !l.episode),
        "before the episode began no line is its"
    );
    let rows = screen(&lab, 120, 40).join("\n");
    assert!(!rows.contains("part of the episode above"), "{rows}");
    lab.key(KeyCode::End);
    assert!(lab.app.rolled().iter().any(|l| l.episode), "live again");
}

/// With the demo's GPUs answering, the Overview's episode line links the GPUs idling to the step
/// (a wide screen has room for the least piece).
#[test]
fn the_overview_episode_line_says_the_gpus_idled() {
    let mut lab = Lab::new();
    lab.gpus = true;
    into_an_episode(&mut lab);
    lab.run(6);
    let s = screen(&lab, 240, 50).join("\n");
    let line = (s.lines())
        .find(|l| l.contains("Episode:"))
        .unwrap_or_else(|| panic!("an episode line:\n{s}"));
    assert!(line.contains(" · GPU util 9"), "{line}");
    assert!(line.contains(" % on 8 nodes"), "{line}");
}
