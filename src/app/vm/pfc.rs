//! PFC: switch ports (RxPPP/TxPPP per second, the last 60 s, totals, PFC oper state, 802.3x) and
//! the hosts' NIC pause counters (`ethtool -S`). Both are selectable: the selection walks the port
//! rows, then the host rows (`TabView::get`), each with its lossless findings in its detail view.

use super::{Ctx, by_first, sev_rank};
use crate::app::alerts::{ROCE_PRIORITY, Subject, WINDOW_MS};
use crate::app::table::{
    Cell, Chart, Col, Row, RowId, SrcState, TabView, Tone, Val, age_text, col, lcol, short_names,
};
use crate::metrics::names::*;
use crate::metrics::query::{self, Agg};
use crate::metrics::{Store, Ts};
use std::collections::{BTreeMap, BTreeSet};

/// PFC p3 and 802.3x name the misconfigured port: never hidden. "60s" (frames in the last
/// minute, rx + tx) keeps a storm that just ended on top when sorted by it.
pub const SW_COLS: [Col; 11] = [
    lcol("port", 14, 0),
    lcol("class", 5, 3),
    lcol("nodes behind", 16, 1),
    col("RxPPP/s", 9, 1),
    col("TxPPP/s", 9, 1),
    col("PPP 60s", 9, 2),
    col("RxPPP tot", 9, 3),
    col("TxPPP tot", 9, 3),
    lcol("PFC p3", 6, 0),
    lcol("802.3x rx/tx", 12, 0),
    col("link pause/s", 12, 2),
];

pub const HOST_COLS: [Col; 9] = [
    // Identity columns never hide: a node's two NICs differ by netdev, and its priority-3 PFC row
    // and global (802.3x) row differ only by prio (rows looked duplicated at 80 columns).
    lcol("node", 13, 0),
    lcol("netdev", 8, 0),
    lcol("prio", 6, 0),
    col("rx pause/s", 10, 1),
    col("tx pause/s", 10, 2),
    col("pause%", 7, 0),
    col("rx pause total", 14, 3),
    col("storm events", 12, 1),
    col("rx_discards_phy", 15, 2),
];

type Port = Vec<String>;

/// Per-port PFC rate: the port total (`priority="all"`) where reported, else the priorities summed.
fn per_port(st: &Store, name: &str) -> BTreeMap<Port, Agg> {
    let mut all: BTreeMap<Port, Agg> = BTreeMap::new();
    let mut prios: BTreeMap<Port, Agg> = BTreeMap::new();
    for (k, a) in query::rate_by(st, name, &[], &["switch", "port", "priority"]) {
        let port = k[..2.min(k.len())].to_vec();
        let slot = if k.get(2).is_some_and(|p| p == "all") {
            all.entry(port).or_default()
        } else {
            prios.entry(port).or_default()
        };
        if let Some(r) = a.rate {
            *slot.rate.get_or_insert(0.0) += r;
        }
        slot.reset |= a.reset;
    }
    for (k, a) in prios {
        all.entry(k).or_insert(a);
    }
    all
}

/// Per-port increase since `since`, the port total where reported, else the priorities summed.
fn totals(cx: &Ctx, name: &str, since: Ts) -> BTreeMap<Port, u64> {
    let mut all: BTreeMap<Port, u64> = BTreeMap::new();
    let mut prios: BTreeMap<Port, u64> = BTreeMap::new();
    for (k, v) in cx.increase_by(name, &[], &["switch", "port", "priority"], since) {
        let port = k[..2.min(k.len())].to_vec();
        let m = if k.get(2).is_some_and(|p| p == "all") {
            &mut all
        } else {
            &mut prios
        };
        *m.entry(port).or_default() += v;
    }
    for (k, v) in prios {
        all.entry(k).or_insert(v);
    }
    all
}

fn on_off(v: Option<&f64>) -> &'static str {
    match v {
        None => "-",
        Some(v) if *v > 0.5 => "on",
        Some(_) => "off",
    }
}

pub fn view(cx: &Ctx) -> TabView {
    let (rows, notes) = port_rows(cx);
    TabView {
        cols: &SW_COLS,
        rows,
        extra_cols: &HOST_COLS,
        extra: host_rows(cx),
        notes,
    }
}

