//! The screen drawn on a TestBackend: insta snapshots (text only) of every tab in its normal,
//! waiting, failing, stale and counter-reset states; colours checked through the buffer; every
//! size down to 1x1 drawn without a panic. (Render time is a benchmark: examples/render_time.rs.)

use crate::feed;

use crossterm::event::KeyCode;
use feed::Lab;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Color;
use rocetop::app::{App, Event, Tab};
use rocetop::metrics::names::rdma_counter;
use rocetop::metrics::{Parsed, Sample};
use rocetop::ui;

fn render(app: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).expect("terminal");
    t.draw(|f| ui::draw(f, app)).expect("draw");
    t.backend().buffer().clone()
}

fn text(b: &Buffer) -> String {
    let a = b.area;
    let mut out = String::new();
    for y in 0..a.height {
        let mut line = String::new();
        for x in 0..a.width {
            line.push_str(b[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn screen(app: &App) -> String {
    text(&render(app, 120, 40))
}

fn on_tab(lab: &mut Lab, tab: Tab) {
    lab.key(KeyCode::Char(char::from(b'1' + tab.index() as u8)));
}

/// 28 s into the demo: the first congestion episode is under way.
fn busy() -> Lab {
    let mut lab = Lab::new();
    lab.run(28);
    lab
}

fn failing() -> Lab {
    let mut lab = Lab::new();
    lab.run(5);
    lab.fail(
        "NX_AI_Leaf1",
        "ssh: connect to 192.168.50.229:22: connection refused",
    );
    lab.fail("ubunturdma3", "command timed out after 5 s");
    lab.app.update(Event::Tick, lab.now());
    lab
}

fn stale() -> Lab {
    let mut lab = Lab::new();
    lab.run(5);
    lab.run_except(8, &["ubunturdma3", "NX_AI_Leaf1"]);
    lab
}

fn reset() -> Lab {
    let mut lab = Lab::new();
    lab.run(5);
    let id = lab.id("ubunturdma4");
    let at = lab.now() + 1000;
    let l = [
        ("node", "ubunturdma4"),
        ("device", "rocep11s0"),
        ("rdma_port", "1"),
    ];
    let samples: Vec<Sample> = [
        "np_ecn_marked_roce_packets",
        "np_cnp_sent",
        "rp_cnp_handled",
    ]
    .iter()
    .map(|c| Sample::counter(rdma_counter(c), &l, 7))
    .collect();
    lab.collected(id, at, Parsed::from(samples), None);
    lab
}

macro_rules! snap {
    ($name:ident, $lab:expr, $tab:expr) => {
        #[test]
        fn $name() {
            let mut lab = $lab;
            on_tab(&mut lab, $tab);
            insta::assert_snapshot!(stringify!($name), screen(&lab.app));
        }
    };
}

/// 88 s into the demo with the cursor 60 s back (`{`): the first episode as each tab showed it,
/// under the time-travel banner.
fn past() -> Lab {
    let mut lab = Lab::new();
    lab.run(88);
    lab.chars("{");
    lab
}

snap!(overview_normal, busy(), Tab::Overview);
snap!(overview_waiting, Lab::new(), Tab::Overview);
snap!(overview_failing, failing(), Tab::Overview);
snap!(overview_stale, stale(), Tab::Overview);
snap!(overview_reset, reset(), Tab::Overview);
snap!(queues_normal, busy(), Tab::Queues);
snap!(queues_waiting, Lab::new(), Tab::Queues);
snap!(queues_failing, failing(), Tab::Queues);
snap!(pfc_normal, busy(), Tab::Pfc);
snap!(pfc_stale, stale(), Tab::Pfc);
snap!(congestion_normal, busy(), Tab::Congestion);
snap!(congestion_failing, failing(), Tab::Congestion);
snap!(congestion_reset, reset(), Tab::Congestion);
snap!(latency_normal, busy(), Tab::Latency);
snap!(latency_waiting, Lab::new(), Tab::Latency);
snap!(log_normal, busy(), Tab::Log);
snap!(log_waiting, Lab::new(), Tab::Log);
snap!(overview_past, past(), Tab::Overview);
snap!(queues_past, past(), Tab::Queues);
snap!(pfc_past, past(), Tab::Pfc);
snap!(congestion_past, past(), Tab::Congestion);
snap!(latency_past, past(), Tab::Latency);
snap!(log_past, past(), Tab::Log);

#[test]
fn overview_small_terminals() {
    let lab = busy();
    insta::assert_snapshot!("overview_80x24", text(&render(&lab.app, 80, 24)));
    insta::assert_snapshot!("overview_40x12", text(&render(&lab.app, 40, 12)));
}

#[test]
fn help_and_detail_overlays() {
    let mut lab = busy();
    lab.key(KeyCode::Char('?'));
    insta::assert_snapshot!("help", screen(&lab.app));
    lab.key(KeyCode::Esc);
    lab.key(KeyCode::Enter);
    insta::assert_snapshot!("overview_detail", screen(&lab.app));
}

/// At 80x24 the help shows every key's line whole: no cut text, the legend not pushed off.
#[test]
fn help_fits_80x24() {
    let mut lab = busy();
    lab.key(KeyCode::Char('?'));
    let shown = text(&render(&lab.app, 80, 24));
    for want in [
        "mark a baseline: totals count from now / clear it",
        "alerts list: a ack, x mute, Enter jumps to the row",
        "back/forward 10 s / 60 s in history (live too)",
        "q, Ctrl-C",
        "episodes (Enter travels, p tree) / PFC: pause tree",
        "counter reset in that interval",
        "stale source (age shown)",
    ] {
        assert!(
            shown.contains(want),
            "{want:?} not whole at 80x24:\n{shown}"
        );
    }
}

/// The PFC tab's pause tree (`p`) at 80x24, in the demo lab's first episode: the root at an
/// edge port of the one leaf, the pausing it sends through the internal `ii` ports (no LLDP names
/// what is beyond them: said as unknown), the paused nodes; `p` again shows the tables.
#[test]
fn pause_tree_80x24() {
    let mut lab = busy();
    on_tab(&mut lab, Tab::Pfc);
    lab.key(KeyCode::Char('p'));
    let shown = text(&render(&lab.app, 80, 24));
    assert!(shown.contains("PFC pause tree ("), "{shown}");
    assert!(shown.contains("root NX_AI_Leaf1 Ethernet"), "{shown}");
    assert!(
        shown.contains("pauses ? (beyond NX_AI_Leaf1 ii1/1/"),
        "{shown}"
    );
    insta::assert_snapshot!("pause_tree_80x24", shown);
    lab.key(KeyCode::Char('p'));
    let tables = text(&render(&lab.app, 80, 24));
    assert!(tables.contains("Switch PFC per port"), "{tables}");
}

/// Focus: one node of a fleet looked at over SSH (here the demo's node and its
/// log and pings), drawn through the fleet's App: the node's own tabs, the tab bar naming the focus.
#[test]
fn focused_node() {
    let mut cfg = rocetop::config::Config::reference();
    cfg.logs[0].node = "ubunturdma2".into();
    let reach = rocetop::collect::focus::Reach::of_nodes(&cfg);
    let fcfg = rocetop::collect::focus::focus_config(&cfg, "ubunturdma2", &reach).expect("focus");
    assert_eq!(fcfg.nodes.len(), 1);
    let mut lab = Lab::with(fcfg);
    lab.run(28);
    let mut node = lab.app;
    node.focused = Some("ubunturdma2".into());
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let store = rocetop::metrics::Store::new(60_000, 100);
    let mut fleet = App::new(rocetop::config::Config::reference(), store, theme, feed::T0);
    fleet.focus = Some(rocetop::app::focus::Focus {
        node: "ubunturdma2".into(),
        app: Box::new(node),
    });
    let s = screen(&fleet);
    assert!(s.contains("FOCUS ubunturdma2 (SSH up) Esc: fleet"), "{s}");
    insta::assert_snapshot!("focus_node", s);
}

#[test]
fn ascii_fallback_draws_no_block_characters() {
    let mut lab = busy();
    lab.app.ascii = true;
    let s = screen(&lab.app);
    assert!(!s.contains(['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█']), "{s}");
    assert!(s.contains('#'), "the tallest bar is drawn in ASCII");
}

/// Find the first cell of `needle` on screen.
fn find(b: &Buffer, needle: &str) -> Option<(u16, u16)> {
    let t = text(b);
    for (y, line) in t.lines().enumerate() {
        if let Some(byte) = line.find(needle) {
            return Some((line[..byte].chars().count() as u16, y as u16));
        }
    }
    None
}

#[test]
fn severities_are_coloured_in_the_buffer() {
    let mut lab = busy();
    on_tab(&mut lab, Tab::Queues);
    let b = render(&lab.app, 120, 40);
    // The Ethernet1/1/2 RoCE queue row: its ingress drops cell is critical (white on red).
    let t = text(&b);
    let y = t
        .lines()
        .position(|l| l.starts_with("Ethernet1/1/2") && l.contains(" 3 "))
        .expect("Ethernet1/1/2 qos 3 row") as u16;
    let x = 14 + 1 + 16 + 1 + 7 + 1 + 10 + 1 + 8 + 1 + 7 + 1 + 14 + 1 + 11; // last char of "ingr drops/s"
    assert_eq!(
        b[(x, y)].bg,
        Color::Red,
        "critical drop cell at ({x},{y}):\n{t}"
    );
    // The tab bar marks Queues as critical.
    let (qx, qy) = find(&b, "Queues").expect("tab");
    assert_eq!(b[(qx + 6, qy)].bg, Color::Red, "!! after Queues");

    // Stale rows are dimmed (dark grey) with their age.
    let mut lab = stale();
    on_tab(&mut lab, Tab::Overview);
    let b = render(&lab.app, 120, 40);
    let (x, y) = find(&b, "ubunturdma3").expect("row");
    // Dark grey, or on the selected row (worst first: it is) the selection's readable colours
    // with the stale italics.
    let c = &b[(x, y)];
    assert!(
        c.fg == Color::DarkGray
            || (c.bg == Color::Cyan && c.modifier.contains(ratatui::style::Modifier::ITALIC)),
        "{c:?}"
    );
    assert!(
        text(&b)
            .lines()
            .nth(y as usize)
            .is_some_and(|l| l.contains("stale 8s"))
    );
    let (x, y) = find(&b, "ubunturdma1").expect("row");
    assert_ne!(b[(x, y)].fg, Color::DarkGray, "fresh rows are not dimmed");

    // Mono (NO_COLOR) draws no colour anywhere.
    let mut lab = busy();
    lab.app.theme = rocetop::theme::Theme::named("mono").expect("mono");
    let b = render(&lab.app, 120, 40);
    assert!(
        b.content
            .iter()
            .all(|c| matches!(c.fg, Color::Reset) && matches!(c.bg, Color::Reset))
    );
}

#[test]
fn every_size_down_to_1x1_draws_without_panic() {
    let mut lab = busy();
    lab.key(KeyCode::Char('m'));
    for tab in Tab::ALL {
        on_tab(&mut lab, tab);
        for (w, h) in [
            (1, 1),
            (2, 1),
            (1, 3),
            (3, 100),
            (10, 3),
            (40, 12),
            (80, 24),
            (200, 60),
            (300, 5),
        ] {
            let _ = render(&lab.app, w, h);
        }
        lab.key(KeyCode::Enter);
        lab.key(KeyCode::Char('?'));
        for (w, h) in [(1, 1), (5, 4), (40, 12)] {
            let _ = render(&lab.app, w, h);
        }
        lab.key(KeyCode::Esc);
        lab.key(KeyCode::Esc);
    }
}

#[test]
fn selection_stops_at_the_last_row_drawn() {
    let mut lab = busy();
    let _ = render(&lab.app, 120, 40);
    for _ in 0..20 {
        lab.key(KeyCode::Down);
    }
    assert_eq!(lab.app.selected()[0].index, 7, "8 node rows");
    lab.key(KeyCode::Home);
    assert_eq!(lab.app.selected()[0].index, 0);
    lab.key(KeyCode::End);
    assert_eq!(lab.app.selected()[0].index, 7);
}

#[test]
fn filter_and_sort_change_the_rows() {
    let mut lab = busy();
    lab.key(KeyCode::Char('/'));
    lab.chars("rdma6");
    lab.key(KeyCode::Enter);
    let s = screen(&lab.app);
    let rows: Vec<&str> = s.lines().filter(|l| l.starts_with("ubunturdma")).collect();
    assert_eq!(rows.len(), 1, "{s}");
    assert!(rows[0].starts_with("ubunturdma6"));
    lab.key(KeyCode::Esc);
    lab.key(KeyCode::Char('>'));
    let s = screen(&lab.app);
    let rows: Vec<&str> = s.lines().filter(|l| l.starts_with("ubunturdma")).collect();
    let want: Vec<String> = (1..=8).map(|i| format!("ubunturdma{i} ")).collect();
    assert_eq!(rows.len(), 8);
    assert!(
        rows.iter()
            .zip(&want)
            .all(|(r, w)| r.starts_with(w.as_str())),
        "sorted by name: {rows:?}"
    );
}

/// A frame with nothing new computes no tab view again: moving the selection, opening the detail
/// view or the help only lays out the kept rows; new data, a sort or a filter computes them anew.
#[test]
fn unchanged_frames_reuse_the_computed_view() {
    for tab in [Tab::Overview, Tab::Queues, Tab::Pfc, Tab::Congestion] {
        let mut lab = busy();
        on_tab(&mut lab, tab);
        let before = screen(&lab.app);
        let n = lab.app.views().computed.get();
        assert_eq!(screen(&lab.app), before, "{tab:?}");
        lab.key(KeyCode::Down);
        screen(&lab.app);
        lab.key(KeyCode::Enter);
        screen(&lab.app);
        lab.key(KeyCode::Esc);
        lab.key(KeyCode::Up);
        assert_eq!(screen(&lab.app), before, "{tab:?}");
        assert_eq!(
            lab.app.views().computed.get(),
            n,
            "{tab:?}: nothing new, nothing computed"
        );
        lab.key(KeyCode::Char('s'));
        screen(&lab.app);
        assert_eq!(lab.app.views().computed.get(), n + 1, "{tab:?}: sort");
        lab.run(1);
        screen(&lab.app);
        // The Overview keeps its charts and lines apart from its table.
        let fresh = if tab == Tab::Overview { 2 } else { 1 };
        assert_eq!(
            lab.app.views().computed.get(),
            n + 1 + fresh,
            "{tab:?}: new data"
        );
    }
}

/// The PFC tab's priority column fits `global` (802.3x pause that mlx5 counts as
/// `rx_pause_ctrl_phy`), instead of cutting it to `glo~`.
#[test]
fn pfc_priority_labels_are_whole() {
    let mut lab = busy();
    let node = lab.sim.nodes[0].clone();
    let netdev = node.netdevs[0].name.clone();
    let out = rocetop::collect::demo::render::ethtool(&node, &netdev).expect("demo ethtool");
    let parsed = rocetop::parse::host::ethtool::parse(&out, &node.name, &netdev);
    assert!(
        parsed
            .samples
            .iter()
            .any(|s| s.key.label("priority") == Some("global")),
        "the demo's ethtool has 802.3x pause counters"
    );
    let id = lab.id(&node.name);
    let now = lab.now();
    lab.collected(id, now, parsed, None);
    on_tab(&mut lab, Tab::Pfc);
    let screen = text(&render(&lab.app, 160, 80));
    assert!(screen.contains("global"), "{screen}");
    assert!(!screen.contains("glo~"), "{screen}");
}

/// SONiC and EOS switches built from a config as users write it, answered with captured outputs
/// (tests/fixtures), through their parsers into the App: their ports show on the Queues and PFC
/// tabs, and a counter that grew by 100 in a second reads 100/s.
#[test]
fn sonic_and_eos_switches_reach_the_tabs_through_their_parsers() {
    use rocetop::metrics::query;
    use rocetop::parse::ParseKind;
    let fix = |p: &str| {
        std::fs::read_to_string(format!("{}/tests/fixtures/{p}", env!("CARGO_MANIFEST_DIR")))
            .expect("fixture")
    };
    let cfg = rocetop::config::Config::from_str(
        "[[switch]]\nname = \"sonic1\"\nhost = \"127.0.0.1\"\nuser = \"admin\"\nos = \"sonic\"\n\
         [[switch]]\nname = \"eos1\"\nhost = \"127.0.0.1\"\nuser = \"admin\"\nos = \"eos\"\n",
        "test.toml",
        None,
    )
    .expect("valid");
    let mut lab = Lab::with(cfg);
    let sonic_pfc = fix("sonic/show-pfc-counters.txt");
    let sonic = |pfc: &str| {
        vec![
            (ParseKind::SonicPfc, pfc.to_string()),
            (ParseKind::SonicQueue, fix("sonic/show-queue-counters.txt")),
            (
                ParseKind::SonicWred,
                fix("sonic/show-queue-wredcounters.txt"),
            ),
        ]
    };
    let eos = vec![
        (
            ParseKind::EosPfc,
            fix("arista/show-priority-flow-control-counters_eapi-json_anta-fixture.json"),
        ),
        (
            ParseKind::EosEcn,
            fix("arista/show-qos-interfaces-ecn-counters-queue_eapi-json_anta-fixture.json"),
        ),
    ];
    let start = lab.now();
    lab.answer("sonic1", &sonic(&sonic_pfc));
    lab.answer("eos1", &eos);
    lab.run(1);
    lab.answer("sonic1", &sonic(&sonic_pfc.replacen("1,200", "1,300", 1)));
    lab.answer("eos1", &eos);
    let grew = query::increase_sum(
        &lab.app.store,
        rocetop::metrics::names::SW_PFC_RX,
        &[
            ("switch", "sonic1"),
            ("port", "Ethernet0"),
            ("priority", "0"),
        ],
        start,
    );
    assert_eq!(grew, Some(100), "SONiC Ethernet0 PFC0 rx grew by 100");
    on_tab(&mut lab, Tab::Pfc);
    let pfc = screen(&lab.app);
    let row = |text: &str, port: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{port} ")))
            .unwrap_or_else(|| panic!("no {port} row:\n{text}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    // port, class, nodes behind, RxPPP/s: SONiC's Ethernet0 at 100/s, EOS's ports listed.
    assert_eq!(row(&pfc, "Ethernet0")[3], "100", "{pfc}");
    row(&pfc, "Ethernet3/1/1");
    on_tab(&mut lab, Tab::Queues);
    let q = screen(&lab.app);
    assert!(
        q.lines().any(|l| l.starts_with("Ethernet0 ")),
        "Queues tab lacks SONiC's Ethernet0:\n{q}"
    );
}

/// The selection is an item, not a position: as the worst-first order changes with new data,
/// the selected node stays selected, Enter charts that node, and a filter keeping it keeps it.
#[test]
fn selection_follows_its_item_across_resorts_and_filters() {
    use rocetop::app::table::RowId;
    let mut lab = Lab::new();
    lab.run(8);
    let _ = render(&lab.app, 120, 40);
    for _ in 0..5 {
        lab.key(KeyCode::Down);
    }
    let picked = lab.app.selected_row().expect("a row").id;
    let RowId::Node(name) = picked.clone() else {
        panic!("{picked:?}")
    };
    let mut moved = false;
    for _ in 0..40 {
        lab.run(1);
        let _ = render(&lab.app, 120, 40);
        if lab.app.table(Tab::Overview).rows[5].id != picked {
            moved = true;
            break;
        }
    }
    assert!(moved, "the demo re-sorts the nodes within 40 s");
    assert_eq!(lab.app.selected_row().map(|r| r.id), Some(picked.clone()));
    lab.key(KeyCode::Enter);
    let s = screen(&lab.app);
    assert!(
        s.contains(&format!(" {name} (any key closes) ")),
        "Enter charts {name}:\n{s}"
    );
    // The drawn selection is on that node's line (reversed style).
    let b = render(&lab.app, 120, 40);
    lab.key(KeyCode::Esc);
    let b2 = render(&lab.app, 120, 40);
    let (x, y) = find(&b2, &format!("{name} ")).expect("row");
    // The selection's colours (theme.selected, WCAG-checked) mark the row, not a modifier.
    assert_ne!(b2[(x, y)].bg, b2[(x, y + 1)].bg, "{name} is highlighted");
    drop(b);
    lab.key(KeyCode::Char('/'));
    lab.chars("rdma");
    lab.key(KeyCode::Enter);
    lab.run(2);
    assert_eq!(lab.app.selected_row().map(|r| r.id), Some(picked.clone()));
    lab.key(KeyCode::Esc);
    lab.run(1);
    assert_eq!(lab.app.selected_row().map(|r| r.id), Some(picked));
}

fn mouse(lab: &mut Lab, kind: crossterm::event::MouseEventKind, x: u16, y: u16) {
    let m = crossterm::event::MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: crossterm::event::KeyModifiers::NONE,
    };
    let now = lab.now();
    lab.app.update(Event::Mouse(m), now);
}

/// `ui.mouse = true`: a click on a tab label opens it, a click on a row selects it, the wheel
/// moves the selection; a click while an overlay is open only closes it.
#[test]
fn clicks_select_tabs_and_rows_and_the_wheel_scrolls() {
    use crossterm::event::{MouseButton, MouseEventKind};
    use rocetop::app::table::RowId;
    let mut lab = busy();
    let b = render(&lab.app, 120, 40);
    let (x, y) = find(&b, "Queues").expect("tab label");
    mouse(&mut lab, MouseEventKind::Down(MouseButton::Left), x + 2, y);
    assert_eq!(lab.app.tab(), Tab::Queues);
    let b = render(&lab.app, 120, 40);
    let t = text(&b);
    let y = t
        .lines()
        .position(|l| l.starts_with("Ethernet1/1/2") && l.contains(" 3 "))
        .expect("Ethernet1/1/2 qos 3") as u16;
    mouse(&mut lab, MouseEventKind::Down(MouseButton::Left), 20, y);
    let want = RowId::Queue {
        switch: "NX_AI_Leaf1".into(),
        port: "Ethernet1/1/2".into(),
        queue: "3".into(),
    };
    assert_eq!(lab.app.selected_row().map(|r| r.id), Some(want.clone()));
    let at = lab.app.selected()[Tab::Queues.index()].index;
    mouse(&mut lab, MouseEventKind::ScrollDown, 20, y);
    assert_eq!(lab.app.selected()[Tab::Queues.index()].index, at + 3);
    lab.key(KeyCode::Char('?'));
    mouse(&mut lab, MouseEventKind::Down(MouseButton::Left), x + 2, 0);
    assert!(!lab.app.help(), "the click closed help");
    assert_eq!(lab.app.tab(), Tab::Queues, "and did nothing else");
}

/// While frozen, the tab bar says how old the held view is, and the age moves.
#[test]
fn frozen_view_shows_its_age() {
    let mut lab = busy();
    lab.key(KeyCode::Char('f'));
    lab.run(7);
    let s = text(&render(&lab.app, 120, 40));
    let bar = s.lines().next().unwrap_or("");
    assert!(bar.contains("FROZEN 7s old"), "{bar}");
}

/// At 80×24 every tab drops its low-priority columns, says how many, and keeps the ones that
/// name the culprit; 120×40 snapshots are the `*_normal` ones above.
#[test]
fn tables_fit_80x24() {
    let mut lab = busy();
    for (tab, must) in [
        (Tab::Overview, &["node", "state"][..]),
        (Tab::Queues, &["port", "QoS", "ingr drops/s"][..]),
        (Tab::Pfc, &["port", "PFC p3", "802.3x rx/tx", "pause%"][..]),
        (
            Tab::Congestion,
            &["node", "device", "out_of_seq", "seq_err", "ack_tmo"][..],
        ),
        (Tab::Latency, &["peer", "p99", "loss%"][..]),
    ] {
        on_tab(&mut lab, tab);
        let s = text(&render(&lab.app, 80, 24));
        insta::assert_snapshot!(format!("{tab:?}_80x24").to_lowercase(), s);
        assert!(
            s.contains("hidden (←/→)"),
            "{tab:?} says what is hidden:\n{s}"
        );
        for m in must {
            assert!(s.contains(m), "{tab:?} lost {m}:\n{s}");
        }
        assert!(s.lines().all(|l| l.chars().count() <= 80));
    }
}

/// The cursor in the past at 80×24: every tab keeps its banner (when, how far back) and fits.
#[test]
fn past_80x24() {
    let mut lab = past();
    for tab in Tab::ALL {
        on_tab(&mut lab, tab);
        let s = text(&render(&lab.app, 80, 24));
        insta::assert_snapshot!(format!("{tab:?}_past_80x24").to_lowercase(), s);
        assert!(
            s.lines().next().is_some_and(|l| l.contains("(−1m00s)")),
            "{tab:?}: no time-travel banner:\n{s}"
        );
        assert!(s.lines().all(|l| l.chars().count() <= 80));
    }
}

/// ←/→ (h/l) scroll hidden columns in; the culprit columns stay.
#[test]
fn hidden_columns_scroll_in() {
    let mut lab = busy();
    on_tab(&mut lab, Tab::Queues);
    let header = |lab: &Lab| {
        text(&render(&lab.app, 80, 24))
            .lines()
            .find(|l| l.starts_with("port "))
            .unwrap_or("")
            .to_string()
    };
    let before = header(&lab);
    assert!(!before.contains("depth"), "{before}");
    for _ in 0..6 {
        lab.key(KeyCode::Char('l'));
    }
    let after = header(&lab);
    assert!(after.contains("depth"), "scrolled in: {after}");
    assert!(after.contains("ingr drops/s"), "{after}");
    for _ in 0..10 {
        lab.key(KeyCode::Left);
    }
    assert_eq!(header(&lab), before);
}

/// `<`/`>` pick the sort column: the PFC tab sorted by "PPP 60s" (frames in the last minute)
/// keeps ports that stormed recently on top, largest first; `s` flips.
#[test]
fn pfc_sorts_by_the_last_60_s() {
    use rocetop::app::table::Val;
    let mut lab = busy();
    on_tab(&mut lab, Tab::Pfc);
    let col = rocetop::app::vm::pfc::SW_COLS
        .iter()
        .position(|c| c.title == "PPP 60s")
        .expect("column");
    for _ in 0..=col {
        lab.key(KeyCode::Char('>'));
    }
    assert_eq!(lab.app.sorts()[Tab::Pfc.index()].col, Some(col));
    let counts = |lab: &Lab| -> Vec<u64> {
        lab.app
            .table(Tab::Pfc)
            .rows
            .iter()
            .filter_map(|r| match r.cells.get(col).map(|c| &c.val) {
                Some(Val::Count(Some(n))) => Some(*n),
                _ => None,
            })
            .collect()
    };
    let v = counts(&lab);
    assert!(v.len() > 5 && v.windows(2).all(|w| w[0] >= w[1]), "{v:?}");
    assert!(v[0] > v[v.len() - 1], "{v:?}");
    let s = screen(&lab.app);
    assert!(s.contains("PPP 60s▼") || s.contains("PPP 60▼"), "{s}");
    lab.key(KeyCode::Char('s'));
    let v = counts(&lab);
    assert!(v.windows(2).all(|w| w[0] <= w[1]), "flipped: {v:?}");
}

/// The PFC tab's host rows are selectable after its port rows: End lands on the last host row,
/// which is drawn selected (and no port row is), and the selection's detail is that host's.
#[test]
fn pfc_host_rows_take_the_selection() {
    let mut lab = busy();
    on_tab(&mut lab, Tab::Pfc);
    let _ = render(&lab.app, 120, 40);
    lab.key(KeyCode::End);
    let v = lab.app.table(Tab::Pfc);
    assert_eq!(
        lab.app.selected()[Tab::Pfc.index()].index,
        v.rows.len() + v.extra.len() - 1,
        "End walks past the port rows to the last host row"
    );
    let sel = lab.app.selected_row().expect("selected");
    assert!(
        matches!(sel.id, rocetop::app::table::RowId::Netdev { .. }),
        "{:?}",
        sel.id
    );
    let b = render(&lab.app, 120, 40);
    let t = text(&b);
    let host_title = t
        .lines()
        .position(|l| l.starts_with("Host NIC pause"))
        .expect("host table") as u16;
    let selected_lines: Vec<u16> = (0..b.area.height)
        .filter(|&y| b[(0, y)].bg == Color::Cyan)
        .collect();
    assert_eq!(selected_lines.len(), 1, "one selected line:\n{t}");
    assert!(
        selected_lines[0] > host_title,
        "the selected line is in the host table:\n{t}"
    );
    insta::assert_snapshot!("pfc_host_selected", t);
}

/// The counters' intervals kept between frames (`metrics/store/windows.rs`) never go stale: after
/// every new second of polls, and after a node's series appear for the first time, each tab's
/// table from the kept intervals is the one computed from nothing, and its counts move with the
/// new data.
#[test]
fn kept_intervals_follow_new_data_and_new_series() {
    use rocetop::app::vm;
    for tab in [Tab::Overview, Tab::Queues, Tab::Pfc, Tab::Congestion] {
        let mut lab = Lab::new();
        // ubunturdma3 answers nothing at first: its series do not exist yet.
        lab.run_except(6, &["ubunturdma3"]);
        on_tab(&mut lab, tab);
        screen(&lab.app);
        let counts = |rows: &[rocetop::app::table::Row]| -> Vec<String> {
            rows.iter()
                .flat_map(|r| &r.cells)
                .filter(|c| {
                    matches!(
                        c.val,
                        rocetop::app::table::Val::Count(_) | rocetop::app::table::Val::Sparse(..)
                    )
                })
                .map(|c| format!("{:?}", c.val))
                .collect()
        };
        let mut last: Option<Vec<String>> = None;
        let mut moved = false;
        for second in 0..4 {
            lab.run(1);
            let kept = vm::compute(tab, &lab.app.ctx(tab));
            let memo = lab.app.views().windows.take();
            let fresh = vm::compute(tab, &lab.app.ctx(tab));
            *lab.app.views().windows.borrow_mut() = memo;
            assert_eq!(
                format!("{:?}", (&kept.rows, &kept.extra)),
                format!("{:?}", (&fresh.rows, &fresh.extra)),
                "{tab:?}, second {second}: kept intervals give another table"
            );
            let now = counts(&kept.rows);
            moved |= last.as_ref().is_some_and(|l| *l != now);
            last = Some(now);
            screen(&lab.app);
        }
        if tab != Tab::Queues {
            // (The Queues tab's counts are drops: none in these seconds of the demo.)
            assert!(moved, "{tab:?}: no count changed with new data");
            // The node whose series appeared has counts (from the kept intervals) in its rows.
            let t = vm::compute(tab, &lab.app.ctx(tab));
            let mine: Vec<_> = t
                .rows
                .iter()
                .chain(&t.extra)
                .filter(|r| r.name.starts_with("ubunturdma3"))
                .cloned()
                .collect();
            assert!(
                counts(&mine).iter().any(|c| c.contains("Some")),
                "{tab:?}: the new node's counts: {mine:?}"
            );
        }
    }
}

/// Every counter of `name`'s series, from 0 again (its agent restarted), in one poll now.
fn restart_counters(lab: &mut Lab, name: &str) {
    use rocetop::metrics::Value;
    let id = lab.id(name);
    let samples: Vec<Sample> = lab
        .app
        .store
        .all()
        .filter(|(_, s)| s.source == id)
        .filter_map(|(_, s)| {
            let value = match s.latest(&lab.app.store)?.1 {
                Value::Counter(_) => Value::Counter(0),
                Value::Counter32(_) => Value::Counter32(0),
                Value::CounterMicros(_) => Value::CounterMicros(0),
                v @ Value::Gauge(_) => v,
            };
            Some(Sample {
                key: s.key.clone(),
                value,
            })
        })
        .collect();
    let at = lab.now() + 500;
    lab.collected(id, at, Parsed::from(samples), None);
}

/// The rows kept between frames (`vm::Ctx::layout`: which rows there are, their names and
/// charts, the series behind each cell, rebuilt only when a series or a source is added) and the
/// counters' kept intervals never go stale: through series that appear mid-run, sources going
/// down and coming back, counters restarting from 0, a mark and time travel, each tab's table
/// from what was kept is the one computed from nothing; and new points alone keep the layout.
#[test]
fn kept_rows_follow_new_series_failures_resets_marks_and_travel() {
    use rocetop::app::vm;
    use std::rc::Rc;
    // Rows as text, one a line, so a difference names its row.
    let table = |t: &rocetop::app::table::TabView| -> Vec<String> {
        let rows = t.rows.iter().chain(&t.extra).map(|r| format!("{r:?}"));
        rows.chain(t.notes.iter().cloned()).collect()
    };
    for tab in [Tab::Overview, Tab::Queues, Tab::Pfc, Tab::Congestion] {
        let mut lab = Lab::new();
        // A node and a switch answer nothing at first: their series do not exist yet.
        lab.run_except(4, &["ubunturdma3", "NX_AI_Leaf1"]);
        on_tab(&mut lab, tab);
        screen(&lab.app);
        let check = |lab: &mut Lab, step: &str| {
            screen(&lab.app);
            let views = lab.app.views();
            // The table on screen: written over the rows of the one before it.
            let shown = lab.app.table(tab);
            let kept = vm::compute(tab, &lab.app.ctx(tab));
            assert_eq!(
                table(&shown),
                table(&kept),
                "{tab:?}, {step}: the rows written over the last frame's differ"
            );
            let windows = views.windows.take();
            let layout = views.layouts[tab.index()].take();
            let fresh = vm::compute(tab, &lab.app.ctx(tab));
            // Keep going from what was kept, as the screen does.
            *views.windows.borrow_mut() = windows;
            *views.layouts[tab.index()].borrow_mut() = layout;
            let (kept_rows, fresh_rows) = (table(&kept), table(&fresh));
            let differ = kept_rows.iter().zip(&fresh_rows).find(|(a, b)| a != b);
            assert!(
                differ.is_none() && kept_rows.len() == fresh_rows.len(),
                "{tab:?}, {step}: the kept rows give another table ({} rows, {} from nothing): {differ:#?}",
                kept_rows.len(),
                fresh_rows.len()
            );
            assert!(!kept.rows.is_empty(), "{tab:?}, {step}: no rows");
        };
        let layout = |lab: &Lab| {
            lab.app.views().layouts[tab.index()]
                .borrow()
                .as_ref()
                .map(|(_, l)| l.clone())
        };
        check(&mut lab, "start");
        let before = layout(&lab);
        lab.run_except(1, &["ubunturdma3", "NX_AI_Leaf1"]);
        check(&mut lab, "a second of new points");
        if tab != Tab::Overview {
            let (a, b) = (before.expect("kept"), layout(&lab).expect("kept"));
            assert!(
                Rc::ptr_eq(&a, &b),
                "{tab:?}: new points made the rows again"
            );
        }
        lab.run(1);
        check(&mut lab, "the silent node's and switch's series appear");
        lab.run(1);
        check(&mut lab, "a second later");
        lab.fail("ubunturdma3", "command timed out after 5 s");
        lab.fail("NX_AI_Leaf1", "ssh: connect: connection refused");
        lab.app.update(Event::Tick, lab.now());
        check(&mut lab, "a node and a switch down");
        lab.run_except(5, &["ubunturdma3", "NX_AI_Leaf1"]);
        check(&mut lab, "still down, later");
        lab.run(2);
        check(&mut lab, "back up");
        restart_counters(&mut lab, "ubunturdma4");
        restart_counters(&mut lab, "NX_AI_Leaf1");
        check(&mut lab, "counters restarted");
        lab.run(2);
        check(&mut lab, "after the restart");
        lab.chars("m");
        lab.run(3);
        check(&mut lab, "counted from a mark");
        lab.chars("[");
        check(&mut lab, "10 s back in time");
        lab.run(1);
        check(&mut lab, "back in time, a second later");
        lab.chars("{");
        check(&mut lab, "70 s back in time: before the series appeared");
        lab.chars("}]]");
        lab.run(1);
        check(&mut lab, "live again");
    }
}

/// The Latency detail's histogram: a bucket with probes draws at least one block however few its
/// probes, an empty bucket draws none (it used to draw one, as if it held a probe).
#[test]
fn an_empty_rtt_bucket_draws_no_bar() {
    let mut lab = busy();
    let report =
        "transport tcp\nbucket 20 0.000500 2000\nbucket 21 0.000600 0\nbucket 22 0.000700 1\n";
    lab.answer(
        "ping ubunturdma2",
        &[(rocetop::parse::ParseKind::Ping, report.to_string())],
    );
    on_tab(&mut lab, Tab::Latency);
    lab.key(KeyCode::Enter);
    let s = screen(&lab.app);
    assert!(s.contains("ubunturdma2 (tcp): RTT distribution"), "{s}");
    let bucket = |le: &str| {
        s.lines()
            .find(|l| l.trim_start().starts_with("<=") && l.contains(le))
            .unwrap_or_else(|| panic!("no bucket {le}:\n{s}"))
            .to_string()
    };
    // The largest bounds are the ones drawn (the histogram keeps its top buckets).
    assert!(!bucket("600 µs").contains('█'), "{}", bucket("600 µs"));
    assert!(bucket("700 µs").contains('█'), "{}", bucket("700 µs"));
    assert!(bucket("500 µs").contains('█'), "{}", bucket("500 µs"));
}

/// Rows off screen are ordered by their score (or the sorted column) and their cells computed
/// only when drawn or read (`Row::pending`, `App::filled`). Two labs fed alike, one whose every
/// table is computed in full before each frame: through data moving, a node going down and back,
/// a new node, every sort column both ways, a filter, scrolling to the end and back, time
/// travel, both draw the same screen (100x12, 80x24, 120x40) with the selection on one row, and
/// every row computed lazily equals the row the full computation makes.
#[test]
fn rows_computed_when_drawn_equal_the_full_table() {
    use rocetop::app::vm;
    let step = |lab: &mut Lab, what: &str| match what {
        "start" => {}
        "data moves, a new node" => lab.run(1),
        "a node down" => {
            lab.fail("ubunturdma3", "command timed out after 5 s");
            lab.app.update(Event::Tick, lab.now());
        }
        "still down, later" => lab.run_except(4, &["ubunturdma3"]),
        "back up" => lab.run(2),
        "next column" => lab.chars(">"),
        "flipped" => lab.chars("s"),
        "worst first" => lab.chars(&"<".repeat(12)),
        "filter" => {
            lab.chars("/rdma1");
            lab.key(KeyCode::Enter);
        }
        "no filter" => lab.key(KeyCode::Esc),
        "to the end" => lab.chars("G"),
        "up one" => lab.chars("k"),
        "a second later, selection in the middle" => {
            lab.chars("gjjjjjjjjj");
            lab.run(1);
        }
        "to the top" => lab.chars("g"),
        "back in time" => lab.chars("["),
        "back in time, a second later" => lab.run(1),
        "live again" => {
            lab.chars("}]]");
            lab.run(1);
        }
        _ => unreachable!("{what}"),
    };
    let mut steps = vec![
        "start",
        "data moves, a new node",
        "a node down",
        "still down, later",
        "back up",
    ];
    for _ in 0..11 {
        steps.extend(["next column", "flipped"]);
    }
    steps.extend([
        "worst first",
        "filter",
        "no filter",
        "to the end",
        "up one",
        "a second later, selection in the middle",
        "to the top",
        "back in time",
        "back in time, a second later",
        "live again",
    ]);
    for tab in [Tab::Overview, Tab::Pfc, Tab::Congestion] {
        let [mut full, mut lazy] = [Lab::new(), Lab::new()];
        let mut left_pending = false;
        for lab in [&mut full, &mut lazy] {
            // ubunturdma3 answers nothing at first: its rows appear later.
            lab.run_except(4, &["ubunturdma3"]);
            on_tab(lab, tab);
        }
        for what in &steps {
            step(&mut full, what);
            step(&mut lazy, what);
            // 100x12: the 8 nodes' Overview rows do not all fit.
            for (w, h) in [(100, 12), (80, 24), (120, 40)] {
                full.app.table(tab);
                let want = text(&render(&full.app, w, h));
                let got = text(&render(&lazy.app, w, h));
                assert_eq!(got, want, "{tab:?}, {what}, {w}x{h}");
                let id = |lab: &Lab| lab.app.selected_row().map(|r| r.id);
                assert_eq!(id(&lazy), id(&full), "{tab:?}, {what}: the selection");
                let kept = lazy.app.arranged(tab);
                let fresh = vm::compute(tab, &lazy.app.ctx(tab));
                assert_eq!(kept.len(), fresh.len(), "{tab:?}, {what}");
                for i in 0..kept.len() {
                    let (k, f) = (kept.get(i).expect("row"), fresh.get(i).expect("row"));
                    if k.pending.is_none() {
                        assert_eq!(format!("{k:?}"), format!("{f:?}"), "{tab:?}, {what}");
                        continue;
                    }
                    left_pending = true;
                    assert!(k.cells.is_empty(), "{tab:?}, {what}: a pending row's cells");
                    let head = |r: &rocetop::app::table::Row| {
                        format!("{:?}", (&r.id, &r.name, r.score, r.tone, &r.span, &r.notes))
                    };
                    assert_eq!(head(k), head(f), "{tab:?}, {what}, row {i}");
                }
            }
        }
        assert!(left_pending, "{tab:?}: every row was computed");
    }
}

/// Remote text holding characters a terminal draws as nothing (a BEL, a zero-width space) or
/// moves the cursor for (a tab) is shown escaped on every screen, so what follows it stays in
/// its column: the Log tab's lines and the alerts list (a popup).
#[test]
fn hostile_text_is_shown_escaped_where_it_is_drawn() {
    let mut lab = busy();
    let src = lab.id("log ubunturdma1:~/training.log");
    lab.app.update(
        Event::LogLines {
            source: src,
            lines: vec!["step 7\u{7} loss\u{200b}=2.5\tend|".into()],
        },
        lab.now(),
    );
    on_tab(&mut lab, Tab::Log);
    let s = screen(&lab.app);
    let line = s
        .lines()
        .find(|l| l.contains("step 7"))
        .unwrap_or_else(|| panic!("the log line is drawn:\n{s}"));
    assert!(
        line.contains(r"step 7\x07 loss\u{200b}=2.5 end|"),
        "escaped, the tab a space: {line:?}"
    );
    // Every character is one cell: the bar after the text is where its length puts it.
    let b = render(&lab.app, 120, 40);
    let (x, y) = find(&b, "step 7").expect("found in the buffer");
    let bar = x as usize + r"step 7\x07 loss\u{200b}=2.5 end".len();
    assert_eq!(b[(bar as u16, y)].symbol(), "|");

    // A source whose error text carries the same characters, in the alerts list's popup.
    lab.fail("ubunturdma3", "refused\u{7}\u{200b} by peer");
    lab.run_except(2, &["ubunturdma3"]);
    lab.key(KeyCode::Char('A'));
    let s = screen(&lab.app);
    assert!(s.contains(r"refused\x07\u{200b} by peer"), "{s}");
}

/// RDMA RC hides a lost frame as a late answer (the NIC resends it): the Latency tab shows the share
/// of probes that needed a resend in its own column, not as loss; where nobody measures it (TCP) the
/// cell is missing, not 0.
#[test]
fn rc_resends_show_in_their_own_column_not_as_loss() {
    let mut lab = Lab::new();
    let report = |sent: u64, retx: u64| {
        format!(
            "transport rdma\nsent {sent}\nanswered {sent}\nlost 0\nretransmitted {retx}\n\
             rtt 0 0.000010\nrtt 0.5 0.000012\nrtt 0.99 0.000020\nrtt 0.999 0.000020\n\
             rtt 1 0.000020\n"
        )
    };
    let ping = rocetop::parse::ParseKind::Ping;
    lab.answer("ping ubunturdma2", &[(ping, report(1000, 0))]);
    lab.run(1);
    lab.answer("ping ubunturdma2", &[(ping, report(1200, 5))]);
    lab.run(1);
    on_tab(&mut lab, Tab::Latency);
    let s = screen(&lab.app);
    let header = s.lines().find(|l| l.contains("loss%")).expect("header");
    assert!(header.trim_end().ends_with("loss%   retx%"), "{s}");
    let row = s
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("rdma"))
        .unwrap_or_else(|| panic!("no rdma row:\n{s}"));
    // 5 probes resent, none lost: loss stays 0 %, the resends have their own share (the demo's
    // earlier probes are in the 60 s window too, so it is a little under 5 of 200).
    let cells: Vec<&str> = row.split_whitespace().collect();
    let (loss, retx) = (cells[cells.len() - 2], cells[cells.len() - 1]);
    assert_eq!(loss, "0%", "{row}");
    let share: f64 = retx.trim_end_matches('%').parse().expect("a percentage");
    assert!((2.0..=2.5).contains(&share), "{row}");
    let tcp = s
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("tcp"))
        .unwrap_or_else(|| panic!("no tcp row:\n{s}"));
    assert!(
        tcp.trim_end().ends_with('-'),
        "TCP resends are not measured: {tcp}"
    );
}

/// A followed log in a format rocetop does not know: after a few hundred lines without a step the
/// Log tab says so above the lines, with the line most like progress (escaped) and a
/// `format_regex` built from it; a log whose steps are read never shows it.
#[test]
fn a_log_without_steps_says_so_and_names_format_regex() {
    let mut lab = Lab::new();
    lab.follow_log = false;
    let src = lab.id("log ubunturdma1:~/training.log");
    let mut lines: Vec<String> = (0..299).map(|i| format!("worker heartbeat {i}")).collect();
    lines.insert(100, "[trn] it#41 lossval=2.5000 t=150ms\u{7}".into());
    let now = lab.now();
    lab.app.update(
        Event::LogLines {
            source: src,
            lines: lines[..200].to_vec(),
        },
        now,
    );
    on_tab(&mut lab, Tab::Log);
    let s = screen(&lab.app);
    assert!(
        !s.contains("no training step"),
        "not yet at 200 lines:\n{s}"
    );
    lab.app.update(
        Event::LogLines {
            source: src,
            lines: lines[200..].to_vec(),
        },
        now,
    );
    let s = screen(&lab.app);
    assert!(
        s.contains("no training step recognised in 300 lines"),
        "{s}"
    );
    assert!(
        s.contains(r"a line of it: [trn] it#41 lossval=2.5000 t=150ms\x07"),
        "escaped:\n{s}"
    );
    assert!(
        s.contains(r"format_regex = 'it\#(?P<iteration>\d+).*?lossval=(?P<loss>"),
        "{s}"
    );
    // The lines are still there below it.
    assert!(s.contains("worker heartbeat 298"), "{s}");

    // A minute of a few lines is enough too; a read step ends it.
    let mut lab = Lab::new();
    lab.follow_log = false;
    let src = lab.id("log ubunturdma1:~/training.log");
    let at = lab.now();
    lab.app.update(
        Event::LogLines {
            source: src,
            lines: vec!["epoch done".into()],
        },
        at,
    );
    lab.app.update(Event::Tick, at + 59_000);
    assert!(lab.app.log().hint.is_none());
    lab.app.update(Event::Tick, at + 60_000);
    assert!(lab.app.log().hint.is_some());
    let parsed = rocetop::parse::training::parse_text(
        "iteration 5 loss 2.0",
        "ubunturdma1",
        "~/training.log",
    );
    lab.collected(src, at + 61_000, parsed, None);
    assert!(lab.app.log().hint.is_none(), "a step was read");
    on_tab(&mut lab, Tab::Log);
    assert!(!screen(&lab.app).contains("no training step"));
}

/// Fleet mode: the GPU series a fleet Prometheus gives from dcgm-exporter (mapped by the same
/// code a poll uses) fill the Overview's GPU columns for every fleet node, as a node dump's do:
/// node gpu-a's two GPUs at 90 and 70 % read 80 (mean) and 70 (least); gpu-b's idle one reads 0.
#[test]
fn fleet_nodes_get_the_gpu_columns_from_dcgm_exporter() {
    let cfg = rocetop::config::Config::from_str(
        "[[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:9090\"\n",
        "fleet.toml",
        None,
    )
    .expect("config");
    let mut store = rocetop::metrics::Store::new(600_000, 100);
    let src = store.add_source("fleet", 1000);
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let mut app = App::new(cfg, store, theme, feed::T0);
    let item = |name: &str, node: &str, gpu: &str, v: &str| {
        format!(
            r#"{{"metric":{{"__name__":"{name}","gpu":"{gpu}","UUID":"GPU-{node}-{gpu}","modelName":"NVIDIA H100 80GB HBM3","instance":"{node}:9400"}},"value":[1700000000,"{v}"]}}"#
        )
    };
    let items = [
        item("DCGM_FI_DEV_GPU_UTIL", "gpu-a", "0", "90"),
        item("DCGM_FI_DEV_GPU_UTIL", "gpu-a", "1", "70"),
        item("DCGM_FI_DEV_POWER_USAGE", "gpu-a", "0", "512.5"),
        item("DCGM_FI_DEV_GPU_UTIL", "gpu-b", "0", "0"),
        item("DCGM_FI_DEV_XID_ERRORS", "gpu-a", "1", "79"),
        item("DCGM_FI_DEV_XID_ERRORS", "gpu-b", "0", "0"),
        item("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gpu-a", "0", "0.62"),
    ];
    let text = format!(
        "# query dcgm-exporter\n{{\"status\":\"success\",\"data\":{{\"resultType\":\"vector\",\"result\":[{}]}}}}\n",
        items.join(",")
    );
    let parsed = rocetop::parse::prom_api::parse(&text);
    assert!(parsed.notes.is_empty(), "{:?}", parsed.notes);
    for i in 0..2 {
        let at = feed::T0 + i * 1000;
        app.update(
            Event::Collected(rocetop::collect::poll::Collected {
                source: src,
                at,
                parsed: parsed.clone(),
                raw: None,
                error: None,
                history: Default::default(),
            }),
            at,
        );
        app.update(Event::Tick, at);
    }
    let s = screen(&app);
    let row = |node: &str| {
        s.lines()
            .find(|l| l.contains(node))
            .unwrap_or_else(|| panic!("a row for {node}:\n{s}"))
            .to_string()
    };
    assert!(s.contains("GPU"), "the GPU columns:\n{s}");
    let a = row("gpu-a");
    assert!(
        a.contains(" 80.0% ") && a.contains(" 70.0% "),
        "mean 80, least 70: {a:?}\n{s}"
    );
    let b = row("gpu-b");
    assert!(
        b.contains("    0%      0% "),
        "an idle GPU reads 0: {b:?}\n{s}"
    );
    // dcgm's XID and tensor activity: an alert names the XID, gpu-a's detail tells both (gpu-b's
    // XID 0 is none).
    let xids: Vec<String> = (app.alerts().active().iter())
        .filter(|a| a.id.starts_with("xid"))
        .map(|a| format!("{}: {}", a.subject.describe(), a.what))
        .collect();
    assert_eq!(xids, ["gpu-a: XID 79 on GPU 1: fallen off the bus"]);
    let detail = |app: &mut App, node: &str| {
        let at = app.view_now();
        for _ in 0..4 {
            // The selection is of what was last drawn.
            screen(app);
            if app.selected_row().is_some_and(|r| r.name == node) {
                break;
            }
            let k = crossterm::event::KeyEvent::new(
                KeyCode::Down,
                crossterm::event::KeyModifiers::NONE,
            );
            app.update(Event::Key(k), at);
        }
        let k =
            crossterm::event::KeyEvent::new(KeyCode::Enter, crossterm::event::KeyModifiers::NONE);
        app.update(Event::Key(k), at);
        let s = screen(app);
        let esc =
            crossterm::event::KeyEvent::new(KeyCode::Esc, crossterm::event::KeyModifiers::NONE);
        app.update(Event::Key(esc), at);
        s
    };
    let a = detail(&mut app, "gpu-a");
    assert!(a.contains(" gpu-a (any key closes) "), "{a}");
    assert!(
        a.contains("last XID 79 on GPU 1: fallen off the bus"),
        "{a}"
    );
    assert!(a.contains("GPU 0 tensor active %  last 62"), "{a}");
    let b = detail(&mut app, "gpu-b");
    assert!(b.contains(" gpu-b (any key closes) "), "{b}");
    // (The alert line under the timeline still names gpu-a's XID.)
    assert!(
        !b.contains("last XID") && !b.contains("tensor active"),
        "{b}"
    );
}

/// `device = "all"`: each rail of a peer is its own Latency row, named by its device, and a rail
/// that cannot be pinged over has its row too (nothing measured: `-`, not 0) and a note saying
/// why.
#[test]
fn every_rail_is_its_own_row_and_a_dead_rail_says_why() {
    let mut lab = Lab::new();
    let rail = |dev: &str, rtt: &str| {
        format!(
            "transport rdma\ndevice {dev}\nsent 100\nanswered 100\nlost 0\nretransmitted 0\n\
             rtt 0 {rtt}\nrtt 0.5 {rtt}\nrtt 0.99 {rtt}\nrtt 0.999 {rtt}\nrtt 1 {rtt}\n"
        )
    };
    let report = format!(
        "transport tcp\nsent 100\nanswered 100\nlost 0\nrtt 0 0.000030\nrtt 0.5 0.000030\n\
         rtt 0.99 0.000030\nrtt 0.999 0.000030\nrtt 1 0.000030\n{}{}\
         transport rdma\ndevice mlx5_2\nsent 0\nanswered 0\nlost 0\n\
         note RDMA ping to 192.168.250.202:18515 over mlx5_2: mlx5_2 port 1 is 1: DOWN\n",
        rail("mlx5_0", "0.000011"),
        rail("mlx5_1", "0.000077"),
    );
    let ping = rocetop::parse::ParseKind::Ping;
    lab.run(1);
    lab.answer("ping ubunturdma2", &[(ping, report)]);
    on_tab(&mut lab, Tab::Latency);
    let s = screen(&lab.app);
    let row = |dev: &str| {
        s.lines()
            .find(|l| l.contains("ubunturdma2") && l.contains(&format!("rdma {dev}")))
            .unwrap_or_else(|| panic!("no row of {dev}:\n{s}"))
            .to_string()
    };
    assert!(row("mlx5_0").contains("11.0"), "{s}");
    assert!(row("mlx5_1").contains("77.0"), "{s}");
    let dead = row("mlx5_2");
    assert_eq!(
        dead.split_whitespace().collect::<Vec<_>>(),
        [
            "ubunturdma2",
            "rdma",
            "mlx5_2",
            "mlx5_2",
            "port",
            "1",
            "is",
            "1:",
            "DOWN"
        ],
        "the row says why, no values: {dead}"
    );
    assert!(
        s.contains("over mlx5_2: mlx5_2 port 1 is 1: DOWN"),
        "the note says why:\n{s}"
    );
}

/// The fabric demo's six switches on the Queues and PFC tabs, at 80×24 and 120×40: each
/// switch's summary line comes before its own ports and no other's, a port is one row on Queues
/// (its lossless class, the others folded), a leaf's spine port is an `isl` naming the spine, and
/// `/leaf2` keeps leaf2's ports and, of the others, only the spine ports facing it.
#[test]
fn six_switches_group_by_switch_at_80x24_and_120x40() {
    use rocetop::app::table::RowId;
    use rocetop::app::table::group::switch_of;
    let mut lab = Lab::with(rocetop::collect::demo::fabric::config(1));
    lab.run(5);
    let switches: Vec<String> = lab
        .app
        .cfg()
        .switches
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(switches.len(), 6);
    for tab in [Tab::Queues, Tab::Pfc] {
        on_tab(&mut lab, tab);
        let v = lab.app.table(tab);
        // Every row after a summary line is that switch's, until the next one.
        let mut under: Option<&str> = None;
        let mut heads = Vec::new();
        for r in &v.rows {
            match &r.id {
                RowId::Switch(sw) => {
                    assert!(!heads.contains(sw), "{tab:?}: {sw} summarised twice");
                    heads.push(sw.clone());
                    under = Some(sw);
                }
                id => assert_eq!(switch_of(id), under, "{tab:?}: {id:?} under {under:?}"),
            }
        }
        let mut sorted = heads.clone();
        sorted.sort();
        let mut want = switches.clone();
        want.sort();
        assert_eq!(sorted, want, "{tab:?}: one summary line per switch");
        if tab == Tab::Queues {
            let ports: Vec<(&str, &str)> = (v.rows.iter())
                .filter_map(|r| match &r.id {
                    RowId::Queue { switch, port, .. } => Some((switch.as_str(), port.as_str())),
                    _ => None,
                })
                .collect();
            let distinct: std::collections::BTreeSet<_> = ports.iter().collect();
            assert_eq!(distinct.len(), ports.len(), "one row per port");
            assert!(ports.len() > 60, "{} ports", ports.len());
        }
        for (w, h) in [(80, 24), (120, 40)] {
            let s = text(&render(&lab.app, w, h));
            assert!(s.lines().all(|l| l.chars().count() <= usize::from(w)));
            let first = s.lines().nth(3).unwrap_or("");
            assert!(
                switches.iter().any(|sw| first.starts_with(sw.as_str())),
                "{tab:?} {w}x{h}: the table starts with a switch's line:\n{s}"
            );
        }
    }
    // A leaf's uplink is an inter-switch link naming its spine.
    let s = text(&render(&lab.app, 120, 40));
    let pfc = lab.app.table(Tab::Pfc);
    let isl = (pfc.rows.iter())
        .find(|r| r.cells.get(1).is_some_and(|c| c.val == "isl".into()))
        .unwrap_or_else(|| panic!("no isl row:\n{s}"));
    assert!(
        matches!(&isl.cells[2].val, rocetop::app::table::Val::Text(t) if t.starts_with("spine")),
        "{:?}",
        isl.cells
    );
    lab.key(KeyCode::Char('/'));
    lab.chars("leaf2");
    lab.key(KeyCode::Enter);
    let v = lab.app.table(Tab::Pfc);
    assert_eq!(v.rows[0].id, RowId::Switch("leaf2".into()));
    let mine = (v.rows.iter())
        .filter(|r| switch_of(&r.id) == Some("leaf2"))
        .count();
    assert!(mine > 10, "{mine}");
    for r in v.rows.iter().filter(|r| switch_of(&r.id) != Some("leaf2")) {
        if let RowId::Port { switch, .. } = &r.id {
            assert!(switch.starts_with("spine"), "{:?}", r.id);
            assert_eq!(r.cells[1].val, "isl".into());
            assert_eq!(r.cells[2].val, "leaf2".into());
        }
    }
}
