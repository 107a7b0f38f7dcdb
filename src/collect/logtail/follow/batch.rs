//! What the follower gathers between two sends: the raw lines (what the Log tab shows and
//! recordings keep), the samples of the records they completed, and the highlight counters.
//!
//! The raw output is a list of segments: text chunks (every line ends with `\n`) and, where the
//! follower flushed the parser after the log went quiet, an empty segment. Replaying the segments
//! through [`Batch::replay`] gives the same samples as the live follower produced.

use crate::collect::collected::Collected;
use crate::collect::logtail::local::{MAX_LINE, linebuf::CUT_MARK};
use crate::metrics::store::SourceId;
use crate::metrics::{Parsed, Sample, Ts, names};
use crate::parse::ParseKind;
use crate::parse::training::{Highlight, LineParser, record_samples, transport_sample};

/// The highlight classes counted, in label order.
pub const CLASSES: [(Highlight, &str); 5] = [
    (Highlight::Warn, "warn"),
    (Highlight::Error, "error"),
    (Highlight::Nccl, "nccl"),
    (Highlight::Traceback, "traceback"),
    (Highlight::Timeout, "timeout"),
];

#[derive(Debug)]
pub struct Batch {
    parser: LineParser,
    node: String,
    log: String,
    lines: Vec<String>,
    /// Raw segments gathered before a flush (see the module comment).
    segments: Vec<(ParseKind, String)>,
    samples: Vec<Sample>,
    /// Totals since the follower started, per entry of [`CLASSES`].
    highlights: [u64; CLASSES.len()],
    /// The previous line's class: a traceback spans lines but counts once.
    last: Highlight,
    /// Lines fed since the parser was last flushed.
    unflushed: bool,
}

impl Batch {
    pub fn new(parser: LineParser, node: &str, log: &str) -> Self {
        Self {
            parser,
            node: node.to_string(),
            log: log.to_string(),
            lines: Vec::new(),
            segments: Vec::new(),
            samples: Vec::new(),
            highlights: [0; CLASSES.len()],
            last: Highlight::None,
            unflushed: false,
        }
    }

    /// One log line: kept for the Log tab, read by the parser, counted when highlighted.
    pub fn line(&mut self, mut line: String) {
        if line.len() > MAX_LINE {
            // A stream from elsewhere (SSH) is not cut by the native follower's buffer.
            let mut end = MAX_LINE;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
            line.push_str(CUT_MARK);
        }
        let out = self.parser.feed(&line);
        self.unflushed = true;
        for rec in &out.records {
            self.samples
                .extend(record_samples(rec, &self.node, &self.log));
        }
        for t in &out.nccl {
            self.samples
                .push(transport_sample(t, &self.node, &self.log));
        }
        let h = out.highlight;
        let counts = !(h == Highlight::Traceback && self.last == Highlight::Traceback);
        if counts {
            if let Some(i) = CLASSES.iter().position(|(c, _)| *c == h) {
                if let Some(n) = self.highlights.get_mut(i) {
                    *n += 1;
                }
            }
        }
        self.last = h;
        self.lines.push(line);
    }

    /// Release a record the parser still holds (the log went quiet); true when there was one.
    pub fn flush(&mut self) -> bool {
        if !self.unflushed {
            return false;
        }
        self.unflushed = false;
        self.close_segment();
        self.segments.push((ParseKind::TrainingLog, String::new()));
        let recs = self.parser.flush();
        for rec in &recs {
            self.samples
                .extend(record_samples(rec, &self.node, &self.log));
        }
        !recs.is_empty()
    }

    pub fn lines(&self) -> usize {
        self.lines.len()
    }

    /// Nothing gathered since the last send.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.samples.is_empty() && self.segments.is_empty()
    }

    fn close_segment(&mut self) {
        if !self.lines.is_empty() {
            let text: String = self.lines.drain(..).map(|l| l + "\n").collect();
            self.segments.push((ParseKind::TrainingLog, text));
        }
    }

    /// Feed recorded segments as the follower fed them live (replay).
    pub fn replay(&mut self, raw: &[(ParseKind, String)]) {
        for (kind, text) in raw {
            if *kind != ParseKind::TrainingLog {
                continue;
            }
            if text.is_empty() {
                self.flush();
            } else {
                for line in text.lines() {
                    self.line(line.to_string());
                }
            }
        }
    }

    /// Totals per class, in [`CLASSES`] order.
    pub fn highlight_totals(&self) -> [u64; CLASSES.len()] {
        self.highlights
    }

    /// Everything gathered, as one `Collected` (the highlight counters every time, zeros included,
    /// so the first highlight is an increase the store can see).
    pub fn take(&mut self, source: SourceId, at: Ts, notes: Vec<String>) -> Collected {
        let parsed = self.take_parsed(notes);
        self.close_segment();
        Collected {
            source,
            at,
            parsed,
            raw: Some(std::mem::take(&mut self.segments)),
            error: None,
            history: Default::default(),
        }
    }

    /// The samples gathered (and the highlight totals), without the raw text.
    pub fn take_parsed(&mut self, notes: Vec<String>) -> Parsed {
        let mut parsed = Parsed {
            samples: std::mem::take(&mut self.samples),
            notes,
            ..Parsed::default()
        };
        for ((_, class), n) in CLASSES.iter().zip(self.highlights) {
            parsed.samples.push(Sample::counter(
                names::TRAIN_LOG_HIGHLIGHTS,
                &[("node", &self.node), ("log", &self.log), ("class", class)],
                n,
            ));
        }
        parsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaying_the_raw_segments_gives_the_live_samples() {
        let mut live = Batch::new(LineParser::new(Vec::new()), "n", "l");
        // A Megatron iteration line waits for its timer line; the quiet log flushes it instead.
        live.line(" iteration        3/    1000 | consumed samples: 3072 | elapsed time per iteration (ms): 124362.2 | lm loss: 2.1E+00 |".into());
        live.line(String::new());
        live.flush();
        live.line("Iteration   10 | Loss: 2.3045 | AllReduce: 45.2ms | Total: 156.3ms".into());
        let c = live.take(SourceId(0), 1, Vec::new());
        assert!(
            c.raw.iter().flatten().any(|(_, t)| t.is_empty()),
            "a flush marker: {:?}",
            c.raw
        );
        assert!(
            c.parsed
                .samples
                .iter()
                .any(|s| s.key.name == names::TRAIN_STEP_SECONDS)
        );
        let mut again = Batch::new(LineParser::new(Vec::new()), "n", "l");
        again.replay(c.raw.as_deref().unwrap_or_default());
        assert_eq!(again.take_parsed(Vec::new()), c.parsed);
    }
}
