//! Bounded per-series history. Collectors' samples go in; rates, increases and staleness come out,
//! computed on read by `rate.rs`. A failed poll adds no point, so the gap stays a gap.

use super::rate::{self, Rate, Width};
use super::{History, Parsed, Sample, Scale, SeriesKey, Str, Ts, Value};
use hashbrown::HashTable;
use std::collections::HashMap;

mod asof;
mod chunks;
mod health;
mod hist;
mod ids;
mod series;
mod windows;

pub use health::{MAX_SERIES_PER_SOURCE, SourceHealth};
pub use series::{Clock, Kind, Point, QuietRun, Series};
pub use windows::WindowsCache;

/// A store ([`Store::uid`]) and its set of series ([`Store::shape_generation`]), the key of
/// everything resolved from the series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShapeKey {
    pub store: u64,
    pub shape: u64,
}

/// Index of a source (one switch, node, log or ping peer) in the order the config lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct SourceId(pub u32);

/// Index of a series in the store; stable for the life of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SeriesId(pub u32);

/// A series goes stale after this many missed intervals.
pub const STALE_AFTER_INTERVALS: i64 = 3;

#[derive(Debug, Default, Clone, Copy)]
pub struct StoreStats {
    pub series: usize,
    pub points: usize,
    pub dropped_out_of_order: u64,
    /// Bytes of encoded history (blocks and the sources' clocks), for the memory benchmark.
    pub history_bytes: usize,
}

pub struct Store {
    retention_ms: i64,
    max_points: usize,
    /// Series by the hash of their key, keys told apart by comparing them in `series` (the key
    /// is held once, there): 4 bytes a series and its slot's control byte.
    index: HashTable<SeriesId>,
    /// The series of each metric name, ascending (a byte or so a series: [`ids::Ascending`]).
    by_name: HashMap<Str, ids::Ascending>,
    series: chunks::Chunked<Series>,
    sources: Vec<SourceHealth>,
    dropped_out_of_order: u64,
    /// Newest time history was expired at: expiring scans every series, so it runs at most once
    /// per [`EXPIRE_EVERY_MS`] of data time, not on every poll (512 nodes = 512 polls a second).
    last_expire: Option<Ts>,
    /// Expire every series whatever its source's [`Clock::kept_from`] (the plain computation
    /// the skip is tested against).
    expire_all: bool,
    /// Per source, the series of its last poll in sample order: a poll names the same series in
    /// the same order every time, so a key comparison replaces hashing the key. Held as runs of
    /// consecutive ids ([`ids::Runs`]): a source's whole answer is one run.
    recent: Vec<ids::Runs>,
    /// Per source, the times of its polls.
    clocks: Vec<Clock>,
    /// The encoded points of the series' histories (those that changed).
    slab: hist::Slab,
    /// Changes with every change of the store ([`next_generation`]).
    generation: u64,
    /// Changes only when a series or a source is added ([`Store::shape_generation`]).
    shape_generation: u64,
    /// Names this store among all made in the process (a time-travel copy is another one), so
    /// what is kept for one store ([`WindowsCache`]) is never read against another.
    uid: u64,
}

/// A number never handed out before in this process: the generation of something that just
/// changed, so views computed from an older state (or another store) never look current.
pub fn next_generation() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn key_hash(k: &SeriesKey) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(k)
}

/// History may outlive retention by at most this much.
const EXPIRE_EVERY_MS: i64 = 1000;

impl Store {
    /// `retention_ms` of history per series, at most `max_points` points each (at most 2^31 - 1:
    /// a series counts its points in 31 bits).
    pub fn new(retention_ms: i64, max_points: usize) -> Self {
        Self {
            retention_ms: retention_ms.max(1),
            max_points: max_points.clamp(2, i32::MAX as usize - 1),
            index: HashTable::new(),
            by_name: HashMap::new(),
            series: chunks::Chunked::default(),
            sources: Vec::new(),
            dropped_out_of_order: 0,
            last_expire: None,
            expire_all: false,
            recent: Vec::new(),
            clocks: Vec::new(),
            slab: hist::Slab::default(),
            generation: next_generation(),
            shape_generation: next_generation(),
            uid: next_generation(),
        }
    }

