//! Counters' intervals decoded once and kept between frames, for the windowed questions a frame
//! asks of every series ("how many in the last 60 s", "since start", the timeline's per-second
//! rates). Answering them from the store decodes every point of the window of every series on
//! every frame (at 512 nodes most of a frame's time); history only grows at the end and expires
//! at the front, so the intervals decoded for the last frame stay right, and a frame decodes only
//! the points that arrived since.
//!
//! A [`WindowsCache`] answers exactly what [`Store::increase_since`] and [`Store::rates`] answer (the
//! same steps from `rate.rs`, summed in the same order); the tests hold it to that. It is a memo,
//! not state: it belongs to one store (another one, e.g. a time-travel copy, starts it afresh)
//! and can be dropped at any time.

#[cfg(doc)]
use super::Store;

mod answers;
mod entry;
mod far;
#[cfg(test)]
mod tests;

use entry::{Entry, Iv};

/// How far back intervals are kept (from a series' newest point): the windows a frame asks
/// ("last 60 s", the Overview timeline's width in seconds) fit; older ones are summed in runs
/// (`far.rs`), which answer a longer window's count ("since start" after minutes); its
/// per-second rates are the store's to answer, as before. It bounds the memory: at 1 Hz about
/// 180 intervals of 48 bytes per series asked about, and a run of 32 bytes per minute older.
pub const KEEP_MS: i64 = 180_000;

/// Decoded intervals per series of one store.
#[derive(Debug)]
pub struct WindowsCache {
    /// [`Store::uid`] of the store the entries were decoded from.
    store: u64,
    /// The entries of the series asked about, in the order first asked.
    per: Vec<Entry>,
    /// Per series id, its entry's index in `per` plus one (0: none). A frame asks about a few
    /// series a node (the timeline's, the alerts' error counters): an entry for every id (112 B)
    /// was ~10 MB at 512 nodes (~92k series), of which ~1 in 20 was used.
    slot: Vec<u32>,
    /// How far back intervals are kept ([`KEEP_MS`]).
    keep_ms: i64,
    /// Intervals per run of the older ones ([`far::SPAN`]; tests take shorter runs).
    span: u32,
}

impl Default for WindowsCache {
    fn default() -> Self {
        WindowsCache::keeping(KEEP_MS)
    }
}

impl WindowsCache {
    /// Keeping intervals `keep_ms` back from each series' newest point.
    pub fn keeping(keep_ms: i64) -> Self {
        WindowsCache {
            store: 0,
            per: Vec::new(),
            slot: Vec::new(),
            keep_ms,
            span: far::SPAN,
        }
    }

    /// [`WindowsCache::keeping`] with runs of `span` intervals for the older ones.
    #[cfg(test)]
    fn with_runs(keep_ms: i64, span: u32) -> Self {
        WindowsCache {
            span: span.max(1),
            ..WindowsCache::keeping(keep_ms)
        }
    }
}
