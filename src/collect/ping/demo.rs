//! Simulated pings for the demo: RDMA about 14.4 µs ± 0.8 µs and TCP 22–92 µs at rest (the lab measured 22–161 µs)
//! with `ib_send_lat` and TCP, both climbing during the simulation's congestion episodes (PFC pauses
//! hold the queues); TCP loses the odd probe at the height of an episode, RoCE (lossless) does not.
//! Deterministic: a probe's RTT depends only on the peer, its transport and its slot, so consecutive
//! polls see the same window slide, and the report goes through the same parser as real pings.

use super::report::{self, Section};
use super::stats::summarize;
use crate::collect::demo::DemoCluster;
use crate::collect::transport::{CollectError, Request, Transport};
use async_trait::async_trait;
use std::sync::Mutex;
use std::time::Duration;

/// At most this many simulated probes per window (a 10 000/s peer is thinned on a fixed grid).
const MAX_WINDOW: u64 = 2000;
const WINDOW_MS: i64 = 10_000;
const TRANSPORTS: [&str; 2] = ["rdma", "tcp"];

#[derive(Debug)]
pub struct DemoPing {
    cluster: DemoCluster,
    peer: String,
    period_ms: f64,
    salt: u64,
    /// Lost probes per transport counted up to a whole second: (next second to count, totals).
    lost: Mutex<(i64, [u64; 2])>,
}

fn mix(mut z: u64) -> u64 {
    // splitmix64
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn uniforms(seed: u64) -> impl Iterator<Item = f64> {
    (0u64..).map(move |i| {
        (mix(seed ^ i.wrapping_mul(0x1000_0000_01b3)) >> 11) as f64 / (1u64 << 53) as f64
    })
}

impl DemoPing {
    pub fn new(cluster: DemoCluster, peer: &str, rate: f64) -> Self {
        let salt = peer.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
        });
        Self {
            cluster,
            peer: peer.to_string(),
            period_ms: 1000.0 / rate.clamp(0.1, 10_000.0),
            salt,
            lost: Mutex::new((0, [0, 0])),
        }
    }

    /// RTT in ns of probe `k` over transport `t` at congestion `c`.
    fn rtt_ns(&self, t: usize, k: u64, c: f64) -> u64 {
        let mut u = uniforms(self.salt ^ mix(k) ^ (t as u64 + 1));
        let mut next = || u.next().unwrap_or(0.5);
        let us = if TRANSPORTS[t] == "rdma" {
            // about N(0,1) from four uniforms
            let g = (next() + next() + next() + next() - 2.0) * 3f64.sqrt();
            14.37 + 0.82 * g + c * (20.0 + 80.0 * next().powi(2))
        } else {
            // 22–92 µs calm, median about 32 µs (the lab saw 22–161 µs); the long tail comes
            // with congestion, so the RTT alert (p99 > 3× p50) fires in episodes, not at rest.
            let x = next();
            (22.0 + 40.0 * x.powi(2) + 30.0 * x.powi(8)) * (1.0 + 3.0 * c)
                + c * 200.0 * next().powi(3)
        };
        (us.max(0.5) * 1000.0) as u64
    }

    /// Lost probes of transport `t` in second `s` (TCP only, at the height of an episode).
    fn lost_in(&self, t: usize, s: i64, c: f64) -> u64 {
        if TRANSPORTS[t] == "tcp" && c > 0.6 {
            mix(self.salt ^ ((s as u64) << 8)) % 3
        } else {
            0
        }
    }

    fn report(&self) -> String {
        self.report_at(self.cluster.elapsed_ms())
    }

    /// The report at `now` ms of simulated time (tests drive the simulation on fixed timestamps;
    /// reports must be asked for in increasing `now`, as losses are counted second by second).
    pub fn report_at(&self, now: i64) -> String {
        let k_now = (now as f64 / self.period_ms) as u64;
        let k_from = ((now - WINDOW_MS).max(0) as f64 / self.period_ms).ceil() as u64;
        let stride = (k_now + 1 - k_from.min(k_now)).div_ceil(MAX_WINDOW).max(1);
        let ks: Vec<u64> = (k_from..=k_now).filter(|k| k % stride == 0).collect();
        let times: Vec<i64> = ks
            .iter()
            .map(|&k| (k as f64 * self.period_ms) as i64)
            .collect();
        let cong = self.cluster.congestion_at(&times);
        // Count losses second by second up to now (incrementally: polls come every second).
        let lost = {
            let mut g = self.lost.lock().unwrap_or_else(|p| p.into_inner());
            let secs: Vec<i64> = (g.0..now / 1000).collect();
            let c: Vec<f64> = self
                .cluster
                .congestion_at(&secs.iter().map(|s| s * 1000 + 500).collect::<Vec<_>>());
            for (s, c) in secs.iter().zip(c) {
                for t in 0..TRANSPORTS.len() {
                    g.1[t] += self.lost_in(t, *s, c);
                }
            }
            g.0 = g.0.max(now / 1000);
            g.1
        };
        let mut sections = Vec::new();
        for (t, name) in TRANSPORTS.iter().enumerate() {
            let rtts: Vec<u64> = ks
                .iter()
                .zip(&cong)
                .map(|(&k, &c)| self.rtt_ns(t, k, c))
                .collect();
            let summary = hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .ok()
                .and_then(|mut h| summarize(&rtts, &mut h));
            let sent = k_now + 1;
            sections.push(Section {
                transport: name,
                device: None,
                sent,
                answered: sent.saturating_sub(lost[t]),
                lost: lost[t],
                // The simulator models loss, not RC's resends: not measured, so not claimed.
                retransmitted: None,
                summary,
            });
        }
        report::render(&sections, &[])
    }
}