    /// Changes with every poll, failure or source added.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Changes when a series or a source is added, not with new points: what is made from the
    /// set of series (a table's rows and the series behind each cell) stays right until it moves.
    /// Never handed out twice in a process, so another store's never matches.
    pub fn shape_generation(&self) -> u64 {
        self.shape_generation
    }

    /// This store's identity: unlike the generation, it never changes.
    pub fn uid(&self) -> u64 {
        self.uid
    }

    /// This store and its set of series: what is resolved from the series (ids, layouts) holds
    /// while this stays.
    pub fn shape_key(&self) -> ShapeKey {
        ShapeKey {
            store: self.uid,
            shape: self.shape_generation,
        }
    }

    /// Declare a source before its first poll, so it shows as "waiting" rather than not at all.
    pub fn add_source(&mut self, name: &str, interval_ms: i64) -> SourceId {
        self.generation = next_generation();
        self.shape_generation = self.generation;
        self.sources.push(SourceHealth {
            name: name.to_string(),
            interval_ms,
            ..Default::default()
        });
        SourceId(self.sources.len() as u32 - 1)
    }

    /// Mark `id` as a source whose every poll answers all its live series ([`SourceHealth::whole_answers`]).
    pub fn set_whole_answers(&mut self, id: SourceId) {
        if let Some(h) = self.sources.get_mut(id.0 as usize) {
            h.whole_answers = true;
        }
    }

    pub fn sources(&self) -> impl Iterator<Item = (SourceId, &SourceHealth)> {
        self.sources
            .iter()
            .enumerate()
            .map(|(i, h)| (SourceId(i as u32), h))
    }

    pub fn source(&self, id: SourceId) -> Option<&SourceHealth> {
        self.sources.get(id.0 as usize)
    }

    pub fn source_by_name(&self, name: &str) -> Option<(SourceId, &SourceHealth)> {
        self.sources().find(|(_, h)| h.name == name)
    }

    /// A successful poll: its samples, taken at `at`.
    pub fn ingest(&mut self, source: SourceId, at: Ts, parsed: &Parsed) {
        self.generation = next_generation();
        if let Some(h) = self.sources.get_mut(source.0 as usize) {
            h.up = Some(true);
            h.last_error = None;
            h.down_since = None;
            h.last_success = Some(h.last_success.map_or(at, |t| t.max(at)));
            h.last_attempt = Some(at);
            h.polls_ok += 1;
            h.unknown_lines = parsed.unknown_lines;
            h.unknown_examples.clone_from(&parsed.unknown_examples);
            h.notes.clone_from(&parsed.notes);
        }
        let seq = self.clock(source).seq_for(at);
        let last = std::mem::take(
            self.recent
                .get_mut(source.0 as usize)
                .unwrap_or(&mut ids::Runs::default()),
        );
        let mut was = last.iter();
        let mut recent = ids::Runs::default();
        let mut over = 0usize;
        for s in &parsed.samples {
            let id = match was.next() {
                Some(id) if self.series.get(id as usize).is_some_and(|x| x.key == s.key) => {
                    SeriesId(id)
                }
                _ => {
                    let Some(id) = self.series_for(source, s) else {
                        over += 1;
                        recent.push(ids::Runs::NONE);
                        continue;
                    };
                    id
                }
            };
            recent.push(id.0);
            self.push(id, source, at, seq, s.value);
        }
        drop(was);
        drop(last);
        if over > 0
            && let Some(h) = self.sources.get_mut(source.0 as usize)
        {
            h.notes.push(format!(
                "{over} samples of new series not stored: a source may make at most {MAX_SERIES_PER_SOURCE} series"
            ));
        }
        let n = source.0 as usize;
        if self.recent.len() <= n {
            self.recent.resize_with(n + 1, ids::Runs::default);
        }
        self.recent[n] = recent;
        if self.last_expire.is_none_or(|t| at - t >= EXPIRE_EVERY_MS) {
            self.last_expire = Some(at);
            self.expire(at);
        }
    }

