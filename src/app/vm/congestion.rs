//! ECN/CNP: one row per node and RDMA device, the mlx5 hw_counters of the congestion loop and its
//! errors.

use super::{Ctx, by_first};
use crate::app::alerts::{Subject, WINDOW_MS};
use crate::app::table::{Cell, Chart, Col, Row, RowId, TabView, Tone, Val, col, lcol};
use crate::metrics::human;
use crate::metrics::names::rdma_counter;
use crate::metrics::query::{self, Agg};
use std::collections::{BTreeMap, BTreeSet};

/// The error counters tell a lossy fabric: never hidden.
pub const COLS: [Col; 10] = [
    lcol("node", 13, 0),
    lcol("device", 12, 0),
    col(human::name::ECN_MARKED, 12, 1),
    col("CNP sent/s(60s)", 15, 1),
    col(human::name::CNP_HANDLED, 13, 2),
    col(human::name::CNP_IGNORED, 13, 2),
    col("CNP/ECN", 7, 3),
    col("out_of_seq", 10, 0),
    col("seq_err", 8, 0),
    col("ack_tmo", 8, 0),
];

const G: [&str; 2] = ["node", "device"];
const ERRORS: [&str; 3] = ["out_of_sequence", "packet_seq_err", "local_ack_timeout_err"];

pub fn view(cx: &Ctx) -> TabView {
    let st = cx.store;
    let last_min = cx.now - WINDOW_MS;
    let n = rdma_counter;
    let (ecn_n, cnp_n, hdl_n) = (
        n("np_ecn_marked_roce_packets"),
        n("np_cnp_sent"),
        n("rp_cnp_handled"),
    );
    let oos_n = n("out_of_sequence");
    let ecn = query::rate_by(st, &ecn_n, &[], &G);
    let ecn60 = cx.increase_by(&ecn_n, &[], &G, last_min);
    let cnp = query::rate_by(st, &cnp_n, &[], &G);
    let cnp60 = cx.increase_by(&cnp_n, &[], &G, last_min);
    let hdl = query::rate_by(st, &hdl_n, &[], &G);
    let ign = query::rate_by(st, &n("rp_cnp_ignored"), &[], &G);
    let errs: Vec<_> = ERRORS
        .iter()
        .map(|c| {
            (
                cx.increase_by(&n(c), &[], &G, cx.base),
                cx.increase_by(&n(c), &[], &G, last_min),
            )
        })
        .collect();
    let keys: BTreeSet<&Vec<String>> = ecn.keys().chain(cnp.keys()).chain(hdl.keys()).collect();
    let grouped = by_first(keys.iter().copied());
    let mut rows = Vec::new();
    for node in &cx.nodes() {
        let name = node.name.as_str();
        let state = cx.src(&node.source);
        let mine: Vec<&Vec<String>> = grouped.get(name).cloned().unwrap_or_default();
        if let Some(r) = state.source_row(name, !mine.is_empty(), "hw_counters") {
            rows.push(r);
            continue;
        }
        let sev = cx.alerts.worst_for(&Subject::Node(name.into()));
        for k in &mine {
            let dev = k.get(1).map(String::as_str).unwrap_or("");
            let r = |m: &BTreeMap<Vec<String>, Agg>| m.get(*k).and_then(|a| a.rate);
            let ratio = match (r(&cnp), r(&ecn)) {
                (Some(c), Some(e)) if e > 0.0 => Some(c / e),
                _ => None,
            };
            let mut cells = vec![
                Cell::tone(name, Tone::of(sev)),
                Cell::new(dev),
                Cell::new(Val::Sparse(ecn.get(*k).cloned(), ecn60.get(*k).copied())),
                Cell::new(Val::Sparse(cnp.get(*k).cloned(), cnp60.get(*k).copied())),
                Cell::new(Val::Rate(hdl.get(*k).cloned())),
                Cell::warn_if(
                    Val::Rate(ign.get(*k).cloned()),
                    r(&ign).is_some_and(|v| v > 0.0),
                    Tone::Warn,
                ),
                Cell::new(Val::Num(ratio)),
            ];
            let mut bad = 0u64;
            for (total, last) in &errs {
                let growing = last.get(*k).copied().unwrap_or(0);
                bad += growing;
                cells.push(Cell::warn_if(
                    Val::Count(total.get(*k).copied()),
                    growing > 0,
                    Tone::Warn,
                ));
            }
            let lbl = [("node", name), ("device", dev)];
            rows.push(Row {
                notes: Vec::new(),
                id: RowId::Device {
                    node: name.into(),
                    device: dev.into(),
                },
                name: format!("{name} {dev}"),
                cells,
                tone: state.row_tone(),
                score: bad as f64 * 1e6 + r(&ecn).unwrap_or(0.0),
                span: None,
                charts: vec![
                    Chart::rate("ECN marked/s (np_ecn_marked_roce_packets)", &ecn_n, &lbl),
                    Chart::rate("CNP sent/s (np_cnp_sent)", &cnp_n, &lbl),
                    Chart::rate("CNP handled/s (rp_cnp_handled)", &hdl_n, &lbl),
                    Chart::rate("out_of_sequence/s", &oos_n, &lbl),
                ],
            });
        }
    }
    cx.arrange(&mut rows);
    TabView {
        cols: &COLS,
        rows,
        ..Default::default()
    }
}
