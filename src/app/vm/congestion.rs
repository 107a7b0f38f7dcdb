//! ECN/CNP: one row per node and RDMA device, the mlx5 hw_counters of the congestion loop and its
//! errors.

use super::{Ctx, by_first};
use crate::app::alerts::{Subject, WINDOW_MS};
use crate::app::table::{
    Cell, CellsIn, Chart, Col, LayoutAt, Row, RowId, TabView, Tone, Val, col, lcol,
};
use crate::metrics::human;
use crate::metrics::names::rdma_counter;
use crate::metrics::query::{self, Agg};
use crate::metrics::store::{SeriesId, SourceId};
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

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

/// One device's row as the set of series makes it.
struct DevRow {
    device: String,
    ecn: Vec<SeriesId>,
    cnp: Vec<SeriesId>,
    hdl: Vec<SeriesId>,
    ign: Vec<SeriesId>,
    errs: [Vec<SeriesId>; 3],
    id: RowId,
    name: String,
    charts: Rc<[Chart]>,
}

/// A node rows are made for ([`Ctx::layout`]).
struct NodeDevices {
    name: String,
    /// Its source's id in the store ([`Ctx::source_id`]).
    source: Option<SourceId>,
    /// What its alerts are on.
    subject: Subject,
    devices: Vec<DevRow>,
}

type Layout = Vec<NodeDevices>;

fn layout(cx: &Ctx) -> Layout {
    let st = cx.store;
    let n = rdma_counter;
    let (ecn_n, cnp_n, hdl_n) = (
        n("np_ecn_marked_roce_packets"),
        n("np_cnp_sent"),
        n("rp_cnp_handled"),
    );
    let oos_n = n("out_of_sequence");
    let ecn = query::groups(st, &ecn_n, &[], &G);
    let cnp = query::groups(st, &cnp_n, &[], &G);
    let hdl = query::groups(st, &hdl_n, &[], &G);
    let ign = query::groups(st, &n("rp_cnp_ignored"), &[], &G);
    let errs = ERRORS.map(|c| query::groups(st, &n(c), &[], &G));
    let keys: BTreeSet<&Vec<String>> = ecn.keys().chain(cnp.keys()).chain(hdl.keys()).collect();
    let grouped = by_first(keys.iter().copied());
    let ids = |m: &BTreeMap<Vec<String>, Vec<SeriesId>>, k: &Vec<String>| {
        m.get(k).cloned().unwrap_or_default()
    };
    let mut out = Vec::new();
    for node in cx.nodes() {
        let name = node.name.as_str();
        let mut rows = Vec::new();
        for k in grouped.get(name).into_iter().flatten() {
            let dev = k.get(1).map(String::as_str).unwrap_or("");
            let lbl = [("node", name), ("device", dev)];
            rows.push(DevRow {
                device: dev.into(),
                ecn: ids(&ecn, k),
                cnp: ids(&cnp, k),
                hdl: ids(&hdl, k),
                ign: ids(&ign, k),
                errs: [ids(&errs[0], k), ids(&errs[1], k), ids(&errs[2], k)],
                id: RowId::Device {
                    node: name.into(),
                    device: dev.into(),
                },
                name: format!("{name} {dev}"),
                charts: Rc::from(vec![
                    Chart::rate("ECN marked/s (np_ecn_marked_roce_packets)", &ecn_n, &lbl),
                    Chart::rate("CNP sent/s (np_cnp_sent)", &cnp_n, &lbl),
                    Chart::rate("CNP handled/s (rp_cnp_handled)", &hdl_n, &lbl),
                    Chart::rate("out_of_sequence/s", &oos_n, &lbl),
                ]),
            });
        }
        out.push(NodeDevices {
            subject: Subject::Node(node.name.clone()),
            source: cx.source_id(&node.source),
            name: node.name,
            devices: rows,
        });
    }
    out
}

/// What a device's row is ordered by (and shows): its error counters' growth in the last
/// minute and its ECN rate.
struct Head {
    ecn: Option<Agg>,
    /// Per error counter, how much it grew in the last minute.
    growing: [u64; 3],
}

impl Head {
    fn of(cx: &Ctx, d: &DevRow) -> Head {
        let last_min = cx.now - WINDOW_MS;
        Head {
            ecn: query::rate_if_any(cx.store, &d.ecn),
            growing: d
                .errs
                .each_ref()
                .map(|ids| cx.increase_of(ids, last_min).unwrap_or(0)),
        }
    }
}

fn per_sec(a: Option<Agg>) -> Option<f64> {
    a.and_then(|a| a.rate)
}

pub fn view(cx: &Ctx) -> TabView {
    let lay = cx.layout(|| layout(cx));
    let mut rows = Vec::with_capacity(lay.iter().map(|n| n.devices.len().max(1)).sum());
    for (g, n) in lay.iter().enumerate() {
        let (name, source, mine) = (&n.name, &n.source, &n.devices);
        let state = cx.src_of(*source);
        if let Some(r) = state.source_row(name, !mine.is_empty(), "hw_counters") {
            rows.push(r);
            continue;
        }
        for (ix, d) in mine.iter().enumerate() {
            let h = Head::of(cx, d);
            let bad: u64 = h.growing.iter().sum();
            let mut row = cx.pending(
                false,
                &d.id,
                &d.name,
                &d.charts,
                LayoutAt { group: g, item: ix },
            );
            row.tone = state.row_tone();
            row.score = bad as f64 * 1e6 + per_sec(h.ecn).unwrap_or(0.0);
            rows.push(row);
        }
    }
    cx.arrange_pending(false, &mut rows, |todo| fill(cx, todo));
    TabView {
        cols: &COLS,
        rows,
        ..Default::default()
    }
}

/// The cells of device rows made pending by [`view`].
pub fn fill(cx: &Ctx, rows: &mut dyn Iterator<Item = &mut Row>) {
    let last_min = cx.now - WINDOW_MS;
    let lay = cx.layout(|| layout(cx));
    for row in rows {
        let Some(LayoutAt { group: g, item: ix }) = row.pending.take() else {
            continue;
        };
        let NodeDevices {
            name,
            subject,
            devices: mine,
            ..
        } = &lay[g];
        let d = &mine[ix];
        let h = Head::of(cx, d);
        let sev = cx.alerts.worst_for(subject);
        let (cnp, ign) = (
            query::rate_if_any(cx.store, &d.cnp),
            query::rate_if_any(cx.store, &d.ign),
        );
        let ratio = match (per_sec(cnp), per_sec(h.ecn)) {
            (Some(c), Some(e)) if e > 0.0 => Some(c / e),
            _ => None,
        };
        let mut c = CellsIn::new(&mut row.cells);
        c.text(name, Some(Tone::of(sev)));
        c.text(&d.device, None);
        c.push(Cell::new(Val::Sparse(
            h.ecn,
            cx.increase_of(&d.ecn, last_min),
        )));
        c.push(Cell::new(Val::Sparse(
            cnp,
            cx.increase_of(&d.cnp, last_min),
        )));
        c.push(Cell::new(Val::Rate(query::rate_if_any(cx.store, &d.hdl))));
        c.push(Cell::warn_if(
            Val::Rate(ign),
            per_sec(ign).is_some_and(|v| v > 0.0),
            Tone::Warn,
        ));
        c.push(Cell::new(Val::Num(ratio)));
        for (ids, growing) in d.errs.iter().zip(h.growing) {
            c.push(Cell::warn_if(
                Val::Count(cx.increase_of(ids, cx.base)),
                growing > 0,
                Tone::Warn,
            ));
        }
    }
}
