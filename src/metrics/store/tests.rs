use super::*;
use crate::metrics::Sample;

fn poll(samples: Vec<Sample>) -> Parsed {
    Parsed::from(samples)
}

fn c(v: u64) -> Parsed {
    poll(vec![Sample::counter("m_total", &[("node", "n")], v)])
}

fn setup() -> (Store, SourceId, SeriesKey) {
    let mut st = Store::new(60_000, 1000);
    let src = st.add_source("n", 1000);
    (st, src, SeriesKey::new("m_total", &[("node", "n")]))
}

#[test]
fn first_sample_has_no_rate() {
    let (mut st, src, key) = setup();
    st.ingest(src, 1000, &c(5));
    let id = st.id(&key).expect("series");
    assert_eq!(st.rate(id), None);
}

#[test]
fn a_series_left_out_of_a_whole_answer_has_no_current_rate() {
    let two = |a: u64, b: u64| {
        poll(vec![
            Sample::counter("m_total", &[("node", "a")], a),
            Sample::counter("m_total", &[("node", "b")], b),
        ])
    };
    for whole in [false, true] {
        let mut st = Store::new(60_000, 1000);
        let src = st.add_source("fleet", 1000);
        if whole {
            st.set_whole_answers(src);
        }
        st.ingest(src, 0, &two(0, 0));
        st.ingest(src, 1000, &two(10, 20));
        // Node b is gone from the third answer.
        st.ingest(
            src,
            2000,
            &poll(vec![Sample::counter("m_total", &[("node", "a")], 30)]),
        );
        let rate = |n: &str| {
            let id = st.id(&SeriesKey::new("m_total", &[("node", n)]))?;
            st.rate(id)
        };
        assert_eq!(rate("a"), Some(Rate::PerSec(20.0)));
        // A node source keeps its last rate (a probe may skip a poll); a fleet's gone series
        // shows nothing, never its old rate as if it were now.
        let b = if whole {
            None
        } else {
            Some(Rate::PerSec(20.0))
        };
        assert_eq!(rate("b"), b, "whole answers: {whole}");
    }
}

type Case = (&'static str, &'static [(Ts, u64)], Option<Rate>);

#[test]
fn rate_sequence_table() {
    // (name, samples as (t, value), expected newest rate)
    let cases: &[Case] = &[
        ("zero delta", &[(0, 5), (1000, 5)], Some(Rate::PerSec(0.0))),
        ("increase", &[(0, 5), (2000, 25)], Some(Rate::PerSec(10.0))),
        ("reset", &[(0, 500), (1000, 2)], Some(Rate::Reset)),
        (
            "dt = 0 replaces",
            &[(0, 5), (1000, 7), (1000, 9)],
            Some(Rate::PerSec(4.0)),
        ),
        (
            "out of order dropped",
            &[(0, 5), (2000, 25), (1000, 15)],
            Some(Rate::PerSec(10.0)),
        ),
    ];
    for (name, pts, want) in cases {
        let (mut st, src, key) = setup();
        for &(t, v) in *pts {
            st.ingest(src, t, &c(v));
        }
        let id = st.id(&key).expect("series");
        assert_eq!(st.rate(id), *want, "{name}");
    }
}

#[test]
fn wrap_of_declared_32_bit_counter() {
    let (mut st, src, _) = setup();
    let k = SeriesKey::new("w_total", &[]);
    st.ingest(
        src,
        0,
        &poll(vec![Sample::counter32(
            "w_total",
            &[],
            u64::from(u32::MAX) - 4,
        )]),
    );
    st.ingest(src, 1000, &poll(vec![Sample::counter32("w_total", &[], 5)]));
    let id = st.id(&k).expect("series");
    assert_eq!(st.rate(id), Some(Rate::PerSec(10.0)));
}

