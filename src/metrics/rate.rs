//! The only place counters are subtracted (docs/architecture.md, "Counter semantics").
//!
//! A rate needs two successful samples and uses their own timestamps. A decrease is a reset: that
//! interval has no rate. A counter declared 32-bit wraps at `u32::MAX`, but only a plausible wrap
//! (less than half the range) counts as one; anything else is a reset too.

use super::Ts;

/// Counter width as declared by the parser that read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    W64,
    W32,
}

/// What happened to a counter between two samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Step {
    /// It grew by this much (0 included).
    Delta(u64),
    /// It went down: reset (driver reload, `clear counters`). The new value counts events since.
    Reset,
}

/// The change of a counter from `prev` to `cur`.
pub fn step(prev: u64, cur: u64, width: Width) -> Step {
    if cur >= prev {
        return Step::Delta(cur - prev);
    }
    match width {
        Width::W32 if prev <= u64::from(u32::MAX) => {
            let wrapped = (u64::from(u32::MAX) - prev) + cur + 1;
            if wrapped < 1 << 31 {
                Step::Delta(wrapped)
            } else {
                Step::Reset
            }
        }
        _ => Step::Reset,
    }
}

/// The outcome of a rate over one interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    PerSec(f64),
    /// Counter reset inside the interval: no rate, show a reset mark.
    Reset,
    /// Timestamps equal or going backwards: no rate.
    NoTime,
}

impl Rate {
    /// The rate in the metric's unit, for a counter kept in `scale` counts.
    pub fn scaled(self, scale: super::Scale) -> Rate {
        match self {
            Rate::PerSec(v) => Rate::PerSec(v * scale.per_count()),
            other => other,
        }
    }

    pub fn value(self) -> Option<f64> {
        match self {
            Rate::PerSec(v) => Some(v),
            _ => None,
        }
    }
}

/// Per-second rate between two samples `(t_ms, value)`.
pub fn rate(prev: (Ts, u64), cur: (Ts, u64), width: Width) -> Rate {
    let dt = cur.0 - prev.0;
    if dt <= 0 {
        return Rate::NoTime;
    }
    match step(prev.1, cur.1, width) {
        Step::Delta(d) => Rate::PerSec(d as f64 * 1000.0 / dt as f64),
        Step::Reset => Rate::Reset,
    }
}

/// How much a counter grew over a run of samples: deltas summed; after a reset the new value is
/// what happened since the reset (as Prometheus' `increase` counts it).
pub fn increase(values: impl IntoIterator<Item = u64>, width: Width) -> u64 {
    let mut it = values.into_iter();
    let Some(mut prev) = it.next() else { return 0 };
    let mut sum: u64 = 0;
    for cur in it {
        sum = sum.saturating_add(match step(prev, cur, width) {
            Step::Delta(d) => d,
            Step::Reset => cur,
        });
        prev = cur;
    }
    sum
}

/// Share of an interval spent paused, from the rate of a pause-duration counter in seconds per
/// second (already in the metric's unit: the store scaled the NIC's µs), clamped to [0, 1].
pub fn pause_fraction(r: Rate) -> Option<f64> {
    Some(r.value()?.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAX32: u64 = u32::MAX as u64;

    type Case = (&'static str, (Ts, u64), (Ts, u64), Width, Rate);

    #[test]
    fn rates_table() {
        // (name, prev, cur, width, expected)
        let cases: &[Case] = &[
            (
                "zero delta",
                (0, 5),
                (1000, 5),
                Width::W64,
                Rate::PerSec(0.0),
            ),
            (
                "increase",
                (0, 5),
                (1000, 105),
                Width::W64,
                Rate::PerSec(100.0),
            ),
            (
                "uses sample times",
                (0, 0),
                (500, 100),
                Width::W64,
                Rate::PerSec(200.0),
            ),
            (
                "wrap at u32::MAX",
                (0, MAX32 - 9),
                (1000, 10),
                Width::W32,
                Rate::PerSec(20.0),
            ),
            (
                "64-bit decrease is reset",
                (0, MAX32 - 9),
                (1000, 10),
                Width::W64,
                Rate::Reset,
            ),
            ("reset", (0, 1_000_000), (1000, 3), Width::W64, Rate::Reset),
            (
                "32-bit implausible wrap is reset",
                (0, 3_000_000_000),
                (1000, 2_000_000_000),
                Width::W32,
                Rate::Reset,
            ),
            (
                "32-bit value above u32 is reset",
                (0, MAX32 + 5),
                (1000, 1),
                Width::W32,
                Rate::Reset,
            ),
            ("dt = 0", (1000, 5), (1000, 50), Width::W64, Rate::NoTime),
            (
                "out of order",
                (2000, 5),
                (1000, 50),
                Width::W64,
                Rate::NoTime,
            ),
            (
                "huge counters",
                (0, u64::MAX - 10),
                (1000, u64::MAX),
                Width::W64,
                Rate::PerSec(10.0),
            ),
        ];
        for (name, prev, cur, width, want) in cases {
            assert_eq!(rate(*prev, *cur, *width), *want, "{name}");
        }
    }

    #[test]
    fn increase_counts_across_resets_and_wraps() {
        assert_eq!(increase([], Width::W64), 0);
        assert_eq!(increase([7], Width::W64), 0, "first sample");
        assert_eq!(increase([1, 5, 9], Width::W64), 8);
        assert_eq!(increase([100, 110, 4, 6], Width::W64), 10 + 4 + 2, "reset");
        assert_eq!(increase([MAX32 - 1, 3], Width::W32), 5, "wrap");
    }

    #[test]
    fn pause_fraction_is_share_of_interval() {
        use crate::metrics::Scale;
        // 250 ms of pause (250 000 µs) in a 1 s interval.
        let r = rate((0, 0), (1000, 250_000), Width::W64).scaled(Scale::Micro);
        assert_eq!(r, Rate::PerSec(0.25));
        assert_eq!(pause_fraction(r), Some(0.25));
        let over = rate((0, 0), (1000, 5_000_000), Width::W64).scaled(Scale::Micro);
        assert_eq!(pause_fraction(over), Some(1.0), "clamped");
        let reset = rate((0, 9), (1000, 1), Width::W64).scaled(Scale::Micro);
        assert_eq!(pause_fraction(reset), None, "reset");
    }
}
