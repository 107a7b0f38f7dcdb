//! `App::update` fed with events (keys, polls, ticks, log lines): no terminal involved.

use crate::feed;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use feed::{Lab, T0};
use rocetop::app::alerts::{Severity, Subject};
use rocetop::app::{Event, Tab};
use rocetop::metrics::names::*;
use rocetop::metrics::query;

#[test]
fn number_keys_tab_and_backtab_switch_tabs() {
    let mut lab = Lab::new();
    assert_eq!(lab.app.tab(), Tab::Overview);
    for (k, t) in [
        ('2', Tab::Queues),
        ('3', Tab::Pfc),
        ('4', Tab::Congestion),
        ('5', Tab::Latency),
        ('6', Tab::Log),
        ('1', Tab::Overview),
    ] {
        lab.key(KeyCode::Char(k));
        assert_eq!(lab.app.tab(), t);
    }
    lab.key(KeyCode::BackTab);
    assert_eq!(lab.app.tab(), Tab::Log, "Shift-Tab wraps backwards");
    lab.key(KeyCode::Tab);
    assert_eq!(lab.app.tab(), Tab::Overview);
    lab.key(KeyCode::Char('7'));
    assert_eq!(lab.app.tab(), Tab::Overview, "no seventh tab");
}

#[test]
fn q_and_ctrl_c_quit_and_help_closes_on_any_key() {
    let mut lab = Lab::new();
    lab.key(KeyCode::Char('?'));
    assert!(lab.app.help());
    lab.key(KeyCode::Char('2'));
    assert!(!lab.app.help(), "any key closes help");
    assert_eq!(
        lab.app.tab(),
        Tab::Overview,
        "the closing key does nothing else"
    );
    // The key that closes an overlay does nothing else: `?` then `q` does not quit...
    lab.key(KeyCode::Char('?'));
    lab.key(KeyCode::Char('q'));
    assert!(!lab.app.help() && !lab.app.quit(), "q closed help and quit");
    // ...nor does `q` closing the detail charts.
    lab.key(KeyCode::Enter);
    assert!(lab.app.detail());
    lab.key(KeyCode::Char('q'));
    assert!(
        !lab.app.detail() && !lab.app.quit(),
        "q closed the charts and quit"
    );
    lab.key(KeyCode::Char('q'));
    assert!(lab.app.quit());
    let mut lab = Lab::new();
    let k = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    lab.app.update(Event::Key(k), T0);
    assert!(lab.app.quit());
    let mut lab = Lab::new();
    lab.app.update(Event::Shutdown, T0);
    assert!(lab.app.quit(), "SIGTERM/SIGHUP arrive as Shutdown");
}

#[test]
fn filter_sort_theme_and_selection_keys() {
    let mut lab = Lab::new();
    lab.key(KeyCode::Char('/'));
    lab.chars("rdma5q");
    assert!(lab.app.filter_editing());
    assert!(!lab.app.quit(), "q while typing a filter is a letter");
    lab.key(KeyCode::Backspace);
    lab.key(KeyCode::Enter);
    assert_eq!(lab.app.filter(), "rdma5");
    assert!(!lab.app.filter_editing());
    assert!(lab.app.matches("ubunturdma5") && !lab.app.matches("ubunturdma6"));
    lab.key(KeyCode::Esc);
    assert!(lab.app.filter().is_empty(), "Esc clears the filter");
    assert_eq!(lab.app.sorts()[0].col, None, "worst first");
    lab.key(KeyCode::Char('>'));
    assert_eq!(lab.app.sorts()[0].col, Some(0), "by node name");
    lab.key(KeyCode::Char('s'));
    assert!(lab.app.sorts()[0].flipped);
    lab.key(KeyCode::Char('<'));
    assert_eq!(lab.app.sorts()[0].col, None);
    let before = lab.app.theme.name;
    lab.key(KeyCode::Char('t'));
    assert_ne!(lab.app.theme.name, before);
    lab.key(KeyCode::Char('j'));
    lab.key(KeyCode::Down);
    assert_eq!(lab.app.selected()[0].index, 2);
    lab.key(KeyCode::Char('k'));
    lab.key(KeyCode::Up);
    lab.key(KeyCode::Up);
    assert_eq!(lab.app.selected()[0].index, 0, "never above the first row");
    lab.key(KeyCode::Enter);
    assert!(lab.app.detail());
    lab.key(KeyCode::Esc);
    assert!(!lab.app.detail());
}

