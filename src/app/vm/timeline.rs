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
use crate::metrics::store::{SeriesId, Tips, Windows};
use crate::metrics::{Store, Ts, human};
use crate::parse::switch::{PortClass, port_class};
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

/// The timeline's columns from the last frame, kept so the next one recomputes only the seconds
/// that new points can change. A counter's rate lands in the column of its interval's end and a
/// gauge in the column of its point: a poll adds points only after its source's newest, so the
/// columns before the oldest "newest poll" among the sources that polled since are final. It is
/// a memo: dropping it costs one full computation.
#[derive(Default)]
pub struct Kept {
    /// (store uid, store shape, width) the columns were computed for: anything else recomputes.
    key: Option<(u64, u64, usize)>,
    since: Ts,
    /// Per source, (polls answered, newest poll) when the columns were computed.
    polls: Vec<(u64, Option<Ts>)>,
    /// Each part's values per column, before gauges are held over their gaps.
    parts: Vec<Vec<Option<f64>>>,
    /// The rate parts' series, with the (store uid, store shape) they were selected for.
    ids: Option<((u64, u64), RateIds)>,
    /// Per rate part, its series' newest points as of the last frame (by index in `ids`).
    tips: [Tips; 9],
}

/// The series of each rate part, in [`parts`]' order: selected again only when the store's set
/// of series changes (telling a PFC counter's side by its port's name, every series every
/// frame, was most of the timeline's cost at N=8).
type RateIds = [Vec<SeriesId>; 9];

fn rate_ids(live: &Store) -> RateIds {
    let all = |n: &str| live.select(n, &[]).map(|(id, _)| id).collect::<Vec<_>>();
    // Edge and internal ports of a PFC counter, each in the store's order.
    let split = |n: &str| {
        let [mut edge, mut ii] = [Vec::new(), Vec::new()];
        for (id, s) in live.select(n, &[]) {
            let internal = s
                .key
                .label("port")
                .is_some_and(|p| port_class(p) == PortClass::Internal);
            if internal { &mut ii } else { &mut edge }.push(id);
        }
        [edge, ii]
    };
    let [rx_edge, rx_ii] = split(SW_PFC_RX);
    let [tx_edge, tx_ii] = split(SW_PFC_TX);
    [
        all(&rdma_counter("np_cnp_sent")),
        all(&rdma_counter("np_ecn_marked_roce_packets")),
        rx_edge,
        tx_edge,
        rx_ii,
        tx_ii,
        all(NIC_PFC_RX_PAUSE_DURATION),
        all(SW_QUEUE_DROPPED),
        all(SW_INGRESS_DROPPED),
    ]
}

/// The timeline of `live` for `width` columns ending at `now`, with the cursor at `at` if time
/// travelling. `windows` holds the intervals decoded for the last frame (only new points decode);
/// `kept` the columns of the last frame (only the newest seconds are recomputed).
pub fn compute(
    live: &Store,
    windows: &RefCell<Windows>,
    kept: &RefCell<Kept>,
    now: Ts,
    at: Option<Ts>,
    width: usize,
) -> Timeline {
    let w = width.max(1);
    let since = axis_start(now, STEP_MS, w);
    let cursor = at.map(|t| ((t - since) / STEP_MS).clamp(0, w as i64 - 1) as usize);
    let parts = kept_parts(live, windows, &mut kept.borrow_mut(), since, w);
    Timeline {
        since,
        width: w,
        cursor,
        lines: lines(parts),
    }
}

