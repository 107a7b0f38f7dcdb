//! What to say when a log is not understood: after a few hundred lines (or a minute) without a
//! training step, a line of the log that looks most like progress and a `format_regex` built from
//! it, whose named groups read that line's numbers. The Log tab and `rocetop parse training-log`
//! say the same words: both take them from [`Hint::lines`].

use super::{CustomFormat, LineParser};
use crate::metrics::Ts;

/// Lines without a step after which the log is called not understood.
pub const LINES: u64 = 300;
/// Or this long after its first line, however few lines came.
pub const WAIT_MS: Ts = 60_000;
/// The sample is kept and shown at most this long (a progress bar can be a line of kilobytes).
const SAMPLE_CHARS: usize = 200;

/// Words that name a step counter or a loss: a line with one of them looks like progress.
const PROGRESS_WORDS: [&str; 7] = ["loss", "step", "iter", "epoch", "batch", "update", "ppl"];

/// Watches a log until its first training step: how many lines came, since when, and the line
/// most like a progress line.
#[derive(Debug, Default)]
pub struct Unread {
    lines: u64,
    first_at: Option<Ts>,
    sample: Option<(u32, String)>,
    stepped: bool,
}

impl Unread {
    /// One line of the log, arrived at `at`.
    pub fn line(&mut self, line: &str, at: Ts) {
        if self.stepped || line.trim().is_empty() {
            return;
        }
        self.lines += 1;
        self.first_at.get_or_insert(at);
        let score = score(line);
        let better = match &self.sample {
            None => true,
            Some((best, _)) => score > *best,
        };
        if better {
            self.sample = Some((score, cut(line.trim(), SAMPLE_CHARS).to_string()));
        }
    }

    /// A training step was read: the log is understood, nothing more to say.
    pub fn stepped(&mut self) {
        *self = Unread {
            stepped: true,
            ..Unread::default()
        };
    }

    /// The hint, once [`LINES`] lines or [`WAIT_MS`] have passed without a step.
    pub fn due(&self, now: Ts) -> Option<Hint> {
        let waited = self.first_at.is_some_and(|t| now - t >= WAIT_MS);
        (!self.stepped && self.lines > 0 && (self.lines >= LINES || waited)).then(|| self.hint())
    }

    /// The hint as of now, due or not (`rocetop parse` has read the whole text).
    pub fn hint(&self) -> Hint {
        Hint::new(self.lines, self.sample.as_ref().map(|(_, s)| s.as_str()))
    }
}

/// What the Log tab and `rocetop parse` say of a log they read no step from.
#[derive(Clone, Debug, PartialEq)]
pub struct Hint {
    /// Non-blank lines read.
    pub lines: u64,
    /// The line most like a progress line, as printed (shown escaped).
    pub sample: Option<String>,
    /// A `format_regex` that reads the sample's numbers, when it has any.
    pub example: Option<String>,
}

impl Hint {
    pub fn new(lines: u64, sample: Option<&str>) -> Self {
        Self {
            lines,
            sample: sample.map(str::to_string),
            example: sample.and_then(example_regex),
        }
    }

    /// The hint in words, one line each: what is wrong, a line of the log, the setting to use.
    /// Remote text is in them: print them through the `safe` module.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "no training step recognised in {} lines: the log's format is not one rocetop knows",
            self.lines
        )];
        if let Some(s) = &self.sample {
            out.push(format!("a line of it: {s}"));
        }
        match &self.example {
            Some(re) => out.push(format!(
                "set format_regex in its [[log]], e.g. format_regex = {}",
                toml_literal(re)
            )),
            None => out.push(
                "set format_regex in its [[log]]: a regex with named groups (?P<iteration>...), \
                 (?P<loss>...), (?P<step_ms>...)"
                    .to_string(),
            ),
        }
        out
    }
}

