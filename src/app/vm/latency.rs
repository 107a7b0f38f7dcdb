//! Latency: one row per peer and transport (RDMA verbs, TCP), and per rail (`device`) where a
//! peer is pinged over every rail (`device = "all"`), quantiles of the latest window.

use super::{Ctx, sev_rank};
use crate::app::alerts::{Subject, WINDOW_MS};
use crate::app::table::{Cell, Chart, ChartKind, Col, Row, RowId, TabView, Tone, Val, col, lcol};
use crate::metrics::Store;
use crate::metrics::names::{
    PING_BUCKET_LE, PING_BUCKET_PROBES, PING_JITTER, PING_LOST, PING_RETRANSMITTED,
    PING_RTT_SECONDS, PING_RTT_STDEV, PING_SENT,
};
use crate::metrics::query;
use std::collections::BTreeSet;

/// p99 and loss say whether the network hurts: never hidden. `retx%` is the share of RDMA RC
/// probes that came back only through a resend (a frame lost on the way): RC hides loss as delay.
pub const COLS: [Col; 11] = [
    lcol("peer", 14, 0),
    lcol("transport", 9, 0),
    col("RTT min", 8, 3),
    col("p50", 8, 1),
    col("p99", 8, 0),
    col("p99.9", 8, 2),
    col("max", 8, 2),
    col("stdev", 8, 3),
    col("jitter", 8, 3),
    col("loss%", 7, 0),
    col("retx%", 7, 3),
];

/// [`COLS`] with room in the transport column for a rail's device (`rdma mlx5_1/2`), used only
/// when some row has one.
pub const COLS_RAILS: [Col; 11] = {
    let mut c = COLS;
    c[1] = lcol("transport", 16, 0);
    c
};

/// Column labels and `quantile` label values, in column order from the third column.
pub const QUANTILES: [(&str, &str); 5] = [
    ("min", "0"),
    ("p50", "0.5"),
    ("p99", "0.99"),
    ("p99.9", "0.999"),
    ("max", "1"),
];

/// The collector's RTT histogram of one peer over one transport and rail (`device`, "" for none):
/// (upper bound in seconds, probes) per bucket, lowest first; empty where it publishes none.
pub fn rtt_buckets(st: &Store, peer: &str, transport: &str, device: &str) -> Vec<(f64, f64)> {
    let lbl = [("peer", peer), ("transport", transport)];
    let by = ["device", "bucket"];
    let les = query::latest_by(st, PING_BUCKET_LE, &lbl, &by);
    let counts = query::latest_by(st, PING_BUCKET_PROBES, &lbl, &by);
    let mut buckets: Vec<(f64, f64)> = les
        .iter()
        .filter(|(k, _)| k.first().is_some_and(|d| d == device))
        .filter_map(|(k, le)| counts.get(k).map(|n| (*le, *n)))
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    buckets
}