    /// Points from before a poll that the poll brought (a fleet source's history), taken before
    /// its own `ingest`: stored as polls at those times would have stored them (the same clock,
    /// so rates, resets and gaps read the same); the source's health is the poll's to set. Times
    /// not after the source's newest poll have no place and are dropped (counted).
    pub fn backfill(&mut self, source: SourceId, h: &History) {
        if h.is_empty() {
            return;
        }
        self.generation = next_generation();
        let seqs: Vec<Option<i64>> = {
            let c = self.clock(source);
            h.times.iter().map(|&t| c.seq_for(t)).collect()
        };
        let mut over = 0usize;
        for (key, points) in &h.series {
            let Some(&(_, first)) = points.first() else {
                continue;
            };
            let sample = Sample {
                key: key.clone(),
                value: first,
            };
            let Some(id) = self.series_for(source, &sample) else {
                over += 1;
                continue;
            };
            for &(i, v) in points {
                let i = i as usize;
                if let (Some(&at), Some(&seq)) = (h.times.get(i), seqs.get(i)) {
                    self.push(id, source, at, seq, v);
                }
            }
        }
        if over > 0
            && let Some(s) = self.sources.get_mut(source.0 as usize)
        {
            s.notes.push(format!(
                "{over} series of the history not stored: a source may make at most {MAX_SERIES_PER_SOURCE} series"
            ));
        }
        if let Some(&last) = h.times.last() {
            self.last_expire = Some(last);
            self.expire(last);
        }
    }

    /// A failed poll: the source is down with `reason`; no point is added anywhere.
    pub fn fail(&mut self, source: SourceId, at: Ts, reason: &str) {
        self.generation = next_generation();
        let retention = self.retention_ms;
        if let Some(h) = self.sources.get_mut(source.0 as usize) {
            if h.up != Some(false) {
                h.down_since = Some(at);
            }
            h.up = Some(false);
            h.last_error = Some(reason.to_string());
            h.last_attempt = Some(at);
            h.polls_failed += 1;
            h.failures.push_back(at);
            while h.failures.front().is_some_and(|&f| f < at - retention) {
                h.failures.pop_front();
            }
        }
    }

    /// A source's clock (made on its first poll).
    fn clock(&mut self, source: SourceId) -> &mut Clock {
        let n = source.0 as usize;
        if self.clocks.len() <= n {
            self.clocks.resize_with(n + 1, Clock::default);
        }
        &mut self.clocks[n]
    }

    /// The series of a sample, made if new; `None` when its source has made its maximum.
    fn series_for(&mut self, source: SourceId, s: &Sample) -> Option<SeriesId> {
        match self.id(&s.key) {
            Some(id) => Some(id),
            None => {
                if let Some(h) = self.sources.get_mut(source.0 as usize) {
                    if h.series >= MAX_SERIES_PER_SOURCE {
                        return None;
                    }
                    h.series += 1;
                }
                let id = SeriesId(self.series.len() as u32);
                self.shape_generation = next_generation();
                let kind = match s.value {
                    Value::Counter(_) | Value::CounterMicros(_) => Kind::Counter(Width::W64),
                    Value::Counter32(_) => Kind::Counter(Width::W32),
                    Value::Gauge(_) => Kind::Gauge,
                };
                self.clock(source);
                self.series
                    .push(Series::new(s.key.clone(), source, kind, s.value.scale()));
                let series = &self.series;
                self.index.insert_unique(key_hash(&s.key), id, |i| {
                    series.get(i.0 as usize).map_or(0, |x| key_hash(&x.key))
                });
                self.by_name.entry(s.key.name.clone()).or_default().push(id);
                Some(id)
            }
        }
    }

