//! The pause tree (`p` on the PFC tab, or on an episode in the episodes list): one line a hop,
//! indented by hops from the root. Lines come from `app/vm/pause_tree.rs`; this draws them.

use super::text;
use super::title;
use crate::app::App;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let v = crate::app::vm::pause_tree::of(app);
    let [t, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    text::put(f, t, title(app, v.title, v.note));
    let lines: Vec<ratatui::text::Line> = (v.lines.iter())
        .take(body.height as usize)
        .map(|l| {
            ratatui::text::Line::from(ratatui::text::Span::styled(
                format!("{}{}", "  ".repeat(l.depth), l.text),
                if l.depth == 0 {
                    app.theme.accent
                } else {
                    app.theme.normal
                },
            ))
        })
        .collect();
    text::put(f, body, lines);
    // No table here to click in.
    app.hits.borrow_mut().table = None;
}
