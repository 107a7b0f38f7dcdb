//! Alerts, evaluated from the store. Each names where its data is (a tab and a
//! row subject) and keeps the time it started; it ends once its condition has been absent for a
//! while, so a single quiet poll does not make it flap. Thresholds come from config `[alerts]`.

use super::Tab;
use super::pairing::Links;
use crate::config::Config;
use crate::metrics::store::WindowsCache;
use crate::metrics::{Store, Ts};
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, HashSet, VecDeque};

mod ids;
mod rollup;
mod rules;
pub use ids::EvalIdsCache;
pub use rollup::Rolled;
pub use rules::Graph;
use rules::find;

/// RoCE rides PFC priority 3 in this fabric (the reference lab: docs/architecture.md, "Config").
pub const ROCE_PRIORITY: &str = "3";
/// "Increasing" means: grew within this window.
pub const WINDOW_MS: i64 = 60_000;
/// How far back the evaluation's kept intervals reach (`WindowsCache::keeping`): the window and a
/// late poll's margin (a window they do not cover is read from older runs, the same numbers).
pub const KEPT_MS: i64 = WINDOW_MS + 5_000;
/// An alert whose condition went away stays this long (state changes: [`CHANGE_HOLD_MS`]).
const HOLD_MS: i64 = 10_000;
const CHANGE_HOLD_MS: i64 = 60_000;
const HISTORY: usize = 50;
const RDMA_ERRORS: [&str; 4] = [
    "rp_cnp_ignored",
    "out_of_sequence",
    "packet_seq_err",
    "local_ack_timeout_err",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warn,
    Crit,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Warn => "WARN",
            Severity::Crit => "CRIT",
        }
    }
}

/// The row an alert belongs to, so tables can mark it where the data is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subject {
    Source(String),
    Node(String),
    Port { switch: String, port: String },
    Peer { peer: String, transport: String },
}