#[test]
fn polls_fill_the_store_and_redraw_but_idle_ticks_do_not() {
    let mut lab = Lab::new();
    lab.run(3);
    let ecn = rdma_counter("np_ecn_marked_roce_packets");
    assert!(query::rate_sum(&lab.app.store, &ecn, &[("node", "ubunturdma6")]).is_some());
    let now = lab.now();
    // Alerts were evaluated on the last tick at this time; nothing stale, nothing new.
    assert!(
        !lab.app.update(Event::Tick, now),
        "no redraw for an idle tick"
    );
    let id = lab.id("ubunturdma1");
    lab.collected(id, now + 500, Default::default(), None);
    assert!(
        lab.app.update(Event::Resize(80, 24), now),
        "a resize redraws"
    );
    assert_eq!(lab.app.size, (80, 24));
}

#[test]
fn freeze_holds_polls_back_and_catches_up() {
    let mut lab = Lab::new();
    lab.run(3);
    let key = |lab: &Lab| {
        query::latest(&lab.app.store, SW_PFC_RX, &[("port", "ii1/1/1")]).map(|(t, _)| t)
    };
    let t_before = key(&lab);
    lab.key(KeyCode::Char('f'));
    let frozen_at = lab.app.frozen().expect("frozen");
    lab.run(2);
    assert_eq!(key(&lab), t_before, "the view does not move while frozen");
    assert_eq!(lab.app.view_now(), frozen_at);
    assert!(lab.app.held_count() > 0, "collection goes on");
    lab.key(KeyCode::Char('f'));
    assert_eq!(lab.app.frozen(), None);
    assert_eq!(lab.app.held_count(), 0);
    assert_eq!(key(&lab), Some(lab.now()), "caught up with everything held");
}

#[test]
fn mark_makes_totals_count_from_now() {
    let mut lab = Lab::new();
    lab.run(5);
    let cnp = rdma_counter("np_cnp_sent");
    let start = lab.app.baseline();
    let total_from_start = query::increase_sum(&lab.app.store, &cnp, &[], start).expect("cnp");
    assert!(total_from_start > 0);
    lab.key(KeyCode::Char('m'));
    assert_eq!(lab.app.mark(), Some(lab.now()));
    assert_eq!(
        query::increase_sum(&lab.app.store, &cnp, &[], lab.app.baseline()),
        Some(0),
        "nothing since the mark"
    );
    lab.run(2);
    let since_mark =
        query::increase_sum(&lab.app.store, &cnp, &[], lab.app.baseline()).expect("cnp");
    // What the mark hides is exactly what came before it.
    let total_now = query::increase_sum(&lab.app.store, &cnp, &[], start).expect("cnp");
    assert!(since_mark > 0, "CNPs keep coming after the mark");
    assert_eq!(since_mark, total_now - total_from_start);
    lab.key(KeyCode::Char('M'));
    assert_eq!(lab.app.mark(), None);
}

#[test]
fn a_congestion_episode_raises_drop_and_pause_alerts_where_the_data_is() {
    let mut lab = Lab::new();
    lab.run(14);
    assert!(
        lab.app
            .alerts()
            .active()
            .iter()
            .all(|a| a.severity != Severity::Crit),
        "calm before the first episode: {:?}",
        lab.app.alerts().active()
    );
    lab.run(26);
    let port = Subject::Port {
        switch: "NX_AI_Leaf1".into(),
        port: "Ethernet1/1/2".into(),
    };
    assert_eq!(
        lab.app.alerts().worst_for(&port),
        Some(Severity::Crit),
        "MMU drops on Ethernet1/1/2: {:?}",
        lab.app.alerts().active()
    );
    let drop = lab
        .app
        .alerts()
        .active()
        .into_iter()
        .find(|a| a.subject == port && a.what.contains("mmu"))
        .expect("mmu alert");
    assert_eq!(drop.tab, Tab::Queues);
    assert!(
        drop.since > T0 + 15_000 && drop.since <= lab.now(),
        "started during the episode"
    );
    assert_eq!(
        lab.app.alerts().worst_in(Tab::Pfc),
        Some(Severity::Warn),
        "ii ports storm with PFC"
    );
}

