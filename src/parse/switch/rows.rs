//! Read again only the lines that changed, for a text parser that reads a line at a time with a
//! small state between lines ([`Rows`]): NX-OS `show interface priority-flow-control` and
//! `show interface flowcontrol`, which a switch answers every poll with the same rows and new
//! counter values. Building every sample's key again was most of their parse.
//!
//! Exact, as the queuing parser's delta (`nxos/queuing/delta.rs`) it generalises: [`parse_traced`]
//! records, per line, the state before it and the samples it set. [`update`] reads each changed
//! line of a new text with as many lines again from its recorded state, and keeps the result only
//! when the line was and is understood, leaves the same state behind and sets samples with the
//! same keys in the same order: then a full parse of the new text would set the same keys in the
//! same places, and only their values differ. Anything else answers false (parse in full).

use crate::metrics::{LabelName, Parsed, Sample, SeriesKey, Sink, Value};
use crate::parse::num;
use crate::parse::switch::common::Acc;

/// A parser that reads its text one line at a time.
pub trait Rows {
    /// What it keeps between lines.
    type State: Clone + Default + PartialEq;

    /// Read one line from state `st`: its samples go to `out`, a line not understood to `p`.
    fn step(&self, st: &mut Self::State, raw: &str, out: &mut dyn Sink, p: &mut Parsed);
}

/// The whole text through `rows`, into `out`: what the parser's `parse_text_into` is.
pub fn parse_into<R: Rows>(rows: &R, text: &str, out: &mut dyn Sink) -> Parsed {
    let mut p = Parsed::default();
    let mut st = R::State::default();
    for raw in num::lines(text) {
        rows.step(&mut st, raw, out, &mut p);
    }
    p
}

/// What [`parse_traced`] recorded of one parse, for [`update`].
#[derive(Debug)]
pub struct Trace<S> {
    /// Per line, the state before it; one more entry: the state at the end.
    before: Vec<S>,
    /// Per line, its range in `sets`, and whether it was understood.
    lines: Vec<(u32, u32, bool)>,
    /// Sample indices, in the order the lines set them.
    sets: Vec<u32>,
    /// Per sample, the last line that set it (its value is that line's).
    last: Vec<u32>,
}

/// An accumulator that also records where each sample went.
struct Recording<'a> {
    acc: &'a mut Acc,
    sets: &'a mut Vec<u32>,
}

impl Sink for Recording<'_> {
    fn set(&mut self, s: Sample) {
        let i = self.acc.set_index(s);
        self.sets.push(i as u32);
    }
}

/// The parse of `text` through `rows` into an accumulator (the parser's `parse_text`), and its
/// [`Trace`].
pub fn parse_traced<R: Rows>(rows: &R, text: &str) -> (Parsed, Trace<R::State>) {
    let mut acc = Acc::default();
    let mut p = Parsed::default();
    let mut st = R::State::default();
    let mut tr = Trace {
        before: Vec::new(),
        lines: Vec::new(),
        sets: Vec::new(),
        last: Vec::new(),
    };
    for raw in num::lines(text) {
        tr.before.push(st.clone());
        let (from, unknown) = (tr.sets.len() as u32, p.unknown_lines);
        let mut out = Recording {
            acc: &mut acc,
            sets: &mut tr.sets,
        };
        rows.step(&mut st, raw, &mut out, &mut p);
        tr.lines
            .push((from, tr.sets.len() as u32, p.unknown_lines == unknown));
    }
    tr.before.push(st);
    let parsed = acc.into_parsed(p);
    tr.last = vec![u32::MAX; parsed.samples.len()];
    for (line, &(from, to, _)) in tr.lines.iter().enumerate() {
        for &i in tr.sets.get(from as usize..to as usize).unwrap_or(&[]) {
            if let Some(l) = tr.last.get_mut(i as usize) {
                *l = line as u32;
            }
        }
    }
    (parsed, tr)
}

/// Bring `parsed`, the parse of `old` that `trace` was recorded with, to what a full parse of
/// `new` gives, reading only the lines that changed. False when that cannot be done this way:
/// `parsed` is then partly updated and must be thrown away. On true, `trace` holds for `new`.
pub fn update<R: Rows>(
    rows: &R,
    trace: &Trace<R::State>,
    old: &str,
    new: &str,
    parsed: &mut Parsed,
) -> bool {
    num::diff_lines(old, new).is_some_and(|changes| update_lines(rows, trace, parsed, &changes))
}

