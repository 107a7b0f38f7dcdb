//! The Overview's one-line summaries: per switch its drops and PFC (edge vs internal `ii`), and
//! the training log's newest step. Numbers only, in their metric's unit; `ui/overview.rs`
//! writes them.
//!
//! ```text
//! Switch NX_AI_Leaf1 ok  drops/s 0 (0 in 60 s, 0 since 12:00:00)  PFC/s edge 12 internal 3.4k  802.3x off
//! Training ubunturdma1:~/training.log  iteration 1234  loss 2.3127  step 156ms  all-reduce 45ms
//! ```

use crate::app::episodes::PfcPick;
use crate::metrics::names::*;
use crate::metrics::query;
use crate::metrics::store::{SeriesId, WindowsCache};
use crate::metrics::{Store, Ts};
use crate::parse::switch::{PortClass, port_class};
use std::collections::BTreeMap;

/// One switch's line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Switch {
    /// Queue and ingress drops per second (newest interval).
    pub drops: Option<f64>,
    /// Drops in the window ending at the view time, and since the baseline.
    pub drops_window: Option<u64>,
    pub drops_since_baseline: Option<u64>,
    /// PFC frames per second, rx + tx, on edge ports and on internal `ii` ports.
    pub pfc_edge: Option<f64>,
    pub pfc_ii: Option<f64>,
    /// 802.3x flow control as the switch reports it.
    pub flowcontrol: Option<bool>,
}

/// The line of switch `sw` at the store's newest data: drops over `[window_from, now]` and
/// since `baseline`, counted from the intervals kept in `w` (a frame decodes only new points;
/// the counts are the store's own, `metrics/store/windows.rs`).
pub fn switch(st: &Store, w: &mut WindowsCache, sw: &str, window_from: Ts, baseline: Ts) -> Switch {
    switch_in(st, w, &SwitchIds::of(st, sw), window_from, baseline)
}

/// The series a switch's line reads, selected by its labels: the same while the store's set of
/// series stays, so a frame after new data reads values without matching labels again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwitchIds {
    /// Queue drops, ingress drops.
    drops: [Vec<SeriesId>; 2],
    /// PFC rx then tx of the edge ports, and of the internal `ii` ports.
    pfc_edge: Vec<SeriesId>,
    pfc_ii: Vec<SeriesId>,
    flowcontrol: Vec<SeriesId>,
}

/// The series of PFC counter `name` among those `lbl` selects, each (switch, port) with the
/// series of its best pick only ([`PfcPick`]: a port's pauses counted once, never per class and
/// again as its total), and whether the port is internal (`ii`).
pub fn picked_pfc(st: &Store, name: &str, lbl: &[(&str, &str)]) -> Vec<(bool, Vec<SeriesId>)> {
    let mut by_port: BTreeMap<(&str, &str), (PfcPick, Vec<SeriesId>)> = BTreeMap::new();
    for (id, s) in st.select(name, lbl) {
        let switch = s.key.label("switch").unwrap_or("");
        let port = s.key.label("port").unwrap_or("");
        let pick = PfcPick::of(s.key.label("priority").unwrap_or(""));
        let e = by_port.entry((switch, port)).or_insert((pick, Vec::new()));
        if pick < e.0 {
            *e = (pick, Vec::new());
        }
        if pick == e.0 {
            e.1.push(id);
        }
    }
    (by_port.into_iter())
        .map(|((_, port), (_, ids))| (port_class(port) == PortClass::Internal, ids))
        .collect()
}

impl SwitchIds {
    pub fn of(st: &Store, sw: &str) -> SwitchIds {
        let lbl = [("switch", sw)];
        let ids = |n: &str| st.select(n, &lbl).map(|(id, _)| id).collect::<Vec<_>>();
        let (mut pfc_edge, mut pfc_ii) = (Vec::new(), Vec::new());
        for n in [SW_PFC_RX, SW_PFC_TX] {
            for (internal, ids) in picked_pfc(st, n, &lbl) {
                if internal { &mut pfc_ii } else { &mut pfc_edge }.extend(ids);
            }
        }
        SwitchIds {
            drops: [ids(SW_QUEUE_DROPPED), ids(SW_INGRESS_DROPPED)],
            pfc_edge,
            pfc_ii,
            flowcontrol: ids(SW_FLOWCONTROL_ENABLED),
        }
    }
}

