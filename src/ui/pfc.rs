//! PFC: switch ports (RxPPP/TxPPP per second, totals, PFC oper state, 802.3x) above the hosts' NIC
//! pause counters (`ethtool -S` rx/tx_prioN_pause, pause time as a share of the interval, storms).
//!
//! ```text
//! Switch PFC per port                                   totals since 12:00:00 (start)
//! port           class nodes behind      RxPPP/s   TxPPP/s RxPPP total TxPPP total PFC p3 802.3x rx/tx link pause/s
//! ii1/1/1        ii    -                   2.5k      900        12.3M        1.1M   on    -/-          -
//! Host NIC pause (ethtool -S)
//! node          netdev   prio  rx pause/s tx pause/s  pause%  rx pause total  storm events  rx_discards_phy
//! ubunturdma6   ens192   3            950        0.3   21.0%          12.3k             0                0
//! ```

use super::fmt;
use super::grid::{self, Cell, Chart, Col, Row, Tone, col, lcol};
use super::{Detail, SrcState, src_state, title};
use crate::app::alerts::{ROCE_PRIORITY, Subject};
use crate::app::{App, Tab};
use crate::metrics::names::*;
use crate::metrics::query::{self, Agg};
use crate::metrics::{Store, Ts};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Paragraph;
use std::collections::{BTreeMap, BTreeSet};

const SW_COLS: [Col; 10] = [
    lcol("port", 14),
    lcol("class", 5),
    lcol("nodes behind", 16),
    col("RxPPP/s", 9),
    col("TxPPP/s", 9),
    col("RxPPP total", 11),
    col("TxPPP total", 11),
    lcol("PFC p3", 6),
    lcol("802.3x rx/tx", 12),
    col("link pause/s", 12),
];

