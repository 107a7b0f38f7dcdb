//! The text a ping source answers each poll (its parser, parse kind `ping`, is `parse::ping`). Going
//! through text like every other source means recordings store it and replay parses it again.
//!
//! ```text
//! transport tcp
//! device mlx5_1           (`device = "all"` only: the rail of this RDMA section)
//! sent 120
//! answered 118
//! lost 2
//! retransmitted 1         (RDMA RC only: answered after the NIC resent the probe)
//! rtt 0 0.000021          (quantile, seconds: 0 = min, 1 = max)
//! rtt 0.5 0.000030
//! mean 0.000031
//! stdev 0.000004
//! jitter 0.000003
//! bucket 00 0.000022 5    (index, upper bound in seconds, probes in the window)
//! note RDMA unavailable on this host: no devices
//! ```

use super::stats::Summary;
use crate::parse::ping::QUANTILES;
use std::fmt::Write as _;

/// One transport's totals and window, ready to render.
pub struct Section<'a> {
    pub transport: &'a str,
    /// The rail of a `device = "all"` session; None where one device is used (no label then).
    pub device: Option<&'a str>,
    pub sent: u64,
    pub answered: u64,
    pub lost: u64,
    /// Where the transport retransmits (RDMA RC): answers that needed it. None: not measured.
    pub retransmitted: Option<u64>,
    pub summary: Option<Summary>,
}

/// Seconds to the nanosecond: `0.000014370`, not `0.000014369999999999998`.
fn secs(ns: f64) -> String {
    format!("{:.9}", ns / 1e9)
}