impl Subject {
    pub fn describe(&self) -> String {
        match self {
            Subject::Source(s) | Subject::Node(s) => s.clone(),
            Subject::Port { switch, port } => format!("{switch} {port}"),
            Subject::Peer { peer, transport } => format!("{peer} ({transport})"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Alert {
    /// Stable key: kind + subject (ack and mute refer to it).
    pub id: String,
    /// The number the condition is about (frames/s, drops, pause share), for rolled-up totals.
    pub value: Option<f64>,
    pub severity: Severity,
    pub tab: Tab,
    pub subject: Subject,
    pub what: String,
    pub since: Ts,
    pub last_seen: Ts,
    /// Set when it ended (history only).
    pub ended: Option<Ts>,
    hold: i64,
    /// The evaluation that last found it ([`Alerts::evaluations`]).
    seen_in: u64,
}

#[derive(Debug, Default)]
pub struct Alerts {
    /// Keyed by a stable id (kind + subject), so an ongoing alert keeps its start time.
    active: BTreeMap<String, Alert>,
    /// Ended alerts, newest last.
    pub history: VecDeque<Alert>,
    /// Worst active severity per subject (rows look themselves up every frame).
    by_subject: FxHashMap<Subject, Severity>,
    /// Changes whenever the alerts may have (`crate::metrics::store::next_generation`).
    generation: u64,
    /// Acknowledged alert ids (dimmed, still counted); forgotten when the alert ends.
    pub acked: HashSet<String>,
    /// Muted rollup keys: hidden from the Overview until restart, still listed under `A`.
    pub muted: HashSet<String>,
    /// How many times every condition was evaluated (their cost bounds the TUI's: at most
    /// once a second).
    evaluations: u64,
}

impl Alerts {
    /// Active alerts, worst and oldest first.
    pub fn active(&self) -> Vec<&Alert> {
        let mut v: Vec<&Alert> = self.active.values().collect();
        v.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.since.cmp(&b.since)));
        v
    }

    pub fn count(&self, sev: Severity) -> usize {
        self.active.values().filter(|a| a.severity == sev).count()
    }

    /// The worst active alert on a row, for marking it where the data is.
    pub fn worst_for(&self, subject: &Subject) -> Option<Severity> {
        self.by_subject.get(subject).copied()
    }

    /// Worst alert of a tab (for the tab bar).
    pub fn worst_in(&self, tab: Tab) -> Option<Severity> {
        self.active
            .values()
            .filter(|a| a.tab == tab)
            .map(|a| a.severity)
            .max()
    }

    /// Changes whenever the alerts may have (the tabs' kept views depend on it).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Re-evaluate every condition at `now`; returns whether the set of alerts changed.
    pub fn evaluate(&mut self, store: &Store, cfg: &Config, links: &Links, now: Ts) -> bool {
        let ids = EvalIdsCache::of(store);
        let pfc = super::episodes::port_pfc_in(store, &ids);
        self.evaluate_with(store, cfg, links, now, &pfc, &ids, None, None)
    }

    /// [`Alerts::evaluate`] with the series resolved (kept while the store's set of series
    /// stays) and the ports' PFC rates already read (`episodes::port_pfc_in` of the same store;
    /// the episode detector reads them too); counters' windows from `windows`' kept intervals
    /// where given (the same numbers as the store's, [`WindowsCache`]), else from the store.
    #[allow(clippy::too_many_arguments)]
    pub fn evaluate_with(
        &mut self,
        store: &Store,
        cfg: &Config,
        links: &Links,
        now: Ts,
        port_pfc: &super::episodes::PortRates,
        ids: &EvalIdsCache,
        windows: Option<&mut WindowsCache>,
        graph: Option<rules::Graph<'_>>,
    ) -> bool {
        self.evaluations += 1;
        let found = find(store, cfg, links, now, port_pfc, ids, windows, graph);
        let mut changed = false;
        // The set of alerts or a severity moved (what the rows' marks are made of).
        let mut regroup = false;
        // What the rolled-up lines and the rows' marks show moved (a value too): only then is
        // the generation bumped, so an evaluation that changed nothing keeps the kept views.
        let mut shown = false;
        // Each alert found is marked with this evaluation (not a set of the ids found: one
        // hashed and dropped every second was work each evaluation did for nothing).
        let this = self.evaluations;
        for f in found {
            match self.active.get_mut(&f.id) {
                Some(a) => {
                    let worse_or_better = a.severity != f.severity;
                    regroup |= worse_or_better;
                    let what_moved = a.what != f.what;
                    changed |= worse_or_better || what_moved;
                    shown |= a.value != f.value;
                    a.value = f.value;
                    a.severity = f.severity;
                    a.what = f.what;
                    a.last_seen = now;
                    a.hold = f.hold;
                    a.seen_in = this;
                }
                None => {
                    (changed, regroup) = (true, true);
                    self.active.insert(
                        f.id.clone(),
                        Alert {
                            id: f.id,
                            value: f.value,
                            severity: f.severity,
                            tab: f.tab,
                            subject: f.subject.owned(),
                            what: f.what,
                            since: f.since.unwrap_or(now),
                            last_seen: now,
                            ended: None,
                            hold: f.hold,
                            seen_in: this,
                        },
                    );
                }
            }
        }
        let gone: Vec<String> = self
            .active
            .iter()
            .filter(|(_, a)| a.seen_in != this && now - a.last_seen >= a.hold)
            .map(|(id, _)| id.clone())
            .collect();
        for id in gone {
            if let Some(mut a) = self.active.remove(&id) {
                (changed, regroup) = (true, true);
                self.acked.remove(&id);
                a.ended = Some(now);
                self.history.push_back(a);
                if self.history.len() > HISTORY {
                    self.history.pop_front();
                }
            }
        }
        // Moves only with the set of alerts or a severity (an alert's subject never changes):
        // not rebuilt (a subject cloned an alert) when only values and texts moved.
        if regroup {
            self.group_by_subject();
        }
        if changed || shown {
            self.touch();
        }
        changed
    }

    /// The worst active severity per subject, made again from the active alerts.
    fn group_by_subject(&mut self) {
        self.by_subject.clear();
        for a in self.active.values() {
            let e = self
                .by_subject
                .entry(a.subject.clone())
                .or_insert(a.severity);
            *e = (*e).max(a.severity);
        }
    }

    /// Mark the alerts changed for the kept views (the open episode, drawn with them, moved).
    pub fn touch(&mut self) {
        self.generation = crate::metrics::store::next_generation();
    }

    /// The alerts as they stood at `at`, for time travel: every condition evaluated on `past`
    /// (the store as it was then), with the start seen live where that covers `at` (a line reads
    /// "05:32:10 (12 s ago)" from the cursor, not "since the cursor"), and the alerts seen live at
    /// `at` that the evaluation alone does not find. Acknowledgements and mutes are the live ones.
    pub fn as_of(&self, past: &Store, cfg: &Config, links: &Links, at: Ts) -> Alerts {
        let mut then = Alerts::default();
        then.evaluate(past, cfg, links, at);
        // Seen live at `at`: still active and started by then (an alert that ends and comes back
        // starts anew), or ended after it. These include alerts held after their condition went
        // (kept [`HOLD_MS`]), which one evaluation at `at` cannot know of.
        let seen = self.active.values().chain(self.history.iter());
        for a in seen.filter(|a| a.since <= at && a.ended.is_none_or(|e| e > at)) {
            match then.active.get_mut(&a.id) {
                Some(t) => t.since = t.since.min(a.since),
                None => {
                    let mut held = a.clone();
                    held.ended = None;
                    then.active.insert(a.id.clone(), held);
                }
            }
        }
        then.group_by_subject();
        then.acked = self.acked.clone();
        then.muted = self.muted.clone();
        then.touch();
        then
    }
}

#[cfg(test)]
mod tests;