const HOST_COLS: [Col; 9] = [
    lcol("node", 13),
    lcol("netdev", 8),
    lcol("prio", 6),
    col("rx pause/s", 10),
    col("tx pause/s", 10),
    col("pause%", 7),
    col("rx pause total", 14),
    col("storm events", 12),
    col("rx_discards_phy", 15),
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

fn totals(st: &Store, name: &str, since: Ts) -> BTreeMap<Port, u64> {
    let mut all: BTreeMap<Port, u64> = BTreeMap::new();
    let mut prios: BTreeMap<Port, u64> = BTreeMap::new();
    for (k, v) in query::increase_by(st, name, &[], &["switch", "port", "priority"], since) {
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

pub fn draw(f: &mut Frame, area: Rect, app: &App) -> Detail {
    let v = app.view(Tab::Pfc, (area.width, area.height), || compute(app));
    let (rows, hosts, stale) = (&v.rows, &v.hosts, &v.stale);
    let base = app.baseline();
    let h = area.height as usize;
    let top = (rows.len() + 2).min(h / 2).max(h.min(3));
    let [t1, b1, t2, b2] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(top.saturating_sub(1) as u16),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(area);
    let since = if app.mark.is_some() { "mark" } else { "start" };
    f.render_widget(
        Paragraph::new(title(
            app,
            "Switch PFC per port (RxPPP/TxPPP)".into(),
            format!(
                "   {}totals since {} ({since})",
                stale.concat(),
                fmt::clock(base)
            ),
        )),
        t1,
    );
    let sel = grid::draw(
        f,
        b1,
        app,
        grid::Table {
            tab: Tab::Pfc,
            cols: &SW_COLS,
            rows,
            empty: "no switch ports",
            selectable: true,
        },
    );
    f.render_widget(
        Paragraph::new(title(
            app,
            "Host NIC pause (ethtool -S)".into(),
            format!(
                "   pause% = time paused in the newest interval; warn above {}%",
                app.cfg.alerts.pause_time_percent
            ),
        )),
        t2,
    );
    grid::draw(
        f,
        b2,
        app,
        grid::Table {
            tab: Tab::Pfc,
            cols: &HOST_COLS,
            rows: hosts,
            empty: "no nodes match",
            selectable: false,
        },
    );
    let sel = sel?;
    rows.get(sel)
        .filter(|r| !r.charts.is_empty())
        .map(|r| (r.name.clone(), r.charts.clone()))
}

fn host_rows(app: &App, st: &Store, base: Ts) -> Vec<Row> {
    const G: [&str; 3] = ["node", "netdev", "priority"];
    let rx = query::rate_by(st, NIC_PFC_RX_PAUSE, &[], &G);
    let tx = query::rate_by(st, NIC_PFC_TX_PAUSE, &[], &G);
    let rxt = query::increase_by(st, NIC_PFC_RX_PAUSE, &[], &G, base);
    let mut frac = query::pause_fraction_by(st, NIC_PFC_RX_PAUSE_DURATION, &[], &G);
    for (k, v) in query::pause_fraction_by(st, NIC_PFC_TX_PAUSE_DURATION, &[], &G) {
        let e = frac.entry(k).or_insert(v);
        *e = e.max(v);
    }
    let storms = query::increase_by(
        st,
        &nic_counter("tx_pause_storm_warning_events"),
        &[],
        &["node", "netdev"],
        base,
    );
    let discards = query::increase_by(
        st,
        &nic_counter("rx_discards_phy"),
        &[],
        &["node", "netdev"],
        base,
    );
    let keys: BTreeSet<&Vec<String>> = rx.keys().chain(tx.keys()).collect();
    let grouped = super::by_first(keys.iter().copied());
    let mut rows = Vec::new();
    for n in &app.cfg.nodes {
        let name = n.name.as_str();
        let state = src_state(app, name);
        let mine: Vec<&Vec<String>> = grouped.get(name).cloned().unwrap_or_default();
        let span = state.span(name).or_else(|| {
            (mine.is_empty() && state != SrcState::Unknown)
                .then(|| Cell::tone("waiting for pause counters (none parsed yet)", Tone::Dim))
        });
        if let Some(span) = span {
            let score = if matches!(state, SrcState::Down(_)) {
                1e12
            } else {
                0.0
            };
            rows.push(Row {
                name: name.into(),
                cells: vec![Cell::new(name)],
                span: Some((1, span)),
                score,
                tone: state.row_tone(),
                ..Default::default()
            });
            continue;
        }
        for k in &mine {
            let at = |i: usize| k.get(i).map(String::as_str).unwrap_or("");
            let nk = vec![name.to_string(), at(1).to_string()];
            let pf = frac.get(*k).copied();
            let storm = storms.get(&nk).copied();
            let cells = vec![
                Cell::new(name),
                Cell::new(at(1)),
                Cell::new(at(2)),
                Cell::new(fmt::rate(rx.get(*k), app.ascii)),
                Cell::new(fmt::rate(tx.get(*k), app.ascii)),
                Cell {
                    text: fmt::percent(pf),
                    tone: pf
                        .filter(|p| p * 100.0 > app.cfg.alerts.pause_time_percent)
                        .map(|_| Tone::Warn),
                },
                Cell::new(fmt::count(rxt.get(*k).copied())),
                Cell {
                    text: fmt::count(storm),
                    tone: storm.filter(|s| *s > 0).map(|_| Tone::Warn),
                },
                Cell::new(fmt::count(discards.get(&nk).copied())),
            ];
            rows.push(Row {
                name: format!("{name} {}", at(1)),
                cells,
                tone: state.row_tone(),
                score: pf.unwrap_or(0.0) * 1e6 + rx.get(*k).and_then(|a| a.rate).unwrap_or(0.0),
                ..Default::default()
            });
        }
    }
    grid::arrange(app, &mut rows);
    rows
}

/// What the tab shows, computed from the store once per change (`app/view.rs`).
struct View {
    rows: Vec<Row>,
    hosts: Vec<Row>,
    stale: Vec<String>,
}

fn compute(app: &App) -> View {
    let st = &app.store;
    let base = app.baseline();
    let rx = per_port(st, SW_PFC_RX);
    let tx = per_port(st, SW_PFC_TX);
    let rxt = totals(st, SW_PFC_RX, base);
    let txt = totals(st, SW_PFC_TX, base);
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
    let grouped = super::by_first(keys.iter().copied());
    let mut rows = Vec::new();
    let mut stale = Vec::new();
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
            stale.push(format!("{name} stale {}   ", fmt::age(ms)));
        }
        let mine: Vec<&Vec<String>> = grouped.get(name).cloned().unwrap_or_default();
        if mine.is_empty() {
            let c = Cell::tone(
                format!("waiting for PFC counters from {name} (none parsed yet)"),
                Tone::Dim,
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
            let port = k.get(1).map(String::as_str).unwrap_or("");
            let behind: Vec<&str> = app
                .cfg
                .nodes_behind(port)
                .iter()
                .map(|n| n.name.as_str())
                .collect();
            let sev = app.alerts.worst_for(&Subject::Port {
                switch: name.into(),
                port: port.into(),
            });
            let fck = |d: &str| fc.get(&vec![name.to_string(), port.to_string(), d.to_string()]);
            let fc_txt = format!("{}/{}", on_off(fck("rx")), on_off(fck("tx")));
            let fc_bad = app.cfg.alerts.flowcontrol.as_deref().is_some_and(|want| {
                !port.starts_with("ii")
                    && [fck("rx"), fck("tx")]
                        .iter()
                        .flatten()
                        .any(|v| on_off(Some(v)) != want)
            });
            let p3 = on_off(pfc_on.get(*k));
            let rate = |m: &BTreeMap<Port, Agg>| m.get(*k).and_then(|a| a.rate).unwrap_or(0.0);
            let cells = vec![
                Cell::tone(port, Tone::of(sev)),
                Cell::new(if port.starts_with("ii") { "ii" } else { "edge" }),
                Cell::new(fmt::short_names(&behind)),
                Cell {
                    text: fmt::rate(rx.get(*k), app.ascii),
                    tone: (rate(&rx) > app.cfg.alerts.port_pfc_per_second).then_some(Tone::Warn),
                },
                Cell {
                    text: fmt::rate(tx.get(*k), app.ascii),
                    tone: (rate(&tx) > app.cfg.alerts.port_pfc_per_second).then_some(Tone::Warn),
                },
                Cell::new(fmt::count(rxt.get(*k).copied())),
                Cell::new(fmt::count(txt.get(*k).copied())),
                Cell {
                    text: p3.into(),
                    tone: (p3 == "off" && !behind.is_empty()).then_some(Tone::Warn),
                },
                Cell {
                    text: fc_txt,
                    tone: fc_bad.then_some(Tone::Warn),
                },
                Cell::new(fmt::rate(lp.get(*k), app.ascii)),
            ];
            let lbl = [("switch", name), ("port", port)];
            rows.push(Row {
                name: format!("{port} {}", behind.join(" ")),
                cells,
                tone: state.row_tone(),
                score: sev.map_or(0.0, |s| s as u8 as f64 + 1.0) * 1e9 + rate(&rx) + rate(&tx),
                span: None,
                charts: vec![
                    Chart::rate("RxPPP frames/s", SW_PFC_RX, &lbl),
                    Chart::rate("TxPPP frames/s", SW_PFC_TX, &lbl),
                    Chart::rate("802.3x link pause rx/s", SW_LINK_PAUSE_RX, &lbl),
                ],
            });
        }
    }
    grid::arrange(app, &mut rows);
    let hosts = host_rows(app, st, base);
    View { rows, hosts, stale }
}