/// [`switch`] over the series `ids` selected for it.
pub fn switch_in(
    st: &Store,
    w: &mut WindowsCache,
    ids: &SwitchIds,
    window_from: Ts,
    baseline: Ts,
) -> Switch {
    let [a, b] = ids
        .drops
        .each_ref()
        .map(|d| query::increases_of_in(st, w, d, [window_from, baseline]));
    let drops_window = sum([a[0], b[0]]);
    let drops_since_baseline = sum([a[1], b[1]]);
    let [pfc_edge, pfc_ii] = [&ids.pfc_edge, &ids.pfc_ii].map(|ids| query::rate_of(st, ids).rate);
    Switch {
        drops: sum(ids.drops.each_ref().map(|d| query::rate_of(st, d).rate)),
        drops_window,
        drops_since_baseline,
        pfc_edge,
        pfc_ii,
        // On if any port has it on.
        flowcontrol: query::latest_of(st, &ids.flowcontrol).map(|v| v > 0.5),
    }
}

/// The newest values the training log gave, in their metric's unit (seconds for times).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Training {
    pub iteration: Option<f64>,
    pub loss: Option<f64>,
    pub step: Option<f64>,
    pub allreduce: Option<f64>,
    pub samples_per_second: Option<f64>,
}

/// The training line of the log on `node` (any node's where `None`).
pub fn training(st: &Store, node: Option<&str>) -> Training {
    let lbl: Vec<(&str, &str)> = node.map(|n| vec![("node", n)]).unwrap_or_default();
    let g = |n: &str| query::latest(st, n, &lbl).map(|(_, v)| v.as_f64());
    Training {
        iteration: g(TRAIN_ITERATION),
        loss: g(TRAIN_LOSS),
        step: g(TRAIN_STEP_SECONDS),
        allreduce: g(TRAIN_ALLREDUCE_SECONDS),
        samples_per_second: g(TRAIN_SAMPLES_PER_SECOND),
    }
}

/// The log's loss, step time and all-reduce time (seconds) per column of `step_ms` from `since`:
/// the log prints every few seconds, so a sample holds until the next (a longer gap: none came).
pub fn training_timelines(
    st: &Store,
    node: Option<&str>,
    since: Ts,
    step_ms: i64,
    width: usize,
) -> [Vec<Option<f64>>; 3] {
    let lbl: Vec<(&str, &str)> = node.map(|n| vec![("node", n)]).unwrap_or_default();
    [TRAIN_LOSS, TRAIN_STEP_SECONDS, TRAIN_ALLREDUCE_SECONDS].map(|name| {
        crate::app::table::hold_gaps(query::gauge_timeline(st, name, &lbl, since, step_ms, width))
    })
}

