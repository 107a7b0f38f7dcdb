//! Drawing: the frame (tab bar, the tab, status/health bar) and the overlays (help, detail, filter).
//! Everything here reads the `App` and nothing else: no I/O, no state changes (the one exception,
//! the row counts a draw reports back for the selection, is a `Cell`).
//!
//! ```text
//!  1 Overview  2 Queues! 3 PFC  4 ECN/CNP  5 Latency  6 Log            FROZEN  mark 12:03:04
//!  ... the tab ...
//!  sources 10: 9 up 1 down | unparsed 0 | alerts 1 CRIT 2 WARN | sort worst | ? help  q quit
//! ```

pub mod congestion;
pub mod fmt;
pub mod grid;
pub mod latency;
pub mod lists;
pub mod log;
pub mod overview;
pub mod pause_tree;
pub mod pfc;
pub mod queues;
pub mod spark;
pub mod text;

use crate::app::alerts::Severity;
use crate::app::{App, Tab, TabHit};
use grid::Tone;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear};

/// One bucket per second on every time axis, so sparklines of all tabs line up.
pub const STEP_MS: i64 = 1000;

pub fn draw(f: &mut Frame, app: &App) {
    // A focused node is a screen of its own (app/focus.rs); the fleet goes on behind it.
    if let Some(fc) = &app.focus {
        return draw(f, &fc.app);
    }
    let area = f.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    if area.height < 3 {
        // Too small for anything but a word; never an error.
        let msg = Line::from(Span::styled("rocetop: enlarge", app.theme.dim));
        text::put(f, area, msg);
        return;
    }
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    tab_bar(f, tabs, app);
    app.hits.borrow_mut().table = None;
    match app.tab() {
        Tab::Overview => overview::draw(f, body, app),
        Tab::Queues => queues::draw(f, body, app),
        Tab::Pfc => pfc::draw(f, body, app),
        Tab::Congestion => congestion::draw(f, body, app),
        Tab::Latency => latency::draw(f, body, app),
        Tab::Log => log::draw(f, body, app),
    };
    status_bar(f, status, app);
    if app.detail() && app.tab() != Tab::Log {
        let v = app.arranged(app.tab());
        let sel = app.selected_in(app.tab(), &v);
        let v = app.filled(app.tab(), v, &[sel.map_or(0..0, |i| i..i + 1)]);
        if let Some(r) = sel.and_then(|i| v.get(i)) {
            if !r.charts.is_empty() || !r.notes.is_empty() {
                detail_popup(f, body, app, r);
            }
        }
    }
    match app.overlay() {
        Some(crate::app::travel::Overlay::Episodes) => lists::episodes(f, body, app),
        Some(crate::app::travel::Overlay::Alerts) => lists::alerts(f, body, app),
        None => {}
    }
    if app.help() {
        help_popup(f, body, app);
    }
}

/// What the view is showing besides live data (replay, time travel, REC, FROZEN, mark): these
/// say the numbers are not "now", so they outrank the tab titles for the tab bar's width.
fn view_states(app: &App) -> String {
    let mut right = Vec::new();
    if let Some(n) = &app.focused {
        // The node's own source: is SSH reaching it.
        let ssh = match app.source(n).map(|h| h.up) {
            Some(Some(true)) => "SSH up",
            Some(Some(false)) => "SSH down",
            _ => "SSH connecting",
        };
        right.push(format!("FOCUS {n} ({ssh}) Esc: fleet"));
    }
    if let Some(r) = &app.replay {
        let state = if r.ended {
            "END".to_string()
        } else if r.paused {
            "PAUSED".to_string()
        } else {
            format!("x{}", r.speed)
        };
        right.push(format!(
            "REPLAY {} {state} ({}/{} s)",
            fmt::clock(r.at),
            (r.at - r.start) / 1000,
            (r.end - r.start) / 1000
        ));
    }
    if let Some(t) = &app.travel() {
        right.push(format!(
            "at {} (−{}) Esc: live",
            fmt::clock(t.at),
            lists::ago(app.now() - t.at)
        ));
    }
    if app.recording.is_some() {
        right.push("REC".to_string());
    }
    if let Some(at) = app.frozen() {
        right.push(format!(
            "FROZEN {} old ({} polls held)",
            fmt::age(app.now() - at),
            app.held_count()
        ));
    }
    if let Some(m) = app.mark() {
        right.push(format!("mark {}", fmt::clock(m)));
    }
    right.join("  ")
}

