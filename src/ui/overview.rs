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
use super::text;
use super::{SrcState, spark, src_state, title};
use crate::app::vm::timeline::Quantity;
use crate::app::{App, Tab};
use crate::metrics::{Ts, human};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let n_nodes = app.cfg().nodes.len();
    let n_sw = app.cfg().switches.len();
    let lines = app.rolled();
    let shown = lines.iter().filter(|l| !l.muted).count();
    let episode = app.episode_in_view();
    // The sentence takes the lines it needs (up to EP_LINES) rather than lose its end (the
    // culprit node); narrower, it leaves out its least important pieces, never cut in a word.
    let ep_text = episode.map(|ep| with_beside(app, ep, area.width as usize));
    let ep_h = ep_text.as_ref().map_or(0, Vec::len);
    let h = area.height as usize;
    let fixed = n_sw + 1 + ep_h;
    let rem = h.saturating_sub(fixed);
    // The timeline has a GPU line where nodes report GPUs (the node table has their columns).
    let tl_max = TIMELINE_LINES
        + usize::from(crate::app::vm::overview::has_gpus(
            app.arranged(Tab::Overview).cols,
        ));
    let mut tl_h = if rem >= 14 { tl_max.min(rem / 3) } else { 0 };
    let mut al_h = (shown + 1)
        .min(ALERT_LINES)
        .min((rem / 5).max(2))
        .min(rem.saturating_sub(tl_h));
    let mut nodes_h = rem.saturating_sub(tl_h + al_h);
    if nodes_h > n_nodes + 2 {
        // Spare lines go to the alerts (up to their cap), then to the timeline.
        let spare = nodes_h - (n_nodes + 2);
        let more = spare.min((shown + 1).min(ALERT_LINES).saturating_sub(al_h));
        al_h += more;
        let tl_more = (spare - more).min(tl_max.saturating_sub(tl_h));
        tl_h += tl_more;
        nodes_h = n_nodes + 2 + spare - more - tl_more;
    }
    let [nodes_a, sw_a, train_a, ep_a, tl_a, al_a] = Layout::vertical([
        Constraint::Length(nodes_h as u16),
        Constraint::Length(n_sw as u16),
        Constraint::Length(1),
        Constraint::Length(ep_h as u16),
        Constraint::Length(tl_h as u16),
        Constraint::Length(al_h as u16),
    ])
    .areas(area);

    let v = app.view(Tab::Overview, (area.width, area.height), || View {
        switches: switch_lines(app),
        training: training_line(app),
        timeline: timeline_lines(app, tl_a),
    });
    draw_nodes(f, nodes_a, app);
    text::put(f, sw_a, &v.switches);
    text::put(f, train_a, &v.training);
    if let (Some(ep), Some(text)) = (episode, ep_text) {
        text::put(f, ep_a, episode_lines(app, ep, text, area.width as usize));
    }
    if !v.timeline.is_empty() {
        text::put(f, tl_a, &v.timeline);
    }
    draw_alerts(f, al_a, app, &lines);
}

/// The Overview's alert area holds at most this many lines (title and `+N more` included).
pub const ALERT_LINES: usize = 8;
/// The timeline's title and its nine series (a tenth where nodes report GPUs).
const TIMELINE_LINES: usize = 10;

const EP_HINT: &str = "  (e: episodes)";

/// The most lines the episode's sentence takes.
const EP_LINES: usize = 3;

/// The episode's sentence in up to [`EP_LINES`], and after it, where others are open at the
/// view time, how many ("+1 more episode open": the Episodes list shows each): on its last line
/// where it fits, else on a line of its own.
fn with_beside(app: &App, ep: &crate::app::episodes::Episode, width: usize) -> Vec<String> {
    let mut lines = app.episode_lines(ep, width, EP_LINES);
    let Some(more) = app.episodes_beside_note() else {
        return lines;
    };
    match lines.last_mut() {
        Some(last) if last.chars().count() + 3 + more.chars().count() <= width => {
            last.push_str(" · ");
            last.push_str(&more);
        }
        _ => {
            if lines.len() >= EP_LINES {
                lines = app.episode_lines(ep, width, EP_LINES - 1);
            }
            lines.push(more);
        }
    }
    lines
}

