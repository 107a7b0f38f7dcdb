//! Parse kind `ping`: the report a ping source answers each poll (rendered by
//! `collect::ping::report`; the format is documented there).

use crate::metrics::{Parsed, Sample, names};

/// The quantiles a report carries, in order: 0 = min, 1 = max.
pub const QUANTILES: [&str; 5] = ["0", "0.5", "0.99", "0.999", "1"];

fn float(s: &str) -> Option<f64> {
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(v)
}

/// A device label: an RDMA device name as sysfs lists it (`mlx5_0`, `rocep11s0`), with `/port`
/// where the device has several.
fn safe_device(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'))
}

fn safe_token(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 16
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// Parse a ping report of `peer`. Never panics; lines it does not understand are counted.
pub fn parse(text: &str, peer: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut transport: Option<String> = None;
    let mut device: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        if key == "note" && !rest.is_empty() {
            p.note(rest);
            continue;
        }
        if key == "device" && transport.is_some() {
            if safe_device(rest) {
                device = Some(rest.to_string());
            } else {
                // Its lines must not land on the rows of another rail, nor of no rail.
                transport = None;
                p.unknown(raw);
            }
            continue;
        }
        if key == "transport" {
            device = None;
            transport = safe_token(rest).then(|| rest.to_string());
            if transport.is_none() {
                p.unknown(raw);
            }
            continue;
        }
        let Some(t) = transport.as_deref() else {
            p.unknown(raw);
            continue;
        };
        let mut l = vec![("peer", peer), ("transport", t)];
        l.extend(device.as_deref().map(|d| ("device", d)));
        let f: Vec<&str> = rest.split_whitespace().collect();
        let sample = match (key, f.as_slice()) {
            ("sent", [v]) => v
                .parse()
                .ok()
                .map(|v| Sample::counter(names::PING_SENT, &l, v)),
            ("answered", [v]) => v
                .parse()
                .ok()
                .map(|v| Sample::counter(names::PING_ANSWERED, &l, v)),
            ("lost", [v]) => v
                .parse()
                .ok()
                .map(|v| Sample::counter(names::PING_LOST, &l, v)),
            ("retransmitted", [v]) => v
                .parse()
                .ok()
                .map(|v| Sample::counter(names::PING_RETRANSMITTED, &l, v)),
            ("rtt", [q, v]) => QUANTILES.iter().find(|x| *x == q).and_then(|q| {
                float(v).map(|v| {
                    let mut ql = l.clone();
                    ql.push(("quantile", q));
                    Sample::gauge(names::PING_RTT_SECONDS, &ql, v)
                })
            }),
            ("window", [v]) => float(v).map(|v| Sample::gauge(names::PING_WINDOW_PROBES, &l, v)),
            ("mean", [v]) => float(v).map(|v| Sample::gauge(names::PING_RTT_MEAN, &l, v)),
            ("stdev", [v]) => float(v).map(|v| Sample::gauge(names::PING_RTT_STDEV, &l, v)),
            ("jitter", [v]) => float(v).map(|v| Sample::gauge(names::PING_JITTER, &l, v)),
            ("bucket", [i, le, n]) if i.len() == 2 && i.bytes().all(|b| b.is_ascii_digit()) => {
                match (float(le), n.parse::<u64>()) {
                    (Some(le), Ok(n)) => {
                        let mut bl = l.clone();
                        bl.push(("bucket", *i));
                        p.push(Sample::gauge(names::PING_BUCKET_LE, &bl, le));
                        Some(Sample::gauge(names::PING_BUCKET_PROBES, &bl, n as f64))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        match sample {
            Some(s) => p.push(s),
            None => p.unknown(raw),
        }
    }
    p
}
