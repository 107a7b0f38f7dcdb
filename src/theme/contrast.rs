//! WCAG 2 contrast of every built-in theme's text: each slot on its own background (or the
//! terminal's), and each slot as it is drawn on the selected row, must reach 4.5:1 (AA, normal
//! text). Named colours are the xterm palette; dark themes are assumed on a black terminal, the
//! light one on white. `mono` sets no colour (the terminal's own pair, reversed when selected).

use super::{NAMES, Theme};
use ratatui::style::{Color, Style};

/// xterm's default palette for the 16 named colours.
fn rgb(c: Color) -> Option<(u8, u8, u8)> {
    Some(match c {
        Color::Black => (0, 0, 0),
        Color::Red => (0xcd, 0, 0),
        Color::Green => (0, 0xcd, 0),
        Color::Yellow => (0xcd, 0xcd, 0),
        Color::Blue => (0, 0, 0xee),
        Color::Magenta => (0xcd, 0, 0xcd),
        Color::Cyan => (0, 0xcd, 0xcd),
        Color::Gray => (0xe5, 0xe5, 0xe5),
        Color::DarkGray => (0x7f, 0x7f, 0x7f),
        Color::LightRed => (0xff, 0, 0),
        Color::LightGreen => (0, 0xff, 0),
        Color::LightYellow => (0xff, 0xff, 0),
        Color::LightBlue => (0x5c, 0x5c, 0xff),
        Color::LightMagenta => (0xff, 0, 0xff),
        Color::LightCyan => (0, 0xff, 0xff),
        Color::White => (0xff, 0xff, 0xff),
        Color::Rgb(r, g, b) => (r, g, b),
        _ => return None,
    })
}

/// WCAG relative luminance.
fn luminance((r, g, b): (u8, u8, u8)) -> f64 {
    let lin = |c: u8| {
        let c = f64::from(c) / 255.0;
        if c <= 0.039_28 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b)
}

fn ratio(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let (x, y) = (luminance(a), luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

/// (foreground, background) of a style on a terminal whose own colours are `term`.
fn pair(s: Style, term: ((u8, u8, u8), (u8, u8, u8))) -> ((u8, u8, u8), (u8, u8, u8)) {
    let fg = s.fg.and_then(rgb).unwrap_or(term.0);
    let bg = s.bg.and_then(rgb).unwrap_or(term.1);
    (fg, bg)
}

/// Every (what, ratio) of a theme below 4.5:1.
fn failures(t: &Theme) -> Vec<String> {
    let term = if t.name == "light" {
        ((0, 0, 0), (0xff, 0xff, 0xff))
    } else {
        ((0xe5, 0xe5, 0xe5), (0, 0, 0))
    };
    let mut bad = Vec::new();
    for (slot, s) in t.slots() {
        for (what, style) in [
            (slot.to_string(), s),
            (format!("{slot} on the selected row"), t.on_selected(s)),
        ] {
            let (fg, bg) = pair(style, term);
            let r = ratio(fg, bg);
            if r < 4.5 {
                bad.push(format!("{}: {what} {fg:?} on {bg:?} = {r:.2}:1", t.name));
            }
        }
    }
    bad
}

#[test]
fn the_ratio_is_wcags() {
    assert!((ratio((0, 0, 0), (255, 255, 255)) - 21.0).abs() < 1e-9);
    // The reported colorblind failure: orange #e69f00 on sky blue #56b4e9.
    let r = ratio((0xe6, 0x9f, 0), (0x56, 0xb4, 0xe9));
    assert!((r - 1.02).abs() < 0.01, "{r}");
}

#[test]
fn every_theme_reads_at_aa_contrast_selected_rows_included() {
    let bad: Vec<String> = NAMES
        .iter()
        .flat_map(|n| failures(&Theme::named(n).expect("theme parses")))
        .collect();
    assert!(bad.is_empty(), "below 4.5:1:\n{}", bad.join("\n"));
}
