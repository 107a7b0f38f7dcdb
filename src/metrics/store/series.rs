//! One series' history and the clock its source's polls share.

use super::SourceId;
use super::hist;
use crate::metrics::rate::Width;
use crate::metrics::{Scale, SeriesKey, Ts, Value};
use std::collections::VecDeque;
use std::sync::{Arc, RwLock};

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
#[derive(Debug, Default)]
pub struct Clock {
    /// Sequence number of `times[0]`.
    pub(super) first: i64,
    pub(super) times: VecDeque<Ts>,
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

pub(super) type SharedClock = Arc<RwLock<Clock>>;

pub(super) fn read(c: &SharedClock) -> std::sync::RwLockReadGuard<'_, Clock> {
    c.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub(super) fn write(c: &SharedClock) -> std::sync::RwLockWriteGuard<'_, Clock> {
    c.write().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// 80 bytes (issue #22: a row of a big answer makes ten): its key 24 (`Str` and `Labels` one
/// pointer each), its history 40, its source's clock 8 (the times of its points: `points` and
/// `last_two` read them, so the series holds them until those move to the store), source, kind
/// and scale 7.
#[derive(Debug)]
pub struct Series {
    pub key: SeriesKey,
    pub source: SourceId,
    pub kind: Kind,
    /// Metric units per stored count (µs counters of a seconds metric); reads apply it.
    pub scale: Scale,
    pub(super) points: hist::Hist,
    /// Its source's clock: the times of its points.
    pub(super) clock: SharedClock,
}

impl Series {
    pub fn value_of(&self, p: &Point) -> Value {
        match self.kind {
            Kind::Counter(Width::W64) if self.scale == Scale::Micro => Value::CounterMicros(p.raw),
            Kind::Counter(Width::W64) => Value::Counter(p.raw),
            Kind::Counter(Width::W32) => Value::Counter32(p.raw),
            Kind::Gauge => Value::Gauge(f64::from_bits(p.raw)),
        }
    }

    /// Every point, oldest first (decoded: reading the newest ones is cheaper with [`latest`]
    /// and [`last_two`]).
    ///
    /// [`latest`]: Series::latest
    /// [`last_two`]: Series::last_two
    pub fn points(&self) -> impl DoubleEndedIterator<Item = (Ts, Value)> + '_ {
        let v: Vec<(Ts, Value)> = self
            .timed(self.points.iter())
            .map(|p| (p.t, self.value_of(&p)))
            .collect();
        v.into_iter()
    }

    /// Points from the last one before `since` on, oldest first.
    pub fn points_since(&self, since: Ts) -> impl Iterator<Item = (Ts, Value)> + '_ {
        let v: Vec<(Ts, Value)> = self
            .timed(self.points.iter_from(since))
            .map(|p| (p.t, self.value_of(&p)))
            .collect();
        v.into_iter()
    }

    /// Points with their times from the clock.
    pub(super) fn timed<'a>(&'a self, it: hist::Iter<'a>) -> impl Iterator<Item = Point> + 'a {
        let clock = read(&self.clock);
        it.filter_map(move |p| clock.time(p.seq).map(|t| Point { t, raw: p.raw }))
    }

    /// The two newest points with their times, undecoded, older first.
    pub(super) fn two(&self) -> Option<((hist::At, Ts), (hist::At, Ts))> {
        self.points.last_two(|q| read(&self.clock).time(q))
    }

    /// The two newest points, older first.
    pub fn last_two(&self) -> Option<((Ts, Value), (Ts, Value))> {
        let ((a, ta), (b, tb)) = self.two()?;
        Some(((ta, self.value(a.raw)), (tb, self.value(b.raw))))
    }

    fn value(&self, raw: u64) -> Value {
        self.value_of(&Point { t: 0, raw })
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    pub fn latest(&self) -> Option<(Ts, Value)> {
        self.points.last().map(|(p, t)| (t, self.value(p.raw)))
    }

    pub fn last_seen(&self) -> Option<Ts> {
        self.points.last().map(|(_, t)| t)
    }
}