#[async_trait]
impl Transport for DemoPing {
    async fn run(&self, _req: &Request, _timeout: Duration) -> Result<String, CollectError> {
        Ok(self.report())
    }

    fn describe(&self) -> String {
        format!("demo ping {}", self.peer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::metrics::{Value, names};

    #[test]
    fn demo_rtts_look_like_the_lab_and_climb_under_congestion() {
        let p = DemoPing::new(DemoCluster::new(&Config::reference()), "ubunturdma2", 10.0);
        let (mut r, mut t) = (Vec::new(), Vec::new());
        for k in 0..2000 {
            r.push(p.rtt_ns(0, k, 0.0));
            t.push(p.rtt_ns(1, k, 0.0));
        }
        let mut h = hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("h");
        let s = summarize(&r, &mut h).expect("rdma");
        assert!(
            (s.mean_ns - 14_370.0).abs() < 150.0,
            "rdma mean {}",
            s.mean_ns
        );
        assert!(
            (s.stdev_ns - 820.0).abs() < 120.0,
            "rdma stdev {}",
            s.stdev_ns
        );
        h.reset();
        let s = summarize(&t, &mut h).expect("tcp");
        assert!(s.min_ns >= 22_000 && s.max_ns <= 92_000, "{s:?}");
        assert!(s.p99_ns < 3 * s.p50_ns, "calm: no RTT alert {s:?}");
        assert!((28_000..40_000).contains(&s.p50_ns), "tcp p50 {}", s.p50_ns);
        assert!(
            p.rtt_ns(0, 5, 1.0) > 2 * p.rtt_ns(0, 5, 0.0),
            "congestion raises RDMA RTT"
        );
        assert_eq!(p.rtt_ns(1, 42, 0.3), p.rtt_ns(1, 42, 0.3), "deterministic");
    }

    #[test]
    fn the_demo_report_parses_into_both_transports() {
        let p = DemoPing::new(DemoCluster::new(&Config::reference()), "ubunturdma2", 10.0);
        let parsed = super::super::parse(&p.report(), "ubunturdma2");
        assert_eq!(parsed.unknown_lines, 0);
        for t in ["rdma", "tcp"] {
            let l = [
                ("peer", "ubunturdma2"),
                ("transport", t),
                ("quantile", "0.99"),
            ];
            assert!(
                matches!(parsed.find(names::PING_RTT_SECONDS, &l), Some(Value::Gauge(v)) if v > 0.0),
                "{t}"
            );
        }
    }
}
