//! Lines of styled text written into the frame's buffer exactly as `Paragraph::new(lines)` (no
//! block, no wrap, no scroll) renders them, without its per-grapheme machinery for the text this
//! screen is made of.
//!
//! `Paragraph` splits every span into grapheme clusters, collects each line's clusters into a
//! vector, measures each one's width (twice) and then writes them. On the Overview that was ~11 %
//! of a data frame (`perf record` of examples/render_time at 8 nodes: `LineTruncator::next_line`
//! and `Graphemes::next`), more than the view it draws. Nearly all of the screen is printable
//! ASCII and the sparkline and box-drawing blocks, where each `char` is one cluster of width one:
//! those spans are written a character a cell. Any other span (a node name in another script, a
//! combining mark, a wide character) goes through the same clusters and widths `Paragraph` uses,
//! so the cells come out the same (a unit test compares the two on such text).

use ratatui::Frame;
use ratatui::buffer::{Buffer, Cell, CellWidth};
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Widget};

/// Draw `text` (a line or lines) into `area` as `Paragraph::new(text)` would.
pub fn put(f: &mut Frame, area: Rect, text: impl AsLines) {
    f.render_widget(Lines(text.as_lines()), area);
}

/// What [`put`] draws: one line or several, owned or borrowed.
pub trait AsLines {
    fn as_lines(&self) -> &[Line<'_>];
}

impl AsLines for Line<'_> {
    fn as_lines(&self) -> &[Line<'_>] {
        std::slice::from_ref(self)
    }
}

impl AsLines for Vec<Line<'_>> {
    fn as_lines(&self) -> &[Line<'_>] {
        self
    }
}

impl<T: AsLines + ?Sized> AsLines for &T {
    fn as_lines(&self) -> &[Line<'_>] {
        (**self).as_lines()
    }
}

/// `lines`, one per row of the area from its top, each cut at the area's width.
pub struct Lines<'a>(pub &'a [Line<'a>]);

impl Widget for Lines<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        // Text from other machines (names, log lines, error text) may hold characters a
        // terminal draws as nothing: they are shown escaped, so columns count what is drawn.
        if self.0.iter().any(needs_escape) {
            let shown: Vec<Line> = self.0.iter().map(escaped).collect();
            return Lines(&shown).render(area, buf);
        }
        // Centred or right-aligned lines are placed by their whole width: left to `Paragraph`.
        if self
            .0
            .iter()
            .any(|l| l.alignment.is_some_and(|a| a != Alignment::Left))
        {
            Paragraph::new(self.0.to_vec()).render(area, buf);
            return;
        }
        for (y, line) in (area.top()..area.bottom()).zip(self.0) {
            put_line(buf, area.left(), y, area.width, line);
        }
    }
}

/// Whether a span of `line` holds a character [`crate::safe::is_unsafe`] refuses: `Paragraph`
/// would drop it (a control character) or draw it as nothing (a zero-width or format one), and
/// `gpu1` would look like `gpu1` + U+200B while the cells after it moved.
fn needs_escape(line: &Line) -> bool {
    line.spans.iter().any(|s| {
        let t: &str = s.content.as_ref();
        !t.bytes().all(|b| matches!(b, b' '..=b'~')) && t.chars().any(crate::safe::is_unsafe)
    })
}

/// `line` with each such character shown as `safe::line` prints it (`\x07`, `\u{200b}`) and
/// a tab as a space (a log line's field separator).
fn escaped<'a>(line: &Line<'a>) -> Line<'a> {
    let mut out = line.clone();
    for span in &mut out.spans {
        let t: &str = span.content.as_ref();
        if t.chars().any(crate::safe::is_unsafe) {
            let t = t.replace('\t', " ");
            span.content = crate::safe::line(&t).into_owned().into();
        }
    }
    out
}