    /// Add a sample taken at `at` by `source`, whose clock named that poll `seq`.
    fn push(&mut self, id: SeriesId, source: SourceId, at: Ts, seq: Option<i64>, v: Value) {
        let raw = match v {
            Value::Counter(v) | Value::Counter32(v) | Value::CounterMicros(v) => v,
            Value::Gauge(v) => v.to_bits(),
        };
        let max_points = self.max_points;
        let Some(series) = self.series.get_mut(id.0 as usize) else {
            return;
        };
        let n = series.source.0 as usize;
        if self.clocks.len() <= n {
            self.clocks.resize_with(n + 1, Clock::default);
        }
        let clock = &mut self.clocks[n];
        let slab = &mut self.slab;
        let last = series
            .points
            .last()
            .and_then(|p| clock.time(p.seq).map(|t| (p, t)));
        match last {
            // Out of order: the newer point stays, the older one is dropped and counted.
            Some((_, t)) if at < t => {
                self.dropped_out_of_order += 1;
                return;
            }
            // Same timestamp twice: the newer value replaces the older one, no zero-length interval.
            Some((_, t)) if at == t => {
                series.points.replace_last(raw, slab, |q| clock.time(q));
                return;
            }
            _ => {}
        }
        // A series made by another source (the same key from two sources) takes its times from
        // its own source's clock.
        let seq = if series.source == source {
            seq
        } else {
            clock.seq_for(at)
        };
        let Some(seq) = seq else {
            // Older than its source's newest poll: there is no place for it in the clock.
            self.dropped_out_of_order += 1;
            return;
        };
        if !series
            .points
            .push(hist::At { seq, raw }, slab, |q| clock.time(q))
        {
            // No slot left for encoded points (2^31 of them): the point has no place either.
            self.dropped_out_of_order += 1;
            return;
        }
        if series.points.len(slab) > max_points {
            series.points.pop_front(slab);
        }
    }

    /// Drop what is older than retention. Only the series of sources whose cutoff moved past
    /// [`Clock::kept_from`] are visited: until history is a retention long, none (scanning all
    /// ~92k series of 512 nodes every second was a quarter of ingest).
    fn expire(&mut self, now: Ts) {
        let cutoff = now - self.retention_ms;
        let from: Vec<Option<i64>> = self
            .clocks
            .iter()
            .map(|c| {
                let f = c.seq_from(cutoff);
                (self.expire_all || f > c.kept_from).then_some(f)
            })
            .collect();
        if from.iter().any(Option::is_some) {
            for s in self.series.iter_mut() {
                if let Some(&Some(f)) = from.get(s.source.0 as usize) {
                    s.points.expire(f, &mut self.slab);
                }
            }
        }
        for (c, f) in self.clocks.iter_mut().zip(from) {
            if let Some(f) = f {
                c.kept_from = c.kept_from.max(f);
            }
            c.expire(cutoff);
        }
    }

    /// A store that expires every series each time (the plain path, for tests of the skip).
    #[cfg(test)]
    pub(super) fn expiring_all(mut self) -> Self {
        self.expire_all = true;
        self
    }

    pub fn id(&self, key: &SeriesKey) -> Option<SeriesId> {
        self.index
            .find(key_hash(key), |id| {
                self.series
                    .get(id.0 as usize)
                    .is_some_and(|s| s.key == *key)
            })
            .copied()
    }

    pub fn get(&self, id: SeriesId) -> Option<&Series> {
        self.series.get(id.0 as usize)
    }

    pub fn all(&self) -> impl Iterator<Item = (SeriesId, &Series)> {
        self.series
            .iter()
            .enumerate()
            .map(|(i, s)| (SeriesId(i as u32), s))
    }

