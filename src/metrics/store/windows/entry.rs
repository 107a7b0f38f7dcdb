//! The kept intervals of one series ([`Entry`]) and the slots that hold them, brought up to date
//! with the store ([`WindowsCache::sync_tip`]).

use super::{WindowsCache, far};
use crate::metrics::Scale;
use crate::metrics::rate::{self, Rate, Width};
use crate::metrics::store::series::TwoAt;
use crate::metrics::store::{Series, SeriesId, Store, Ts};
use std::collections::VecDeque;

/// The interval from `(a, araw)` to `(b, braw)`, its steps from `rate.rs`.
fn iv(a: Ts, araw: u64, b: Ts, braw: u64, width: Width, scale: Scale) -> Iv {
    Iv {
        a,
        b,
        inc: rate::increase([araw, braw], width),
        cum: 0,
        rate: rate::rate((a, araw), (b, braw), width).scaled(scale),
    }
}

impl Entry {
    pub(super) fn push(&mut self, mut iv: Iv) {
        iv.cum = self.ivs.back().map_or(0, |p| p.cum).saturating_add(iv.inc);
        self.ivs.push_back(iv);
    }

    /// The index of the first interval ending after `since` (`or_at`: at or after).
    pub(super) fn from(&self, since: Ts, or_at: bool) -> usize {
        let after = |iv: &Iv| if or_at { iv.b >= since } else { iv.b > since };
        // Most windows start before everything kept ("since start") or near the end.
        if self.ivs.front().is_none_or(after) {
            return 0;
        }
        // The timeline asks for its newest seconds: the last interval or the one before.
        let len = self.ivs.len();
        for back in 1..=2.min(len) {
            if !after(&self.ivs[len - back]) {
                return len - back + 1;
            }
        }
        // A frame asks for the same window a second later than the last one: the answer is the
        // last one's or a step or two on. Walking from it reads one or two intervals where a
        // binary search over thousands of series' deques missed the cache at every step.
        let hint = &self.hints[usize::from(or_at)];
        let mut i = (hint.get().saturating_sub(self.popped) as usize).min(len);
        let mut steps = 0;
        while i < len && !after(&self.ivs[i]) && steps < HINT_STEPS {
            i += 1;
            steps += 1;
        }
        while i > 0 && after(&self.ivs[i - 1]) && steps < HINT_STEPS {
            i -= 1;
            steps += 1;
        }
        let found = (i == len || after(&self.ivs[i])) && (i == 0 || !after(&self.ivs[i - 1]));
        if !found {
            i = self.ivs.partition_point(|iv| !after(iv));
        }
        hint.set(self.popped + i as u64);
        i
    }

    pub(super) fn pop_front(&mut self) {
        if self.ivs.pop_front().is_some() {
            self.popped += 1;
        }
    }

    /// Whether the kept intervals hold every one ending after `since` (`or_at`: at or after).
    pub(super) fn covers(&self, since: Ts, or_at: bool) -> bool {
        match self.ivs.front() {
            _ if !self.trimmed && self.old.is_empty() => true,
            Some(f) if or_at => since > f.a,
            Some(f) => since >= f.a,
            None => false,
        }
    }

    /// `inc` summed over the intervals from `from` on, in order, saturating.
    pub(super) fn sum_from(&self, from: usize) -> u64 {
        match (self.ivs.get(from), self.ivs.back()) {
            (Some(first), Some(last)) if last.cum < u64::MAX => {
                // No sum saturated: the kept running totals tell it exactly.
                last.cum - (first.cum - first.inc)
            }
            _ => self
                .ivs
                .range(from..)
                .fold(0u64, |acc, iv| acc.saturating_add(iv.inc)),
        }
    }
}

/// One interval between two consecutive points of a counter.
#[derive(Clone, Copy, Debug)]
pub(super) struct Iv {
    /// Times of its start and end points.
    pub(super) a: Ts,
    pub(super) b: Ts,
    /// What `rate::increase` counts for it.
    pub(super) inc: u64,
    /// `inc` summed over this interval and every one kept before it (saturating), so the sum
    /// over the newest intervals is one difference rather than a walk.
    pub(super) cum: u64,
    /// Its rate in the metric's unit, before the source's failures are looked at.
    pub(super) rate: Rate,
}

/// How far [`Entry::from`] walks from its last answer before it searches instead.
const HINT_STEPS: usize = 8;

/// The decoded intervals of one series, oldest first. The newest point is never decoded here:
/// a repeated timestamp may still replace its value, so the newest interval is read at each ask.
#[derive(Debug, Default)]
pub(super) struct Entry {
    /// The newest point decoded (time, raw value): the end of the last interval.
    pub(super) end: Option<(Ts, u64)>,
    /// The time of the series' newest point when last brought up to date.
    pub(super) newest: Option<Ts>,
    /// Decoding started after the series had points (a late memo): intervals before the kept ones
    /// were never seen, so neither the kept ones nor [`Entry::old`] answer a window reaching
    /// further back (until [`WindowsCache::fill_old`] decodes them).
    pub(super) trimmed: bool,
    /// Intervals let go from the front of `ivs` (older than [`super::KEEP_MS`]), summed in runs,
    /// oldest first, right up to the first kept one.
    pub(super) old: far::Runs,
    /// Intervals popped from the front so far, so [`Entry::hints`] survive a pop.
    pub(super) popped: u64,
    /// Per kind of window (`or_at`), where the last answer of [`Entry::from`] was, counted from
    /// the first interval ever kept (`popped` + index).
    pub(super) hints: [std::cell::Cell<u64>; 2],
    pub(super) ivs: VecDeque<Iv>,
}

