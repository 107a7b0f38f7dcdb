//! Records hard-wrapped at a fixed column (a console that folds its lines, `fold -w`, a logger
//! with a width): every piece but the last is exactly that many characters long, cut anywhere,
//! mid-word or mid-number. The column is learnt from the text itself: the length of the longest
//! lines when at least three different lines have exactly that length and none is longer. A line of
//! that length is then held until the next line of the same rank, and the two are read as one when
//! that reads at least as much as reading them apart (so two fixed-width records that happen to be
//! the longest lines stay two: glued, one of their numbers would be lost).

/// The shortest column taken for a wrap (shorter lines are headers and bars, not wrapped records).
const MIN_WIDTH: usize = 24;
/// How many lines of the longest length, two of them different, make it a column.
const AT_MAX: u32 = 3;

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
}

impl Guess {
    /// The wrap column, once seen.
    pub fn width(&self) -> Option<usize> {
        (self.max >= MIN_WIDTH && self.at_max >= AT_MAX && self.distinct).then_some(self.max)
    }

    /// One body (a line without its rank prefix).
    pub fn observe(&mut self, body: &str) {
        let len = body.chars().count();
        if len > self.max {
            *self = Guess {
                max: len,
                at_max: 1,
                first: hash(body),
                distinct: false,
            };
        } else if len == self.max {
            self.at_max = self.at_max.saturating_add(1);
            self.distinct |= hash(body) != self.first;
        }
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
    fn the_column_is_the_length_of_the_longest_lines() {
        let mut g = Guess::default();
        for rec in [
            "step: 10 | loss: 2.3456 | time(ms): 120.5 | samples/s: 12",
            "step: 11 | loss: 2.3311 | time(ms): 121.0 | samples/s: 12",
            "step: 12 | loss: 2.3007 | time(ms): 119.9 | samples/s: 13",
        ] {
            let (a, b) = rec.split_at(30);
            g.observe(a);
            g.observe(b);
        }
        assert_eq!(g.width(), Some(30));
        g.observe(&"x".repeat(31));
        assert_eq!(g.width(), None);
    }

    #[test]
    fn the_same_line_from_every_rank_is_no_column() {
        let mut g = Guess::default();
        for _ in 0..8 {
            g.observe("step: 10 | loss: 2.3456 | time(ms): 120.5");
        }
        assert_eq!(g.width(), None);
    }
}