#[test]
fn failed_poll_leaves_a_gap_and_marks_source_down() {
    let (mut st, src, key) = setup();
    st.ingest(src, 0, &c(0));
    st.fail(src, 1000, "timed out after 5 s");
    st.ingest(src, 2000, &c(200));
    let id = st.id(&key).expect("series");
    assert_eq!(st.rate(id), None, "no rate across the failed poll");
    st.ingest(src, 3000, &c(300));
    assert_eq!(st.rate(id), Some(Rate::PerSec(100.0)));
    let rates = st.rates(id, 0);
    assert_eq!(
        rates,
        vec![(2000, Rate::NoTime), (3000, Rate::PerSec(100.0))]
    );
    let h = st.source(src).expect("source");
    assert_eq!(h.up, Some(true));
    assert_eq!(h.polls_failed, 1);
}

#[test]
fn down_source_keeps_reason_and_since() {
    let (mut st, src, _) = setup();
    st.ingest(src, 0, &c(0));
    st.fail(src, 1000, "connection refused");
    st.fail(src, 2000, "connection refused");
    let h = st.source(src).expect("source");
    assert_eq!(h.up, Some(false));
    assert_eq!(h.down_since, Some(1000));
    assert_eq!(h.last_error.as_deref(), Some("connection refused"));
}

#[test]
fn stale_after_three_missed_intervals() {
    let (mut st, src, _) = setup();
    st.ingest(src, 0, &c(0));
    let h = st.source(src).expect("source");
    assert!(!h.is_stale(3000));
    assert!(h.is_stale(3001));
}

#[test]
fn retention_and_capacity_bound_history() {
    let mut st = Store::new(10_000, 5);
    let src = st.add_source("n", 1000);
    for i in 0..20 {
        st.ingest(src, i * 1000, &c(i as u64));
    }
    let id = st
        .id(&SeriesKey::new("m_total", &[("node", "n")]))
        .expect("series");
    assert_eq!(st.get(id).map(|s| s.len(&st)), Some(5));
    let mut st = Store::new(3_000, 100);
    let src = st.add_source("n", 1000);
    for i in 0..20 {
        st.ingest(src, i * 1000, &c(i as u64));
    }
    let id = st
        .id(&SeriesKey::new("m_total", &[("node", "n")]))
        .expect("series");
    assert_eq!(
        st.get(id).map(|s| s.len(&st)),
        Some(4),
        "points within 3 s of the newest"
    );
}

#[test]
fn increase_since_mark_counts_resets_like_prometheus() {
    let (mut st, src, key) = setup();
    for (t, v) in [(0, 100), (1000, 110), (2000, 4), (3000, 6)] {
        st.ingest(src, t, &c(v));
    }
    let id = st.id(&key).expect("series");
    assert_eq!(st.increase_since(id, 0), Some(16));
    assert_eq!(st.increase_since(id, 1000), Some(6));
    assert_eq!(st.increase_since(id, 2500), Some(2));
    assert!(!st.reset_in_last(id));
}

#[test]
fn gauges_have_no_rate_but_keep_values() {
    let (mut st, src, _) = setup();
    st.ingest(src, 0, &poll(vec![Sample::gauge("g", &[], 2.5)]));
    let id = st.id(&SeriesKey::new("g", &[])).expect("series");
    assert_eq!(st.rate(id), None);
    assert_eq!(
        st.get(id).and_then(|s| s.latest(&st)),
        Some((0, Value::Gauge(2.5)))
    );
}

/// A big answer makes 10 series a row, so a series' fixed cost is what a row costs.
/// A series that never moved holds no history on the heap however many polls it has.
#[test]
fn an_unmoving_series_is_small_and_holds_no_history_bytes() {
    // Its key 24 (name and label set one pointer each, two inline labels), source 4, history 20
    // (kind and scale in its bits).
    assert!(
        std::mem::size_of::<Series>() <= 48,
        "{} bytes",
        std::mem::size_of::<Series>()
    );
    assert_eq!(
        std::mem::size_of::<hist::Hist>(),
        20,
        "aligned to 4, beside the source"
    );
    let mut st = Store::new(600_000, 1000);
    let src = st.add_source("n", 1000);
    for i in 0..300i64 {
        st.ingest(
            src,
            i * 1000,
            &poll(vec![
                Sample::counter("m_total", &[("node", "n")], 7),
                Sample::gauge("g", &[("node", "n")], 1.0),
            ]),
        );
    }
    let stats = st.stats();
    assert_eq!(stats.points, 600);
    assert_eq!(
        stats.history_bytes,
        st.clocks[0].times.capacity() * std::mem::size_of::<Ts>(),
        "only the source's clock"
    );
    let id = st
        .id(&SeriesKey::new("m_total", &[("node", "n")]))
        .expect("series");
    assert_eq!(st.rate(id).map(|r| r.value()), Some(Some(0.0)));
    assert_eq!(st.increase_since(id, 0), Some(0));
}