/// [`update`] given the changed lines of a new text with as many lines as the old one (the
/// caller compared them): each line's index, its old text and its new one, in order.
pub fn update_lines<R: Rows>(
    rows: &R,
    trace: &Trace<R::State>,
    parsed: &mut Parsed,
    changes: &[(usize, &str, &str)],
) -> bool {
    if parsed.samples.len() != trace.last.len() {
        return false;
    }
    let mut redo = Redo::default();
    for &(line, _, y) in changes {
        let (Some(before), Some(after), Some(&(from, to, true))) = (
            trace.before.get(line),
            trace.before.get(line + 1),
            trace.lines.get(line),
        ) else {
            return false;
        };
        let Some(olds) = trace.sets.get(from as usize..to as usize) else {
            return false;
        };
        let mut st = before.clone();
        let mut p = Parsed::default();
        redo.start(olds);
        let mut sink = RedoSink {
            redo: &mut redo,
            samples: &parsed.samples,
        };
        rows.step(&mut st, y, &mut sink, &mut p);
        if st != *after || p != Parsed::default() || !redo.same() {
            return false;
        }
        redo.commit(&mut parsed.samples, &trace.last, line);
    }
    true
}

/// One changed line read again: the samples it sets are compared, one by one, with those it set
/// the last time (`olds`, indices into the last parse's samples), keys by their parts where the
/// parser gives them so ([`Sink::put`]: no key is made), and only their values are kept. Building
/// every sample's key to compare it was most of a switch poll's cost.
#[derive(Default)]
pub struct Redo {
    olds: Vec<u32>,
    values: Vec<Value>,
    same: bool,
}

impl Redo {
    /// Start reading a line that set the samples `olds` the last time.
    pub fn start(&mut self, olds: &[u32]) {
        self.olds.clear();
        self.olds.extend_from_slice(olds);
        self.values.clear();
        self.same = true;
    }

    /// The next sample the line sets: its key checked by `is` against the one set in its place
    /// the last time.
    fn next(&mut self, samples: &[Sample], is: impl FnOnce(&SeriesKey) -> bool, value: Value) {
        let k = self.values.len();
        self.same &= self
            .olds
            .get(k)
            .and_then(|&i| samples.get(i as usize))
            .is_some_and(|o| is(&o.key));
        self.values.push(value);
    }

    /// A sample made whole (a parser that does not give its parts).
    pub fn set(&mut self, samples: &[Sample], s: Sample) {
        self.next(samples, |k| *k == s.key, s.value);
    }

    /// A sample given by its parts.
    pub fn put(
        &mut self,
        samples: &[Sample],
        name: &str,
        labels: &[(LabelName, &str)],
        value: Value,
    ) {
        self.next(samples, |k| k.is(name, labels), value);
    }

    /// Whether the line set the same keys in the same order as the last time.
    pub fn same(&self) -> bool {
        self.same && self.values.len() == self.olds.len()
    }

    /// The line's new values into `samples` (on [`Redo::same`]): `last` per sample the last line
    /// that set it, as [`Trace`] has it; a later line that sets the same series has the last word,
    /// as in a full parse.
    pub fn commit(&self, samples: &mut [Sample], last: &[u32], line: usize) {
        for (&v, &i) in self.values.iter().zip(&self.olds) {
            if last.get(i as usize) == Some(&(line as u32))
                && let Some(o) = samples.get_mut(i as usize)
            {
                o.value = v;
            }
        }
    }
}

/// A [`Redo`] as a parser's sink, against the last parse's samples.
struct RedoSink<'r> {
    redo: &'r mut Redo,
    samples: &'r [Sample],
}

impl Sink for RedoSink<'_> {
    fn set(&mut self, s: Sample) {
        self.redo.set(self.samples, s);
    }

    fn put(&mut self, name: &str, labels: &[(LabelName, &str)], value: Value) {
        self.redo.put(self.samples, name, labels, value);
    }
}

#[cfg(test)]
pub(crate) mod line_edits;
#[cfg(test)]
mod tests;
