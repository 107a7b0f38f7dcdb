//! The changed cells to the terminal: the bytes `CrosstermBackend::draw` writes (a proptest
//! compares them), with the two commands nearly every cell needs, the cursor move and the
//! symbol, written directly. crossterm sends each command through `fmt::write` and an
//! `io::Write` adapter, ~270 instructions a command, the larger part of a frame's writing
//! (issue #20). A colour change writes the bytes crossterm made for that pair the first time
//! it was shown; modifiers, rarer, still go through crossterm's commands.

use std::io::{self, Write};

use ratatui::backend::{CrosstermBackend, IntoCrossterm, TestBackend};
use ratatui::buffer::Cell;
use ratatui::crossterm::queue;
use ratatui::crossterm::style::{
    Attribute, Color as CColor, Colors, SetAttribute, SetBackgroundColor, SetColors,
    SetForegroundColor, SetUnderlineColor,
};
use ratatui::style::{Color, Modifier};

use crate::metrics::human::digits;

/// A backend the flush hands its changed cells to.
pub trait DrawCells: ratatui::backend::Backend {
    fn draw_cells<'a>(
        &mut self,
        cells: impl Iterator<Item = (u16, u16, &'a Cell)>,
        colors: &mut ColorBytes,
    ) -> Result<(), Self::Error>;
}

impl<W: Write> DrawCells for CrosstermBackend<W> {
    fn draw_cells<'a>(
        &mut self,
        cells: impl Iterator<Item = (u16, u16, &'a Cell)>,
        colors: &mut ColorBytes,
    ) -> io::Result<()> {
        // The backend is an `io::Write` passing bytes to its writer.
        write_cells(self, cells, colors)
    }
}

/// The tests' backend keeps cells, not bytes: its own `draw`.
impl DrawCells for TestBackend {
    fn draw_cells<'a>(
        &mut self,
        cells: impl Iterator<Item = (u16, u16, &'a Cell)>,
        _: &mut ColorBytes,
    ) -> Result<(), Self::Error> {
        ratatui::backend::Backend::draw(self, cells)
    }
}

/// `CrosstermBackend::draw`: for each cell, a move unless it follows the last one on its row,
/// the modifiers, colours and underline colour that changed, the symbol; then every style reset.
pub fn write_cells<'a, W: Write>(
    w: &mut W,
    cells: impl Iterator<Item = (u16, u16, &'a Cell)>,
    colors: &mut ColorBytes,
) -> io::Result<()> {
    let (mut fg, mut bg, mut underline) = (Color::Reset, Color::Reset, Color::Reset);
    let mut modifier = Modifier::empty();
    let mut last: Option<(u16, u16)> = None;
    for (x, y, cell) in cells {
        if !matches!(last, Some((lx, ly)) if u32::from(x) == u32::from(lx) + 1 && y == ly) {
            move_to(w, x, y)?;
        }
        last = Some((x, y));
        if cell.modifier != modifier {
            modifiers(w, modifier, cell.modifier)?;
            modifier = cell.modifier;
        }
        if cell.fg != fg || cell.bg != bg {
            colors.write(w, cell.fg, cell.bg)?;
            (fg, bg) = (cell.fg, cell.bg);
        }
        if cell.underline_color != underline {
            queue!(w, SetUnderlineColor(cell.underline_color.into_crossterm()))?;
            underline = cell.underline_color;
        }
        w.write_all(cell.symbol().as_bytes())?;
    }
    queue!(
        w,
        SetForegroundColor(CColor::Reset),
        SetBackgroundColor(CColor::Reset),
        SetUnderlineColor(CColor::Reset),
        SetAttribute(Attribute::Reset),
    )
}

/// The bytes of crossterm's `SetColors` for the colour pairs shown, made by crossterm (it
/// honours `NO_COLOR`) the first time each is written: a screen uses a dozen pairs.
#[derive(Default)]
pub struct ColorBytes {
    pairs: Vec<(Color, Color, Vec<u8>)>,
}

/// Pairs kept at most (a theme of many RGB colours would cycle): past it, all are made again.
const MAX_PAIRS: usize = 32;

impl ColorBytes {
    fn write<W: Write>(&mut self, w: &mut W, fg: Color, bg: Color) -> io::Result<()> {
        if let Some((.., bytes)) = self.pairs.iter().find(|(f, b, _)| (*f, *b) == (fg, bg)) {
            return w.write_all(bytes);
        }
        let mut bytes = Vec::new();
        let pair = Colors::new(fg.into_crossterm(), bg.into_crossterm());
        queue!(bytes, SetColors(pair))?;
        w.write_all(&bytes)?;
        if self.pairs.len() == MAX_PAIRS {
            self.pairs.clear();
        }
        self.pairs.push((fg, bg, bytes));
        Ok(())
    }
}

/// crossterm's `MoveTo(x, y)`: `ESC [ row ; column H`, both counted from 1.
fn move_to<W: Write>(w: &mut W, x: u16, y: u16) -> io::Result<()> {
    let mut out = [0u8; 16];
    let mut n = 0;
    let (mut row, mut col) = ([0u8; 20], [0u8; 20]);
    for part in [
        "\x1b[",
        digits(u64::from(y) + 1, &mut row),
        ";",
        digits(u64::from(x) + 1, &mut col),
        "H",
    ] {
        out[n..n + part.len()].copy_from_slice(part.as_bytes());
        n += part.len();
    }
    w.write_all(&out[..n])
}

/// ratatui-crossterm's `ModifierDiff::queue` (private there): attributes turned off, then on,
/// in its order; bold and dim share one reset, after which those still wanted come back.
fn modifiers<W: Write>(w: &mut W, from: Modifier, to: Modifier) -> io::Result<()> {
    let removed = from - to;
    let added = to - from;
    let reset_intensity = removed.intersects(Modifier::BOLD | Modifier::DIM);
    let mut set = |a: Attribute| queue!(w, SetAttribute(a));
    if removed.contains(Modifier::REVERSED) {
        set(Attribute::NoReverse)?;
    }
    if reset_intensity {
        set(Attribute::NormalIntensity)?;
        if to.contains(Modifier::DIM) {
            set(Attribute::Dim)?;
        }
        if to.contains(Modifier::BOLD) {
            set(Attribute::Bold)?;
        }
    }
    for (m, a) in [
        (Modifier::ITALIC, Attribute::NoItalic),
        (Modifier::UNDERLINED, Attribute::NoUnderline),
        (Modifier::CROSSED_OUT, Attribute::NotCrossedOut),
        (Modifier::HIDDEN, Attribute::NoHidden),
    ] {
        if removed.contains(m) {
            set(a)?;
        }
    }
    if removed.intersects(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK) {
        set(Attribute::NoBlink)?;
    }
    let intensity = |m: Modifier| added.contains(m) && !reset_intensity;
    let on = [
        (added.contains(Modifier::REVERSED), Attribute::Reverse),
        (intensity(Modifier::BOLD), Attribute::Bold),
        (added.contains(Modifier::ITALIC), Attribute::Italic),
        (added.contains(Modifier::UNDERLINED), Attribute::Underlined),
        (intensity(Modifier::DIM), Attribute::Dim),
        (added.contains(Modifier::CROSSED_OUT), Attribute::CrossedOut),
        (added.contains(Modifier::HIDDEN), Attribute::Hidden),
        (added.contains(Modifier::SLOW_BLINK), Attribute::SlowBlink),
        (added.contains(Modifier::RAPID_BLINK), Attribute::RapidBlink),
    ];
    for (wanted, a) in on {
        if wanted {
            set(a)?;
        }
    }
    Ok(())
}
