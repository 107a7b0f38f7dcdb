//! A history's encoded points: blocks of tokens ([`Block`], read with a [`Cursor`]), one
//! history's blocks ([`More`]) and the store's slots of them ([`Slab`]).

use super::varint::{put_varint, unzig, varint, zig};
use super::{At, MORE};
use crate::metrics::Ts;
use crate::metrics::store::chunks::Chunked;
use std::collections::VecDeque;

/// Points per block: the first is held in the header, the rest a few bytes each (or nothing).
pub(super) const BLOCK: u32 = 256;

/// Token tags (the lowest two bits of a token's first varint).
const RUN: u64 = 0;
const NEXT: u64 = 1;
const GAP: u64 = 2;

/// Up to [`BLOCK`] points: the first in full, then tokens.
#[derive(Clone, Debug)]
pub(super) struct Block {
    pub(super) seq0: i64,
    pub(super) raw0: u64,
    pub(super) seq_end: i64,
    /// Time of the newest point, so whole blocks are skipped by time without the clock.
    pub(super) t_end: Ts,
    pub(super) raw_end: u64,
    pub(super) n: u32,
    /// Where the last token starts, while it is a run that may grow.
    pub(super) run_at: Option<u32>,
    /// Every point of the block has the value `raw0` (a counter that did not move: most error
    /// and drop counters), so "how much did it grow" needs no decoding.
    pub(super) flat: bool,
    pub(super) bytes: Vec<u8>,
}

/// Decoder state at one point of a block.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Cursor {
    pub(super) pos: u32,
    pub(super) i: u32,
    /// Points of the current run still to come.
    pub(super) run_left: u32,
    pub(super) seq: i64,
    pub(super) raw: u64,
}

impl Cursor {
    pub(super) fn start(b: &Block) -> Self {
        Cursor {
            pos: 0,
            i: 0,
            run_left: 0,
            seq: b.seq0,
            raw: b.raw0,
        }
    }

    /// Step to the next point of `b`; `false` at the end (or on bytes that do not decode).
    pub(super) fn advance(&mut self, b: &Block) -> bool {
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

    pub(super) fn point(&self) -> At {
        At {
            seq: self.seq,
            raw: self.raw,
        }
    }
}

/// The encoded points of a history: what a series that changed holds besides its [`Hist`].
#[derive(Debug, Default)]
pub(super) struct More {
    pub(super) blocks: VecDeque<Block>,
    /// The first live point, inside `blocks[0]` (points before it have expired).
    pub(super) front: Cursor,
    /// Points of the whole history, the newest included.
    pub(super) len: u32,
}

impl More {
    pub(super) fn encode(&mut self, p: At, t: Ts) {
        let front_in_back = self.blocks.len() == 1;
        match self.blocks.back_mut() {
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
                            let end = b.bytes.len();
                            let mut pos = at as usize;
                            let r = varint(&b.bytes, &mut pos).map_or(1, |h| h >> 2);
                            b.bytes.truncate(at as usize);
                            put_varint(&mut b.bytes, (r + 1) << 2 | RUN);
                            if front_in_back && self.front.pos as usize == end {
                                // The front read the run that grew (its last token): it has one
                                // more point of it to come, and the count may be a byte longer.
                                self.front.pos = b.bytes.len() as u32;
                                self.front.run_left += 1;
                            }
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
                let first = self.blocks.is_empty();
                if first {
                    self.blocks.reserve_exact(1);
                }
                self.blocks.push_back(Block {
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
                if first && let Some(b) = self.blocks.front() {
                    self.front = Cursor::start(b);
                }
            }
        }
    }
}

/// The encoded parts of every history of a store, in slots named by a number (a series holds 4
/// bytes where a pointer was 8, and a series that never changed holds no slot). A slot let go
/// is handed out again.
#[derive(Debug, Default)]
pub(in crate::metrics::store) struct Slab {
    pub(super) slots: Chunked<More>,
    pub(super) free: Vec<u32>,
}

impl Slab {
    pub(super) fn get(&self, i: u32) -> Option<&More> {
        self.slots.get(i as usize)
    }

    pub(super) fn get_mut(&mut self, i: u32) -> Option<&mut More> {
        self.slots.get_mut(i as usize)
    }

    /// An empty slot holding `len` points; `None` when every slot number is taken.
    pub(super) fn take(&mut self, len: u32) -> Option<u32> {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                let i = u32::try_from(self.slots.len()).ok().filter(|&i| i < MORE)?;
                self.slots.push(More::default());
                i
            }
        };
        if let Some(m) = self.get_mut(i) {
            m.len = len;
        }
        Some(i)
    }

    pub(super) fn give_back(&mut self, i: u32) {
        if let Some(m) = self.get_mut(i) {
            *m = More::default();
            self.free.push(i);
        }
    }

    /// Heap bytes held, for the stats.
    pub(in crate::metrics::store) fn bytes(&self) -> usize {
        self.slots.capacity() * std::mem::size_of::<More>()
            + self.free.capacity() * std::mem::size_of::<u32>()
            + self
                .slots
                .iter()
                .map(|m| {
                    m.blocks.capacity() * std::mem::size_of::<Block>()
                        + m.blocks.iter().map(|b| b.bytes.capacity()).sum::<usize>()
                })
                .sum::<usize>()
    }
}
