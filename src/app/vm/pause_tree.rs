//! The pause-tree view (`p` on the PFC tab, `p` on an episode in the episodes list): the tree
//! as indented lines, under a title that says which tree it is (now, or an episode's PFC peak)
//! and how much the fabric graph knows.

use crate::app::App;
use crate::app::fabric::pause_tree::PauseTree;
use crate::app::fabric::pause_tree::text::{TreeLine, lines};
use crate::metrics::human;

pub struct TreeView {
    pub title: String,
    pub note: String,
    pub lines: Vec<TreeLine>,
}

/// Which tree the view shows, and what its title says of it.
struct Shown<'a> {
    tree: &'a PauseTree,
    when: String,
}

/// The episode picked in the episodes list; else, under time travel, the episode at the cursor
/// (its peak is the tree of the past the cursor is in); else the live tree.
fn shown(app: &App) -> Shown<'_> {
    let all = app.episodes().all();
    let picked = match app.tree_of() {
        Some(id) => all.iter().find(|e| e.id == id).copied(),
        None if app.travel().is_some() => app.episode_in_view(),
        None => None,
    };
    if let Some(ep) = picked {
        if let Some(p) = &ep.peak_tree {
            return Shown {
                tree: &p.tree,
                when: format!("episode {} at its PFC peak, {}", ep.id, human::clock(p.at)),
            };
        }
    }
    let when = match (picked, app.travel()) {
        (Some(ep), _) => format!(
            "live {}: episode {} kept no tree (no PFC in it)",
            human::clock(app.now()),
            ep.id
        ),
        // The tree is of the live rates: the cursor is in no episode.
        (None, Some(_)) => format!(
            "live {}, the cursor is in no episode",
            human::clock(app.now())
        ),
        (None, None) => human::clock(app.now()),
    };
    Shown {
        tree: app.pause_tree(),
        when,
    }
}

pub fn of(app: &App) -> TreeView {
    let Shown { tree: t, when } = shown(app);
    let f = app.fabric();
    let roots = t.roots.len();
    let hosts = t.paused_hosts.len();
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