/// How much of each tab's title the bar has room for.
#[derive(Clone, Copy, PartialEq)]
enum Titles {
    Full,
    /// The first three letters.
    Short,
    /// The number only.
    Number,
}

impl Titles {
    fn of(t: Tab, this: Titles) -> String {
        match this {
            Titles::Full => format!(" {} {}", t.index() + 1, t.title()),
            Titles::Short => format!(
                " {} {}",
                t.index() + 1,
                t.title().chars().take(3).collect::<String>()
            ),
            Titles::Number => format!(" {}", t.index() + 1),
        }
    }

    /// The widest titles that leave room for `right` (`width` columns in all).
    fn fitting(width: usize, right: usize) -> Titles {
        let need = |t: Titles| -> usize {
            let tabs: usize = Tab::ALL
                .iter()
                .map(|x| Titles::of(*x, t).chars().count() + 2)
                .sum();
            tabs + if right > 0 { right + 2 } else { 0 }
        };
        match [Titles::Full, Titles::Short]
            .into_iter()
            .find(|t| need(*t) <= width)
        {
            Some(t) => t,
            // Nothing to say on the right: names, cut where the bar ends, read better than numbers.
            None if right == 0 => Titles::Short,
            None => Titles::Number,
        }
    }
}

fn tab_bar(f: &mut Frame, area: Rect, app: &App) {
    let right = view_states(app);
    let width = area.width as usize;
    let titles = Titles::fitting(width, right.chars().count());
    let mut spans = Vec::new();
    let mut hits = Vec::new();
    let mut x = area.x;
    for t in Tab::ALL {
        let st = if t == app.tab() {
            app.theme.tab_active
        } else {
            app.theme.normal
        };
        let label = Titles::of(t, titles);
        let w = label.chars().count() as u16 + 2;
        hits.push(TabHit {
            x: x..x + w,
            tab: t,
        });
        x += w;
        spans.push(Span::styled(label, st));
        let (mark, tone) = match app.alerts().worst_in(t) {
            Some(Severity::Crit) => ("!!", Tone::Crit),
            Some(Severity::Warn) => ("! ", Tone::Warn),
            None => ("  ", Tone::Normal),
        };
        spans.push(Span::styled(mark, tone.style(app)));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    if !right.is_empty() {
        // Right-aligned; cut at the end (never dropped) when even numbered tabs leave too little.
        let room = width.saturating_sub(used + 1);
        let shown: String = right.chars().take(room).collect();
        let pad = width.saturating_sub(used + shown.chars().count()).max(1);
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(shown, app.theme.warn));
    }
    {
        let mut h = app.hits.borrow_mut();
        h.tabs = hits;
        h.tab_bar_y = area.y;
    }
    text::put(f, area, Line::from(spans));
}