impl WindowsCache {
    /// The index in `per` of `id`'s entry, made empty if it has none.
    pub(super) fn entry_of(&mut self, id: SeriesId) -> usize {
        let i = id.0 as usize;
        if self.slot.len() <= i {
            self.slot.resize(i + 1, 0);
        }
        if self.slot[i] == 0 {
            self.per.push(Entry::default());
            self.slot[i] = self.per.len() as u32;
        }
        self.slot[i] as usize - 1
    }

    /// Bring the entry of counter `s` (`id`) up to date with the store: drop intervals whose
    /// start expired, add the points that arrived since (all but the newest). `tip` holds its
    /// newest points as the caller read them (for its newest interval too: read once, not twice
    /// a series). Returns the index of its entry in `per`.
    pub(super) fn sync_tip(
        &mut self,
        st: &Store,
        id: SeriesId,
        s: &Series,
        width: Width,
        tip: Option<Tip>,
    ) -> usize {
        if self.store != st.uid() {
            self.per.clear();
            self.slot.clear();
            self.store = st.uid();
        }
        let scale = s.scale();
        let i = self.entry_of(id);
        let e = &mut self.per[i];
        let Some(Tip { newest, second }) = tip else {
            *e = Entry::default();
            return i;
        };
        // Expired at the front (retention, or the per-series point limit).
        let first = s
            .points
            .front_seq(&st.slab)
            .and_then(|q| s.clock(st)?.time(q));
        while e
            .ivs
            .front()
            .is_some_and(|iv| first.is_none_or(|f| iv.a < f))
        {
            e.pop_front();
        }
        if let Some(f) = first {
            e.expire_old(f);
        }
        if e.end.is_some_and(|(t, _)| first.is_none_or(|f| t < f)) {
            *e = Entry::default();
        }
        if e.newest == Some(newest) {
            // Nothing arrived since.
        } else if let (Some(n), Some((t, raw))) = (e.newest, second)
            && n == t
        {
            // One point arrived: the newest of the last time is the one before the newest now,
            // and its interval from the end decoded then is the one to add (no decoding).
            if let Some((a, araw)) = e.end {
                e.push(iv(a, araw, t, raw, width, scale));
            }
            e.end = Some((t, raw));
        } else {
            let it = match e.end {
                Some((t, _)) => s.points.iter_from(t, &st.slab),
                // Afresh: from where the kept intervals start (not the whole history).
                None => s.points.iter_from(newest - self.keep_ms, &st.slab),
            };
            let mut prev = e.end;
            for p in s.timed(st, it) {
                if p.t >= newest {
                    break;
                }
                if prev.is_none() && first.is_some_and(|f| p.t > f) {
                    // Intervals before this point were never kept.
                    e.trimmed = true;
                }
                match prev {
                    Some((t, raw)) if p.t < t || (p.t == t && p.raw == raw) => continue,
                    Some((t, _)) if p.t == t => {
                        // Never expected (decoded points do not change): start afresh.
                        *e = Entry::default();
                        return self.sync_tip(st, id, s, width, tip);
                    }
                    Some((t, raw)) => e.push(iv(t, raw, p.t, p.raw, width, scale)),
                    None => {}
                }
                prev = Some((p.t, p.raw));
            }
            e.end = prev;
        }
        e.newest = Some(newest);
        let keep = self.keep_ms;
        while let Some(iv) = e.ivs.front().copied()
            && iv.b < newest - keep
        {
            e.pop_front();
            if !e.trimmed {
                e.push_old(&iv, self.span);
            }
        }
        if e.ivs.capacity() > 2 * e.ivs.len() + 16 {
            // A first decoding held more than is kept. Room is left for the next polls' intervals
            // (each pushed before the oldest expires): shrunk to fit, the next frame would copy
            // every series' intervals to grow again.
            e.ivs.shrink_to(e.ivs.len() + 16);
        }
        i
    }
}

/// A series' newest point's time and the one before it (time, raw value), as
/// [`WindowsCache::sync_tip`] reads them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tip {
    pub(super) newest: Ts,
    pub(super) second: Option<(Ts, u64)>,
}

impl Tip {
    /// From the two newest points `two` of `s` if read, else its newest alone (`None`: no point).
    pub(super) fn of(st: &Store, s: &Series, two: Option<TwoAt>) -> Option<Tip> {
        match two {
            Some(((a, ta), (_, tb))) => Some(Tip {
                newest: tb,
                second: Some((ta, a.raw)),
            }),
            None => s.last(st).map(|(_, newest)| Tip {
                newest,
                second: None,
            }),
        }
    }
}
