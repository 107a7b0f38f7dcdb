//! Aggregate questions the screen and the reports ask of the store ("CNPs/s of this node, all
//! devices"), answered from `Store::rate`/`increase_since`. Missing stays missing: `None`, never 0.

use super::rate::{Rate, pause_fraction};
use super::store::{QuietRun, Series, SeriesId, WindowsCache};
use super::{Store, Ts, Value};
use rustc_hash::FxHashSet;
use std::collections::BTreeMap;

mod by_owner;
mod resolved;
pub use by_owner::ByOwner;
pub use resolved::{GroupedCache, ListedCache};

/// Sum of the newest rates of every matching series; `None` when none has a rate yet.
pub fn rate_sum(store: &Store, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut sum = None;
    for (id, _) in store.select(name, labels) {
        if let Some(r) = store.rate(id).and_then(|r| r.value()) {
            *sum.get_or_insert(0.0) += r;
        }
    }
    sum
}

/// Sum of the newest values of every matching series; `None` when there is none.
pub fn latest_sum(store: &Store, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut sum = None;
    for (_, s) in store.select(name, labels) {
        if let Some((_, v)) = s.latest(store) {
            *sum.get_or_insert(0.0) += v.as_f64();
        }
    }
    sum
}

/// Newest value of the first matching series.
pub fn latest(store: &Store, name: &str, labels: &[(&str, &str)]) -> Option<(Ts, Value)> {
    store
        .select(name, labels)
        .find_map(|(_, s)| s.latest(store))
}

/// Total growth since `since` over matching counters ("N in the last 60 s", "since mark").
pub fn increase_sum(store: &Store, name: &str, labels: &[(&str, &str)], since: Ts) -> Option<u64> {
    let mut sum = None;
    for (id, _) in store.select(name, labels) {
        if let Some(v) = store.increase_since(id, since) {
            *sum.get_or_insert(0) += v;
        }
    }
    sum
}

/// Share of the newest interval a node's NIC spent paused (worst priority/netdev), from the
/// `_pause_duration_seconds_total` counters (their rate is seconds paused per second).
pub fn pause_fraction_max(store: &Store, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut best: Option<f64> = None;
    for (id, _) in store.select(name, labels) {
        if let Some(f) = store.rate(id).and_then(pause_fraction) {
            best = Some(best.map_or(f, |x: f64| x.max(f)));
        }
    }
    best
}

/// Distinct values of one label over a metric's series, sorted.
pub fn label_values(store: &Store, name: &str, label: &str) -> Vec<String> {
    let mut v: Vec<String> = store
        .select(name, &[])
        .filter_map(|(_, s)| s.key.label(label).map(str::to_string))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Per-interval rates summed across matching series since `since`, bucketed by `step_ms`, for
/// sparklines on a shared time axis. Buckets without data are `None`.
pub fn rate_timeline(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    since: Ts,
    step_ms: i64,
    buckets: usize,
) -> Vec<Option<f64>> {
    let series = store.select(name, labels).map(|(id, _)| id);
    timeline(series, Combine::Sum, since, step_ms, buckets, |id, f| {
        for (t, r) in store.rates(id, since) {
            f(t, r);
        }
    })
}

/// [`rate_timeline`] over the series `ids` (selected before), combined by `how`, from the
/// intervals kept in `w`.
#[allow(clippy::too_many_arguments)]
pub fn rate_timeline_of(
    store: &Store,
    w: &mut WindowsCache,
    ids: &[SeriesId],
    how: Combine,
    since: Ts,
    step_ms: i64,
    buckets: usize,
) -> Vec<Option<f64>> {
    let mut quiet = Quiet::of_len(ids.len());
    let series = ids.iter().copied().filter(|&id| !quiet.seen_id(store, id));
    timeline(series, how, since, step_ms, buckets, |id, f| {
        w.rates_each(store, id, since, f);
    })
}

/// How the series of a timeline's bucket combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    Sum,
    /// The largest (the worst host's pause share).
    Max,
}

/// The quiet counters' runs already put in one timeline's buckets. Another series with the same
/// run would add only zeros where the first put them, which moves neither a sum nor a maximum of
/// rates (never negative), so it is skipped: most of a big switch's PFC and drop counters are
/// quiet, and adding each to the timeline every frame was work for nothing. A sum of newest rates
/// or of increases over many series skips them the same way (their rate and increase are zero,
/// the same for the same run): a switch's summary line sums ~900 of them every frame.
struct Quiet {
    /// Every run counted; none for a small group, where only `last` is looked at.
    runs: Option<FxHashSet<QuietRun>>,
    /// The run counted last: a switch's quiet counters share one run (polled together since
    /// their source came up), so most are told by one compare, not a hash.
    last: Option<QuietRun>,
}

