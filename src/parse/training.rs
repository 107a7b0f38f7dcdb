//! Training-log line parsers: one stateful [`LineParser`] that turns lines into [`TrainRecord`]s and
//! highlight classes, for every format it knows (the lab's own scripts, PyTorch DDP scripts, Hugging
//! Face Trainer, Megatron-LM / Megatron-DeepSpeed, DeepSpeed `log_dist`, nccl-tests tables), with MPI /
//! torchrun / srun rank prefixes, glued lines, scientific notation and CRLF.
//!
//! Most formats are read by one generic reader (`kv`): `key: value`, `key=value`, `'key': value`,
//! `| key value |` and `Key N` pairs, `N/M` and `[a/b]` positions, the key mapped by a table of
//! names (`loss`, `lm loss`, `train loss`, `iter time (s)`, `num_updates`, ...), units read from the
//! key (`time(ms)`) or the value (`45.2ms`, `3ms/step`); evaluation lines are never steps. Records
//! are assembled across lines here: a step header and its block of `key: value` lines, a line
//! hard-wrapped at a fixed column (`wrap`), a record completed by a later line, each line with its
//! launcher prefix (`prefix`). The formats that span lines have their own small state: Megatron's
//! and DeepSpeed's timer lines (`timers`), nccl-tests tables (`nccl`), Python tracebacks
//! (`highlight`). The state is a fixed handful of fields and at most one held line, so memory stays
//! bounded however long the log.

mod custom;
mod highlight;
pub mod hint;
mod kv;
mod nccl;
pub mod nccl_net;
mod prefix;
mod progress;
mod timers;
mod wrap;

pub use custom::CustomFormat;

use crate::metrics::{Parsed, Sample, names};

/// One training step (or what a line said of one). Missing stays missing: a field is `None` unless the
/// log printed it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TrainRecord {
    pub iteration: Option<u64>,
    pub epoch: Option<f64>,
    pub loss: Option<f64>,
    pub step_seconds: Option<f64>,
    pub allreduce_seconds: Option<f64>,
    pub samples_per_second: Option<f64>,
    pub rank: Option<u32>,
}

impl TrainRecord {
    /// True when the record carries a measurement, not only a position (iteration, epoch, rank).
    pub fn has_progress(&self) -> bool {
        self.loss.is_some()
            || self.step_seconds.is_some()
            || self.allreduce_seconds.is_some()
            || self.samples_per_second.is_some()
    }

    /// Fill this record's missing fields from `other` when both can describe the same step: same
    /// iteration and rank where both are known, and no measurement printed twice.
    fn merge(&mut self, other: &TrainRecord) -> bool {
        fn differ<T: PartialEq>(a: Option<T>, b: Option<T>) -> bool {
            matches!((a, b), (Some(x), Some(y)) if x != y)
        }
        fn both<T>(a: Option<T>, b: Option<T>) -> bool {
            a.is_some() && b.is_some()
        }
        if differ(self.iteration, other.iteration)
            || differ(self.rank, other.rank)
            || both(self.loss, other.loss)
            || both(self.step_seconds, other.step_seconds)
            || both(self.allreduce_seconds, other.allreduce_seconds)
            || both(self.samples_per_second, other.samples_per_second)
        {
            return false;
        }
        self.iteration = self.iteration.or(other.iteration);
        self.epoch = self.epoch.or(other.epoch);
        self.loss = self.loss.or(other.loss);
        self.step_seconds = self.step_seconds.or(other.step_seconds);
        self.allreduce_seconds = self.allreduce_seconds.or(other.allreduce_seconds);
        self.samples_per_second = self.samples_per_second.or(other.samples_per_second);
        self.rank = self.rank.or(other.rank);
        true
    }
}

/// How the Log tab should colour a line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Highlight {
    #[default]
    None,
    /// `WARNING`, `UserWarning`, torch `[W ...]` lines.
    Warn,
    /// `RuntimeError`, CUDA errors, `slurmstepd: error`, Slurm `CANCELLED`, segfaults.
    Error,
    /// NCCL `WARN` / `ERROR` lines and NCCL error codes.
    Nccl,
    /// A Python traceback: its header, frames and the exception line that ends it.
    Traceback,
    /// `Watchdog caught collective operation timeout`, `... before timing out`, `timed out`.
    Timeout,
}

