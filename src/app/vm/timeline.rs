//! The Overview timeline: every layer of the congestion chain on one time axis, one column per
//! second, computed from the live store (it always spans live history up to now, also while the
//! tables show the past). `ui/overview.rs` only formats what this returns.
//!
//! ```text
//! step             157 ms ▁▁▂▃▅▇█▇▅▃▂▁   (a Time line: drawn over its own range)
//! CNP sent/s          650 ▁▁▁▃▅▇▇▅▃▁▁▁   (a Rate line: drawn from zero)
//! host pause% (max) 10.6% ▁▁▁▁▃▅▅▃▁▁▁▁   (a Share line)
//! ```

use crate::app::table::{axis_start, hold_gaps};
use crate::metrics::names::*;
use crate::metrics::query::{self, Combine};
use crate::metrics::store::Windows;
use crate::metrics::{SeriesKey, Store, Ts, human};
use std::cell::RefCell;

/// What a line's values are, so the screen writes them with the unit's one formatter and picks
/// the scale (a time shows its jumps over its own range; counts and rates are drawn from zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Seconds.
    Time,
    /// Events per second.
    Rate,
    /// A fraction 0..1.
    Share,
}

/// One line of the timeline: a value per column (`None`: no data in that second).
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub label: String,
    pub quantity: Quantity,
    pub values: Vec<Option<f64>>,
    /// Any value above zero is an alarm (drops).
    pub alarm: bool,
}

/// The timeline for `width` columns ending at the live time.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// Time of the first column's start.
    pub since: Ts,
    pub width: usize,
    /// The time-travel cursor's column, if the screen shows the past.
    pub cursor: Option<usize>,
    pub lines: Vec<Line>,
}

/// One column per second.
pub const STEP_MS: i64 = 1000;

/// The timeline of `live` for `width` columns ending at `now`, with the cursor at `at` if time
/// travelling. `kept` holds the intervals decoded for the last frame (only new points decode).
pub fn compute(
    live: &Store,
    kept: &RefCell<Windows>,
    now: Ts,
    at: Option<Ts>,
    width: usize,
) -> Timeline {
    let w = width.max(1);
    let since = axis_start(now, STEP_MS, w);
    let cursor = at.map(|t| ((t - since) / STEP_MS).clamp(0, w as i64 - 1) as usize);
    let rt =
        |n: &str| query::rate_timeline_in(live, &mut kept.borrow_mut(), n, &[], since, STEP_MS, w);
    // Gauges sampled slower than a column (the log every 2 s) hold between samples.
    let gt = |n: &str, l: &[(&str, &str)]| {
        hold_gaps(query::gauge_timeline(live, n, l, since, STEP_MS, w))
    };
    let is_ii = |k: &SeriesKey| k.label("port").is_some_and(|p| p.starts_with("ii"));
    let per_bucket = |name: &str, keep: &dyn Fn(&SeriesKey) -> bool, how: Combine| {
        let mut kept = kept.borrow_mut();
        query::rate_timeline_in_where(live, &mut kept, name, keep, how, since, STEP_MS, w)
    };
    let pfc = |ii: bool| {
        let keep = move |k: &SeriesKey| is_ii(k) == ii;
        add(
            per_bucket(SW_PFC_RX, &keep, Combine::Sum),
            per_bucket(SW_PFC_TX, &keep, Combine::Sum),
        )
    };
    // Seconds paused per second: the fraction itself (the store already scaled the NIC's µs).
    let pause = per_bucket(NIC_PFC_RX_PAUSE_DURATION, &|_| true, Combine::Max);
    let line = |label: String, quantity: Quantity, values: Vec<Option<f64>>| Line {
        label,
        quantity,
        values,
        alarm: false,
    };
    use Quantity::*;
    let lines = vec![
        line(human::name::STEP.into(), Time, gt(TRAIN_STEP_SECONDS, &[])),
        line(
            human::name::ALLREDUCE.into(),
            Time,
            gt(TRAIN_ALLREDUCE_SECONDS, &[]),
        ),
        line(
            human::name::CNP_SENT.into(),
            Rate,
            rt(&rdma_counter("np_cnp_sent")),
        ),
        line(
            human::name::ECN_MARKED.into(),
            Rate,
            rt(&rdma_counter("np_ecn_marked_roce_packets")),
        ),
        line(format!("{} edge ports", human::name::PFC), Rate, pfc(false)),
        line(format!("{} internal ii", human::name::PFC), Rate, pfc(true)),
        line(
            format!("host {} (max)", human::name::PAUSE_TIME),
            Share,
            pause,
        ),
        Line {
            alarm: true,
            ..line(
                human::name::DROPS.into(),
                Rate,
                add(rt(SW_QUEUE_DROPPED), rt(SW_INGRESS_DROPPED)),
            )
        },
        line(
            "RTT p99 (max)".into(),
            Time,
            gt(PING_RTT_SECONDS, &[("quantile", "0.99")]),
        ),
    ];
    Timeline {
        since,
        width: w,
        cursor,
        lines,
    }
}

