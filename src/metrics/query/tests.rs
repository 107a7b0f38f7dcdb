//! The query functions against stores with known contents.

use super::*;
use crate::metrics::{Parsed, Sample, SeriesKey};

#[test]
fn sums_over_devices_and_missing_is_none() {
    let mut st = Store::new(60_000, 100);
    let src = st.add_source("n1", 1000);
    let poll = |a: u64, b: u64, d: u64| Parsed {
        samples: vec![
            Sample::counter("c_total", &[("node", "n1"), ("device", "a")], a),
            Sample::counter("c_total", &[("node", "n1"), ("device", "b")], b),
            Sample::counter_micros("d_seconds_total", &[("node", "n1")], d),
        ],
        ..Default::default()
    };
    st.ingest(src, 0, &poll(0, 0, 0));
    assert_eq!(
        rate_sum(&st, "c_total", &[("node", "n1")]),
        None,
        "one sample: no rate"
    );
    st.ingest(src, 1000, &poll(5, 7, 500_000));
    assert_eq!(rate_sum(&st, "c_total", &[("node", "n1")]), Some(12.0));
    assert_eq!(rate_sum(&st, "c_total", &[("node", "n2")]), None);
    assert_eq!(increase_sum(&st, "c_total", &[], 0), Some(12));
    assert_eq!(
        rate_sum(&st, "d_seconds_total", &[]),
        Some(0.5),
        "500 000 µs in 1 s: 0.5 s per second"
    );
    assert_eq!(
        latest(&st, "d_seconds_total", &[]).map(|(_, v)| v.as_f64()),
        Some(0.5),
        "read in seconds"
    );
    assert_eq!(
        increase_sum(&st, "d_seconds_total", &[], 0),
        None,
        "time is not a count"
    );
    assert_eq!(pause_fraction_max(&st, "d_seconds_total", &[]), Some(0.5));
    assert_eq!(label_values(&st, "c_total", "device"), vec!["a", "b"]);
    let tl = rate_timeline(&st, "c_total", &[], 0, 1000, 3);
    assert_eq!(tl, vec![None, Some(12.0), None]);
    let by = rate_by(&st, "c_total", &[], &["device"]);
    assert_eq!(
        by.get(&vec!["a".to_string()]).and_then(|a| a.rate),
        Some(5.0)
    );
    assert_eq!(by.len(), 2);
    let by = increase_by(&st, "c_total", &[], &["node"], 0);
    assert_eq!(by.get(&vec!["n1".to_string()]), Some(&12));
    let pf = pause_fraction_by(&st, "d_seconds_total", &[], &["node"]);
    assert_eq!(pf.get(&vec!["n1".to_string()]), Some(&0.5));
    st.ingest(src, 2000, &poll(1, 9, 500_000));
    let by = rate_by(&st, "c_total", &[("node", "n1")], &["node"]);
    assert_eq!(
        by.get(&vec!["n1".to_string()]),
        Some(&Agg {
            rate: Some(2.0),
            reset: true
        }),
        "device a reset: no rate from it, a mark; device b still counts"
    );
    assert_eq!(
        latest_by(&st, "c_total", &[], &["node"]).get(&vec!["n1".to_string()]),
        Some(&9.0)
    );
    // The kept groups answer per group what the maps answer (a reset, a new series).
    st.ingest(src, 2000, &{
        let mut p = poll(1, 9, 500_000);
        p.samples.push(Sample::counter(
            "c_total",
            &[("node", "n2"), ("device", "a")],
            3,
        ));
        p
    });
    let mut w = WindowsCache::default();
    for g in [&["node"][..], &["device"], &["node", "device"]] {
        let groups = groups(&st, "c_total", &[], g);
        let rates = rate_by(&st, "c_total", &[], g);
        let incs = increase_by(&st, "c_total", &[], g, 0);
        let latest = latest_by(&st, "c_total", &[], g);
        assert_eq!(
            groups.keys().collect::<Vec<_>>(),
            rates.keys().collect::<Vec<_>>()
        );
        for (k, ids) in &groups {
            assert_eq!(Some(&rate_of(&st, ids)), rates.get(k), "{k:?}");
            assert_eq!(increase_of_in(&st, &mut w, ids, 0), incs.get(k).copied());
            assert_eq!(latest_of(&st, ids), latest.get(k).copied());
        }
    }
    let pf = pause_fraction_by(&st, "d_seconds_total", &[], &["node"]);
    let groups = groups(&st, "d_seconds_total", &[], &["node"]);
    for (k, ids) in &groups {
        assert_eq!(pause_fraction_of(&st, ids), pf.get(k).copied());
    }
    // The borrowed keys answer what the owned ones do, group for group, in the same order.
    fn owned<const N: usize, V: Copy>(m: BTreeMap<Key<'_, N>, V>) -> Vec<(Vec<String>, V)> {
        m.into_iter()
            .map(|(k, v)| (k.iter().map(|s| s.to_string()).collect(), v))
            .collect()
    }
    let two_g = ["node", "device"];
    assert_eq!(
        owned(rate_by_key(&st, "c_total", &[], &two_g)),
        rate_by(&st, "c_total", &[], &two_g)
            .into_iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        owned(increase_by_key(&st, "c_total", &[], &["device"], 0)),
        increase_by(&st, "c_total", &[], &["device"], 0)
            .into_iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        owned(latest_by_key(&st, "c_total", &[], &["node", "absent"])),
        latest_by(&st, "c_total", &[], &["node", "absent"])
            .into_iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(
        owned(pause_fraction_by_key(
            &st,
            "d_seconds_total",
            &[],
            &["node"]
        )),
        pause_fraction_by(&st, "d_seconds_total", &[], &["node"])
            .into_iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(rate_by_key(&st, "c_total", &[], &two_g).len(), 3);
    let two = last_two(&st, "c_total", &[("device", "b")]);
    assert_eq!(two.len(), 1);
    assert_eq!((two[0].1, two[0].2), (Some(7.0), 9.0));
}

/// Every series bucketed from the store's own rates (none skipped, nothing kept): what the
/// timelines from kept windows must equal.
fn series_by_series(
    st: &Store,
    ids: &[SeriesId],
    how: Combine,
    step: i64,
    n: usize,
) -> Vec<Option<f64>> {
    timeline(ids.iter().copied(), how, 0, step, n, |id, f| {
        for (t, r) in st.rates(id, 0) {
            f(t, r);
        }
    })
}

/// The timelines from kept windows equal those read from the store series by series, for sums
/// and maxima over each side of a split, with a reset and a series that starts late, asked again
/// after more polls with the same windows.
#[test]
fn timelines_from_kept_windows_are_the_store_s() {
    let mut st = Store::new(60_000, 100);
    let src = st.add_source("sw", 1000);
    let odd = |k: &SeriesKey| {
        k.label("port")
            .is_some_and(|p| p.ends_with(['1', '3', '5']))
    };
    let mut w = [WindowsCache::default(), WindowsCache::default()];
    for k in 0..12u64 {
        let mut samples: Vec<Sample> = (0..6u64)
            .map(|p| {
                let v = if k == 7 && p == 2 {
                    1
                } else {
                    k * k * (p + 1) + p
                };
                Sample::counter("pfc_total", &[("port", &format!("p{p}"))], v)
            })
            .collect();
        if k > 4 {
            samples.push(Sample::counter("pfc_total", &[("port", "late")], 3 * k));
        }
        let poll = Parsed::from(samples);
        st.ingest(src, k as i64 * 1000, &poll);
        if k < 6 {
            continue;
        }
        for side in [false, true] {
            let ids: Vec<SeriesId> = st
                .select("pfc_total", &[])
                .filter(|(_, s)| odd(&s.key) == side)
                .map(|(id, _)| id)
                .collect();
            for (i, how) in [Combine::Sum, Combine::Max].into_iter().enumerate() {
                let kept = rate_timeline_of(&st, &mut w[i], &ids, how, 0, 1000, 12);
                assert_eq!(kept, series_by_series(&st, &ids, how, 1000, 12));
                assert!(kept.iter().filter(|v| v.is_some()).count() >= k as usize - 1);
            }
        }
    }
}

/// `GroupedCache`/`ListedCache` kept across polls answer what the `*_by_key` functions (and a
/// resolution made from nothing) answer, through a new series, a new source and a reset.
#[test]
fn kept_resolutions_answer_as_from_nothing() {
    let mut st = Store::new(60_000, 100);
    let n1 = st.add_source("n1", 1000);
    let g2 = ["node", "device"];
    let mut kept = GroupedCache::new("c_total", &[], g2);
    let mut kept_pause = GroupedCache::new("d_seconds_total", &[], ["node"]);
    let mut kept_list = ListedCache::new("c_total", &[("node", "n1")], ["device"]);
    fn vecs<K, V>(i: impl Iterator<Item = (K, V)>) -> Vec<(K, V)> {
        i.collect()
    }
    let mut check = |st: &Store, at: Ts, what: &str| {
        kept.resolve(st);
        kept_pause.resolve(st);
        kept_list.resolve(st);
        let fresh = {
            let mut f = GroupedCache::new("c_total", &[], g2);
            f.resolve(st);
            f
        };
        for g in [&kept, &fresh] {
            assert_eq!(
                vecs(g.rate_by(st)),
                vecs(rate_by_key(st, "c_total", &[], &g2).into_iter()),
                "{what}"
            );
            for since in [0, at - 1500, at] {
                assert_eq!(
                    vecs(g.increase_by(st, since)),
                    vecs(increase_by_key(st, "c_total", &[], &g2, since).into_iter()),
                    "{what}"
                );
            }
            assert_eq!(
                vecs(g.latest_by(st)),
                vecs(latest_by_key(st, "c_total", &[], &g2).into_iter()),
                "{what}"
            );
        }
        assert_eq!(
            vecs(kept_pause.pause_fraction_by(st)),
            vecs(pause_fraction_by_key(st, "d_seconds_total", &[], &["node"]).into_iter()),
            "{what}"
        );
        assert_eq!(
            kept_list.rate_sum(st),
            rate_sum(st, "c_total", &[("node", "n1")]),
            "{what}"
        );
        let listed: Vec<_> = kept_list.iter(st).map(|(id, k)| (id, k[0])).collect();
        let selected: Vec<_> = st
            .select("c_total", &[("node", "n1")])
            .map(|(id, s)| (id, s.key.label("device").unwrap_or("")))
            .collect();
        assert_eq!(listed, selected, "{what}");
    };
    let c = |node: &str, dev: &str, v: u64| {
        Sample::counter("c_total", &[("node", node), ("device", dev)], v)
    };
    let d = |node: &str, v: u64| Sample::counter_micros("d_seconds_total", &[("node", node)], v);
    let poll = |s: Vec<Sample>| Parsed::from(s);
    st.ingest(n1, 0, &poll(vec![c("n1", "a", 0), d("n1", 0)]));
    check(&st, 0, "one point");
    st.ingest(n1, 1000, &poll(vec![c("n1", "a", 5), d("n1", 300_000)]));
    check(&st, 1000, "rates");
    // A new series (device b) between two of n1's.
    st.ingest(
        n1,
        2000,
        &poll(vec![c("n1", "b", 1), c("n1", "a", 9), d("n1", 700_000)]),
    );
    check(&st, 2000, "new series");
    // A new source with a series in an existing group's metric.
    let n2 = st.add_source("n2", 1000);
    check(&st, 2000, "new source, no series yet");
    st.ingest(n2, 2500, &poll(vec![c("n2", "a", 100), d("n2", 0)]));
    st.ingest(
        n1,
        3000,
        &poll(vec![c("n1", "b", 4), c("n1", "a", 11), d("n1", 900_000)]),
    );
    check(&st, 3000, "new source");
    // A reset: a counter going down.
    st.ingest(n2, 3500, &poll(vec![c("n2", "a", 2), d("n2", 100_000)]));
    st.ingest(
        n1,
        4000,
        &poll(vec![c("n1", "b", 1), c("n1", "a", 12), d("n1", 950_000)]),
    );
    check(&st, 4000, "reset");
    // Another store: resolved again, not read against the first one's ids.
    let mut other = Store::new(60_000, 100);
    let o = other.add_source("n9", 1000);
    other.ingest(o, 0, &poll(vec![c("n9", "z", 1), c("n1", "a", 1)]));
    other.ingest(o, 1000, &poll(vec![c("n9", "z", 4), c("n1", "a", 2)]));
    check(&other, 1000, "another store");
    check(&st, 4000, "back to the first");
}

/// Quiet counters with a run already bucketed are skipped: the timelines from the kept windows
/// equal those read from the store series by series, for sums and maxima, through quiet runs
/// that start late, stop early, sit on a second source polled half a second apart, span a failed
/// poll, or are 32-bit or in microseconds, beside a counter that moves.
#[test]
fn skipping_quiet_runs_already_bucketed_changes_no_column() {
    let mut st = Store::new(60_000, 100);
    let (a, b) = (st.add_source("a", 1000), st.add_source("b", 1000));
    for k in 0..14i64 {
        let c = |port: &str, v: u64| Sample::counter("q_total", &[("sw", "a"), ("port", port)], v);
        if k == 9 {
            st.fail(a, k * 1000, "timeout");
        } else {
            let mut samples: Vec<Sample> = (0..4).map(|p| c(&format!("p{p}"), 7)).collect();
            // The only series of `r_total`: two quiet runs of one source, one after the other.
            let r = |port: &str| Sample::counter("r_total", &[("sw", "a"), ("port", port)], 1);
            if k < 5 {
                samples.push(c("early", 3));
                samples.push(r("early"));
            }
            if k > 6 {
                samples.push(c("late", 4));
                samples.push(r("late"));
                samples.push(Sample::counter32(
                    "q_total",
                    &[("sw", "a"), ("port", "w32")],
                    9,
                ));
                samples.push(Sample::counter_micros(
                    "q_total",
                    &[("sw", "a"), ("port", "us")],
                    11,
                ));
            }
            if k > 10 {
                samples.push(c("moving", (k * k) as u64));
            }
            st.ingest(a, k * 1000, &Parsed::from(samples));
        }
        if (3..8).contains(&k) {
            let quiet_b = vec![Sample::counter(
                "q_total",
                &[("sw", "b"), ("port", "b0")],
                5,
            )];
            st.ingest(b, k * 1000 + 500, &Parsed::from(quiet_b));
        }
    }
    let ids = |name: &str, labels: &[(&str, &str)]| {
        st.select(name, labels)
            .map(|(id, _)| id)
            .collect::<Vec<_>>()
    };
    for (step, n) in [(1000, 15), (500, 30)] {
        for how in [Combine::Sum, Combine::Max] {
            for group in [ids("q_total", &[]), ids("q_total", &[("sw", "b")])] {
                let mut w = WindowsCache::default();
                let kept = rate_timeline_of(&st, &mut w, &group, how, 0, step, n);
                let want = series_by_series(&st, &group, how, step, n);
                assert_eq!(kept, want, "{how:?} step {step}");
                assert!(kept.iter().filter(|v| v == &&Some(0.0)).count() >= 3);
            }
        }
        let runs = ids("r_total", &[]);
        let mut w = WindowsCache::default();
        let kept = rate_timeline_of(&st, &mut w, &runs, Combine::Sum, 0, step, n);
        assert_eq!(
            kept,
            series_by_series(&st, &runs, Combine::Sum, step, n),
            "step {step}"
        );
        assert!(
            kept.iter()
                .skip(8 * 1000 / step as usize)
                .any(|v| v == &Some(0.0))
        );
    }
    let all = ids("q_total", &[]);
    let mut w = WindowsCache::default();
    let sum = rate_timeline_of(&st, &mut w, &all, Combine::Sum, 0, 1000, 15);
    assert!(sum.iter().any(|v| v.is_some_and(|v| v > 0.0)));
}

/// Sums of newest rates and of increases over many series skip quiet runs already counted and
/// answer what summing every series does: through quiet runs in microseconds listed before
/// quiet counters of events with the same run (no increase is told of the former), runs that
/// end early or start late, a failed poll, and counters that move.
#[test]
fn sums_over_many_series_skip_quiet_runs_and_answer_the_same() {
    let mut st = Store::new(60_000, 100);
    let a = st.add_source("a", 1000);
    for k in 0..12i64 {
        if k == 6 {
            st.fail(a, k * 1000, "timeout");
            continue;
        }
        let mut samples = Vec::new();
        for p in 0..20 {
            let port = format!("p{p}");
            let l = [("port", port.as_str())];
            samples.push(Sample::counter_micros("us_total", &l, 5));
            if p < 10 || k > 3 {
                samples.push(Sample::counter("q_total", &l, 7));
            }
            if p == 3 {
                samples.push(Sample::counter(
                    "q_total",
                    &[("port", "moving")],
                    (k * k) as u64,
                ));
            }
            if k == 11 {
                // One point: no rate yet.
                samples.push(Sample::counter("new_total", &l, 1));
            }
        }
        st.ingest(a, k * 1000, &Parsed::from(samples));
    }
    let mut ids: Vec<SeriesId> = st.select("us_total", &[]).map(|(id, _)| id).collect();
    ids.extend(st.select("q_total", &[]).map(|(id, _)| id));
    assert!(ids.len() > 40);
    // Under `QUIET_FROM` series only the run counted last is skipped (a port's priorities).
    for n in [ids.len(), 30, 17, 12, 3] {
        let ids = &ids[ids.len() - n..];
        let mut every = Agg::default();
        for &id in ids {
            every.add(st.rate(id));
        }
        assert_eq!(rate_of(&st, ids), every, "{n} series");
        for since in [0, 2_500, 5_000, 7_000, 11_000] {
            let mut w = WindowsCache::default();
            let each: Vec<Option<u64>> = ids
                .iter()
                .map(|&id| WindowsCache::default().increase_since(&st, id, since))
                .collect();
            let want = each.iter().flatten().copied().reduce(|x, y| x + y);
            assert_eq!(
                increase_of_in(&st, &mut w, ids, since),
                want,
                "{n} since {since}"
            );
        }
        // Two windows in one walk, over one kept `WindowsCache`, answer as each alone.
        let mut w = WindowsCache::default();
        for since in [[0, 7_000], [11_000, 2_500], [5_000, 5_000]] {
            let alone = since.map(|t| increase_of_in(&st, &mut WindowsCache::default(), ids, t));
            assert_eq!(
                increases_of_in(&st, &mut w, ids, since),
                alone,
                "{n} {since:?}"
            );
        }
    }
    let all_quiet: Vec<SeriesId> = st.select("us_total", &[]).map(|(id, _)| id).collect();
    let one_in_events = st.select("q_total", &[("port", "p0")]).map(|(id, _)| id);
    let mixed: Vec<SeriesId> = all_quiet.into_iter().chain(one_in_events).collect();
    let mut w = WindowsCache::default();
    assert_eq!(increase_of_in(&st, &mut w, &mixed, 0), Some(0));
    // Runs that end at the same poll but start at different ones: one point has no rate.
    let fresh = st.select("new_total", &[]).map(|(id, _)| id);
    let long = st.select("q_total", &[("port", "p0")]).map(|(id, _)| id);
    let mixed: Vec<SeriesId> = fresh.chain(long).collect();
    assert!(mixed.len() > QUIET_FROM);
    assert_eq!(rate_of(&st, &mixed).rate, Some(0.0));
}
