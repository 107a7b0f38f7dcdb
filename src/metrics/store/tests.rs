use super::*;
use crate::metrics::Sample;

fn poll(samples: Vec<Sample>) -> Parsed {
    Parsed {
        samples,
        ..Default::default()
    }
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

/// Issue #22: a big answer makes 10 series a row, so a series' fixed cost is what a row costs.
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
