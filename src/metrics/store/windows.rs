//! Counters' intervals decoded once and kept between frames, for the windowed questions a frame
//! asks of every series ("how many in the last 60 s", "since start", the timeline's per-second
//! rates). Answering them from the store decodes every point of the window of every series on
//! every frame (at 512 nodes most of a frame's time); history only grows at the end and expires
//! at the front, so the intervals decoded for the last frame stay right, and a frame decodes only
//! the points that arrived since.
//!
//! A [`Windows`] answers exactly what [`Store::increase_since`] and [`Store::rates`] answer (the
//! same steps from `rate.rs`, summed in the same order); the tests hold it to that. It is a memo,
//! not state: it belongs to one store (another one, e.g. a time-travel copy, starts it afresh)
//! and can be dropped at any time.

use super::{Kind, SeriesId, Store, Ts};
use crate::metrics::Scale;
use crate::metrics::rate::{self, Rate, Width};
use std::collections::VecDeque;

mod far;

/// How far back intervals are kept (from a series' newest point): the windows a frame asks
/// ("last 60 s", the Overview timeline's width in seconds) fit; older ones are summed in runs
/// (`far.rs`), which answer a longer window's count ("since start" after minutes); its
/// per-second rates are the store's to answer, as before. It bounds the memory: at 1 Hz about
/// 180 intervals of 48 bytes per series asked about, and a run of 32 bytes per minute older.
pub const KEEP_MS: i64 = 180_000;

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
    fn push(&mut self, mut iv: Iv) {
        iv.cum = self.ivs.back().map_or(0, |p| p.cum).saturating_add(iv.inc);
        self.ivs.push_back(iv);
    }

    /// The index of the first interval ending after `since` (`or_at`: at or after).
    fn from(&self, since: Ts, or_at: bool) -> usize {
        let after = |iv: &Iv| if or_at { iv.b >= since } else { iv.b > since };
        // Most windows start before everything kept ("since start") or near the end.
        if self.ivs.front().is_none_or(after) {
            return 0;
        }
        // A frame asks for the same window a second later than the last one: the answer is the
        // last one's or a step or two on. Walking from it reads one or two intervals where a
        // binary search over thousands of series' deques missed the cache at every step.
        let hint = &self.hints[usize::from(or_at)];
        let len = self.ivs.len();
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

    fn pop_front(&mut self) {
        if self.ivs.pop_front().is_some() {
            self.popped += 1;
        }
    }

    /// Whether the kept intervals hold every one ending after `since` (`or_at`: at or after).
    fn covers(&self, since: Ts, or_at: bool) -> bool {
        match self.ivs.front() {
            _ if !self.trimmed && self.old.is_empty() => true,
            Some(f) if or_at => since > f.a,
            Some(f) => since >= f.a,
            None => false,
        }
    }

    /// `inc` summed over the intervals from `from` on, in order, saturating.
    fn sum_from(&self, from: usize) -> u64 {
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
struct Iv {
    /// Times of its start and end points.
    a: Ts,
    b: Ts,
    /// What `rate::increase` counts for it.
    inc: u64,
    /// `inc` summed over this interval and every one kept before it (saturating), so the sum
    /// over the newest intervals is one difference rather than a walk.
    cum: u64,
    /// Its rate in the metric's unit, before the source's failures are looked at.
    rate: Rate,
}

/// How far [`Entry::from`] walks from its last answer before it searches instead.
const HINT_STEPS: usize = 8;

/// The decoded intervals of one series, oldest first. The newest point is never decoded here:
/// a repeated timestamp may still replace its value, so the newest interval is read at each ask.
#[derive(Debug, Default)]
struct Entry {
    /// The newest point decoded (time, raw value): the end of the last interval.
    end: Option<(Ts, u64)>,
    /// The time of the series' newest point when last brought up to date.
    newest: Option<Ts>,
    /// Decoding started after the series had points (a late memo): intervals before the kept ones
    /// were never seen, so neither the kept ones nor [`Entry::old`] answer a window reaching
    /// further back (until [`Windows::fill_old`] decodes them).
    trimmed: bool,
    /// Intervals let go from the front of `ivs` (older than [`KEEP_MS`]), summed in runs, oldest
    /// first, right up to the first kept one.
    old: far::Runs,
    /// Intervals popped from the front so far, so [`Entry::hints`] survive a pop.
    popped: u64,
    /// Per kind of window (`or_at`), where the last answer of [`Entry::from`] was, counted from
    /// the first interval ever kept (`popped` + index).
    hints: [std::cell::Cell<u64>; 2],
    ivs: VecDeque<Iv>,
}

/// Decoded intervals per series of one store.
#[derive(Debug)]
pub struct Windows {
    /// [`Store::uid`] of the store the entries were decoded from.
    store: u64,
    /// The entries of the series asked about, in the order first asked.
    per: Vec<Entry>,
    /// Per series id, its entry's index in `per` plus one (0: none). A frame asks about a few
    /// series a node (the timeline's, the alerts' error counters): an entry for every id (112 B)
    /// was ~10 MB at 512 nodes (~92k series), of which ~1 in 20 was used.
    slot: Vec<u32>,
    /// How far back intervals are kept ([`KEEP_MS`]).
    keep_ms: i64,
    /// Intervals per run of the older ones ([`far::SPAN`]; tests take shorter runs).
    span: u32,
}

impl Default for Windows {
    fn default() -> Self {
        Windows::keeping(KEEP_MS)
    }
}

impl Windows {
    /// Keeping intervals `keep_ms` back from each series' newest point.
    pub fn keeping(keep_ms: i64) -> Self {
        Windows {
            store: 0,
            per: Vec::new(),
            slot: Vec::new(),
            keep_ms,
            span: far::SPAN,
        }
    }

    /// [`Windows::keeping`] with runs of `span` intervals for the older ones.
    #[cfg(test)]
    fn with_runs(keep_ms: i64, span: u32) -> Self {
        Windows {
            span: span.max(1),
            ..Windows::keeping(keep_ms)
        }
    }

    /// The index in `per` of `id`'s entry, made empty if it has none.
    fn entry_of(&mut self, id: SeriesId) -> usize {
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

    /// Bring `id`'s entry up to date with the store: drop intervals whose start expired, add the
    /// points that arrived since (all but the newest). `None` for a series that is not a counter.
    fn sync(&mut self, st: &Store, id: SeriesId) -> Option<(&Entry, Width)> {
        if self.store != st.uid() {
            self.per.clear();
            self.slot.clear();
            self.store = st.uid();
        }
        let s = st.get(id)?;
        let Kind::Counter(width) = s.kind() else {
            return None;
        };
        let scale = s.scale();
        let i = self.entry_of(id);
        let e = &mut self.per[i];
        let Some((_, newest)) = s.last(st) else {
            *e = Entry::default();
            return Some((&self.per[i], width));
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
        let second = s.two(st).map(|((a, ta), _)| (ta, a.raw));
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
                        return self.sync(st, id);
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
            // A first decoding held more than is kept.
            e.ivs.shrink_to_fit();
        }
        Some((&self.per[i], width))
    }

    /// [`Store::increase_since`], from the kept intervals.
    pub fn increase_since(&mut self, st: &Store, id: SeriesId, since: Ts) -> Option<u64> {
        let s = st.get(id)?;
        if !matches!(s.kind(), Kind::Counter(_)) || s.scale() != Scale::One {
            return None;
        }
        let ((a, _), (b, tb)) = match s.two(st) {
            Some(two) => two,
            // One point or none: nothing grew (none: nothing to say).
            None => return s.points.last().map(|_| 0),
        };
        if tb < since || s.points.flat_from(since, &st.slab) {
            // Nothing since, or a counter that did not move: told without decoding, as the store
            // tells it (and nothing need be kept for it).
            return Some(0);
        }
        let span = self.span;
        let (e, width) = self.sync(st, id)?;
        let mut sum = if e.covers(since, false) {
            e.sum_from(e.from(since, false))
        } else {
            let i = self.entry_of(id);
            let e = &mut self.per[i];
            if e.trimmed {
                Windows::fill_old(e, st, s, width, span);
            }
            // Every kept interval ends after `since` (it starts before the first one).
            e.old_since(st, s, since, width)
                .saturating_add(e.sum_from(0))
        };
        if tb > since {
            sum = sum.saturating_add(rate::increase([a.raw, b.raw], width));
        }
        Some(sum)
    }

    /// [`Store::rates`], from the kept intervals, each handed to `f` oldest first (no `Vec`).
    pub fn rates_each(&mut self, st: &Store, id: SeriesId, since: Ts, mut f: impl FnMut(Ts, Rate)) {
        let Some(s) = st.get(id) else { return };
        if let (Kind::Counter(width), Some((first, last, raw)), Some(clock)) =
            (s.kind(), s.points.run(), s.clock(st))
        {
            // Every point one value a poll apart (most counters of a big switch are quiet): its
            // intervals are read off the clock as the store reads them, and none is kept, so a
            // quiet counter costs no intervals (48 B a second each, issue #22).
            let from = clock.seq_from(since).max(first + 1);
            let mut prev = clock.time(from - 1);
            for q in from..=last {
                let Some(tb) = clock.time(q) else { continue };
                if let Some(ta) = prev {
                    let r = if st.gap(s, ta, tb) {
                        Rate::NoTime
                    } else {
                        rate::rate((ta, raw), (tb, raw), width).scaled(s.scale())
                    };
                    f(tb, r);
                }
                prev = Some(tb);
            }
            return;
        }
        let two = s.two(st);
        let Some((e, width)) = self.sync(st, id) else {
            return;
        };
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
            let r = if st.gap(s, ta, tb) {
                Rate::NoTime
            } else {
                rate::rate((ta, a.raw), (tb, b.raw), width).scaled(s.scale())
            };
            f(tb, r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    /// The walk from the last answer finds what a binary search finds, for windows moving on a
    /// second at a time, jumping back and forth, and with intervals popped between the asks.
    #[test]
    fn walking_from_the_last_answer_finds_what_a_search_finds() {
        let mut e = Entry::default();
        for k in 0..200i64 {
            e.push(Iv {
                a: k * 1000,
                b: (k + 1) * 1000,
                inc: 1,
                cum: 0,
                rate: Rate::PerSec(1.0),
            });
        }
        let search = |e: &Entry, since: Ts, or_at: bool| {
            let after = |iv: &Iv| if or_at { iv.b >= since } else { iv.b > since };
            e.ivs.partition_point(|iv| !after(iv))
        };
        let mut sinces: Vec<Ts> = (0..120).map(|k| 60_000 + k * 1000).collect();
        sinces.extend([
            5_000, 150_000, 150_500, 20_000, 199_000, 250_000, -3, 61_000,
        ]);
        for (n, since) in sinces.into_iter().enumerate() {
            if n % 7 == 3 {
                e.pop_front();
            }
            for or_at in [false, true] {
                assert_eq!(
                    e.from(since, or_at),
                    search(&e, since, or_at),
                    "{since} {or_at}"
                );
                // The other kind of window asked in between (the timeline's, "since start").
                let other = since - 30_000;
                assert_eq!(e.from(other, !or_at), search(&e, other, !or_at), "{other}");
            }
        }
    }

    /// Every answer from kept intervals is the store's own, through new polls, resets, a failed
    /// poll (a gap), a repeated timestamp, a series that appears late and expiry.
    #[test]
    fn kept_intervals_answer_what_the_store_answers() {
        let mut st = Store::new(20_000, 12);
        let src = st.add_source("n1", 1000);
        // Keeping all (this retention) and keeping 3 s (older windows answered by the store).
        let mut ws = [Windows::default(), Windows::keeping(3_000)];
        let mut v = [0u64; 3];
        for step in 0..40i64 {
            let at = step * 1000;
            if step == 9 {
                st.fail(src, at, "timeout");
                continue;
            }
            v[0] += (step as u64 * 7) % 5;
            v[1] = if step == 15 { 3 } else { v[1] + 100 };
            v[2] += 1;
            let mut samples = vec![
                Sample::counter("c_total", &[("dev", "a")], v[0]),
                Sample::counter("c_total", &[("dev", "b")], v[1]),
                Sample::counter_micros("p_seconds_total", &[("dev", "a")], v[0] * 1000),
                // Quiet (one run, read off the clock), and quiet until it moves at step 20.
                Sample::counter("c_total", &[("dev", "quiet")], 5),
                Sample::counter("c_total", &[("dev", "wakes")], 7 + step.max(20) as u64 - 20),
            ];
            if step >= 20 {
                samples.push(Sample::counter("c_total", &[("dev", "late")], v[2]));
            }
            let poll = Parsed {
                samples,
                ..Default::default()
            };
            st.ingest(src, at, &poll);
            if step == 25 {
                // The same instant again: the newest value is replaced.
                v[0] += 50;
                let again = Parsed {
                    samples: vec![Sample::counter("c_total", &[("dev", "a")], v[0])],
                    ..Default::default()
                };
                st.ingest(src, at, &again);
            }
            if step == 30 {
                // Started late: decoded afresh from 3 s back, the older history never kept.
                ws[1] = Windows::keeping(3_000);
            }
            let ids: Vec<SeriesId> = st.all().map(|(id, _)| id).collect();
            for w in ws.iter_mut() {
                for &id in &ids {
                    for since in [at - 60_000, at - 5_000, at - 2_000, at - 1_000, at, 3_000] {
                        assert_eq!(
                            w.increase_since(&st, id, since),
                            st.increase_since(id, since),
                            "step {step}, {id:?}, since {since}"
                        );
                        let mut got = Vec::new();
                        w.rates_each(&st, id, since, |t, r| got.push((t, r)));
                        assert_eq!(
                            got,
                            st.rates(id, since),
                            "step {step}, {id:?}, since {since}"
                        );
                    }
                }
            }
        }
        let late = st
            .select("c_total", &[("dev", "late")])
            .next()
            .map(|(id, _)| id);
        let w = &mut ws[0];
        assert!(
            late.and_then(|id| w.increase_since(&st, id, 0))
                .is_some_and(|n| n > 0),
            "the late series counts"
        );
        // Another store (a time-travel copy) is never answered from this one's intervals.
        let past = st.as_of(30_000);
        for (id, _) in past.all() {
            assert_eq!(w.increase_since(&past, id, 0), past.increase_since(id, 0));
        }
    }

    /// Entries are kept only for the series asked about, whatever their ids and the order they
    /// are first asked in, and each answers for its own series (not its neighbour's by index).
    #[test]
    fn only_series_asked_about_hold_entries() {
        let mut st = Store::new(60_000, 80);
        let src = st.add_source("n1", 1000);
        let mut w = Windows::default();
        for step in 0..30i64 {
            let samples = (0..40u64)
                .map(|d| Sample::counter("c_total", &[("dev", &d.to_string())], d * step as u64))
                .collect();
            let poll = Parsed {
                samples,
                ..Default::default()
            };
            st.ingest(src, step * 1000, &poll);
            let ids: Vec<SeriesId> = st.all().map(|(id, _)| id).collect();
            // The newest series first, then a few older ones; never most of them.
            for &id in [ids[39], ids[2], ids[17], ids[39], ids[5]].iter() {
                for since in [0, step * 1000 - 5_000] {
                    assert_eq!(
                        w.increase_since(&st, id, since),
                        st.increase_since(id, since),
                        "step {step} {id:?}"
                    );
                    let mut got = Vec::new();
                    w.rates_each(&st, id, since, |t, r| got.push((t, r)));
                    assert_eq!(got, st.rates(id, since), "step {step} {id:?}");
                }
            }
            assert!(w.per.len() <= 4, "{} entries for 4 series", w.per.len());
        }
        assert_eq!(w.per.len(), 4, "each moving series asked about has one");
    }

    /// Windows reaching past the kept intervals (since start, since a mark inside the history,
    /// inside a run, before the oldest point) are answered from the runs exactly as the store
    /// answers them, through resets, a failed poll, a replaced newest point, expiry cutting into
    /// a run, a memo started late (its older runs decoded once) and a series that appears late.
    #[test]
    fn runs_of_older_intervals_answer_what_the_store_answers() {
        // More points than a block (256) held, fewer than the retention (the point limit expires).
        let mut st = Store::new(320_000, 280);
        let src = st.add_source("n1", 1000);
        let mut ws = [Windows::with_runs(3_000, 4), Windows::with_runs(5_000, 1)];
        let mut v = [0u64; 2];
        let mut far = 0;
        for step in 0..420i64 {
            let at = step * 1000;
            if step == 33 || step == 90 || step == 301 {
                st.fail(src, at, "timeout");
                continue;
            }
            v[0] += (step as u64 * 13) % 7;
            v[1] = if step % 45 == 44 { 2 } else { v[1] + 1000 };
            let mut samples = vec![
                Sample::counter("c_total", &[("dev", "a")], v[0]),
                Sample::counter("c_total", &[("dev", "b")], v[1]),
            ];
            if step >= 70 {
                samples.push(Sample::counter(
                    "c_total",
                    &[("dev", "late")],
                    step as u64 * 3,
                ));
            }
            st.ingest(
                src,
                at,
                &Parsed {
                    samples,
                    ..Default::default()
                },
            );
            if step == 120 {
                st.ingest(
                    src,
                    at,
                    &Parsed {
                        samples: vec![Sample::counter("c_total", &[("dev", "a")], v[0] + 9)],
                        ..Default::default()
                    },
                );
                v[0] += 9;
            }
            if step == 100 || step == 350 {
                // Started on a history: (past a block) the older runs are decoded when first asked.
                ws[1] = Windows::with_runs(5_000, 3);
            }
            let ids: Vec<SeriesId> = st.all().map(|(id, _)| id).collect();
            for w in ws.iter_mut() {
                for &id in &ids {
                    for since in [0, 141_500, 150_000, at - 200_000, at - 4_500, at - 1_000] {
                        let got = w.increase_since(&st, id, since);
                        assert_eq!(
                            got,
                            st.increase_since(id, since),
                            "step {step} {id:?} {since}"
                        );
                        far += usize::from(got.is_some_and(|n| n > 0) && since < at - 5_000);
                    }
                }
            }
        }
        // Long windows with counts were asked, and runs were made and let go again.
        assert!(far > 3000, "{far}");
        assert!(ws.iter().all(|w| w.per.iter().any(|e| e.old.len() > 3)));
        // Runs go with the points the store lets go: no more than its 280 points hold.
        for w in &ws {
            let most = 280 / w.span as usize + 2;
            assert!(w.per.iter().all(|e| e.old.len() <= most), "{most}");
        }
    }

    /// A memo started on a long history (more than a block of points) decodes only its last
    /// seconds, and says so: a window reaching further back is the store's to answer.
    #[test]
    fn a_late_memo_answers_long_windows_from_the_store() {
        let mut st = Store::new(3_600_000, 2_000);
        let src = st.add_source("n1", 1000);
        for step in 0..600i64 {
            let poll = Parsed {
                samples: vec![Sample::counter("c_total", &[], (step * step) as u64)],
                ..Default::default()
            };
            st.ingest(src, step * 1000, &poll);
        }
        let id = st.all().next().map(|(id, _)| id).expect("a series");
        let mut w = Windows::keeping(3_000);
        for since in [0, 100_000, 595_000, 597_000, 599_000] {
            assert_eq!(
                w.increase_since(&st, id, since),
                st.increase_since(id, since)
            );
            let mut got = Vec::new();
            w.rates_each(&st, id, since, |t, r| got.push((t, r)));
            assert_eq!(got, st.rates(id, since), "since {since}");
        }
    }
}
