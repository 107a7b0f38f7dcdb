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
pub mod log;
pub mod overview;
pub mod pfc;
pub mod queues;
pub mod spark;

use crate::app::alerts::Severity;
use crate::app::{App, SortBy, Tab};
use grid::{Chart, Tone};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

/// One bucket per second on every time axis, so sparklines of all tabs line up.
pub const STEP_MS: i64 = 1000;

/// What the selected row offers the detail view: its name and its charts.
pub type Detail = Option<(String, Vec<Chart>)>;

pub fn draw(f: &mut Frame, app: &App) {
    let area = f.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    if area.height < 3 {
        // Too small for anything but a word; never an error.
        let msg = Line::from(Span::styled("rocetop: enlarge", app.theme.dim));
        f.render_widget(Paragraph::new(msg), area);
        return;
    }
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(1),
    ])
    .areas(area);
    tab_bar(f, tabs, app);
    let detail = match app.tab {
        Tab::Overview => overview::draw(f, body, app),
        Tab::Queues => queues::draw(f, body, app),
        Tab::Pfc => pfc::draw(f, body, app),
        Tab::Congestion => congestion::draw(f, body, app),
        Tab::Latency => latency::draw(f, body, app),
        Tab::Log => log::draw(f, body, app),
    };
    status_bar(f, status, app);
    if app.detail {
        if let Some((name, charts)) = detail {
            detail_popup(f, body, app, &name, &charts);
        }
    }
    if app.help {
        help_popup(f, body, app);
    }
}