/// Every condition is evaluated at most once a second: before the frame that shows new polls,
/// or on the tick when no frame did. It used to evaluate on every tick as well as on the first
/// poll of each second: twice the cost, and a frame whose rows were newer than its alerts.
#[test]
fn alerts_are_evaluated_before_a_frame_at_most_once_a_second() {
    let mut lab = Lab::new();
    lab.run(3);
    let now = lab.now();
    let n = lab.app.alerts().evaluations();
    let id = lab.id("ubunturdma1");
    lab.collected(id, now + 1000, Default::default(), None);
    assert_eq!(
        lab.app.alerts().evaluations(),
        n,
        "a poll alone waits for the frame"
    );
    lab.app.update(Event::Frame, now + 1000);
    assert_eq!(
        lab.app.alerts().evaluations(),
        n + 1,
        "the frame that shows it"
    );
    lab.collected(id, now + 1500, Default::default(), None);
    lab.app.update(Event::Frame, now + 1500);
    lab.app.update(Event::Tick, now + 1900);
    assert_eq!(lab.app.alerts().evaluations(), n + 1, "within that second");
    lab.app.update(Event::Tick, now + 2000);
    assert_eq!(lab.app.alerts().evaluations(), n + 2, "a tick a second on");
    lab.app.update(Event::Frame, now + 2000);
    assert_eq!(lab.app.alerts().evaluations(), n + 2, "nothing new since");
    // With no poll at all (every source silent), the tick still moves the windows on.
    lab.app.update(Event::Tick, now + 3000);
    assert_eq!(lab.app.alerts().evaluations(), n + 3);
    // A source that goes down is alerted at once, within the second: its row says "down" in the
    // very next frame.
    lab.collected(
        id,
        now + 3200,
        Default::default(),
        Some("connection refused"),
    );
    assert_eq!(lab.app.alerts().evaluations(), n + 4);
    assert!(
        lab.app
            .alerts()
            .active()
            .iter()
            .any(|a| a.subject == Subject::Source("ubunturdma1".into())),
        "source down alert"
    );
}

#[test]
fn a_failing_source_alerts_and_a_silent_one_goes_stale() {
    let mut lab = Lab::new();
    lab.run(3);
    lab.fail("NX_AI_Leaf1", "connection refused");
    lab.app.update(Event::Tick, lab.now() + 1000);
    let a = lab.app.alerts().active();
    let down = a
        .iter()
        .find(|a| a.subject == Subject::Source("NX_AI_Leaf1".into()))
        .expect("down alert");
    assert_eq!(down.severity, Severity::Crit);
    assert!(down.what.contains("connection refused"));
    let mut lab = Lab::new();
    lab.run(3);
    lab.run_except(6, &["ubunturdma3"]);
    let stale = lab
        .app
        .alerts()
        .active()
        .into_iter()
        .find(|a| a.subject == Subject::Source("ubunturdma3".into()))
        .expect("stale alert");
    assert!(stale.what.starts_with("stale"), "{}", stale.what);
    assert!(
        lab.app.update(Event::Tick, lab.now() + 1000),
        "ages of a stale source move: redraw"
    );
}

#[test]
fn log_lines_follow_scroll_and_stay_bounded() {
    let mut lab = Lab::new();
    lab.run(8);
    let n = lab.app.log().lines.len();
    assert!(
        n > 0
            && lab
                .app
                .log()
                .lines
                .iter()
                .any(|l| l.starts_with("Iteration"))
    );
    lab.key(KeyCode::Char('6'));
    lab.key(KeyCode::Up);
    lab.key(KeyCode::Char('k'));
    assert_eq!(lab.app.log().scroll, 2);
    lab.run(3);
    assert!(
        lab.app.log().scroll > 2,
        "scrolled back: the same lines stay in view as new ones arrive"
    );
    lab.key(KeyCode::End);
    assert_eq!(lab.app.log().scroll, 0, "End follows again");
    let src = lab.id("log ubunturdma1:~/training.log");
    let many: Vec<String> = (0..rocetop::app::LOG_KEEP + 10)
        .map(|i| format!("line {i}"))
        .collect();
    lab.app.update(
        Event::LogLines {
            source: src,
            lines: many,
        },
        lab.now(),
    );
    assert_eq!(lab.app.log().lines.len(), rocetop::app::LOG_KEEP);
    assert_eq!(
        lab.app.log().lines.back().map(String::as_str),
        Some(format!("line {}", rocetop::app::LOG_KEEP + 9).as_str())
    );
}

