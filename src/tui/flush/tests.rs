//! Our diff against ratatui's `Buffer::diff` on random buffers, and our draw against
//! `Terminal::draw` on `TestBackend`s through several frames and resizes.

use super::*;
use proptest::prelude::*;
use ratatui::backend::TestBackend;
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph};
use std::num::NonZeroU16;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Symbols covering ASCII, the blank default, empty, wide CJK, VS16 emoji and a wide emoji.
const SYMBOLS: [Option<&str>; 8] = [
    None,
    Some(" "),
    Some("a"),
    Some("b"),
    Some(""),
    Some("中"),
    Some("\u{2764}\u{FE0F}"),
    Some("😀"),
];

fn cell() -> impl Strategy<Value = Cell> {
    let colors = prop::sample::select(vec![Color::Reset, Color::Red, Color::Indexed(4)]);
    let mods = prop::sample::select(vec![
        Modifier::empty(),
        Modifier::REVERSED,
        Modifier::BOLD,
        Modifier::UNDERLINED,
    ]);
    let option = prop_oneof![
        6 => Just(CellDiffOption::None),
        1 => Just(CellDiffOption::Skip),
        1 => Just(CellDiffOption::AlwaysUpdate),
        1 => (1u16..4).prop_map(|w| CellDiffOption::ForcedWidth(NonZeroU16::new(w).expect("w > 0"))),
    ];
    (
        prop::sample::select(SYMBOLS.to_vec()),
        colors.clone(),
        colors,
        mods,
        option,
        prop::bool::weighted(0.1),
    )
        .prop_map(|(sym, fg, bg, modifier, diff_option, skip)| {
            let mut c = Cell::EMPTY;
            if let Some(s) = sym {
                c.set_symbol(s);
            }
            c.fg = fg;
            c.bg = bg;
            c.modifier = modifier;
            c.diff_option = diff_option;
            #[allow(deprecated)]
            c.set_skip(skip);
            c
        })
}

fn buffer(area: Rect) -> impl Strategy<Value = Buffer> {
    let n = usize::from(area.width) * usize::from(area.height);
    prop::collection::vec(cell(), n).prop_map(move |content| Buffer { area, content })
}

/// Two buffers of the same x, y and width, heights that may differ; `next` often mostly
/// equal to `prev`, as between real frames.
fn pair() -> impl Strategy<Value = (Buffer, Buffer)> {
    (0u16..3, 0u16..3, 1u16..9, 0u16..5, 0u16..5)
        .prop_flat_map(|(x, y, w, h1, h2)| {
            let prev = buffer(Rect::new(x, y, w, h1));
            let next = buffer(Rect::new(x, y, w, h2));
            let keep = prop::collection::vec(prop::bool::weighted(0.7), usize::from(w * h2));
            (prev, next, keep)
        })
        .prop_map(|(prev, mut next, keep)| {
            for (i, k) in keep.into_iter().enumerate() {
                if k && i < prev.content.len() {
                    next.content[i] = prev.content[i].clone();
                }
            }
            (prev, next)
        })
}

/// A diff as positions and the identity of each cell yielded; `Err` where it panicked.
type Writes = Result<Vec<(u16, u16, usize)>, ()>;

