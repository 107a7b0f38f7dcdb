//! What a collector sends: one poll of one source, parsed, with its raw outputs for recordings.

use crate::metrics::store::SourceId;
use crate::metrics::{History, Parsed, Store, Ts};
use crate::parse::ParseKind;

/// What one poll of one source produced.
#[derive(Clone, Debug)]
pub struct Collected {
    pub source: SourceId,
    /// When the answers were taken (midpoint of the poll), from the collector's clock.
    pub at: Ts,
    pub parsed: Parsed,
    /// Raw outputs, for recordings (replay parses them again).
    pub raw: Vec<(ParseKind, String)>,
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
