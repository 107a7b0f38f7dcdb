//! The PFC tab's pause-tree view (`p`): the tree the last evaluation made, as indented lines,
//! under a title that says when it is of and how much the fabric graph knows.

use crate::app::App;
use crate::app::fabric::pause_tree::text::{TreeLine, lines};
use crate::metrics::human;

pub struct TreeView {
    pub title: String,
    pub note: String,
    pub lines: Vec<TreeLine>,
}

pub fn of(app: &App) -> TreeView {
    let t = app.pause_tree();
    let f = app.fabric();
    let roots = t.roots.len();
    let hosts = t.paused_hosts.len();
    let when = match app.travel() {
        // The tree is of the live rates: the cursor's past is on the tables.
        Some(_) => format!("live {}, not the cursor", human::clock(app.now())),
        None => human::clock(app.now()),
    };
    let conflicts = match f.conflicts.len() {
        0 => String::new(),
        n => format!(", {n} port{} claimed twice", if n == 1 { "" } else { "s" }),
    };
    TreeView {
        title: format!(
            "PFC pause tree ({when}): {roots} root{}, {hosts} node{} paused",
            if roots == 1 { "" } else { "s" },
            if hosts == 1 { "" } else { "s" }
        ),
        note: format!(
            "   {} links known ({} switch-switch){conflicts}   p: tables",
            f.links.len(),
            f.switch_links().count()
        ),
        lines: lines(t),
    }
}
