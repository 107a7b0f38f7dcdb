//! Queues: switch port × QoS group, with the nodes cabled behind each port (config port map).
//!
//! ```text
//! Switch queues: port x QoS group    totals since 12:00:00 (start)
//! port           nodes behind     QoS      Tx pkts/s  Tx Gb/s  ECN/s  Q drops/s(60s) ingr drops/s   depth  drops total
//! Ethernet1/1/2  ubunturdma6      3          120.5k     4.05      -         0 (0)          1.20       -           14
//! NX_AI_Leaf2 down: connection refused
//! ```

use super::fmt;
use super::grid::{self, Cell, Chart, Col, Row, col, lcol};
use super::{Detail, SrcState, src_state, title};
use crate::app::alerts::{Subject, WINDOW_MS};
use crate::app::{App, Tab};
use crate::metrics::names::*;
use crate::metrics::query::{self, Agg};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Paragraph;
use std::collections::BTreeSet;

const COLS: [Col; 10] = [
    lcol("port", 14),
    lcol("nodes behind", 16),
    lcol("QoS", 7),
    col("Tx pkts/s", 10),
    col("Tx Gb/s", 8),
    col("ECN/s", 7),
    col("Q drops/s(60s)", 14),
    col("ingr drops/s", 12),
    col("depth", 8),
    col("drops total", 11),
];

const G: [&str; 4] = ["switch", "port", "qos_group", "queue"];

pub fn draw(f: &mut Frame, area: Rect, app: &App) -> Detail {
    let v = app.view(Tab::Queues, (area.width, area.height), || compute(app));
    let (rows, notes) = (&v.0, &v.1);
    let base = app.baseline();
    let [t, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let since = if app.mark.is_some() { "mark" } else { "start" };
    let mut note = format!(
        "   totals since {} ({since}); (n) = drops in the last 60 s",
        fmt::clock(base)
    );
    if !notes.is_empty() {
        note = format!("   {}{note}", notes.join(", "));
    }
    f.render_widget(
        Paragraph::new(title(app, "Switch queues: port x QoS group".into(), note)),
        t,
    );
    let empty = if app.cfg.switches.is_empty() {
        "no [[switch]] in the config"
    } else {
        "no rows match the filter"
    };
    let sel = grid::draw(
        f,
        body,
        app,
        grid::Table {
            tab: Tab::Queues,
            cols: &COLS,
            rows,
            empty,
            selectable: true,
        },
    )?;
    rows.get(sel)
        .filter(|r| !r.charts.is_empty())
        .map(|r| (r.name.clone(), r.charts.clone()))
}

/// The rows (sorted and filtered) and the stale switches' notes.
fn compute(app: &App) -> (Vec<Row>, Vec<String>) {
    let st = &app.store;
    let now = app.view_now();
    let base = app.baseline();
    let tx = query::rate_by(st, SW_QUEUE_TX_PACKETS, &[], &G);
    let txb = query::rate_by(st, SW_QUEUE_TX_BYTES, &[], &G);
    let ecn = query::rate_by(st, SW_QUEUE_ECN_MARKED, &[], &G);
    let drops = query::rate_by(st, SW_QUEUE_DROPPED, &[], &G);
    let d60 = query::increase_by(st, SW_QUEUE_DROPPED, &[], &G, now - WINDOW_MS);
    let dtot = query::increase_by(st, SW_QUEUE_DROPPED, &[], &G, base);
    let depth = query::latest_by(st, SW_QUEUE_DEPTH, &[], &G);
    let ingr = query::rate_by(st, SW_INGRESS_DROPPED, &[], &["switch", "port"]);
    let ingr60 = query::increase_by(
        st,
        SW_INGRESS_DROPPED,
        &[],
        &["switch", "port"],
        now - WINDOW_MS,
    );
    let keys: BTreeSet<&Vec<String>> = tx.keys().chain(drops.keys()).chain(txb.keys()).collect();
    let grouped = super::by_first(keys.iter().copied());
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for sw in &app.cfg.switches {
        let name = sw.name.as_str();
        let state = src_state(app, name);
        if let Some(span) = state.span(name) {
            rows.push(Row {
                name: name.into(),
                cells: vec![Cell::new(name)],
                span: Some((1, span)),
                score: 1e12,
                ..Default::default()
            });
            continue;
        }
        if let SrcState::Stale(ms) = state {
            notes.push(format!("{name} stale {}", fmt::age(ms)));
        }
        let mine: Vec<&Vec<String>> = grouped.get(name).cloned().unwrap_or_default();
        if mine.is_empty() {
            let c = Cell::tone(
                format!("waiting for queue counters from {name} (none parsed yet)"),
                grid::Tone::Dim,
            );
            rows.push(Row {
                name: name.into(),
                cells: vec![Cell::new(name)],
                span: Some((1, c)),
                ..Default::default()
            });
            continue;
        }
        for k in &mine {
            let k: &Vec<String> = k;
            let at = |i: usize| k.get(i).map(String::as_str).unwrap_or("");
            let (port, qos) = (at(1), if at(2).is_empty() { at(3) } else { at(2) });
            let pk = vec![name.to_string(), port.to_string()];
            let behind: Vec<&str> = app
                .cfg
                .nodes_behind(port)
                .iter()
                .map(|n| n.name.as_str())
                .collect();
            let n60 = d60.get(k).copied();
            let i60 = ingr60.get(&pk).copied();
            let sev = app.alerts.worst_for(&Subject::Port {
                switch: name.into(),
                port: port.into(),
            });
            let gbps = txb.get(k).map(|a| Agg {
                rate: a.rate.map(|r| r * 8.0 / 1e9),
                reset: a.reset,
            });
            let ingr_cell = Cell::crit_if(
                fmt::sparse(ingr.get(&pk), i60, app.ascii),
                i60.unwrap_or(0) > 0,
            );
            let cells = vec![
                Cell::tone(port, grid::Tone::of(sev)),
                Cell::new(fmt::short_names(&behind)),
                Cell::new(qos),
                Cell::new(fmt::rate(tx.get(k), app.ascii)),
                Cell::new(fmt::rate(gbps.as_ref(), app.ascii)),
                Cell::new(fmt::rate(ecn.get(k), app.ascii)),
                Cell::crit_if(
                    fmt::sparse(drops.get(k), n60, app.ascii),
                    n60.unwrap_or(0) > 0,
                ),
                ingr_cell,
                Cell::new(fmt::num(depth.get(k).copied())),
                Cell::crit_if(
                    fmt::count(dtot.get(k).copied()),
                    dtot.get(k).copied().unwrap_or(0) > 0,
                ),
            ];
            let score = (n60.unwrap_or(0) + i60.unwrap_or(0)) as f64 * 1e9
                + tx.get(k).and_then(|a| a.rate).unwrap_or(0.0);
            let mut lbl: Vec<(&'static str, &str)> = vec![("switch", name), ("port", port)];
            if !at(2).is_empty() {
                lbl.push(("qos_group", at(2)));
            } else if !at(3).is_empty() {
                lbl.push(("queue", at(3)));
            }
            rows.push(Row {
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
    grid::arrange(app, &mut rows);
    (rows, notes)
}