/// From this many series on, a group keeps every quiet run it counted; a smaller one (a port's
/// eight priorities) only the last one (the set costs more than it saves).
const QUIET_FROM: usize = 16;

impl Quiet {
    /// For a group of `len` series.
    fn of_len(len: usize) -> Quiet {
        Quiet {
            runs: (len >= QUIET_FROM).then(FxHashSet::default),
            last: None,
        }
    }

    /// Whether `s` is quiet with a run already counted (else its run is noted). Telling a
    /// counted run as new only costs its zeros added again.
    fn seen(&mut self, s: &Series) -> bool {
        let Some(r) = s.quiet_run() else {
            return false;
        };
        if self.last == Some(r) {
            return true;
        }
        self.last = Some(r);
        self.runs.as_mut().is_some_and(|runs| !runs.insert(r))
    }

    /// [`Quiet::seen`] for the series `id` of `store`.
    fn seen_id(&mut self, store: &Store, id: SeriesId) -> bool {
        store.get(id).is_some_and(|s| self.seen(s))
    }
}

/// Rate `r` at `t` combined into its bucket of `out` (none before `since` or past the end).
fn bucket(out: &mut [Option<f64>], how: Combine, since: Ts, step: i64, t: Ts, r: Rate) {
    let Some(v) = r.value() else { return };
    let i = ((t - since) / step) as usize;
    if let Some(slot) = out.get_mut(i) {
        *slot = Some(match (*slot, how) {
            (None, _) => v,
            (Some(x), Combine::Sum) => x + v,
            (Some(x), Combine::Max) => x.max(v),
        });
    }
}

fn timeline<S>(
    series: impl Iterator<Item = S>,
    how: Combine,
    since: Ts,
    step_ms: i64,
    buckets: usize,
    mut rates: impl FnMut(S, &mut dyn FnMut(Ts, Rate)),
) -> Vec<Option<f64>> {
    let mut out: Vec<Option<f64>> = vec![None; buckets];
    let step = step_ms.max(1);
    for id in series {
        rates(id, &mut |t, r| bucket(&mut out, how, since, step, t, r));
    }
    out
}

/// Gauge values bucketed like [`rate_timeline`] (the newest value of each bucket, max over series).
pub fn gauge_timeline(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    since: Ts,
    step_ms: i64,
    buckets: usize,
) -> Vec<Option<f64>> {
    gauge_timeline_by(store, name, labels, since, step_ms, buckets, f64::max)
}

/// [`gauge_timeline`] with the smallest value of each bucket over series and points (the GPU that
/// waits most).
pub fn gauge_timeline_min(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    since: Ts,
    step_ms: i64,
    buckets: usize,
) -> Vec<Option<f64>> {
    gauge_timeline_by(store, name, labels, since, step_ms, buckets, f64::min)
}

fn gauge_timeline_by(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    since: Ts,
    step_ms: i64,
    buckets: usize,
    pick: fn(f64, f64) -> f64,
) -> Vec<Option<f64>> {
    let mut out: Vec<Option<f64>> = vec![None; buckets];
    let step = step_ms.max(1);
    for (_, s) in store.select(name, labels) {
        for (t, v) in s.points_since(store, since) {
            if t < since {
                continue;
            }
            let i = ((t - since) / step) as usize;
            if let Some(slot) = out.get_mut(i) {
                let x = v.as_f64();
                *slot = Some(slot.map_or(x, |y: f64| pick(y, x)));
            }
        }
    }
    out
}

/// An aggregate over the series of one group (one row of a table).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Agg {
    /// Newest rates summed; `None` when no series of the group has one.
    pub rate: Option<f64>,
    /// Some series of the group reset in its newest interval (show a mark).
    pub reset: bool,
}

/// The values of `group` labels of a series ("" where a label is absent).
fn group_key(s: &Series, group: &[&str]) -> Vec<String> {
    group
        .iter()
        .map(|g| s.key.label(g).unwrap_or("").to_string())
        .collect()
}

/// [`rate_sum`] for every group at once (one pass, so a table of 512 nodes stays cheap). Groups
/// whose series have no rate yet are present with `rate: None`.
pub fn rate_by(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str],
) -> BTreeMap<Vec<String>, Agg> {
    rates_in(store, store.select(name, labels), |s| group_key(s, group))
}