impl Highlight {
    /// Which class wins when one physical line holds two (glued) lines.
    fn severity(self) -> u8 {
        match self {
            Highlight::None => 0,
            Highlight::Warn => 1,
            Highlight::Error => 2,
            Highlight::Nccl => 3,
            Highlight::Traceback => 4,
            Highlight::Timeout => 5,
        }
    }

    fn max(self, other: Highlight) -> Highlight {
        if other.severity() > self.severity() {
            other
        } else {
            self
        }
    }
}

/// What one line did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LineOutcome {
    /// Records completed by this line, oldest first. Several when lines were glued together, and a
    /// record can complete on a later line than the one that started it (Megatron prints the timer line
    /// after the iteration line; a pending record is also released by the next record or after a few
    /// unrelated lines), so these may describe earlier lines.
    pub records: Vec<TrainRecord>,
    pub highlight: Highlight,
    /// The line belongs to a known format (a record, a timer line, an nccl-tests table, the lab's
    /// `→` lines, a trainer summary); false for free text.
    pub recognised: bool,
    /// Networks NCCL said it uses (NCCL_DEBUG=INFO lines).
    pub nccl: Vec<nccl_net::NcclTransport>,
}

/// A record that waits for the line that completes it (a timer line, DeepSpeed's throughput line,
/// the `key: value` lines of a block under a step header).
#[derive(Debug)]
struct Pending {
    rec: TrainRecord,
    /// Lines seen since it was last touched; it is released after [`MAX_PENDING_LINES`].
    age: u16,
    /// It is a step header's block: the first line that is not one of the block's ends it.
    block: bool,
}

/// How long a record waits for its timer line. Megatron-DeepSpeed prints a memory report or two in
/// between; anything longer means the timer line is not coming.
const MAX_PENDING_LINES: u16 = 16;

/// Lines longer than this are read only this far (a binary blob or a progress bar without newlines
/// must not cost more than a line).
const MAX_LINE_BYTES: usize = 64 * 1024;

/// The stateful training-log reader. Feed it every line in order; call [`LineParser::flush`] at the
/// end of the text (or when the log has been idle a while) to release a record still waiting.
#[derive(Debug, Default)]
pub struct LineParser {
    custom: Vec<CustomFormat>,
    pending: Option<Pending>,
    timer_block: Option<timers::Block>,
    nccl: nccl::Table,
    tracebacks: highlight::Tracebacks,
    /// The last line (blank ones aside) was a log dict with a loss and no step: the tqdm bar
    /// drawn next names its step (see `progress`).
    after_dict: bool,
    /// The column the log is hard-wrapped at, as far as seen (see `wrap`).
    wrap: wrap::Guess,
    /// A line of exactly that width, waiting to see whether the next one goes on with it.
    held: Option<wrap::Held>,
    /// The whole text was scanned for its column first: lines are not counted again.
    prescanned: bool,
}

impl LineParser {
    /// A parser that tries the given custom formats before the built-in ones.
    pub fn new(custom: Vec<CustomFormat>) -> Self {
        Self {
            custom,
            ..Self::default()
        }
    }

    /// Read one line (with or without its line end).
    pub fn feed(&mut self, line: &str) -> LineOutcome {
        let mut out = LineOutcome::default();
        let line = prefix::truncate(line, MAX_LINE_BYTES);
        // Binary junk (a core file cat'ed into the log, a corrupted block) can hold a `dt 8` by
        // chance: such a line is no training script's output, so nothing is read from it.
        if looks_binary(line) {
            return out;
        }
        let clean = prefix::clean(line);
        // A progress bar redraws with CR: each redraw is a line of its own.
        for part in clean.split('\r') {
            for sub in prefix::split_tagged(part) {
                self.feed_one(sub, &mut out);
            }
        }
        out
    }

