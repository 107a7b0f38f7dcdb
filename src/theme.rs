//! Semantic styles (ok, warn, crit, stale, header, selected, ...) loaded from themes/*.toml, which
//! are embedded so the binary needs no files. Widgets ask for a slot, never for a colour, so every
//! theme (and NO_COLOR's mono) applies everywhere.

use ratatui::style::{Color, Modifier, Style};
use std::str::FromStr;

/// Built-in themes, in the order `t` cycles through them.
pub const NAMES: [&str; 4] = ["dark", "light", "mono", "colorblind"];

fn source(name: &str) -> Option<&'static str> {
    match name {
        "dark" => Some(include_str!("../themes/dark.toml")),
        "light" => Some(include_str!("../themes/light.toml")),
        "mono" => Some(include_str!("../themes/mono.toml")),
        "colorblind" => Some(include_str!("../themes/colorblind.toml")),
        _ => None,
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub name: &'static str,
    pub normal: Style,
    pub dim: Style,
    pub header: Style,
    pub accent: Style,
    pub selected: Style,
    pub tab_active: Style,
    pub ok: Style,
    pub warn: Style,
    pub crit: Style,
    pub stale: Style,
    pub border: Style,
    pub chart: Style,
}

impl Theme {
    /// A built-in theme by name.
    pub fn named(name: &str) -> Result<Theme, String> {
        let (name, text) = NAMES
            .iter()
            .find(|n| n.eq_ignore_ascii_case(name))
            .and_then(|n| source(n).map(|t| (*n, t)))
            .ok_or_else(|| format!("unknown theme {name:?} (themes: {})", NAMES.join(", ")))?;
        parse(name, text)
    }

    /// The theme to start with: NO_COLOR wins, then `--theme`, then config `ui.theme`, then dark.
    pub fn pick(cli: Option<&str>, config: &str, no_color: bool) -> Result<Theme, String> {
        if no_color {
            return Theme::named("mono");
        }
        Theme::named(cli.unwrap_or(config))
    }

    /// The next built-in theme (`t`); under NO_COLOR it stays mono.
    pub fn next(&self, no_color: bool) -> Theme {
        if no_color {
            return self.clone();
        }
        let i = NAMES.iter().position(|n| *n == self.name).unwrap_or(0);
        let next = NAMES[(i + 1) % NAMES.len()];
        Theme::named(next).unwrap_or_else(|_| self.clone())
    }
}

impl Theme {
    /// A style as it looks on the selected row. A tone that brings its own background (critical:
    /// white on red) keeps its pair, so a critical cell stays red when selected; any other takes
    /// the selection's colours (an orange `! alert` on the selection's sky blue was unreadable),
    /// keeping its modifiers.
    pub fn on_selected(&self, s: Style) -> Style {
        if s.bg.is_some() {
            s
        } else {
            s.patch(self.selected)
        }
    }