/// One line at (`x`, `y`), at most `width` cells.
///
/// The row's cells are taken as one slice and each span's style patched once: indexing the
/// buffer by position cell by cell (a bounds check and a multiply each) was most of this
/// function's cost, ~3000 cells a frame on the Overview.
fn put_line(buf: &mut Buffer, x: u16, y: u16, width: u16, line: &Line) {
    let base = Style::default().patch(line.style);
    let start = buf.index_of(x, y);
    let row = &mut buf.content[start..start + usize::from(width)];
    let mut used = 0usize;
    for span in &line.spans {
        let style = base.patch(span.style);
        let text: &str = span.content.as_ref();
        let cells = &mut row[used..];
        // Printable ASCII read a byte at a time: no UTF-8 decoding.
        let one_cell_each = if text.bytes().all(|b| matches!(b, b' '..=b'~')) {
            Some(put_chars(cells, text.bytes().map(char::from), style))
        } else if text.chars().all(one_cell) {
            Some(put_chars(cells, text.chars(), style))
        } else {
            None
        };
        match one_cell_each {
            Some(Some(n)) => {
                used += n;
                continue;
            }
            // It ran past the line's end.
            Some(None) => return,
            None => {}
        }
        // What `Paragraph` does: clusters holding a control character are dropped, those wider
        // than the whole area skipped, the line ends at the first that does not fit, and
        // zero-width ones take no cell.
        for g in span.styled_graphemes(base) {
            let w = usize::from(g.symbol.cell_width());
            if w > row.len() {
                continue;
            }
            if used + w > row.len() {
                return;
            }
            if w == 0 {
                continue;
            }
            row[used].set_symbol(g.symbol).set_style(g.style);
            used += w;
        }
    }
}

/// `chars`, each one cell, written from the first of `cells` in `style`: how many (`None` when
/// they ran past the last cell, the line's end).
fn put_chars(cells: &mut [Cell], chars: impl Iterator<Item = char>, style: Style) -> Option<usize> {
    let mut cells = cells.iter_mut();
    let mut n = 0;
    for c in chars {
        let cell = cells.next()?;
        // A cleared cell reads as a space already (`Cell::EMPTY` has no symbol, equal to " "):
        // a table's padding, about half its cells, made a new symbol each.
        if c != ' ' || cell.symbol() != " " {
            cell.set_char(c);
        }
        cell.set_style(style);
        n += 1;
    }
    Some(n)
}