/// Every part's columns from `since`, the kept ones where no new point can reach them.
fn kept_parts(
    live: &Store,
    windows: &RefCell<Windows>,
    k: &mut Kept,
    since: Ts,
    w: usize,
) -> Vec<Vec<Option<f64>>> {
    let key = (live.uid(), live.shape_generation(), w);
    let polls: Vec<(u64, Option<Ts>)> = live
        .sources()
        .map(|(_, h)| (h.polls_ok, h.last_success))
        .collect();
    let shift = (since - k.since) / STEP_MS;
    let same = k.key == Some(key) && k.polls.len() == polls.len() && since >= k.since;
    // The first column a point that arrived since the last frame can change: one poll's points
    // are at its newest time (the store drops points older than a source's newest), more polls'
    // anywhere after the newest then. A source polled every 30 s (a node's topology) recomputed
    // 30 columns of every line when it answered (issue #20).
    let first_new = polls
        .iter()
        .zip(&k.polls)
        .filter(|(now, then)| now != then)
        .map(
            |(&(polls, newest), &(polls_then, newest_then))| match newest_then {
                Some(_) if polls == polls_then + 1 => newest,
                _ => newest_then,
            },
        )
        .try_fold(i64::MAX, |acc, t| t.map(|t| acc.min(t)));
    let from = match first_new {
        Some(t) if same => {
            let col = if t == i64::MAX {
                w as i64
            } else {
                (t - since).div_euclid(STEP_MS)
            };
            col.clamp(0, w as i64) as usize
        }
        // A source polled for the first time (its points may be anywhere), or a new shape.
        _ => 0,
    };
    let shape = (live.uid(), live.shape_generation());
    let ids = match k.ids.take() {
        Some((kept, ids)) if kept == shape => ids,
        _ => {
            // The tips are by position in the lists.
            k.tips = Default::default();
            rate_ids(live)
        }
    };
    let mut tips = std::mem::take(&mut k.tips);
    let fresh = if from < w {
        let from_t = since + from as i64 * STEP_MS;
        parts(live, windows, &ids, &mut tips, from_t, w - from)
    } else {
        Default::default()
    };
    // The kept columns moved left in place by the seconds passed, the fresh ones after them
    // (collecting 12 new vectors column by column cost ~1,900 instructions a part a frame).
    let mut parts = std::mem::take(&mut k.parts);
    parts.resize_with(PARTS, Vec::new);
    for (v, new) in parts.iter_mut().zip(fresh) {
        if from > 0 {
            v.drain(..(shift as usize).min(v.len()));
            v.resize(from, None);
        } else {
            v.clear();
        }
        v.extend(new);
    }
    *k = Kept {
        key: Some(key),
        since,
        polls,
        parts: parts.clone(),
        ids: Some((shape, ids)),
        tips,
    };
    parts
}

/// What the lines are made of, in this order (`lines` combines them).
const PARTS: usize = 12;

/// Every part's columns for `buckets` seconds from `since`, the rates' from the series `ids`.
fn parts(
    live: &Store,
    windows: &RefCell<Windows>,
    ids: &RateIds,
    tips: &mut [Tips; 9],
    since: Ts,
    buckets: usize,
) -> [Vec<Option<f64>>; PARTS] {
    let gt =
        |n: &str, l: &[(&str, &str)]| query::gauge_timeline(live, n, l, since, STEP_MS, buckets);
    let mut w = windows.borrow_mut();
    let mut rt = |i: usize, how: Combine| {
        let (w, tips) = (&mut w, &mut tips[i]);
        query::rate_timeline_tips(live, w, tips, &ids[i], how, since, STEP_MS, buckets)
    };
    let sum = Combine::Sum;
    [
        gt(TRAIN_STEP_SECONDS, &[]),
        gt(TRAIN_ALLREDUCE_SECONDS, &[]),
        rt(0, sum),
        rt(1, sum),
        rt(2, sum),
        rt(3, sum),
        rt(4, sum),
        rt(5, sum),
        // Seconds paused per second: the fraction itself (the store already scaled the NIC's µs).
        rt(6, Combine::Max),
        rt(7, sum),
        rt(8, sum),
        gt(PING_RTT_SECONDS, &[("quantile", "0.99")]),
    ]
}

