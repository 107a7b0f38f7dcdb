//! Latency: per peer, RDMA verbs RTT and TCP RTT side by side (rows from `app/vm/latency.rs`),
//! and the selected peer's distribution.
//!
//! ```text
//! RDMA / TCP RTT per peer                      (RDMA unavailable on this host: ...)
//! peer          transport      min      p50      p99    p99.9      max    stdev   jitter   loss%   retx%
//! ubunturdma2   rdma        12.0us   14.1us   30.2us   45.0us   61.0us    3.2us    1.1us    0.0%    0.1%
//! ubunturdma2 (tcp): RTT distribution                     p99 over time
//! min     12.0us ██                                        ▁▁▂▅▂▁
//! p50     14.1us ███
//! ```

use super::fmt;
use super::grid::{self, Row, Val};
use super::text;
use super::{STEP_MS, spark, title};
use crate::app::vm::latency::{self, QUANTILES};
use crate::app::{App, Tab};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let st = &app.store;
    let v = app.table(Tab::Latency);
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
    text::put(
        f,
        t,
        title(
            app,
            "RDMA verbs / TCP RTT per peer".into(),
            format!(
                "{}   latest window; loss over the last 60 s",
                super::hidden_note(app, v.cols, area.width)
            ),
        ),
    );
    let nl: Vec<Line> = notes
        .iter()
        .map(|n| Line::from(Span::styled(n.clone(), app.theme.warn)))
        .collect();
    text::put(f, notes_a, nl);
    let empty = if app.cfg().pings.is_empty() {
        "no RTT: no [[ping]] peers in the config (each peer runs `rocetop pingd`)"
    } else {
        "waiting for RTT samples"
    };
    let sel = app.selected_in(Tab::Latency, &v);
    grid::draw(
        f,
        body,
        app,
        grid::Table {
            tab: Tab::Latency,
            cols: v.cols,
            rows: &v.rows,
            empty,
            selected: sel,
        },
    );
    if let Some(r) = sel.and_then(|s| v.rows.get(s)) {
        draw_hist(f, hist, app, r);
    }
}

/// The selected peer's quantiles as bars, beside its p99 over time.
fn draw_hist(f: &mut Frame, area: Rect, app: &App, r: &Row) {
    if area.height < 2 {
        return;
    }
    let grid::RowId::Peer {
        peer,
        transport,
        device,
    } = &r.id
    else {
        return;
    };
    let (peer, tr) = (peer.as_str(), transport.as_str());
    // The quantile columns follow the peer and transport columns.
    let vals: Vec<(&str, Option<f64>)> = QUANTILES
        .iter()
        .enumerate()
        .map(|(i, (l, _))| match r.cells.get(i + 2).map(|c| &c.val) {
            Some(Val::Secs(v)) => (*l, *v),
            _ => (*l, None),
        })
        .collect();
    // The collector's HDR buckets where it publishes them, else the quantiles as bars.
    let buckets = latency::rtt_buckets(&app.store, peer, tr, device);
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
        if device.is_empty() {
            format!("{peer} ({tr}): RTT distribution")
        } else {
            format!("{peer} ({tr} {device}): RTT distribution")
        },
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
                // A bucket with probes shows at least one block; an empty one none.
                block.repeat(n.max(usize::from(v.is_some_and(|x| x > 0.0)))),
                app.theme.chart,
            ),
        ]));
    }
    text::put(f, left, lines);
    let w = (right.width as usize).saturating_sub(1).max(1);
    let mut rl = vec![title(app, "p99 over time (µs)".into(), String::new())];
    if let Some(c) = r.charts.get(1) {
        let tl = c.timeline(&app.store, app.view_now(), STEP_MS, w);
        rl.push(Line::from(Span::styled(
            spark::scaled(&tl, w, app.ascii, spark::Scale::MinMax),
            app.theme.chart,
        )));
        let (last, _) = spark::last_and_max(&tl);
        let range = spark::range(&tl, w, spark::Scale::MinMax);
        rl.push(Line::from(Span::styled(
            format!(
                "last {}  drawn{}",
                fmt::num(last),
                spark::range_cell(range, fmt::num)
            ),
            app.theme.dim,
        )));
    }
    text::put(f, right, rl);
}
