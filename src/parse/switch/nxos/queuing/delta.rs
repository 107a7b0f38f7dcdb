//! Read again only the lines that changed. A switch answers `show queuing interface` every poll
//! (~200 KB and ~1500 samples for 32 ports), and from one poll to the next only the counter
//! values move: re-reading every line and building every sample's key again was most of a
//! switch poll's cost.
//!
//! Exact, not a guess: the parser is a state machine whose state between lines is small (the
//! port, the QoS group, the section), and a line's effect is a function of that state and the
//! line. [`parse_traced`] records, per line, the state before it and the samples it set. For a
//! new text with as many lines, [`update`] reads each changed line again from its recorded state
//! and keeps the result only when the line leaves the same state behind and sets samples with
//! the same keys, in the same order: then a full parse of the new text would set the same keys in
//! the same places, and only the values differ. Anything else (a line that is not understood,
//! another number of lines, a changed key or state) answers false, and the caller parses in full.
//!
//! A changed line whose only change is in the digits its samples' values were read from is not
//! read by the parser at all: its values are the sums of its new numbers (runs.rs).

use super::runs::{self, MAX_RUNS};
use super::{Sec, St};
use crate::metrics::Parsed;
use crate::parse::num;
use crate::parse::switch::rows;

/// The parser's state between two lines.
#[derive(Clone, Debug, PartialEq)]
struct Ctx {
    port: Option<String>,
    qg: Option<String>,
    sec: Sec,
}

/// The entries of [`Trace::sets`] one line made: `from..to`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LineSets {
    from: u32,
    to: u32,
}

impl LineSets {
    fn range(self) -> std::ops::Range<usize> {
        self.from as usize..self.to as usize
    }
}

/// What [`parse_traced`] recorded of one parse, for [`update`].
#[derive(Debug, Default)]
pub struct Trace {
    /// The distinct states, in the order met.
    ctxs: Vec<Ctx>,
    /// Per line, the state before it (index into `ctxs`); one more entry: the state at the end.
    before: Vec<u32>,
    /// Per line, its range in `sets`.
    line_sets: Vec<LineSets>,
    /// Sample indices, in the order the lines set them.
    sets: Vec<u32>,
    /// Per line, whether it was understood.
    understood: Vec<bool>,
    /// Per sample, the last line that set it (its value is that line's).
    last: Vec<u32>,
    /// Per entry of `sets`, the digit runs of its line its value is the sum of (`runs::Rec`).
    runs: Vec<u64>,
    /// Changed lines set from their numbers alone.
    #[cfg(test)]
    pub numbers_only: u64,
}

impl St<'_> {
    fn ctx(&self) -> Ctx {
        Ctx {
            port: self.port.clone(),
            qg: self.qg.clone(),
            sec: self.sec,
        }
    }

    fn is_at(&self, c: &Ctx) -> bool {
        self.port == c.port && self.qg == c.qg && self.sec == c.sec
    }

    fn go_to(&mut self, c: &Ctx) {
        if self.port != c.port {
            self.port.clone_from(&c.port);
        }
        if self.qg != c.qg {
            self.qg.clone_from(&c.qg);
        }
        self.sec = c.sec;
    }
}

/// [`super::parse`], and its [`Trace`].
pub fn parse_traced(text: &str, sw: &str) -> (Parsed, Trace) {
    let mut st = St::new(sw, (text.len() / 128).min(8192));
    st.out.sets = Some(Vec::new());
    st.out.runs = Some(runs::Rec::default());
    let mut tr = Trace::default();
    for raw in num::lines(text) {
        if let Some(r) = &mut st.out.runs {
            r.line(raw);
        }
        if tr.ctxs.last().is_none_or(|c| !st.is_at(c)) {
            tr.ctxs.push(st.ctx());
        }
        tr.before.push(tr.ctxs.len() as u32 - 1);
        let from = st.out.sets.as_ref().map_or(0, Vec::len) as u32;
        let ok = st.step(raw);
        if !ok {
            st.p.unknown(num::trim(raw));
        }
        let to = st.out.sets.as_ref().map_or(0, Vec::len) as u32;
        tr.line_sets.push(LineSets { from, to });
        tr.understood.push(ok);
    }
    if tr.ctxs.last().is_none_or(|c| !st.is_at(c)) {
        tr.ctxs.push(st.ctx());
    }
    tr.before.push(tr.ctxs.len() as u32 - 1);
    tr.sets = st.out.sets.take().unwrap_or_default();
    tr.runs = st.out.runs.take().map(|r| r.masks).unwrap_or_default();
    let parsed = st.out.acc.into_parsed(st.p);
    tr.last = vec![u32::MAX; parsed.samples.len()];
    for (line, sets) in tr.line_sets.iter().enumerate() {
        for &i in tr.sets.get(sets.range()).unwrap_or(&[]) {
            if let Some(l) = tr.last.get_mut(i as usize) {
                *l = line as u32;
            }
        }
    }
    (parsed, tr)
}

