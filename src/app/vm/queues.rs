//! Queues: one row per switch port × QoS group (or queue), with the nodes behind the port.

use super::{Ctx, by_first};
use crate::app::alerts::{Subject, WINDOW_MS};
use crate::app::table::{Cell, Chart, Col, Row, RowId, SrcState, TabView, Tone, Val, col, lcol};
use crate::metrics::names::*;
use crate::metrics::query::{self, Agg};
use std::collections::BTreeSet;

/// Ingress drops (MMU/overflow) name the culprit: never hidden.
pub const COLS: [Col; 10] = [
    lcol("port", 14, 0),
    lcol("nodes behind", 16, 1),
    lcol("QoS", 7, 0),
    col("Tx pkts/s", 10, 2),
    col("Tx Gb/s", 8, 3),
    col("ECN/s", 7, 2),
    col("Q drops/s(60s)", 14, 1),
    col("ingr drops/s", 12, 0),
    col("depth", 8, 3),
    col("drops total", 11, 2),
];

const G: [&str; 4] = ["switch", "port", "qos_group", "queue"];

pub fn view(cx: &Ctx) -> TabView {
    let st = cx.store;
    let last_min = cx.now - WINDOW_MS;
    let tx = query::rate_by(st, SW_QUEUE_TX_PACKETS, &[], &G);
    let txb = query::rate_by(st, SW_QUEUE_TX_BYTES, &[], &G);
    let ecn = query::rate_by(st, SW_QUEUE_ECN_MARKED, &[], &G);
    let drops = query::rate_by(st, SW_QUEUE_DROPPED, &[], &G);
    let d60 = cx.increase_by(SW_QUEUE_DROPPED, &[], &G, last_min);
    let dtot = cx.increase_by(SW_QUEUE_DROPPED, &[], &G, cx.base);
    let depth = query::latest_by(st, SW_QUEUE_DEPTH, &[], &G);
    let ingr = query::rate_by(st, SW_INGRESS_DROPPED, &[], &["switch", "port"]);
    let ingr60 = cx.increase_by(SW_INGRESS_DROPPED, &[], &["switch", "port"], last_min);
    let keys: BTreeSet<&Vec<String>> = tx.keys().chain(drops.keys()).chain(txb.keys()).collect();
    let grouped = by_first(keys.iter().copied());
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for sw in &cx.cfg.switches {
        let name = sw.name.as_str();
        let state = cx.src(name);
        let mine: Vec<&Vec<String>> = grouped.get(name).cloned().unwrap_or_default();
        if let Some(r) = state.source_row(name, !mine.is_empty(), "queue counters") {
            rows.push(r);
            continue;
        }
        if let SrcState::Stale(ms) = state {
            notes.push(format!("{name} stale {}", crate::app::table::age_text(ms)));
        }
        for k in &mine {
            let at = |i: usize| k.get(i).map(String::as_str).unwrap_or("");
            let (port, qos) = (at(1), if at(2).is_empty() { at(3) } else { at(2) });
            let pk = vec![name.to_string(), port.to_string()];
            let behind: Vec<&str> = cx.links.behind(name, port);
            let n60 = d60.get(*k).copied();
            let i60 = ingr60.get(&pk).copied();
            let sev = cx.alerts.worst_for(&Subject::Port {
                switch: name.into(),
                port: port.into(),
            });
            let gbps = txb.get(*k).map(|a| Agg {
                rate: a.rate.map(|r| r * 8.0 / 1e9),
                reset: a.reset,
            });
            let total = dtot.get(*k).copied();
            let cells = vec![
                Cell::tone(port, Tone::of(sev)),
                Cell::new(crate::app::table::short_names(&behind)),
                Cell::new(qos),
                Cell::new(Val::Rate(tx.get(*k).cloned())),
                Cell::new(Val::Rate(gbps)),
                Cell::new(Val::Rate(ecn.get(*k).cloned())),
                Cell::crit_if(
                    Val::Sparse(drops.get(*k).cloned(), n60),
                    n60.unwrap_or(0) > 0,
                ),
                Cell::crit_if(
                    Val::Sparse(ingr.get(&pk).cloned(), i60),
                    i60.unwrap_or(0) > 0,
                ),
                Cell::new(Val::Num(depth.get(*k).copied())),
                Cell::crit_if(Val::Count(total), total.unwrap_or(0) > 0),
            ];
            let score = (n60.unwrap_or(0) + i60.unwrap_or(0)) as f64 * 1e9
                + tx.get(*k).and_then(|a| a.rate).unwrap_or(0.0);
            let mut lbl: Vec<(&'static str, &str)> = vec![("switch", name), ("port", port)];
            if !at(2).is_empty() {
                lbl.push(("qos_group", at(2)));
            } else if !at(3).is_empty() {
                lbl.push(("queue", at(3)));
            }
            rows.push(Row {
                notes: Vec::new(),
                id: RowId::Queue {
                    switch: name.into(),
                    port: port.into(),
                    queue: qos.into(),
                },
                name: format!("{port} {qos} {}", behind.join(" ")),
                cells,
                tone: state.row_tone(),
                score,
                span: None,
                charts: vec![
                    Chart::rate("Tx packets/s", SW_QUEUE_TX_PACKETS, &lbl),
                    Chart::rate("queue drops/s", SW_QUEUE_DROPPED, &lbl),
                    Chart::rate("ingress drops/s (port)", SW_INGRESS_DROPPED, &lbl[..2]),
                ],
            });
        }
    }
    cx.arrange(&mut rows);
    TabView {
        cols: &COLS,
        rows,
        notes,
        ..Default::default()
    }
}