/// The episode's sentence: red while open, amber for a few minutes after, then dim; the hint
/// after its last line where it fits.
fn episode_lines(
    app: &App,
    ep: &crate::app::episodes::Episode,
    lines: Vec<String>,
    width: usize,
) -> Vec<Line<'static>> {
    let now = app.view_now();
    let tone = match ep.end {
        None => app.theme.crit,
        Some(e) if now - e < 5 * 60_000 => app.theme.warn,
        Some(_) => app.theme.dim,
    };
    let n = lines.len();
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            let hint = i + 1 == n && l.chars().count() + EP_HINT.len() <= width;
            let mut spans = vec![Span::styled(l, tone)];
            if hint {
                spans.push(Span::styled(EP_HINT, app.theme.dim));
            }
            Line::from(spans)
        })
        .collect()
}

/// What the tab shows, computed from the store once per change (`app/view.rs`).
struct View {
    switches: Vec<Line<'static>>,
    training: Line<'static>,
    timeline: Vec<Line<'static>>,
}

fn draw_nodes(f: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let v = app.arranged(Tab::Overview);
    let [t, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let selected = app.selected_in(Tab::Overview, &v);
    let v = app.filled(Tab::Overview, v, &[grid::window(body, selected)]);
    let note = format!(
        "{}   rates per second, (n) = events in the last 60 s; {} nodes",
        super::hidden_note(app, v.cols, area.width),
        v.rows.len()
    );
    text::put(f, t, title(app, "Nodes".into(), note));
    grid::draw(
        f,
        body,
        app,
        grid::Table {
            tab: Tab::Overview,
            cols: v.cols,
            rows: &v.rows,
            empty: "no nodes match",
            selected,
        },
    );
}

fn switch_lines(app: &App) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for sw in &app.cfg().switches {
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
                let sw = app.switch_summary(name);
                if stale {
                    spans.push(Span::styled(state.word() + " ", app.theme.stale));
                }
                let dtone = if sw.drops_window.unwrap_or(0) > 0 {
                    app.theme.crit
                } else {
                    base
                };
                let drops = format!(
                    "drops/s {} ({} in 60 s, {} since {})",
                    fmt::num(sw.drops),
                    fmt::count(sw.drops_window),
                    fmt::count(sw.drops_since_baseline),
                    fmt::clock(app.baseline()),
                );
                spans.push(Span::styled(drops, dtone));
                let pfc = format!(
                    "  PFC/s edge {} internal {}",
                    fmt::num(sw.pfc_edge),
                    fmt::num(sw.pfc_ii),
                );
                spans.push(Span::styled(pfc, base));
                let fc = match sw.flowcontrol {
                    Some(true) => "on",
                    Some(false) => "off",
                    None => "-",
                };
                spans.push(Span::styled(format!("  802.3x {fc}"), base));
            }
        }
        lines.push(Line::from(spans));
    }
    lines
}

fn training_line(app: &App) -> Line<'static> {
    let mut spans = vec![Span::styled("Training ", app.theme.header)];
    let Some(log) = app.cfg().logs.first() else {
        spans.push(Span::styled("no [[log]] in the config", app.theme.dim));
        return Line::from(spans);
    };
    spans.push(Span::styled(
        format!("{}:{} ", log.node, log.path),
        app.theme.dim,
    ));
    let t = app.training(Some(&log.node));
    match t.iteration {
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
            t.loss.map_or("-".into(), |l| format!("{l:.4}")),
            fmt::secs(t.step),
            fmt::secs(t.allreduce),
        ))),
    }
    Line::from(spans)
}

