//! Overview: one row per node (from `app/vm/overview.rs`), switch totals, the training line, the
//! congestion chain on one shared time axis, and the active alerts.
//!
//! ```text
//! Nodes (8)                                 rates /s, (n) = events in the last 60 s
//! node         state  port     ECN/s(60s) CNP tx/s(60s) CNP rx/s pause/s pause% RTT p50 RTT p99
//! ubunturdma6  ok     Eth1/1/2   12 (700)     11 (650)      3.1     950  21.0%  45.0us  410us
//! Switch NX_AI_Leaf1 ok  drops/s 0 (0 in 60 s)  PFC/s edge 12 internal 3.4k  802.3x off
//! Training ubunturdma1:~/training.log  iteration 1234  loss 2.3127  step 156ms  all-reduce 45ms
//! Timeline, last 90 s (1 column = 1 s)
//! step ms         201  ▁▁▂▃▅▇█▇▅▃▂▁
//! ...
//! Alerts (2)
//!  CRIT 12:03:04 Queues NX_AI_Leaf1 Ethernet1/1/2  ingress mmu drops: 3 in 60 s
//! ```

use super::fmt;
use super::grid::{self, Tone};
use super::spark::Scale;
use super::{STEP_MS, SrcState, spark, src_state, title};
use crate::app::alerts::WINDOW_MS;
use crate::app::{App, Tab};
use crate::metrics::names::*;
use crate::metrics::query;
use crate::metrics::{Store, Ts, human};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let st = &app.store;
    let now = app.view_now();
    let n_nodes = app.cfg.nodes.len();
    let n_sw = app.cfg.switches.len();
    let alerts = app.alerts.active();
    let h = area.height as usize;
    let fixed = n_sw + 1;
    let rem = h.saturating_sub(fixed);
    let tl_h = if rem >= 14 { 10.min(rem / 3) } else { 0 };
    let mut al_h = (alerts.len() + 1)
        .min((rem / 5).max(2))
        .min(rem.saturating_sub(tl_h));
    let mut nodes_h = rem.saturating_sub(tl_h + al_h);
    if nodes_h > n_nodes + 2 {
        al_h += nodes_h - (n_nodes + 2);
        nodes_h = n_nodes + 2;
    }
    let [nodes_a, sw_a, train_a, tl_a, al_a] = Layout::vertical([
        Constraint::Length(nodes_h as u16),
        Constraint::Length(n_sw as u16),
        Constraint::Length(1),
        Constraint::Length(tl_h as u16),
        Constraint::Length(al_h as u16),
    ])
    .areas(area);

    let v = app.view(Tab::Overview, (area.width, area.height), || View {
        switches: switch_lines(app, st, now),
        training: training_line(app, st),
        timeline: timeline_lines(app, st, now, tl_a),
    });
    draw_nodes(f, nodes_a, app);
    f.render_widget(Paragraph::new(v.switches.clone()), sw_a);
    f.render_widget(Paragraph::new(v.training.clone()), train_a);
    if !v.timeline.is_empty() {
        f.render_widget(Paragraph::new(v.timeline.clone()), tl_a);
    }
    draw_alerts(f, al_a, app, now);
}

/// What the tab shows besides its table, computed from the store once per change (`app/view.rs`).
struct View {
    switches: Vec<Line<'static>>,
    training: Line<'static>,
    timeline: Vec<Line<'static>>,
}

fn draw_nodes(f: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let v = app.table(Tab::Overview);
    let [t, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let note = format!(
        "{}   rates per second, (n) = events in the last 60 s; {} nodes",
        super::hidden_note(app, v.cols, area.width),
        v.rows.len()
    );
    f.render_widget(Paragraph::new(title(app, "Nodes".into(), note)), t);
    grid::draw(
        f,
        body,
        app,
        grid::Table {
            tab: Tab::Overview,
            cols: v.cols,
            rows: &v.rows,
            empty: "no nodes match",
            selected: app.selected_in(Tab::Overview, &v),
        },
    );
}

fn switch_lines(app: &App, st: &Store, now: Ts) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for sw in &app.cfg.switches {
        let name = sw.name.as_str();
        let state = src_state(app, name);
        let mut spans = vec![Span::styled(format!("Switch {name} "), app.theme.header)];
        let stale = matches!(state, SrcState::Stale(_));
        match state.span(name) {
            Some(c) => spans.push(Span::styled(
                grid::text(&c.val, app.ascii),
                c.tone.unwrap_or_default().style(app),
            )),
            None => {
                let base = if stale {
                    app.theme.stale
                } else {
                    app.theme.normal
                };
                let lbl = [("switch", name)];
                let drops = sum_opt(
                    query::rate_sum(st, SW_QUEUE_DROPPED, &lbl),
                    query::rate_sum(st, SW_INGRESS_DROPPED, &lbl),
                );
                let d60 = sum_u(
                    query::increase_sum(st, SW_QUEUE_DROPPED, &lbl, now - WINDOW_MS),
                    query::increase_sum(st, SW_INGRESS_DROPPED, &lbl, now - WINDOW_MS),
                );
                let dall = sum_u(
                    query::increase_sum(st, SW_QUEUE_DROPPED, &lbl, app.baseline()),
                    query::increase_sum(st, SW_INGRESS_DROPPED, &lbl, app.baseline()),
                );
                let (edge, ii) = pfc_split(st, name);
                if stale {
                    spans.push(Span::styled(state.word() + " ", app.theme.stale));
                }
                let dtone = if d60.unwrap_or(0) > 0 {
                    app.theme.crit
                } else {
                    base
                };
                spans.push(Span::styled(
                    format!(
                        "drops/s {} ({} in 60 s, {} since {})",
                        fmt::num(drops),
                        fmt::count(d60),
                        fmt::count(dall),
                        fmt::clock(app.baseline())
                    ),
                    dtone,
                ));
                spans.push(Span::styled(
                    format!("  PFC/s edge {} internal {}", fmt::num(edge), fmt::num(ii)),
                    base,
                ));
                let fc = query::latest_by(st, SW_FLOWCONTROL_ENABLED, &lbl, &["switch"]);
                let fc = fc
                    .values()
                    .next()
                    .map(|v| if *v > 0.5 { "on" } else { "off" })
                    .unwrap_or("-");
                spans.push(Span::styled(format!("  802.3x {fc}"), base));
            }
        }
        lines.push(Line::from(spans));
    }
    lines
}

