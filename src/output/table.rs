//! `snapshot --format table`: the worst offenders first (which node sends the most CNPs, which
//! port pauses most), then every counter with its rate.

use crate::metrics::human::{self, name};
use crate::metrics::query::{Agg, latest, pause_fraction_by, rate_by};
use crate::metrics::store::SourceHealth;
use crate::metrics::{Store, Value, names};
use crate::safe::line as cell;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A rate under a column whose title carries the `/s` (the screen's rule, `metrics::human`).
fn rate(v: Option<f64>) -> String {
    human::num(v)
}

/// What a source that never answered means where the table is printed: `snapshot` waited for it
/// ("no answer"); a replay only holds the polls inside the recording, so a source whose polls fell
/// outside it was simply not recorded, and is not down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Silent {
    NoAnswer,
    NotRecorded,
}

/// One pass per metric (grouped rates), so the table costs O(series log series): 20k ports are
/// as cheap per row as 20.
pub fn render(store: &Store, silent: Silent) -> String {
    let mut out = String::new();
    let ecn = names::rdma_counter("np_ecn_marked_roce_packets");
    let cnp = names::rdma_counter("np_cnp_sent");
    let handled = names::rdma_counter("rp_cnp_handled");
    let nd = ["node", "device"];
    let (ecn_r, handled_r) = (
        rate_by(store, &ecn, &[], &nd),
        rate_by(store, &handled, &[], &nd),
    );
    let pause_r = rate_by(store, names::NIC_PFC_RX_PAUSE, &[], &["node"]);
    let pause_f = pause_fraction_by(store, names::NIC_PFC_RX_PAUSE_DURATION, &[], &["node"]);
    let get = |m: &BTreeMap<Vec<String>, Agg>, k: &[String]| m.get(k).and_then(|a| a.rate);
    let mut nodes: Vec<(String, String, [Option<f64>; 5])> = Vec::new();
    for (k, agg) in rate_by(store, &cnp, &[], &nd) {
        let n = std::slice::from_ref(&k[0]);
        let row = [
            get(&ecn_r, &k),
            agg.rate,
            get(&handled_r, &k),
            get(&pause_r, n),
            pause_f.get(n).copied(),
        ];
        let [node, dev]: [String; 2] = k.try_into().unwrap_or_default();
        nodes.push((node, dev, row));
    }
    nodes.sort_by(|a, b| b.2[1].unwrap_or(-1.0).total_cmp(&a.2[1].unwrap_or(-1.0)));
    let sp = ["switch", "port"];
    let all = [("priority", "all")];
    let tx_r = rate_by(store, names::SW_PFC_TX, &all, &sp);
    let qd_r = rate_by(store, names::SW_QUEUE_DROPPED, &[], &sp);
    let id_r = rate_by(store, names::SW_INGRESS_DROPPED, &[], &sp);
    let mut ports: Vec<(String, String, [Option<f64>; 4])> = Vec::new();
    for (k, agg) in rate_by(store, names::SW_PFC_RX, &all, &sp) {
        let row = [agg.rate, get(&tx_r, &k), get(&qd_r, &k), get(&id_r, &k)];
        let [sw, port]: [String; 2] = k.try_into().unwrap_or_default();
        ports.push((sw, port, row));
    }
    let pfc = |r: &[Option<f64>; 4]| r[0].unwrap_or(0.0) + r[1].unwrap_or(0.0);
    ports.sort_by(|a, b| pfc(&b.2).total_cmp(&pfc(&a.2)));

    if let Some((n, d, r)) = nodes.first() {
        let _ = writeln!(
            out,
            "Most CNPs sent:   {} {} ({} {})",
            cell(n),
            cell(d),
            rate(r[1]),
            name::CNP_SENT
        );
    }
    if let Some((s, p, r)) = ports.first() {
        let _ = writeln!(
            out,
            "Most PFC frames:  {} {} ({} {}, {} {})",
            cell(s),
            cell(p),
            rate(r[0]),
            name::PFC_RX,
            rate(r[1]),
            name::PFC_TX
        );
    }
    sources_line(&mut out, store, silent);

    if !nodes.is_empty() {
        let _ = writeln!(
            out,
            "\nNODES (by {})\n{:<14} {:<13} {:>12} {:>11} {:>14} {:>10} {:>8}",
            name::CNP_SENT,
            "node",
            "device",
            name::ECN_MARKED,
            name::CNP_SENT,
            name::CNP_HANDLED,
            name::NIC_PAUSE_RX,
            name::PAUSE_TIME
        );
        for (n, d, r) in &nodes {
            let _ = writeln!(
                out,
                "{:<14} {:<13} {:>12} {:>11} {:>14} {:>10} {:>8}",
                cell(n),
                cell(d),
                rate(r[0]),
                rate(r[1]),
                rate(r[2]),
                rate(r[3]),
                human::percent(r[4])
            );
        }
    }
    if !ports.is_empty() {
        let _ = writeln!(
            out,
            "\nSWITCH PORTS (by {})\n{:<14} {:<16} {:>10} {:>10} {:>12} {:>13}",
            name::PFC,
            "switch",
            "port",
            name::PFC_RX,
            name::PFC_TX,
            "q drops/s",
            "ingress dr/s"
        );
        for (s, p, r) in &ports {
            let _ = writeln!(
                out,
                "{:<14} {:<16} {:>10} {:>10} {:>12} {:>13}",
                cell(s),
                cell(p),
                rate(r[0]),
                rate(r[1]),
                rate(r[2]),
                rate(r[3])
            );
        }
    }
    type Show = fn(Option<f64>) -> String;
    let plain: Show = |v| v.map_or("-".into(), |x| format!("{x:.0}"));
    let loss: Show = |v| v.map_or("-".into(), |x| format!("{x:.4}"));
    let train: Vec<(&str, &str, Show)> = [
        (names::TRAIN_ITERATION, "iteration", plain),
        (names::TRAIN_LOSS, "loss", loss),
        (
            names::TRAIN_STEP_SECONDS,
            name::STEP,
            human::duration as Show,
        ),
        (
            names::TRAIN_ALLREDUCE_SECONDS,
            name::ALLREDUCE,
            human::duration,
        ),
    ]
    .into_iter()
    .filter(|(n, _, _)| latest(store, n, &[]).is_some())
    .collect();
    if !train.is_empty() {
        let _ = write!(out, "\nTRAINING:        ");
        for (n, label, show) in train {
            if let Some((_, Value::Gauge(v))) = latest(store, n, &[]) {
                let _ = write!(out, " {label} {}", show(Some(v)));
            }
        }
        out.push('\n');
    }

    let _ = writeln!(
        out,
        "\nALL SERIES\n{:<100} {:>20} {:>12}",
        "series", "value", "rate/s"
    );
    let mut all: Vec<_> = store.all().collect();
    all.sort_by(|a, b| a.1.key.cmp(&b.1.key));
    for (id, s) in all {
        let Some((_, v)) = s.latest(store) else {
            continue;
        };
        // Exact: the counter as the device gave it (in the metric's unit), the gauge unrounded.
        let val = match v {
            Value::Counter(n) | Value::Counter32(n) => n.to_string(),
            other => format!("{}", other.as_f64()),
        };
        let r = store.rate(id).and_then(|r| r.value());
        let _ = writeln!(
            out,
            "{:<100} {val:>20} {:>12}",
            cell(&s.key.to_string()),
            match v {
                // Seconds per second: the share of time, as the screen shows it.
                Value::CounterMicros(_) => human::percent(r),
                _ if v.is_counter() => rate(r),
                _ => String::new(),
            }
        );
    }
    for (_, h) in store.sources() {
        for n in &h.notes {
            let _ = writeln!(out, "note: {}: {}", cell(&h.name), cell(n));
        }
        if h.unknown_lines > 0 {
            let _ = writeln!(
                out,
                "note: {}: {} lines not understood (e.g. {:?})",
                cell(&h.name),
                h.unknown_lines,
                h.unknown_examples.first().map(String::as_str).unwrap_or("")
            );
        }
    }
    out
}