fn status_bar(f: &mut Frame, area: Rect, app: &App) {
    if app.filter_editing() {
        let line = Line::from(vec![
            Span::styled("filter: ", app.theme.accent),
            Span::raw(app.filter().to_owned()),
            Span::styled("_  (Enter keeps, Esc clears)", app.theme.dim),
        ]);
        text::put(f, area, line);
        return;
    }
    let now = app.view_now();
    let (mut up, mut down, mut stale, mut waiting, mut unparsed) = (0, 0, 0, 0, 0);
    for (_, h) in app.store.sources() {
        match h.up {
            None => waiting += 1,
            Some(false) => down += 1,
            Some(true) if h.is_stale(now) => stale += 1,
            Some(true) => up += 1,
        }
        unparsed += h.unknown_lines;
    }
    let total = up + down + stale + waiting;
    let mut spans = vec![Span::styled(
        format!("sources {total}: {up} up"),
        app.theme.ok,
    )];
    for (n, what, tone) in [
        (down, "down", Tone::Crit),
        (stale, "stale", Tone::Stale),
        (waiting, "waiting", Tone::Dim),
    ] {
        if n > 0 {
            spans.push(Span::raw(" "));
            spans.push(Span::styled(format!("{n} {what}"), tone.style(app)));
        }
    }
    if unparsed > 0 {
        spans.push(Span::raw(" | "));
        spans.push(Span::styled(
            format!("unparsed lines {unparsed}"),
            app.theme.warn,
        ));
    }
    let (c, w) = (
        app.alerts().count(Severity::Crit),
        app.alerts().count(Severity::Warn),
    );
    spans.push(Span::raw(" | alerts "));
    if c + w == 0 {
        spans.push(Span::styled("none", app.theme.ok));
    }
    if c > 0 {
        spans.push(Span::styled(format!("{c} CRIT"), app.theme.crit));
        spans.push(Span::raw(" "));
    }
    if w > 0 {
        spans.push(Span::styled(format!("{w} WARN"), app.theme.warn));
    }
    let sort = sort_word(app);
    if let Some((t, msg)) = &app.message() {
        // A message from a later time (before a replay seeked back) is not shown.
        if (0..15_000).contains(&(app.now() - t)) {
            spans.push(Span::raw(" | "));
            spans.push(Span::styled(msg.clone(), app.theme.accent));
        }
    }
    let filter = if app.filter().is_empty() {
        String::new()
    } else {
        format!(" | filter '{}'", app.filter())
    };
    let tail = format!(
        " | sort {sort}{filter} | {} | ? help  q quit",
        fmt::clock(now)
    );
    spans.push(Span::styled(tail, app.theme.dim));
    text::put(f, area, Line::from(spans));
}

/// "worst", or the sorted column and its direction.
fn sort_word(app: &App) -> String {
    let s = app.sorts()[app.tab().index()];
    let flip = if s.flipped { " (flipped)" } else { "" };
    match s.col {
        None => format!("worst{flip}"),
        Some(c) => {
            let v = app.shown(app.tab());
            let name = v.cols.get(c).map_or("?", |c| c.title);
            format!("{name}{flip}")
        }
    }
}

/// A rectangle of at most `w`×`h` centred in `area`.
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let w = w.min(area.width);
    let h = h.min(area.height);
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

const HELP: &[(&str, &str)] = &[
    ("1-6, Tab, S-Tab", "switch tabs"),
    ("Up/Down, j/k, PgUp/PgDn", "move (Log: scroll)"),
    ("g/G, Home/End", "first/last (Log: top / follow)"),
    ("Enter", "charts of the row; a fleet node: SSH focus"),
    ("Esc (in a focus)", "back to the fleet"),
    ("< / >, s", "sort by the column left/right; s flips"),
    ("Left/Right, h/l", "show hidden columns"),
    ("/", "filter rows (Log: lines); Esc clears"),
    ("f", "freeze the view (collection goes on)"),
    ("m / M", "mark a baseline: totals count from now / clear it"),
    ("t", "next theme"),
    ("r", "record to a file (r again stops)"),
    ("S", "write an incident bundle"),
    ("[ ] { }", "back/forward 10 s / 60 s in history (live too)"),
    ("Home/End, Esc", "back to live after [ or {"),
    (
        "e / p",
        "episodes (Enter travels, p tree) / PFC: pause tree",
    ),
    ("A", "alerts list: a ack, x mute, Enter jumps to the row"),
    ("Space . - +", "replay: pause step speed"),
    ("?", "this help"),
    ("q, Ctrl-C", "quit"),
];

