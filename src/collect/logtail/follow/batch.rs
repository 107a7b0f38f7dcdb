//! What the follower gathers between two sends: the raw lines (what the Log tab shows and
//! recordings keep), the samples of the records they completed, and the highlight counters.

use crate::collect::logtail::local::{MAX_LINE, linebuf::CUT_MARK};
use crate::collect::logtail::parse::{Highlight, LineParser, record_samples};
use crate::collect::poll::Collected;
use crate::metrics::store::SourceId;
use crate::metrics::{Parsed, Sample, Ts, names};
use crate::parse::ParseKind;

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
        self.lines.is_empty() && self.samples.is_empty()
    }

    /// Totals per class, in [`CLASSES`] order.
    pub fn highlight_totals(&self) -> [u64; CLASSES.len()] {
        self.highlights
    }

    /// Everything gathered, as one `Collected` (the highlight counters every time, zeros included,
    /// so the first highlight is an increase the store can see).
    pub fn take(&mut self, source: SourceId, at: Ts, notes: Vec<String>) -> Collected {
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
        let raw = if self.lines.is_empty() {
            Vec::new()
        } else {
            let text = self.lines.join("\n");
            self.lines.clear();
            vec![(ParseKind::TrainingLog, text)]
        };
        Collected {
            source,
            at,
            parsed,
            raw,
            error: None,
        }
    }
}
