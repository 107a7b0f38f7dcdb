//! How a source is doing at a time T (up, stale, down, waiting), and the one row a source
//! without data gets on every tab.

use super::table::{Cell, Row, RowId, Tone};
use crate::metrics::Ts;

/// How a source is doing, for rows that show its data.
#[derive(Clone, Debug, PartialEq)]
pub enum SrcState {
    /// No such source in the config.
    Unknown,
    Waiting,
    Up,
    Stale(i64),
    /// Why, and how old the numbers left on screen are (a hung host can be down for minutes).
    Down(String, Option<i64>),
}

impl SrcState {
    /// A source's state at `now`.
    pub fn of(h: Option<&crate::metrics::store::SourceHealth>, now: Ts) -> SrcState {
        match h {
            None => SrcState::Unknown,
            Some(h) => match h.up {
                None => SrcState::Waiting,
                // Shown escaped, like the printed commands (ratatui would drop the bytes).
                Some(false) => SrcState::Down(
                    h.last_error
                        .as_deref()
                        .map_or_else(|| "no answer".into(), |e| crate::safe::line(e).into_owned()),
                    h.age_ms(now),
                ),
                Some(true) if h.is_stale(now) => SrcState::Stale(h.age_ms(now).unwrap_or(0)),
                Some(true) => SrcState::Up,
            },
        }
    }

    /// A row's tone.
    pub fn row_tone(&self) -> Tone {
        match self {
            SrcState::Stale(_) => Tone::Stale,
            _ => Tone::Normal,
        }
    }

    /// For sources without data, the text spanning where the data would be.
    pub fn span(&self, what: &str) -> Option<Cell> {
        match self {
            SrcState::Waiting => Some(Cell::tone(
                format!("waiting for the first poll of {what}"),
                Tone::Dim,
            )),
            SrcState::Down(e, age) => {
                let e = match age {
                    Some(a) => format!("{e}, last data {} ago", age_text(*a)),
                    None => e.clone(),
                };
                Some(Cell::tone(format!("{what} down: {e}"), Tone::Crit))
            }
            _ => None,
        }
    }

    /// Short state text: "ok", "stale 12s", "down", "waiting".
    pub fn word(&self) -> String {
        match self {
            SrcState::Unknown => "-".into(),
            SrcState::Waiting => "waiting".into(),
            SrcState::Up => "ok".into(),
            SrcState::Stale(ms) => format!("stale {}", age_text(*ms)),
            SrcState::Down(..) => "down".into(),
        }
    }

    /// The one row a source without data gets (down, waiting for its first poll, or up but with
    /// none of `what` parsed yet), built alike on every tab; `None` when the source has data.
    /// `has_rows`: whether the source has any row of its own on this tab.
    pub fn source_row(&self, name: &str, has_rows: bool, what: &str) -> Option<Row> {
        let span = self.span(name).or_else(|| {
            (!has_rows && *self != SrcState::Unknown).then(|| {
                Cell::tone(
                    format!("waiting for {what} from {name} (none parsed yet)"),
                    Tone::Dim,
                )
            })
        })?;
        Some(Row {
            id: RowId::Source(name.into()),
            name: name.into(),
            cells: vec![Cell::new(name)],
            span: Some((1, span)),
            // A source that is down is the worst thing on any tab.
            score: if matches!(self, SrcState::Down(..)) {
                1e12
            } else {
                0.0
            },
            tone: self.row_tone(),
            ..Default::default()
        })
    }
}

/// "12s", "4m10s", "2h05m".
pub fn age_text(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    }
}