/// The keys, as wide as their longest line; over the whole screen where the body is too short
/// for every line (24 rows), and without the blank line where even that is.
fn help_popup(f: &mut Frame, body: Rect, app: &App) {
    let mut lines: Vec<Line> = HELP
        .iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!(" {k:<24}"), app.theme.accent),
                Span::raw(*v),
            ])
        })
        .collect();
    lines.push(Line::raw(""));
    for legend in HELP_LEGEND {
        lines.push(Line::from(Span::styled(legend, app.theme.dim)));
    }
    let widest = lines.iter().map(Line::width).max().unwrap_or(0);
    let rows = lines.len() as u16 + 2;
    let area = if body.height < rows { f.area() } else { body };
    if area.height < rows {
        lines.remove(HELP.len());
    }
    // The borders and a space after the longest line.
    let r = centered(area, widest as u16 + 3, lines.len() as u16 + 2);
    f.render_widget(Clear, r);
    let block = Block::bordered()
        .title(" keys (any key closes this, and does nothing else) ")
        .border_style(app.theme.border);
    let inner = block.inner(r);
    f.render_widget(block, r);
    text::put(f, inner, lines);
}

/// What the tables' marks mean, under the keys.
const HELP_LEGEND: [&str; 2] = [
    " ↺/R after a number: a counter reset in that interval",
    " '-' no data yet; dimmed rows: stale source (age shown)",
];

fn detail_popup(f: &mut Frame, area: Rect, app: &App, row: &crate::app::table::Row) {
    let (name, charts) = (&row.name, &row.charts);
    let r = centered(area, area.width.saturating_sub(4).max(10), 3);
    let width = r.width.saturating_sub(2) as usize;
    // A node's NICs first, then findings (the lossless path) in warning colour, wrapped to
    // the popup: what is wrong and the fix.
    let mut lines: Vec<Line> = (row.facts.iter())
        .flat_map(|n| wrap(n, width.max(10)))
        .map(Line::from)
        .collect();
    lines.extend(
        (row.notes.iter())
            .flat_map(|n| wrap(n, width.max(10)))
            .map(|l| Line::from(Span::styled(l, app.theme.warn))),
    );
    let h = (lines.len() as u16 + charts.len() as u16 * 2 + 3).min(area.height);
    let r = centered(area, area.width.saturating_sub(4).max(10), h);
    let spark_w = width.saturating_sub(0);
    let now = app.view_now();
    for c in charts.iter() {
        let tl = c.timeline(&app.store, now, STEP_MS, spark_w);
        let (last, _) = spark::last_and_max(&tl);
        // Rates from zero; gauges (RTTs) over their own range, printed.
        let scale = match c.kind {
            grid::ChartKind::Rate => spark::Scale::Zero,
            grid::ChartKind::Gauge(_) => spark::Scale::MinMax,
        };
        let range = spark::range(&tl, spark_w, scale).map_or("-".into(), |(lo, hi)| {
            format!("{}..{}", fmt::num(Some(lo)), fmt::num(Some(hi)))
        });
        lines.push(Line::from(vec![
            Span::styled(c.label.clone(), app.theme.header),
            Span::styled(
                format!("  last {}  drawn {range}  ({} s)", fmt::num(last), spark_w),
                app.theme.dim,
            ),
        ]));
        lines.push(Line::from(Span::styled(
            spark::scaled(&tl, spark_w, app.ascii, scale),
            app.theme.chart,
        )));
    }
    f.render_widget(Clear, r);
    let block = Block::bordered()
        .title(format!(" {name} (any key closes) "))
        .border_style(app.theme.border);
    let inner = block.inner(r);
    f.render_widget(block, r);
    text::put(f, inner, lines);
}

/// Words of `s` in lines of at most `width` characters (a longer word gets a line of its own).
fn wrap(s: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for w in s.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > width {
            out.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub use crate::app::source::SrcState;

/// How a source is doing at the view time.
pub fn src_state(app: &App, name: &str) -> SrcState {
    SrcState::of(app.source(name), app.view_now())
}

/// A section title line: text in the header style, with an optional dim note.
pub fn title<'a>(app: &App, text: String, note: String) -> Line<'a> {
    Line::from(vec![
        Span::styled(text, app.theme.header),
        Span::styled(note, app.theme.dim),
    ])
}

/// "   3 columns hidden (←/→)" for a title line, or nothing when every column fits.
pub fn hidden_note(app: &App, cols: &[grid::Col], width: u16) -> String {
    match grid::hidden(app, cols, width) {
        0 => String::new(),
        1 => "   1 column hidden (←/→)".into(),
        n => format!("   {n} columns hidden (←/→)"),
    }
}
