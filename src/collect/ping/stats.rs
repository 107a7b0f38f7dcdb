//! Sliding-window RTT statistics of one peer over one transport: min, p50, p99, p99.9, max, mean,
//! stdev, jitter, and a compact histogram, over the probes answered in the last `span`; plus the
//! running totals of probes sent, answered and lost.
//!
//! Quantiles come from an HDR histogram (3 significant digits: within 0.1% of the exact nearest-rank
//! value, exact below 2.048 µs); min, max, mean, stdev and jitter are exact. Times are integer
//! nanoseconds on the pinger's monotonic clock.

use hdrhistogram::Histogram;
use std::collections::VecDeque;

/// Buckets of the window histogram: 15 equal-width buckets from min to p99, then one for the tail.
pub const BUCKETS: usize = 16;

/// Stdev is the population stdev (as `ib_send_lat` prints it).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Probes answered in the window.
    pub count: u64,
    pub min_ns: u64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    pub stdev_ns: f64,
    /// Mean absolute difference of consecutive RTTs (in arrival order); `None` below two probes.
    pub jitter_ns: Option<f64>,
    /// Bucket i holds RTTs at or below its bound and above the previous one (Prometheus `le`);
    /// bounds split min..p99 in 15, the last bucket holds the tail up to max.
    pub buckets: Vec<Bucket>,
}

/// One bucket of the window histogram.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    /// Its upper bound (`le`), in nanoseconds.
    pub le_ns: u64,
    pub probes: u64,
}

/// One answer: when it arrived and its RTT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    pub at_ns: u64,
    pub rtt_ns: u64,
}

/// Running totals since the pinger started (counters), and the window.
#[derive(Debug)]
pub struct Window {
    span_ns: u64,
    max_samples: usize,
    /// Oldest first.
    samples: VecDeque<Answer>,
    hist: Option<Histogram<u32>>,
    pub sent: u64,
    pub answered: u64,
    pub lost: u64,
    /// Answers that came after their probe was already counted lost.
    pub late: u64,
    /// Answers that came only after a retransmission (RDMA RC): among the answered, not RTTs.
    pub retransmitted: u64,
}

/// The RTT of a probe. It is timed from when it left, unless it left more than `slack_ns` after its
/// slot: then the sender was held up (by a stall, a full socket, a busy CQ), and timing it from its
/// slot counts the stall in every probe it delayed — no coordinated omission. The slack absorbs the
/// timer's own lateness, which is the pinger's, not the network's.
pub fn rtt_ns(intended_ns: u64, sent_ns: u64, recv_ns: u64, slack_ns: u64) -> u64 {
    let from = if sent_ns.saturating_sub(intended_ns) > slack_ns {
        intended_ns
    } else {
        sent_ns
    };
    recv_ns.saturating_sub(from)
}

impl Window {
    /// The last `span_ns` of answers, at most `max_samples` of them.
    pub fn new(span_ns: u64, max_samples: usize) -> Self {
        Self {
            span_ns: span_ns.max(1),
            max_samples: max_samples.max(1),
            samples: VecDeque::new(),
            hist: None,
            sent: 0,
            answered: 0,
            lost: 0,
            late: 0,
            retransmitted: 0,
        }
    }

    /// An answer arrived at `at_ns` after `rtt_ns`.
    pub fn record(&mut self, at_ns: u64, rtt_ns: u64) {
        self.answered += 1;
        self.samples.push_back(Answer { at_ns, rtt_ns });
        while self.samples.len() > self.max_samples {
            self.samples.pop_front();
        }
    }

    /// An answer that came back only after the transport resent the probe: answered, but its time
    /// is the retransmit timeout's, not the fabric's, so it is no RTT sample.
    pub fn record_retransmitted(&mut self) {
        self.answered += 1;
        self.retransmitted += 1;
    }

