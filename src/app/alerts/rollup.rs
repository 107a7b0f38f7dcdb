//! Alerts a human can read: conditions rolled up into lines. Ports of one switch with the same
//! condition become one line (`NX_AI_Leaf1 ii1/1/1-6  PFC 25000 frames/s · 6 ports, total 150k`);
//! a node's per-device counter noise becomes one line per node; alerts that belong to the open
//! episode are marked so the Overview shows them under it. Newest and most severe first. Every
//! underlying alert stays reachable: a line keeps its members (the `A` list shows them).

use super::{Alert, Alerts, Severity, Subject};
use crate::app::Tab;
use crate::app::episodes::{Episode, Layer, port_of, switch_of, text::si};
use crate::app::pairing::Links;
use crate::app::ports::compress;
use crate::metrics::Ts;
use std::collections::{BTreeMap, HashSet};

/// One line of the alerts list.
#[derive(Clone, Debug, PartialEq)]
pub struct Rolled {
    /// What mute refers to (stable while the condition lasts, whichever ports join it).
    pub key: String,
    pub severity: Severity,
    pub tab: Tab,
    pub text: String,
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
/// are the same condition.
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
            } => format!("port {switch} {severity:?} {}", shape(what.0)),
            Group::Rdma(n) => format!("rdma {n}"),
            Group::Alone(id) => id.to_string(),
        }
    }
}

/// The subjects an episode touches: its ports, the nodes behind them and those that paused.
/// Borrowed from the episode and the links (an episode at 512 nodes names hundreds).
struct Touched<'a> {
    ports: HashSet<&'a str>,
    nodes: HashSet<&'a str>,
    peers: HashSet<&'a str>,
}

fn touched<'a>(ep: &'a Episode, links: &'a Links) -> Touched<'a> {
    let mut t = Touched {
        ports: HashSet::new(),
        nodes: ep.culprit_nodes.iter().map(String::as_str).collect(),
        peers: HashSet::new(),
    };
    for p in &ep.chain {
        match p.layer {
            Layer::Pfc | Layer::Drops => {
                let port = port_of(&p.key);
                t.nodes.extend(links.behind(switch_of(&p.key), port));
                t.ports.insert(port);
            }
            Layer::HostPause => {
                t.nodes.insert(p.key.trim_start_matches("pause "));
            }
            Layer::Rtt => {
                let k = p.key.trim_start_matches("rtt ");
                t.peers.insert(k.split(' ').next().unwrap_or(""));
            }
            _ => {}
        }
    }
    t
}

fn belongs(a: &Alert, t: &Touched) -> bool {
    match &a.subject {
        Subject::Port { port, .. } => t.ports.contains(port.as_str()),
        Subject::Node(n) => t.nodes.contains(n.as_str()),
        Subject::Peer { peer, .. } => t.peers.contains(peer.as_str()),
        Subject::Source(_) => false,
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
    let worst = members
        .iter()
        .max_by(|a, b| a.value.unwrap_or(0.0).total_cmp(&b.value.unwrap_or(0.0)))
        .copied()
        .unwrap_or(first);
    let (text, row) = match &first.subject {
        Subject::Port { switch, port } if members.len() > 1 => {
            let ports: Vec<&str> = members
                .iter()
                .filter_map(|a| match &a.subject {
                    Subject::Port { port, .. } => Some(port.as_str()),
                    _ => None,
                })
                .collect();
            let total: f64 = members.iter().filter_map(|a| a.value).sum();
            (
                format!(
                    "{switch} {}  {} · {} ports, total {}",
                    compress(&ports),
                    worst.what,
                    members.len(),
                    si(total)
                ),
                match &worst.subject {
                    Subject::Port { port, .. } => port.clone(),
                    _ => port.clone(),
                },
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
            (
                format!(
                    "{n}  RDMA errors in 60 s: {} ({} device counters)",
                    parts.join(", "),
                    members.len()
                ),
                n.clone(),
            )
        }
        s => (
            format!("{}  {}", s.describe(), first.what),
            match s {
                Subject::Port { port, .. } => port.clone(),
                Subject::Node(n) | Subject::Source(n) => n.clone(),
                Subject::Peer { peer, .. } => peer.clone(),
            },
        ),
    };
    Rolled {
        muted: al.muted.contains(&key),
        key,
        severity,
        tab: first.tab,
        text,
        since,
        members: members.iter().map(|a| a.id.clone()).collect(),
        acked: members.iter().all(|a| al.acked.contains(&a.id)),
        episode: false,
        row,
    }
}

impl Alerts {
    /// The active alerts as lines: the open episode's first, then by severity and newest start;
    /// muted ones last; ties by key, so the order never depends on how groups were gathered.
    pub fn rolled(&self, open: Option<&Episode>, links: &Links) -> Vec<Rolled> {
        let mut groups: BTreeMap<Group, Vec<&Alert>> = BTreeMap::new();
        for a in self.active.values() {
            groups.entry(Group::of(a)).or_default().push(a);
        }
        let t = open.filter(|e| e.end.is_none()).map(|e| touched(e, links));
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
mod tests {
    use super::{Group, Severity, Shape, shape};

    /// Conditions group by their shape: equal exactly when the shaped texts are, and the key
    /// mute refers to is the shaped text.
    #[test]
    fn shapes_compare_as_their_text() {
        let cases = [
            (
                "PFC 25000 frames/s (> 1000)",
                "PFC 3 frames/s (> 1000)",
                true,
            ),
            (
                "PFC 25000 frames/s (> 1000)",
                "PFC 3 frames/s (> 10.5)",
                true,
            ),
            ("drops 1.5 /s", "drops 2 /s", true),
            ("drops 2 /s", "drops 2 /min", false),
            ("pause 40 %", "pause 40%", false),
            ("a1b", "a22b", true),
            ("a1.b", "a2b", true),
            ("a.1", "a1", false),
            ("", "0", false),
        ];
        for (a, b, same) in cases {
            let by_text = shape(a).cmp(&shape(b));
            assert_eq!(Shape(a).cmp(&Shape(b)), by_text, "{a:?} vs {b:?}");
            assert_eq!(by_text.is_eq(), same, "{a:?} vs {b:?}");
        }
        let g = Group::Port {
            switch: "leaf1",
            severity: Severity::Warn,
            what: Shape("PFC 25000 frames/s (> 1000)"),
        };
        assert_eq!(g.key(), "port leaf1 Warn PFC # frames/s (> #)");
        assert_eq!(Group::Rdma("gpu1").key(), "rdma gpu1");
        assert_eq!(Group::Alone("lat gpu1").key(), "lat gpu1");
    }
}
