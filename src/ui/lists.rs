//! The overlays one key away from every tab: the Episodes list (`e`: past episodes with duration
//! and training time lost, the selected one's chain in cause order) and the alerts list (`A`:
//! every rolled-up line with its members, ack, mute, jump).

use super::centered;
use super::grid::Tone;
use crate::app::App;
use crate::app::episodes::text;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear};

/// `1m20s`, `45s`.
pub fn ago(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Lines `sel` is among, scrolled so it stays in view.
fn window<'a>(lines: Vec<Line<'a>>, sel_line: usize, h: usize) -> Vec<Line<'a>> {
    let skip = (sel_line + 1).saturating_sub(h);
    lines.into_iter().skip(skip).take(h).collect()
}

fn frame(f: &mut Frame, area: Rect, app: &App, title: &str, lines: Vec<Line>, sel_line: usize) {
    let r = centered(
        area,
        area.width.saturating_sub(4),
        area.height.saturating_sub(2),
    );
    let h = r.height.saturating_sub(2) as usize;
    f.render_widget(Clear, r);
    let block = Block::bordered()
        .title(title.to_string())
        .border_style(app.theme.border);
    let inner = block.inner(r);
    f.render_widget(block, r);
    super::text::put(f, inner, window(lines, sel_line, h));
}

pub fn episodes(f: &mut Frame, area: Rect, app: &App) {
    let all = app.episodes().all();
    let sel = app.overlay_sel().min(all.len().saturating_sub(1));
    let lost: f64 = all.iter().map(|e| e.lost_s).sum();
    let mut lines = vec![Line::from(Span::styled(
        format!(
            " {} episodes, {lost:.1} s of training lost; start (UTC), duration, cost, story",
            all.len()
        ),
        app.theme.dim,
    ))];
    if all.is_empty() {
        lines.push(Line::from(Span::styled(
            " none yet: the fabric has stayed within its normal range",
            app.theme.ok,
        )));
    }
    let mut sel_line = 0;
    for (i, ep) in all.iter().enumerate() {
        let tone = if ep.end.is_none() {
            app.theme.crit
        } else {
            app.theme.normal
        };
        let mark = if i == sel { "▶" } else { " " };
        if i == sel {
            sel_line = lines.len();
        }
        lines.push(Line::from(vec![
            Span::styled(mark, app.theme.accent),
            Span::styled(text::row(ep, app.links(), app.now()), tone),
        ]));
        if i == sel {
            for l in text::chain(ep, app.links()) {
                lines.push(Line::from(Span::styled(format!("     {l}"), app.theme.dim)));
            }
            sel_line = lines.len() - 1;
        }
    }
    frame(
        f,
        area,
        app,
        " episodes (j/k move, Enter: travel to its start, p: its pause tree, Esc closes) ",
        lines,
        sel_line,
    );
}

pub fn alerts(f: &mut Frame, area: Rect, app: &App) {
    let all = app.rolled();
    let sel = app.overlay_sel().min(all.len().saturating_sub(1));
    let mut lines = vec![Line::from(Span::styled(
        format!(
            " {} lines, {} conditions; newest and most severe first, the open episode's marked E",
            all.len(),
            all.iter().map(|l| l.members.len()).sum::<usize>()
        ),
        app.theme.dim,
    ))];
    if all.is_empty() {
        lines.push(Line::from(Span::styled(" no active alerts", app.theme.ok)));
    }
    let mut sel_line = 0;
    // Only lines within a screen of the selection can be in view (`window`): the others' text
    // is not made (hundreds of lines at 512 nodes).
    let near = |i: usize| i.abs_diff(sel) <= area.height as usize;
    for (i, l) in all.iter().enumerate() {
        let dim = l.acked || l.muted;
        let tone = if dim {
            app.theme.dim
        } else {
            Tone::of(Some(l.severity)).style(app)
        };
        let flags = format!(
            "{}{}{}",
            if l.episode { "E" } else { " " },
            if l.acked { "a" } else { " " },
            if l.muted { "m" } else { " " }
        );
        lines.push(Line::from(vec![
            Span::styled(if i == sel { "▶" } else { " " }, app.theme.accent),
            Span::styled(format!("{flags} {} ", l.severity.label()), tone),
            Span::styled(format!("[{}] ", l.tab.title()), app.theme.accent),
            Span::styled(
                if near(i) {
                    l.text(app.alerts())
                } else {
                    String::new()
                },
                if dim { app.theme.dim } else { app.theme.normal },
            ),
        ]));
        if i == sel {
            // Every underlying alert of the selected line.
            if l.members.len() > 1 {
                for m in l.members.iter().filter_map(|id| app.alerts().get(id)) {
                    lines.push(Line::from(Span::styled(
                        format!("       {}  {}", m.subject.describe(), m.what),
                        app.theme.dim,
                    )));
                }
            }
            sel_line = lines.len() - 1;
        }
    }
    frame(
        f,
        area,
        app,
        " alerts (j/k move, a ack, x mute until restart, Enter: go to its row, Esc closes) ",
        lines,
        sel_line,
    );
}
