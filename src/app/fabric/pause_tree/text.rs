//! The pause tree in words: indented lines, one a hop, for the PFC tab's tree view, and the one
//! sentence an episode says of it ("PFC root leaf2 Ethernet1/7 -> gpu17 (incast) · spread leaf2
//! -> spine1, spine2 -> leaf1, leaf3 · 24 nodes paused"). Names pass through `safe::line`: LLDP
//! names are remote text.

use super::{PauseTree, Rate, Root};
use crate::app::fabric::{Device, End, Kind};
use crate::metrics::human;
use crate::safe::line as safe;
use std::collections::HashSet;

/// Lines a tree view holds at most (the rest is counted in a last line): memory stays bounded
/// whatever the fabric.
pub const MAX_LINES: usize = 2000;

/// Switches a hop of the sentence's spread names before counting the rest.
pub const SPREAD_NAMES: usize = 3;

/// One line of the tree view: its depth (indentation) and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeLine {
    pub depth: usize,
    pub text: String,
}

fn device(d: &Device) -> String {
    match d.kind {
        Kind::Unknown => format!("? (beyond {})", safe(&d.name)),
        Kind::Unpolled => format!("{} (not polled)", safe(&d.name)),
        Kind::Switch | Kind::Host => safe(&d.name).into_owned(),
    }
}

fn end(e: &End) -> String {
    match (e.device.kind, e.port.is_empty()) {
        (Kind::Unknown, _) | (_, true) => device(&e.device),
        _ => format!("{} {}", safe(&e.device.name), safe(&e.port)),
    }
}

fn rate(r: Rate) -> String {
    match r {
        Rate::PerSec(v) => human::per_sec(Some(v)),
        Rate::Share(s) => format!("paused {}", human::percent(Some(s))),
    }
}

/// `leaf2 Ethernet1/7 -> gpu17 (incast)`.
pub fn root_words(r: &Root) -> String {
    let toward = r
        .toward
        .as_ref()
        .map(|t| format!(" -> {}", end(t)))
        .unwrap_or_default();
    format!("{}{toward} ({})", end(&r.at), r.cause.words())
}

/// The tree as plain text, one line a hop, indented two spaces a hop (the bundle's file).
pub fn indented(t: &PauseTree, margin: usize) -> String {
    lines(t)
        .iter()
        .map(|l| format!("{}{}\n", "  ".repeat(margin + l.depth), l.text))
        .collect()
}

/// The tree view: each root, then the hops its pausing takes, indented one a hop, the rate on
/// each; deadlocks, then the links whose pausing is unknown.
pub fn lines(t: &PauseTree) -> Vec<TreeLine> {
    let mut out = Vec::new();
    let put = |out: &mut Vec<TreeLine>, depth: usize, text: String| {
        if out.len() < MAX_LINES {
            out.push(TreeLine { depth, text });
        }
    };
    if t.edges.is_empty() {
        put(&mut out, 0, "no PFC pausing anywhere".into());
    }
    for cycle in &t.deadlocks {
        let mut names: Vec<String> = cycle.iter().map(|n| safe(n).into_owned()).collect();
        if let Some(first) = names.first().cloned() {
            names.push(first);
        }
        put(
            &mut out,
            0,
            format!("PFC deadlock: {} pause each other", names.join(" -> ")),
        );
    }
    for r in &t.roots {
        let hosts = r.hosts.len();
        put(
            &mut out,
            0,
            format!(
                "root {} · {hosts} node{} paused",
                root_words(r),
                if hosts == 1 { "" } else { "s" }
            ),
        );
        // Depth-first from the root's device; a device reached twice is shown once.
        let Some(start) = t.edges.iter().find(|e| e.pauser.device == r.at.device) else {
            continue;
        };
        let mut seen: HashSet<&Device> = HashSet::from([&start.pauser.device]);
        let mut walk: Vec<(&Device, usize)> = vec![(&start.pauser.device, 1)];
        while let Some((d, depth)) = walk.pop() {
            let outs: Vec<_> = t.edges.iter().filter(|e| e.pauser.device == *d).collect();
            for e in outs.iter().rev() {
                if seen.insert(&e.paused.device) {
                    walk.push((&e.paused.device, depth + 1));
                }
            }
            for e in outs {
                if out.len() >= MAX_LINES {
                    break;
                }
                put(
                    &mut out,
                    depth,
                    format!(
                        "{} pauses {}  {}",
                        end(&e.pauser),
                        end(&e.paused),
                        rate(e.rate)
                    ),
                );
            }
        }
    }
    for u in &t.unknown {
        put(
            &mut out,
            0,
            format!(
                "unknown: whether {} pauses {} (no pause counters)",
                end(&u.toward),
                end(&u.at)
            ),
        );
    }
    let edges = t.edges.len() + t.unknown.len();
    if out.len() >= MAX_LINES && edges > 0 {
        if let Some(last) = out.last_mut() {
            *last = TreeLine {
                depth: 0,
                text: format!("… more than {MAX_LINES} lines, cut"),
            };
        }
    }
    out
}

/// What an episode says of the tree where one switch alone does not tell it: a deadlock, or
/// pausing that spread from its root's switch to others. On one leaf the episode's culprit and
/// spread already say where (the lab), and the same root twice would be noise.
pub fn across_switches(t: &PauseTree) -> Option<String> {
    let crosses = !t.deadlocks.is_empty() || t.roots.first().is_some_and(|r| r.spread.len() > 1);
    if crosses { phrase(t) } else { None }
}

/// What an episode says of the tree: the root of the most paused nodes, the switches the pausing
/// spread to by hops, and how many nodes are paused. `None` where nothing pauses.
pub fn phrase(t: &PauseTree) -> Option<String> {
    let paused = t.paused_hosts.len();
    let nodes = format!("{paused} node{} paused", if paused == 1 { "" } else { "s" });
    if let Some(cycle) = t.deadlocks.first() {
        let mut names: Vec<String> = cycle.iter().map(|n| safe(n).into_owned()).collect();
        if let Some(first) = names.first().cloned() {
            names.push(first);
        }
        return Some(format!("PFC deadlock {} · {nodes}", names.join(" -> ")));
    }
    let r = t.roots.first()?;
    // A hop names a few switches and counts the rest: a sentence, not a list of the fabric.
    let spread: Vec<String> = (r.spread.iter())
        .map(|hop| {
            let mut names: Vec<String> = (hop.iter().take(SPREAD_NAMES))
                .map(|n| safe(n).into_owned())
                .collect();
            if hop.len() > SPREAD_NAMES {
                names.push(format!("+{} more", hop.len() - SPREAD_NAMES));
            }
            names.join(", ")
        })
        .collect();
    let spread = match spread.len() {
        0 | 1 => String::new(),
        _ => format!(" · spread {}", spread.join(" -> ")),
    };
    let more = match t.roots.len() {
        1 => String::new(),
        n => format!(" (+{} more root{})", n - 1, if n == 2 { "" } else { "s" }),
    };
    let prefix = if r.cause.unknown_beyond() {
        "PFC from unknown at"
    } else {
        "PFC root"
    };
    Some(format!(
        "{prefix} {}{more}{spread} · {nodes}",
        root_words(r)
    ))
}
