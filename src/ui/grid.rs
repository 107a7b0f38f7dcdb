//! The table every tab uses: fixed-width columns drawn as text lines, so a failing source's error
//! can span the row where its numbers would be. Sorting (worst first or by name), the `/` filter,
//! the selection and scrolling live here; only visible rows are drawn.

use super::fmt::{fit, natural_cmp};
use crate::app::alerts::Severity;
use crate::app::{App, SortBy, Tab};
use crate::metrics::Ts;
use crate::metrics::query;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Normal,
    Dim,
    Stale,
    Ok,
    Warn,
    Crit,
    Accent,
}

impl Tone {
    pub fn style(self, app: &App) -> Style {
        let t = &app.theme;
        match self {
            Tone::Normal => t.normal,
            Tone::Dim => t.dim,
            Tone::Stale => t.stale,
            Tone::Ok => t.ok,
            Tone::Warn => t.warn,
            Tone::Crit => t.crit,
            Tone::Accent => t.accent,
        }
    }

    pub fn of(sev: Option<Severity>) -> Tone {
        match sev {
            Some(Severity::Crit) => Tone::Crit,
            Some(Severity::Warn) => Tone::Warn,
            None => Tone::Normal,
        }
    }
}

pub struct Col {
    pub title: &'static str,
    pub width: usize,
    pub left: bool,
}

pub const fn col(title: &'static str, width: usize) -> Col {
    Col {
        title,
        width,
        left: false,
    }
}

pub const fn lcol(title: &'static str, width: usize) -> Col {
    Col {
        title,
        width,
        left: true,
    }
}

#[derive(Clone, Debug, Default)]
pub struct Cell {
    pub text: String,
    /// `None`: the row's tone.
    pub tone: Option<Tone>,
}

impl Cell {
    pub fn new(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            tone: None,
        }
    }
    pub fn tone(text: impl Into<String>, tone: Tone) -> Cell {
        Cell {
            text: text.into(),
            tone: Some(tone),
        }
    }
    /// A count that must stand out from the first event (drops): critical when > 0.
    pub fn crit_if(text: String, bad: bool) -> Cell {
        Cell {
            text,
            tone: bad.then_some(Tone::Crit),
        }
    }
}