/// Two lines added bucket by bucket; a bucket is missing only where both are.
fn add(a: Vec<Option<f64>>, b: Vec<Option<f64>>) -> Vec<Option<f64>> {
    a.into_iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (None, None) => None,
            (x, y) => Some(x.unwrap_or(0.0) + y.unwrap_or(0.0)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    /// Two switches' PFC counters on an edge and an `ii` port, a host's pause duration and a step
    /// gauge every 2 s: each line holds what was injected, in its unit, in the right column.
    #[test]
    fn lines_hold_the_injected_rates_in_their_columns() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("sw", 1000);
        let t0 = 1_000_000;
        for k in 0..10u64 {
            let at = t0 + k as i64 * 1000;
            let mut samples = vec![
                Sample::counter(
                    SW_PFC_RX,
                    &[("switch", "a"), ("port", "Ethernet1/1")],
                    100 * k,
                ),
                Sample::counter(
                    SW_PFC_TX,
                    &[("switch", "b"), ("port", "Ethernet1/1")],
                    50 * k,
                ),
                Sample::counter(SW_PFC_RX, &[("switch", "a"), ("port", "ii1/1/1")], 7 * k),
                // 250 ms of each second paused, counted in µs by the NIC.
                Sample::counter_micros(
                    NIC_PFC_RX_PAUSE_DURATION,
                    &[("node", "n1"), ("priority", "3")],
                    250_000 * k,
                ),
            ];
            if k % 2 == 0 {
                samples.push(Sample::gauge(TRAIN_STEP_SECONDS, &[("node", "n1")], 0.157));
            }
            st.ingest(
                src,
                at,
                &Parsed {
                    samples,
                    ..Default::default()
                },
            );
        }
        let now = t0 + 9_000;
        let kept = RefCell::new(Windows::default());
        let tl = compute(&st, &kept, now, None, 12);
        assert_eq!(tl.width, 12);
        assert_eq!(tl.since, now - 11_000);
        let get = |label: &str| {
            tl.lines
                .iter()
                .find(|l| l.label == label)
                .unwrap_or_else(|| panic!("no line {label}"))
        };
        let edge = get("PFC/s edge ports");
        assert_eq!(edge.quantity, Quantity::Rate);
        // Columns 0..1 are before the data, 2 holds the first point (no interval yet).
        assert_eq!(&edge.values[..3], &[None, None, None]);
        assert!(
            edge.values[3..].iter().all(|v| *v == Some(150.0)),
            "{:?}",
            edge.values
        );
        let ii = get("PFC/s internal ii");
        assert!(
            ii.values[3..].iter().all(|v| *v == Some(7.0)),
            "{:?}",
            ii.values
        );
        let pause = get("host pause% (max)");
        assert_eq!(pause.quantity, Quantity::Share);
        assert!(
            pause.values[3..]
                .iter()
                .all(|v| v.is_some_and(|x| (x - 0.25).abs() < 1e-9)),
            "{:?}",
            pause.values
        );
        let step = get("step");
        assert_eq!(step.quantity, Quantity::Time);
        // Sampled every 2 s, held between samples; nothing after the last sample (k = 8).
        assert!(
            step.values[2..=10].iter().all(|v| *v == Some(0.157)),
            "{:?}",
            step.values
        );
        assert_eq!(step.values[11], None);
        let drops = get("drops/s");
        assert!(drops.alarm);
        assert!(
            drops.values.iter().all(Option::is_none),
            "no drop counters: missing, not 0"
        );
        // The cursor sits on the column of its time.
        let tl = compute(&st, &kept, now, Some(t0 + 4_500), 12);
        assert_eq!(tl.cursor, Some(6));
    }
}
