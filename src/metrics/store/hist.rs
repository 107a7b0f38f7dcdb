//! One series' history, compressed. Points are named by their poll's sequence number in the
//! source's clock (`store.rs`: every series of a source is sampled at the same instants, so the
//! timestamps are kept once per source, not once per series). Points go into blocks of up to
//! [`BLOCK`] points, each block its first point in full, then tokens: a run of points one poll
//! apart whose value did not change (one varint however long the run: a counter that does not
//! move costs nothing per point), one point one poll later with the change of its value (zigzag
//! varint), or a point after a gap of polls with its change. The newest point stays unencoded, so
//! a repeated timestamp can replace it and the two newest points are read without decoding.

mod blocks;
mod varint;

use crate::metrics::Ts;
pub(super) use blocks::Slab;
use blocks::{Block, Cursor, More};
use std::collections::VecDeque;

/// A decoded point: its poll's sequence number and its raw value.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct At {
    pub seq: i64,
    pub raw: u64,
}

/// A series' history as the series holds it: 20 bytes, aligned to 4 so that it packs beside the
/// series' source (a row of a big answer makes ten series, so these bytes are most
/// of what a row costs). The newest point is unencoded; before it either a run held as a count
/// (the series has not changed and missed no poll since its first point: most error, drop and
/// `enabled` series of a switch, which then cost nothing more however long they are kept) or,
/// once it changed, encoded blocks in a [`Slab`] slot. Its times are its source's clock's, looked
/// up by sequence number; the older of the two newest points is kept here as a difference from
/// the newest while that fits, so a rate reads one series and the clock, never the slot.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Hist {
    /// The newest point's value, low half first (two words keep the alignment at 4).
    raw: [u32; 2],
    /// The newest point's poll.
    seq: u32,
    /// With [`MORE`]: the points before the newest are encoded in the slab slot named by the
    /// other bits. Without: how many points there are (0: none), all but the newest the run of
    /// polls just before it, each with its value.
    word: u32,
    /// The low [`TAG_BITS`] are the owner's (the series' kind and scale). With [`PREV`], while
    /// blocks hold the older points: the older of the two newest points is one poll before the
    /// newest and its value is the newest's less the signed number in the bits from
    /// [`DELTA_SHIFT`] on (counters move by far less than 2^26 a poll, but for bytes).
    tag: u32,
}

const MORE: u32 = 1 << 31;
const TAG_BITS: u32 = 4;
const TAG_MASK: u32 = (1 << TAG_BITS) - 1;
const PREV: u32 = 1 << TAG_BITS;
const DELTA_SHIFT: u32 = TAG_BITS + 1;
/// Differences kept inline lie in `-LIMIT..LIMIT`.
const LIMIT: i64 = 1 << (31 - DELTA_SHIFT);

/// Empty blocks, for reading a history held inline as one that has none.
static NO_BLOCKS: VecDeque<Block> = VecDeque::new();

impl Hist {
    /// An empty history carrying the owner's `tag` (its low [`TAG_BITS`]).
    pub fn tagged(tag: u32) -> Hist {
        Hist {
            tag: tag & TAG_MASK,
            ..Hist::default()
        }
    }

    pub fn tag(&self) -> u32 {
        self.tag & TAG_MASK
    }

    pub fn is_empty(&self) -> bool {
        self.word == 0
    }

    pub fn len(&self, m: &Slab) -> usize {
        match self.slot() {
            Some(i) => m.get(i).map_or(0, |x| x.len as usize),
            None => self.word as usize,
        }
    }

    fn slot(&self) -> Option<u32> {
        (self.word & MORE != 0).then_some(self.word & !MORE)
    }

