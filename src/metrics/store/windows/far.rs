//! The part of a series' history older than the kept intervals ([`super::KEEP_MS`]), summed in
//! runs, so "since start" (or since a mark) after minutes is one sum per run rather than a walk
//! over every point the store holds, on every frame (at 512 nodes and a 15-minute history that
//! walk was most of the PFC tab's frame). Each interval's increase is the one the kept intervals
//! hold (`rate.rs`'s step); a run whose first point the store has let go, or that a window starts
//! inside, is decoded from the store (at most [`WindowsCache::span`] points), so an answer stays the
//! store's own.

use super::{Entry, Iv, WindowsCache};
use crate::metrics::rate::{self, Width};
use crate::metrics::store::{Series, Store, Ts};
use std::collections::VecDeque;

/// Intervals summed in one run: at 1 Hz a minute, so a 15-minute history is 15 runs per series
/// (32 bytes each), and a run decoded for a window that starts inside it is a minute of points.
pub const SPAN: u32 = 64;

/// A run of consecutive intervals let go from the kept ones.
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    /// Start of its first interval, end of its first and of its last.
    a: Ts,
    first_b: Ts,
    b: Ts,
    /// Its intervals' increases summed (saturating: the sum of all is what a walk would give).
    inc: u64,
    n: u32,
}

/// An entry's runs, oldest first; boxed, so the many entries without any (series asked only
/// about recent windows, or younger than [`super::KEEP_MS`]) cost one pointer each.
/// (The box on purpose: an entry holds 8 bytes rather than an empty deque's 32.)
#[derive(Debug, Default)]
#[allow(clippy::box_collection)]
pub(super) struct Runs(Option<Box<VecDeque<Run>>>);

impl Runs {
    pub(super) fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|v| v.is_empty())
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.0.as_ref().map_or(0, |v| v.len())
    }

    fn iter(&self) -> impl Iterator<Item = &Run> {
        self.0.iter().flat_map(|v| v.iter())
    }

    fn clear(&mut self) {
        self.0 = None;
    }
}

impl Entry {
    /// Keep `iv`, just let go from the front of the kept intervals, in the newest run.
    pub(super) fn push_old(&mut self, iv: &Iv, span: u32) {
        let old = self.old.0.get_or_insert_with(Default::default);
        match old.back_mut() {
            Some(r) if r.n < span && r.b == iv.a => {
                r.b = iv.b;
                r.inc = r.inc.saturating_add(iv.inc);
                r.n += 1;
            }
            _ => old.push_back(Run {
                a: iv.a,
                first_b: iv.b,
                b: iv.b,
                inc: iv.inc,
                n: 1,
            }),
        }
    }

    /// Let go of the runs whose every interval starts before `first`, the store's oldest point.
    pub(super) fn expire_old(&mut self, first: Ts) {
        let Some(old) = self.old.0.as_mut() else {
            return;
        };
        while old.front().is_some_and(|r| r.b <= first) {
            old.pop_front();
        }
        if old.is_empty() {
            self.old.clear();
        }
    }

    /// What the runs count after `since`: a run the window starts inside, or whose first points
    /// the store let go, decoded from the store; the others by their sums.
    pub(super) fn old_since(&self, st: &Store, s: &Series, since: Ts, width: Width) -> u64 {
        let first = oldest(st, s);
        let mut sum = 0u64;
        for r in self.old.iter() {
            if r.b <= since {
                continue;
            }
            let whole = r.first_b > since && first.is_none_or(|f| r.a >= f);
            let n = if whole {
                r.inc
            } else {
                increase_between(st, s, since, r.b, width)
            };
            sum = sum.saturating_add(n);
        }
        sum
    }
}

impl WindowsCache {
    /// An entry started after its series had points (its older intervals never decoded) made
    /// whole: the intervals from the store's oldest point to the first kept one, decoded once
    /// into runs, so later windows reaching back are answered from the runs.
    pub(super) fn fill_old(e: &mut Entry, st: &Store, s: &Series, width: Width, span: u32) {
        let Some(until) = e.ivs.front().map(|iv| iv.a).or(e.end.map(|(t, _)| t)) else {
            return;
        };
        e.old.clear();
        let mut prev: Option<(Ts, u64)> = None;
        for p in s.timed(st, s.points.iter(&st.slab)) {
            if p.t > until {
                break;
            }
            if let Some((t, raw)) = prev
                && p.t > t
            {
                let inc = rate::increase([raw, p.raw], width);
                let iv = Iv {
                    a: t,
                    b: p.t,
                    inc,
                    cum: 0,
                    rate: rate::Rate::NoTime,
                };
                e.push_old(&iv, span);
            }
            prev = Some((p.t, p.raw));
        }
        e.trimmed = false;
    }
}

/// The time of the store's oldest point of `s`.
pub(super) fn oldest(st: &Store, s: &Series) -> Option<Ts> {
    s.points
        .front_seq(&st.slab)
        .and_then(|q| s.clock(st)?.time(q))
}

/// [`Store::increase_since`] over the intervals that end after `since` and at or before `until`.
fn increase_between(st: &Store, s: &Series, since: Ts, until: Ts, width: Width) -> u64 {
    let mut it = s.timed(st, s.points.iter_from(since, &st.slab)).peekable();
    let Some(mut first) = it.next() else {
        return 0;
    };
    while let Some(p) = it.next_if(|p| p.t <= since) {
        first = p;
    }
    rate::increase(
        std::iter::once(first.raw).chain(it.take_while(|p| p.t <= until).map(|p| p.raw)),
        width,
    )
}
