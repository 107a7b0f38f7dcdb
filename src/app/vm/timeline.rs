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
use crate::metrics::store::{SeriesId, ShapeKey, WindowsCache};
use crate::metrics::{Store, Ts, human};
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

/// What the lines are made of: a gauge read by name, or the rate of the counters selected for it
/// ([`RateIds`]). `lines` combines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Step,
    Allreduce,
    CnpSent,
    EcnMarked,
    PfcRxEdge,
    PfcTxEdge,
    PfcRxInternal,
    PfcTxInternal,
    /// Seconds paused per second: the fraction itself (the store already scaled the NIC's µs).
    Pause,
    QueueDrops,
    IngressDrops,
    Rtt,
    /// The least busy GPU's utilization, percent.
    GpuUtilMin,
}

impl Part {
    const ALL: [Part; 13] = [
        Part::Step,
        Part::Allreduce,
        Part::CnpSent,
        Part::EcnMarked,
        Part::PfcRxEdge,
        Part::PfcTxEdge,
        Part::PfcRxInternal,
        Part::PfcTxInternal,
        Part::Pause,
        Part::QueueDrops,
        Part::IngressDrops,
        Part::Rtt,
        Part::GpuUtilMin,
    ];
}

/// One `T` per [`Part`], indexed by it.
#[derive(Clone, Debug, Default, PartialEq)]
struct ByPart<T>([T; Part::ALL.len()]);

impl<T> std::ops::Index<Part> for ByPart<T> {
    type Output = T;
    fn index(&self, p: Part) -> &T {
        &self.0[p as usize]
    }
}

impl<T> std::ops::IndexMut<Part> for ByPart<T> {
    fn index_mut(&mut self, p: Part) -> &mut T {
        &mut self.0[p as usize]
    }
}

impl<T> ByPart<T> {
    fn of(mut f: impl FnMut(Part) -> T) -> ByPart<T> {
        ByPart(Part::ALL.map(&mut f))
    }
}

/// A part's values, one a column.
type Columns = Vec<Option<f64>>;

/// What the timeline's columns were computed for: anything else recomputes them all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ColumnsKey {
    shape: ShapeKey,
    width: usize,
}

/// A source's polls as the columns last saw them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Polled {
    answered: u64,
    newest: Option<Ts>,
}

/// The timeline's columns from the last frame, so the next one recomputes only the seconds that
/// new points can change. A counter's rate lands in the column of its interval's end and a gauge
/// in the column of its point: a poll adds points only after its source's newest, so the
/// columns before the oldest "newest poll" among the sources that polled since are final.
/// Dropping it costs one full computation.
#[derive(Default)]
pub struct TimelineMemo {
    key: Option<ColumnsKey>,
    since: Ts,
    /// Per source, its polls when the columns were computed.
    polls: Vec<Polled>,
    /// Each part's values per column, before gauges are held over their gaps.
    parts: ByPart<Columns>,
    /// The rate parts' series, with the store and set of series they were selected for.
    ids: Option<(ShapeKey, RateIds)>,
}

/// The series of each rate part (none for a gauge): selected again only when the store's set of
/// series changes (telling a PFC counter's side by its port's name, every series every frame,
/// was most of the timeline's cost at N=8).
type RateIds = ByPart<Vec<SeriesId>>;

fn rate_ids(live: &Store) -> RateIds {
    let all = |n: &str| live.select(n, &[]).map(|(id, _)| id).collect::<Vec<_>>();
    // A PFC counter's edge or internal ports, each port's series of one pick (counted once).
    let side = |n: &str, internal: bool| {
        super::summary::picked_pfc(live, n, &[])
            .into_iter()
            .filter(|(ii, _)| *ii == internal)
            .flat_map(|(_, ids)| ids)
            .collect()
    };
    ByPart::of(|p| match p {
        Part::Step | Part::Allreduce | Part::Rtt | Part::GpuUtilMin => Vec::new(),
        Part::CnpSent => all(&rdma_counter("np_cnp_sent")),
        Part::EcnMarked => all(&rdma_counter("np_ecn_marked_roce_packets")),
        Part::PfcRxEdge => side(SW_PFC_RX, false),
        Part::PfcTxEdge => side(SW_PFC_TX, false),
        Part::PfcRxInternal => side(SW_PFC_RX, true),
        Part::PfcTxInternal => side(SW_PFC_TX, true),
        Part::Pause => all(NIC_PFC_RX_PAUSE_DURATION),
        Part::QueueDrops => all(SW_QUEUE_DROPPED),
        Part::IngressDrops => all(SW_INGRESS_DROPPED),
    })
}

