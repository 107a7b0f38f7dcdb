//! One series' history and the clock its source's polls share.

use super::hist;
use super::{SourceId, Store};
use crate::metrics::rate::Width;
use crate::metrics::{Scale, SeriesKey, Ts, Value};
use std::collections::VecDeque;

/// The two newest points of a series with their times, older first ([`Series::two`]).
pub(super) type TwoAt = ((hist::At, Ts), (hist::At, Ts));

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter(Width),
    Gauge,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub t: Ts,
    pub(super) raw: u64,
}

/// The instants one source's polls were taken at. Every series of a source is sampled at the same
/// instants, so its points name a poll by sequence number and the timestamps are held once, here.
#[derive(Clone, Debug, Default)]
pub struct Clock {
    /// Sequence number of `times[0]`.
    pub(super) first: i64,
    pub(super) times: VecDeque<Ts>,
    /// No series of this source holds a point older than this sequence number (its series were
    /// last expired up to it; new points come later): while the cutoff's sequence number stays
    /// at or below it, expiring its series would drop nothing, so the store skips them.
    pub(super) kept_from: i64,
}

impl Clock {
    /// The sequence number of a poll taken at `at`: the newest poll's if `at` is its time, a new
    /// one if later; `None` if earlier (out of order).
    pub(super) fn seq_for(&mut self, at: Ts) -> Option<i64> {
        match self.times.back() {
            Some(&t) if t == at => Some(self.first + self.times.len() as i64 - 1),
            Some(&t) if t > at => None,
            _ => {
                self.times.push_back(at);
                Some(self.first + self.times.len() as i64 - 1)
            }
        }
    }

    pub(super) fn time(&self, seq: i64) -> Option<Ts> {
        usize::try_from(seq - self.first)
            .ok()
            .and_then(|i| self.times.get(i).copied())
    }

    /// The first sequence number whose time is at or after `t`.
    pub(super) fn seq_from(&self, t: Ts) -> i64 {
        self.first + self.times.partition_point(|&x| x < t) as i64
    }

    pub(super) fn expire(&mut self, cutoff: Ts) {
        while self.times.front().is_some_and(|&t| t < cutoff) {
            self.times.pop_front();
            self.first += 1;
        }
    }
}

/// 48 bytes (a row of a big answer makes ten of them): its key 24 (`Str` and `Labels` one
/// pointer each), its source 4 and its history 20 (the newest value, its poll, a count or the
/// slot of its encoded points, the older of the two newest points as a difference, and the
/// series' kind and scale in 3 of its bits). Times are its source's clock's, the store's: so
/// reading points takes the store ([`Series::latest`] and the rest).
#[derive(Debug)]
pub struct Series {
    pub key: SeriesKey,
    pub source: SourceId,
    pub(super) points: hist::Hist,
}

/// A quiet counter's run of polls ([`Series::quiet_run`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct QuietRun {
    source: SourceId,
    first: i64,
    last: i64,
    /// An increase is told only of counters of events (`Scale::One`).
    scale: Scale,
}

/// The kind and scale of a series as its history's tag bits.
const W32: u32 = 1;
const GAUGE: u32 = 2;
const MICRO: u32 = 4;

impl Series {
    pub(super) fn new(key: SeriesKey, source: SourceId, kind: Kind, scale: Scale) -> Series {
        let tag = match kind {
            Kind::Counter(Width::W64) => 0,
            Kind::Counter(Width::W32) => W32,
            Kind::Gauge => GAUGE,
        } | match scale {
            Scale::One => 0,
            Scale::Micro => MICRO,
        };
        Series {
            key,
            source,
            points: hist::Hist::tagged(tag),
        }
    }

    pub fn kind(&self) -> Kind {
        match self.points.tag() & 3 {
            0 => Kind::Counter(Width::W64),
            W32 => Kind::Counter(Width::W32),
            _ => Kind::Gauge,
        }
    }

    /// Metric units per stored count (µs counters of a seconds metric); reads apply it.
    pub fn scale(&self) -> Scale {
        if self.points.tag() & MICRO != 0 {
            Scale::Micro
        } else {
            Scale::One
        }
    }