    /// Forget answers older than the window.
    pub fn prune(&mut self, now_ns: u64) {
        let cutoff = now_ns.saturating_sub(self.span_ns);
        while self.samples.front().is_some_and(|a| a.at_ns < cutoff) {
            self.samples.pop_front();
        }
    }

    pub fn len(&self) -> usize {
        self.samples.len()
    }

    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The RTTs in the window, oldest first (what a setup check prints).
    pub fn rtts(&self) -> Vec<u64> {
        self.samples.iter().map(|a| a.rtt_ns).collect()
    }

    /// Statistics of the answers now in the window; `None` when it is empty.
    pub fn summary(&mut self) -> Option<Summary> {
        let rtts: Vec<u64> = self.samples.iter().map(|a| a.rtt_ns).collect();
        let hist = match &mut self.hist {
            Some(h) => {
                h.reset();
                h
            }
            None => self.hist.insert(
                // 1 ns .. 1 h covers every deadline; values above are clamped, not dropped.
                Histogram::new_with_bounds(1, 3_600_000_000_000, 3).ok()?,
            ),
        };
        summarize(&rtts, hist)
    }
}

/// The statistics of `rtts` (in arrival order), using `hist` (reset) for the quantiles.
pub fn summarize(rtts: &[u64], hist: &mut Histogram<u32>) -> Option<Summary> {
    let n = rtts.len() as u64;
    let (&first, _) = rtts.split_first()?;
    let (mut min, mut max) = (first, first);
    let (mut sum, mut sumsq) = (0u128, 0u128);
    for &r in rtts {
        min = min.min(r);
        max = max.max(r);
        sum += r as u128;
        sumsq += (r as u128) * (r as u128);
        hist.saturating_record(r.max(1));
    }
    let mean = sum as f64 / n as f64;
    // n·Σx² − (Σx)² is exact in integers; only the final division and root are floating point.
    let var_n2 = (n as u128 * sumsq).saturating_sub(sum * sum);
    let stdev = (var_n2 as f64).sqrt() / n as f64;
    let jitter = (rtts.len() >= 2).then(|| {
        let d: u128 = rtts.windows(2).map(|w| w[0].abs_diff(w[1]) as u128).sum();
        d as f64 / (n - 1) as f64
    });
    // A quantile is reported as the top of its HDR bucket, kept within the exact min and max.
    let q = |x: f64| hist.value_at_quantile(x).clamp(min, max);
    let (p50, p99, p999) = (q(0.5), q(0.99), q(0.999));
    Some(Summary {
        count: n,
        min_ns: min,
        p50_ns: p50,
        p99_ns: p99,
        p999_ns: p999,
        max_ns: max,
        mean_ns: mean,
        stdev_ns: stdev,
        jitter_ns: jitter,
        buckets: buckets(rtts, min, p99, max),
    })
}