fn tab_bar(f: &mut Frame, area: Rect, app: &App) {
    let full: usize = Tab::ALL.iter().map(|t| t.title().len() + 5).sum();
    let short = full > area.width as usize;
    let mut spans = Vec::new();
    for (i, t) in Tab::ALL.iter().enumerate() {
        let title = if short {
            t.title().chars().take(3).collect()
        } else {
            t.title().to_string()
        };
        let st = if *t == app.tab {
            app.theme.tab_active
        } else {
            app.theme.normal
        };
        spans.push(Span::styled(format!(" {} {title}", i + 1), st));
        let (mark, tone) = match app.alerts.worst_in(*t) {
            Some(Severity::Crit) => ("!!", Tone::Crit),
            Some(Severity::Warn) => ("! ", Tone::Warn),
            None => ("  ", Tone::Normal),
        };
        spans.push(Span::styled(mark, tone.style(app)));
    }
    let mut right = Vec::new();
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
    if app.recording.is_some() {
        right.push("REC".to_string());
    }
    if app.frozen.is_some() {
        right.push(format!("FROZEN ({} polls held)", app.held_count()));
    }
    if let Some(m) = app.mark {
        right.push(format!("mark {}", fmt::clock(m)));
    }
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let r = right.join("  ");
    if !r.is_empty() && used + r.len() + 2 <= area.width as usize {
        spans.push(Span::raw(" ".repeat(area.width as usize - used - r.len())));
        spans.push(Span::styled(r, app.theme.warn));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn status_bar(f: &mut Frame, area: Rect, app: &App) {
    if app.filter_editing {
        let line = Line::from(vec![
            Span::styled("filter: ", app.theme.accent),
            Span::raw(app.filter.clone()),
            Span::styled("_  (Enter keeps, Esc clears)", app.theme.dim),
        ]);
        f.render_widget(Paragraph::new(line), area);
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
        app.alerts.count(Severity::Crit),
        app.alerts.count(Severity::Warn),
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
    let sort = match app.sort {
        SortBy::Worst => "worst",
        SortBy::Name => "name",
    };
    if let Some((t, msg)) = &app.message {
        if app.now - t < 15_000 {
            spans.push(Span::raw(" | "));
            spans.push(Span::styled(msg.clone(), app.theme.accent));
        }
    }
    let mut tail = format!(" | sort {sort}");
    if !app.filter.is_empty() {
        tail.push_str(&format!(" | filter '{}'", app.filter));
    }
    tail.push_str(&format!(" | {} | ? help  q quit", fmt::clock(now)));
    spans.push(Span::styled(tail, app.theme.dim));
    f.render_widget(Paragraph::new(Line::from(spans)), area);
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
    ("Enter", "detail chart of the selected row"),
    ("s", "sort: worst offender first / by name"),
    ("/", "filter rows (Log: lines); Esc clears"),
    ("f", "freeze the view (collection goes on)"),
    ("m / M", "mark a baseline: totals count from now / clear it"),
    ("t", "next theme"),
    ("r", "record to a file (r again stops)"),
    ("S", "write an incident bundle"),
    ("Space . [ ] { } - +", "replay: pause step seek speed"),
    ("?", "this help"),
    ("q, Ctrl-C", "quit"),
];

fn help_popup(f: &mut Frame, area: Rect, app: &App) {
    let r = centered(area, 64, HELP.len() as u16 + 6);
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
    lines.push(Line::from(Span::styled(
        " ↺/R after a number: a counter reset in that interval",
        app.theme.dim,
    )));
    lines.push(Line::from(Span::styled(
        " '-' no data yet; dimmed rows: stale source (age shown)",
        app.theme.dim,
    )));
    f.render_widget(Clear, r);
    let block = Block::bordered()
        .title(" keys (any key closes) ")
        .border_style(app.theme.border);
    f.render_widget(Paragraph::new(lines).block(block), r);
}

fn detail_popup(f: &mut Frame, area: Rect, app: &App, name: &str, charts: &[Chart]) {
    let h = (charts.len() as u16 * 2 + 3).min(area.height);
    let r = centered(area, area.width.saturating_sub(4).max(10), h);
    let width = r.width.saturating_sub(2) as usize;
    let spark_w = width.saturating_sub(0);
    let now = app.view_now();
    let mut lines = Vec::new();
    for c in charts {
        let tl = c.timeline(app, now, STEP_MS, spark_w);
        let (last, max) = spark::last_and_max(&tl);
        lines.push(Line::from(vec![
            Span::styled(c.label.clone(), app.theme.header),
            Span::styled(
                format!(
                    "  last {}  max {}  ({} s)",
                    fmt::num(last),
                    fmt::num(max),
                    spark_w
                ),
                app.theme.dim,
            ),
        ]));
        lines.push(Line::from(Span::styled(
            spark::line(&tl, spark_w, app.ascii),
            app.theme.chart,
        )));
    }
    f.render_widget(Clear, r);
    let block = Block::bordered()
        .title(format!(" {name} (Enter/Esc closes) "))
        .border_style(app.theme.border);
    f.render_widget(Paragraph::new(lines).block(block), r);
}

/// How a source is doing, for rows that show its data.
#[derive(Clone, Debug, PartialEq)]
pub enum SrcState {
    /// No such source in the config.
    Unknown,
    Waiting,
    Up,
    Stale(i64),
    Down(String),
}

pub fn src_state(app: &App, name: &str) -> SrcState {
    let now = app.view_now();
    match app.source(name) {
        None => SrcState::Unknown,
        Some(h) => match h.up {
            None => SrcState::Waiting,
            Some(false) => {
                // Shown escaped, like the printed commands do (ratatui would drop the bytes).
                let why = h
                    .last_error
                    .as_deref()
                    .map_or_else(|| "no answer".into(), |e| crate::safe::line(e).into_owned());
                // How old the numbers left on screen are: a hung host can be down for minutes.
                SrcState::Down(match h.age_ms(now) {
                    Some(age) => format!("{why}, last data {} ago", fmt::age(age)),
                    None => why,
                })
            }
            Some(true) if h.is_stale(now) => SrcState::Stale(h.age_ms(now).unwrap_or(0)),
            Some(true) => SrcState::Up,
        },
    }
}

impl SrcState {
    /// A row's tone and, for sources without data, the text spanning where the data would be.
    pub fn row_tone(&self) -> Tone {
        match self {
            SrcState::Stale(_) => Tone::Stale,
            _ => Tone::Normal,
        }
    }

    pub fn span(&self, what: &str) -> Option<grid::Cell> {
        match self {
            SrcState::Waiting => Some(grid::Cell::tone(
                format!("waiting for the first poll of {what}"),
                Tone::Dim,
            )),
            SrcState::Down(e) => Some(grid::Cell::tone(format!("{what} down: {e}"), Tone::Crit)),
            _ => None,
        }
    }

    /// Short state text: "ok", "stale 12s", "down", "waiting".
    pub fn word(&self) -> String {
        match self {
            SrcState::Unknown => "-".into(),
            SrcState::Waiting => "waiting".into(),
            SrcState::Up => "ok".into(),
            SrcState::Stale(ms) => format!("stale {}", fmt::age(*ms)),
            SrcState::Down(_) => "down".into(),
        }
    }
}

/// Row keys (label values, the first one a switch or node name) grouped by that first value, so
/// tables of hundreds of nodes find their rows without a scan per node.
pub fn by_first<'a>(
    keys: impl IntoIterator<Item = &'a Vec<String>>,
) -> std::collections::HashMap<&'a str, Vec<&'a Vec<String>>> {
    let mut m: std::collections::HashMap<&str, Vec<&Vec<String>>> =
        std::collections::HashMap::new();
    for k in keys {
        m.entry(k.first().map_or("", String::as_str))
            .or_default()
            .push(k);
    }
    m
}

/// A section title line: text in the header style, with an optional dim note.
pub fn title<'a>(app: &App, text: String, note: String) -> Line<'a> {
    Line::from(vec![
        Span::styled(text, app.theme.header),
        Span::styled(note, app.theme.dim),
    ])
}
