//! One series' history, compressed: points go into blocks of up to [`BLOCK`] points, each block
//! its first point in full, then per point the change of the time step (delta of delta: a few ms of
//! jitter on a steady interval) as a zigzag varint whose lowest bit says whether the value changed,
//! and only then the change of the value (zigzag varint). A counter that did not move costs one byte
//! a point, one that moves 2-6, instead of 16. The newest point stays unencoded, so a repeated timestamp can replace
//! it and the two newest points are read without decoding.

use super::Point;
use crate::metrics::Ts;
use std::collections::VecDeque;

/// Points per block: the first is 32 bytes of header, the rest a few bytes each.
const BLOCK: u32 = 256;

#[derive(Debug)]
struct Block {
    t0: Ts,
    raw0: u64,
    t_end: Ts,
    raw_end: u64,
    n: u32,
    bytes: Vec<u8>,
}

/// Decoder state at one point of a block.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    pos: usize,
    i: u32,
    t: Ts,
    raw: u64,
    dt: i64,
}

impl Cursor {
    fn start(b: &Block) -> Self {
        Cursor {
            pos: 0,
            i: 0,
            t: b.t0,
            raw: b.raw0,
            dt: 0,
        }
    }

    /// Step to the next point of `b`; `false` at the end (or on bytes that do not decode).
    fn advance(&mut self, b: &Block) -> bool {
        if self.i + 1 >= b.n {
            return false;
        }
        let Some(head) = varint(&b.bytes, &mut self.pos) else {
            return false;
        };
        let dv = if head & 1 == 1 {
            match varint(&b.bytes, &mut self.pos) {
                Some(v) => v,
                None => return false,
            }
        } else {
            0
        };
        self.dt = self.dt.wrapping_add(unzig(head >> 1));
        self.t = self.t.wrapping_add(self.dt);
        self.raw = self.raw.wrapping_add(unzig(dv) as u64);
        self.i += 1;
        true
    }

    fn point(&self) -> Point {
        Point {
            t: self.t,
            raw: self.raw,
        }
    }
}

fn zig(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzig(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

#[derive(Debug, Default)]
pub(super) struct Hist {
    blocks: VecDeque<Block>,
    /// The first live point, inside `blocks[0]` (points before it have expired).
    front: Option<Cursor>,
    /// The newest point, not yet encoded.
    last: Option<Point>,
    /// Encoder state: the newest encoded point and the time step that led to it.
    tail_dt: i64,
    len: usize,
}

impl Hist {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn last(&self) -> Option<Point> {
        self.last
    }

    /// The two newest points, older first.
    pub fn last_two(&self) -> Option<(Point, Point)> {
        let b = self.last?;
        let a = self.blocks.back().map(|x| Point {
            t: x.t_end,
            raw: x.raw_end,
        })?;
        Some((a, b))
    }

    /// Replace the newest point's value (a repeated timestamp).
    pub fn replace_last(&mut self, raw: u64) {
        if let Some(l) = &mut self.last {
            l.raw = raw;
        }
    }

    pub fn push(&mut self, p: Point) {
        if let Some(l) = self.last.replace(p) {
            self.encode(l);
        }
        self.len += 1;
    }

    fn encode(&mut self, p: Point) {
        match self.blocks.back_mut() {
            Some(b) if b.n < BLOCK => {
                let dt = p.t.wrapping_sub(b.t_end);
                let dv = p.raw.wrapping_sub(b.raw_end);
                // Grow by small steps: the open block of every series is never mostly slack.
                if b.bytes.capacity() - b.bytes.len() < 20 {
                    b.bytes.reserve_exact(64);
                }
                let head = zig(dt.wrapping_sub(self.tail_dt)) << 1 | u64::from(dv != 0);
                put_varint(&mut b.bytes, head);
                if dv != 0 {
                    put_varint(&mut b.bytes, zig(dv as i64));
                }
                b.n += 1;
                b.t_end = p.t;
                b.raw_end = p.raw;
                self.tail_dt = dt;
                if b.n == BLOCK {
                    b.bytes.shrink_to_fit();
                }
            }
            _ => {
                self.blocks.push_back(Block {
                    t0: p.t,
                    raw0: p.raw,
                    t_end: p.t,
                    raw_end: p.raw,
                    n: 1,
                    bytes: Vec::new(),
                });
                self.tail_dt = 0;
                if self.blocks.len() == 1 {
                    self.front = self.blocks.front().map(Cursor::start);
                }
            }
        }
    }

    /// Time of the oldest point.
    pub fn front_t(&self) -> Option<Ts> {
        match &self.front {
            Some(c) if !self.blocks.is_empty() => Some(c.t),
            _ => self.last.map(|p| p.t),
        }
    }

    /// Drop the oldest point.
    pub fn pop_front(&mut self) {
        if self.len == 0 {
            return;
        }
        self.len -= 1;
        let Some(b) = self.blocks.front() else {
            self.last = None;
            return;
        };
        let advanced = match &mut self.front {
            Some(c) => c.advance(b),
            None => false,
        };
        if !advanced {
            self.blocks.pop_front();
            self.front = self.blocks.front().map(Cursor::start);
        }
    }

    /// Drop every point older than `cutoff` (whole blocks first, without decoding them).
    pub fn expire(&mut self, cutoff: Ts) {
        while self.blocks.front().is_some_and(|b| b.t_end < cutoff) {
            let gone = match (&self.front, self.blocks.front()) {
                (Some(c), Some(b)) => (b.n - c.i) as usize,
                _ => 0,
            };
            self.len -= gone.min(self.len);
            self.blocks.pop_front();
            self.front = self.blocks.front().map(Cursor::start);
        }
        while self.front_t().is_some_and(|t| t < cutoff) {
            self.pop_front();
        }
    }

    /// Every point, oldest first.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            h: self,
            block: 0,
            cur: self.front,
            carry: None,
            done_last: false,
        }
    }

    /// Points from the last one before `since` on (all of them when none is before `since`),
    /// skipping whole blocks that end before that, undecoded.
    pub fn iter_from(&self, since: Ts) -> Iter<'_> {
        // The first block holding a point at or after `since`.
        let k = self.blocks.iter().position(|b| b.t_end >= since);
        let k = match k {
            Some(k) => k,
            None => self.blocks.len(),
        };
        if k == 0 {
            return self.iter();
        }
        let prev = self.blocks.get(k - 1).map(|b| Point {
            t: b.t_end,
            raw: b.raw_end,
        });
        Iter {
            h: self,
            block: k,
            cur: self.blocks.get(k).map(Cursor::start),
            carry: prev,
            done_last: false,
        }
    }

    /// Bytes held, for the stats.
    pub fn bytes(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| std::mem::size_of::<Block>() + b.bytes.capacity())
            .sum()
    }
}

