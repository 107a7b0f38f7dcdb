//! One series' history, compressed. Points are named by their poll's sequence number in the
//! source's clock (`store.rs`: every series of a source is sampled at the same instants, so the
//! timestamps are kept once per source, not once per series). Points go into blocks of up to
//! [`BLOCK`] points, each block its first point in full, then tokens: a run of points one poll
//! apart whose value did not change (one varint however long the run: a counter that does not
//! move costs nothing per point), one point one poll later with the change of its value (zigzag
//! varint), or a point after a gap of polls with its change. The newest point stays unencoded, so
//! a repeated timestamp can replace it and the two newest points are read without decoding.

mod varint;

use crate::metrics::Ts;
use std::collections::VecDeque;
use varint::{put_varint, unzig, varint, zig};

/// Points per block: the first is held in the header, the rest a few bytes each (or nothing).
const BLOCK: u32 = 256;

/// Token tags (the lowest two bits of a token's first varint).
const RUN: u64 = 0;
const NEXT: u64 = 1;
const GAP: u64 = 2;

/// A decoded point: its poll's sequence number and its raw value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct At {
    pub seq: i64,
    pub raw: u64,
}

#[derive(Clone, Debug)]
struct Block {
    seq0: i64,
    raw0: u64,
    seq_end: i64,
    /// Time of the newest point, so the newest two points need no clock and whole blocks are
    /// skipped by time.
    t_end: Ts,
    raw_end: u64,
    n: u32,
    /// Where the last token starts, while it is a run that may grow.
    run_at: Option<u32>,
    /// Every point of the block has the value `raw0` (a counter that did not move: most error
    /// and drop counters), so "how much did it grow" needs no decoding.
    flat: bool,
    bytes: Vec<u8>,
}

/// Decoder state at one point of a block.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    pos: u32,
    i: u32,
    /// Points of the current run still to come.
    run_left: u32,
    seq: i64,
    raw: u64,
}

impl Cursor {
    fn start(b: &Block) -> Self {
        Cursor {
            pos: 0,
            i: 0,
            run_left: 0,
            seq: b.seq0,
            raw: b.raw0,
        }
    }

    /// Step to the next point of `b`; `false` at the end (or on bytes that do not decode).
    fn advance(&mut self, b: &Block) -> bool {
        if self.i + 1 >= b.n {
            return false;
        }
        if self.run_left > 0 {
            self.run_left -= 1;
            self.seq += 1;
            self.i += 1;
            return true;
        }
        let mut pos = self.pos as usize;
        let Some(head) = varint(&b.bytes, &mut pos) else {
            return false;
        };
        match head & 3 {
            RUN => {
                self.run_left = ((head >> 2) as u32).saturating_sub(1);
                self.seq += 1;
            }
            NEXT => {
                self.raw = self.raw.wrapping_add(unzig(head >> 2) as u64);
                self.seq += 1;
            }
            _ => {
                let Some(dv) = varint(&b.bytes, &mut pos) else {
                    return false;
                };
                self.seq = self.seq.wrapping_add((head >> 2) as i64);
                self.raw = self.raw.wrapping_add(unzig(dv) as u64);
            }
        }
        self.pos = pos as u32;
        self.i += 1;
        true
    }

    fn point(&self) -> At {
        At {
            seq: self.seq,
            raw: self.raw,
        }
    }
}

/// A series' history: the newest point unencoded; before it either a run held as a count (the
/// series has not changed and missed no poll since its first point: most error, drop and
/// `enabled` series of a switch, which then cost no allocation however long they are kept) or,
/// once it changed, encoded blocks. 40 bytes inline (issue #22: a row of a big answer makes ten
/// series, and a `VecDeque` of blocks per series cost ~350 heap bytes from its second point).
#[derive(Debug, Default)]
pub(super) struct Hist {
    /// The newest point and its time (while `len > 0`).
    last: At,
    last_t: Ts,
    len: u32,
    /// While `more` is `None`: the points before the newest are the `run` polls just before it,
    /// each with its value. Always 0 while `more` holds the older points.
    run: u32,
    /// The points before the newest, encoded; never an empty deque.
    more: Option<Box<Blocks>>,
}

#[derive(Debug)]
struct Blocks {
    blocks: VecDeque<Block>,
    /// The first live point, inside `blocks[0]` (points before it have expired).
    front: Cursor,
}

