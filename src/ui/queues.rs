//! Queues: a switch port's lossless class with its other classes folded, with the nodes cabled
//! behind each port (config port map).
//! Rows come from `app/vm/queues.rs`; this draws them.
//!
//! ```text
//! Switch queues (lossless class)    totals since 12:00:00 (start)   2 columns hidden (←/→)
//! port           nodes behind     QoS      Tx pkts/s  Tx Gb/s  ECN/s  Q drops/s(60s) ingr drops/s   depth  drops total
//! Ethernet1/1/2  ubunturdma6      3 +6       120.5k     4.05      -         0 (0)          1.20       -           14
//! NX_AI_Leaf2 down: connection refused
//! ```

use super::grid;
use super::text;
use super::{fmt, title};
use crate::app::{App, Tab};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let v = app.table(Tab::Queues);
    let [t, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let since = if app.mark().is_some() {
        "mark"
    } else {
        "start"
    };
    let mut note = format!(
        "   totals since {} ({since}); (n) = drops in the last 60 s",
        fmt::clock(app.baseline())
    );
    if !v.notes.is_empty() {
        note = format!("   {}{note}", v.notes.join(", "));
    }
    // First after the title, so a narrow screen still says it.
    note = super::hidden_note(app, v.cols, area.width) + &note;
    text::put(
        f,
        t,
        title(app, "Switch queues (lossless class)".into(), note),
    );
    let empty = if app.cfg().switches.is_empty() {
        "no [[switch]] in the config"
    } else {
        "no rows match the filter"
    };
    grid::draw(
        f,
        body,
        app,
        grid::Table {
            tab: Tab::Queues,
            cols: v.cols,
            rows: &v.rows,
            empty,
            selected: app.selected_in(Tab::Queues, &v),
        },
    );
}
