//! Prometheus text exposition (format 0.0.4) of a store: every series once with its newest value,
//! the per-second rate of every counter as a `_per_second` gauge, and the health of every source.

use crate::metrics::store::Kind;
use crate::metrics::{SeriesKey, Store, Value, names, write_key};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// What a family means, for `# HELP`. Families without an entry get a generic line.
pub(crate) fn help(name: &str) -> String {
    let base = name
        .trim_end_matches("_total")
        .trim_end_matches("_per_second");
    if let Some(c) = names::rdma_counter_of(name) {
        return format!("mlx5 RDMA hw counter {c} (sysfs hw_counters/counters)");
    }
    let known: &[(&str, &str)] = &[
        (
            "rocetop_switch_queue_tx_packets",
            "Packets transmitted by a switch port queue (QoS group)",
        ),
        (
            "rocetop_switch_queue_tx_bytes",
            "Bytes transmitted by a switch port queue (QoS group)",
        ),
        (
            "rocetop_switch_queue_dropped_packets",
            "Packets dropped by a switch port queue, by reason",
        ),
        (
            "rocetop_switch_ingress_dropped_packets",
            "Packets dropped at switch port ingress (MMU, overflow)",
        ),
        (
            "rocetop_switch_pfc_rx_frames",
            "PFC pause frames received by a switch port",
        ),
        (
            "rocetop_switch_pfc_tx_frames",
            "PFC pause frames sent by a switch port",
        ),
        (
            "rocetop_switch_pfc_enabled",
            "PFC enabled on a switch port priority (1) or not (0)",
        ),
        (
            "rocetop_switch_qos_dscp_map_info",
            "The DSCP map (SONiC DSCP_TO_TC_MAP, NX-OS qos policy) a switch port classifies by (port=all: switch-wide)",
        ),
        (
            "rocetop_switch_qos_dscp_priority",
            "The priority a switch DSCP map classifies a DSCP to (SONiC TC, NX-OS qos-group as its PFC CoS)",
        ),
        (
            "rocetop_switch_qos_trust_dscp",
            "A switch port classifies by DSCP (1) or by CoS / not at all (0)",
        ),
        (
            "rocetop_switch_qos_ecn_enabled",
            "ECN marking configured on a switch port priority's egress queue (1) or not (0)",
        ),
        (
            "rocetop_switch_qos_ecn_min_threshold_bytes",
            "WRED/ECN minimum threshold of a switch port priority's egress queue, bytes",
        ),
        (
            "rocetop_switch_flowcontrol_enabled",
            "802.3x flow control operational on a switch port",
        ),
        (
            "rocetop_nic_pfc_rx_pause_frames",
            "PFC pause frames received by a host NIC priority",
        ),
        (
            "rocetop_nic_pfc_tx_pause_frames",
            "PFC pause frames sent by a host NIC priority",
        ),
        (
            "rocetop_nic_pfc_rx_pause_duration_seconds",
            "Time a host NIC priority was paused by its peer (ethtool rx_prioN_pause_duration, counted in us, shown in seconds)",
        ),
        (
            "rocetop_nic_pfc_tx_pause_duration_seconds",
            "Time a host NIC priority paused its peer (ethtool tx_prioN_pause_duration, counted in us, shown in seconds)",
        ),
        (
            "rocetop_node_rdma_bytes",
            "Bytes carried by RDMA on a node's RDMA netdev",
        ),
        (
            "rocetop_node_kernel_bytes",
            "Bytes carried by the kernel network stack on a node's netdev",
        ),
        (
            "rocetop_train_iteration",
            "Training iteration from the training log",
        ),
        ("rocetop_train_loss", "Training loss from the training log"),
        (
            "rocetop_train_step_seconds",
            "Training step time from the training log",
        ),
        (
            "rocetop_train_allreduce_seconds",
            "All-reduce time per step from the training log",
        ),
        (
            "rocetop_gpu_utilization_percent",
            "Percent of the last sample period a kernel ran on the GPU (nvidia-smi utilization.gpu)",
        ),
        (
            "rocetop_gpu_memory_utilization_percent",
            "Percent of the last sample period GPU memory was read or written",
        ),
        ("rocetop_gpu_power_watts", "GPU board power draw, watts"),
        (
            "rocetop_gpu_temperature_celsius",
            "GPU core temperature, degrees Celsius",
        ),
        ("rocetop_gpu_memory_used_bytes", "GPU memory in use, bytes"),
        (
            "rocetop_gpu_memory_total_bytes",
            "GPU memory installed, bytes",
        ),
        (
            "rocetop_gpu_clock_throttle_active",
            "Whether a clock throttle reason (power cap, thermal, hardware slowdown) holds the GPU (1) or not (0)",
        ),
        (
            "rocetop_gpu_nic_path_info",
            "How a GPU reaches an RDMA NIC (nvidia-smi topo -m: PIX, PXB, PHB, NODE, SYS)",
        ),
        (
            "rocetop_gpu_numa_node",
            "The NUMA node a GPU is attached to",
        ),
        (
            "rocetop_gpu_last_xid",
            "The last XID error code the driver reported for the GPU (0: none)",
        ),
        (
            "rocetop_gpu_tensor_active_ratio",
            "Fraction of cycles the GPU's tensor pipe was active (0..1)",
        ),
        (
            "rocetop_source_up",
            "Whether the source's last poll succeeded",
        ),
        (
            "rocetop_source_last_success_timestamp_seconds",
            "Unix time of the source's last successful poll",
        ),
    ];
    let what = known
        .iter()
        .find(|(k, _)| *k == base)
        .map(|(_, h)| (*h).to_string())
        .unwrap_or_else(|| format!("rocetop metric {base}"));
    if name.ends_with("_seconds_per_second") {
        format!("{what}, per second over the last poll interval: the fraction of time, 0..1")
    } else if name.ends_with("_per_second") {
        format!("{what}, per second over the last poll interval")
    } else {
        what
    }
}