    /// Every slot with its name (for checks over all of them).
    pub fn slots(&self) -> [(&'static str, Style); 12] {
        [
            ("normal", self.normal),
            ("dim", self.dim),
            ("header", self.header),
            ("accent", self.accent),
            ("selected", self.selected),
            ("tab_active", self.tab_active),
            ("ok", self.ok),
            ("warn", self.warn),
            ("crit", self.crit),
            ("stale", self.stale),
            ("border", self.border),
            ("chart", self.chart),
        ]
    }
}

impl Default for Theme {
    fn default() -> Self {
        Theme::named("dark").unwrap_or_else(|_| mono_fallback())
    }
}

/// Used only if an embedded theme failed to parse (a test proves they all parse).
fn mono_fallback() -> Theme {
    let s = Style::default();
    Theme {
        name: "mono",
        normal: s,
        dim: s.add_modifier(Modifier::DIM),
        header: s.add_modifier(Modifier::BOLD),
        accent: s.add_modifier(Modifier::BOLD),
        selected: s.add_modifier(Modifier::REVERSED),
        tab_active: s.add_modifier(Modifier::REVERSED),
        ok: s,
        warn: s.add_modifier(Modifier::BOLD),
        crit: s.add_modifier(Modifier::REVERSED | Modifier::BOLD),
        stale: s.add_modifier(Modifier::DIM),
        border: s,
        chart: s,
    }
}

/// NO_COLOR (https://no-color.org): set and not empty.
pub fn no_color_env() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

fn parse(name: &'static str, text: &str) -> Result<Theme, String> {
    let table: toml::Table = toml::from_str(text).map_err(|e| format!("theme {name}: {e}"))?;
    let mut t = mono_fallback();
    t.name = name;
    for (slot, v) in &table {
        let spec = v
            .as_str()
            .ok_or_else(|| format!("theme {name}: {slot} must be a string"))?;
        let style = parse_style(spec).map_err(|e| format!("theme {name}: {slot}: {e}"))?;
        let target = match slot.as_str() {
            "normal" => &mut t.normal,
            "dim" => &mut t.dim,
            "header" => &mut t.header,
            "accent" => &mut t.accent,
            "selected" => &mut t.selected,
            "tab_active" => &mut t.tab_active,
            "ok" => &mut t.ok,
            "warn" => &mut t.warn,
            "crit" => &mut t.crit,
            "stale" => &mut t.stale,
            "border" => &mut t.border,
            "chart" => &mut t.chart,
            other => return Err(format!("theme {name}: unknown slot {other:?}")),
        };
        *target = style;
    }
    Ok(t)
}

/// `"white on red bold"`, `"#e69f00"`, `"dim italic"`, `""`.
pub fn parse_style(spec: &str) -> Result<Style, String> {
    let mut style = Style::default();
    let mut words = spec.split_whitespace();
    while let Some(w) = words.next() {
        let m = match w.to_ascii_lowercase().as_str() {
            "bold" => Some(Modifier::BOLD),
            "dim" => Some(Modifier::DIM),
            "italic" => Some(Modifier::ITALIC),
            "underlined" => Some(Modifier::UNDERLINED),
            "reversed" => Some(Modifier::REVERSED),
            _ => None,
        };
        if let Some(m) = m {
            style = style.add_modifier(m);
        } else if w.eq_ignore_ascii_case("on") {
            let c = words.next().ok_or("\"on\" needs a colour")?;
            style = style.bg(Color::from_str(c).map_err(|_| format!("unknown colour {c:?}"))?);
        } else {
            style = style.fg(Color::from_str(w).map_err(|_| format!("unknown colour {w:?}"))?);
        }
    }
    Ok(style)
}

#[cfg(test)]
mod contrast;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_theme_parses() {
        for n in NAMES {
            let t = Theme::named(n).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(t.name, n);
            assert_ne!(t.crit, t.normal, "{n}: critical must stand out");
        }
    }

    #[test]
    fn mono_has_no_colour_and_no_color_forces_it() {
        let t = Theme::pick(Some("dark"), "light", true).expect("mono");
        assert_eq!(t.name, "mono");
        for s in [t.normal, t.warn, t.crit, t.selected, t.header, t.ok] {
            assert_eq!(s.fg, None);
            assert_eq!(s.bg, None);
        }
        assert_eq!(t.next(true).name, "mono", "t does not bring colour back");
    }

    #[test]
    fn cli_beats_config_and_t_cycles() {
        assert_eq!(
            Theme::pick(Some("light"), "dark", false).map(|t| t.name),
            Ok("light")
        );
        assert_eq!(
            Theme::pick(None, "colorblind", false).map(|t| t.name),
            Ok("colorblind")
        );
        assert!(Theme::pick(Some("neon"), "dark", false).is_err());
        let mut t = Theme::default();
        let mut seen = vec![t.name];
        for _ in 0..4 {
            t = t.next(false);
            seen.push(t.name);
        }
        assert_eq!(seen, ["dark", "light", "mono", "colorblind", "dark"]);
    }

    #[test]
    fn styles_parse() {
        let s = parse_style("white on red bold").expect("style");
        assert_eq!(s.fg, Some(Color::White));
        assert_eq!(s.bg, Some(Color::Red));
        assert!(s.add_modifier.contains(Modifier::BOLD));
        assert_eq!(
            parse_style("#e69f00").map(|s| s.fg),
            Ok(Some(Color::Rgb(0xe6, 0x9f, 0)))
        );
        assert!(parse_style("on").is_err());
        assert!(parse_style("blurple").is_err());
    }
}