fn buckets(rtts: &[u64], min: u64, p99: u64, max: u64) -> Vec<Bucket> {
    let linear = BUCKETS as u64 - 1;
    // Bounds min + ⌈(p99−min)·i/15⌉, so the 15th is p99 exactly; then the tail up to max.
    let span = (p99 - min) as u128;
    let bucket = |le_ns: u64| Bucket { le_ns, probes: 0 };
    let mut out: Vec<Bucket> = (1..=linear)
        .map(|i| bucket(min + (span * i as u128).div_ceil(linear as u128) as u64))
        .collect();
    out.push(bucket(max));
    for &r in rtts {
        // Prometheus `le` semantics: the first bucket whose bound is at or above the RTT.
        let i = if r > p99 {
            BUCKETS - 1
        } else {
            out[..BUCKETS - 1].partition_point(|b| b.le_ns < r)
        };
        if let Some(b) = out.get_mut(i) {
            b.probes += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist() -> Histogram<u32> {
        Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("bounds")
    }

    #[test]
    fn exact_statistics_of_a_known_list() {
        // 1..=1000 ns: below 2048 the histogram is exact, so the quantiles are the nearest ranks.
        let v: Vec<u64> = (1..=1000).collect();
        let s = summarize(&v, &mut hist()).expect("non-empty");
        assert_eq!(s.count, 1000);
        assert_eq!(
            (s.min_ns, s.p50_ns, s.p99_ns, s.p999_ns, s.max_ns),
            (1, 500, 990, 999, 1000)
        );
        assert_eq!(s.mean_ns, 500.5);
        // population stdev of 1..=n is sqrt((n²-1)/12)
        assert!((s.stdev_ns - ((1000.0f64 * 1000.0 - 1.0) / 12.0).sqrt()).abs() < 1e-9);
        assert_eq!(s.jitter_ns, Some(1.0));
        assert_eq!(s.buckets.len(), BUCKETS);
        assert_eq!(s.buckets.iter().map(|b| b.probes).sum::<u64>(), 1000);
        assert_eq!(
            s.buckets[BUCKETS - 1],
            Bucket {
                le_ns: 1000,
                probes: 10
            },
            "the tail above p99 is its own bucket"
        );
    }

    #[test]
    fn the_lab_numbers() {
        // Alternating 13.55 / 15.19 µs: mean 14.37 µs, stdev 0.82 µs, jitter 1.64 µs (ib_send_lat-like).
        let v: Vec<u64> = (0..1000)
            .map(|i| if i % 2 == 0 { 13_550 } else { 15_190 })
            .collect();
        let s = summarize(&v, &mut hist()).expect("non-empty");
        assert_eq!(s.mean_ns, 14_370.0);
        assert!((s.stdev_ns - 820.0).abs() < 1e-9, "{}", s.stdev_ns);
        assert_eq!(s.jitter_ns, Some(1_640.0));
        assert_eq!((s.min_ns, s.max_ns), (13_550, 15_190));
        // HDR: within 0.1% of the nearest rank (13.55 µs at p50, 15.19 µs at p99).
        assert!(s.p50_ns.abs_diff(13_550) <= 14, "{}", s.p50_ns);
        assert_eq!(s.p99_ns, 15_190, "clamped to the exact max");
    }

    #[test]
    fn jitter_follows_arrival_order_and_one_sample_has_none() {
        let s = summarize(&[10, 30, 10, 30], &mut hist()).expect("non-empty");
        assert_eq!(s.jitter_ns, Some(20.0));
        assert_eq!(s.stdev_ns, 10.0);
        let s = summarize(&[7], &mut hist()).expect("non-empty");
        assert_eq!(s.jitter_ns, None);
        assert_eq!((s.min_ns, s.p50_ns, s.max_ns, s.stdev_ns), (7, 7, 7, 0.0));
        assert!(summarize(&[], &mut hist()).is_none());
    }

    #[test]
    fn window_slides_and_is_bounded() {
        let mut w = Window::new(10_000, 5);
        for t in 0..8u64 {
            w.record(t * 1000, 100 + t);
        }
        assert_eq!(w.len(), 5, "at most max_samples");
        assert_eq!(w.answered, 8);
        w.prune(14_500);
        assert_eq!(w.len(), 3, "answers older than 10 µs before now are gone");
        let s = w.summary().expect("non-empty");
        assert_eq!((s.min_ns, s.max_ns), (105, 107));
        w.prune(100_000);
        assert!(w.summary().is_none());
    }

    #[test]
    fn rtt_is_timed_from_the_slot_only_when_the_sender_was_held_up() {
        // Timer 300 µs late: the pinger's lateness, not the network's.
        assert_eq!(rtt_ns(1_000_000, 1_300_000, 1_350_000, 2_000_000), 50_000);
        // Sender held up 200 ms: the probe carries the stall.
        assert_eq!(rtt_ns(0, 200_000_000, 200_050_000, 2_000_000), 200_050_000);
        assert_eq!(rtt_ns(10, 5, 3, 0), 0, "clock oddities never underflow");
    }
}
