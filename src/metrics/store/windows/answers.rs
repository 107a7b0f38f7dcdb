//! The windowed answers ([`WindowsCache::increase_since`], [`WindowsCache::rates_each`]) from the kept
//! intervals.

use super::WindowsCache;
use super::entry::Tip;
use crate::metrics::Scale;
use crate::metrics::rate::{self, Rate};
use crate::metrics::store::{Kind, SeriesId, Store, Ts};

impl WindowsCache {
    /// [`Store::increase_since`], from the kept intervals.
    pub fn increase_since(&mut self, st: &Store, id: SeriesId, since: Ts) -> Option<u64> {
        let [sum] = self.increases_since(st, id, [since]);
        sum
    }

    /// [`WindowsCache::increase_since`] since each of `since`, the series read and brought up to date
    /// once (a switch's drop line asks two windows of each drop counter every frame).
    pub fn increases_since<const K: usize>(
        &mut self,
        st: &Store,
        id: SeriesId,
        since: [Ts; K],
    ) -> [Option<u64>; K] {
        let Some(s) = st.get(id) else {
            return [None; K];
        };
        let Kind::Counter(width) = s.kind() else {
            return [None; K];
        };
        if s.scale() != Scale::One {
            return [None; K];
        }
        if s.points.run().is_some() {
            // Every point one value (a quiet counter): nothing grew, told before its two newest
            // points are read (most of a switch's drop counters, hundreds of them an evaluation,
            // and reading their points each time was work for nothing).
            return [Some(0); K];
        }
        let Some(two) = s.two(st) else {
            // One point or none: nothing grew (none: nothing to say).
            return [s.points.last().map(|_| 0); K];
        };
        let ((a, _), (b, tb)) = two;
        let span = self.span;
        let mut synced = None;
        since.map(|since| {
            if tb < since || s.points.flat_from(since, &st.slab) {
                // Nothing since, or a counter that did not move: told without decoding, as the
                // store tells it (and nothing need be kept for it).
                return Some(0);
            }
            // The two newest points read above serve the sync too.
            let i = *synced
                .get_or_insert_with(|| self.sync_tip(st, id, s, width, Tip::of(st, s, Some(two))));
            let e = &mut self.per[i];
            let mut sum = if e.covers(since, false) {
                e.sum_from(e.from(since, false))
            } else {
                if e.trimmed {
                    WindowsCache::fill_old(e, st, s, width, span);
                }
                // Every kept interval ends after `since` (it starts before the first one).
                e.old_since(st, s, since, width)
                    .saturating_add(e.sum_from(0))
            };
            if tb > since {
                sum = sum.saturating_add(rate::increase([a.raw, b.raw], width));
            }
            Some(sum)
        })
    }

    /// [`Store::rates`], from the kept intervals, each handed to `f` oldest first (no `Vec`).
    pub fn rates_each(&mut self, st: &Store, id: SeriesId, since: Ts, mut f: impl FnMut(Ts, Rate)) {
        let Some(s) = st.get(id) else { return };
        if let (Kind::Counter(width), Some((first, last, raw)), Some(clock)) =
            (s.kind(), s.points.run(), s.clock(st))
        {
            // Every point one value a poll apart (most counters of a big switch are quiet): its
            // intervals are read off the clock as the store reads them, and none is kept, so a
            // quiet counter costs no intervals (48 B a second each).
            let from = clock.seq_from(since).max(first + 1);
            let mut prev = clock.time(from - 1);
            for q in from..=last {
                let Some(tb) = clock.time(q) else { continue };
                if let Some(ta) = prev {
                    f(tb, st.interval_rate(s, width, (ta, raw), (tb, raw)));
                }
                prev = Some(tb);
            }
            return;
        }
        let Kind::Counter(width) = s.kind() else {
            return;
        };
        // The two newest points read once: for the sync and for the newest interval.
        let two = s.two(st);
        let i = self.sync_tip(st, id, s, width, Tip::of(st, s, two));
        let e = &self.per[i];
        if !e.covers(since, true) {
            for (t, r) in st.rates(id, since) {
                f(t, r);
            }
            return;
        }
        for iv in e.ivs.range(e.from(since, true)..) {
            let r = if st.gap(s, iv.a, iv.b) {
                Rate::NoTime
            } else {
                iv.rate
            };
            f(iv.b, r);
        }
        if let Some(((a, ta), (b, tb))) = two
            && tb >= since
        {
            f(tb, st.interval_rate(s, width, (ta, a.raw), (tb, b.raw)));
        }
    }
}
