//! Overview: one row per node (the congestion loop's rates, host pause, RTT, its state).

use super::{Ctx, sev_rank};
use crate::app::alerts::{Severity, Subject, WINDOW_MS};
use crate::app::table::{Cell, Chart, Col, Row, RowId, SrcState, TabView, Tone, Val, col, lcol};
use crate::metrics::names::*;
use crate::metrics::query;
use crate::metrics::{Store, by_label, human};
use std::collections::BTreeMap;

/// The node and its state (alerts, down, stale) name where to look: never hidden.
pub const COLS: [Col; 10] = [
    lcol("node", 13, 0),
    lcol("state", 9, 0),
    lcol("port", 8, 3),
    col("ECN marked/s(60s)", 17, 1),
    col("CNP sent/s(60s)", 15, 2),
    col(human::name::CNP_HANDLED, 13, 3),
    col(human::name::NIC_PAUSE_RX, 10, 2),
    col(human::name::PAUSE_TIME, 6, 1),
    col("RTT p50", 8, 3),
    col("RTT p99", 8, 2),
];

pub fn view(cx: &Ctx) -> TabView {
    TabView {
        cols: &COLS,
        rows: node_rows(cx),
        ..Default::default()
    }
}

fn state_cell(state: &SrcState, sev: Option<Severity>) -> Cell {
    if let Some(s) = sev.filter(|_| *state == SrcState::Up) {
        let word = if s == Severity::Crit {
            "!! alert"
        } else {
            "! alert"
        };
        return Cell::tone(word, Tone::of(Some(s)));
    }
    let tone = match state {
        SrcState::Up => Tone::Ok,
        SrcState::Stale(_) => Tone::Stale,
        SrcState::Down(..) => Tone::Crit,
        _ => Tone::Dim,
    };
    Cell::tone(state.word(), tone)
}

/// One row per node, sorted and filtered.
fn node_rows(cx: &Ctx) -> Vec<Row> {
    let st = cx.store;
    let last_min = cx.now - WINDOW_MS;
    let ecn_name = rdma_counter("np_ecn_marked_roce_packets");
    let cnp_name = rdma_counter("np_cnp_sent");
    let hdl_name = rdma_counter("rp_cnp_handled");
    // Each answer is keyed by the node name as the store holds it: one hash lookup per cell.
    let ecn = by_label::rate(st, &ecn_name, "node");
    let ecn60 = cx.increase_by_node(&ecn_name, last_min);
    let cnp = by_label::rate(st, &cnp_name, "node");
    let cnp60 = cx.increase_by_node(&cnp_name, last_min);
    let hdl = by_label::rate(st, &hdl_name, "node");
    let pause = by_label::rate(st, NIC_PFC_RX_PAUSE, "node");
    let mut pfrac = by_label::pause_fraction_max(st, NIC_PFC_RX_PAUSE_DURATION, "node");
    for (k, v) in by_label::pause_fraction_max(st, NIC_PFC_TX_PAUSE_DURATION, "node") {
        let e = pfrac.entry(k).or_insert(v);
        *e = e.max(v);
    }
    let rtt = rtt_by_peer(st);
    let warn_pct = cx.cfg.alerts.pause_time_percent;
    let nodes = cx.nodes();
    let mut rows: Vec<Row> = Vec::with_capacity(nodes.len());
    for n in &nodes {
        let name = n.name.as_str();
        let state = cx.src(&n.source);
        let sev = cx.alerts.worst_for(&Subject::Node(name.into())).max(
            cx.alerts
                .worst_for(&Subject::Source(n.source.as_str().into())),
        );
        let port = n
            .switch_port
            .as_deref()
            .map(short_port)
            .unwrap_or_else(|| "-".into());
        let pf = pfrac.get(name).copied();
        let (p50, p99) = rtt.get(name).copied().unwrap_or((None, None));
        let cells = vec![
            Cell::new(name),
            state_cell(&state, sev),
            Cell::new(port),
            Cell::new(Val::Sparse(
                ecn.get(name).cloned(),
                ecn60.get(name).copied(),
            )),
            Cell::new(Val::Sparse(
                cnp.get(name).cloned(),
                cnp60.get(name).copied(),
            )),
            Cell::new(Val::Rate(hdl.get(name).cloned())),
            Cell::new(Val::Rate(pause.get(name).cloned())),
            Cell::warn_if(
                Val::Percent(pf),
                pf.is_some_and(|p| p * 100.0 > warn_pct),
                Tone::Warn,
            ),
            Cell::new(Val::Secs(p50)),
            Cell::new(Val::Secs(p99)),
        ];
        let score = sev_rank(sev) * 1e9
            + pf.unwrap_or(0.0) * 1e6
            + ecn.get(name).and_then(|a| a.rate).unwrap_or(0.0);
        let node = [("node", name)];
        rows.push(Row {
            notes: Vec::new(),
            id: RowId::Node(name.into()),
            name: name.to_string(),
            cells,
            tone: state.row_tone(),
            score,
            span: state.span(name).map(|c| (2, c)),
            charts: vec![
                Chart::rate(human::name::ECN_MARKED, &ecn_name, &node),
                Chart::rate(human::name::CNP_SENT, &cnp_name, &node),
                Chart::rate(human::name::CNP_HANDLED, &hdl_name, &node),
                Chart::rate(human::name::NIC_PAUSE_RX, NIC_PFC_RX_PAUSE, &node),
                Chart::rate(
                    "time paused rx (fraction of each second, 0..1)",
                    NIC_PFC_RX_PAUSE_DURATION,
                    &node,
                ),
            ],
        });
    }
    cx.arrange(&mut rows);
    rows
}

/// `Ethernet1/2/2` → `Eth1/2/2` (the port column is narrow).
fn short_port(p: &str) -> String {
    p.split(',')
        .map(|p| {
            p.strip_prefix("Ethernet")
                .map_or_else(|| p.to_string(), |r| format!("Eth{r}"))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// RTT p50/p99 per peer (verbs preferred over TCP).
pub fn rtt_by_peer(st: &Store) -> BTreeMap<String, (Option<f64>, Option<f64>)> {
    let q = query::latest_by(
        st,
        PING_RTT_SECONDS,
        &[],
        &["peer", "transport", "quantile"],
    );
    let mut out: BTreeMap<String, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for tr in ["tcp", "rdma"] {
        for (k, v) in &q {
            let [peer, t, qt] = k.as_slice() else {
                continue;
            };
            if t != tr {
                continue;
            }
            let e = out.entry(peer.clone()).or_default();
            match qt.as_str() {
                "0.5" => e.0 = Some(*v),
                "0.99" => e.1 = Some(*v),
                _ => {}
            }
        }
    }
    out
}