/// Bring `parsed`, the parse of `old` that `trace` was recorded with, to what [`super::parse`]
/// would give for `new`, reading only the lines that changed. False when that cannot be done
/// this way: `parsed` is then partly updated and must be thrown away (parse `new` in full).
/// On true, `trace` holds for `new` as well.
pub fn update(trace: &mut Trace, old: &str, new: &str, sw: &str, parsed: &mut Parsed) -> bool {
    num::diff_lines(old, new).is_some_and(|changes| update_lines(trace, sw, parsed, &changes))
}

/// [`update`] given the changed lines of a new text with as many lines as the old one (the
/// caller compared them): each line's index, its old text and its new one, in order.
pub fn update_lines(
    trace: &mut Trace,
    sw: &str,
    parsed: &mut Parsed,
    changes: &[(usize, &str, &str)],
) -> bool {
    if parsed.samples.len() != trace.last.len() || trace.runs.len() != trace.sets.len() {
        return false;
    }
    let mut st = St::new(sw, 0);
    // The last parse's samples are held by the reader while it compares keys with them.
    st.out.redo = Some((rows::Redo::default(), std::mem::take(&mut parsed.samples)));
    let mut vals = [0u64; MAX_RUNS];
    let ok = changes.iter().all(|&(line, x, y)| {
        let Some((_, samples)) = &mut st.out.redo else {
            return false;
        };
        if numbers_only(trace, samples, line, x, y, &mut vals) {
            #[cfg(test)]
            {
                trace.numbers_only += 1;
            }
            return true;
        }
        again(trace, &mut st, line, y)
    });
    if let Some((_, samples)) = st.out.redo.take() {
        parsed.samples = samples;
    }
    ok
}

/// Line `line`, `old` before and now `new`, set into `samples` when its only change is in the
/// digits its samples' values are read from (runs.rs); false when the parser must read it.
fn numbers_only(
    trace: &Trace,
    samples: &mut [crate::metrics::Sample],
    line: usize,
    old: &str,
    new: &str,
    vals: &mut [u64; MAX_RUNS],
) -> bool {
    let Some(&sets) = trace.line_sets.get(line) else {
        return false;
    };
    let range = sets.range();
    let (Some(olds), Some(masks)) = (trace.sets.get(range.clone()), trace.runs.get(range)) else {
        return false;
    };
    // A line that sets nothing, or a value not read from whole digit runs.
    if masks.is_empty() || masks.contains(&0) {
        return false;
    }
    let free = masks.iter().fold(0, |a, m| a | m) & !runs::GAUGE;
    if !runs::moved(old, new, free, vals) {
        return false;
    }
    for (&i, &m) in olds.iter().zip(masks) {
        // As `Redo::commit`: a later line that sets the same series has the last word.
        if trace.last.get(i as usize) == Some(&(line as u32))
            && let Some(s) = samples.get_mut(i as usize)
        {
            s.value = runs::value(m, vals);
        }
    }
    true
}

/// Line `line` (now `text`) read again from its recorded state, its new values set in the
/// samples the reader holds and what they were read from in `trace`; false when its effect
/// differs in anything but values.
fn again<'a>(trace: &mut Trace, st: &mut St<'a>, line: usize, text: &'a str) -> bool {
    let ctx = |i: usize| {
        trace
            .before
            .get(i)
            .and_then(|&c| trace.ctxs.get(c as usize))
    };
    let (Some(before), Some(after), Some(&true), Some(&sets)) = (
        ctx(line),
        ctx(line + 1),
        trace.understood.get(line),
        trace.line_sets.get(line),
    ) else {
        return false;
    };
    let Some(olds) = trace.sets.get(sets.range()) else {
        return false;
    };
    st.go_to(before);
    if let Some((r, _)) = &mut st.out.redo {
        r.start(olds);
    }
    // The new text's digits may be other runs than the old one's (`-` → `5`, wider padding).
    let mut rec = runs::Rec::default();
    rec.line(text);
    st.out.runs = Some(rec);
    if !st.step(text) || !st.is_at(after) || !st.p.notes.is_empty() {
        return false;
    }
    let masks = st.out.runs.take().map(|r| r.masks).unwrap_or_default();
    match &mut st.out.redo {
        Some((r, samples)) if r.same() => {
            r.commit(samples, &trace.last, line);
            match trace.runs.get_mut(sets.range()) {
                Some(slot) if slot.len() == masks.len() => slot.copy_from_slice(&masks),
                _ => return false,
            }
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests;
