//! Alerts a human can read: conditions rolled up into lines. Ports of one switch with the same
//! condition become one line (`NX_AI_Leaf1 ii1/1/1-6  PFC 25000 frames/s · 6 ports, total 150k`);
//! a node's per-device counter noise becomes one line per node; alerts that belong to the open
//! episode are marked so the Overview shows them under it. Newest and most severe first. Every
//! underlying alert stays reachable: a line keeps its members (the `A` list shows them).

use super::{Alert, Alerts, Severity, Subject};
use crate::app::Tab;
use crate::app::episodes::{Episode, text::si};
use crate::app::pairing::Links;
use crate::app::ports::compress;
use crate::metrics::Ts;
use std::collections::BTreeMap;

mod touched;
use touched::{belongs, touched};

/// One line of the alerts list.
#[derive(Clone, Debug, PartialEq)]
pub struct Rolled {
    /// What mute refers to (stable while the condition lasts, whichever ports join it).
    pub key: String,
    pub severity: Severity,
    pub tab: Tab,
    /// The newest member's start.
    pub since: Ts,
    /// Member alert ids.
    pub members: Vec<String>,
    /// Every member acknowledged.
    pub acked: bool,
    pub muted: bool,
    /// Belongs to the open episode.
    pub episode: bool,
    /// The row name Enter selects on `tab`.
    pub row: String,
}

/// `PFC 25000 frames/s (> 1000)` → `PFC # frames/s (> #)`: alerts differing only in numbers
/// are the same condition. The plain form [`Shape`]'s order and [`Group::key`] are checked against.
#[cfg(test)]
fn shape(what: &str) -> String {
    shape_chars(what).collect()
}

/// [`shape`]'s characters, without allocating.
fn shape_chars(what: &str) -> impl Iterator<Item = char> + '_ {
    let mut in_num = false;
    what.chars().filter_map(move |c| {
        if c.is_ascii_digit() || (in_num && c == '.') {
            let first = !in_num;
            in_num = true;
            first.then_some('#')
        } else {
            in_num = false;
            Some(c)
        }
    })
}

/// An alert's condition text compared by its [`shape`].
#[derive(Clone, Copy)]
struct Shape<'a>(&'a str);

impl PartialEq for Shape<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Shape<'_> {}

impl PartialOrd for Shape<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Shape<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        shape_chars(self.0).cmp(shape_chars(other.0))
    }
}

/// How alerts group: ports by (switch, condition), RDMA counters by node, the rest alone.
/// Borrowed from the alert, so grouping allocates nothing per alert; [`Group::key`] is the text
/// mute refers to.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Group<'a> {
    Port {
        switch: &'a str,
        severity: Severity,
        what: Shape<'a>,
    },
    Rdma(&'a str),
    Alone(&'a str),
}

impl<'a> Group<'a> {
    fn of(a: &'a Alert) -> Self {
        match &a.subject {
            Subject::Port { switch, .. } => Group::Port {
                switch,
                severity: a.severity,
                what: Shape(&a.what),
            },
            Subject::Node(n) if a.id.starts_with("rdma ") => Group::Rdma(n),
            _ => Group::Alone(&a.id),
        }
    }

    fn key(&self) -> String {
        match self {
            Group::Port {
                switch,
                severity,
                what,
            } => {
                let what: String = shape_chars(what.0).collect();
                format!("port {switch} {severity:?} {what}")
            }
            Group::Rdma(n) => format!("rdma {n}"),
            Group::Alone(id) => id.to_string(),
        }
    }
}

fn line_of(key: String, members: &[&Alert], al: &Alerts) -> Rolled {
    let first = members[0];
    let severity = members
        .iter()
        .map(|a| a.severity)
        .max()
        .unwrap_or(first.severity);
    let since = members.iter().map(|a| a.since).max().unwrap_or(first.since);
    let row = row_of(members).to_string();
    Rolled {
        muted: al.muted.contains(&key),
        key,
        severity,
        tab: first.tab,
        since,
        members: members.iter().map(|a| a.id.clone()).collect(),
        acked: members.iter().all(|a| al.acked.contains(&a.id)),
        episode: false,
        row,
    }
}

/// The row Enter selects for a line of `members` (`members[0]` first, as grouped): a port
/// line's worst port, the only value-dependent part of a line.
fn row_of<'a>(members: &[&'a Alert]) -> &'a str {
    let first = members[0];
    let worst = members
        .iter()
        .max_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)))
        .copied()
        .unwrap_or(first);
    match (&first.subject, &worst.subject) {
        (Subject::Port { .. }, Subject::Port { port, .. }) if members.len() > 1 => port,
        (Subject::Port { port, .. }, _) => port,
        (Subject::Node(n) | Subject::Source(n), _) => n,
        (Subject::Peer { peer, .. }, _) => peer,
    }
}

