//! ECN/CNP: per node and RDMA device, the mlx5 hw_counters of the congestion loop and its errors.
//!
//! ```text
//! ECN / CNP per device (mlx5 hw_counters)     rates per second, (n) = last 60 s; errors since 12:00:00 (start)
//! node          device       ECN marked/s  CNP sent/s(60s) CNP hdl/s CNP ign/s CNP/ECN out_of_seq seq_err ack_tmo
//! ubunturdma6   rocep11s0       12 (700)         11 (650)      3.10         0    0.93         14       2       0
//! ```

use super::fmt;
use super::grid::{self, Cell, Chart, Col, Row, Tone, col, lcol};
use super::{Detail, SrcState, src_state, title};
use crate::app::alerts::{Subject, WINDOW_MS};
use crate::app::{App, Tab};
use crate::metrics::human;
use crate::metrics::names::rdma_counter;
use crate::metrics::query;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Paragraph;
use std::collections::BTreeSet;

const COLS: [Col; 10] = [
    lcol("node", 13),
    lcol("device", 12),
    col(human::name::ECN_MARKED, 12),
    col("CNP sent/s(60s)", 15),
    col(human::name::CNP_HANDLED, 13),
    col(human::name::CNP_IGNORED, 13),
    col("CNP/ECN", 7),
    col("out_of_seq", 10),
    col("seq_err", 8),
    col("ack_tmo", 8),
];

const G: [&str; 2] = ["node", "device"];

pub fn draw(f: &mut Frame, area: Rect, app: &App) -> Detail {
    let rows = app.view(Tab::Congestion, (area.width, area.height), || rows(app));
    let base = app.baseline();
    let [t, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let since = if app.mark.is_some() { "mark" } else { "start" };
    let note = format!(
        "   rates per second, (n) = last 60 s; errors since {} ({since})",
        fmt::clock(base)
    );
    f.render_widget(
        Paragraph::new(title(
            app,
            "ECN / CNP per device (mlx5 hw_counters)".into(),
            note,
        )),
        t,
    );
    let sel = grid::draw(
        f,
        body,
        app,
        grid::Table {
            tab: Tab::Congestion,
            cols: &COLS,
            rows: &rows,
            empty: "no nodes match",
            selectable: true,
        },
    )?;
    rows.get(sel)
        .filter(|r| !r.charts.is_empty())
        .map(|r| (r.name.clone(), r.charts.clone()))
}

/// One row per node and device, sorted and filtered.
fn rows(app: &App) -> Vec<Row> {
    let st = &app.store;
    let now = app.view_now();
    let base = app.baseline();
    let n = |c: &str| rdma_counter(c);
    let ecn_n = n("np_ecn_marked_roce_packets");
    let cnp_n = n("np_cnp_sent");
    let hdl_n = n("rp_cnp_handled");
    let oos_n = n("out_of_sequence");
    let ecn = query::rate_by(st, &n("np_ecn_marked_roce_packets"), &[], &G);
    let ecn60 = query::increase_by(
        st,
        &n("np_ecn_marked_roce_packets"),
        &[],
        &G,
        now - WINDOW_MS,
    );
    let cnp = query::rate_by(st, &n("np_cnp_sent"), &[], &G);
    let cnp60 = query::increase_by(st, &n("np_cnp_sent"), &[], &G, now - WINDOW_MS);
    let hdl = query::rate_by(st, &n("rp_cnp_handled"), &[], &G);
    let ign = query::rate_by(st, &n("rp_cnp_ignored"), &[], &G);
    let errs: Vec<_> = ["out_of_sequence", "packet_seq_err", "local_ack_timeout_err"]
        .iter()
        .map(|c| {
            (
                query::increase_by(st, &n(c), &[], &G, base),
                query::increase_by(st, &n(c), &[], &G, now - WINDOW_MS),
            )
        })
        .collect();
    let keys: BTreeSet<&Vec<String>> = ecn.keys().chain(cnp.keys()).chain(hdl.keys()).collect();
    let grouped = super::by_first(keys.iter().copied());
    let mut rows = Vec::new();
    for node in &app.cfg.nodes {
        let name = node.name.as_str();
        let state = src_state(app, name);
        let mine: Vec<&Vec<String>> = grouped.get(name).cloned().unwrap_or_default();
        let span = state.span(name).or_else(|| {
            (mine.is_empty() && state != SrcState::Unknown)
                .then(|| Cell::tone("waiting for hw_counters (none parsed yet)", Tone::Dim))
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
        let sev = app.alerts.worst_for(&Subject::Node(name.into()));
        for k in &mine {
            let dev = k.get(1).map(String::as_str).unwrap_or("");
            let r = |m: &std::collections::BTreeMap<Vec<String>, query::Agg>| {
                m.get(*k).and_then(|a| a.rate)
            };
            let ratio = match (r(&cnp), r(&ecn)) {
                (Some(c), Some(e)) if e > 0.0 => Some(c / e),
                _ => None,
            };
            let mut cells = vec![
                Cell::tone(name, Tone::of(sev)),
                Cell::new(dev),
                Cell::new(fmt::sparse(ecn.get(*k), ecn60.get(*k).copied(), app.ascii)),
                Cell::new(fmt::sparse(cnp.get(*k), cnp60.get(*k).copied(), app.ascii)),
                Cell::new(fmt::rate(hdl.get(*k), app.ascii)),
                Cell {
                    text: fmt::rate(ign.get(*k), app.ascii),
                    tone: r(&ign).filter(|v| *v > 0.0).map(|_| Tone::Warn),
                },
                Cell::new(fmt::num(ratio)),
            ];
            let mut bad = 0u64;
            for (total, last) in &errs {
                let growing = last.get(*k).copied().unwrap_or(0);
                bad += growing;
                cells.push(Cell {
                    text: fmt::count(total.get(*k).copied()),
                    tone: (growing > 0).then_some(Tone::Warn),
                });
            }
            let lbl = [("node", name), ("device", dev)];
            rows.push(Row {
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
    grid::arrange(app, &mut rows);
    rows
}