    /// Learn what a whole text shows before reading it line by line (`rocetop parse`): the column
    /// it is wrapped at, so that its first records are joined too (a followed log learns it as
    /// lines come).
    pub fn prescan(&mut self, text: &str) {
        for line in text.lines() {
            let clean = prefix::clean(prefix::truncate(line, MAX_LINE_BYTES));
            for part in clean.split('\r') {
                for sub in prefix::split_tagged(part) {
                    let (body, rank) = prefix::strip(sub);
                    self.wrap.observe(body, rank);
                }
            }
        }
        self.prescanned = true;
    }

    /// Release whatever is still waiting: a line held for its wrapped rest, a record waiting for
    /// its timer line, an open timer block, an nccl-tests table without its footer.
    pub fn flush(&mut self) -> Vec<TrainRecord> {
        let mut out = LineOutcome::default();
        if let Some(h) = self.held.take() {
            self.read_line(&h.raw, h.body(), h.rank, &mut out);
        }
        if let Some(block) = self.timer_block.take() {
            self.apply_timer(block.allreduce_seconds(), block.rank, &mut out);
        }
        self.release(&mut out);
        if let Some(rec) = self.nccl.finish() {
            out.records.push(rec);
        }
        out.records
    }

    /// One line: joined to a held line it goes on with, held itself when it has the wrap width,
    /// or read.
    fn feed_one(&mut self, raw: &str, out: &mut LineOutcome) {
        let (body, rank) = prefix::strip(raw);
        if !self.prescanned {
            self.wrap.observe(body, rank);
        }
        let width = self.wrap.width();
        let full = width.is_some_and(|w| body.chars().count() == w);
        if let Some(h) = self.held.take() {
            if h.rank == rank && width.is_some() && joins(h.body(), body) {
                let mut h = h;
                h.raw.push_str(body);
                if full {
                    self.held = Some(h);
                } else {
                    self.read_line(&h.raw, h.body(), h.rank, out);
                }
                out.recognised = true;
                return;
            }
            self.read_line(&h.raw, h.body(), h.rank, out);
        }
        if full {
            self.held = Some(wrap::Held {
                raw: raw.to_string(),
                body_at: raw.len() - body.len(),
                rank,
            });
            out.recognised = true;
            return;
        }
        self.read_line(raw, body, rank, out);
    }

    fn read_line(
        &mut self,
        raw: &str,
        body: &str,
        prefix_rank: Option<u32>,
        out: &mut LineOutcome,
    ) {
        // tqdm clears its bar with a run of spaces before the dict: that is no line of its own.
        let after_dict = if body.trim().is_empty() {
            self.after_dict
        } else {
            std::mem::take(&mut self.after_dict)
        };
        out.highlight = out
            .highlight
            .max(self.tracebacks.classify(body, prefix_rank));

        if let Some(block) = self.timer_block.as_mut() {
            if block.entry(body) {
                out.recognised = true;
                return;
            }
            if let Some(block) = self.timer_block.take() {
                self.apply_timer(block.allreduce_seconds(), block.rank, out);
            }
        }

        if !self.custom.is_empty() {
            let recs = custom::records(&self.custom, raw, body, prefix_rank);
            if !recs.is_empty() {
                out.recognised = true;
                self.release(out);
                out.records.extend(recs);
                return;
            }
        }

        match self.nccl.feed(body, prefix_rank) {
            nccl::Step::NotTable => {}
            nccl::Step::Row => {
                out.recognised = true;
                return;
            }
            nccl::Step::Done(rec) => {
                out.recognised = true;
                out.records.extend(rec);
                return;
            }
        }

        let rank = prefix_rank.or_else(|| prefix::body_rank(body));
        let nets = nccl_net::read(body, rank);
        if !nets.is_empty() {
            out.recognised = true;
            out.nccl.extend(nets);
            self.age(out);
            return;
        }
        if timers::is_block_start(body) {
            self.timer_block = Some(timers::Block::new(rank));
            out.recognised = true;
            return;
        }
        if let Some(allreduce) = timers::timer_line(body) {
            self.apply_timer(allreduce, rank, out);
            out.recognised = true;
            return;
        }
        // `#` lines are comments (nccl-tests' run header, commented logs): never progress.
        if body.trim_start().starts_with('#') {
            self.age(out);
            return;
        }
        if prefix::is_continuation(body) {
            out.recognised = true;
            self.age(out);
            return;
        }

        // Other bars go on to the generic reader: a postfix may carry metrics (`loss=0.5`).
        if after_dict && let Some(n) = progress::tqdm_count(body) {
            out.recognised = true;
            let rec = TrainRecord {
                iteration: Some(n),
                rank,
                ..TrainRecord::default()
            };
            self.accept(kv::Group { rec, waits: false }, false, out);
            return;
        }

        let read = kv::read(body);
        if read.summary {
            out.recognised = true;
        }
        let in_block = read.block_line
            && self
                .pending
                .as_ref()
                .is_some_and(|p| p.block || !p.rec.has_progress());
        if read.groups.is_empty() {
            if in_block {
                // A line of the block the record names no field of (`lr: 0.001`).
                out.recognised = true;
                if let Some(p) = self.pending.as_mut() {
                    p.age = 0;
                }
            } else {
                self.age(out);
            }
            return;
        }
        out.recognised = true;
        // A Hugging Face log dict prints its loss but not its step.
        self.after_dict = body.trim_start().starts_with('{')
            && read
                .groups
                .iter()
                .any(|g| g.rec.loss.is_some() && g.rec.iteration.is_none());
        for mut g in read.groups {
            g.rec.rank = g.rec.rank.or(rank);
            self.accept(g, in_block, out);
        }
    }