/// The lines from the parts: gauges sampled slower than a column (the log every 2 s) hold
/// between samples; edge and internal PFC are rx + tx, drops queue + ingress.
fn lines(p: Vec<Vec<Option<f64>>>) -> Vec<Line> {
    let mut p = p.into_iter();
    let mut next = || p.next().unwrap_or_default();
    let line = |label: String, quantity: Quantity, values: Vec<Option<f64>>| Line {
        label,
        quantity,
        values,
        alarm: false,
    };
    use Quantity::*;
    let step = hold_gaps(next());
    let allreduce = hold_gaps(next());
    let cnp = next();
    let ecn = next();
    let edge = add(next(), next());
    let ii = add(next(), next());
    let pause = next();
    let drops = add(next(), next());
    let rtt = hold_gaps(next());
    vec![
        line(human::name::STEP.into(), Time, step),
        line(human::name::ALLREDUCE.into(), Time, allreduce),
        line(human::name::CNP_SENT.into(), Rate, cnp),
        line(human::name::ECN_MARKED.into(), Rate, ecn),
        line(format!("{} edge ports", human::name::PFC), Rate, edge),
        line(format!("{} internal ii", human::name::PFC), Rate, ii),
        line(
            format!("host {} (max)", human::name::PAUSE_TIME),
            Share,
            pause,
        ),
        Line {
            alarm: true,
            ..line(human::name::DROPS.into(), Rate, drops)
        },
        line("RTT p99 (max)".into(), Time, rtt),
    ]
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
            st.ingest(src, at, &Parsed::from(samples));
        }
        let now = t0 + 9_000;
        let windows = RefCell::new(Windows::default());
        let kept = RefCell::new(Kept::default());
        let tl = compute(&st, &windows, &kept, now, None, 12);
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
        let tl = compute(&st, &windows, &kept, now, Some(t0 + 4_500), 12);
        assert_eq!(tl.cursor, Some(6));
    }

    /// Frames that keep the last frame's columns equal frames computed from nothing, through
    /// sources of different intervals whose polls land out of step (a slow switch's poll
    /// stamped before a node's newest), a replaced newest point, a reset, a failed poll, a new
    /// series, frames with nothing new and jumps of the clock.
    #[test]
    fn kept_columns_equal_columns_from_nothing() {
        let mut st = Store::new(600_000, 1000);
        let node = st.add_source("n1", 1000);
        let slow = st.add_source("sw", 5000);
        let logs = st.add_source("log", 2000);
        let windows = RefCell::new(Windows::default());
        let kept = RefCell::new(Kept::default());
        let t0 = 5_000_000;
        let pfc =
            |port: &str, v: u64| Sample::counter(SW_PFC_RX, &[("switch", "a"), ("port", port)], v);
        let mut checked = 0;
        let mut last_node = 0;
        for k in 0..140i64 {
            let now = t0 + k * 700 + (k % 3) * 40;
            // The node every 1.4 s, a tick before the frame; now and then its newest point is
            // replaced after a frame (a second answer stamped at the same time).
            let node_poll = |k: i64, bump: u64| {
                let mut samples = vec![
                    Sample::counter(
                        rdma_counter("np_cnp_sent"),
                        &[("node", "n1")],
                        (k * k) as u64 + bump,
                    ),
                    Sample::counter_micros(
                        NIC_PFC_RX_PAUSE_DURATION,
                        &[("node", "n1"), ("priority", "3")],
                        if (40..44).contains(&k) {
                            10
                        } else {
                            90_000 * k as u64 + bump
                        },
                    ),
                ];
                if k > 70 {
                    samples.push(Sample::counter(
                        rdma_counter("np_ecn_marked_roce_packets"),
                        &[("node", "n1")],
                        3 * k as u64,
                    ));
                }
                Parsed::from(samples)
            };
            if k % 2 == 0 {
                last_node = now - 90;
                st.ingest(node, last_node, &node_poll(k, 0));
            } else if k % 6 == 3 {
                st.ingest(node, last_node, &node_poll(k - 1, 500_000));
            }
            // The switch answers every 5 s, stamped 3.2 s before the frame: behind the node.
            if k % 7 == 3 {
                let at = now - 3200;
                if k == 52 {
                    st.fail(slow, at, "timed out");
                } else {
                    let v = (k * 40) as u64;
                    let samples = vec![
                        pfc("Ethernet1/1", v),
                        pfc("ii1/1/1", v / 3),
                        Sample::counter(SW_QUEUE_DROPPED, &[("switch", "a")], (k / 20) as u64),
                    ];
                    st.ingest(slow, at, &Parsed::from(samples));
                }
            }
            if k % 3 == 1 {
                let samples = vec![Sample::gauge(
                    TRAIN_STEP_SECONDS,
                    &[("node", "n1")],
                    0.1 + k as f64 / 1000.0,
                )];
                st.ingest(logs, now - 300, &Parsed::from(samples));
            }
            // Frames: most after data, some with nothing new, some skipped (two polls of a
            // source between frames), one jump of the clock.
            if k % 5 == 2 || k % 9 == 4 {
                continue;
            }
            let now = if k == 100 { now + 30_000 } else { now };
            // A narrower pane near the end (a resize) starts the columns afresh.
            let width = if k > 120 { 30 } else { 40 };
            let kept_tl = compute(&st, &windows, &kept, now, None, width);
            let fresh = compute(
                &st,
                &RefCell::new(Windows::default()),
                &RefCell::new(Kept::default()),
                now,
                None,
                width,
            );
            assert_eq!(kept_tl, fresh, "frame {k}");
            checked += kept_tl
                .lines
                .iter()
                .flat_map(|l| &l.values)
                .filter(|v| v.is_some())
                .count();
        }
        // The frames held data on every line that had any: the comparison was not of blanks.
        assert!(checked > 2000, "{checked}");
    }
}
