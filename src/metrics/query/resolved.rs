//! The series of a question resolved once per store shape. Every evaluation asked
//! the same questions (`increase_by_key`, `rate_by_key`, ...): walking a metric's series and
//! comparing label names to find each one's group was most of its cost, though the answer moves
//! only when a series or a source is added ([`Store::shape_generation`]; series are never
//! removed and their labels never change). These keep the ids and their label values, resolved
//! again only then, and read the values fresh every time: the same groups, in the same order,
//! summed in the same order as the `*_by_key` functions.

use super::{Agg, Key, key_of, pause_fraction};
use crate::metrics::store::{SeriesId, ShapeKey, Store};
use crate::metrics::{Ts, Value};
use std::collections::BTreeMap;

/// What a resolution is valid for.
type At = Option<ShapeKey>;

fn at(store: &Store) -> ShapeKey {
    store.shape_key()
}

/// The series of metric `name` with `labels`, each with its `N` group label values ("" where
/// absent), in [`Store::select`] order.
#[derive(Debug)]
pub struct ListedCache<const N: usize> {
    name: String,
    labels: Vec<(&'static str, &'static str)>,
    group: [&'static str; N],
    at: At,
    series: Vec<(SeriesId, [Box<str>; N])>,
}

impl<const N: usize> ListedCache<N> {
    pub fn new(
        name: impl Into<String>,
        labels: &[(&'static str, &'static str)],
        group: [&'static str; N],
    ) -> Self {
        ListedCache {
            name: name.into(),
            labels: labels.to_vec(),
            group,
            at: None,
            series: Vec::new(),
        }
    }

    /// Resolve again if `store`'s set of series moved (or it is another store); whether it did.
    pub fn resolve(&mut self, store: &Store) -> bool {
        if self.at == Some(at(store)) {
            return false;
        }
        self.series = store
            .select(&self.name, &self.labels)
            .map(|(id, s)| (id, key_of(s, &self.group).map(Box::from)))
            .collect();
        self.at = Some(at(store));
        true
    }

    /// The series (id, group label values), as [`Store::select`] gives them.
    pub fn iter<'a>(&'a self, store: &Store) -> impl Iterator<Item = (SeriesId, Key<'a, N>)> {
        self.check(store);
        self.series
            .iter()
            .map(|(id, k)| (*id, k.each_ref().map(|s| &**s)))
    }

    /// [`super::rate_sum`]: the newest rates summed, `None` when no series has one.
    pub fn rate_sum(&self, store: &Store) -> Option<f64> {
        self.check(store);
        let mut agg = Agg::default();
        for (id, _) in &self.series {
            agg.add(store.rate(*id));
        }
        agg.rate
    }

