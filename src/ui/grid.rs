//! The table every tab uses: fixed-width columns drawn as text lines, so a failing source's error
//! can span the row where its numbers would be. The rows come sorted and filtered from the tab's
//! view model (app/vm); here: formatting the values, the columns that fit (by priority, ←/→
//! scroll the hidden ones in), keeping the selection in view; only visible rows are drawn.

use super::fmt::{self, fit};
use super::text;
pub use crate::app::table::{
    Cell, Chart, ChartKind, Col, Row, RowId, TabView, Tone, Val, axis_start, col, hold_gaps, lcol,
};
use crate::app::{App, Tab, TableHit};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

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
}

/// A value as text: one formatter per kind of value (`fmt`). A text (a name another machine
/// gave) is shown as `safe::line` prints it: a control, zero-width or format character the
/// terminal would not draw is escaped, so the cell is as wide as it is counted and `gpu1` +
/// U+200B does not pass for `gpu1`.
pub fn text(v: &Val, ascii: bool) -> String {
    match v {
        Val::Text(s) => crate::safe::line(s).into_owned(),
        Val::Rate(a) => fmt::rate(a.as_ref(), ascii),
        Val::Sparse(a, n) => fmt::sparse(a.as_ref(), *n, ascii),
        Val::Count(n) => fmt::count(*n),
        Val::Num(v) => fmt::num(*v),
        Val::Secs(v) => fmt::secs(*v),
        Val::Percent(v) => fmt::percent(*v),
    }
}

/// `s` cut to `w` characters (`fit`) and padded with spaces to `w` on the right (`left`) or the
/// left.
fn pad(s: &str, w: usize, left: bool) -> String {
    let s = fmt::fit(s, w);
    if left {
        format!("{s:<w$}")
    } else {
        format!("{s:>w$}")
    }
}

/// The columns that fit in `width`, in table order: every priority-0 column, then as many of
/// the others as fit, taken by priority from the `skip`-th on (←/→ scroll the hidden ones in).
/// Returns the indices shown and how many are hidden; `skip` is clamped to what can scroll.
pub fn fit_cols(cols: &[Col], width: usize, skip: usize) -> (Vec<usize>, usize) {
    let need = |ix: &[usize]| ix.iter().map(|&i| cols[i].width + 1).sum::<usize>();
    let all: Vec<usize> = (0..cols.len()).collect();
    if need(&all) <= width + 1 {
        return (all, 0);
    }
    let pinned: Vec<usize> = all.iter().copied().filter(|&i| cols[i].prio == 0).collect();
    let mut rest: Vec<usize> = all.iter().copied().filter(|&i| cols[i].prio > 0).collect();
    rest.sort_by_key(|&i| (cols[i].prio, i));
    let mut room = (width + 1).saturating_sub(need(&pinned));
    let room0 = room;
    // How many of the rest fit from a start: scroll no further than the last one showing.
    let fits_from = |start: usize| {
        let mut left = room0;
        rest[start..]
            .iter()
            .take_while(|&&i| {
                let ok = cols[i].width < left;
                left = left.saturating_sub(cols[i].width + 1);
                ok
            })
            .count()
    };
    let max_skip = (0..=rest.len())
        .find(|&s| fits_from(s) == rest.len() - s)
        .unwrap_or(rest.len());
    let skip = skip.min(max_skip);
    let mut shown = pinned;
    for &i in &rest[skip..] {
        if cols[i].width + 1 > room {
            break;
        }
        room -= cols[i].width + 1;
        shown.push(i);
    }
    shown.sort_unstable();
    let hidden = cols.len() - shown.len();
    (shown, hidden)
}

/// Header line of the shown columns; the sorted column carries an arrow.
pub fn header<'a>(
    app: &App,
    cols: &[Col],
    shown: &[usize],
    sorted: Option<(usize, bool)>,
) -> Line<'a> {
    let text: Vec<String> = shown
        .iter()
        .map(|&i| {
            let c = &cols[i];
            let title = match sorted {
                Some((s, up)) if s == i => {
                    let arrow = match (app.ascii, up) {
                        (true, true) => "^",
                        (true, false) => "v",
                        (false, true) => "▲",
                        (false, false) => "▼",
                    };
                    format!("{}{arrow}", fit(c.title, c.width.saturating_sub(1)))
                }
                _ => c.title.to_string(),
            };
            pad(&title, c.width, c.left)
        })
        .collect();
    Line::from(Span::styled(text.join(" "), app.theme.header))
}

