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
use std::borrow::Cow;

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

/// A value as text: one formatter per kind of value (`fmt`).
pub fn text(v: &Val, ascii: bool) -> String {
    match v {
        Val::Text(s) => s.clone(),
        Val::Rate(a) => fmt::rate(a.as_ref(), ascii),
        Val::Sparse(a, n) => fmt::sparse(a.as_ref(), *n, ascii),
        Val::Count(n) => fmt::count(*n),
        Val::Num(v) => fmt::num(*v),
        Val::Secs(v) => fmt::secs(*v),
        Val::Percent(v) => fmt::percent(*v),
    }
}

/// `s` cut to `w` characters (`fit`) and padded with spaces to `w` on the right (`left`) or the
/// left: `format!("{:<w$}", fit(s, w))` in one string, without `fit`'s copy or the formatter
/// (every cell of every drawn row: at 512 nodes a third of a table's drawing).
fn pad(s: &str, w: usize, left: bool) -> String {
    let mut out = String::with_capacity(s.len().max(w) + 2);
    if s.chars().count() <= w {
        fmt::push_padded(&mut out, s, w, left);
    } else if w > 0 {
        // Cut: `w - 1` characters and the mark, exactly `w` wide.
        out.extend(s.chars().take(w - 1));
        out.push('~');
    }
    out
}