/// A sum that is missing only where every part is.
fn sum<T: std::ops::Add<Output = T>, const N: usize>(parts: [Option<T>; N]) -> Option<T> {
    parts.into_iter().flatten().reduce(|a, b| a + b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    /// What a switch injected (drops on one port, PFC on an edge and an `ii` port) comes back
    /// per second and per window; a switch that reports no drop counter has none (missing, not 0).
    #[test]
    fn switch_lines_hold_what_was_injected() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("sw", 1000);
        let t0 = 1_000_000;
        for k in 0..=10u64 {
            fn port(p: &str) -> [(&str, &str); 2] {
                [("switch", "a"), ("port", p)]
            }
            fn b(p: &str) -> [(&str, &str); 2] {
                [("switch", "b"), ("port", p)]
            }
            let samples = vec![
                Sample::counter(SW_PFC_RX, &port("Ethernet1/1"), 100 * k),
                Sample::counter(SW_PFC_TX, &port("Ethernet1/1"), 20 * k),
                Sample::counter(SW_PFC_RX, &port("ii1/1/1"), 7 * k),
                Sample::counter(SW_QUEUE_DROPPED, &port("Ethernet1/1"), 3 * k),
                Sample::counter(SW_INGRESS_DROPPED, &port("Ethernet1/1"), k),
                Sample::gauge(SW_FLOWCONTROL_ENABLED, &port("Ethernet1/1"), 0.0),
                Sample::gauge(SW_FLOWCONTROL_ENABLED, &b("Ethernet1/8"), 0.0),
                Sample::gauge(SW_FLOWCONTROL_ENABLED, &b("Ethernet1/9"), 1.0),
                Sample::counter(
                    SW_PFC_RX,
                    &[("switch", "b"), ("port", "Ethernet1/9")],
                    5 * k,
                ),
            ];
            let at = t0 + k as i64 * 1000;
            st.ingest(src, at, &Parsed::from(samples));
        }
        let mut w = WindowsCache::default();
        let a = switch(&st, &mut w, "a", t0 + 5_000, t0);
        assert_eq!(a.drops, Some(4.0));
        assert_eq!(a.drops_window, Some(4 * 5));
        assert_eq!(a.drops_since_baseline, Some(4 * 10));
        assert_eq!(a.pfc_edge, Some(120.0));
        assert_eq!(a.pfc_ii, Some(7.0));
        assert_eq!(a.flowcontrol, Some(false));
        let b = switch(&st, &mut w, "b", t0 + 5_000, t0);
        assert_eq!((b.pfc_edge, b.pfc_ii), (Some(5.0), None));
        assert_eq!((b.drops, b.drops_window), (None, None));
        assert_eq!(b.flowcontrol, Some(true), "on at one port of two");
        assert_eq!(training(&st, Some("n1")), Training::default());
    }

    /// A switch's line from series selected once equals the line selected anew, after new
    /// points and for every switch, while the set of series stays (`App::switch_summary`
    /// selects again when it changes).
    #[test]
    fn kept_series_give_the_line_selected_anew() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("sw", 1000);
        let t0 = 1_000_000;
        let mut kept: Vec<SwitchIds> = Vec::new();
        let mut ingested = 0;
        for k in 0..=12u64 {
            let mut samples = Vec::new();
            for sw in ["a", "b"] {
                for (i, p) in ["Ethernet1/1", "ii1/1/1", "Ethernet1/9"].iter().enumerate() {
                    let l = [("switch", sw), ("port", *p)];
                    let i = i as u64 + 1;
                    samples.push(Sample::counter(SW_PFC_RX, &l, 100 * k * i));
                    samples.push(Sample::counter(SW_PFC_TX, &l, 3 * k * k * i));
                    samples.push(Sample::counter(SW_QUEUE_DROPPED, &l, k / 3 * i));
                    samples.push(Sample::counter(SW_INGRESS_DROPPED, &l, k * i));
                    let on = if k > 6 && i == 2 { 1.0 } else { 0.0 };
                    samples.push(Sample::gauge(SW_FLOWCONTROL_ENABLED, &l, on));
                }
            }
            let at = t0 + k as i64 * 1000;
            st.ingest(src, at, &Parsed::from(samples));
            ingested += 1;
            if kept.is_empty() {
                kept = ["a", "b", "c"].map(|sw| SwitchIds::of(&st, sw)).to_vec();
                continue;
            }
            let (mut w1, mut w2) = (WindowsCache::default(), WindowsCache::default());
            for (sw, ids) in ["a", "b", "c"].iter().zip(&kept) {
                for (from, base) in [(at - 5_000, t0), (at, at), (t0 - 1, t0 + 2_000)] {
                    assert_eq!(
                        switch_in(&st, &mut w1, ids, from, base),
                        switch(&st, &mut w2, sw, from, base),
                        "switch {sw} after {ingested} polls"
                    );
                }
            }
        }
    }
}