/// A character that is always a grapheme cluster of its own and one cell wide: printable ASCII
/// and Latin-1 (but the soft hyphen), Greek letters, the dashes, quotes, bullets and ellipsis
/// of general punctuation, arrows, mathematical operators, box drawing, block elements (the
/// sparklines' bars) and geometric shapes but the two wide ones. The Overview's episode and
/// alert lines (`→`, `·`, `…`, `µ`, `×`) took the clusters' path over ~300 cells a frame.
pub(super) fn one_cell(c: char) -> bool {
    matches!(c,
        ' '..='~'
        | '\u{a1}'..='\u{ac}'
        | '\u{ae}'..='\u{ff}'
        | '\u{391}'..='\u{3a1}'
        | '\u{3a3}'..='\u{3c9}'
        | '\u{2010}'..='\u{2027}'
        | '\u{2190}'..='\u{21ff}'
        | '\u{2200}'..='\u{22ff}'
        | '\u{2500}'..='\u{25fc}'
        | '\u{25ff}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier, Stylize};
    use ratatui::text::Span;

    fn both(lines: &[Line], area: Rect) -> (Buffer, Buffer) {
        let full = Rect::new(0, 0, 24, 6);
        let mut a = Buffer::empty(full);
        let mut b = Buffer::empty(full);
        // Something under the text, as a frame's earlier widgets leave it.
        for buf in [&mut a, &mut b] {
            buf.set_string(0, 0, "#".repeat(24), Style::default().bg(Color::Blue));
        }
        Lines(lines).render(area, &mut a);
        Paragraph::new(lines.to_vec()).render(area, &mut b);
        (a, b)
    }

    /// The cells equal `Paragraph`'s for ASCII, sparkline and box-drawing text, text in other
    /// scripts (wide characters, combining marks), line and span styles,
    /// lines cut at the width (a wide character across the edge), more lines than rows, an area
    /// off the origin and one past the buffer's edge.
    #[test]
    fn cells_equal_paragraphs() {
        let lines = vec![
            Line::from(vec![
                Span::styled("step ms ", Style::default().fg(Color::Red)),
                Span::raw("▁▂▃▅▇█ ├└─"),
                Span::styled(" 12.5%", Modifier::BOLD),
            ]),
            // One-cell characters before a combining mark and a wide one.
            Line::from(vec![Span::raw("▁▂▃ xe\u{301}y 東 → ·"), Span::raw("éé")]),
            Line::from(vec![
                Span::raw("node 東京-1 "),
                Span::raw("e\u{301}tat·ok"),
                Span::raw("tab here"),
            ])
            .style(Style::default().bg(Color::Green)),
            Line::from("x".repeat(40)).italic(),
            Line::from(vec![Span::raw("1234567890123456789012"), Span::raw("東京")]),
            Line::default(),
            Line::from("🙂 emoji and e\u{301}\u{301} marks"),
            Line::from("one line too many"),
        ];
        for area in [
            Rect::new(0, 0, 24, 6),
            Rect::new(3, 1, 17, 4),
            Rect::new(20, 2, 10, 3),
            Rect::new(0, 0, 1, 6),
        ] {
            let (a, b) = both(&lines, area);
            assert_eq!(a, b, "area {area:?}");
        }
        // With a tab, a BEL and a zero-width space: the cells equal `Paragraph`'s of the text
        // as shown (escaped).
        let hostile = vec![Line::from(vec![
            Span::raw("東 →\t·"),
            Span::raw("gpu1\u{200b}|\u{7}x"),
        ])];
        let full = Rect::new(0, 0, 24, 6);
        let mut a = Buffer::empty(full);
        let mut b = Buffer::empty(full);
        Lines(&hostile).render(full, &mut a);
        Paragraph::new(vec![Line::from(vec![
            Span::raw("東 → ·"),
            Span::raw("gpu1\\u{200b}|\\x07x"),
        ])])
        .render(full, &mut b);
        assert_eq!(a, b);
        // The comparison saw text, not two blank buffers.
        let (a, _) = both(&lines, Rect::new(0, 0, 24, 6));
        assert_eq!(a[(0, 0)].symbol(), "s");
        assert_eq!(a[(8, 0)].symbol(), "▁");
        assert_eq!(a[(0, 0)].fg, Color::Red);
    }

    /// Every character taken a cell at a time is one cell and its own cluster: written next to
    /// ASCII (and to each other) the cells equal `Paragraph`'s.
    #[test]
    fn one_cell_characters_equal_paragraphs() {
        let all: Vec<char> = (0..=0x2fffu32)
            .filter_map(char::from_u32)
            .filter(|c| one_cell(*c))
            .collect();
        assert!(all.len() > 850, "{}", all.len());
        for chunk in all.chunks(10) {
            let text: String = chunk.iter().flat_map(|c| [*c, 'x']).collect();
            let lines = vec![
                Line::from(text.clone()),
                Line::from(format!("{text}{text}")),
            ];
            let (a, b) = both(&lines, Rect::new(1, 1, 22, 3));
            assert_eq!(a, b, "{chunk:?}");
        }
    }

    /// Alignment other than left is `Paragraph`'s own.
    #[test]
    fn aligned_lines_equal_paragraphs() {
        let lines = vec![Line::from("right").right_aligned(), Line::from("left")];
        let (a, b) = both(&lines, Rect::new(2, 1, 20, 3));
        assert_eq!(a, b);
        assert_eq!(a[(21, 1)].symbol(), "t");
    }
}