fn port_rows(cx: &Ctx) -> (Vec<Row>, Vec<String>) {
    let st = cx.store;
    let rx = per_port(st, SW_PFC_RX);
    let tx = per_port(st, SW_PFC_TX);
    let rxt = totals(cx, SW_PFC_RX, cx.base);
    let txt = totals(cx, SW_PFC_TX, cx.base);
    let rx60 = totals(cx, SW_PFC_RX, cx.now - WINDOW_MS);
    let tx60 = totals(cx, SW_PFC_TX, cx.now - WINDOW_MS);
    let pfc_on = query::latest_by(
        st,
        SW_PFC_ENABLED,
        &[("priority", ROCE_PRIORITY)],
        &["switch", "port"],
    );
    let fc = query::latest_by(
        st,
        SW_FLOWCONTROL_ENABLED,
        &[],
        &["switch", "port", "direction"],
    );
    let lp = query::rate_by(st, SW_LINK_PAUSE_RX, &[], &["switch", "port"]);
    let keys: BTreeSet<&Port> = rx.keys().chain(tx.keys()).chain(pfc_on.keys()).collect();
    let grouped = by_first(keys.iter().copied());
    let limit = cx.cfg.alerts.port_pfc_per_second;
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for sw in &cx.cfg.switches {
        let name = sw.name.as_str();
        let state = cx.src(name);
        let mine: Vec<&Vec<String>> = grouped.get(name).cloned().unwrap_or_default();
        if let Some(r) = state.source_row(name, !mine.is_empty(), "PFC counters") {
            rows.push(r);
            continue;
        }
        if let SrcState::Stale(ms) = state {
            notes.push(format!("{name} stale {}", age_text(ms)));
        }
        for k in &mine {
            let port = k.get(1).map(String::as_str).unwrap_or("");
            let behind: Vec<&str> = cx.links.behind(name, port);
            // The lossless path proven wrong through this port: marked on its PFC cell, said in
            // its detail view.
            let wrong: Vec<String> = cx
                .lossless
                .at_port(name, port)
                .map(|f| format!("{}: {}", f.link, f.text()))
                .collect();
            let sev = cx.alerts.worst_for(&Subject::Port {
                switch: name.into(),
                port: port.into(),
            });
            let fck = |d: &str| fc.get(&vec![name.to_string(), port.to_string(), d.to_string()]);
            let fc_txt = format!("{}/{}", on_off(fck("rx")), on_off(fck("tx")));
            let fc_bad = cx.cfg.alerts.flowcontrol.as_deref().is_some_and(|want| {
                !port.starts_with("ii")
                    && [fck("rx"), fck("tx")]
                        .iter()
                        .flatten()
                        .any(|v| on_off(Some(v)) != want)
            });
            let p3 = on_off(pfc_on.get(*k));
            let rate = |m: &BTreeMap<Port, Agg>| m.get(*k).and_then(|a| a.rate).unwrap_or(0.0);
            let last60 = match (rx60.get(*k), tx60.get(*k)) {
                (None, None) => None,
                (a, b) => Some(a.copied().unwrap_or(0) + b.copied().unwrap_or(0)),
            };
            let cells = vec![
                Cell::tone(port, Tone::of(sev)),
                Cell::new(if port.starts_with("ii") { "ii" } else { "edge" }),
                Cell::new(short_names(&behind)),
                Cell::warn_if(
                    Val::Rate(rx.get(*k).cloned()),
                    rate(&rx) > limit,
                    Tone::Warn,
                ),
                Cell::warn_if(
                    Val::Rate(tx.get(*k).cloned()),
                    rate(&tx) > limit,
                    Tone::Warn,
                ),
                Cell::new(Val::Count(last60)),
                Cell::new(Val::Count(rxt.get(*k).copied())),
                Cell::new(Val::Count(txt.get(*k).copied())),
                marked(p3, &wrong, p3 == "off" && !behind.is_empty()),
                Cell::warn_if(fc_txt, fc_bad, Tone::Warn),
                Cell::new(Val::Rate(lp.get(*k).cloned())),
            ];
            let lbl = [("switch", name), ("port", port)];
            rows.push(Row {
                id: RowId::Port {
                    switch: name.into(),
                    port: port.into(),
                },
                name: format!("{port} {}", behind.join(" ")),
                cells,
                tone: state.row_tone(),
                score: sev_rank(sev) * 1e9 + rate(&rx) + rate(&tx),
                span: None,
                charts: vec![
                    Chart::rate("RxPPP frames/s", SW_PFC_RX, &lbl),
                    Chart::rate("TxPPP frames/s", SW_PFC_TX, &lbl),
                    Chart::rate("802.3x link pause rx/s", SW_LINK_PAUSE_RX, &lbl),
                ],
                notes: wrong,
            });
        }
    }
    let n = cx.lossless.findings.len();
    if n > 0 {
        let s = if n == 1 { "" } else { "es" };
        notes.push(format!("lossless path: {n} mismatch{s}, marked !"));
    }
    cx.arrange(&mut rows);
    (rows, notes)
}