fn sum_opt(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    }
}

fn sum_u(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

/// PFC frames/s (rx + tx) on edge and internal (`ii`) ports of a switch.
fn pfc_split(st: &Store, sw: &str) -> (Option<f64>, Option<f64>) {
    let (mut edge, mut ii) = (None, None);
    for name in [SW_PFC_RX, SW_PFC_TX] {
        for (k, a) in query::rate_by(st, name, &[("switch", sw)], &["port"]) {
            let Some(r) = a.rate else { continue };
            let slot = if k.first().is_some_and(|p| p.starts_with("ii")) {
                &mut ii
            } else {
                &mut edge
            };
            *slot.get_or_insert(0.0) += r;
        }
    }
    (edge, ii)
}

fn training_line(app: &App, st: &Store) -> Line<'static> {
    let mut spans = vec![Span::styled("Training ", app.theme.header)];
    let Some(log) = app.cfg.logs.first() else {
        spans.push(Span::styled("no [[log]] in the config", app.theme.dim));
        return Line::from(spans);
    };
    spans.push(Span::styled(
        format!("{}:{} ", log.node, log.path),
        app.theme.dim,
    ));
    let lbl = [("node", log.node.as_str())];
    let g = |n: &str| query::latest(st, n, &lbl).map(|(_, v)| v.as_f64());
    match g(TRAIN_ITERATION) {
        None => {
            let src = format!("log {}:{}", log.node, log.path);
            let s = match src_state(app, &src).span("the log") {
                Some(c) => grid::text(&c.val, app.ascii),
                None => "waiting for training samples".into(),
            };
            spans.push(Span::styled(s, app.theme.dim));
        }
        Some(it) => spans.push(Span::raw(format!(
            "iteration {:.0}  loss {}  step {}  all-reduce {}",
            it,
            g(TRAIN_LOSS).map_or("-".into(), |l| format!("{l:.4}")),
            fmt::secs(g(TRAIN_STEP_SECONDS)),
            fmt::secs(g(TRAIN_ALLREDUCE_SECONDS)),
        ))),
    }
    Line::from(spans)
}

/// Per-bucket maximum over series of per-interval rates selected by `keep` (for edge vs internal
/// ports and the worst host's pause share).
fn rate_timeline_where(
    st: &Store,
    name: &str,
    keep: impl Fn(&crate::metrics::SeriesKey) -> bool,
    since: Ts,
    width: usize,
    sum: bool,
) -> Vec<Option<f64>> {
    let mut out: Vec<Option<f64>> = vec![None; width];
    for (id, s) in st.select(name, &[]) {
        if !keep(&s.key) {
            continue;
        }
        for (t, r) in st.rates(id, since) {
            let (Some(v), Some(slot)) = (r.value(), out.get_mut(((t - since) / STEP_MS) as usize))
            else {
                continue;
            };
            *slot = Some(match *slot {
                None => v,
                Some(x) if sum => x + v,
                Some(x) => x.max(v),
            });
        }
    }
    out
}

fn add(a: Vec<Option<f64>>, b: Vec<Option<f64>>) -> Vec<Option<f64>> {
    a.into_iter().zip(b).map(|(x, y)| sum_opt(x, y)).collect()
}

