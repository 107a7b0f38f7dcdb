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

use crate::metrics::{Parsed, Sample, Sink};
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
    changed_lines(old, new).is_some_and(|changes| update_lines(rows, trace, parsed, &changes))
}

/// The lines of `new` that differ from `old`'s, each with its index, in order; `None` when the
/// two do not have as many lines (a line memo then parses in full).
pub fn changed_lines<'a>(old: &str, new: &'a str) -> Option<Vec<(usize, &'a str)>> {
    let mut changes = Vec::new();
    let (mut a, mut b) = (num::lines(old), num::lines(new));
    for line in 0.. {
        match (a.next(), b.next()) {
            (None, None) => break,
            (Some(x), Some(y)) if x != y => changes.push((line, y)),
            (Some(_), Some(_)) => {}
            _ => return None,
        }
    }
    Some(changes)
}

/// [`update`] given the changed lines of a new text with as many lines as the old one (the
/// caller compared them): each line's index and its new text, in order.
pub fn update_lines<R: Rows>(
    rows: &R,
    trace: &Trace<R::State>,
    parsed: &mut Parsed,
    changes: &[(usize, &str)],
) -> bool {
    if parsed.samples.len() != trace.last.len() {
        return false;
    }
    let mut redo: Vec<Sample> = Vec::new();
    for &(line, y) in changes {
        let (Some(before), Some(after), Some(&(from, to, true))) = (
            trace.before.get(line),
            trace.before.get(line + 1),
            trace.lines.get(line),
        ) else {
            return false;
        };
        let mut st = before.clone();
        let mut p = Parsed::default();
        redo.clear();
        rows.step(&mut st, y, &mut |s: Sample| redo.push(s), &mut p);
        if st != *after || p != Parsed::default() {
            return false;
        }
        let Some(olds) = trace.sets.get(from as usize..to as usize) else {
            return false;
        };
        if !set_values(parsed, &redo, olds, &trace.last, line) {
            return false;
        }
    }
    true
}

/// Line `line` read again gave `redo`; `olds` are the indices in `parsed` of the samples it set
/// before, `last` per sample the last line that set it. When `redo` sets the same keys in the same
/// order, their values go into `parsed` and this is true; else `parsed` is left as it was.
pub fn set_values(
    parsed: &mut Parsed,
    redo: &[Sample],
    olds: &[u32],
    last: &[u32],
    line: usize,
) -> bool {
    let same = redo.len() == olds.len()
        && redo.iter().zip(olds).all(|(s, &i)| {
            parsed
                .samples
                .get(i as usize)
                .is_some_and(|o| o.key == s.key)
        });
    if !same {
        return false;
    }
    for (s, &i) in redo.iter().zip(olds) {
        // A later line that sets the same series has the last word, as in a full parse.
        if last.get(i as usize) == Some(&(line as u32))
            && let Some(o) = parsed.samples.get_mut(i as usize)
        {
            o.value = s.value;
        }
    }
    true
}

#[cfg(test)]
pub(crate) mod line_edits;
#[cfg(test)]
mod tests;