    /// A record from the generic reader: merge it into the waiting one, or release that and go on.
    /// A line of a block merges and keeps the record waiting for the block's next line.
    fn accept(&mut self, g: kv::Group, in_block: bool, out: &mut LineOutcome) {
        if let Some(p) = self.pending.as_mut() {
            if p.rec.merge(&g.rec) {
                p.age = 0;
                if in_block {
                    p.block = true;
                } else if !g.waits {
                    self.release(out);
                }
                return;
            }
            self.release(out);
        }
        if g.waits {
            self.pending = Some(Pending {
                rec: g.rec,
                age: 0,
                block: false,
            });
        } else {
            out.records.push(g.rec);
        }
    }

    /// A timer line or block: its all-reduce time belongs to the waiting record when there is one.
    fn apply_timer(&mut self, allreduce: Option<f64>, rank: Option<u32>, out: &mut LineOutcome) {
        let Some(seconds) = allreduce else {
            self.age(out);
            return;
        };
        if let Some(p) = self.pending.as_mut() {
            let same_rank = match (p.rec.rank, rank) {
                (Some(a), Some(b)) => a == b,
                _ => true,
            };
            if same_rank {
                // A later timer line of the same step (DeepSpeed prints the micro-step timers, then
                // the global ones) replaces the earlier figure.
                p.rec.allreduce_seconds = Some(seconds);
                p.rec.rank = p.rec.rank.or(rank);
                p.age = 0;
                // Megatron prints its timers after the iteration line: the step is complete. DeepSpeed
                // prints them before Megatron-DeepSpeed's iteration line: keep waiting for it.
                if p.rec.step_seconds.is_some() || p.rec.loss.is_some() {
                    self.release(out);
                }
                return;
            }
            self.release(out);
        }
        out.records.push(TrainRecord {
            allreduce_seconds: Some(seconds),
            rank,
            ..TrainRecord::default()
        });
    }

    #[cfg(test)]
    fn tracebacks_open(&self) -> usize {
        self.tracebacks.open_count()
    }

    fn release(&mut self, out: &mut LineOutcome) {
        if let Some(p) = self.pending.take() {
            out.records.push(p.rec);
        }
    }

    fn age(&mut self, out: &mut LineOutcome) {
        if let Some(p) = self.pending.as_mut() {
            p.age += 1;
            if p.block || p.age > MAX_PENDING_LINES {
                self.release(out);
            }
        }
    }
}