/// One poll of the expiry property test: which source, how long after the last, whether it
/// failed, which of the keys it answered, and each key's value (a smaller one is a reset).
#[derive(Clone, Debug)]
struct Step {
    source: usize,
    dt: i64,
    failed: bool,
    present: [bool; 3],
    values: [u64; 3],
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    (
        0usize..2,
        prop_oneof![Just(1000i64), 1i64..4000, 5000i64..9000],
        proptest::bool::weighted(0.15),
        proptest::array::uniform3(proptest::bool::weighted(0.8)),
        proptest::array::uniform3(0u64..40),
    )
        .prop_map(|(source, dt, failed, present, values)| Step {
            source,
            dt,
            failed,
            present,
            values,
        })
}

/// What the store answers about `key` at `now`: every read a view makes of a series.
fn answers(st: &Store, key: &SeriesKey, now: Ts) -> String {
    let Some(id) = st.id(key) else {
        return "none".into();
    };
    let s = st.get(id).expect("series");
    let since = [now - 6000, now - 3000, now];
    format!(
        "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {}",
        st.rate(id),
        since.map(|t| st.rates(id, t)),
        since.map(|t| st.increase_since(id, t)),
        s.points(st).collect::<Vec<_>>(),
        s.points_since(st, now - 2500).collect::<Vec<_>>(),
        s.last_two(st),
        s.latest(st),
        s.len(st),
        s.is_empty(),
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    /// Expiring only the series of sources whose cutoff moved past what they hold answers as
    /// expiring every series each time: across expiry boundaries (5 s of retention, polls 1 ms
    /// to 9 s apart), resets, failed polls (a source down and back), series left out and back,
    /// one key answered by both sources, and the point cap (12).
    #[test]
    fn skipping_unexpired_sources_answers_as_expiring_all(
        steps in proptest::collection::vec(step(), 1..80),
    ) {
        let mut fast = Store::new(5000, 12);
        let mut plain = Store::new(5000, 12).expiring_all();
        for st in [&mut fast, &mut plain] {
            st.add_source("a", 1000);
            st.add_source("b", 1000);
        }
        // Each source's own key, then one both answer.
        let key = |src: usize, k: usize| match k {
            2 => SeriesKey::new("both_total", &[("port", "p")]),
            _ => SeriesKey::new("m_total", &[("node", ["a", "b"][src]), ("k", ["0", "1"][k])]),
        };
        let mut now: Ts = 0;
        for s in &steps {
            now += s.dt;
            let src = SourceId(s.source as u32);
            let samples: Vec<Sample> = (0..3)
                .filter(|&k| s.present[k])
                .map(|k| Sample { key: key(s.source, k), value: Value::Counter(s.values[k]) })
                .collect();
            for st in [&mut fast, &mut plain] {
                if s.failed {
                    st.fail(src, now, "down");
                } else {
                    st.ingest(src, now, &poll(samples.clone()));
                }
            }
            let (was_fast, was_plain) = (fast.as_of(now - 1500), plain.as_of(now - 1500));
            for k in [key(0, 0), key(0, 1), key(1, 0), key(1, 1), key(0, 2)] {
                proptest::prop_assert_eq!(answers(&fast, &k, now), answers(&plain, &k, now));
                proptest::prop_assert_eq!(
                    answers(&was_fast, &k, now - 1500),
                    answers(&was_plain, &k, now - 1500)
                );
            }
            let (f, p) = (fast.stats(), plain.stats());
            proptest::prop_assert_eq!((f.series, f.points), (p.series, p.points));
            let sel = |st: &Store| st.select("m_total", &[("k", "1")]).map(|(id, _)| id).collect::<Vec<_>>();
            proptest::prop_assert_eq!(sel(&fast), sel(&plain));
        }
    }
}