/// A line's text from its members (`members[0]` first, as grouped): ports as ranges with the
/// worst one's condition and the total, a node's RDMA counters summed per counter, else the
/// alert's own subject and condition.
fn text_of(members: &[&Alert]) -> String {
    let Some(first) = members.first() else {
        return String::new();
    };
    match &first.subject {
        Subject::Port { switch, .. } if members.len() > 1 => {
            let worst = members
                .iter()
                .max_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)))
                .copied()
                .unwrap_or(first);
            let ports: Vec<&str> = members
                .iter()
                .filter_map(|a| match &a.subject {
                    Subject::Port { port, .. } => Some(port.as_str()),
                    _ => None,
                })
                .collect();
            let ports = compress(&ports);
            let total: f64 = members.iter().filter_map(|a| a.value).sum();
            format!(
                "{switch} {}  {} · {} ports, total {}",
                ports,
                worst.what,
                members.len(),
                si(total)
            )
        }
        Subject::Node(n) if members.len() > 1 => {
            // `rdma <counter> [node, device]`: one sum per counter over the node's devices.
            let mut by: BTreeMap<&str, f64> = BTreeMap::new();
            for a in members {
                let c = a.id.split(' ').nth(1).unwrap_or("?");
                *by.entry(c).or_default() += a.value.unwrap_or(0.0);
            }
            let parts: Vec<String> = by.iter().map(|(c, v)| format!("{c} +{v:.0}")).collect();
            format!(
                "{n}  RDMA errors in 60 s: {} ({} device counters)",
                parts.join(", "),
                members.len()
            )
        }
        s => format!("{}  {}", s.describe(), first.what),
    }
}

impl Rolled {
    /// The line's text, made from its members in `al` (the alerts the line was rolled from).
    /// Made on demand: a screen shows a dozen of the ~600 lines at 512 nodes, and formatting
    /// every one was a third of a rollup.
    pub fn text(&self, al: &Alerts) -> String {
        let members: Vec<&Alert> = self.members.iter().filter_map(|id| al.get(id)).collect();
        text_of(&members)
    }
}

impl Alerts {
    /// The active alerts as lines: those of `open` (the episode open at the view time) first, then by severity and newest start;
    /// muted ones last; ties by key, so the order never depends on how groups were gathered.
    pub fn rolled(&self, open: Option<&Episode>, links: &Links) -> Vec<Rolled> {
        let mut groups: BTreeMap<Group, Vec<&Alert>> = BTreeMap::new();
        for a in self.active.values() {
            groups.entry(Group::of(a)).or_default().push(a);
        }
        let t = open.map(|e| touched(e, links));
        let mut out: Vec<Rolled> = groups
            .iter()
            .map(|(g, m)| {
                let mut r = line_of(g.key(), m, self);
                r.episode = t.as_ref().is_some_and(|t| m.iter().any(|a| belongs(a, t)));
                r
            })
            .collect();
        out.sort_by(|a, b| {
            (
                a.muted,
                !a.episode,
                std::cmp::Reverse(a.severity),
                std::cmp::Reverse(a.since),
                &a.key,
            )
                .cmp(&(
                    b.muted,
                    !b.episode,
                    std::cmp::Reverse(b.severity),
                    std::cmp::Reverse(b.since),
                    &b.key,
                ))
        });
        out
    }

    /// Acknowledge every member of a line (or take the acknowledgement back if all were).
    pub fn toggle_ack(&mut self, line: &Rolled) {
        if line.acked {
            for m in &line.members {
                self.acked.remove(m);
            }
        } else {
            self.acked.extend(line.members.iter().cloned());
        }
        self.generation = crate::metrics::store::next_generation();
    }

    /// Mute a line's key until restart (or unmute it).
    pub fn toggle_mute(&mut self, line: &Rolled) {
        if !self.muted.remove(&line.key) {
            self.muted.insert(line.key.clone());
        }
        self.generation = crate::metrics::store::next_generation();
    }

    /// The active alert with this id (a rolled line's member).
    pub fn get(&self, id: &str) -> Option<&Alert> {
        self.active.get(id)
    }
}

#[cfg(test)]
mod tests;
