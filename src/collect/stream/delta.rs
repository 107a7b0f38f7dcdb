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

use super::frame::Reassembler;
use crate::metrics::{Parsed, Value};
use crate::parse::host::ethtool::counter_line;
use crate::parse::{self, Ctx, Options, ParseKind, num};

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
}

/// The memos of one stream (a new stream starts with none).
#[derive(Default)]
pub(super) struct Delta {
    memos: Vec<Memo>,
    /// Outputs answered from a memo.
    #[cfg(test)]
    hits: u64,
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
        let len = num::lines(text).count();
        if let Some(m) = self.memos.iter().find(|m| m.part == part)
            && m.len == len
        {
            #[cfg(test)]
            {
                self.hits += 1;
            }
            return m.parsed.clone();
        }
        self.memos.retain(|m| m.part != part);
        let (parsed, lines) = parse::parse_with_lines(kind, text, ctx, opts);
        if let Some(lines) = lines
            && let Some(first) = first_line(r, nonce, part)
            && first + len <= r.line_count()
            // The output's lines are the dump's from `first` (as batch.rs frames them).
            && num::lines(text)
                .zip(r.lines().skip(first))
                .all(|(a, b)| a == b.strip_suffix('\r').unwrap_or(b))
        {
            let mut sample_of = vec![NONE; len];
            let mut ok = true;
            for (j, &l) in lines.iter().enumerate() {
                match sample_of.get_mut(l as usize) {
                    Some(slot) if *slot == NONE => *slot = j as u32,
                    _ => ok = false,
                }
            }
            if ok {
                self.memos.push(Memo {
                    part,
                    first,
                    len,
                    parsed: parsed.clone(),
                    sample_of,
                });
            }
        }
        parsed
    }
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
