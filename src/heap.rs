//! A counting allocator for measuring heap use exactly: the size-amplification checks
//! in `tests/heap/amplification.rs` and the fuzz targets, and `examples/row_cost.rs`. rocetop
//! itself never registers it; a program that wants the counts does:
//!
//! ```ignore
//! #[global_allocator]
//! static A: rocetop::heap::Counting = rocetop::heap::Counting;
//! ```
//!
//! The counts are process-wide: measure one thing at a time.
//!
//! Also [`give_back`]: the free heap pages collectors leave, returned to the system while they run.
#![allow(unsafe_code)] // a GlobalAlloc is unsafe by definition; every call is forwarded unchanged

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// Heap bytes a parse and the store holding its series may take per input byte, at their peak.
///
/// Set from measurement (tests/heap/amplification.rs prints the largest ratio it sees): the densest
/// input any parser reads is an NX-OS PFC table of the shortest rows (`E1 a Off 0 0`, 16 bytes
/// making ten series: rx, tx and eight `enabled` gauges), at 113 heap bytes per input byte (378
/// before a row's series shared one label set, 264 before a series held its history inline; ~67 B
/// a parsed sample, ~126 B a stored series with its labels); real layouts are far lower (every
/// capture repeated to 512 KiB: at most 18; the issue's 100k-port answer: 20 per byte of text
/// table, 11 per byte of NX-API JSON). 512 leaves room over the densest case, so what
/// crosses it is a change that makes rows cost more (a 4 KiB buffer kept per row does), a copy of
/// the input per row, or anything quadratic.
pub const MAX_PER_INPUT_BYTE: usize = 512;
/// What a parse may take whatever its input's size (a store's tables, a parser's first buffers).
pub const SLACK: usize = 256 * 1024;

/// The most heap a parse of `len` input bytes may peak at.
pub fn bound(len: usize) -> usize {
    len.saturating_mul(MAX_PER_INPUT_BYTE).saturating_add(SLACK)
}

pub struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Relaxed).wrapping_add(by);
    PEAK.fetch_max(now, Relaxed);
}

// SAFETY: every call goes to the system allocator with its arguments unchanged; only two
// counters are updated beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            if new >= l.size() {
                grew(new - l.size());
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

/// Heap bytes live now (0 where [`Counting`] is not the global allocator).
pub fn live() -> usize {
    LIVE.load(Relaxed)
}

/// Run `f`: its result, and the most heap it held at once above what was live when it started.
pub fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let start = LIVE.load(Relaxed);
    PEAK.store(start, Relaxed);
    let r = f();
    (r, PEAK.load(Relaxed).saturating_sub(start))
}

/// How often the heap's free pages are given back ([`spawn_give_back`]).
pub const GIVE_BACK_EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// Give free heap pages back to the system now (glibc's `malloc_trim(0)`: whole free pages
/// anywhere in the heap, not only at its top, are dropped with `madvise`). Polls allocate and free
/// hundreds of KB of text a node; the holes they leave between long-lived blocks stay resident
/// (512 nodes streaming, a minute: RSS 156 MiB for 120 MiB in use; `malloc_trim(0)` took it to
/// 134 MiB; bench/HISTORY.md, 2026-11-24). Answers nothing different: only which free
/// pages are resident.
///
/// Only where there is much to give back ([`GIVE_BACK_OVER`] free in the heap): a trim drops
/// every free page, and the next polls fault them in again, which a small fleet pays for in CPU
/// every time and gains nothing from (8 nodes: a heap of a few MB).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn give_back() {
    // SAFETY: mallinfo2 reads malloc's statistics and malloc_trim only releases free memory,
    // each under malloc's own locks.
    unsafe {
        if libc::mallinfo2().fordblks > GIVE_BACK_OVER {
            libc::malloc_trim(0);
        }
    }
}

/// Free bytes in the heap above which [`give_back`] trims.
pub const GIVE_BACK_OVER: usize = 16 << 20;

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn give_back() {}

/// [`give_back`] every [`GIVE_BACK_EVERY`] in the current tokio runtime until the guard is
/// dropped. Once a process (the TUI, export, record), not once a collector set: a focus's
/// collectors run beside the fleet's in the same heap.
pub fn spawn_give_back() -> GiveBackGuard {
    GiveBackGuard(tokio::spawn(give_back_loop()).abort_handle())
}

/// Stops the [`spawn_give_back`] task when dropped.
pub struct GiveBackGuard(tokio::task::AbortHandle);

impl Drop for GiveBackGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// [`give_back`] every [`GIVE_BACK_EVERY`], for as long as the task runs.
async fn give_back_loop() {
    let mut tick = tokio::time::interval(GIVE_BACK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        give_back();
    }
}