fn row_line<'a>(app: &App, cols: &[Col], shown: &[usize], r: &'a Row, selected: bool) -> Line<'a> {
    debug_assert!(
        r.pending.is_none(),
        "a row drawn before its cells were computed"
    );
    let base = r.tone.style(app);
    let mut spans = Vec::with_capacity(shown.len() * 2);
    let upto = r.span.as_ref().map_or(cols.len(), |(n, _)| *n);
    for (n, &i) in shown.iter().enumerate().filter(|(_, i)| **i < upto) {
        let c = &cols[i];
        if n > 0 {
            spans.push(Span::styled(" ", base));
        }
        let (s, tone) = r
            .cells
            .get(i)
            .map_or((String::new(), None), |x| (text(&x.val, app.ascii), x.tone));
        let st = tone.map_or(base, |t| base.patch(t.style(app)));
        spans.push(Span::styled(pad(&s, c.width, c.left), st));
    }
    if let Some((_, cell)) = &r.span {
        let st = cell.tone.map_or(base, |t| base.patch(t.style(app)));
        spans.push(Span::styled(format!(" {}", text(&cell.val, app.ascii)), st));
    }
    if selected {
        for sp in &mut spans {
            sp.style = app.theme.on_selected(sp.style);
        }
    }
    Line::from(spans)
}

/// One table of a tab.
pub struct Table<'a> {
    pub tab: Tab,
    pub cols: &'a [Col],
    pub rows: &'a [Row],
    /// Shown when there is no row.
    pub empty: &'a str,
    /// This table owns the tab's selection (a tab has one).
    pub selected: Option<usize>,
}

/// How many columns a table of `cols` hides in `width` (for the title line).
pub fn hidden(app: &App, cols: &[Col], width: u16) -> usize {
    fit_cols(cols, width as usize, app.hscroll()[app.tab().index()]).1
}

/// The rows [`draw`] shows in `area` (under the header) with row `selected` in view: the ones
/// whose cells the caller has computed (`App::filled`).
pub fn window(area: Rect, selected: Option<usize>) -> std::ops::Range<usize> {
    let body = area.height.saturating_sub(1) as usize;
    let offset = match selected {
        Some(s) if body > 0 && s >= body => s + 1 - body,
        _ => 0,
    };
    offset..offset + body
}

/// Draw a table's rows (already arranged) under its column header, keeping the selection in
/// view, the columns that fit shown.
pub fn draw(f: &mut Frame, area: Rect, app: &App, t: Table) {
    let Table {
        tab,
        cols,
        rows,
        empty,
        selected,
    } = t;
    if area.height == 0 || area.width == 0 {
        return;
    }
    let (shown, _) = fit_cols(cols, area.width as usize, app.hscroll()[tab.index()]);
    let sort = app.sorts()[tab.index()];
    let sorted = sort.col.map(|c| {
        let numeric = !cols.get(c).is_some_and(|c| c.left);
        (c, numeric == sort.flipped)
    });
    let mut lines = vec![header(app, cols, &shown, sorted)];
    if rows.is_empty() {
        lines.push(Line::from(Span::styled(format!(" {empty}"), app.theme.dim)));
    }
    let drawn = window(area, selected);
    let offset = drawn.start;
    for (i, r) in rows.iter().enumerate().skip(offset).take(drawn.len()) {
        lines.push(row_line(app, cols, &shown, r, selected == Some(i)));
    }
    if selected.is_some() || rows.is_empty() {
        let drawn = rows.len().saturating_sub(offset).min(drawn.len()) as u16;
        app.hits.borrow_mut().table = Some(TableHit {
            y: area.y + 1,
            rows: drawn,
            first: offset,
            x: area.x..area.x + area.width,
        });
    }
    text::put(f, area, lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name with a BEL and a zero-width space (which the screen draws as nothing) is shown
    /// escaped: printable ASCII, as many cells as its padding counts.
    #[test]
    fn a_name_with_controls_or_zero_width_characters_is_as_wide_as_counted() {
        let v = Val::Text("gpu1\u{7}\u{200b}".into());
        let shown = text(&v, false);
        assert_eq!(shown, "gpu1\\x07\\u{200b}");
        assert_eq!(pad(&shown, 20, true).chars().count(), 20);
        assert!(shown.chars().all(crate::ui::text::one_cell));
    }
}