    fn more<'a>(&self, m: &'a Slab) -> Option<&'a More> {
        m.get(self.slot()?)
    }

    fn blocks<'a>(&self, m: &'a Slab) -> &'a VecDeque<Block> {
        self.more(m).map_or(&NO_BLOCKS, |x| &x.blocks)
    }

    /// While inline: the points of the run before the newest.
    fn run_len(&self) -> u32 {
        match self.slot() {
            Some(_) => 0,
            None => self.word.saturating_sub(1),
        }
    }

    fn raw(&self) -> u64 {
        u64::from(self.raw[0]) | u64::from(self.raw[1]) << 32
    }

    fn set_last(&mut self, p: At) {
        self.raw = [p.raw as u32, (p.raw >> 32) as u32];
        // Sequence numbers count one source's polls from 0: 2^32 of them is over a century of
        // polls a second.
        self.seq = p.seq as u32;
    }

    /// The newest point.
    pub fn last(&self) -> Option<At> {
        (!self.is_empty()).then(|| At {
            seq: i64::from(self.seq),
            raw: self.raw(),
        })
    }

    /// The two newest points, older first: from the series alone unless the older one is more
    /// than a poll back or far from the newest in value.
    pub fn last_two(&self, m: &Slab) -> Option<(At, At)> {
        let b = self.last()?;
        let a = match self.slot() {
            None if self.word >= 2 => At {
                seq: b.seq - 1,
                raw: b.raw,
            },
            None => return None,
            Some(_) if self.tag & PREV != 0 => At {
                seq: b.seq - 1,
                raw: b
                    .raw
                    .wrapping_sub(((self.tag as i32) >> DELTA_SHIFT) as i64 as u64),
            },
            Some(i) => {
                let x = m.get(i)?.blocks.back()?;
                At {
                    seq: x.seq_end,
                    raw: x.raw_end,
                }
            }
        };
        Some((a, b))
    }

    /// Keep the older of the two newest points inline if it can be (after any change).
    fn set_prev(&mut self, m: &Slab) {
        self.tag &= TAG_MASK;
        let (Some(x), Some(b)) = (self.more(m).and_then(|x| x.blocks.back()), self.last()) else {
            return;
        };
        let d = b.raw.wrapping_sub(x.raw_end) as i64;
        if x.seq_end == b.seq - 1 && (-LIMIT..LIMIT).contains(&d) {
            self.tag |= PREV | (d as u32) << DELTA_SHIFT;
        }
    }

    /// Replace the newest point's value (a repeated timestamp); `time` gives a poll's time.
    pub fn replace_last(&mut self, raw: u64, m: &mut Slab, time: impl Fn(i64) -> Option<Ts>) {
        let Some(l) = self.last() else {
            return;
        };
        if raw != l.raw && self.run_len() > 0 {
            // The run has the newest point's value: it goes into blocks before that changes.
            let t = time(l.seq).unwrap_or_default();
            if self.spill(m, &time, t).is_none() {
                return;
            }
        }
        self.set_last(At { seq: l.seq, raw });
        self.set_prev(m);
    }

    /// Add a point newer than every other (`seq` greater than the newest one's). `time` gives
    /// the time of a poll, for the points that go into blocks. `false`: no slot was left for the
    /// encoded points, and the point was not added.
    pub fn push(&mut self, p: At, m: &mut Slab, time: impl Fn(i64) -> Option<Ts>) -> bool {
        let Some(l) = self.last() else {
            self.set_last(p);
            self.word = 1;
            return true;
        };
        if self.slot().is_none() && p.seq == l.seq.wrapping_add(1) && p.raw == l.raw {
            // Unchanged one poll on: the run grows, nothing is encoded.
            self.word += 1;
        } else {
            let lt = time(l.seq).unwrap_or_default();
            let Some(more) = self.spill(m, &time, lt) else {
                return false;
            };
            more.encode(l, lt);
            more.len += 1;
        }
        self.set_last(p);
        self.set_prev(m);
        true
    }

    /// The slot of the encoded points, the inline run moved into it first (its points timed by
    /// `time`, `t` for one it does not know). `None`: no slot left.
    fn spill<'a>(
        &mut self,
        m: &'a mut Slab,
        time: &impl Fn(i64) -> Option<Ts>,
        t: Ts,
    ) -> Option<&'a mut More> {
        let i = match self.slot() {
            Some(i) => i,
            None => {
                let (run, raw, end) = (self.run_len(), self.raw(), i64::from(self.seq));
                let i = m.take(self.word)?;
                self.word = MORE | i;
                let more = m.get_mut(i)?;
                for seq in end - i64::from(run)..end {
                    more.encode(At { seq, raw }, time(seq).unwrap_or(t));
                }
                i
            }
        };
        m.get_mut(i)
    }

    /// A copy holding only the points up to sequence `last_seq`, timed by `time` (time travel,
    /// `asof.rs`), its encoded points in `out`. Every block but the last is full, so whole blocks
    /// before the last one kept are copied as bytes, undecoded; only the rest is decoded and
    /// pushed again, which also leaves the newest kept point unencoded as `push` does.
    pub fn up_to(
        &self,
        last_seq: i64,
        m: &Slab,
        out: &mut Slab,
        time: impl Fn(i64) -> Option<Ts>,
    ) -> Hist {
        let blocks = self.blocks(m);
        let whole = blocks.iter().take_while(|b| b.seq_end <= last_seq).count();
        let k = whole.saturating_sub(1);
        if let Some(more) = self.more(m)
            && k > 0
        {
            let copied: VecDeque<Block> = more.blocks.iter().take(k).cloned().collect();
            let n: u32 = copied.iter().map(|b| b.n).sum();
            let n = n - more.front.i.min(n);
            let mut h = Hist::tagged(self.tag());
            if let Some(i) = out.take(n)
                && let Some(x) = out.get_mut(i)
            {
                x.blocks = copied;
                x.front = more.front;
                h.word = MORE | i;
                let it = Iter {
                    h: *self,
                    blocks,
                    block: k,
                    cur: blocks.get(k).map(Cursor::start),
                    carry: None,
                    run: (0, 0),
                    done_last: false,
                };
                let mut first = true;
                for p in it {
                    if p.seq > last_seq {
                        break;
                    }
                    if time(p.seq).is_none() {
                        continue;
                    }
                    if first {
                        // The copied blocks hold every point before it: it is the newest so far.
                        h.set_last(p);
                        if let Some(x) = out.get_mut(i) {
                            x.len += 1;
                        }
                        first = false;
                    } else {
                        h.push(p, out, &time);
                    }
                }
                if !first {
                    h.set_prev(out);
                    return h;
                }
                out.give_back(i);
            }
        }
        let mut h = Hist::tagged(self.tag());
        for p in self.iter(m) {
            if p.seq > last_seq {
                break;
            }
            if time(p.seq).is_some() {
                h.push(p, out, &time);
            }
        }
        h
    }

    /// While every point is one run (the series has not changed nor missed a poll, and holds no
    /// block): the sequence numbers of its oldest and newest points and their value.
    pub fn run(&self) -> Option<(i64, i64, u64)> {
        match self.slot() {
            None if self.word > 0 => Some((
                i64::from(self.seq) - i64::from(self.run_len()),
                i64::from(self.seq),
                self.raw(),
            )),
            _ => None,
        }
    }

    /// Sequence number of the oldest point.
    pub fn front_seq(&self, m: &Slab) -> Option<i64> {
        match self.slot() {
            Some(i) => m.get(i).map(|x| x.front.seq),
            None => self.run().map(|r| r.0),
        }
    }

    /// Drop the oldest point.
    pub fn pop_front(&mut self, m: &mut Slab) {
        let Some(i) = self.slot() else {
            self.word = self.word.saturating_sub(1);
            return;
        };
        let Some(more) = m.get_mut(i) else {
            return;
        };
        more.len = more.len.saturating_sub(1);
        let advanced = match more.blocks.front() {
            Some(b) => more.front.advance(b),
            None => false,
        };
        if advanced {
            return;
        }
        more.blocks.pop_front();
        match more.blocks.front() {
            Some(b) => more.front = Cursor::start(b),
            None => {
                // Only the newest point is left.
                self.word = more.len.min(1);
                m.give_back(i);
            }
        }
    }

    /// Drop every point of a poll older than `cutoff` (whole blocks first, without decoding).
    pub fn expire(&mut self, cutoff: i64, m: &mut Slab) {
        if let Some(i) = self.slot()
            && let Some(more) = m.get_mut(i)
        {
            while more.blocks.front().is_some_and(|b| b.seq_end < cutoff) {
                let gone = more.blocks.front().map_or(0, |b| b.n - more.front.i);
                more.len -= gone.min(more.len);
                more.blocks.pop_front();
                if let Some(b) = more.blocks.front() {
                    more.front = Cursor::start(b);
                }
            }
            if more.blocks.is_empty() {
                // Only the newest point is left.
                self.word = more.len.min(1);
                m.give_back(i);
            }
        }
        if self.slot().is_none() {
            // Inline: the run and the newest point, told by their sequence numbers.
            let seq = i64::from(self.seq);
            if self.word > 0 && seq < cutoff {
                self.word = 0;
            } else if self.word > 0 {
                let run = self
                    .run_len()
                    .min(u32::try_from(seq - cutoff).unwrap_or(u32::MAX));
                self.word = run + 1;
            }
            return;
        }
        while self.front_seq(m).is_some_and(|s| s < cutoff) {
            self.pop_front(m);
        }
    }

    /// Every point, oldest first.
    pub fn iter<'a>(&self, m: &'a Slab) -> Iter<'a> {
        let more = self.more(m);
        Iter {
            h: *self,
            blocks: self.blocks(m),
            block: 0,
            cur: more.map(|x| x.front),
            carry: None,
            run: match self.run() {
                Some((first, _, _)) => (first, self.run_len()),
                None => (0, 0),
            },
            done_last: false,
        }
    }

    /// Points from the last one before time `since` on (all of them when none is before it),
    /// skipping whole blocks that end before that, undecoded.
    pub fn iter_from<'a>(&self, since: Ts, m: &'a Slab) -> Iter<'a> {
        let blocks = self.blocks(m);
        // The first block holding a point at or after `since`.
        let k = blocks
            .iter()
            .position(|b| b.t_end >= since)
            .unwrap_or(blocks.len());
        if k == 0 {
            return self.iter(m);
        }
        let prev = blocks.get(k - 1).map(|b| At {
            seq: b.seq_end,
            raw: b.raw_end,
        });
        Iter {
            h: *self,
            blocks,
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
    pub fn flat_from(&self, since: Ts, m: &Slab) -> bool {
        if self.is_empty() || self.slot().is_none() {
            // Nothing, or an inline run and its newest point: one value.
            return true;
        }
        if self.tag & PREV != 0 && self.tag >> DELTA_SHIFT != 0 {
            // The newest two points differ, and `iter_from` yields both whatever `since` (the
            // older is the last encoded point): a moving counter is told without the slab.
            return false;
        }
        let blocks = self.blocks(m);
        let k = blocks
            .iter()
            .position(|b| b.t_end >= since)
            .unwrap_or(blocks.len());
        let v = self.raw();
        // The point `iter_from` starts with: the end of the block before `k`.
        let carry = k.checked_sub(1).and_then(|j| blocks.get(j));
        carry.is_none_or(|b| b.raw_end == v)
            && blocks
                .range(k..)
                .all(|b| b.flat && b.raw0 == v && b.raw_end == v)
    }
}

pub(super) struct Iter<'a> {
    /// A copy of the history's inline part.
    h: Hist,
    blocks: &'a VecDeque<Block>,
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
        let blocks = self.blocks;
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
                raw: self.h.raw(),
            });
        }
        if self.done_last {
            return None;
        }
        self.done_last = true;
        self.h.last()
    }
}

#[cfg(test)]
mod tests;