/// Empty blocks, for reading a history held inline as one that has none.
static NO_BLOCKS: VecDeque<Block> = VecDeque::new();

impl Hist {
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn blocks(&self) -> &VecDeque<Block> {
        self.more.as_ref().map_or(&NO_BLOCKS, |m| &m.blocks)
    }

    /// The newest point and its time.
    pub fn last(&self) -> Option<(At, Ts)> {
        (self.len > 0).then_some((self.last, self.last_t))
    }

    /// The two newest points with their times, older first; `time` gives a poll's time (asked
    /// only for a point of an inline run, whose time is not kept here).
    pub fn last_two(&self, time: impl FnOnce(i64) -> Option<Ts>) -> Option<((At, Ts), (At, Ts))> {
        if self.len < 2 {
            return None;
        }
        let b = (self.last, self.last_t);
        let a = match self.blocks().back() {
            Some(x) => (
                At {
                    seq: x.seq_end,
                    raw: x.raw_end,
                },
                x.t_end,
            ),
            None => {
                let seq = self.last.seq - 1;
                let raw = self.last.raw;
                (At { seq, raw }, time(seq)?)
            }
        };
        Some((a, b))
    }

    /// Replace the newest point's value (a repeated timestamp); `time` as for [`Hist::push`].
    pub fn replace_last(&mut self, raw: u64, time: impl Fn(i64) -> Option<Ts>) {
        if self.len == 0 {
            return;
        }
        if raw != self.last.raw && self.run > 0 {
            // The run has the newest point's value: it goes into blocks before that changes.
            self.spill(&time);
        }
        self.last.raw = raw;
    }

    /// Add a point newer than every other (`seq` greater than the newest one's). `time` gives
    /// the time of a poll, for the points of an inline run that go into blocks.
    pub fn push(&mut self, p: At, t: Ts, time: impl Fn(i64) -> Option<Ts>) {
        if self.len == 0 {
            (self.last, self.last_t, self.len, self.run) = (p, t, 1, 0);
            return;
        }
        let (l, lt) = (self.last, self.last_t);
        if self.more.is_none() && p.seq == l.seq.wrapping_add(1) && p.raw == l.raw {
            // Unchanged one poll on: the run grows, nothing is encoded.
            self.run += 1;
        } else {
            self.spill(&time);
            self.encode(l, lt);
        }
        (self.last, self.last_t) = (p, t);
        self.len += 1;
    }

    /// Move an inline run into blocks.
    fn spill(&mut self, time: &impl Fn(i64) -> Option<Ts>) {
        let (run, raw, end) = (self.run, self.last.raw, self.last.seq);
        self.run = 0;
        for seq in end - i64::from(run)..end {
            self.encode(At { seq, raw }, time(seq).unwrap_or(self.last_t));
        }
    }

    fn encode(&mut self, p: At, t: Ts) {
        let more = self.more.get_or_insert_with(|| {
            Box::new(Blocks {
                blocks: VecDeque::with_capacity(1),
                front: Cursor {
                    pos: 0,
                    i: 0,
                    run_left: 0,
                    seq: p.seq,
                    raw: p.raw,
                },
            })
        });
        match more.blocks.back_mut() {
            Some(b) if b.n < BLOCK => {
                let ds = p.seq.wrapping_sub(b.seq_end);
                let dv = zig(p.raw.wrapping_sub(b.raw_end) as i64);
                // Grow by small steps: the open block of every series is never mostly slack.
                if b.bytes.capacity() - b.bytes.len() < 12 {
                    b.bytes.reserve_exact(32);
                }
                if ds == 1 && dv == 0 {
                    match b.run_at {
                        Some(at) => {
                            let mut pos = at as usize;
                            let r = varint(&b.bytes, &mut pos).map_or(1, |h| h >> 2);
                            b.bytes.truncate(at as usize);
                            put_varint(&mut b.bytes, (r + 1) << 2 | RUN);
                        }
                        None => {
                            b.run_at = Some(b.bytes.len() as u32);
                            put_varint(&mut b.bytes, 1 << 2 | RUN);
                        }
                    }
                } else {
                    b.run_at = None;
                    if ds == 1 && dv < 1 << 62 {
                        put_varint(&mut b.bytes, dv << 2 | NEXT);
                    } else {
                        put_varint(&mut b.bytes, (ds as u64) << 2 | GAP);
                        put_varint(&mut b.bytes, dv);
                    }
                }
                b.flat &= dv == 0;
                b.n += 1;
                b.seq_end = p.seq;
                b.t_end = t;
                b.raw_end = p.raw;
                if b.n == BLOCK {
                    b.run_at = None;
                    b.bytes.shrink_to_fit();
                }
            }
            _ => {
                let first = more.blocks.is_empty();
                more.blocks.push_back(Block {
                    seq0: p.seq,
                    raw0: p.raw,
                    seq_end: p.seq,
                    t_end: t,
                    raw_end: p.raw,
                    n: 1,
                    run_at: None,
                    flat: true,
                    bytes: Vec::new(),
                });
                if first && let Some(b) = more.blocks.front() {
                    more.front = Cursor::start(b);
                }
            }
        }
    }