/// Whether `next` goes on with the line `held`, which has the wrap column's width: read as one,
/// they lose no field that reading them apart gives (a fragment of a word at the cut aside), and
/// `next` is no line of its own: no
/// evaluation's line after a training line (`| valid on 'valid' subset | ...`), and, unless the
/// join reads more, it does not start as a line does (`{'loss': ...`, `[2023-...`). Two whole
/// records that happen to have that width stay apart: glued, a number of theirs is lost
/// (`120.5step: 11`). An evaluation's line cut through what makes it one (`..., val` and
/// ` loss 91.5`) is joined whatever its halves read.
fn joins(held: &str, next: &str) -> bool {
    // A log dict that closes (`{'loss': ..., 'epoch': 0.5}`) is whole: what follows is a line.
    let t = held.trim();
    if t.starts_with('{') && t.ends_with('}') {
        return false;
    }
    let joined = format!("{held}{next}");
    // Cut inside a word, the rest's first word is a fragment (`nll_` and `loss 1.2`): what it
    // would read alone is no field of the line's.
    let starts_a_line = next.starts_with(['{', '['])
        || (held.ends_with(|c: char| !c.is_whitespace()) && starts_with_a_time(next));
    let mid_word = !starts_a_line
        && held.ends_with(|c: char| !c.is_whitespace())
        && next.starts_with(|c: char| !c.is_whitespace() && !matches!(c, '|' | ',' | ';'));
    let rest = if mid_word {
        next.trim_start_matches(|c: char| !c.is_whitespace() && !matches!(c, '|' | ',' | ';'))
    } else {
        next
    };
    let (a, b, j) = (kv::weight(held), kv::weight(next), kv::weight(&joined));
    let apart = a.fields + kv::weight(rest).fields;
    // (`step 10010: train loss 90.5,` and ` val loss 91.5`: the rest alone reads as an
    // evaluation too, and the held piece is no whole step.)
    let evaluation_across = j.evaluation && !a.evaluation && (!b.evaluation || a.whole == 0);
    // A training line after an evaluation's (or the other way round) would be lost in it.
    let own_evaluation = (b.evaluation && !a.evaluation && a.whole > 0)
        || (j.evaluation && !b.evaluation && b.steps > 0 && !mid_word);
    // Two lines that each are a record, glued into two records, are two lines.
    let two_records = a.records > 0 && b.records > 0 && j.records > 1;
    // The rest of an evaluation's line (`Epoch(val) [1][` and `10017/50]  eta: ...`, then `time:
    // 0.01  loss: 90.5`) reads as fields of a step when read apart: it goes on with the
    // evaluation unless it starts a line, starts as the held line did (the next line of the same
    // kind), or is a whole step of its own (a position and a measurement).
    let same_start = held.chars().take(4).eq(next.chars().take(4));
    // `eta: 0:` and `00:02`: a time cut after its separator is no time starting a line.
    let mut tail = held.chars().rev();
    let cut_in_a_number = matches!(tail.next(), Some(':' | '/' | '-' | '.' | ','))
        && tail.next().is_some_and(|c| c.is_ascii_digit())
        && next.starts_with(|c: char| c.is_ascii_digit());
    // `...91.5000` and `| epoch 001 | ...`: a table row's start after a whole word is a line.
    let starts_a_row = held.ends_with(|c: char| !c.is_whitespace()) && next.starts_with("| ");
    let evaluation_goes_on = a.evaluation
        && !b.evaluation
        && !starts_a_row
        && (!starts_a_line || cut_in_a_number)
        && !same_start
        && b.whole == 0;
    // `...val loss 91.5000` and `Step 17 | loss:0.5`: a word right after an evaluation's last
    // number that starts a whole step is that step's line, not a word cut in two.
    let step_after_evaluation = a.evaluation
        && b.whole > 0
        && held.ends_with(|c: char| c.is_ascii_digit())
        && next.starts_with(|c: char| c.is_alphabetic());
    !step_after_evaluation && evaluation_across
        || evaluation_goes_on
        || (j.fields >= apart
            && !step_after_evaluation
            && !own_evaluation
            && !two_records
            && (j.fields > apart || !starts_a_line))
}