pub(super) struct Iter<'a> {
    h: &'a Hist,
    block: usize,
    /// Position in `blocks[block]`, at a point not yet yielded.
    cur: Option<Cursor>,
    /// A point to yield before `cur`.
    carry: Option<Point>,
    done_last: bool,
}

impl Iterator for Iter<'_> {
    type Item = Point;

    fn next(&mut self) -> Option<Point> {
        if let Some(p) = self.carry.take() {
            return Some(p);
        }
        while let Some(b) = self.h.blocks.get(self.block) {
            let Some(c) = &mut self.cur else {
                self.cur = Some(Cursor::start(b));
                continue;
            };
            let p = c.point();
            if !c.advance(b) {
                self.block += 1;
                self.cur = self.h.blocks.get(self.block).map(Cursor::start);
            }
            return Some(p);
        }
        if self.done_last {
            return None;
        }
        self.done_last = true;
        self.h.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(h: &Hist) -> Vec<(Ts, u64)> {
        h.iter().map(|p| (p.t, p.raw)).collect()
    }

    #[test]
    fn round_trip_with_jitter_resets_and_big_values() {
        let mut h = Hist::default();
        let mut want = Vec::new();
        let mut v = 0u64;
        for i in 0..1000i64 {
            let t = 1_700_000_000_000 + i * 1000 + (i * 7919) % 13;
            v = match i {
                300 => 3,
                600 => u64::MAX - 5,
                601 => 2,
                _ => v.wrapping_add((i as u64 * 2654435761) % 100_000),
            };
            h.push(Point { t, raw: v });
            want.push((t, v));
        }
        assert_eq!(h.len(), 1000);
        assert_eq!(pts(&h), want);
        assert!(h.bytes() < 1000 * 6, "{} bytes", h.bytes());
        let mut flat = Hist::default();
        for i in 0..1000i64 {
            flat.push(Point {
                t: i * 1000 + i % 5,
                raw: 7,
            });
        }
        assert!(
            flat.bytes() < 1000 + 4 * 100,
            "unchanged values: a byte a point, {}",
            flat.bytes()
        );
        assert!(flat.iter().all(|p| p.raw == 7) && flat.iter().count() == 1000);
        let (a, b) = h.last_two().expect("two");
        assert_eq!(((a.t, a.raw), (b.t, b.raw)), (want[998], want[999]));
        let from: Vec<_> = h.iter_from(want[700].0).map(|p| (p.t, p.raw)).collect();
        assert!(from.contains(&want[699]) && from.ends_with(&want[700..]));
        assert!(from.len() <= 300 + BLOCK as usize, "whole blocks skipped");
    }

    #[test]
    fn expiry_and_pop_keep_exact_counts() {
        let mut h = Hist::default();
        for i in 0..600i64 {
            h.push(Point {
                t: i * 1000,
                raw: i as u64,
            });
        }
        h.expire(300_000);
        assert_eq!(h.len(), 300);
        assert_eq!(h.front_t(), Some(300_000));
        assert_eq!(pts(&h).len(), 300);
        assert_eq!(pts(&h).first(), Some(&(300_000, 300)));
        for _ in 0..299 {
            h.pop_front();
        }
        assert_eq!(pts(&h), vec![(599_000, 599)]);
        h.pop_front();
        assert_eq!(h.len(), 0);
        assert!(pts(&h).is_empty());
        h.push(Point { t: 700_000, raw: 1 });
        h.push(Point { t: 701_000, raw: 2 });
        assert_eq!(pts(&h), vec![(700_000, 1), (701_000, 2)]);
    }
}
