//! When a polled source that failed polls again. A source polled every second or few keeps its
//! schedule. One polled rarely (a topology read, every 5 minutes by default) stayed down for its
//! whole interval after one timeout: 512 nodes started on a loaded box left 107–146 topology reads
//! down, each a CRIT "source down" alert, for five minutes. So a failed poll of such a source is
//! tried again after [`FIRST`], doubling each time, while that is at most half its interval (later
//! than that, the regular poll is near anyway); each source's delays are scaled by its own factor
//! in 0.8–1.2, so reads that failed together do not retry together (as SSH reconnects do,
//! `ssh::backoff`; the factor is `collect::spread`).

use crate::collect::spread::spread;
use std::time::Duration;

/// The first retry of a failed poll.
pub(super) const FIRST: Duration = Duration::from_secs(5);

/// A source's failed polls in a row, and its spread factor.
pub(super) struct Retry {
    failures: u32,
    jitter: f64,
}

impl Retry {
    /// For the source named `name`.
    pub fn of(name: &str) -> Self {
        Retry {
            failures: 0,
            jitter: spread(name),
        }
    }

    /// After a poll that `failed` (or not): how long until the next poll, when a retry is due;
    /// `None`: the regular schedule.
    pub fn after(&mut self, failed: bool, interval: Duration) -> Option<Duration> {
        if !failed {
            self.failures = 0;
            return None;
        }
        let doubling = 1u32 << self.failures.min(16);
        self.failures = self.failures.saturating_add(1);
        let delay = FIRST.saturating_mul(doubling);
        (delay <= interval / 2).then(|| delay.mul_f64(self.jitter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: fn(u64) -> Duration = Duration::from_secs;

    /// An interval in seconds, polls failed (true) or not, the delays expected in units of the
    /// source's jittered FIRST (`None`: the regular schedule).
    type Case = (u64, &'static [bool], &'static [Option<u32>]);

    #[test]
    fn failed_polls_of_rare_sources_retry_doubling_up_to_half_their_interval() {
        let cases: &[Case] = &[
            // A topology read, every 300 s: 5, 10, 20, 40, 80 s, then its schedule.
            (
                300,
                &[true; 7],
                &[Some(1), Some(2), Some(4), Some(8), Some(16), None, None],
            ),
            // A success starts over.
            (
                300,
                &[true, true, false, true],
                &[Some(1), Some(2), None, Some(1)],
            ),
            // Sources polled every few seconds keep their schedule.
            (1, &[true, true], &[None, None]),
            (4, &[true], &[None]),
            // 30 s: 5, 10 s, then the schedule; 10 s: one retry after 5 s.
            (30, &[true; 3], &[Some(1), Some(2), None]),
            (10, &[true; 2], &[Some(1), None]),
        ];
        for (interval, polls, want) in cases {
            let mut r = Retry::of("node7 topology");
            let unit = FIRST.mul_f64(r.jitter);
            let got: Vec<Option<Duration>> =
                polls.iter().map(|&f| r.after(f, S(*interval))).collect();
            let want: Vec<Option<Duration>> = want.iter().map(|w| w.map(|k| unit * k)).collect();
            assert_eq!(got, want, "interval {interval} s, polls {polls:?}");
        }
    }

    #[test]
    fn sources_that_failed_together_retry_apart() {
        let delays: Vec<Duration> = (0..512)
            .map(|i| {
                Retry::of(&format!("node{i} topology"))
                    .after(true, S(300))
                    .expect("a retry")
            })
            .collect();
        let lo = delays.iter().min().expect("512 delays");
        let hi = delays.iter().max().expect("512 delays");
        assert!(
            *lo >= FIRST.mul_f64(0.8) && *hi <= FIRST.mul_f64(1.2),
            "{lo:?}..{hi:?}"
        );
        // Spread over most of the 4–6 s band, not bunched.
        assert!(*hi - *lo > Duration::from_millis(1600), "{lo:?}..{hi:?}");
        let mut ms: Vec<u128> = delays.iter().map(|d| d.as_millis() / 100).collect();
        ms.sort_unstable();
        ms.dedup();
        assert!(
            ms.len() >= 15,
            "512 retries fall in {} tenths of a second",
            ms.len()
        );
    }
}