/// The body of [`rate_by`] and [`rate_by_key`]: `series` summed by `key`.
fn rates_in<'a, K: Ord>(
    store: &Store,
    series: impl Iterator<Item = (SeriesId, &'a Series)>,
    key: impl Fn(&'a Series) -> K,
) -> BTreeMap<K, Agg> {
    let mut out: BTreeMap<K, Agg> = BTreeMap::new();
    for (id, s) in series {
        out.entry(key(s)).or_default().add(store.rate(id));
    }
    out
}

/// The largest of each group's values (`value` of a series; `None`: the series has none).
fn max_in<'a, K: Ord>(
    series: impl Iterator<Item = (SeriesId, &'a Series)>,
    key: impl Fn(&'a Series) -> K,
    value: impl Fn(SeriesId, &'a Series) -> Option<f64>,
) -> BTreeMap<K, f64> {
    let mut out: BTreeMap<K, f64> = BTreeMap::new();
    for (id, s) in series {
        if let Some(x) = value(id, s) {
            out.entry(key(s)).and_modify(|y| *y = y.max(x)).or_insert(x);
        }
    }
    out
}

/// The newest value of a series of `store`, as a number.
fn newest(store: &Store, s: &Series) -> Option<f64> {
    s.latest(store).map(|(_, v)| v.as_f64())
}

impl Agg {
    /// One more series' newest rate in the group's sum.
    fn add(&mut self, r: Option<Rate>) {
        match r {
            Some(Rate::PerSec(v)) => *self.rate.get_or_insert(0.0) += v,
            Some(Rate::Reset) => self.reset = true,
            _ => {}
        }
    }
}

/// The series of metric `name` (with `labels`) by the values of their `group` labels: the
/// groups the `*_by` functions answer for, each one's series in the order they sum them. A table
/// keeps this while the set of series stays ([`Store::shape_generation`]) and asks the `*_of`
/// functions for each row's values, so a frame after new data neither walks nor keys every
/// series again.
pub fn groups(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str],
) -> BTreeMap<Vec<String>, Vec<SeriesId>> {
    let mut out: BTreeMap<Vec<String>, Vec<SeriesId>> = BTreeMap::new();
    for (id, s) in store.select(name, labels) {
        out.entry(group_key(s, group)).or_default().push(id);
    }
    out
}

/// [`rate_of`] where there are series to add up; `None` (missing, not 0) where there are none.
pub fn rate_if_any(store: &Store, ids: &[SeriesId]) -> Option<Agg> {
    (!ids.is_empty()).then(|| rate_of(store, ids))
}

/// [`rate_by`]'s value for one group of [`groups`].
pub fn rate_of(store: &Store, ids: &[SeriesId]) -> Agg {
    let mut agg = Agg::default();
    let mut quiet = Quiet::of_len(ids.len());
    for &id in ids {
        if !quiet.seen_id(store, id) {
            agg.add(store.rate(id));
        }
    }
    agg
}

/// [`increase_by_in`]'s value for one group of [`groups`] (`None` where it has no entry).
pub fn increase_of_in(
    store: &Store,
    w: &mut WindowsCache,
    ids: &[SeriesId],
    since: Ts,
) -> Option<u64> {
    let [sum] = increases_of_in(store, w, ids, [since]);
    sum
}

/// [`increase_of_in`] since each of `since`, in one walk over `ids` (each quiet run looked up
/// once, not once a window: a switch's drop line counts its last minute and since the baseline,
/// ~110 series each, every frame).
pub fn increases_of_in<const K: usize>(
    store: &Store,
    w: &mut WindowsCache,
    ids: &[SeriesId],
    since: [Ts; K],
) -> [Option<u64>; K] {
    // A small group's quiet counters are told by `increase_since` as cheaply as by a run.
    let mut quiet = (ids.len() >= QUIET_FROM).then(|| Quiet::of_len(ids.len()));
    let mut sums = [None; K];
    for &id in ids {
        if quiet.as_mut().is_some_and(|q| q.seen_id(store, id)) {
            continue;
        }
        for (sum, v) in sums.iter_mut().zip(w.increases_since(store, id, since)) {
            if let Some(v) = v {
                *sum.get_or_insert(0) += v;
            }
        }
    }
    sums
}

/// [`latest_by`]'s value for one group of [`groups`].
pub fn latest_of(store: &Store, ids: &[SeriesId]) -> Option<f64> {
    ids.iter()
        .filter_map(|&id| store.get(id)?.latest(store))
        .map(|(_, v)| v.as_f64())
        .fold(None, |best, x| Some(best.map_or(x, |y: f64| y.max(x))))
}

/// [`pause_fraction_by`]'s value for one group of [`groups`].
pub fn pause_fraction_of(store: &Store, ids: &[SeriesId]) -> Option<f64> {
    ids.iter()
        .filter_map(|&id| store.rate(id).and_then(pause_fraction))
        .fold(None, |best, f| Some(best.map_or(f, |y: f64| y.max(f))))
}

/// [`increase_sum`] for every group at once.
pub fn increase_by(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str],
    since: Ts,
) -> BTreeMap<Vec<String>, u64> {
    increases(
        store.select(name, labels),
        |s| group_key(s, group),
        |id| store.increase_since(id, since),
    )
}

/// [`increase_by`] answered from the intervals kept in `w` (the same numbers, without decoding
/// the window again every frame).
pub fn increase_by_in(
    store: &Store,
    w: &mut WindowsCache,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str],
    since: Ts,
) -> BTreeMap<Vec<String>, u64> {
    increases(
        store.select(name, labels),
        |s| group_key(s, group),
        |id| w.increase_since(store, id, since),
    )
}