    /// Every series of metric `name` whose labels include all of `labels`.
    pub fn select<'a>(
        &'a self,
        name: &str,
        labels: &'a [(&'a str, &'a str)],
    ) -> impl Iterator<Item = (SeriesId, &'a Series)> + 'a {
        self.by_name
            .get(name)
            .into_iter()
            .flat_map(ids::Ascending::iter)
            .filter_map(|id| self.series.get(id.0 as usize).map(|s| (id, s)))
            .filter(move |(_, s)| s.key.has_labels(labels))
    }

    /// Metric names present, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.by_name.keys().map(Str::as_str).collect();
        v.sort_unstable();
        v
    }

    /// Rate over the newest interval of a counter, from the samples' own timestamps, in the
    /// metric's unit per second (a µs-kept seconds counter gives seconds per second: a fraction).
    /// `None`: fewer than two points, a gauge, or the source failed in between (a gap).
    pub fn rate(&self, id: SeriesId) -> Option<Rate> {
        let s = self.get(id)?;
        let Kind::Counter(width) = s.kind() else {
            return None;
        };
        let ((a, ta), (b, tb)) = s.two(self)?;
        if self.gap(s, ta, tb) || self.gone(s, tb) {
            return None;
        }
        Some(rate::rate((ta, a.raw), (tb, b.raw), width).scaled(s.scale()))
    }

    /// Per-interval rates of a counter since `since` (points end at each interval's end).
    /// A reset or a gap yields `(t, None)` so charts draw a hole and a reset mark.
    pub fn rates(&self, id: SeriesId, since: Ts) -> Vec<(Ts, Rate)> {
        let Some(s) = self.get(id) else {
            return Vec::new();
        };
        let Kind::Counter(width) = s.kind() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut prev: Option<Point> = None;
        for p in s.timed(self, s.points.iter_from(since, &self.slab)) {
            if let Some(a) = prev {
                let r = self.interval_rate(s, width, (a.t, a.raw), (p.t, p.raw));
                if p.t >= since {
                    out.push((p.t, r));
                }
            }
            prev = Some(p);
        }
        out
    }

    /// How many events a counter counted since `since` (resets counted as Prometheus does).
    /// `None` for gauges, for scaled counters (their growth is an amount of time, not a count:
    /// read their rates), and for series with no point at or after `since`.
    pub fn increase_since(&self, id: SeriesId, since: Ts) -> Option<u64> {
        let s = self.get(id)?;
        let Kind::Counter(width) = s.kind() else {
            return None;
        };
        if s.scale() != Scale::One {
            return None;
        }
        if s.last(self)?.1 < since || s.points.flat_from(since, &self.slab) {
            // Nothing since, or a counter that did not move (no point to decode).
            return Some(0);
        }
        // Start from the last point at or before `since`, so the first interval counts.
        let mut it = s
            .timed(self, s.points.iter_from(since, &self.slab))
            .peekable();
        let mut first = it.next()?;
        while let Some(p) = it.next_if(|p| p.t <= since) {
            first = p;
        }
        Some(rate::increase(
            std::iter::once(first.raw).chain(it.map(|p| p.raw)),
            width,
        ))
    }

    /// Whether the newest interval of a counter was a reset (for the reset mark).
    pub fn reset_in_last(&self, id: SeriesId) -> bool {
        matches!(self.rate(id), Some(Rate::Reset))
    }

    /// A series of a whole-answers source that the source's newest successful poll left out.
    fn gone(&self, s: &Series, newest: Ts) -> bool {
        self.sources
            .get(s.source.0 as usize)
            .is_some_and(|h| h.whole_answers && h.last_success.is_some_and(|t| t > newest))
    }

    fn gap(&self, s: &Series, a: Ts, b: Ts) -> bool {
        self.sources
            .get(s.source.0 as usize)
            .is_some_and(|h| h.failed_between(a, b))
    }

    /// The rate of counter `s` (of `width`) between two of its points (time, raw value): none
    /// where a poll of its source failed between them (a rate never bridges a failure).
    fn interval_rate(&self, s: &Series, width: Width, a: (Ts, u64), b: (Ts, u64)) -> Rate {
        if self.gap(s, a.0, b.0) {
            Rate::NoTime
        } else {
            rate::rate(a, b, width).scaled(s.scale())
        }
    }

    pub fn stats(&self) -> StoreStats {
        StoreStats {
            series: self.series.len(),
            points: self.series.iter().map(|s| s.points.len(&self.slab)).sum(),
            dropped_out_of_order: self.dropped_out_of_order,
            history_bytes: self.slab.bytes()
                + self
                    .clocks
                    .iter()
                    .map(|c| c.times.capacity() * std::mem::size_of::<Ts>())
                    .sum::<usize>(),
        }
    }

    pub fn retention_ms(&self) -> i64 {
        self.retention_ms
    }
}

#[cfg(test)]
mod tests;