/// [`text`] borrowing a text value rather than copying it.
fn text_of(v: &Val, ascii: bool) -> Cow<'_, str> {
    match v {
        Val::Text(s) => Cow::Borrowed(s),
        v => Cow::Owned(text(v, ascii)),
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
    let mut spans = Vec::with_capacity(shown.len() * 3);
    let upto = r.span.as_ref().map_or(cols.len(), |(n, _)| *n);
    for (n, &i) in shown.iter().enumerate().filter(|(_, i)| **i < upto) {
        let c = &cols[i];
        if n > 0 {
            spans.push(Span::styled(" ", base));
        }
        let (val, tone) = r
            .cells
            .get(i)
            .map_or((None, None), |x| (Some(&x.val), x.tone));
        let st = tone.map_or(base, |t| base.patch(t.style(app)));
        let s = val.map_or(Cow::Borrowed(""), |v| text_of(v, app.ascii));
        pad_spans(&mut spans, s, c.width, c.left, st);
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

/// Spaces padding cells are borrowed from (a column is rarely wider).
const SPACES: &str = "                                                                ";

/// [`pad`] as spans of style `st` pushed onto `out`: the text itself (borrowed, or the formatted
/// value moved in), its cut and the padding borrowed from [`SPACES`], no string built per cell.
/// Text of other than one-cell characters gets [`pad`]'s one string: a cluster may join a
/// character to the padding or the cut mark next to it, and must be measured as `Paragraph`
/// measures it.
fn pad_spans<'a>(out: &mut Vec<Span<'a>>, s: Cow<'a, str>, w: usize, left: bool, st: Style) {
    if !s.chars().all(text::one_cell) {
        out.push(Span::styled(pad(&s, w, left), st));
        return;
    }
    let n = s.chars().count();
    let gap = |k: usize| match SPACES.get(..k) {
        Some(sp) => Span::styled(sp, st),
        None => Span::styled(" ".repeat(k), st),
    };
    if n > w {
        if w > 0 {
            // Cut: `w - 1` characters and the mark, exactly `w` wide.
            let end = s.char_indices().nth(w - 1).map_or(s.len(), |(b, _)| b);
            let cut = match s {
                Cow::Borrowed(b) => Cow::Borrowed(&b[..end]),
                Cow::Owned(mut o) => {
                    o.truncate(end);
                    Cow::Owned(o)
                }
            };
            out.push(Span::styled(cut, st));
            out.push(Span::styled("~", st));
        }
        return;
    }
    if !left && n < w {
        out.push(gap(w - n));
    }
    if n > 0 {
        out.push(Span::styled(s, st));
    }
    if left && n < w {
        out.push(gap(w - n));
    }
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
    fit_cols(cols, width as usize, app.hscroll[app.tab.index()]).1
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
    let (shown, _) = fit_cols(cols, area.width as usize, app.hscroll[tab.index()]);
    let sort = app.sorts[tab.index()];
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
    use crate::app::table::RowId;
    use ratatui::buffer::Buffer;
    use ratatui::style::Color;
    use ratatui::widgets::{Paragraph, Widget};
    use std::rc::Rc;

    /// The row as it was drawn before [`pad_spans`]: one padded string a cell.
    fn padded_row<'a>(app: &App, cols: &[Col], shown: &[usize], r: &Row, sel: bool) -> Line<'a> {
        let base = r.tone.style(app);
        let mut spans = Vec::new();
        let upto = r.span.as_ref().map_or(cols.len(), |(n, _)| *n);
        let missing = Cell::default();
        for (n, &i) in shown.iter().enumerate().filter(|(_, i)| **i < upto) {
            let (c, cell) = (&cols[i], r.cells.get(i).unwrap_or(&missing));
            if n > 0 {
                spans.push(Span::styled(" ", base));
            }
            let st = cell.tone.map_or(base, |t| base.patch(t.style(app)));
            spans.push(Span::styled(
                pad(&text(&cell.val, app.ascii), c.width, c.left),
                st,
            ));
        }
        if let Some((_, cell)) = &r.span {
            let st = cell.tone.map_or(base, |t| base.patch(t.style(app)));
            spans.push(Span::styled(format!(" {}", text(&cell.val, app.ascii)), st));
        }
        if sel {
            for sp in &mut spans {
                sp.style = app.theme.on_selected(sp.style);
            }
        }
        Line::from(spans)
    }

    fn row(cells: Vec<Cell>, tone: Tone, span: Option<(usize, Cell)>) -> Row {
        Row {
            id: RowId::Node("n".into()),
            name: "n".into(),
            cells,
            tone,
            score: 0.0,
            span,
            charts: Rc::from(Vec::new()),
            notes: Vec::new(),
            pending: None,
        }
    }

    /// Rows drawn from [`pad_spans`]' pieces are cell for cell the rows of one padded string a
    /// cell, drawn by `text::put` and by `Paragraph`: texts shorter, as long as and longer than
    /// their column, right and left aligned, empty and missing cells, wide characters (東京,
    /// an emoji), a combining mark, a zero-width space, µ and arrows, tones, a selected row, a
    /// row with a spanning error, and areas cutting the row at the right edge (inside a column,
    /// on a separator, across a wide character).
    #[test]
    fn rows_of_spans_equal_padded_rows() {
        let app = App::new(
            crate::config::Config::reference(),
            crate::metrics::store::Store::new(600_000, 600),
            crate::theme::Theme::named("dark").expect("theme"),
            0,
        );
        let cols = [
            lcol("node", 6, 0),
            col("rate", 7, 0),
            lcol("dev", 5, 0),
            col("n", 4, 0),
            col("big", 70, 0),
        ];
        let t = |s: &str| Cell::new(Val::Text(s.into()));
        let warn = |s: &str| Cell::tone(Val::Text(s.into()), Tone::Warn);
        let rows = [
            row(
                vec![t("gpu1"), t("12.3k"), t("ens1"), t("0"), t("x")],
                Tone::Normal,
                None,
            ),
            row(
                vec![
                    t("ubunturdma10"),
                    t("1234567890"),
                    t("東京-1"),
                    t("e\u{301}t"),
                    t(""),
                ],
                Tone::Dim,
                None,
            ),
            row(
                vec![
                    t("東京東京東京"),
                    warn("45.0 µs"),
                    t("a\u{200b}b"),
                    t("🙂"),
                    t("→·…"),
                ],
                Tone::Stale,
                None,
            ),
            row(vec![t(""), t("↺reset"), t("abcdef")], Tone::Warn, None),
            row(
                vec![t("gpu2")],
                Tone::Crit,
                Some((1, warn("ssh: connection refused"))),
            ),
            row(
                vec![
                    t("éé"),
                    Cell::new(Val::Count(Some(12))),
                    Cell::new(Val::Num(Some(0.4))),
                ],
                Tone::Normal,
                None,
            ),
        ];
        let shown: Vec<usize> = (0..cols.len()).collect();
        let mut seen = 0;
        for sel in [None, Some(1), Some(2)] {
            let new: Vec<Line> = (rows.iter().enumerate())
                .map(|(i, r)| row_line(&app, &cols, &shown, r, sel == Some(i)))
                .collect();
            let old: Vec<Line> = (rows.iter().enumerate())
                .map(|(i, r)| padded_row(&app, &cols, &shown, r, sel == Some(i)))
                .collect();
            for w in [120u16, 100, 30, 27, 19, 13, 9, 6, 1] {
                let area = Rect::new(1, 1, w, 7);
                let full = Rect::new(0, 0, 122, 9);
                let bufs = [0, 1, 2].map(|k| {
                    let mut b = Buffer::empty(full);
                    b.set_string(0, 2, "#".repeat(122), Style::default().bg(Color::Blue));
                    match k {
                        0 => text::Lines(&new).render(area, &mut b),
                        1 => text::Lines(&old).render(area, &mut b),
                        _ => Paragraph::new(old.clone()).render(area, &mut b),
                    }
                    b
                });
                assert_eq!(bufs[0], bufs[1], "width {w} selected {sel:?}");
                assert_eq!(bufs[0], bufs[2], "width {w} selected {sel:?}");
                seen += usize::from(bufs[0][(1, 2)].symbol() == "u");
            }
        }
        // The comparison saw the rows' text.
        assert_eq!(seen, 27);
    }

    /// `pad` writes what formatting `fit`'s cut padded to the width writes, for texts shorter,
    /// as long as and longer than the column, of several-byte characters, and a zero width.
    #[test]
    fn pad_equals_the_formatted_cut() {
        let texts = [
            "",
            "a",
            "gpu1",
            "12.3k",
            "▲ µs",
            "ubunturdma10",
            "µµµµµµµµµµ",
            "a b c d e f",
        ];
        for s in texts {
            for w in 0..12 {
                for left in [true, false] {
                    let cut = fit(s, w);
                    let want = if left {
                        format!("{cut:<w$}")
                    } else {
                        format!("{cut:>w$}")
                    };
                    assert_eq!(pad(s, w, left), want, "{s:?} {w} {left}");
                }
            }
        }
    }
}
