//! The frame's flush, done here instead of by `Terminal::draw` (issue #20): ratatui-core
//! 0.1.2's `BufferDiff` spends ~147 instructions on every cell, mostly equal ones (a full
//! `Cell::eq` and a unicode width each). Ours settles an equal plain cell with a few compares
//! and keeps `BufferDiff`'s rules for every other cell, so the terminal gets the same writes.
//! The cells go to the terminal through our writer (`write.rs`), byte for byte crossterm's.

use std::mem;

use ratatui::backend::Backend;
use ratatui::buffer::{Buffer, Cell, CellDiffOption, CellWidth};
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier};
use ratatui::{Frame, Terminal};
use write::ColorBytes;
pub use write::DrawCells;

/// What the screen shows, kept beside the `Terminal`, whose own previous buffer goes unused.
pub struct Flusher {
    /// The last frame written, or blank after a resize (ratatui clears the screen then).
    shown: Buffer,
    /// A blank buffer, handed to the terminal as the one the next frame renders into.
    spare: Buffer,
    /// The bytes of the colour pairs written so far.
    colors: ColorBytes,
}

impl Flusher {
    pub fn new() -> Self {
        Self {
            shown: Buffer::empty(Rect::ZERO),
            spare: Buffer::empty(Rect::ZERO),
            colors: ColorBytes::default(),
        }
    }

    /// `Terminal::draw` with our diff: autoresize, render, write the changed cells, set the
    /// cursor, flush. `render` returns the cursor to show (`None`: hidden), as `Frame` keeps
    /// the one set on it private. Frame count and last known cursor position are not kept: a
    /// fullscreen viewport and our widgets never read them.
    pub fn draw<B: DrawCells>(
        &mut self,
        term: &mut Terminal<B>,
        render: impl FnOnce(&mut Frame) -> Option<Position>,
    ) -> Result<(), B::Error> {
        term.autoresize()?;
        let cursor = render(&mut term.get_frame());
        let area = term.current_buffer_mut().area;
        if area != self.shown.area {
            // The first frame, or a resize: the screen was cleared (or is new).
            self.shown = Buffer::empty(area);
            self.spare = Buffer::empty(area);
        }
        mem::swap(term.current_buffer_mut(), &mut self.spare);
        term.backend_mut()
            .draw_cells(Diff::new(&self.shown, &self.spare), &mut self.colors)?;
        match cursor {
            None => term.hide_cursor()?,
            Some(at) => {
                term.show_cursor()?;
                term.set_cursor_position(at)?;
            }
        }
        mem::swap(&mut self.shown, &mut self.spare);
        self.spare.reset();
        Backend::flush(term.backend_mut())
    }
}

/// Modifiers that show on a blank cell (ratatui's `VISIBLE_ON_BLANK`).
const VISIBLE_ON_BLANK: Modifier = Modifier::REVERSED
    .union(Modifier::UNDERLINED)
    .union(Modifier::SLOW_BLINK)
    .union(Modifier::RAPID_BLINK)
    .union(Modifier::CROSSED_OUT);

/// The cells of `next` to write over `prev`, as `(x, y, cell)`, in `Buffer::diff`'s order.
pub struct Diff<'a> {
    prev: &'a [Cell],
    next: &'a [Cell],
    origin: (u16, u16),
    width: usize,
    /// Cells compared: both buffers' rows up to the shorter height.
    len: usize,
    pos: usize,
    trailing: Option<Trailing>,
}

/// Columns after a wide cell still to check: `force` writes each (the old wide cell's style
/// may show there), otherwise only those whose symbol changed (the VS16 emoji case).
struct Trailing {
    at: usize,
    end: usize,
    force: bool,
}

impl<'a> Diff<'a> {
    /// # Panics
    /// If the buffers differ in x, y or width, as `Buffer::diff` does.
    pub fn new(prev: &'a Buffer, next: &'a Buffer) -> Self {
        let (p, n) = (prev.area, next.area);
        assert!(
            p.x == n.x && p.y == n.y && p.width == n.width,
            "buffer areas differ: {p:?} {n:?}"
        );
        Self {
            prev: &prev.content,
            next: &next.content,
            origin: (p.x, p.y),
            width: usize::from(p.width),
            len: usize::from(p.width) * usize::from(p.height.min(n.height)),
            pos: 0,
            trailing: None,
        }
    }

    fn item(&self, i: usize) -> (u16, u16, &'a Cell) {
        let x = i % self.width + usize::from(self.origin.0);
        let y = i / self.width + usize::from(self.origin.1);
        (x as u16, y as u16, &self.next[i])
    }