fn increases<'a, K: Ord>(
    series: impl Iterator<Item = (SeriesId, &'a Series)>,
    key: impl Fn(&'a Series) -> K,
    mut increase: impl FnMut(SeriesId) -> Option<u64>,
) -> BTreeMap<K, u64> {
    let mut out = BTreeMap::new();
    for (id, s) in series {
        if let Some(v) = increase(id) {
            *out.entry(key(s)).or_insert(0) += v;
        }
    }
    out
}

/// Newest value per group (the largest when a group has several series, e.g. the worst device).
pub fn latest_by(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str],
) -> BTreeMap<Vec<String>, f64> {
    max_in(
        store.select(name, labels),
        |s| group_key(s, group),
        |_, s| newest(store, s),
    )
}

/// A series' labels with its previous and newest value.
pub type LastTwo = (Vec<(String, String)>, Option<f64>, f64);

/// The two newest values of a gauge (to see a state change such as 802.3x going on).
pub fn last_two(store: &Store, name: &str, labels: &[(&str, &str)]) -> Vec<LastTwo> {
    store
        .select(name, labels)
        .filter_map(|(_, s)| {
            let (_, cur) = s.latest(store)?;
            let prev = s.last_two(store).map(|(p, _)| p.1.as_f64());
            let labels = s
                .key
                .labels
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.to_string()))
                .collect();
            Some((labels, prev, cur.as_f64()))
        })
        .collect()
}

/// [`pause_fraction_max`] for every group at once.
pub fn pause_fraction_by(
    store: &Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str],
) -> BTreeMap<Vec<String>, f64> {
    max_in(
        store.select(name, labels),
        |s| group_key(s, group),
        |id, _| store.rate(id).and_then(pause_fraction),
    )
}

/// A group's key borrowed from the store: the values of `N` group labels ("" where absent). The
/// alerts and the episode detector group every switch port's series twice a second; a
/// `Vec<String>` per series was most of what that cost, an array of `&str` costs
/// nothing to make and orders as the `Vec<String>` of the `*_by` functions does.
pub type Key<'a, const N: usize> = [&'a str; N];

/// The matching series of `name` with the store's lifetime (`Store::select` ties its items to
/// `labels`', which a key kept past this call cannot borrow from).
fn select_long<'a>(
    store: &'a Store,
    name: &str,
    labels: &[(&str, &str)],
) -> impl Iterator<Item = (SeriesId, &'a Series)> {
    let ids: Vec<SeriesId> = store.select(name, labels).map(|(id, _)| id).collect();
    ids.into_iter()
        .filter_map(move |id| store.get(id).map(|s| (id, s)))
}

fn key_of<'a, const N: usize>(s: &'a Series, group: &[&str; N]) -> Key<'a, N> {
    group.map(|g| s.key.label(g).unwrap_or(""))
}

/// [`rate_by`] keyed by borrowed label values (the same groups, the same sums).
pub fn rate_by_key<'a, const N: usize>(
    store: &'a Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str; N],
) -> BTreeMap<Key<'a, N>, Agg> {
    rates_in(store, select_long(store, name, labels), |s| {
        key_of(s, group)
    })
}

/// [`increase_by`] keyed by borrowed label values.
pub fn increase_by_key<'a, const N: usize>(
    store: &'a Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str; N],
    since: Ts,
) -> BTreeMap<Key<'a, N>, u64> {
    increases(
        select_long(store, name, labels),
        |s| key_of(s, group),
        |id| store.increase_since(id, since),
    )
}

/// [`latest_by`] keyed by borrowed label values.
pub fn latest_by_key<'a, const N: usize>(
    store: &'a Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str; N],
) -> BTreeMap<Key<'a, N>, f64> {
    max_in(
        select_long(store, name, labels),
        |s| key_of(s, group),
        |_, s| newest(store, s),
    )
}

/// [`pause_fraction_by`] keyed by borrowed label values.
pub fn pause_fraction_by_key<'a, const N: usize>(
    store: &'a Store,
    name: &str,
    labels: &[(&str, &str)],
    group: &[&str; N],
) -> BTreeMap<Key<'a, N>, f64> {
    max_in(
        select_long(store, name, labels),
        |s| key_of(s, group),
        |id, _| store.rate(id).and_then(pause_fraction),
    )
}

#[cfg(test)]
mod tests;
