//! Resuming a broken stream without showing lines twice or losing the ones written meanwhile.
//!
//! After a reconnect the follower asks for the last [`RESUME_LINES`] lines again (`tail -n K -F`:
//! the only way a remote `tail` can give back what was written while the connection was down).
//! Those K lines overlap what was already seen; [`Resume`] remembers a hash of each of the last K
//! lines delivered, holds back the first lines of the new stream, and drops them up to the latest
//! point where they end with the lines delivered last. When nothing overlaps and the held lines fill
//! the whole window, more than K lines were written during the outage: some are missing, and a note
//! says so. Identical lines (the same message printed twice) can make the overlap look longer than
//! it was; that costs at most those repeated lines, never a duplicate.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Lines asked for again after a reconnect.
pub const RESUME_LINES: usize = 100;

#[derive(Debug)]
pub struct Resume {
    window: usize,
    recent: VecDeque<u64>,
    /// Lines of a new stream held back until the overlap is known.
    held: Option<Vec<(u64, String)>>,
}

fn hash(line: &str) -> u64 {
    let mut h = DefaultHasher::new();
    line.hash(&mut h);
    h.finish()
}

impl Resume {
    pub fn new(window: usize) -> Self {
        Self {
            window: window.max(1),
            recent: VecDeque::new(),
            held: None,
        }
    }

    /// A new stream began that repeats up to `window` lines: hold its first lines back.
    pub fn reconnected(&mut self) {
        self.held = Some(Vec::new());
    }

    /// Holding lines back right now.
    pub fn holding(&self) -> bool {
        self.held.is_some()
    }

    /// Lines held back so far.
    pub fn held(&self) -> usize {
        self.held.as_ref().map_or(0, Vec::len)
    }

    /// A line from the stream; the lines to deliver now (none while holding), and a note when
    /// lines were lost.
    pub fn line(&mut self, line: String) -> (Vec<String>, Option<String>) {
        let h = hash(&line);
        match self.held.as_mut() {
            Some(held) => {
                held.push((h, line));
                if held.len() >= self.window {
                    return self.resolve();
                }
                (Vec::new(), None)
            }
            None => {
                self.remember(h);
                (vec![line], None)
            }
        }
    }

    /// The new stream's repeat is over (the window is full, or the stream went quiet): the held
    /// lines past the overlap, and a note when some lines may be missing.
    pub fn resolve(&mut self) -> (Vec<String>, Option<String>) {
        let Some(held) = self.held.take() else {
            return (Vec::new(), None);
        };
        // The new stream starts further back than the last line delivered: cut it after the
        // latest line where it ends with what was delivered last.
        let recent: Vec<u64> = self.recent.iter().copied().collect();
        let hashes: Vec<u64> = held.iter().map(|(h, _)| *h).collect();
        let overlap = (1..=hashes.len())
            .rev()
            .find(|&j| {
                let m = j.min(recent.len());
                m > 0 && hashes.get(j - m..j) == recent.get(recent.len() - m..)
            })
            .unwrap_or(0);
        let note = (overlap == 0 && !self.recent.is_empty() && held.len() >= self.window).then(
            || {
                format!(
                    "reconnected: more than {} lines were written while the log stream was down; some are not shown",
                    self.window
                )
            },
        );
        let mut out = Vec::with_capacity(held.len() - overlap);
        for (h, line) in held.into_iter().skip(overlap) {
            self.remember(h);
            out.push(line);
        }
        (out, note)
    }

    fn remember(&mut self, h: u64) {
        if self.recent.len() == self.window {
            self.recent.pop_front();
        }
        self.recent.push_back(h);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(r: &mut Resume, lines: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        for l in lines {
            out.extend(r.line(l.to_string()).0);
        }
        out
    }

    #[test]
    fn the_repeated_lines_are_dropped_and_the_new_ones_kept() {
        let mut r = Resume::new(4);
        assert_eq!(
            feed(&mut r, &["a", "b", "c", "d", "e"]),
            ["a", "b", "c", "d", "e"]
        );
        r.reconnected();
        // tail -n 4 after f and g were written while down: d e f g.
        assert!(feed(&mut r, &["d", "e", "f"]).is_empty(), "held");
        assert_eq!(feed(&mut r, &["g"]), ["f", "g"]);
        assert!(!r.holding());
        assert_eq!(feed(&mut r, &["h"]), ["h"]);
    }

    #[test]
    fn a_short_file_resolves_when_the_stream_goes_quiet() {
        let mut r = Resume::new(100);
        feed(&mut r, &["a", "b"]);
        r.reconnected();
        assert!(feed(&mut r, &["a", "b", "c"]).is_empty());
        assert_eq!(r.resolve(), (vec!["c".to_string()], None));
    }

    #[test]
    fn the_new_stream_may_start_before_the_lines_seen() {
        let mut r = Resume::new(5);
        feed(&mut r, &["c", "d", "e"]);
        r.reconnected();
        assert!(feed(&mut r, &["a", "b", "c", "d"]).is_empty());
        assert_eq!(feed(&mut r, &["e"]), Vec::<String>::new(), "all seen");
        assert!(!r.holding(), "resolved at the window");
        assert_eq!(feed(&mut r, &["f"]), ["f"]);
    }

    #[test]
    fn a_replaced_file_is_delivered_whole() {
        let mut r = Resume::new(5);
        feed(&mut r, &["a", "b"]);
        r.reconnected();
        feed(&mut r, &["x", "y"]);
        assert_eq!(r.resolve(), (vec!["x".to_string(), "y".to_string()], None));
    }

    #[test]
    fn a_long_outage_is_said() {
        let mut r = Resume::new(2);
        feed(&mut r, &["a", "b"]);
        r.reconnected();
        let (mut out, _) = r.line("x".into());
        let (more, note) = r.line("y".into());
        out.extend(more);
        assert_eq!(out, ["x", "y"]);
        assert!(note.is_some_and(|n| n.contains("more than 2 lines")));
    }
}
