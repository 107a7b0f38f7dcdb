//! Records hard-wrapped at a fixed column (a console that folds its lines, `fold -w`, a logger
//! with a width): every piece but the last is exactly that many characters long, cut anywhere,
//! mid-word or mid-number. The column is learnt from the text itself: the length of the longest
//! lines when at least three different lines have exactly that length, none is longer, and at
//! least two of them go on on the next line (of the same rank) with text that starts unlike them.
//! That last test tells a wrapped log from a log of fixed-width records (MetricLogger, DINO,
//! fairseq): their longest lines are followed by the next record, which starts as they do, or by
//! a line of its own (`{'loss': ...`, `[2023-...`). A line of that length is then held until the
//! next line of the same rank, and `joins` decides whether the two are one.

/// The shortest column taken for a wrap (shorter lines are headers and bars, not wrapped records).
const MIN_WIDTH: usize = 24;
/// How many lines of the longest length, two of them different, make it a column.
const AT_MAX: u32 = 3;
/// How many of them followed by a line that goes on with them.
const CUT: u32 = 2;
/// How many characters of a line's start are compared.
const START: usize = 4;

/// What has been seen of the longest lines.
#[derive(Debug, Default)]
pub(super) struct Guess {
    /// The longest body so far, in characters.
    max: usize,
    /// Bodies of exactly `max` characters.
    at_max: u32,
    /// Of those, some differ from the first (two ranks print the same line).
    distinct: bool,
    first: u64,
    /// Of those, the ones the next line of their rank went on with.
    cut: u32,
    /// The last body had `max` characters: its rank and its start, for the next line to compare.
    open: Option<(Option<u32>, [char; START])>,
}

fn start(body: &str) -> [char; START] {
    let mut out = [' '; START];
    for (slot, c) in out.iter_mut().zip(body.chars()) {
        *slot = c;
    }
    out
}

impl Guess {
    /// The wrap column, once seen.
    pub fn width(&self) -> Option<usize> {
        (self.max >= MIN_WIDTH && self.at_max >= AT_MAX && self.distinct && self.cut >= CUT)
            .then_some(self.max)
    }

    /// One body (a line without its rank prefix), with the rank its prefix named.
    pub fn observe(&mut self, body: &str, rank: Option<u32>) {
        if body.trim().is_empty() {
            return;
        }
        if let Some((r, s)) = self.open.take()
            && r == rank
            && start(body) != s
            && !body.starts_with(['{', '['])
        {
            self.cut = self.cut.saturating_add(1);
        }
        let len = body.chars().count();
        if len > self.max {
            *self = Guess {
                max: len,
                at_max: 1,
                first: hash(body),
                ..Guess::default()
            };
        } else if len == self.max {
            self.at_max = self.at_max.saturating_add(1);
            self.distinct |= hash(body) != self.first;
        } else {
            return;
        }
        self.open = Some((rank, start(body)));
    }
}

/// A body waiting for the rest of its record.
#[derive(Debug)]
pub(super) struct Held {
    /// The line as printed (its prefix, then its body and the bodies of the lines joined to it).
    pub raw: String,
    /// Where the body starts in `raw`.
    pub body_at: usize,
    pub rank: Option<u32>,
}

impl Held {
    pub fn body(&self) -> &str {
        self.raw.get(self.body_at..).unwrap_or("")
    }
}

fn hash(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_column_is_the_length_of_the_longest_lines_that_go_on() {
        let mut g = Guess::default();
        for rec in [
            "step: 10 | loss: 2.3456 | time(ms): 120.5 | samples/s: 12",
            "step: 11 | loss: 2.3311 | time(ms): 121.0 | samples/s: 12",
            "step: 12 | loss: 2.3007 | time(ms): 119.9 | samples/s: 13",
        ] {
            let (a, b) = rec.split_at(30);
            g.observe(a, Some(0));
            g.observe(b, Some(0));
        }
        assert_eq!(g.width(), Some(30));
        g.observe(&"x".repeat(31), None);
        assert_eq!(g.width(), None);
    }

    #[test]
    fn fixed_width_records_and_repeated_lines_are_no_column() {
        let mut g = Guess::default();
        for i in 0..8 {
            g.observe(&format!("Epoch: [0]  [{i:>4}/2502]  loss: 5.385776"), None);
        }
        assert_eq!(g.width(), None);
        let mut g = Guess::default();
        for _ in 0..8 {
            g.observe("step: 10 | loss: 2.3456 | time(ms): 120.5", None);
            g.observe("{'loss': 2.1}", None);
        }
        assert_eq!(g.width(), None);
    }
}