    /// The next trailing column to write, if any; when none is left, resumes past them.
    fn next_trailing(&mut self) -> Option<usize> {
        let t = self.trailing.as_mut()?;
        while t.at < t.end {
            let j = t.at;
            // A wide cell in the trailing range takes its own trailing columns with it.
            t.at += usize::from(self.next[j].cell_width().max(1));
            t.end = t.end.max(t.at).min(self.len);
            let cell = &self.next[j];
            if !is_skip(cell) && (t.force || self.prev[j].symbol() != cell.symbol()) {
                return Some(j);
            }
        }
        self.pos = t.end;
        self.trailing = None;
        None
    }

    /// `BufferDiff::next`'s rules for cell `i` (already stepped past): whether to write it,
    /// moving `pos` past its trailing columns or queueing them.
    fn changed(&mut self, i: usize) -> bool {
        let (cur, prev) = (&self.next[i], &self.prev[i]);
        if is_skip(cur) {
            return false;
        }
        if let CellDiffOption::ForcedWidth(w) = cur.diff_option {
            self.pos = self.pos.saturating_add(usize::from(w.get()) - 1);
            return cur != prev;
        }
        let width = usize::from(cur.cell_width());
        if cur.diff_option == CellDiffOption::None && cur == prev {
            self.pos += width.saturating_sub(1);
            return false;
        }
        if width > 1 && cur.symbol().contains('\u{FE0F}') {
            let end = (i + width).min(self.len);
            self.trailing = Some(Trailing {
                at: i + 1,
                end,
                force: false,
            });
        } else if width > 1 {
            self.pos += width - 1;
        } else if usize::from(prev.cell_width()) > width
            && (prev.bg != Color::Reset || prev.modifier.intersects(VISIBLE_ON_BLANK))
        {
            let end = i + usize::from(prev.cell_width());
            self.trailing = Some(Trailing {
                at: i + 1,
                end,
                force: true,
            });
        }
        true
    }
}

impl<'a> Iterator for Diff<'a> {
    type Item = (u16, u16, &'a Cell);

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(j) = self.next_trailing() {
            return Some(self.item(j));
        }
        while self.pos < self.len {
            let i = skip_unchanged(self.prev, self.next, self.pos, self.len);
            if i >= self.len {
                self.pos = i;
                break;
            }
            self.pos = i + 1;
            if self.changed(i) {
                return Some(self.item(i));
            }
        }
        None
    }
}

/// The first cell from `from` that is not a plain cell equal to its old one (`len` or past it
/// when every one is): the loop over mostly equal cells, kept free of the iterator's state.
fn skip_unchanged(prev: &[Cell], next: &[Cell], from: usize, len: usize) -> usize {
    let (prev, next) = (&prev[..len], &next[..len]);
    let mut i = from;
    while let (Some(p), Some(n)) = (prev.get(i), next.get(i)) {
        match unchanged_step(p, n) {
            Some(step) => i += step,
            None => break,
        }
    }
    i
}

/// The cells to step over when `next` is a plain cell equal to `prev` (the common case, and
/// the one ratatui skips without writing); `None` for any other pair.
#[allow(deprecated)] // `skip` is deprecated but still honoured by ratatui's diff
fn unchanged_step(prev: &Cell, next: &Cell) -> Option<usize> {
    // `Cell::eq`'s fields one by one (`style()` would build Options). `underline_color`
    // exists with ratatui's default `underline-color` feature: without it, this stops compiling.
    let plain = |c: &Cell| matches!(c.diff_option, CellDiffOption::None) && !c.skip;
    let same_style = next.fg == prev.fg
        && next.bg == prev.bg
        && next.modifier == prev.modifier
        && next.underline_color == prev.underline_color;
    if !(same_style && plain(next) && plain(prev)) {
        return None;
    }
    let (a, b) = (next.symbol().as_bytes(), prev.symbol().as_bytes());
    let same = match (a, b) {
        ([x], [y]) => x == y,
        _ => a == b,
    };
    // A symbol of one byte is at most one column wide: no width lookup needed.
    same.then(|| match a.len() {
        0 | 1 => 1,
        _ => usize::from(next.cell_width()).max(1),
    })
}

/// ratatui's `is_skip`: the `Skip` option, or the deprecated flag on a plain cell.
#[allow(deprecated)]
fn is_skip(cell: &Cell) -> bool {
    cell.diff_option == CellDiffOption::Skip
        || (cell.skip && cell.diff_option == CellDiffOption::None)
}

#[cfg(test)]
mod tests;
mod write;
