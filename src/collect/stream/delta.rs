//! Parse only what changed. A node's `ethtool -S` prints ~760 counters and ~20 of them move in a
//! second; the stream sends only those lines (frame.rs), and this sets them into the samples of
//! the output's last parse instead of parsing all ~760 again.
//!
//! Exact, not a guess: `parse::parse_with_lines` says which line each sample's value was read
//! from, and for that parser a sample is one counter line's value and nothing else. So when every
//! line a frame changed inside the output is a counter line that kept its text up to the value
//! (`rx_bytes: 1` → `rx_bytes: 2`), parsing the output again would give the same samples with
//! those values. Anything else (a line that appeared, vanished, or changed its name; a dump of
//! another length; a part's status line) drops the memo and the output is parsed again.
//!
//! The sysfs dump is the same but for its byte totals: a netdev's RDMA bytes add several lines
//! (`parse::host::hw_counters::trace`), so a changed line sets its own sample and the sums it is
//! part of are added again from their lines in the dump.

use super::frame::Reassembler;
use crate::metrics::{Parsed, Value};
use crate::parse::host::ethtool::counter_line;
use crate::parse::host::hw_counters::{self, How};
use crate::parse::{self, Ctx, LineMap, Options, ParseKind, num};

/// No sample for this line.
const NONE: u32 = u32::MAX;

/// The last parse of one output of the batch, and the sample each of its lines is.
struct Memo {
    /// The probe (part of the batch) it answers.
    part: usize,
    /// Its first line in the dump, and how many lines it has.
    first: usize,
    len: usize,
    parsed: Parsed,
    /// Per line of the output: the sample whose value it is ([`NONE`]: none).
    sample_of: Vec<u32>,
    /// A sysfs dump: per sample, how it follows from the lines; per line, the sum it is a term
    /// of ([`NONE`]: none). Empty for `ethtool -S`.
    how: Vec<How>,
    sum_of: Vec<u32>,
}

/// The memos of one stream (a new stream starts with none).
#[derive(Default)]
pub(super) struct Delta {
    memos: Vec<Memo>,
    /// The kinds of the outputs answered from a memo, in order.
    #[cfg(test)]
    hits: Vec<ParseKind>,
}

/// The text of a `name: value` line before its value, if it is a counter line.
fn counter_prefix(line: &str) -> Option<(&str, u64)> {
    let (_, v) = counter_line(line)?;
    Some((line.rsplit_once(':')?.0, v))
}

impl Delta {
    /// Bring the memos to the dump `r` just completed: set the new values where only values
    /// changed, drop the memos of outputs that changed otherwise.
    pub fn frame(&mut self, r: &Reassembler, nonce: &str) {
        if r.resized() {
            self.memos.clear();
            return;
        }
        let marker = format!("@@rocetop-{nonce}-");
        let mut broken = vec![false; self.memos.len()];
        // Sums to add again (memo, sample), once every changed line is in.
        let mut sums: Vec<(usize, u32)> = Vec::new();
        for (idx, old) in r.changes() {
            let new = r.line(*idx).unwrap_or("");
            if old.starts_with(&marker) || new.starts_with(&marker) {
                // A part's end or status moved: every boundary may have.
                self.memos.clear();
                return;
            }
            let Some(m) = self
                .memos
                .iter()
                .position(|m| (m.first..m.first + m.len).contains(idx))
            else {
                continue;
            };
            let memo = &mut self.memos[m];
            if !memo.how.is_empty() {
                if !hw_line(memo, idx - memo.first, old, new, &mut sums, m) {
                    broken[m] = true;
                }
                continue;
            }
            let value = match (counter_prefix(old), counter_prefix(new)) {
                (Some((a, _)), Some((b, v))) if a == b => v,
                _ => {
                    broken[m] = true;
                    continue;
                }
            };
            let j = memo
                .sample_of
                .get(idx - memo.first)
                .copied()
                .unwrap_or(NONE);
            let Some(s) = memo.parsed.samples.get_mut(j as usize) else {
                // A counter the subset does not keep.
                continue;
            };
            s.value = match s.value {
                Value::Counter(_) => Value::Counter(value),
                Value::Counter32(_) => Value::Counter32(value),
                Value::CounterMicros(_) => Value::CounterMicros(value),
                Value::Gauge(_) => {
                    broken[m] = true;
                    continue;
                }
            };
        }
        sums.sort_unstable();
        sums.dedup();
        for (m, j) in sums {
            if broken[m] {
                continue;
            }
            let memo = &mut self.memos[m];
            let first = memo.first;
            let v = memo.how.get(j as usize).and_then(|h| {
                h.value(&mut |l| {
                    let line = r.line(first + l as usize)?;
                    hw_counters::known_value(line).map(|(_, v)| v)
                })
            });
            match (v, memo.parsed.samples.get_mut(j as usize)) {
                (Some(v), Some(s)) => s.value = v,
                _ => broken[m] = true,
            }
        }
        let mut keep = broken.iter().map(|b| !b);
        self.memos.retain(|_| keep.next().unwrap_or(false));
    }