/// A cell that carries the lossless-path marker: `on !` in the critical tone where a finding
/// bites the row, else the value warned as `warn` says.
fn marked(v: &str, wrong: &[String], warn: bool) -> Cell {
    if wrong.is_empty() {
        Cell::warn_if(v, warn, Tone::Warn)
    } else {
        Cell::tone(format!("{v} !"), Tone::Crit)
    }
}

fn host_rows(cx: &Ctx) -> Vec<Row> {
    const G: [&str; 3] = ["node", "netdev", "priority"];
    let st = cx.store;
    let rx = query::rate_by(st, NIC_PFC_RX_PAUSE, &[], &G);
    let tx = query::rate_by(st, NIC_PFC_TX_PAUSE, &[], &G);
    let rxt = cx.increase_by(NIC_PFC_RX_PAUSE, &[], &G, cx.base);
    let mut frac = query::pause_fraction_by(st, NIC_PFC_RX_PAUSE_DURATION, &[], &G);
    for (k, v) in query::pause_fraction_by(st, NIC_PFC_TX_PAUSE_DURATION, &[], &G) {
        let e = frac.entry(k).or_insert(v);
        *e = e.max(v);
    }
    let nd = ["node", "netdev"];
    let storms = cx.increase_by(
        &nic_counter("tx_pause_storm_warning_events"),
        &[],
        &nd,
        cx.base,
    );
    let discards = cx.increase_by(&nic_counter("rx_discards_phy"), &[], &nd, cx.base);
    let keys: BTreeSet<&Vec<String>> = rx.keys().chain(tx.keys()).collect();
    let grouped = by_first(keys.iter().copied());
    let warn_pct = cx.cfg.alerts.pause_time_percent;
    let mut rows = Vec::new();
    for n in &cx.nodes() {
        let name = n.name.as_str();
        let state = cx.src(&n.source);
        let mine: Vec<&Vec<String>> = grouped.get(name).cloned().unwrap_or_default();
        if let Some(r) = state.source_row(name, !mine.is_empty(), "pause counters") {
            rows.push(r);
            continue;
        }
        for k in &mine {
            let at = |i: usize| k.get(i).map(String::as_str).unwrap_or("");
            let nk = vec![name.to_string(), at(1).to_string()];
            let pf = frac.get(*k).copied();
            let storm = storms.get(&nk).copied();
            let wrong: Vec<String> = cx
                .lossless
                .at_netdev(name, at(1))
                .map(|f| format!("{}: {}", f.link, f.text()))
                .collect();
            let lbl = [("node", name), ("netdev", at(1)), ("priority", at(2))];
            let cells = vec![
                Cell::new(name),
                Cell::new(at(1)),
                marked(at(2), &wrong, false),
                Cell::new(Val::Rate(rx.get(*k).cloned())),
                Cell::new(Val::Rate(tx.get(*k).cloned())),
                Cell::warn_if(
                    Val::Percent(pf),
                    pf.is_some_and(|p| p * 100.0 > warn_pct),
                    Tone::Warn,
                ),
                Cell::new(Val::Count(rxt.get(*k).copied())),
                Cell::warn_if(Val::Count(storm), storm.unwrap_or(0) > 0, Tone::Warn),
                Cell::new(Val::Count(discards.get(&nk).copied())),
            ];
            rows.push(Row {
                id: RowId::Netdev {
                    node: name.into(),
                    netdev: at(1).into(),
                    priority: at(2).into(),
                },
                name: format!("{name} {}", at(1)),
                cells,
                tone: state.row_tone(),
                score: pf.unwrap_or(0.0) * 1e6 + rx.get(*k).and_then(|a| a.rate).unwrap_or(0.0),
                // Selectable like the port rows: the detail view shows its findings and pauses.
                charts: vec![
                    Chart::rate("rx pause frames/s", NIC_PFC_RX_PAUSE, &lbl),
                    Chart::rate("tx pause frames/s", NIC_PFC_TX_PAUSE, &lbl),
                ],
                notes: wrong,
                ..Default::default()
            });
        }
    }
    cx.arrange(&mut rows);
    rows
}
