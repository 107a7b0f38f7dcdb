//! How long polls take, from the start of a poll to its parsed answer: a process-wide cumulative
//! histogram (lock-free, fixed buckets) that `export` serves as `rocetop_poll_duration_seconds`, so
//! refresh latency can be read from outside without timing anything twice.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Upper bounds of the buckets in microseconds: 1-2-5 steps from 0.5 ms to 10 s (+Inf after).
const BOUNDS_US: [u64; 15] = [
    500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000,
    2_000_000, 5_000_000, 10_000_000, 20_000_000,
];

pub struct Histogram {
    buckets: [AtomicU64; BOUNDS_US.len() + 1],
    sum_us: AtomicU64,
}

impl Histogram {
    pub const fn new() -> Self {
        Self {
            buckets: [const { AtomicU64::new(0) }; BOUNDS_US.len() + 1],
            sum_us: AtomicU64::new(0),
        }
    }

    pub fn observe(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        let i = BOUNDS_US.partition_point(|&b| b < us);
        if let Some(b) = self.buckets.get(i) {
            b.fetch_add(1, Ordering::Relaxed);
        }
        self.sum_us.fetch_add(us, Ordering::Relaxed);
    }

    /// Prometheus text of this histogram under `name` (cumulative buckets, `_sum`, `_count`).
    pub fn render(&self, name: &str, help: &str) -> String {
        let mut out = format!("# HELP {name} {help}\n# TYPE {name} histogram\n");
        let mut acc = 0u64;
        for (i, b) in self.buckets.iter().enumerate() {
            acc += b.load(Ordering::Relaxed);
            let le = BOUNDS_US
                .get(i)
                .map_or_else(|| "+Inf".to_string(), |us| format!("{}", *us as f64 / 1e6));
            let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {acc}");
        }
        let sum = self.sum_us.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {acc}");
        out
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Every poll of every source in this process.
pub static POLLS: Histogram = Histogram::new();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_cumulative() {
        let h = Histogram::new();
        h.observe(Duration::from_micros(300));
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_secs(60));
        let t = h.render("x", "h");
        assert!(t.contains("x_bucket{le=\"0.0005\"} 1\n"), "{t}");
        assert!(t.contains("x_bucket{le=\"0.005\"} 2\n"), "{t}");
        assert!(t.contains("x_bucket{le=\"20\"} 2\n"), "{t}");
        assert!(t.contains("x_bucket{le=\"+Inf\"} 3\n"), "{t}");
        assert!(t.contains("x_count 3\n"), "{t}");
    }
}
