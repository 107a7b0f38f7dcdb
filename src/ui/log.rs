//! Log: the training log as it grows (follow, scroll, `/` search, errors and NCCL warnings
//! highlighted) above charts of the parsed loss, step time and all-reduce time.
//!
//! ```text
//! Training log ubunturdma1:~/training.log   1234 lines, following
//! Iteration  120 | Loss: 2.3051 | AllReduce: 45.2ms | Total: 158.0ms
//! ubunturdma1:2291:2310 [0] NCCL WARN NET/IB : Got completion from peer ...      (highlighted)
//! Iteration 1234  Loss 2.3051  step 158ms  all-reduce 45.2ms  samples/s -
//! loss            2.31  ▇▇▆▆▅▅▄▄
//! step ms          158  ▁▁▂▅█▅▂▁
//! all-reduce ms   45.2  ▁▁▂▆█▆▂▁
//! ```

use super::fmt;
use super::grid::{self, Tone};
use super::spark::Scale;
use super::text;
use super::{spark, src_state, title};
use crate::app::App;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

/// Errors and warnings worth a glance in a training log.
pub fn tone_of(line: &str) -> Tone {
    let l = line.to_ascii_lowercase();
    if l.contains("error")
        || l.contains("traceback")
        || l.contains("exception")
        || l.contains("failed")
        || l.contains("nan") && l.contains("loss")
    {
        Tone::Crit
    } else if l.contains("warn") {
        Tone::Warn
    } else {
        Tone::Normal
    }
}

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let h = area.height as usize;
    let charts_h = if h >= 10 { 4 } else { 1.min(h) };
    let [t, body, charts] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(charts_h as u16),
    ])
    .areas(area);
    let log = app.cfg().logs.first();
    let name = log.map_or_else(
        || "no [[log]] in the config".to_string(),
        |l| format!("{}:{}", l.node, l.path),
    );
    let lines: Vec<&String> = app.log().lines.iter().filter(|l| app.matches(l)).collect();
    let mode = if app.log().scroll == 0 {
        "following".to_string()
    } else {
        format!("scrolled back {} lines (End follows)", app.log().scroll)
    };
    let note = format!("   {} lines, {mode}", app.log().received);
    text::put(f, t, title(app, format!("Training log {name}"), note));

    let bh = body.height as usize;
    let mut out: Vec<Line> = Vec::new();
    if lines.is_empty() {
        let why = if app.log().received > 0 {
            "no log lines match the filter".to_string()
        } else {
            let src = log
                .map(|l| format!("log {}:{}", l.node, l.path))
                .unwrap_or_default();
            match src_state(app, &src).span("the log") {
                Some(c) => format!("waiting for log lines ({})", grid::text(&c.val, false)),
                None => {
                    "waiting for log lines (the follower streams them; parsed samples below)".into()
                }
            }
        };
        out.push(Line::from(Span::styled(why, app.theme.dim)));
    } else {
        // A log no step was read from says so above its lines: a line of it and the setting
        // that would read it (remote text, escaped as every line is).
        if let Some(hint) = &app.log().hint {
            for l in hint.lines() {
                out.push(Line::from(Span::styled(
                    crate::safe::line(&l).into_owned(),
                    app.theme.warn,
                )));
            }
        }
        let bh = bh.saturating_sub(out.len());
        let end = lines
            .len()
            .saturating_sub(app.log().scroll.min(lines.len()));
        let start = end.saturating_sub(bh);
        for l in lines.get(start..end).unwrap_or(&[]) {
            let st = tone_of(l).style(app);
            out.push(Line::from(Span::styled((*l).clone(), st)));
        }
    }
    text::put(f, body, out);
    draw_charts(f, charts, app);
}

fn draw_charts(f: &mut Frame, area: Rect, app: &App) {
    if area.height == 0 {
        return;
    }
    let node = app.cfg().logs.first().map(|l| l.node.as_str());
    let t = app.training(node);
    let mut lines = vec![Line::from(vec![
        Span::styled("Iteration ", app.theme.header),
        Span::raw(t.iteration.map_or("-".into(), |v| format!("{v:.0}"))),
        Span::styled("  Loss ", app.theme.header),
        Span::raw(t.loss.map_or("-".into(), |v| format!("{v:.4}"))),
        Span::styled("  step ", app.theme.header),
        Span::raw(fmt::secs(t.step)),
        Span::styled("  all-reduce ", app.theme.header),
        Span::raw(fmt::secs(t.allreduce)),
        Span::styled("  samples/s ", app.theme.header),
        Span::raw(fmt::num(t.samples_per_second)),
    ])];
    let w = (area.width as usize)
        .saturating_sub(22 + spark::RANGE_W)
        .max(1);
    let timelines = app.training_timelines(node, w);
    for ((label, k), tl) in [("loss", 1.0), ("step ms", 1e3), ("all-reduce ms", 1e3)]
        .into_iter()
        .zip(timelines)
    {
        let tl: Vec<Option<f64>> = tl.into_iter().map(|v| v.map(|x| x * k)).collect();
        let (last, _) = spark::last_and_max(&tl);
        let range = spark::range(&tl, w, Scale::MinMax);
        lines.push(Line::from(vec![
            Span::raw(format!("{label:<14}{:>7} ", fmt::num(last))),
            Span::styled(
                spark::scaled(&tl, w, app.ascii, Scale::MinMax),
                app.theme.chart,
            ),
            Span::styled(spark::range_cell(range, fmt::num), app.theme.dim),
        ]));
    }
    text::put(f, area, lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nccl_warnings_and_errors_stand_out() {
        assert_eq!(
            tone_of("host:2291:2310 [0] NCCL WARN NET/IB : Got completion from peer"),
            Tone::Warn
        );
        assert_eq!(
            tone_of("RuntimeError: NCCL error in: ../torch/csrc"),
            Tone::Crit
        );
        assert_eq!(tone_of("Iteration  120 | Loss: 2.3051"), Tone::Normal);
    }
}
