//! Latency: per peer, RDMA verbs RTT and TCP RTT side by side, and the selected peer's distribution.
//!
//! ```text
//! RDMA / TCP RTT per peer                      (RDMA unavailable on this host: ...)
//! peer          transport      min      p50      p99    p99.9      max    stdev   jitter   loss%
//! ubunturdma2   rdma        12.0us   14.1us   30.2us   45.0us   61.0us    3.2us    1.1us    0.0%
//! ubunturdma2 (tcp): RTT distribution                     p99 over time
//! min     12.0us ██                                        ▁▁▂▅▂▁
//! p50     14.1us ███
//! ```

use super::fmt;
use super::grid::{self, Cell, Chart, ChartKind, Col, Row, Tone, col, lcol};
use super::{Detail, STEP_MS, spark, title};
use crate::app::alerts::{Subject, WINDOW_MS};
use crate::app::{App, Tab};
use crate::metrics::names::{
    PING_BUCKET_LE, PING_BUCKET_PROBES, PING_JITTER, PING_LOST, PING_RTT_SECONDS, PING_RTT_STDEV,
    PING_SENT,
};
use crate::metrics::query;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use std::collections::{BTreeMap, BTreeSet};

const COLS: [Col; 10] = [
    lcol("peer", 14),
    lcol("transport", 9),
    col("RTT min", 8),
    col("p50", 8),
    col("p99", 8),
    col("p99.9", 8),
    col("max", 8),
    col("stdev", 8),
    col("jitter", 8),
    col("loss%", 7),
];

const QUANTILES: [(&str, &str); 5] = [
    ("min", "0"),
    ("p50", "0.5"),
    ("p99", "0.99"),
    ("p99.9", "0.999"),
    ("max", "1"),
];

pub fn draw(f: &mut Frame, area: Rect, app: &App) -> Detail {
    let st = &app.store;
    let now = app.view_now();
    let q = query::latest_by(
        st,
        PING_RTT_SECONDS,
        &[],
        &["peer", "transport", "quantile"],
    );
    let stdev = query::latest_by(st, PING_RTT_STDEV, &[], &["peer", "transport"]);
    let jitter = query::latest_by(st, PING_JITTER, &[], &["peer", "transport"]);
    let lost = query::increase_by(st, PING_LOST, &[], &["peer", "transport"], now - WINDOW_MS);
    let sent = query::increase_by(st, PING_SENT, &[], &["peer", "transport"], now - WINDOW_MS);
    let peers: BTreeSet<Vec<String>> = q.keys().map(|k| k[..2.min(k.len())].to_vec()).collect();
    let mut rows = Vec::new();
    for k in &peers {
        let (peer, tr) = (
            k.first().cloned().unwrap_or_default(),
            k.get(1).cloned().unwrap_or_default(),
        );
        let qv = |qt: &str| {
            q.get(&vec![peer.clone(), tr.clone(), qt.to_string()])
                .copied()
        };
        let loss = match (lost.get(k), sent.get(k)) {
            (Some(l), Some(s)) if *s > 0 => Some(*l as f64 / *s as f64),
            _ => None,
        };
        let sev = app.alerts.worst_for(&Subject::Peer {
            peer: peer.clone(),
            transport: tr.clone(),
        });
        let mut cells = vec![
            Cell::tone(peer.clone(), Tone::of(sev)),
            Cell::new(tr.clone()),
        ];
        for (_, qt) in QUANTILES {
            cells.push(Cell::new(fmt::secs(qv(qt))));
        }
        cells.push(Cell::new(fmt::secs(stdev.get(k).copied())));
        cells.push(Cell::new(fmt::secs(jitter.get(k).copied())));
        cells.push(Cell {
            text: fmt::percent(loss),
            tone: loss.filter(|l| *l > 0.0).map(|_| Tone::Warn),
        });
        let lbl = [("peer", peer.as_str()), ("transport", tr.as_str())];
        let qlbl = |qt: &'static str| [lbl[0], lbl[1], ("quantile", qt)];
        rows.push(Row {
            name: format!("{peer} {tr}"),
            cells,
            score: sev.map_or(0.0, |s| s as u8 as f64 + 1.0) * 1e9 + qv("0.99").unwrap_or(0.0),
            charts: vec![
                Chart::new(
                    "RTT p50 (us)",
                    PING_RTT_SECONDS,
                    &qlbl("0.5"),
                    ChartKind::Gauge(1e6),
                ),
                Chart::new(
                    "RTT p99 (us)",
                    PING_RTT_SECONDS,
                    &qlbl("0.99"),
                    ChartKind::Gauge(1e6),
                ),
                Chart::new(
                    "RTT max (us)",
                    PING_RTT_SECONDS,
                    &qlbl("1"),
                    ChartKind::Gauge(1e6),
                ),
            ],
            ..Default::default()
        });
    }
    grid::arrange(app, &mut rows);
    let notes: Vec<String> = st
        .sources()
        .flat_map(|(_, h)| h.notes.iter())
        // Why RDMA is unavailable, and per peer the device/GID its pings use or why they stopped.
        .filter(|n| n.starts_with("RDMA") || n.contains("verbs"))
        .cloned()
        .collect();
    let h = area.height as usize;
    let hist_h = if h >= 14 { 7 } else { 0 };
    let [t, notes_a, body, hist] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(notes.len().min(4) as u16),
        Constraint::Min(0),
        Constraint::Length(hist_h),
    ])
    .areas(area);
    f.render_widget(
        Paragraph::new(title(
            app,
            "RDMA verbs / TCP RTT per peer".into(),
            "   latest window; loss over the last 60 s".into(),
        )),
        t,
    );
    let nl: Vec<Line> = notes
        .iter()
        .map(|n| Line::from(Span::styled(n.clone(), app.theme.warn)))
        .collect();
    f.render_widget(Paragraph::new(nl), notes_a);
    let empty = if app.cfg.pings.is_empty() {
        "no RTT: no [[ping]] peers in the config (each peer runs `rocetop pingd`)"
    } else {
        "waiting for RTT samples"
    };
    let sel = grid::draw(
        f,
        body,
        app,
        grid::Table {
            tab: Tab::Latency,
            cols: &COLS,
            rows: &rows,
            empty,
            selectable: true,
        },
    );
    let row = sel.and_then(|s| rows.get(s));
    if let Some(r) = row {
        draw_hist(f, hist, app, r, &q);
    }
    row.map(|r| (r.name.clone(), r.charts.clone()))
}