fn writes<'a>(diff: impl FnOnce() -> Vec<(u16, u16, &'a Cell)>) -> Writes {
    let cells = catch_unwind(AssertUnwindSafe(diff)).map_err(|_| ())?;
    Ok(cells
        .into_iter()
        .map(|(x, y, c)| (x, y, std::ptr::from_ref(c) as usize))
        .collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn diff_yields_what_ratatui_yields((prev, next) in pair()) {
        let ours = writes(|| Diff::new(&prev, &next).collect());
        let theirs = writes(|| prev.diff(&next));
        prop_assert_eq!(ours, theirs);
    }
}

/// One frame of changing content: wide and emoji text, styles, a border, maybe a cursor.
fn scene(f: &mut Frame, step: usize) -> Option<Position> {
    let text = match step % 4 {
        0 => "plain ascii text",
        1 => "中文 wide 字符",
        2 => "emoji \u{2764}\u{FE0F} ok 😀",
        _ => "",
    };
    let line = Line::from(format!("{text} #{step}")).style(if step % 2 == 0 {
        ratatui::style::Style::new().add_modifier(Modifier::REVERSED)
    } else {
        ratatui::style::Style::new().bg(Color::Blue)
    });
    let block = Block::bordered().title(format!("tab {}", step % 3));
    f.render_widget(
        Paragraph::new(vec![line; step % 3 + 1]).block(block),
        f.area(),
    );
    (step % 5 == 1).then_some(Position::new(1, step as u16 % 3))
}

#[test]
fn draw_writes_what_terminal_draw_writes() {
    let sizes = [
        (30, 6),
        (30, 6),
        (30, 6),
        (20, 4),
        (20, 4),
        (40, 8),
        (40, 8),
        (12, 3),
    ];
    let mut ours = Terminal::new(TestBackend::new(30, 6)).unwrap();
    let mut theirs = Terminal::new(TestBackend::new(30, 6)).unwrap();
    let mut flusher = Flusher::new();
    for (step, (w, h)) in sizes.into_iter().enumerate() {
        ours.backend_mut().resize(w, h);
        theirs.backend_mut().resize(w, h);
        flusher.draw(&mut ours, |f| scene(f, step)).unwrap();
        let done = theirs.draw(|f| {
            if let Some(at) = scene(f, step) {
                f.set_cursor_position(at);
            }
        });
        let done = done.unwrap().buffer.clone();
        assert_eq!(ours.backend(), theirs.backend(), "step {step}");
        // Wide cells' trailing columns are never written (ratatui's rule), so the screen
        // equals the frame only when the frame has none.
        if step % 4 == 0 || step % 4 == 3 {
            assert_eq!(ours.backend().buffer(), &done, "step {step}");
        }
    }
}

/// Any style a cell can hold: every modifier combination and colours of each kind.
fn styled_cell() -> impl Strategy<Value = Cell> {
    let color = prop::sample::select(vec![
        Color::Reset,
        Color::Black,
        Color::Red,
        Color::LightRed,
        Color::DarkGray,
        Color::White,
        Color::Indexed(200),
        Color::Rgb(1, 20, 255),
    ]);
    (
        cell(),
        color.clone(),
        color.clone(),
        color,
        0u16..=Modifier::all().bits(),
    )
        .prop_map(|(mut c, fg, bg, underline, bits)| {
            c.fg = fg;
            c.bg = bg;
            c.underline_color = underline;
            c.modifier = Modifier::from_bits_truncate(bits);
            c
        })
}

/// Two buffers of one area placed where the cursor moves have 1 to 5 digits, `next` mostly
/// equal to `prev`.
fn styled_pair() -> impl Strategy<Value = (Buffer, Buffer)> {
    let at = prop::sample::select(vec![0u16, 1, 8, 9, 98, 990, 9_998, 65_520]);
    (at.clone(), at, 1u16..12, 1u16..5)
        .prop_flat_map(|(x, y, w, h)| {
            let area = Rect::new(x, y, w, h);
            let cells = usize::from(w * h);
            let content = |n| prop::collection::vec(styled_cell(), n);
            let keep = prop::collection::vec(prop::bool::weighted(0.6), cells);
            (Just(area), content(cells), content(cells), keep)
        })
        .prop_map(|(area, prev, mut next, keep)| {
            for (i, k) in keep.into_iter().enumerate() {
                if k {
                    next[i] = prev[i].clone();
                }
            }
            let buf = |content| Buffer { area, content };
            (buf(prev), buf(next))
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    /// Our writer's bytes are `CrosstermBackend::draw`'s for the same cells: cursor moves of
    /// every digit count, adjacent cells, each modifier on and off, colours of each kind.
    #[test]
    fn writer_writes_what_crossterm_backend_writes((prev, next) in styled_pair()) {
        // Cells ratatui's diff panics on (a forced width past the end) panic in both.
        // Twice with one memo of colour pairs: the second writes every pair from it.
        let mut colors = write::ColorBytes::default();
        let mut ours = || catch_unwind(AssertUnwindSafe(|| {
            let mut out = Vec::new();
            write::write_cells(&mut out, Diff::new(&prev, &next), &mut colors).expect("to a Vec");
            out
        }));
        let (ours, again) = (ours(), ours());
        let theirs = catch_unwind(AssertUnwindSafe(|| {
            let mut out = Vec::new();
            ratatui::backend::CrosstermBackend::new(&mut out)
                .draw(Diff::new(&prev, &next))
                .expect("to a Vec");
            out
        }));
        let text = |r: &Result<Vec<u8>, _>| r.as_ref().ok().map(|b| String::from_utf8_lossy(b).into_owned());
        prop_assert_eq!(ours.is_ok(), theirs.is_ok());
        prop_assert_eq!(text(&ours), text(&theirs));
        prop_assert_eq!(text(&again), text(&theirs));
    }
}
