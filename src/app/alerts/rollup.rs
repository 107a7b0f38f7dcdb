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
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::ops::Bound;

mod touched;
pub use touched::KeptTouched;
use touched::belongs;
#[cfg(test)]
use touched::trim_prefixes;

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
    /// A port line's ports as [`Rolled::text`] writes them, made once for the line.
    ports: PortsText,
}

/// A port line's members' ports compressed (`Ethernet1/1-8`), with how many members they were
/// made from: a line's members are fixed, and compressing them again for every frame was ~9 K
/// instructions a line (issue #20). A memo: it takes no part in comparing lines.
#[derive(Clone, Debug, Default)]
struct PortsText(OnceCell<(usize, String)>);

impl PartialEq for PortsText {
    fn eq(&self, _: &Self) -> bool {
        true
    }
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

/// Whether two condition texts have one [`shape`] (differ only in numbers).
pub(super) fn same_shape(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    // The texts of one alert a second apart differ in a count or two: their common ends are
    // skipped as bytes (equal bytes shape alike), each cut back to where a token starts in
    // both (after / at a byte that is no digit and no '.'), and only the middles shaped.
    // Shaping the whole texts was ~900 instructions an alert, every second (issue #20).
    let num = |c: &u8| c.is_ascii_digit() || *c == b'.';
    let mut head = common_head(a, b);
    while head > 0 && num(&a[head - 1]) {
        head -= 1;
    }
    let (a, b) = (&a[head..], &b[head..]);
    let mut tail = common_tail(a, b);
    while tail > 0 && num(&a[a.len() - tail]) {
        tail -= 1;
    }
    same_tokens(&a[..a.len() - tail], &b[..b.len() - tail])
}

/// How many bytes `a` and `b` start with alike: eight at a time, then one by one (a byte
/// iterator's zip was ~4 instructions a byte, twice a text).
fn common_head(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n && a[i..i + 8] == b[i..i + 8] {
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    i
}

/// How many bytes `a` and `b` end with alike, as [`common_head`] counts them.
fn common_tail(a: &[u8], b: &[u8]) -> usize {
    let (la, lb) = (a.len(), b.len());
    let n = la.min(lb);
    let mut i = 0;
    while i + 8 <= n && a[la - i - 8..la - i] == b[lb - i - 8..lb - i] {
        i += 8;
    }
    while i < n && a[la - i - 1] == b[lb - i - 1] {
        i += 1;
    }
    i
}

/// Whether `a` and `b` shape alike, token by token. By bytes, a number's run skipped at once:
/// digits and '.' are ASCII, so this is the UTF-8 of [`shape_chars`]' output; its char
/// iterators were ~1.2k instructions a comparison (issue #20).
fn same_tokens(a: &[u8], b: &[u8]) -> bool {
    let (mut i, mut j) = (0, 0);
    loop {
        match (shape_token(a, i), shape_token(b, j)) {
            (None, None) => return true,
            (Some((x, ni)), Some((y, nj))) if x == y => (i, j) = (ni, nj),
            _ => return false,
        }
    }
}

/// [`shape_chars`]' next byte from `s[i..]` (`#` for a number) and where the one after starts.
fn shape_token(s: &[u8], i: usize) -> Option<(u8, usize)> {
    let c = *s.get(i)?;
    if !c.is_ascii_digit() {
        return Some((c, i + 1));
    }
    let run = s[i + 1..]
        .iter()
        .take_while(|c| c.is_ascii_digit() || **c == b'.')
        .count();
    Some((b'#', i + 1 + run))
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

    /// Pieces pushed rather than `format!`ed: made for every line of every rollup.
    fn key(&self) -> String {
        match self {
            Group::Port {
                switch,
                severity,
                what,
            } => {
                let sev = match severity {
                    Severity::Warn => "Warn",
                    Severity::Crit => "Crit",
                };
                let mut k = String::with_capacity(switch.len() + what.0.len() + 12);
                for part in ["port ", switch, " ", sev, " "] {
                    k.push_str(part);
                }
                k.extend(shape_chars(what.0));
                k
            }
            Group::Rdma(n) => ["rdma ", n].concat(),
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
        ports: PortsText::default(),
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
#[cfg(test)]
fn text_of(members: &[&Alert]) -> String {
    text_with(members, &PortsText::default())
}

/// [`text_of`], a port line's ports taken from `kept` when made from as many members.
fn text_with(members: &[&Alert], kept: &PortsText) -> String {
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
            let compressed = || {
                let ports: Vec<&str> = members
                    .iter()
                    .filter_map(|a| match &a.subject {
                        Subject::Port { port, .. } => Some(port.as_str()),
                        _ => None,
                    })
                    .collect();
                (members.len(), compress(&ports))
            };
            let made = kept.0.get_or_init(compressed);
            let fresh;
            let ports = if made.0 == members.len() {
                &made.1
            } else {
                fresh = compressed();
                &fresh.1
            };
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
        let mut members = Vec::new();
        al.members_of(&self.members, &mut members);
        text_with(&members, &self.ports)
    }
}

impl Alerts {
    /// The active alerts as lines: the open episode's first, then by severity and newest start;
    /// muted ones last; ties by key, so the order never depends on how groups were gathered.
    pub fn rolled(&self, open: Option<&Episode>, links: &Links) -> Vec<Rolled> {
        self.rolled_kept(open, links, 0, &mut KeptTouched::default())
    }

    /// [`Alerts::rolled`] with the open episode's subjects kept in `kept` while it and the links
    /// (of generation `links_gen`) stay the same.
    pub fn rolled_kept(
        &self,
        open: Option<&Episode>,
        links: &Links,
        links_gen: u64,
        kept: &mut KeptTouched,
    ) -> Vec<Rolled> {
        let mut groups: BTreeMap<Group, Vec<&Alert>> = BTreeMap::new();
        for a in self.active.values() {
            groups.entry(Group::of(a)).or_default().push(a);
        }
        let t = open
            .filter(|e| e.end.is_none())
            .map(|e| kept.of(e, links, links_gen));
        let mut out: Vec<Rolled> = groups
            .iter()
            .map(|(g, m)| {
                let mut r = line_of(g.key(), m, self);
                r.episode = t.is_some_and(|t| m.iter().any(|a| belongs(a, t)));
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

    /// `lines` as rolled at this [`Alerts::lines_generation`] (and the same open episode's
    /// subjects and links), brought up to its members' values: a port line's row is its worst
    /// port's; nothing else in a line depends on a value. A rollup regroups every alert (~600
    /// lines at 512 nodes) where this reads only the members of the lines of several ports.
    pub fn rows_again(&self, lines: &mut [Rolled]) {
        let mut members: Vec<&Alert> = Vec::new();
        for line in lines.iter_mut().filter(|l| l.members.len() > 1) {
            self.members_of(&line.members, &mut members);
            if members.len() == line.members.len()
                && matches!(members[0].subject, Subject::Port { .. })
            {
                let row = row_of(&members);
                if line.row != row {
                    line.row.clear();
                    line.row.push_str(row);
                }
            }
        }
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
        self.lines_generation = self.generation;
    }

    /// Mute a line's key until restart (or unmute it).
    pub fn toggle_mute(&mut self, line: &Rolled) {
        if !self.muted.remove(&line.key) {
            self.muted.insert(line.key.clone());
        }
        self.generation = crate::metrics::store::next_generation();
        self.lines_generation = self.generation;
    }

    /// The active alert with this id (a rolled line's member).
    pub fn get(&self, id: &str) -> Option<&Alert> {
        self.active.get(id)
    }

    /// The active alerts of `ids` in their order, those that ended left out, in `out`: what
    /// `ids.iter().filter_map(|id| self.get(id))` gives. A line's members are rolled in id
    /// order, so they are read in one walk from the first: a look-up each compared ~10 long
    /// ids, ~85 K instructions a frame over the Overview's lines at N=8 (issue #20). Past a
    /// member that ended (or ids out of order) the rest are looked up one by one.
    pub fn members_of<'a>(&'a self, ids: &[String], out: &mut Vec<&'a Alert>) {
        out.clear();
        let mut want = ids.iter().peekable();
        let Some(first) = want.peek() else {
            return;
        };
        let from = (Bound::Included(first.as_str()), Bound::Unbounded);
        for (id, a) in self.active.range::<str, _>(from) {
            let Some(w) = want.peek() else {
                break;
            };
            if id == *w {
                out.push(a);
                want.next();
            } else if id.as_str() > w.as_str() {
                // `w` is not active, or `ids` are not in order.
                break;
            }
        }
        out.extend(want.filter_map(|id| self.get(id)));
    }
}

#[cfg(test)]
mod tests;