/// The selected peer's quantiles as bars, beside its p99 over time.
fn draw_hist(f: &mut Frame, area: Rect, app: &App, r: &Row, q: &BTreeMap<Vec<String>, f64>) {
    if area.height < 2 {
        return;
    }
    let mut parts = r.name.splitn(2, ' ');
    let (peer, tr) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let vals: Vec<(&str, Option<f64>)> = QUANTILES
        .iter()
        .map(|(l, qt)| {
            (
                *l,
                q.get(&vec![peer.to_string(), tr.to_string(), (*qt).to_string()])
                    .copied(),
            )
        })
        .collect();
    // The collector's HDR buckets where it publishes them, else the quantiles as bars.
    let lbl = [("peer", peer), ("transport", tr)];
    let les = query::latest_by(&app.store, PING_BUCKET_LE, &lbl, &["bucket"]);
    let counts = query::latest_by(&app.store, PING_BUCKET_PROBES, &lbl, &["bucket"]);
    let mut buckets: Vec<(f64, f64)> = les
        .iter()
        .filter_map(|(k, le)| counts.get(k).map(|n| (*le, *n)))
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    let vals: Vec<(String, Option<f64>)> = if buckets.is_empty() {
        vals.into_iter()
            .map(|(l, v)| (format!("{l:<6}{:>9}", fmt::secs(v)), v))
            .collect()
    } else {
        let keep = (area.height as usize).saturating_sub(1).max(1);
        let skip = buckets.len().saturating_sub(keep);
        buckets
            .into_iter()
            .skip(skip)
            .map(|(le, n)| (format!("<={:>8} {:>5}", fmt::secs(Some(le)), n), Some(n)))
            .collect()
    };
    let max = vals.iter().filter_map(|(_, v)| *v).fold(0.0, f64::max);
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    let bar_w = (left.width as usize).saturating_sub(16).max(1);
    let block = if app.ascii { "#" } else { "█" };
    let mut lines = vec![title(
        app,
        format!("{peer} ({tr}): RTT distribution"),
        String::new(),
    )];
    for (l, v) in vals {
        let n = match v {
            Some(v) if max > 0.0 => ((v / max) * bar_w as f64).round() as usize,
            _ => 0,
        };
        lines.push(Line::from(vec![
            Span::raw(format!("{l} ")),
            Span::styled(
                block.repeat(n.max(usize::from(v.is_some()))),
                app.theme.chart,
            ),
        ]));
    }
    f.render_widget(Paragraph::new(lines), left);
    let w = (right.width as usize).saturating_sub(1).max(1);
    let mut rl = vec![title(app, "p99 over time (us)".into(), String::new())];
    if let Some(c) = r.charts.get(1) {
        let tl = c.timeline(app, app.view_now(), STEP_MS, w);
        rl.push(Line::from(Span::styled(
            spark::line(&tl, w, app.ascii),
            app.theme.chart,
        )));
        let (last, max) = spark::last_and_max(&tl);
        rl.push(Line::from(Span::styled(
            format!("last {}  max {}", fmt::num(last), fmt::num(max)),
            app.theme.dim,
        )));
    }
    f.render_widget(Paragraph::new(rl), right);
}