/// A regex that reads `line`'s step counter, loss and step time with the named groups of
/// [`CustomFormat`]: each number kept is written as the word before it and the number's group,
/// the pieces joined by `.*?`, so that the pattern reads the next lines of the same shape too.
/// None when the line has no number to read.
pub fn example_regex(line: &str) -> Option<String> {
    // Control characters are in no number's way and make the parser skip the line as binary.
    let line: String = line.chars().filter(|c| !c.is_control()).collect();
    let line = line.as_str();
    let nums = numbers(line);
    let mut picked: Vec<(&Num, &str)> = Vec::new();
    let word_is = |n: &Num, words: &[&str]| words.iter().any(|w| n.label.contains(w));
    let iteration = nums
        .iter()
        .find(|n| n.integer && word_is(n, &["iter", "step", "batch", "update", "it"]))
        .or_else(|| nums.iter().find(|n| n.integer && n.standalone));
    let loss = nums
        .iter()
        .find(|n| word_is(n, &["loss", "nll"]))
        .or_else(|| {
            nums.iter()
                .find(|n| !n.integer && n.standalone && Some(*n) != iteration)
        });
    let time = nums.iter().find(|n| {
        Some(*n) != iteration
            && Some(*n) != loss
            && (word_is(n, &["time", "elapsed", "dt", "duration"]) || n.unit_ms || n.unit_s)
    });
    if let Some(n) = iteration {
        picked.push((n, r"\d+"));
    }
    for n in [loss, time].into_iter().flatten() {
        picked.push((n, FLOAT));
    }
    if picked.is_empty() {
        return None;
    }
    picked.sort_by_key(|(n, _)| n.start);
    let mut parts = Vec::new();
    for (n, pat) in picked {
        let group = if Some(n) == iteration {
            "iteration"
        } else if Some(n) == loss {
            "loss"
        } else if n.unit_ms || (!n.unit_s && n.label.contains("ms")) {
            "step_ms"
        } else {
            "step_s"
        };
        let lead = line.get(n.label_start..n.start).unwrap_or("");
        let mut piece = String::new();
        if lead.is_empty() {
            piece.push_str(r"\b");
        }
        let mut space = false;
        for c in lead.chars() {
            if c.is_whitespace() {
                if !space {
                    piece.push_str(r"\s*");
                }
                space = true;
            } else {
                space = false;
                piece.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
            }
        }
        piece.push_str(&format!("(?P<{group}>{pat})"));
        parts.push(piece);
    }
    let re = parts.join(".*?");
    // The example must read the line it was built from, through the same path a config's does.
    let f = CustomFormat::new("example", &re).ok()?;
    let mut p = LineParser::new(vec![f]);
    let read = p.feed(line).records.first().copied()?;
    (read.iteration.is_some() || read.has_progress()).then_some(re)
}

const FLOAT: &str = r"[-+]?\d*\.?\d+(?:[eE][-+]?\d+)?";

/// One number of a line and what stands before and after it.
#[derive(Debug, PartialEq)]
struct Num {
    start: usize,
    /// Where the word before it starts (its start when there is none).
    label_start: usize,
    /// That word, lower case.
    label: String,
    integer: bool,
    /// Not part of a date, a time, a version or a path (`12:00`, `1.2.3`, `4/5`).
    standalone: bool,
    unit_ms: bool,
    unit_s: bool,
}

fn numbers(line: &str) -> Vec<Num> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let glued = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if !b[i].is_ascii_digit() || glued {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let mut integer = true;
        if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
            integer = false;
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        if i + 1 < b.len() && matches!(b[i], b'e' | b'E') {
            let mut j = i + 1;
            if j < b.len() && matches!(b[j], b'+' | b'-') {
                j += 1;
            }
            if j < b.len() && b[j].is_ascii_digit() {
                integer = false;
                i = j;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
        }
        let end = i;
        let joined = |c: Option<&u8>| c.is_some_and(|c| matches!(c, b':' | b'-' | b'/' | b'.'));
        let before = start.checked_sub(1).and_then(|k| b.get(k));
        let after_digit = b.get(end + 1).is_some_and(u8::is_ascii_digit);
        let part_of_more = joined(before) || (joined(b.get(end)) && after_digit);
        let standalone = !part_of_more;
        let rest = line.get(end..).unwrap_or("");
        let unit_ms = rest.starts_with("ms");
        let unit_s = !unit_ms
            && rest.starts_with('s')
            && !rest[1..].starts_with(|c: char| c.is_ascii_alphanumeric());
        // The word before: skip separators back to letters, then take the letters.
        let head = line.get(..start).unwrap_or("");
        let trimmed = head.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '_' && c != ')');
        let word_start = trimmed
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || matches!(c, '_' | '(' | ')' | '/'))
            .last()
            .map_or(trimmed.len(), |(k, _)| k);
        let label = trimmed.get(word_start..).unwrap_or("").to_lowercase();
        let label_start = if label.chars().any(char::is_alphabetic) {
            word_start
        } else {
            start
        };
        out.push(Num {
            start,
            label_start,
            label: if label_start == start {
                String::new()
            } else {
                label
            },
            integer,
            standalone,
            unit_ms,
            unit_s,
        });
    }
    out
}