pub fn render(sections: &[Section<'_>], notes: &[String]) -> String {
    let mut out = String::new();
    for s in sections {
        let _ = writeln!(out, "transport {}", s.transport);
        if let Some(d) = s.device {
            let _ = writeln!(out, "device {d}");
        }
        let _ = writeln!(
            out,
            "sent {}\nanswered {}\nlost {}",
            s.sent, s.answered, s.lost
        );
        if let Some(r) = s.retransmitted {
            let _ = writeln!(out, "retransmitted {r}");
        }
        let Some(m) = &s.summary else { continue };
        let qs = [m.min_ns, m.p50_ns, m.p99_ns, m.p999_ns, m.max_ns];
        for (q, v) in QUANTILES.iter().zip(qs) {
            let _ = writeln!(out, "rtt {q} {}", secs(v as f64));
        }
        let _ = writeln!(out, "window {}", m.count);
        let _ = writeln!(out, "mean {}", secs(m.mean_ns));
        let _ = writeln!(out, "stdev {}", secs(m.stdev_ns));
        if let Some(j) = m.jitter_ns {
            let _ = writeln!(out, "jitter {}", secs(j));
        }
        for (i, b) in m.buckets.iter().enumerate() {
            let _ = writeln!(out, "bucket {i:02} {} {}", secs(b.le_ns as f64), b.probes);
        }
    }
    for n in notes {
        let _ = writeln!(out, "note {}", n.replace(['\n', '\r'], " "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Value, names};
    use crate::parse::ping::parse;
    use proptest::prelude::*;

    fn sample_report() -> String {
        let v: Vec<u64> = (1..=1000).map(|x| x * 1000).collect();
        let mut h = hdrhistogram::Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("h");
        let s = super::super::stats::summarize(&v, &mut h);
        render(
            &[
                Section {
                    transport: "tcp",
                    device: None,
                    sent: 1002,
                    answered: 1000,
                    lost: 2,
                    retransmitted: None,
                    summary: s,
                },
                Section {
                    transport: "rdma",
                    device: None,
                    sent: 0,
                    answered: 0,
                    lost: 0,
                    retransmitted: Some(1),
                    summary: None,
                },
            ],
            &["RDMA unavailable on this host: no devices".to_string()],
        )
    }

    #[test]
    fn a_report_becomes_the_ping_metrics() {
        let p = parse(&sample_report(), "ubunturdma2");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let tcp = [("peer", "ubunturdma2"), ("transport", "tcp")];
        assert_eq!(p.find(names::PING_SENT, &tcp), Some(Value::Counter(1002)));
        assert_eq!(p.find(names::PING_LOST, &tcp), Some(Value::Counter(2)));
        let q = |q: &str| {
            p.find(
                names::PING_RTT_SECONDS,
                &[
                    ("peer", "ubunturdma2"),
                    ("transport", "tcp"),
                    ("quantile", q),
                ],
            )
        };
        assert_eq!(q("0"), Some(Value::Gauge(0.000001)));
        assert_eq!(q("1"), Some(Value::Gauge(0.001)));
        assert!(matches!(q("0.99"), Some(Value::Gauge(v)) if (v - 0.00099).abs() < 1e-6));
        assert_eq!(
            p.find(names::PING_JITTER, &tcp),
            Some(Value::Gauge(0.000001))
        );
        assert_eq!(
            p.samples
                .iter()
                .filter(|s| s.key.name == names::PING_BUCKET_PROBES)
                .count(),
            super::super::stats::BUCKETS
        );
        let rdma = [("peer", "ubunturdma2"), ("transport", "rdma")];
        assert_eq!(p.find(names::PING_SENT, &rdma), Some(Value::Counter(0)));
        // RC's resends are counted where they are measured, and absent (not 0) elsewhere.
        assert_eq!(
            p.find(names::PING_RETRANSMITTED, &rdma),
            Some(Value::Counter(1))
        );
        assert_eq!(p.find(names::PING_RETRANSMITTED, &tcp), None);
        assert_eq!(
            p.find(names::PING_RTT_SECONDS, &rdma),
            None,
            "no answers: no RTT, not 0"
        );
        assert_eq!(
            p.notes,
            vec!["RDMA unavailable on this host: no devices".to_string()]
        );
    }

    /// `device = "all"`: each rail's section carries its device, a label on all of its metrics;
    /// the TCP section after it has none, and a device name with odd bytes is not a label.
    #[test]
    fn a_rails_section_labels_its_metrics_with_its_device() {
        let text = "transport rdma\ndevice mlx5_0\nsent 10\nrtt 0.5 0.000012\nbucket 00 0.000013 4\n\
                    transport rdma\ndevice mlx5_1/2\nsent 7\n\
                    transport tcp\nsent 9\n\
                    transport rdma\ndevice mlx\x1b[0m\nsent 1\n";
        let p = parse(text, "gpu2");
        let on = |d: &'static str| [("transport", "rdma"), ("device", d)];
        assert_eq!(
            p.find(names::PING_SENT, &on("mlx5_0")),
            Some(Value::Counter(10))
        );
        assert_eq!(
            p.find(names::PING_SENT, &on("mlx5_1/2")),
            Some(Value::Counter(7))
        );
        assert!(
            p.find(
                names::PING_RTT_SECONDS,
                &[("device", "mlx5_0"), ("quantile", "0.5")]
            )
            .is_some()
        );
        assert!(
            p.find(
                names::PING_BUCKET_PROBES,
                &[("device", "mlx5_0"), ("bucket", "00")]
            )
            .is_some()
        );
        let tcp: Vec<_> = p
            .samples
            .iter()
            .filter(|s| s.key.label("transport") == Some("tcp"))
            .collect();
        assert_eq!(tcp.len(), 1);
        assert_eq!(tcp[0].key.label("device"), None, "no device on TCP");
        assert_eq!(p.unknown_lines, 2, "the odd device line, and its section's");
        assert!(
            p.samples
                .iter()
                .all(|s| s.key.label("device").is_none_or(|d| !d.contains('\x1b')))
        );
    }

    #[test]
    fn a_section_renders_its_device_only_where_it_has_one() {
        let one = |device| {
            render(
                &[Section {
                    transport: "rdma",
                    device,
                    sent: 1,
                    answered: 0,
                    lost: 1,
                    retransmitted: None,
                    summary: None,
                }],
                &[],
            )
        };
        assert_eq!(one(None), "transport rdma\nsent 1\nanswered 0\nlost 1\n");
        assert_eq!(
            one(Some("mlx5_0")),
            "transport rdma\ndevice mlx5_0\nsent 1\nanswered 0\nlost 1\n"
        );
    }

    #[test]
    fn junk_is_counted_not_turned_into_numbers() {
        let p = parse(
            "sent 5\ntransport TCP!\ntransport tcp\nrtt 0.42 0.1\nrtt 0.5 -1\nlost x\nsent 3\r\n",
            "p",
        );
        assert_eq!(p.unknown_lines, 5);
        assert_eq!(p.samples.len(), 1);
    }

    proptest! {
        #[test]
        fn never_panics_on_mutated_reports(cut in 0usize..2000, junk in ".{0,40}", at in 0usize..2000) {
            let r = sample_report();
            let mut cut = cut.min(r.len());
            while !r.is_char_boundary(cut) { cut -= 1; }
            let mut s = r[..cut].to_string();
            let mut at = at.min(s.len());
            while !s.is_char_boundary(at) { at -= 1; }
            s.insert_str(at, &junk);
            let _ = parse(&s, "peer");
        }
    }
}