    /// The newest value and the one before of every series (`last_two` without the labels).
    pub fn last_two<'a>(
        &'a self,
        store: &'a Store,
    ) -> impl Iterator<Item = (Option<f64>, f64, Key<'a, N>)> + 'a {
        self.iter(store).filter_map(|(id, k)| {
            let s = store.get(id)?;
            let (_, cur) = s.latest(store)?;
            let prev = s.last_two(store).map(|(p, _)| p.1.as_f64());
            Some((prev, cur.as_f64(), k))
        })
    }

    /// The newest point (time, value) of every series that has one, with its labels.
    pub fn latest<'a>(
        &'a self,
        store: &'a Store,
    ) -> impl Iterator<Item = ((Ts, Value), Key<'a, N>)> + 'a {
        self.iter(store)
            .filter_map(|(id, k)| Some((store.get(id)?.latest(store)?, k)))
    }

    fn check(&self, store: &Store) {
        debug_assert_eq!(self.at, Some(at(store)), "resolve before reading");
    }
}

/// [`ListedCache`] by group: the groups of the `*_by_key` functions, ascending, each with its series
/// in [`Store::select`] order.
#[derive(Debug)]
pub struct GroupedCache<const N: usize> {
    list: ListedCache<N>,
    /// Per group, ascending by key: the index in `list.series` of its first series (whose label
    /// values name it) and its series.
    groups: Vec<(usize, Vec<SeriesId>)>,
}

impl<const N: usize> GroupedCache<N> {
    pub fn new(
        name: impl Into<String>,
        labels: &[(&'static str, &'static str)],
        group: [&'static str; N],
    ) -> Self {
        GroupedCache {
            list: ListedCache::new(name, labels, group),
            groups: Vec::new(),
        }
    }

    /// Resolve again if `store`'s set of series moved (or it is another store).
    pub fn resolve(&mut self, store: &Store) {
        if !self.list.resolve(store) {
            return;
        }
        // The first series of each group names it (its key's strings are kept once).
        let mut by: BTreeMap<Key<'_, N>, (usize, Vec<SeriesId>)> = BTreeMap::new();
        for (i, (id, k)) in self.list.series.iter().enumerate() {
            by.entry(k.each_ref().map(|s| &**s))
                .or_insert_with(|| (i, Vec::new()))
                .1
                .push(*id);
        }
        self.groups = by.into_values().collect();
    }

    /// Every series of every group, as [`Store::select`] gives them.
    pub fn list(&self) -> &ListedCache<N> {
        &self.list
    }

    fn each<'a>(&'a self, store: &Store) -> impl Iterator<Item = (Key<'a, N>, &'a [SeriesId])> {
        self.list.check(store);
        self.groups.iter().map(|(i, ids)| {
            let k = &self.list.series[*i].1;
            (k.each_ref().map(|s| &**s), ids.as_slice())
        })
    }

    /// [`super::rate_by_key`]: every group, its newest rates summed.
    pub fn rate_by<'a>(&'a self, store: &'a Store) -> impl Iterator<Item = (Key<'a, N>, Agg)> + 'a {
        self.each(store)
            .map(|(k, ids)| (k, super::rate_of(store, ids)))
    }

    /// [`super::increase_by_key`]: the groups with an increase, summed.
    pub fn increase_by<'a>(
        &'a self,
        store: &'a Store,
        since: Ts,
    ) -> impl Iterator<Item = (Key<'a, N>, u64)> + 'a {
        self.increase_with(store, move |id| store.increase_since(id, since))
    }

    /// [`GroupedCache::increase_by`] with each series' increase from `inc` (a
    /// [`WindowsCache`](crate::metrics::store::WindowsCache)' kept intervals give the store's numbers
    /// without decoding the window again every second).
    pub fn increase_with<'a>(
        &'a self,
        store: &Store,
        mut inc: impl FnMut(SeriesId) -> Option<u64>,
    ) -> impl Iterator<Item = (Key<'a, N>, u64)> {
        self.each(store).filter_map(move |(k, ids)| {
            let mut sum = None;
            for &id in ids {
                if let Some(v) = inc(id) {
                    *sum.get_or_insert(0) += v;
                }
            }
            Some((k, sum?))
        })
    }

    /// [`super::latest_by_key`]: the groups with a value, their largest newest value.
    pub fn latest_by<'a>(
        &'a self,
        store: &'a Store,
    ) -> impl Iterator<Item = (Key<'a, N>, f64)> + 'a {
        self.each(store)
            .filter_map(|(k, ids)| Some((k, super::latest_of(store, ids)?)))
    }

    /// [`super::pause_fraction_by_key`]: the groups with a rate, their largest paused share.
    pub fn pause_fraction_by<'a>(
        &'a self,
        store: &'a Store,
    ) -> impl Iterator<Item = (Key<'a, N>, f64)> + 'a {
        self.each(store).filter_map(|(k, ids)| {
            let f = ids
                .iter()
                .filter_map(|&id| store.rate(id).and_then(pause_fraction))
                .fold(None, |best, f| Some(best.map_or(f, |y: f64| y.max(f))))?;
            Some((k, f))
        })
    }
}