    /// A copy holding only the points up to sequence `last_seq`, timed by `time` (time travel,
    /// `asof.rs`). Every block but the last is full, so whole blocks before the last one kept are
    /// copied as bytes, undecoded; only the rest is decoded and pushed again, which also leaves the
    /// newest kept point unencoded as `push` does.
    pub fn up_to(&self, last_seq: i64, time: impl Fn(i64) -> Option<Ts>) -> Hist {
        let whole = self
            .blocks()
            .iter()
            .take_while(|b| b.seq_end <= last_seq)
            .count();
        let m = whole.saturating_sub(1);
        if let Some(more) = &self.more
            && m > 0
        {
            let blocks: VecDeque<Block> = more.blocks.iter().take(m).cloned().collect();
            let n: u32 = blocks.iter().map(|b| b.n).sum();
            let mut out = Hist {
                len: n - more.front.i.min(n),
                more: Some(Box::new(Blocks {
                    blocks,
                    front: more.front,
                })),
                ..Hist::default()
            };
            let copied = out.len;
            let it = Iter {
                h: self,
                block: m,
                cur: more.blocks.get(m).map(Cursor::start),
                carry: None,
                run: (0, 0),
                done_last: false,
            };
            let mut first = true;
            for p in it {
                if p.seq > last_seq {
                    break;
                }
                if let Some(t) = time(p.seq) {
                    if first {
                        // The copied blocks hold every point before it: it is the newest so far.
                        (out.last, out.last_t) = (p, t);
                        out.len += 1;
                        first = false;
                    } else {
                        out.push(p, t, &time);
                    }
                }
            }
            if out.len > copied {
                return out;
            }
        }
        let mut out = Hist::default();
        for p in self.iter() {
            if p.seq > last_seq {
                break;
            }
            if let Some(t) = time(p.seq) {
                out.push(p, t, &time);
            }
        }
        out
    }

    /// While every point is one run (the series has not changed nor missed a poll, and holds no
    /// block): the sequence numbers of its oldest and newest points and their value.
    pub fn run(&self) -> Option<(i64, i64, u64)> {
        match self.more {
            None if self.len > 0 => Some((
                self.last.seq - i64::from(self.run),
                self.last.seq,
                self.last.raw,
            )),
            _ => None,
        }
    }

    /// Sequence number of the oldest point.
    pub fn front_seq(&self) -> Option<i64> {
        match &self.more {
            Some(m) => Some(m.front.seq),
            None => (self.len > 0).then(|| self.last.seq - i64::from(self.run)),
        }
    }

    /// Drop the oldest point.
    pub fn pop_front(&mut self) {
        if self.len == 0 {
            return;
        }
        self.len -= 1;
        let Some(more) = &mut self.more else {
            self.run = self.run.saturating_sub(1);
            return;
        };
        let advanced = match more.blocks.front() {
            Some(b) => more.front.advance(b),
            None => false,
        };
        if !advanced {
            more.blocks.pop_front();
            match more.blocks.front() {
                Some(b) => more.front = Cursor::start(b),
                None => self.more = None,
            }
        }
    }

