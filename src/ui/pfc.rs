//! PFC: switch ports (RxPPP/TxPPP per second, the last 60 s, totals, PFC oper state, 802.3x)
//! above the hosts' NIC pause counters (`ethtool -S` rx/tx_prioN_pause, pause time as a share of
//! the interval, storms). Rows come from `app/vm/pfc.rs`; this draws them.
//!
//! ```text
//! Switch PFC per port (RxPPP/TxPPP)   2 columns hidden (←/→)   totals since 12:00:00 (start)
//! port           class nodes behind      RxPPP/s   TxPPP/s   PPP 60s RxPPP total TxPPP total PFC p3 802.3x rx/tx link pause/s
//! ii1/1/1        ii    -                   2.5k      900       2.1M       12.3M        1.1M   on    -/-          -
//! Host NIC pause (ethtool -S)
//! node          netdev   prio  rx pause/s tx pause/s  pause%  rx pause total  storm events  rx_discards_phy
//! ubunturdma6   ens192   3            950        0.3   21.0%          12.3k             0                0
//! ```

use super::grid;
use super::text;
use super::{fmt, title};
use crate::app::{App, Tab, TableHit};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};

pub fn draw(f: &mut Frame, area: Rect, app: &App) {
    if app.show_tree() {
        return super::pause_tree::draw(f, area, app);
    }
    let v = app.arranged(Tab::Pfc);
    // One selection walks both tables: the port rows, then the host rows.
    let sel = app.selected_in(Tab::Pfc, &v);
    let in_hosts = sel.and_then(|i| i.checked_sub(v.rows.len()));
    let h = area.height as usize;
    let top = (v.rows.len() + 2).min(h / 2).max(h.min(3));
    let [t1, b1, t2, b2] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(top.saturating_sub(1) as u16),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(area);
    let in_ports = sel.filter(|i| *i < v.rows.len());
    let hosts = grid::window(b2, in_hosts);
    let (first, last) = (v.rows.len() + hosts.start, v.rows.len() + hosts.end);
    let v = app.filled(Tab::Pfc, v, &[grid::window(b1, in_ports), first..last]);
    let since = if app.mark().is_some() {
        "mark"
    } else {
        "start"
    };
    let stale: String = v.notes.iter().map(|n| format!("{n}   ")).collect();
    text::put(
        f,
        t1,
        title(
            app,
            "Switch PFC per port (RxPPP/TxPPP)".into(),
            format!(
                "{}   {stale}totals since {} ({since})",
                super::hidden_note(app, v.cols, area.width),
                fmt::clock(app.baseline())
            ),
        ),
    );
    grid::draw(
        f,
        b1,
        app,
        grid::Table {
            tab: Tab::Pfc,
            cols: v.cols,
            rows: &v.rows,
            empty: "no switch ports",
            selected: in_ports,
        },
    );
    text::put(
        f,
        t2,
        title(
            app,
            "Host NIC pause (ethtool -S)".into(),
            format!(
                "{}   pause% = time paused in the newest interval; warn above {}%",
                super::hidden_note(app, v.extra_cols, area.width),
                app.cfg().alerts.pause_time_percent
            ),
        ),
    );
    // Clicks select in the table that holds the selection (one click map): the host table's
    // rows come after the port table's in the selection's order.
    let hits = app.hits.borrow().table.clone();
    grid::draw(
        f,
        b2,
        app,
        grid::Table {
            tab: Tab::Pfc,
            cols: v.extra_cols,
            rows: &v.extra,
            empty: "no nodes match",
            selected: in_hosts,
        },
    );
    let mut h = app.hits.borrow_mut();
    h.table = match (in_hosts, h.table.take()) {
        (Some(_), Some(t)) => Some(TableHit {
            first: t.first + v.rows.len(),
            ..t
        }),
        _ => hits,
    };
}