/// How much a line looks like a progress line: its numbers (a few) and the words of progress.
fn score(line: &str) -> u32 {
    let nums = numbers(line).iter().filter(|n| n.standalone).count().min(4) as u32;
    // NCCL's own lines (its version, its rings and channels) are full of numbers but no step.
    if nums == 0 || line.contains("NCCL INFO") {
        return 0;
    }
    let l = line.to_ascii_lowercase();
    let words = PROGRESS_WORDS.iter().filter(|w| l.contains(*w)).count() as u32;
    nums + 3 * words.min(3)
}

/// At most `max` characters of `s`.
fn cut(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// A TOML literal string of `s`: `'...'`, or `'''...'''` when it holds a quote.
fn toml_literal(s: &str) -> String {
    if s.contains('\'') {
        format!("'''{s}'''")
    } else {
        format!("'{s}'")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example, through the real `format_regex` path (a `CustomFormat` tried first by the
    /// line parser), reads the sample's step.
    fn read_with_example(sample: &str) -> super::super::TrainRecord {
        let hint = Hint::new(300, Some(sample));
        let re = hint
            .example
            .unwrap_or_else(|| panic!("an example for {sample:?}"));
        let f = CustomFormat::new("format_regex", &re).unwrap_or_else(|e| panic!("{e}"));
        let mut p = LineParser::new(vec![f]);
        let mut recs = p.feed(sample).records;
        recs.extend(p.flush());
        assert_eq!(recs.len(), 1, "{re}: {recs:?}");
        recs[0]
    }

    #[test]
    fn the_example_regex_reads_the_samples_step() {
        let r = read_with_example("2024-05-01 12:00:03 [trn] it#120 lossval=2.3100 t=158ms");
        assert_eq!(r.iteration, Some(120));
        assert_eq!(r.loss, Some(2.31));
        assert_eq!(r.step_seconds, Some(0.158));

        let r = read_with_example("=> 7 ... obj 0.4125 (0.52s)");
        assert_eq!(r.iteration, Some(7));
        assert_eq!(r.loss, Some(0.4125));
        assert_eq!(r.step_seconds, Some(0.52));

        // The next line of the same shape is read by it too.
        let hint = Hint::new(300, Some("batch 41 nll 3.5e-1"));
        let re = hint.example.unwrap_or_default();
        let f = CustomFormat::new("x", &re).unwrap_or_else(|e| panic!("{e}"));
        let mut p = LineParser::new(vec![f]);
        let r = p.feed("batch 42 nll 3.4e-1").records;
        assert_eq!((r[0].iteration, r[0].loss), (Some(42), Some(0.34)), "{re}");
    }

    #[test]
    fn a_line_without_numbers_gets_the_template_not_an_example() {
        let h = Hint::new(12, Some("starting the job"));
        assert_eq!(h.example, None);
        let l = h.lines();
        assert!(l[0].contains("12 lines"), "{l:?}");
        assert!(l[1].contains("starting the job"), "{l:?}");
        assert!(l[2].contains("(?P<iteration>"), "{l:?}");
    }

    #[test]
    fn due_after_the_lines_or_the_minute_and_never_after_a_step() {
        let mut u = Unread::default();
        assert_eq!(u.due(0), None);
        u.line("hello", 1000);
        u.line("[trn] it#3 lossval=2.5", 1000);
        u.line("bye", 1000);
        assert_eq!(u.due(1000 + WAIT_MS - 1), None);
        let h = u
            .due(1000 + WAIT_MS)
            .unwrap_or_else(|| panic!("due after a minute"));
        assert_eq!(h.sample.as_deref(), Some("[trn] it#3 lossval=2.5"));
        assert!(h.lines()[2].contains("format_regex = '"), "{:?}", h.lines());
        let mut u = Unread::default();
        for i in 0..LINES {
            u.line(&format!("free text {i}"), 0);
        }
        assert!(u.due(0).is_some());
        u.stepped();
        u.line("more", 0);
        assert_eq!(u.due(WAIT_MS * 10), None);
    }

    #[test]
    fn a_quote_in_the_pattern_is_kept_by_the_toml_string() {
        assert_eq!(toml_literal("a'b"), "'''a'b'''");
        assert_eq!(toml_literal(r"a\d"), r"'a\d'");
    }
}