/// The timeline's lines for `area` (none below two lines), formatted from the view model
/// (`app/vm/timeline.rs`). It always spans the live history up to now; while time travelling,
/// the cursor's column is marked and the numbers are its values.
fn timeline_lines(app: &App, area: Rect) -> Vec<Line<'static>> {
    if area.height < 2 {
        return Vec::new();
    }
    let label_w = 26usize;
    let w = (area.width as usize)
        .saturating_sub(label_w + 1 + spark::RANGE_W)
        .max(1);
    let at = app.travel().as_ref().map(|t| t.at);
    let tl = app.timeline(w);
    let mut lines = vec![match (tl.cursor, at) {
        (Some(c), Some(at)) => cursor_title(app, label_w + c, at),
        _ => title(
            app,
            format!("Timeline, last {w} s"),
            " (one column = 1 s; value = newest; at the right the range drawn)".into(),
        ),
    }];
    for l in tl.lines.iter().take(area.height as usize - 1) {
        let last = match tl.cursor {
            Some(c) => l.values.get(c).copied().flatten(),
            None => spark::last_and_max(&l.values).0,
        };
        // Values stay in their metric's unit; each is written by its quantity's formatter (the
        // same one the tables and alerts use). Times are drawn over their own range (a jump
        // shows), counts and rates from zero.
        let (show, scale): (fn(Option<f64>) -> String, Scale) = match l.quantity {
            Quantity::Time => (human::duration, Scale::MinMax),
            Quantity::Rate => (human::num, Scale::Zero),
            Quantity::Share => (human::percent, Scale::Zero),
        };
        let tone = if l.alarm && last.unwrap_or(0.0) > 0.0 {
            app.theme.crit
        } else {
            app.theme.chart
        };
        let head = format!("{:<17}{:>8} ", l.label, show(last));
        lines.push(Line::from(vec![
            Span::styled(head, app.theme.normal),
            Span::styled(spark::scaled(&l.values, w, app.ascii, scale), tone),
            Span::styled(
                spark::range_cell(spark::range(&l.values, w, scale), show),
                app.theme.dim,
            ),
        ]));
    }
    lines
}

/// The timeline's title with `▼ 05:32:30` over the cursor's column.
fn cursor_title(app: &App, col: usize, at: Ts) -> Line<'static> {
    let head = format!("Timeline at {}", fmt::clock(at));
    let pad = col.saturating_sub(head.chars().count()).max(1);
    Line::from(vec![
        Span::styled(head, app.theme.header),
        Span::raw(" ".repeat(pad)),
        Span::styled("▼ cursor (values at it)", app.theme.warn),
    ])
}

/// The rolled-up alerts (`app/alerts/rollup.rs`): the open episode's under its heading, muted
/// ones left out (counted), acknowledged ones dimmed, `+N more` when the area is full.
fn draw_alerts(f: &mut Frame, area: Rect, app: &App, all: &[crate::app::alerts::Rolled]) {
    if area.height == 0 {
        return;
    }
    // Timed from the view time: while time travelling, "12 s ago" is before the cursor.
    let now = app.view_now();
    let conditions: usize = all.iter().map(|l| l.members.len()).sum();
    let muted = all.iter().filter(|l| l.muted).count();
    let acked = all.iter().filter(|l| l.acked).count();
    let shown: Vec<&crate::app::alerts::Rolled> = all.iter().filter(|l| !l.muted).collect();
    let mut note = format!("  {conditions} conditions in {} lines", all.len());
    if acked > 0 {
        note.push_str(&format!(", {acked} acked"));
    }
    if muted > 0 {
        note.push_str(&format!(", {muted} muted"));
    }
    if shown.iter().any(|l| l.episode) {
        note.push_str("; ├ part of the episode above");
    }
    note.push_str("; A: list, ack, mute, jump");
    let mut lines = vec![title(app, "Alerts".into(), note)];
    if shown.is_empty() {
        lines.push(Line::from(Span::styled(" none", app.theme.ok)));
    }
    let room = area.height as usize - 1;
    let fits = if shown.len() > room { room - 1 } else { room };
    let in_ep = shown.iter().filter(|l| l.episode).count();
    for (i, l) in shown.iter().take(fits).enumerate() {
        let tone = if l.acked {
            app.theme.dim
        } else {
            Tone::of(Some(l.severity)).style(app)
        };
        let lead = match (l.episode, i == in_ep.saturating_sub(1) && in_ep > 0) {
            (true, false) => " ├",
            (true, true) => " └",
            _ => "  ",
        };
        let body = if l.acked {
            app.theme.dim
        } else {
            app.theme.normal
        };
        lines.push(Line::from(vec![
            Span::styled(lead, app.theme.dim),
            Span::styled(format!("{} ", l.severity.label()), tone),
            Span::styled(
                format!("{} ({} ago) ", fmt::clock(l.since), fmt::age(now - l.since)),
                app.theme.dim,
            ),
            Span::styled(format!("[{}] ", l.tab.title()), app.theme.accent),
            Span::styled(l.text(app.alerts()), body),
        ]));
    }
    if shown.len() > fits {
        lines.push(Line::from(Span::styled(
            format!("  +{} more (A: all alerts)", shown.len() - fits),
            app.theme.dim,
        )));
    }
    text::put(f, area, lines);
}
