//! ECN/CNP: per node and RDMA device, the mlx5 hw_counters of the congestion loop and its errors.
//! Rows come from `app/vm/congestion.rs`; this draws them.
//!
//! ```text
//! ECN / CNP per device (mlx5 hw_counters)     rates per second, (n) = last 60 s; errors since 12:00:00 (start)
//! node          device       ECN marked/s  CNP sent/s(60s) CNP hdl/s CNP ign/s CNP/ECN out_of_seq seq_err ack_tmo
//! ubunturdma6   rocep11s0       12 (700)         11 (650)      3.10         0    0.93         14       2       0
//! ```

use super::grid;
use super::text;
use super::{fmt, title};
use crate::app::{App, Tab};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    let v = app.arranged(Tab::Congestion);
    let [t, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(0)]).areas(area);
    let selected = app.selected_in(Tab::Congestion, &v);
    let v = app.filled(Tab::Congestion, v, &[grid::window(body, selected)]);
    let since = if app.mark().is_some() {
        "mark"
    } else {
        "start"
    };
    let note = format!(
        "{}   rates per second, (n) = last 60 s; errors since {} ({since})",
        super::hidden_note(app, v.cols, area.width),
        fmt::clock(app.baseline())
    );
    text::put(
        f,
        t,
        title(app, "ECN / CNP per device (mlx5 hw_counters)".into(), note),
    );
    grid::draw(
        f,
        body,
        app,
        grid::Table {
            tab: Tab::Congestion,
            cols: v.cols,
            rows: &v.rows,
            empty: "no nodes match",
            selected,
        },
    );
}
