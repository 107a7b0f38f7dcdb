//! The grouped questions of [`query`](super::query) for tables with one row per value of one
//! label (a node): answers keyed by the label's value as the store holds it, borrowed, so a table
//! of 2000 nodes neither copies a key per series nor per row. Same numbers as `rate_by`,
//! `increase_by_in` and `pause_fraction_by` grouped by that one label (the tests hold them to it),
//! except that series without the label are left out instead of grouped under "".

use super::query::Agg;
use super::rate::{Rate, pause_fraction};
use super::store::{Series, SeriesId, Windows};
use super::{Store, Ts};
use std::collections::HashMap;

/// Answers keyed by a label's value.
pub type ByLabel<'a, T> = HashMap<&'a str, T>;

/// Every series of `name` with `label`, and its value of it.
fn each<'a>(
    store: &'a Store,
    name: &str,
    label: &'a str,
) -> impl Iterator<Item = (SeriesId, &'a Series, &'a str)> + 'a {
    // `select` borrows the name only while it looks it up.
    let ids: Vec<(SeriesId, &'a Series)> = store.select(name, &[]).collect();
    ids.into_iter()
        .filter_map(move |(id, s)| s.key.label(label).map(|v| (id, s, v)))
}

/// [`query::rate_by`](super::query::rate_by) grouped by one label.
pub fn rate<'a>(store: &'a Store, name: &str, label: &'a str) -> ByLabel<'a, Agg> {
    let mut out: ByLabel<Agg> = HashMap::new();
    for (id, _, v) in each(store, name, label) {
        let agg = out.entry(v).or_default();
        match store.rate(id) {
            Some(Rate::PerSec(r)) => *agg.rate.get_or_insert(0.0) += r,
            Some(Rate::Reset) => agg.reset = true,
            _ => {}
        }
    }
    out
}

/// [`query::increase_by_in`](super::query::increase_by_in) grouped by one label.
pub fn increase_in<'a>(
    store: &'a Store,
    w: &mut Windows,
    name: &str,
    label: &'a str,
    since: Ts,
) -> ByLabel<'a, u64> {
    let mut out: ByLabel<u64> = HashMap::new();
    for (id, _, v) in each(store, name, label) {
        if let Some(n) = w.increase_since(store, id, since) {
            *out.entry(v).or_insert(0) += n;
        }
    }
    out
}

/// [`query::pause_fraction_by`](super::query::pause_fraction_by) grouped by one label: the
/// largest share of any of the group's series.
pub fn pause_fraction_max<'a>(store: &'a Store, name: &str, label: &'a str) -> ByLabel<'a, f64> {
    let mut out: ByLabel<f64> = HashMap::new();
    for (id, _, v) in each(store, name, label) {
        if let Some(f) = store.rate(id).and_then(pause_fraction) {
            out.entry(v).and_modify(|y| *y = y.max(f)).or_insert(f);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::query;
    use crate::metrics::{Parsed, Sample};

    /// Two nodes with two devices each (one reset on n2), a series without a node: each answer
    /// equals the grouped query's for every node.
    #[test]
    fn answers_equal_the_grouped_queries() {
        let mut st = Store::new(600_000, 100);
        let src = st.add_source("fleet", 1000);
        let c = "rocetop_rdma_np_cnp_sent_total";
        let d = "rocetop_nic_pfc_rx_pause_duration_seconds_total";
        for k in 0..6u64 {
            let reset = if k == 5 { 0 } else { 40 * k };
            let samples = vec![
                Sample::counter(c, &[("node", "n1"), ("device", "a")], 10 * k),
                Sample::counter(c, &[("node", "n1"), ("device", "b")], 3 * k),
                Sample::counter(c, &[("node", "n2"), ("device", "a")], reset),
                Sample::counter(c, &[("device", "orphan")], 7 * k),
                Sample::counter_micros(d, &[("node", "n1"), ("priority", "3")], 100_000 * k),
                Sample::counter_micros(d, &[("node", "n1"), ("priority", "4")], 300_000 * k),
            ];
            let p = Parsed {
                samples,
                ..Default::default()
            };
            st.ingest(src, 1_000_000 + k as i64 * 1000, &p);
        }
        let g = ["node"];
        let mut w = Windows::default();
        let since = 1_002_500;
        let rates = rate(&st, c, "node");
        let incs = increase_in(&st, &mut w, c, "node", since);
        let fr = pause_fraction_max(&st, d, "node");
        let want_rates = query::rate_by(&st, c, &[], &g);
        let want_incs = query::increase_by(&st, c, &[], &g, since);
        let want_fr = query::pause_fraction_by(&st, d, &[], &g);
        for n in ["n1", "n2"] {
            let k = vec![n.to_string()];
            assert_eq!(rates.get(n), want_rates.get(&k), "{n}");
            assert_eq!(incs.get(n), want_incs.get(&k), "{n}");
            assert_eq!(fr.get(n), want_fr.get(&k), "{n}");
        }
        assert_eq!(rates.get("n1").and_then(|a| a.rate), Some(13.0));
        assert!(rates.get("n2").is_some_and(|a| a.reset));
        assert!(fr.get("n1").is_some_and(|f| (f - 0.3).abs() < 1e-9));
        // The grouped query puts the node-less series under ""; here it has no row.
        assert_eq!(rates.len(), 2);
        assert!(want_rates.contains_key(&vec![String::new()]));
    }
}