/// What the detail view (Enter) charts for a row.
#[derive(Clone, Debug)]
pub struct Chart {
    pub label: String,
    pub name: String,
    pub labels: Vec<(&'static str, String)>,
    pub kind: ChartKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChartKind {
    /// Per-second rate summed over the matching series.
    Rate,
    /// Gauge values (the largest of the matching series), multiplied by the factor.
    Gauge(f64),
}

impl Chart {
    pub fn rate(label: &str, name: &str, labels: &[(&'static str, &str)]) -> Chart {
        Chart::new(label, name, labels, ChartKind::Rate)
    }
    pub fn new(label: &str, name: &str, labels: &[(&'static str, &str)], kind: ChartKind) -> Chart {
        Chart {
            label: label.into(),
            name: name.into(),
            labels: labels.iter().map(|(k, v)| (*k, (*v).to_string())).collect(),
            kind,
        }
    }

    /// The chart's values on the shared time axis ending at `now`.
    pub fn timeline(&self, app: &App, now: Ts, step: i64, width: usize) -> Vec<Option<f64>> {
        let labels: Vec<(&str, &str)> = self.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let since = axis_start(now, step, width);
        match self.kind {
            ChartKind::Rate => {
                query::rate_timeline(&app.store, &self.name, &labels, since, step, width)
            }
            ChartKind::Gauge(f) => {
                query::gauge_timeline(&app.store, &self.name, &labels, since, step, width)
                    .into_iter()
                    .map(|v| v.map(|x| x * f))
                    .collect()
            }
        }
    }
}

/// Start of a time axis of `width` buckets of `step` ms whose last bucket holds `now`.
pub fn axis_start(now: Ts, step: i64, width: usize) -> Ts {
    let step = step.max(1);
    (now.div_euclid(step) - width as i64 + 1) * step
}

#[derive(Clone, Debug, Default)]
pub struct Row {
    /// For sorting by name and the filter.
    pub name: String,
    pub cells: Vec<Cell>,
    pub tone: Tone,
    /// Larger is worse (sort worst first).
    pub score: f64,
    /// Text drawn across the columns after the first `span_from` cells (an error, "waiting").
    pub span: Option<(usize, Cell)>,
    pub charts: Vec<Chart>,
}

/// Sort and filter rows as the app asks.
pub fn arrange(app: &App, rows: &mut Vec<Row>) {
    rows.retain(|r| app.matches(&r.name));
    match app.sort {
        SortBy::Worst => rows.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| natural_cmp(&a.name, &b.name))
        }),
        SortBy::Name => rows.sort_by(|a, b| natural_cmp(&a.name, &b.name)),
    }
}

fn pad(s: &str, w: usize, left: bool) -> String {
    let s = fit(s, w);
    if left {
        format!("{s:<w$}")
    } else {
        format!("{s:>w$}")
    }
}

/// Header line of the columns.
pub fn header<'a>(app: &App, cols: &[Col]) -> Line<'a> {
    let text: Vec<String> = cols.iter().map(|c| pad(c.title, c.width, c.left)).collect();
    Line::from(Span::styled(text.join(" "), app.theme.header))
}

fn row_line<'a>(app: &App, cols: &[Col], r: &Row, selected: bool) -> Line<'a> {
    let base = r.tone.style(app);
    let mut spans = Vec::with_capacity(cols.len() * 2);
    let upto = r.span.as_ref().map_or(cols.len(), |(n, _)| *n);
    for (i, c) in cols.iter().enumerate().take(upto) {
        let cell = r.cells.get(i).cloned().unwrap_or_default();
        if i > 0 {
            spans.push(Span::styled(" ", base));
        }
        let st = cell.tone.map_or(base, |t| base.patch(t.style(app)));
        spans.push(Span::styled(pad(&cell.text, c.width, c.left), st));
    }
    if let Some((_, cell)) = &r.span {
        let st = cell.tone.map_or(base, |t| base.patch(t.style(app)));
        spans.push(Span::styled(format!(" {}", cell.text), st));
    }
    let mut line = Line::from(spans);
    if selected {
        line = line.patch_style(app.theme.selected);
    }
    line
}

/// One table of a tab.
pub struct Table<'a> {
    pub tab: Tab,
    pub cols: &'a [Col],
    pub rows: &'a [Row],
    /// Shown when there is no row.
    pub empty: &'a str,
    /// This table owns the tab's selection (a tab has one).
    pub selectable: bool,
}

/// Draw a table's rows (already arranged) under its column header, keeping the selection in
/// view. Returns the index of the selected row, if any row is shown.
pub fn draw(f: &mut Frame, area: Rect, app: &App, t: Table) -> Option<usize> {
    let Table {
        tab,
        cols,
        rows,
        empty,
        selectable,
    } = t;
    if area.height == 0 || area.width == 0 {
        return None;
    }
    let mut lines = vec![header(app, cols)];
    let body = area.height.saturating_sub(1) as usize;
    if selectable {
        app.note_rows(tab, rows.iter().map(|r| r.name.as_str()));
    }
    let sel = selectable.then(|| app.selected_row(tab, rows.len()));
    if selectable {
        app.rows[tab.index()].set(rows.len());
    }
    if rows.is_empty() {
        lines.push(Line::from(Span::styled(format!(" {empty}"), app.theme.dim)));
    }
    let offset = match sel {
        Some(s) if body > 0 && s >= body => s + 1 - body,
        _ => 0,
    };
    for (i, r) in rows.iter().enumerate().skip(offset).take(body) {
        lines.push(row_line(app, cols, r, sel == Some(i)));
    }
    f.render_widget(Paragraph::new(lines), area);
    sel.filter(|_| !rows.is_empty())
}