/// The timeline of `live` for `width` columns ending at `now`, with the cursor at `at` if time
/// travelling. `windows` holds the intervals decoded for the last frame (only new points decode);
/// `memo` the columns of the last frame (only the newest seconds are recomputed).
pub fn compute(
    live: &Store,
    windows: &RefCell<WindowsCache>,
    memo: &RefCell<TimelineMemo>,
    now: Ts,
    at: Option<Ts>,
    width: usize,
) -> Timeline {
    let w = width.max(1);
    let since = axis_start(complete_until(live, now), STEP_MS, w);
    let cursor = at.map(|t| ((t - since) / STEP_MS).clamp(0, w as i64 - 1) as usize);
    let parts = columns(live, windows, &mut memo.borrow_mut(), since, w);
    // Only a switch with `ii` ports (a Nexus with FEX-like internal fabric) has internal PFC; a
    // fabric without any would show a line of dashes that reads as missing data.
    let internal = memo.borrow().ids.as_ref().is_some_and(|(_, ids)| {
        !ids[Part::PfcRxInternal].is_empty() || !ids[Part::PfcTxInternal].is_empty()
    });
    Timeline {
        since,
        width: w,
        cursor,
        lines: lines(parts, internal),
    }
}

/// The newest instant every source polled once a column (or faster) has reached, `now` at most.
/// Sources poll at their own phase within a second, so the second `now` is in holds the rates of
/// those that already answered in it and not the others': summed, it would read a fraction of
/// the fabric's rate as its newest value. The axis ends at the second all of them have reached.
/// A source that is down or has not answered for three of its intervals no longer holds it back
/// (its rows show it as stale); sources polled rarely (topology) never do.
fn complete_until(live: &Store, now: Ts) -> Ts {
    live.sources()
        .filter(|(_, h)| h.interval_ms <= STEP_MS && h.up == Some(true))
        .filter_map(|(_, h)| h.last_success)
        .filter(|&t| t >= now - 3 * STEP_MS)
        .fold(now, Ts::min)
}

/// Every part's columns from `since`: the last frame's where no new point can reach them, the
/// rest computed.
fn columns(
    live: &Store,
    windows: &RefCell<WindowsCache>,
    m: &mut TimelineMemo,
    since: Ts,
    w: usize,
) -> ByPart<Columns> {
    let shape = live.shape_key();
    let key = ColumnsKey { shape, width: w };
    let polls: Vec<Polled> = live
        .sources()
        .map(|(_, h)| Polled {
            answered: h.polls_ok,
            newest: h.last_success,
        })
        .collect();
    let shift = ((since - m.since) / STEP_MS).max(0) as usize;
    let same = m.key == Some(key) && m.polls.len() == polls.len() && since >= m.since;
    // The first column a point that arrived since the last frame can change: one poll's points
    // are at its newest time (the store drops points older than a source's newest), more polls'
    // anywhere after the newest then. A source polled every 30 s (a node's topology) would
    // otherwise recompute 30 columns of every line when it answered.
    let first_new = polls
        .iter()
        .zip(&m.polls)
        .filter(|(now, then)| now != then)
        .map(|(now, then)| match then.newest {
            Some(_) if now.answered == then.answered + 1 => now.newest,
            _ => then.newest,
        })
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
    // The columns the last frame did not reach: the axis ends before `now` while a source has
    // not answered in the newest second, so points can be there already, from polls counted then.
    let from = from.min(w.saturating_sub(shift));
    let ids = match m.ids.take() {
        Some((made_for, ids)) if made_for == shape => ids,
        _ => rate_ids(live),
    };
    let from_t = since + from as i64 * STEP_MS;
    let mut fresh = parts(live, windows, &ids, from_t, w - from);
    let old = std::mem::take(&mut m.parts);
    let parts = ByPart::of(|p| {
        let mut v: Columns = (0..from)
            .map(|c| old[p].get(c + shift).copied().flatten())
            .collect();
        v.append(&mut fresh[p]);
        v
    });
    *m = TimelineMemo {
        key: Some(key),
        since,
        polls,
        parts: parts.clone(),
        ids: Some((shape, ids)),
    };
    parts
}