pub(crate) fn fmt_f64(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A series' newest value as a sample line shows it: a counter's integer as it is (a µs-kept
/// seconds counter in seconds), anything else as a float.
pub(crate) fn value_text(counter: bool, v: Value) -> String {
    match v {
        Value::Counter(n) | Value::Counter32(n) if counter => n.to_string(),
        other => fmt_f64(other.as_f64()),
    }
}

/// One family: its type and its lines, one text (a line per series as its own `String` cost
/// ~40 bytes more each, on top of the text).
pub(crate) struct Family {
    kind: &'static str,
    lines: String,
    /// Its name is outside the exposition format: its lines are not written (one such line
    /// makes a Prometheus drop the whole scrape, or read the series it spells).
    refused: bool,
}

/// The comment that counts the series [`Family::refused`] kept out.
pub(crate) fn refused_note(series: usize) -> String {
    format!("# note: {series} series not written: a metric name outside the exposition format\n")
}

/// Render the store. `with_rates` adds `_per_second` gauges (snapshot); `parse` output has none.
pub fn render(store: &Store, with_rates: bool, with_health: bool) -> String {
    let mut fams: BTreeMap<String, Family> = BTreeMap::new();
    let mut refused = 0usize;
    let mut add = |name: &str, kind: &'static str, key: &SeriesKey, value: String| {
        // Looked up by `&str` first: a `String` per line only to find its family cost a lot.
        if !fams.contains_key(name) {
            fams.insert(
                name.to_string(),
                Family {
                    kind,
                    lines: String::new(),
                    refused: !names::is_metric_name(name),
                },
            );
        }
        let Some(f) = fams.get_mut(name) else { return };
        if f.refused {
            refused += 1;
            return;
        }
        let _ = write_key(&mut f.lines, name, &key.labels);
        f.lines.push(' ');
        f.lines.push_str(&value);
        f.lines.push('\n');
    };
    let mut series: Vec<_> = store.all().collect();
    series.sort_by(|a, b| a.1.key.cmp(&b.1.key));
    for (id, s) in series {
        let Some((_, v)) = s.latest(store) else {
            continue;
        };
        match s.kind() {
            Kind::Counter(_) => {
                add(&s.key.name, "counter", &s.key, value_text(true, v));
                if with_rates {
                    if let Some(r) = store.rate(id).and_then(|r| r.value()) {
                        let rate_name =
                            format!("{}_per_second", s.key.name.trim_end_matches("_total"));
                        add(&rate_name, "gauge", &s.key, fmt_f64(r));
                    }
                }
            }
            Kind::Gauge => add(&s.key.name, "gauge", &s.key, value_text(false, v)),
        }
    }
    if with_health {
        for (_, h) in store.sources() {
            // A source no poll has answered yet (just started, or absent from a recording) has
            // no line: its health is missing, not down (the JSON says null, the table "not
            // polled"); `absent(rocetop_source_up{source="…"})` finds it.
            if let Some(up) = h.up {
                let key = SeriesKey::new(names::SOURCE_UP, &[("source", &h.name)]);
                add(names::SOURCE_UP, "gauge", &key, u8::from(up).to_string());
            }
            if let Some(t) = h.last_success {
                let key = SeriesKey::new(names::SOURCE_LAST_SUCCESS, &[("source", &h.name)]);
                add(
                    names::SOURCE_LAST_SUCCESS,
                    "gauge",
                    &key,
                    fmt_f64(t as f64 / 1000.0),
                );
            }
        }
    }
    summaries(store, &mut fams);
    // Sized once: the families are freed as they are copied, so the peak is the text and one
    // family, not twice the text with a doubling buffer's slack.
    let size: usize = fams
        .iter()
        .map(|(n, f)| 2 * n.len() + help(n).len() + f.kind.len() + 16 + f.lines.len())
        .sum();
    let mut out = String::with_capacity(size);
    for (name, f) in fams {
        if f.refused {
            continue;
        }
        let _ = writeln!(out, "# HELP {name} {}", help(&name));
        let _ = writeln!(out, "# TYPE {name} {}", f.kind);
        out.push_str(&f.lines);
    }
    if refused > 0 {
        out.push_str(&refused_note(refused));
    }
    out
}

/// Families with a `quantile` label are summaries for Prometheus: typed so, with `_sum` and
/// `_count` taken from the window's probe count and mean.
fn summaries(store: &Store, fams: &mut BTreeMap<String, Family>) {
    let Some(f) = fams.get_mut(names::PING_RTT_SECONDS) else {
        return;
    };
    f.kind = "summary";
    let mut extra = Vec::new();
    for (_, s) in store.select(names::PING_WINDOW_PROBES, &[]) {
        let Some((_, n)) = s.latest(store) else {
            continue;
        };
        let mean_key = SeriesKey {
            name: names::PING_RTT_MEAN.into(),
            labels: s.key.labels.clone(),
        };
        // Without the window's mean there is no `_sum`: a summary is not given a made-up 0.
        let Some(mean) = store
            .id(&mean_key)
            .and_then(|id| store.get(id))
            .and_then(|m| m.latest(store))
            .map(|(_, v)| v.as_f64())
        else {
            continue;
        };
        let with = |suffix: &str| SeriesKey {
            name: format!("{}{suffix}", names::PING_RTT_SECONDS).into(),
            labels: s.key.labels.clone(),
        };
        extra.push(format!("{} {}", with("_sum"), fmt_f64(mean * n.as_f64())));
        extra.push(format!("{} {}", with("_count"), fmt_f64(n.as_f64())));
    }
    for l in extra {
        f.lines.push_str(&l);
        f.lines.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    #[test]
    fn counters_rates_gauges_and_health() {
        let mut st = Store::new(60_000, 100);
        let src = st.add_source("n1", 1000);
        let poll = |v: u64| Parsed {
            samples: vec![
                Sample::counter(
                    "rocetop_rdma_np_cnp_sent_total",
                    &[("node", "n1"), ("device", "d")],
                    v,
                ),
                Sample::gauge("rocetop_train_loss", &[("node", "n1")], 2.5),
            ],
            ..Default::default()
        };
        st.ingest(src, 0, &poll(10));
        st.ingest(src, 2000, &poll(30));
        let out = render(&st, true, true);
        assert!(out.contains("# TYPE rocetop_rdma_np_cnp_sent_total counter\n"));
        assert!(
            out.contains("rocetop_rdma_np_cnp_sent_total{device=\"d\",node=\"n1\"} 30\n"),
            "{out}"
        );
        assert!(
            out.contains("rocetop_rdma_np_cnp_sent_per_second{device=\"d\",node=\"n1\"} 10\n"),
            "{out}"
        );
        assert!(out.contains("rocetop_train_loss{node=\"n1\"} 2.5\n"));
        assert!(out.contains("rocetop_source_up{source=\"n1\"} 1\n"));
        assert_eq!(out.matches("# TYPE rocetop_train_loss").count(), 1);
    }

    #[test]
    fn source_health_is_one_zero_or_missing() {
        let mut st = Store::new(60_000, 100);
        let ok = st.add_source("ok", 1000);
        let bad = st.add_source("bad", 1000);
        st.add_source("never", 1000);
        st.ingest(ok, 0, &Parsed::default());
        st.fail(bad, 0, "connection refused");
        let out = render(&st, false, true);
        assert!(
            out.contains("rocetop_source_up{source=\"ok\"} 1\n"),
            "{out}"
        );
        assert!(
            out.contains("rocetop_source_up{source=\"bad\"} 0\n"),
            "{out}"
        );
        // No poll answered yet: missing, never a 0 that reads as "down".
        assert!(!out.contains("source=\"never\""), "{out}");
    }

    #[test]
    fn a_summary_without_its_mean_has_no_sum_rather_than_zero() {
        let mut st = Store::new(60_000, 100);
        let src = st.add_source("ping", 1000);
        let peer = [("peer", "n2"), ("quantile", "0.99")];
        let mut samples = vec![
            Sample::gauge(names::PING_RTT_SECONDS, &peer, 20e-6),
            Sample::gauge(names::PING_WINDOW_PROBES, &[("peer", "n2")], 10.0),
        ];
        st.ingest(src, 0, &Parsed::from(samples.clone()));
        let out = render(&st, false, false);
        assert!(
            out.contains("# TYPE rocetop_ping_rtt_seconds summary"),
            "{out}"
        );
        assert!(
            !out.contains("rocetop_ping_rtt_seconds_sum"),
            "no mean, no sum: {out}"
        );
        samples.push(Sample::gauge(
            names::PING_RTT_MEAN,
            &[("peer", "n2")],
            15e-6,
        ));
        st.ingest(src, 1000, &Parsed::from(samples));
        let out = render(&st, false, false);
        assert!(
            out.contains("rocetop_ping_rtt_seconds_sum{peer=\"n2\"} 0.00015"),
            "{out}"
        );
        assert!(
            out.contains("rocetop_ping_rtt_seconds_count{peer=\"n2\"} 10\n"),
            "{out}"
        );
    }
}