    /// Parse output `part` of the batch (its text `text`, of dump `r`): the memo when it holds,
    /// else a full parse, remembered when the parser tells its lines.
    #[allow(clippy::too_many_arguments)]
    pub fn part(
        &mut self,
        part: usize,
        kind: ParseKind,
        text: &str,
        ctx: &Ctx,
        opts: &mut Options,
        r: &Reassembler,
        nonce: &str,
    ) -> Parsed {
        let len = num::line_count(text);
        if let Some(m) = self.memos.iter().find(|m| m.part == part)
            && m.len == len
        {
            #[cfg(test)]
            self.hits.push(kind);
            return m.parsed.clone();
        }
        self.memos.retain(|m| m.part != part);
        let (parsed, map) = parse::parse_with_lines(kind, text, ctx, opts);
        if let Some(map) = map
            && let Some(first) = first_line(r, nonce, part)
            && first + len <= r.line_count()
            // The output's lines are the dump's from `first` (as batch.rs frames them).
            && num::lines(text)
                .zip(r.lines().skip(first))
                .all(|(a, b)| a == b.strip_suffix('\r').unwrap_or(b))
            && let Some((sample_of, how, sum_of)) = line_roles(map, len)
        {
            self.memos.push(Memo {
                part,
                first,
                len,
                parsed: parsed.clone(),
                sample_of,
                how,
                sum_of,
            });
        }
        parsed
    }
}

/// Per line of an output of `len` lines, the sample whose value it is and (a sysfs dump) the sum
/// it is a term of, with the map's `How`s; None when a line is the value of two samples or a
/// term of two sums (the memo would not know which is set last).
#[allow(clippy::type_complexity)]
fn line_roles(map: LineMap, len: usize) -> Option<(Vec<u32>, Vec<How>, Vec<u32>)> {
    let mut sample_of = vec![NONE; len];
    let one = |slots: &mut Vec<u32>, l: u32, j: usize| match slots.get_mut(l as usize) {
        Some(slot) if *slot == NONE => {
            *slot = j as u32;
            true
        }
        _ => false,
    };
    match map {
        LineMap::Each(lines) => {
            for (j, &l) in lines.iter().enumerate() {
                if !one(&mut sample_of, l, j) {
                    return None;
                }
            }
            Some((sample_of, Vec::new(), Vec::new()))
        }
        LineMap::Hw(how) => {
            let mut sum_of = vec![NONE; len];
            for (j, h) in how.iter().enumerate() {
                let fine = match h {
                    How::Sum(terms) => terms.iter().all(|&(l, _)| one(&mut sum_of, l, j)),
                    // A changed state line is not a value: it falls back to a full parse.
                    How::Fixed => true,
                    h => h.line().is_some_and(|l| one(&mut sample_of, l, j)),
                };
                if !fine {
                    return None;
                }
            }
            // A memo with no `How` would be taken for an `ethtool -S` one.
            (!how.is_empty()).then_some((sample_of, how, sum_of))
        }
    }
}

/// A sysfs dump's line `i` (of memo `m`) changed from `old` to `new`: set its sample's new value
/// and note the sum it adds to. False when the change is not a counter's value.
fn hw_line(
    memo: &mut Memo,
    i: usize,
    old: &str,
    new: &str,
    sums: &mut Vec<(usize, u32)>,
    m: usize,
) -> bool {
    let j = memo.sample_of.get(i).copied().unwrap_or(NONE);
    let k = memo.sum_of.get(i).copied().unwrap_or(NONE);
    // A line the memo maps is a counter line: the new one is too when it keeps the text before
    // the old one's value and a number follows (as `value_line` would split it, without
    // classifying the path again).
    let quick = (j != NONE || k != NONE)
        .then(|| hw_counters::known_value(old))
        .flatten()
        .and_then(|(p, _)| new.trim_end_matches('\r').strip_prefix(p))
        .and_then(|v| num::count(num::trim(v)));
    let v = match quick {
        Some(v) => v,
        None => match (hw_counters::value_line(old), hw_counters::value_line(new)) {
            (Some((a, _)), Some((b, v))) if a == b => v,
            _ => return false,
        },
    };
    if j != NONE {
        let value = memo
            .how
            .get(j as usize)
            .and_then(|h| h.value(&mut |_| Some(v)));
        match (value, memo.parsed.samples.get_mut(j as usize)) {
            (Some(value), Some(s)) => s.value = value,
            _ => return false,
        }
    }
    if k != NONE {
        sums.push((m, k));
    }
    true
}

/// The dump line where part `part`'s output starts: the first, or the one after the previous
/// part's status line (batch.rs).
fn first_line(r: &Reassembler, nonce: &str, part: usize) -> Option<usize> {
    if part == 0 {
        return Some(0);
    }
    let marker = format!("@@rocetop-{nonce}-{} ", part - 1);
    r.lines()
        .position(|l| l.starts_with(&marker))
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests;