    /// Drop every point of a poll older than `cutoff` (whole blocks first, without decoding).
    pub fn expire(&mut self, cutoff: i64) {
        if let Some(more) = &mut self.more {
            while more.blocks.front().is_some_and(|b| b.seq_end < cutoff) {
                let gone = more.blocks.front().map_or(0, |b| b.n - more.front.i);
                self.len -= gone.min(self.len);
                more.blocks.pop_front();
                if let Some(b) = more.blocks.front() {
                    more.front = Cursor::start(b);
                }
            }
            if more.blocks.is_empty() {
                self.more = None;
            }
        }
        if self.more.is_none() {
            // Inline: the run and the newest point, told by their sequence numbers.
            if self.len > 0 && self.last.seq < cutoff {
                (self.len, self.run) = (0, 0);
            } else if self.len > 0 {
                self.run = self
                    .run
                    .min(u32::try_from(self.last.seq - cutoff).unwrap_or(u32::MAX));
                self.len = self.run + 1;
            }
            return;
        }
        while self.front_seq().is_some_and(|s| s < cutoff) {
            self.pop_front();
        }
    }

    /// Every point, oldest first.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            h: self,
            block: 0,
            cur: self.more.as_ref().map(|m| m.front),
            carry: None,
            run: match self.more {
                None if self.len > 0 => (self.last.seq - i64::from(self.run), self.run),
                _ => (0, 0),
            },
            done_last: false,
        }
    }

    /// Points from the last one before time `since` on (all of them when none is before it),
    /// skipping whole blocks that end before that, undecoded.
    pub fn iter_from(&self, since: Ts) -> Iter<'_> {
        let blocks = self.blocks();
        // The first block holding a point at or after `since`.
        let k = blocks
            .iter()
            .position(|b| b.t_end >= since)
            .unwrap_or(blocks.len());
        if k == 0 {
            return self.iter();
        }
        let prev = blocks.get(k - 1).map(|b| At {
            seq: b.seq_end,
            raw: b.raw_end,
        });
        Iter {
            h: self,
            block: k,
            cur: blocks.get(k).map(Cursor::start),
            carry: prev,
            run: (0, 0),
            done_last: false,
        }
    }

    /// Whether every point [`iter_from`] yields for `since` has the same value, told from the
    /// blocks' headers without decoding (`false` when unsure).
    ///
    /// [`iter_from`]: Hist::iter_from
    pub fn flat_from(&self, since: Ts) -> bool {
        if self.len == 0 || self.more.is_none() {
            // Nothing, or an inline run and its newest point: one value.
            return true;
        }
        let blocks = self.blocks();
        let k = blocks
            .iter()
            .position(|b| b.t_end >= since)
            .unwrap_or(blocks.len());
        let v = self.last.raw;
        // The point `iter_from` starts with: the end of the block before `k`.
        let carry = k.checked_sub(1).and_then(|j| blocks.get(j));
        carry.is_none_or(|b| b.raw_end == v)
            && blocks
                .range(k..)
                .all(|b| b.flat && b.raw0 == v && b.raw_end == v)
    }

    /// Heap bytes held, for the stats.
    pub fn bytes(&self) -> usize {
        self.more.as_ref().map_or(0, |m| {
            std::mem::size_of::<Blocks>()
                + m.blocks.capacity() * std::mem::size_of::<Block>()
                + m.blocks.iter().map(|b| b.bytes.capacity()).sum::<usize>()
        })
    }
}

pub(super) struct Iter<'a> {
    h: &'a Hist,
    block: usize,
    /// Position in `blocks[block]`, at a point not yet yielded.
    cur: Option<Cursor>,
    /// A point to yield before `cur`.
    carry: Option<At>,
    /// Points of an inline run still to yield: the next one's sequence number and how many.
    run: (i64, u32),
    done_last: bool,
}

impl Iterator for Iter<'_> {
    type Item = At;

    fn next(&mut self) -> Option<At> {
        if let Some(p) = self.carry.take() {
            return Some(p);
        }
        let blocks = self.h.blocks();
        while let Some(b) = blocks.get(self.block) {
            let Some(c) = &mut self.cur else {
                self.cur = Some(Cursor::start(b));
                continue;
            };
            let p = c.point();
            if !c.advance(b) {
                self.block += 1;
                self.cur = blocks.get(self.block).map(Cursor::start);
            }
            return Some(p);
        }
        if self.run.1 > 0 {
            let seq = self.run.0;
            self.run = (seq + 1, self.run.1 - 1);
            return Some(At {
                seq,
                raw: self.h.last.raw,
            });
        }
        if self.done_last || self.h.len == 0 {
            return None;
        }
        self.done_last = true;
        Some(self.h.last)
    }
}

#[cfg(test)]
mod tests;