#[test]
fn a_counter_reset_gives_no_rate_and_a_mark() {
    let mut lab = Lab::new();
    lab.run(3);
    let id = lab.id("ubunturdma4");
    let at = lab.now() + 1000;
    let reset = rocetop::metrics::Parsed {
        samples: vec![rocetop::metrics::Sample::counter(
            rdma_counter("np_cnp_sent"),
            &[
                ("node", "ubunturdma4"),
                ("device", "rocep11s0"),
                ("rdma_port", "1"),
            ],
            3,
        )],
        ..Default::default()
    };
    lab.collected(id, at, reset, None);
    let by = query::rate_by(
        &lab.app.store,
        &rdma_counter("np_cnp_sent"),
        &[("node", "ubunturdma4")],
        &["node"],
    );
    let agg = by.values().next().expect("row");
    assert_eq!(agg.rate, None, "no rate across a reset, never negative");
    assert!(agg.reset);
}

#[test]
fn record_bundle_and_replay_keys_ask_the_event_loop() {
    use rocetop::app::{Action, ReplayAction, ReplayView};
    let mut lab = Lab::new();
    lab.run(2);
    lab.chars("rS");
    assert_eq!(lab.app.actions, vec![Action::ToggleRecord, Action::Bundle]);
    lab.app.actions.clear();
    // Replay keys mean nothing live...
    lab.chars(" .[]");
    assert!(lab.app.actions.is_empty(), "{:?}", lab.app.actions);
    // ...and steer a replay, where `r` (record) does nothing.
    lab.app.replay = Some(ReplayView {
        at: T0,
        start: T0,
        end: T0 + 60_000,
        paused: false,
        speed: 1.0,
        ended: false,
    });
    lab.chars(" .[}-r");
    assert_eq!(
        lab.app.actions,
        vec![
            Action::Replay(ReplayAction::TogglePause),
            Action::Replay(ReplayAction::Step),
            Action::Replay(ReplayAction::SeekBy(-10_000)),
            Action::Replay(ReplayAction::SeekBy(60_000)),
            Action::Replay(ReplayAction::Speed(0.5)),
        ]
    );
}

#[test]
fn a_log_followers_poll_brings_its_lines_even_while_frozen() {
    use rocetop::collect::Collected;
    use rocetop::metrics::Parsed;
    use rocetop::parse::ParseKind;
    let mut lab = Lab::new();
    let source = lab.id("log ubunturdma1:~/training.log");
    let before = lab.app.log().received;
    let poll = |text: &str| Collected {
        source,
        at: T0,
        parsed: Parsed::default(),
        // A text segment and an empty one (a parser flush, not a line).
        raw: Some(vec![
            (ParseKind::TrainingLog, text.to_string()),
            (ParseKind::TrainingLog, String::new()),
        ]),
        error: None,
        history: Default::default(),
    };
    lab.app.update(Event::Collected(poll("a\nb\n")), T0);
    assert_eq!(lab.app.log().received - before, 2);
    assert_eq!(lab.app.log().lines.back().map(String::as_str), Some("b"));
    lab.key(KeyCode::Char('f'));
    lab.app.update(Event::Collected(poll("c\n")), T0 + 1);
    assert_eq!(
        lab.app.log().lines.back().map(String::as_str),
        Some("b"),
        "frozen"
    );
    lab.key(KeyCode::Char('f'));
    assert_eq!(
        lab.app.log().lines.back().map(String::as_str),
        Some("c"),
        "not lost while frozen"
    );
}