pub fn view(cx: &Ctx) -> TabView {
    let st = cx.store;
    let pt = ["peer", "transport", "device"];
    let q = query::latest_by(
        st,
        PING_RTT_SECONDS,
        &[],
        &["peer", "transport", "device", "quantile"],
    );
    let stdev = query::latest_by(st, PING_RTT_STDEV, &[], &pt);
    let jitter = query::latest_by(st, PING_JITTER, &[], &pt);
    let lost = cx.increase_by(PING_LOST, &[], &pt, cx.now - WINDOW_MS);
    let sent = cx.increase_by(PING_SENT, &[], &pt, cx.now - WINDOW_MS);
    let retx = cx.increase_by(PING_RETRANSMITTED, &[], &pt, cx.now - WINDOW_MS);
    // A rail gets its row before its first RTT (and a rail that cannot be pinged, whose note says
    // why, gets one at all): its probe counts are there from its first report.
    let rails = query::latest_by(st, PING_SENT, &[], &pt);
    let peers: BTreeSet<Vec<String>> = q
        .keys()
        .map(|k| k[..3.min(k.len())].to_vec())
        .chain(
            rails
                .keys()
                .filter(|k| k.get(2).is_some_and(|d| !d.is_empty()))
                .cloned(),
        )
        .collect();
    let mut rows = Vec::new();
    for k in &peers {
        let (peer, tr, dev) = (
            k.first().cloned().unwrap_or_default(),
            k.get(1).cloned().unwrap_or_default(),
            k.get(2).cloned().unwrap_or_default(),
        );
        let qv = |qt: &str| {
            q.get(&vec![peer.clone(), tr.clone(), dev.clone(), qt.to_string()])
                .copied()
        };
        let share = |of: Option<&u64>| match (of, sent.get(k)) {
            (Some(l), Some(s)) if *s > 0 => Some(*l as f64 / *s as f64),
            _ => None,
        };
        let (loss, resent) = (share(lost.get(k)), share(retx.get(k)));
        let sev = cx.alerts.worst_for(&Subject::Peer {
            peer: peer.clone(),
            transport: tr.clone(),
        });
        let shown = if dev.is_empty() {
            tr.clone()
        } else {
            format!("{tr} {dev}")
        };
        let mut cells = vec![Cell::tone(peer.clone(), Tone::of(sev)), Cell::new(shown)];
        for (_, qt) in QUANTILES {
            cells.push(Cell::new(Val::Secs(qv(qt))));
        }
        cells.push(Cell::new(Val::Secs(stdev.get(k).copied())));
        cells.push(Cell::new(Val::Secs(jitter.get(k).copied())));
        cells.push(Cell::warn_if(
            Val::Percent(loss),
            loss.is_some_and(|l| l > 0.0),
            Tone::Warn,
        ));
        cells.push(Cell::warn_if(
            Val::Percent(resent),
            resent.is_some_and(|l| l > 0.0),
            Tone::Warn,
        ));
        // A rail with no RTT whose pinger said why (not active, no address to bind): the reason
        // across its row, in place of the missing values.
        let why = (!dev.is_empty() && qv("0.5").is_none())
            .then(|| rail_note(cx, &peer, &dev))
            .flatten();
        let mut lbl = vec![("peer", peer.as_str()), ("transport", tr.as_str())];
        if !dev.is_empty() {
            lbl.push(("device", dev.as_str()));
        }
        let qlbl = |qt: &'static str| {
            let mut l = lbl.clone();
            l.push(("quantile", qt));
            l
        };
        let us = ChartKind::Gauge(1e6);
        rows.push(Row {
            id: RowId::Peer {
                peer: peer.clone(),
                transport: tr.clone(),
                device: dev.clone(),
            },
            name: if dev.is_empty() {
                format!("{peer} {tr}")
            } else {
                format!("{peer} {tr} {dev}")
            },
            cells,
            score: sev_rank(sev) * 1e9 + qv("0.99").unwrap_or(0.0),
            charts: std::rc::Rc::from(vec![
                Chart::new("RTT p50 (us)", PING_RTT_SECONDS, &qlbl("0.5"), us),
                Chart::new("RTT p99 (us)", PING_RTT_SECONDS, &qlbl("0.99"), us),
                Chart::new("RTT max (us)", PING_RTT_SECONDS, &qlbl("1"), us),
            ]),
            span: why.clone().map(|w| (2, Cell::tone(w, Tone::Warn))),
            notes: why.into_iter().collect(),
            ..Default::default()
        });
    }
    let any_rail = peers
        .iter()
        .any(|k| k.get(2).is_some_and(|d| !d.is_empty()));
    cx.arrange(false, &mut rows);
    TabView {
        cols: if any_rail { &COLS_RAILS } else { &COLS },
        rows,
        ..Default::default()
    }
}

/// What the ping source of `peer` says of its rail `device` ("mlx5_2 port 1 is 1: DOWN"), from
/// the note its pinger wrote for a rail it cannot ping over.
fn rail_note(cx: &Ctx, peer: &str, device: &str) -> Option<String> {
    let id = cx.source_id(&format!("ping {peer}"))?;
    let over = format!(" over {device}: ");
    cx.store
        .source(id)?
        .notes
        .iter()
        .find_map(|n| n.split_once(&over).map(|(_, why)| why.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    /// Buckets come back lowest bound first with their probe counts; one peer's never mixes with
    /// another's, and a bound without a count is left out.
    #[test]
    fn rtt_buckets_pair_bounds_with_counts_in_order() {
        let mut st = Store::new(600_000, 100);
        let src = st.add_source("ping", 1000);
        let b = |peer: &'static str, bucket: &'static str| {
            [("peer", peer), ("transport", "tcp"), ("bucket", bucket)]
        };
        let samples = vec![
            Sample::gauge(PING_BUCKET_LE, &b("n1", "2"), 400e-6),
            Sample::gauge(PING_BUCKET_PROBES, &b("n1", "2"), 3.0),
            Sample::gauge(PING_BUCKET_LE, &b("n1", "1"), 50e-6),
            Sample::gauge(PING_BUCKET_PROBES, &b("n1", "1"), 97.0),
            Sample::gauge(PING_BUCKET_LE, &b("n1", "3"), 1e-3),
            Sample::gauge(PING_BUCKET_LE, &b("n2", "1"), 9.0),
            Sample::gauge(PING_BUCKET_PROBES, &b("n2", "1"), 1.0),
        ];
        st.ingest(src, 1_000, &Parsed::from(samples));
        assert_eq!(
            rtt_buckets(&st, "n1", "tcp", ""),
            [(50e-6, 97.0), (400e-6, 3.0)]
        );
        assert!(rtt_buckets(&st, "n1", "rdma", "").is_empty());
    }
}