    pub fn value_of(&self, p: &Point) -> Value {
        match self.kind() {
            Kind::Counter(Width::W64) if self.scale() == Scale::Micro => {
                Value::CounterMicros(p.raw)
            }
            Kind::Counter(Width::W64) => Value::Counter(p.raw),
            Kind::Counter(Width::W32) => Value::Counter32(p.raw),
            Kind::Gauge => Value::Gauge(f64::from_bits(p.raw)),
        }
    }

    /// Where every point is one counter value (a quiet counter, kept as a run): its source and
    /// the run's first and last poll. Its rates are zero at each of those polls but the first,
    /// as [`WindowsCache::rates_each`](super::WindowsCache::rates_each) hands them, and its increase is
    /// zero, so two series with the same run (and scale) give the same rates and increases.
    pub fn quiet_run(&self) -> Option<QuietRun> {
        let (first, last, _) = self.points.run()?;
        matches!(self.kind(), Kind::Counter(_)).then_some(QuietRun {
            source: self.source,
            first,
            last,
            scale: self.scale(),
        })
    }

    /// Its source's clock in `st`, the store it is from.
    pub(super) fn clock<'a>(&self, st: &'a Store) -> Option<&'a Clock> {
        st.clocks.get(self.source.0 as usize)
    }

    fn time(&self, st: &Store, seq: i64) -> Option<Ts> {
        self.clock(st)?.time(seq)
    }

    /// Every point, oldest first, of this series of `st` (decoded: reading the newest ones is
    /// cheaper with [`latest`] and [`last_two`]).
    ///
    /// [`latest`]: Series::latest
    /// [`last_two`]: Series::last_two
    pub fn points<'a>(
        &'a self,
        st: &'a Store,
    ) -> impl DoubleEndedIterator<Item = (Ts, Value)> + 'a {
        let v: Vec<(Ts, Value)> = self
            .timed(st, self.points.iter(&st.slab))
            .map(|p| (p.t, self.value_of(&p)))
            .collect();
        v.into_iter()
    }

    /// Points from the last one before `since` on, oldest first.
    pub fn points_since<'a>(
        &'a self,
        st: &'a Store,
        since: Ts,
    ) -> impl Iterator<Item = (Ts, Value)> + 'a {
        let v: Vec<(Ts, Value)> = self
            .timed(st, self.points.iter_from(since, &st.slab))
            .map(|p| (p.t, self.value_of(&p)))
            .collect();
        v.into_iter()
    }

    /// Points with their times from the clock.
    pub(super) fn timed<'a>(
        &'a self,
        st: &'a Store,
        it: hist::Iter<'a>,
    ) -> impl Iterator<Item = Point> + 'a {
        let clock = self.clock(st);
        it.filter_map(move |p| clock?.time(p.seq).map(|t| Point { t, raw: p.raw }))
    }

    /// The two newest points with their times, undecoded, older first.
    pub(super) fn two(&self, st: &Store) -> Option<TwoAt> {
        let (a, b) = self.points.last_two(&st.slab)?;
        let clock = self.clock(st)?;
        Some(((a, clock.time(a.seq)?), (b, clock.time(b.seq)?)))
    }

    /// The newest point, undecoded, with its time.
    pub(super) fn last(&self, st: &Store) -> Option<(hist::At, Ts)> {
        let p = self.points.last()?;
        Some((p, self.time(st, p.seq)?))
    }

    /// The two newest points, older first.
    pub fn last_two(&self, st: &Store) -> Option<((Ts, Value), (Ts, Value))> {
        let ((a, ta), (b, tb)) = self.two(st)?;
        Some(((ta, self.value(a.raw)), (tb, self.value(b.raw))))
    }

    fn value(&self, raw: u64) -> Value {
        self.value_of(&Point { t: 0, raw })
    }

    pub fn len(&self, st: &Store) -> usize {
        self.points.len(&st.slab)
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    pub fn latest(&self, st: &Store) -> Option<(Ts, Value)> {
        self.last(st).map(|(p, t)| (t, self.value(p.raw)))
    }

    pub fn last_seen(&self, st: &Store) -> Option<Ts> {
        self.last(st).map(|(_, t)| t)
    }
}