/// Every line of the incident bundle's alerts.txt names where: a switch and port, or a node
/// (with the device where the condition is per device), or a source or peer of the config.
#[test]
fn bundle_alert_lines_name_their_switch_port_or_node_device() {
    let mut lab = Lab::new();
    lab.run(45);
    let active = lab.app.alerts().active();
    assert!(active.len() > 3, "{active:?}");
    let lines = rocetop::bundle::alert_lines(&active);
    let dir = tempfile::tempdir().expect("tempdir");
    let p = rocetop::bundle::write_bundle_at(
        dir.path(),
        lab.app.cfg(),
        &lab.app.store,
        &[],
        &lines,
        &rocetop::bundle::Found {
            episodes: &serde_json::Value::Array(vec![]),
            fabric: &rocetop::app::fabric::json_with_tree(lab.app.fabric(), lab.app.pause_tree()),
            trees: "",
        },
        lab.now(),
    )
    .expect("bundle");
    let text = std::fs::read_to_string(p.join("alerts.txt")).expect("alerts.txt");
    let cfg = lab.app.cfg();
    let mut places: Vec<String> = cfg.nodes.iter().map(|n| n.name.clone()).collect();
    for sw in &cfg.switches {
        places.push(sw.name.clone());
    }
    for line in text.lines() {
        let (_, rest) = line
            .split_once("] ")
            .unwrap_or_else(|| panic!("no tab: {line}"));
        let (at, what) = rest
            .split_once(": ")
            .unwrap_or_else(|| panic!("no where: {line}"));
        let mut words = at.split(' ');
        let first = words.next().unwrap_or("");
        assert!(places.iter().any(|p| p == first), "no place in {line:?}");
        if cfg.switches.iter().any(|s| s.name == first) {
            let port = words.next().unwrap_or("");
            assert!(
                port.starts_with("Ethernet") || port.starts_with("ii"),
                "a switch alert without its port: {line:?}"
            );
        }
        if what.contains(" in 60 s on ") || what.starts_with("out_of_sequence") {
            assert!(
                what.contains("rocep"),
                "a device counter without its device: {line:?}"
            );
        }
    }
}

/// The Overview's switch line, whose drop windows are read from the evaluation's kept intervals
/// and whose PFC rates are summed from the evaluation's per-port rates while the live store is
/// shown, says what the store says second after second: through the demo's drop episode and a
/// mark that moves the baseline. The PFC sums are added in another order: equal within 1e-9.
#[test]
fn switch_lines_from_the_evaluations_windows_equal_the_stores() {
    use rocetop::app::vm::summary;
    use rocetop::metrics::store::WindowsCache;
    let mut lab = Lab::new();
    let names: Vec<String> = lab
        .app
        .cfg()
        .switches
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert!(!names.is_empty());
    let (mut drops_seen, mut pfc_seen) = (0, [0, 0]);
    let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0),
        (a, b) => a == b,
    };
    for k in 0..45 {
        lab.run(1);
        if k == 30 {
            lab.key(KeyCode::Char('m'));
        }
        let (now, base) = (lab.app.view_now(), lab.app.baseline());
        for name in &names {
            let got = lab.app.switch_summary(name);
            let want = summary::switch(
                &lab.app.store,
                &mut WindowsCache::default(),
                name,
                now - 60_000,
                base,
            );
            let pfc = |s: &summary::Switch| [s.pfc_edge, s.pfc_ii];
            for (i, (g, w)) in pfc(&got).into_iter().zip(pfc(&want)).enumerate() {
                assert!(close(g, w), "{name} at second {k}: PFC {i} {g:?} {w:?}");
                pfc_seen[i] += usize::from(g.is_some_and(|v| v > 0.0));
            }
            let drops = |s: &summary::Switch| (s.drops, s.drops_window, s.drops_since_baseline);
            assert_eq!(drops(&got), drops(&want), "{name} at second {k}");
            assert_eq!(got.flowcontrol, want.flowcontrol, "{name} at second {k}");
            drops_seen += usize::from(got.drops_window.is_some_and(|n| n > 0));
        }
    }
    assert!(drops_seen > 5, "the comparison saw drops: {drops_seen}");
    assert!(
        pfc_seen.iter().all(|&n| n > 5),
        "it saw edge and ii PFC: {pfc_seen:?}"
    );
}