/// "Sources: 11 of 20 up; down: a (why), …", and, in a replay, the sources the recording holds no
/// poll of apart from the down ones.
fn sources_line(out: &mut String, store: &Store, silent: Silent) {
    let unpolled = |h: &SourceHealth| h.up.is_none();
    let not_recorded: Vec<std::borrow::Cow<str>> = store
        .sources()
        .filter(|(_, h)| silent == Silent::NotRecorded && unpolled(h))
        .map(|(_, h)| cell(&h.name))
        .collect();
    let down: Vec<String> = store
        .sources()
        .filter(|(_, h)| h.up != Some(true))
        .filter(|(_, h)| silent == Silent::NoAnswer || !unpolled(h))
        .map(|(_, h)| {
            format!(
                "{} ({})",
                cell(&h.name),
                cell(h.last_error.as_deref().unwrap_or("no answer"))
            )
        })
        .collect();
    let total = store.sources().count() - not_recorded.len();
    let _ = write!(
        out,
        "Sources:          {} of {total} up",
        total - down.len()
    );
    if !down.is_empty() {
        let _ = write!(out, "; down: {}", down.join(", "));
    }
    if !not_recorded.is_empty() {
        let _ = write!(
            out,
            "; not polled in the recording: {}",
            not_recorded.join(", ")
        );
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Parsed;

    /// One source up, one failed, one never polled: `snapshot` calls the silent one down, a
    /// replay says the recording holds no poll of it.
    #[test]
    fn a_source_never_polled_is_down_in_a_snapshot_and_not_recorded_in_a_replay() {
        let mut st = Store::new(60_000, 100);
        let (up, failed, _silent) = (
            st.add_source("n1", 1000),
            st.add_source("n2", 1000),
            st.add_source("topology", 60_000),
        );
        st.ingest(up, 1_000, &Parsed::default());
        st.fail(failed, 1_000, "timed out");
        let line = |s: Silent| {
            let t = render(&st, s);
            t.lines()
                .find(|l| l.starts_with("Sources:"))
                .map(str::to_string)
        };
        assert_eq!(
            line(Silent::NoAnswer).as_deref(),
            Some("Sources:          1 of 3 up; down: n2 (timed out), topology (no answer)")
        );
        assert_eq!(
            line(Silent::NotRecorded).as_deref(),
            Some(
                "Sources:          1 of 2 up; down: n2 (timed out); \
                 not polled in the recording: topology"
            )
        );
    }
}