/// Every part's columns for `buckets` seconds from `since`, the rates' from the series `ids`.
fn parts(
    live: &Store,
    windows: &RefCell<WindowsCache>,
    ids: &RateIds,
    since: Ts,
    buckets: usize,
) -> ByPart<Columns> {
    if buckets == 0 {
        return ByPart::default();
    }
    let gt =
        |n: &str, l: &[(&str, &str)]| query::gauge_timeline(live, n, l, since, STEP_MS, buckets);
    let mut w = windows.borrow_mut();
    let mut rt = |p: Part, how: Combine| {
        query::rate_timeline_of(live, &mut w, &ids[p], how, since, STEP_MS, buckets)
    };
    ByPart::of(|p| match p {
        Part::Step => gt(TRAIN_STEP_SECONDS, &[]),
        Part::Allreduce => gt(TRAIN_ALLREDUCE_SECONDS, &[]),
        Part::Rtt => gt(PING_RTT_SECONDS, &[("quantile", "0.99")]),
        Part::GpuUtilMin => {
            query::gauge_timeline_min(live, GPU_UTILIZATION_PERCENT, &[], since, STEP_MS, buckets)
        }
        Part::Pause => rt(p, Combine::Max),
        _ => rt(p, Combine::Sum),
    })
}

/// The lines from the parts: gauges sampled slower than a column (the log every 2 s) hold
/// between samples; edge and internal PFC are rx + tx, drops queue + ingress. The internal line
/// is there only where the fabric has `internal` ports.
fn lines(mut p: ByPart<Columns>, internal: bool) -> Vec<Line> {
    let mut take = |part: Part| std::mem::take(&mut p[part]);
    let line = |label: String, quantity: Quantity, values: Vec<Option<f64>>| Line {
        label,
        quantity,
        values,
        alarm: false,
    };
    use Quantity::*;
    let step = hold_gaps(take(Part::Step));
    let allreduce = hold_gaps(take(Part::Allreduce));
    let cnp = take(Part::CnpSent);
    let ecn = take(Part::EcnMarked);
    let edge = add(take(Part::PfcRxEdge), take(Part::PfcTxEdge));
    let ii = add(take(Part::PfcRxInternal), take(Part::PfcTxInternal));
    let pause = take(Part::Pause);
    let drops = add(take(Part::QueueDrops), take(Part::IngressDrops));
    let rtt = hold_gaps(take(Part::Rtt));
    // Percent to the Share lines' fraction.
    let gpu: Columns = take(Part::GpuUtilMin)
        .into_iter()
        .map(|v| v.map(|p| p / 100.0))
        .collect();
    let mut out = vec![
        line(human::name::STEP.into(), Time, step),
        line(human::name::ALLREDUCE.into(), Time, allreduce),
        line(human::name::CNP_SENT.into(), Rate, cnp),
        line(human::name::ECN_MARKED.into(), Rate, ecn),
        line(format!("{} edge ports", human::name::PFC), Rate, edge),
    ];
    if internal {
        out.push(line(format!("{} internal ii", human::name::PFC), Rate, ii));
    }
    out.extend([
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
    ]);
    // Beside the step it explains (the GPUs wait on the all-reduce); a fabric without GPUs (or
    // without nvidia-smi on its nodes) has no such line at all.
    if gpu.iter().any(Option::is_some) {
        out.insert(2, line(human::name::GPU_UTIL_MIN.into(), Share, gpu));
    }
    out
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
    fn the_gpu_line_is_the_least_busy_gpu_and_only_where_there_are_gpus() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("n", 1000);
        let t0 = 1_000_000;
        let util = |node: &str, gpu: &str, v: f64| {
            Sample::gauge(GPU_UTILIZATION_PERCENT, &[("gpu", gpu), ("node", node)], v)
        };
        let windows = RefCell::new(WindowsCache::default());
        let memo = RefCell::new(TimelineMemo::default());
        let step = vec![Sample::gauge(TRAIN_STEP_SECONDS, &[("node", "a")], 0.2)];
        st.ingest(src, t0, &Parsed::from(step));
        let tl = compute(&st, &windows, &memo, t0, None, 4);
        assert!(
            tl.lines
                .iter()
                .all(|l| l.label != human::name::GPU_UTIL_MIN),
            "no GPUs, no line"
        );
        for k in 1..4i64 {
            let busy = 90.0 - 20.0 * k as f64;
            st.ingest(
                src,
                t0 + k * 1000,
                &Parsed::from(vec![
                    util("a", "0", 95.0),
                    util("a", "1", busy),
                    util("b", "0", 93.0),
                ]),
            );
        }
        let memo = RefCell::new(TimelineMemo::default());
        let tl = compute(&st, &windows, &memo, t0 + 3000, None, 4);
        let gpu = tl
            .lines
            .iter()
            .find(|l| l.label == human::name::GPU_UTIL_MIN)
            .expect("the GPU line");
        assert_eq!(gpu.quantity, Quantity::Share);
        assert_eq!(gpu.values, vec![None, Some(0.7), Some(0.5), Some(0.3)]);
        assert_eq!(
            tl.lines[2].label,
            human::name::GPU_UTIL_MIN,
            "beside the step"
        );
    }

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
        let windows = RefCell::new(WindowsCache::default());
        let memo = RefCell::new(TimelineMemo::default());
        let tl = compute(&st, &windows, &memo, now, None, 12);
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
        let tl = compute(&st, &windows, &memo, now, Some(t0 + 4_500), 12);
        assert_eq!(tl.cursor, Some(6));
    }

    /// Two switches polled half a second apart: while the second has not answered in the
    /// current second, the axis ends at the previous one, whose sum holds both; the newest
    /// column never reads one switch's rate as the fabric's. A switch that stopped answering
    /// no longer holds the axis back.
    #[test]
    fn the_newest_column_waits_for_every_source_of_its_second() {
        let mut st = Store::new(600_000, 1000);
        let a = st.add_source("a", 1000);
        let b = st.add_source("b", 1000);
        let t0 = 1_000_000;
        let cnp = |node: &str, v: u64| {
            Sample::counter(
                rdma_counter("np_cnp_sent"),
                &[("node", node), ("device", "mlx5_0"), ("port", "1")],
                v,
            )
        };
        for k in 0..6u64 {
            let at = t0 + k as i64 * 1000;
            st.ingest(a, at + 200, &Parsed::from(vec![cnp("n1", 10 * k)]));
            if k < 5 {
                st.ingest(b, at + 700, &Parsed::from(vec![cnp("n2", 40 * k)]));
            }
        }
        // a answered at t0+5200, b last at t0+4700.
        let now = t0 + 5_400;
        let windows = RefCell::new(WindowsCache::default());
        let memo = RefCell::new(TimelineMemo::default());
        let tl = compute(&st, &windows, &memo, now, None, 4);
        assert_eq!(
            tl.since,
            t0 + 1_000,
            "the axis ends at the second b reached"
        );
        let line = |tl: &Timeline| {
            tl.lines
                .iter()
                .find(|l| l.label == human::name::CNP_SENT)
                .expect("the CNP line")
                .values
                .clone()
        };
        assert_eq!(line(&tl).last(), Some(&Some(50.0)), "{:?}", line(&tl));
        // b has not answered for more than three seconds: the axis goes on without it.
        let later = t0 + 7_900;
        let memo = RefCell::new(TimelineMemo::default());
        let tl = compute(&st, &windows, &memo, later, None, 4);
        assert_eq!(tl.since, t0 + 2_000, "ends at a's newest second, past b's");
    }

    /// An NX-OS edge port reports its pauses per class (`priority="3"`) and as the port total
    /// (`priority="all"`); beside it a port with only its total, and an `ii` port with two
    /// classes: each line counts a port once (the lossless class where it is there, else the
    /// total), as the episodes and the switch line do.
    #[test]
    fn pfc_lines_count_each_port_once() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("sw", 1000);
        let t0 = 1_000_000;
        let pfc = |port: &str, prio: &str, v: u64| {
            Sample::counter(
                SW_PFC_RX,
                &[("switch", "a"), ("port", port), ("priority", prio)],
                v,
            )
        };
        for k in 0..6u64 {
            let samples = vec![
                pfc("Ethernet1/1", "3", 30 * k),
                pfc("Ethernet1/1", "all", 30 * k),
                pfc("Ethernet1/2", "all", 5 * k),
                pfc("ii1/1/1", "3", 7 * k),
                pfc("ii1/1/1", "4", 2 * k),
            ];
            st.ingest(src, t0 + k as i64 * 1000, &Parsed::from(samples));
        }
        let now = t0 + 5_000;
        let windows = RefCell::new(WindowsCache::default());
        let memo = RefCell::new(TimelineMemo::default());
        let tl = compute(&st, &windows, &memo, now, None, 4);
        let get = |label: &str| {
            (tl.lines.iter().find(|l| l.label == label))
                .unwrap_or_else(|| panic!("no line {label}"))
                .values
                .clone()
        };
        assert_eq!(get("PFC/s edge ports").last(), Some(&Some(35.0)));
        assert_eq!(get("PFC/s internal ii").last(), Some(&Some(7.0)));
    }

    /// A fabric whose switches have no `ii` ports (SONiC, EOS, a Nexus without FEX) has no
    /// internal PFC line: a row of dashes there would read as a switch that stopped answering.
    #[test]
    fn no_internal_line_without_internal_ports() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("sw", 1000);
        let t0 = 1_000_000;
        for k in 0..4u64 {
            let s = Sample::counter(
                SW_PFC_RX,
                &[("switch", "a"), ("port", "Ethernet0"), ("priority", "3")],
                10 * k,
            );
            st.ingest(src, t0 + k as i64 * 1000, &Parsed::from(vec![s]));
        }
        let windows = RefCell::new(WindowsCache::default());
        let memo = RefCell::new(TimelineMemo::default());
        let tl = compute(&st, &windows, &memo, t0 + 3_000, None, 4);
        let labels: Vec<&str> = tl.lines.iter().map(|l| l.label.as_str()).collect();
        assert!(labels.contains(&"PFC/s edge ports"), "{labels:?}");
        assert!(!labels.iter().any(|l| l.contains("internal")), "{labels:?}");
    }

    /// Frames that take the last frame's columns from the memo equal frames computed from nothing, through
    /// sources of different intervals whose polls land out of step (a slow switch's poll
    /// stamped before a node's newest), a replaced newest point, a reset, a failed poll, a new
    /// series, frames with nothing new and jumps of the clock.
    #[test]
    fn memo_columns_equal_columns_from_nothing() {
        let mut st = Store::new(600_000, 1000);
        let node = st.add_source("n1", 1000);
        let slow = st.add_source("sw", 5000);
        let logs = st.add_source("log", 2000);
        let windows = RefCell::new(WindowsCache::default());
        let memo = RefCell::new(TimelineMemo::default());
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
            let memo_tl = compute(&st, &windows, &memo, now, None, width);
            let fresh = compute(
                &st,
                &RefCell::new(WindowsCache::default()),
                &RefCell::new(TimelineMemo::default()),
                now,
                None,
                width,
            );
            assert_eq!(memo_tl, fresh, "frame {k}");
            checked += memo_tl
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
