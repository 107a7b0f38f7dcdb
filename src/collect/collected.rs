//! What a collector sends: one poll of one source, parsed, with its raw outputs for recordings.

use crate::metrics::store::SourceId;
use crate::metrics::{History, Parsed, Store, Ts};
use crate::parse::ParseKind;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What one poll of one source produced.
#[derive(Clone, Debug)]
pub struct Collected {
    pub source: SourceId,
    /// When the answers were taken (midpoint of the poll), from the collector's clock.
    pub at: Ts,
    pub parsed: Parsed,
    /// Raw outputs, for recordings (replay parses them again) and the Log tab (a log
    /// follower's lines); `None` where its collector dropped them ([`KeepRaw`] off).
    pub raw: Option<Vec<(ParseKind, String)>>,
    /// Set when the source's main request failed: the source is down for this poll.
    pub error: Option<String>,
    /// Points before `at` that this poll brought (a fleet source's backfill from `query_range`),
    /// oldest first: the store takes them before the poll's own.
    pub history: History,
}

impl Collected {
    /// Put this poll into the store: samples, or a failure that leaves a gap.
    pub fn apply(&self, store: &mut Store) {
        match &self.error {
            None => {
                store.backfill(self.source, &self.history);
                store.ingest(self.source, self.at, &self.parsed)
            }
            Some(e) => store.fail(self.source, self.at, e),
        }
    }
}

/// Whether a set of collectors keeps its polls' raw outputs, shared with whoever records them.
/// Off, a poll's text is dropped in its collector once parsed: at 512 nodes a queue of first
/// polls carried ~33 KB of text each beside its parse. Log followers always keep theirs (their
/// raw outputs are the Log tab's lines).
#[derive(Clone, Debug, Default)]
pub struct KeepRaw(Arc<AtomicBool>);

impl KeepRaw {
    /// Every poll keeps its raw outputs (`rocetop record`).
    pub fn always() -> Self {
        let k = Self::default();
        k.set(true);
        k
    }

    /// Keep them from the next poll that finishes on (a recording starts), or stop keeping them.
    pub fn set(&self, keep: bool) {
        self.0.store(keep, Ordering::Relaxed);
    }

    pub fn is_on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `c` as its collector sends it: without its raw outputs unless they are kept. (A poll that
    /// read the flag off before a recording started is not recorded: see `record::Writer::write`.)
    pub fn apply(&self, mut c: Collected) -> Collected {
        if !self.is_on() {
            c.raw = None;
        }
        c
    }
}