/// The timeline's lines for `area` (none below two lines).
fn timeline_lines(app: &App, st: &Store, now: Ts, area: Rect) -> Vec<Line<'static>> {
    if area.height < 2 {
        return Vec::new();
    }
    let label_w = 26usize;
    let w = (area.width as usize)
        .saturating_sub(label_w + 1 + spark::RANGE_W)
        .max(1);
    let since = grid::axis_start(now, STEP_MS, w);
    let rt = |n: &str| query::rate_timeline(st, n, &[], since, STEP_MS, w);
    // Gauges sampled slower than a column (the log every 2 s) hold between samples.
    let gt = |n: &str, l: &[(&str, &str)], k: f64| -> Vec<Option<f64>> {
        grid::hold_gaps(
            query::gauge_timeline(st, n, l, since, STEP_MS, w)
                .into_iter()
                .map(|v| v.map(|x| x * k))
                .collect(),
        )
    };
    let is_ii =
        |k: &crate::metrics::SeriesKey| k.label("port").is_some_and(|p| p.starts_with("ii"));
    let pfc = |ii: bool| {
        add(
            rate_timeline_where(st, SW_PFC_RX, |k| is_ii(k) == ii, since, w, true),
            rate_timeline_where(st, SW_PFC_TX, |k| is_ii(k) == ii, since, w, true),
        )
    };
    // Seconds paused per second: the fraction itself (the store already scaled the NIC's µs).
    let pause = rate_timeline_where(st, NIC_PFC_RX_PAUSE_DURATION, |_| true, since, w, false);
    // Values stay in their metric's unit; each line's newest value is written by its quantity's
    // formatter (the same one the tables and alerts use).
    type Fmt = fn(Option<f64>) -> String;
    let (time, rate, share): (Fmt, Fmt, Fmt) = (human::duration, human::num, human::percent);
    let series: Vec<(String, Vec<Option<f64>>, Fmt)> = vec![
        (
            human::name::STEP.into(),
            gt(TRAIN_STEP_SECONDS, &[], 1.0),
            time,
        ),
        (
            human::name::ALLREDUCE.into(),
            gt(TRAIN_ALLREDUCE_SECONDS, &[], 1.0),
            time,
        ),
        (
            human::name::CNP_SENT.into(),
            rt(&rdma_counter("np_cnp_sent")),
            rate,
        ),
        (
            human::name::ECN_MARKED.into(),
            rt(&rdma_counter("np_ecn_marked_roce_packets")),
            rate,
        ),
        (format!("{} edge ports", human::name::PFC), pfc(false), rate),
        (format!("{} internal ii", human::name::PFC), pfc(true), rate),
        (
            format!("host {} (max)", human::name::PAUSE_TIME),
            pause,
            share,
        ),
        (
            human::name::DROPS.into(),
            add(rt(SW_QUEUE_DROPPED), rt(SW_INGRESS_DROPPED)),
            rate,
        ),
        (
            "RTT p99 (max)".into(),
            gt(PING_RTT_SECONDS, &[("quantile", "0.99")], 1.0),
            time,
        ),
    ];
    let mut lines = vec![title(
        app,
        format!("Timeline, last {w} s"),
        " (one column = 1 s; value = newest; at the right the range drawn)".into(),
    )];
    for (label, tl, show) in series.into_iter().take(area.height as usize - 1) {
        let (last, _) = spark::last_and_max(&tl);
        // Times are drawn over their own range (a jump shows), counts and rates from zero.
        let scale = if label == human::name::STEP
            || label == human::name::ALLREDUCE
            || label.starts_with("RTT")
        {
            Scale::MinMax
        } else {
            Scale::Zero
        };
        let tone = if label == human::name::DROPS && last.unwrap_or(0.0) > 0.0 {
            app.theme.crit
        } else {
            app.theme.chart
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{label:<17}{:>8} ", show(last)), app.theme.normal),
            Span::styled(spark::scaled(&tl, w, app.ascii, scale), tone),
            Span::styled(
                spark::range_cell(spark::range(&tl, w, scale)),
                app.theme.dim,
            ),
        ]));
    }
    lines
}

fn draw_alerts(f: &mut Frame, area: Rect, app: &App, now: Ts) {
    if area.height == 0 {
        return;
    }
    let act = app.alerts.active();
    let mut lines = vec![title(
        app,
        format!("Alerts ({})", act.len()),
        "  started (UTC), where, what".into(),
    )];
    if act.is_empty() {
        lines.push(Line::from(Span::styled(" none", app.theme.ok)));
    }
    for a in act.iter().take(area.height as usize - 1) {
        let tone = Tone::of(Some(a.severity)).style(app);
        lines.push(Line::from(vec![
            Span::styled(format!(" {} ", a.severity.label()), tone),
            Span::styled(
                format!("{} ({} ago) ", fmt::clock(a.since), fmt::age(now - a.since)),
                app.theme.dim,
            ),
            Span::styled(format!("[{}] ", a.tab.title()), app.theme.accent),
            Span::raw(format!("{}  {}", a.subject.describe(), a.what)),
        ]));
    }
    f.render_widget(Paragraph::new(lines), area);
}
