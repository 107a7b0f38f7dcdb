//! When a streamed node is asked for its next dump. Up to [`SLOT`] nodes, every interval from its
//! first dump (nodes that connected together tick together: spreading them cost half again as
//! much CPU at N=8; one grid for all made p99 from tick to answer more than double, their frames
//! queueing behind each other; bench/HISTORY.md, 2026-11-24).
//! Above that the nodes are dealt into slots, each on its own grid (the set's start plus a phase
//! plus whole intervals), the phases spread over the interval (5 s at most, as exec polls are:
//! `poll::first_poll_after`), so hundreds of nodes neither dump nor answer in one instant.

use std::time::Duration;
use tokio::time::Instant;

/// Nodes that tick in the same instant, at most.
const SLOT: u64 = 64;

/// One node's ticks: every interval from the last, or, in a set of more than [`SLOT`] nodes, on
/// the grid `origin + phase + k × interval`.
#[derive(Clone, Copy, Debug)]
pub struct Ticks {
    origin: Instant,
    phase: Duration,
    interval: Duration,
    on_grid: bool,
}

impl Ticks {
    /// The grid of the `i`-th of `n` streamed nodes of a set started at `origin`.
    pub fn of(origin: Instant, interval: Duration, i: u64, n: u64) -> Self {
        let slots = n.div_ceil(SLOT).max(1);
        let spread = interval.min(Duration::from_secs(5)).as_nanos() as u64;
        let phase = Duration::from_nanos(spread / slots * (i % slots));
        Ticks {
            origin,
            phase,
            interval,
            on_grid: slots > 1,
        }
    }

    /// When to ask again after the tick due at `due` was sent at `sent`. Off the grid: one
    /// interval after `due`, or at once if that has passed (a late tick goes at once, a missed one
    /// is not made up). On the grid: the first grid point more than half an interval after
    /// `sent` (a tick late by half an interval or more skips a point; the first dump, asked for
    /// when the channel opens, joins the grid from there).
    pub fn after(&self, due: Instant, sent: Instant) -> Instant {
        if !self.on_grid {
            return (due + self.interval).max(sent);
        }
        let base = self.origin + self.phase;
        let t = sent + self.interval / 2;
        if t < base {
            return base;
        }
        let step = self.interval.as_nanos().max(1);
        let k = (t - base).as_nanos() / step + 1;
        base + Duration::from_nanos(u64::try_from(k * step).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn up_to_64_nodes_tick_off_the_grid_above_it_slots_spread_over_the_interval() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        // (interval, i, n, phase)
        let cases = [
            (s(1), 7, 8, ms(0)),
            (s(1), 0, 1, ms(0)),
            (s(1), 63, 64, ms(0)),
            (s(1), 63, 65, ms(500)),
            (s(1), 64, 65, ms(0)),
            (s(5), 3, 512, ms(1875)),
            (s(5), 7, 512, ms(4375)),
            (s(5), 8, 512, ms(0)),
            (s(60), 1, 128, ms(2500)),
        ];
        let origin = Instant::now();
        for (interval, i, n, phase) in cases {
            let t = Ticks::of(origin, interval, i, n);
            assert_eq!(t.phase, phase, "interval {interval:?}, node {i} of {n}");
            assert_eq!(t.on_grid, n > 64, "node {i} of {n}");
        }
    }

    #[test]
    fn the_next_tick_is_the_grid_point_more_than_half_an_interval_on() {
        let ms = Duration::from_millis;
        let origin = Instant::now();
        // Interval 1 s, phase 250 ms: the grid is origin + 250 ms + k s.
        let t = Ticks {
            origin,
            phase: ms(250),
            interval: ms(1000),
            on_grid: true,
        };
        // (tick sent at, from origin; next, from origin)
        let cases = [
            (0, 1250),     // the first dump at the start: more than half an interval on
            (250, 1250),   // on time: one interval on
            (1249, 2250),  // the first dump, just before a point: not twice within a second
            (1300, 2250),  // late by 50 ms: keeps the grid
            (1749, 2250),  // late by just under half an interval: still the next point
            (1750, 3250),  // late by half an interval: that point is skipped
            (9999, 11250), // long after: the point more than half an interval on
        ];
        for (sent, next) in cases {
            // Where it was due does not move a grid.
            assert_eq!(
                t.after(origin, origin + ms(sent)) - origin,
                ms(next),
                "tick sent at {sent} ms"
            );
        }
        // A slot's grid starting more than half an interval after the set: its first point.
        let late_slot = Ticks {
            origin,
            phase: ms(4375),
            interval: ms(5000),
            on_grid: true,
        };
        assert_eq!(late_slot.after(origin, origin) - origin, ms(4375));
        let at = origin + ms(4375);
        assert_eq!(late_slot.after(at, at) - origin, ms(9375));
    }

    #[test]
    fn off_the_grid_the_next_tick_is_an_interval_after_the_last_due() {
        let ms = Duration::from_millis;
        let origin = Instant::now();
        let t = Ticks::of(origin, ms(1000), 3, 8);
        // (due, sent, next), from origin
        let cases = [
            (0, 0, 1000),       // on time
            (0, 300, 1000),     // late: the schedule holds
            (0, 1700, 1700),    // later than the next: at once, the missed one not made up
            (1700, 1700, 2700), // and from there
            (123, 123, 1123),   // a node's own phase (its connect) is kept
        ];
        for (due, sent, next) in cases {
            assert_eq!(
                t.after(origin + ms(due), origin + ms(sent)) - origin,
                ms(next),
                "due {due} ms, sent {sent} ms"
            );
        }
    }
}