/// `2024-01-01 ...`, `04/21 21:03:53 ...`, `12:00:01 ...`: a date or a time as the first word.
/// (After a line that ends in a space, such a word is a value: `eta: ` and `0:00:02`.)
fn starts_with_a_time(s: &str) -> bool {
    let word = s.split_whitespace().next().unwrap_or("");
    let mut parts = word.split(['/', '-', ':']);
    let all_digits =
        |p: &str| !p.is_empty() && p.len() <= 4 && p.bytes().all(|c| c.is_ascii_digit());
    let n = word.split(['/', '-', ':']).count();
    s.starts_with(|c: char| c.is_ascii_digit())
        && n >= 2
        && parts.all(|p| all_digits(p.split(['.', ',']).next().unwrap_or("")))
}

/// A line with undecodable bytes (U+FFFD after lossy decoding) or control characters other than
/// tab, CR (progress bars), a line end and ESC (colours).
fn looks_binary(line: &str) -> bool {
    line.chars()
        .any(|c| c == '\u{fffd}' || (c.is_control() && !matches!(c, '\t' | '\r' | '\n' | '\u{1b}')))
}

/// Parse a whole captured training log (`rocetop parse training-log`): every record becomes gauges
/// labelled {node, log} and `rank` where printed. A training log is mostly free text, so nothing is
/// counted as unknown; when no step was read, a note says so with a line of the text and a
/// `format_regex` that would read it ([`hint`]).
pub fn parse_text(text: &str, node: &str, log: &str) -> Parsed {
    parse_text_with(text, node, log, Vec::new())
}

/// [`parse_text`] with the log's custom formats tried first (config `format_regex`).
pub fn parse_text_with(text: &str, node: &str, log: &str, custom: Vec<CustomFormat>) -> Parsed {
    let mut p = Parsed::default();
    let mut parser = LineParser::new(custom);
    parser.prescan(text);
    let mut unread = hint::Unread::default();
    for line in text.lines() {
        unread.line(line, 0);
        let out = parser.feed(line);
        // A capture of NCCL's own lines is read for what it is, not a log without steps.
        if !out.records.is_empty() || !out.nccl.is_empty() {
            unread.stepped();
        }
        for rec in out.records {
            p.samples.extend(record_samples(&rec, node, log));
        }
        for t in &out.nccl {
            p.samples.push(transport_sample(t, node, log));
        }
    }
    let last = parser.flush();
    if !last.is_empty() {
        unread.stepped();
    }
    for rec in last {
        p.samples.extend(record_samples(&rec, node, log));
    }
    // The whole text is read: what the Log tab says of a followed log after a few hundred
    // lines, said here at once.
    if unread.due(hint::WAIT_MS).is_some() {
        p.note(unread.hint().lines().join("; "));
    }
    p
}

/// `rocetop_nccl_transport_info{node,log,rank,transport,device} 1`.
pub fn transport_sample(t: &nccl_net::NcclTransport, node: &str, log: &str) -> Sample {
    let labels = [
        ("node", node),
        ("log", log),
        ("rank", t.rank.as_str()),
        ("transport", t.transport),
        ("device", t.device.as_str()),
    ];
    Sample::gauge(names::NCCL_TRANSPORT_INFO, &labels, 1.0)
}

/// The gauges of one record (only the fields it has), labelled {node, log} and `rank` where known.
pub fn record_samples(rec: &TrainRecord, node: &str, log: &str) -> Vec<Sample> {
    let rank = rec.rank.map(|r| r.to_string());
    let mut labels = vec![("node", node), ("log", log)];
    if let Some(r) = rank.as_deref() {
        labels.push(("rank", r));
    }
    let fields = [
        (names::TRAIN_ITERATION, rec.iteration.map(|i| i as f64)),
        (names::TRAIN_LOSS, rec.loss),
        (names::TRAIN_STEP_SECONDS, rec.step_seconds),
        (names::TRAIN_ALLREDUCE_SECONDS, rec.allreduce_seconds),
        (names::TRAIN_SAMPLES_PER_SECOND, rec.samples_per_second),
    ];
    fields
        .into_iter()
        .filter_map(|(name, v)| v.map(|v| Sample::gauge(name, &labels, v)))
        .collect()
}

#[cfg(test)]
mod tests;
