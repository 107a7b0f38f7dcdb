//! What the collectors said about each source: up, down since, stale, notes.

use super::STALE_AFTER_INTERVALS;
use crate::metrics::Ts;
use std::collections::VecDeque;

/// Health of one source, as the collectors reported it.
#[derive(Clone, Debug, Default)]
pub struct SourceHealth {
    pub name: String,
    pub interval_ms: i64,
    /// `None` until the first poll answered.
    pub up: Option<bool>,
    pub last_error: Option<String>,
    pub down_since: Option<Ts>,
    pub last_success: Option<Ts>,
    pub last_attempt: Option<Ts>,
    pub polls_ok: u64,
    pub polls_failed: u64,
    /// From the last successful poll.
    pub unknown_lines: usize,
    pub unknown_examples: Vec<String>,
    pub notes: Vec<String>,
    /// Times of failed polls (bounded by retention): rates never bridge them.
    pub(super) failures: VecDeque<Ts>,
    /// Series this source made (never more than [`MAX_SERIES_PER_SOURCE`]).
    pub(super) series: usize,
    /// Every successful poll answers every series the source still has (a fleet source): one
    /// missing from the newest poll is gone (its target is down or stale) and has no current rate,
    /// rather than its last one shown as if it were now.
    pub whole_answers: bool,
}

/// Most series one source may make. The largest real switch (576 ports × 8 QoS groups × a dozen
/// counters, plus per-priority PFC) makes ~70k; beyond this an answer is hostile or broken, and
/// the rest of its samples are dropped with a note rather than taking the memory.
pub const MAX_SERIES_PER_SOURCE: usize = 200_000;

impl SourceHealth {
    /// Stale: no success for more than [`STALE_AFTER_INTERVALS`] intervals.
    pub fn is_stale(&self, now: Ts) -> bool {
        match self.last_success {
            Some(t) => now - t > STALE_AFTER_INTERVALS * self.interval_ms.max(1),
            None => false,
        }
    }

    /// Age of the newest data, for "stale 12 s" labels.
    pub fn age_ms(&self, now: Ts) -> Option<i64> {
        self.last_success.map(|t| now - t)
    }

    pub(super) fn failed_between(&self, a: Ts, b: Ts) -> bool {
        self.failures.iter().any(|&f| f > a && f < b)
    }
}
