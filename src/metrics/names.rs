//! Metric names of docs/architecture.md, in one place so the parsers, the screen and the exporters
//! agree.
//! Counters end in `_total`; per-counter families (`rocetop_rdma_<hw_counter>_total`) are built by helpers.

pub const PREFIX: &str = "rocetop_";

// switch queues
pub const SW_QUEUE_TX_PACKETS: &str = "rocetop_switch_queue_tx_packets_total";
pub const SW_QUEUE_TX_BYTES: &str = "rocetop_switch_queue_tx_bytes_total";
pub const SW_QUEUE_DROPPED: &str = "rocetop_switch_queue_dropped_packets_total";
pub const SW_QUEUE_DROPPED_BYTES: &str = "rocetop_switch_queue_dropped_bytes_total";
pub const SW_QUEUE_ECN_MARKED: &str = "rocetop_switch_queue_ecn_marked_packets_total";
pub const SW_QUEUE_DEPTH: &str = "rocetop_switch_queue_depth_bytes";
pub const SW_INGRESS_DROPPED: &str = "rocetop_switch_ingress_dropped_packets_total";
pub const SW_INGRESS_DROPPED_BYTES: &str = "rocetop_switch_ingress_dropped_bytes_total";
// switch PFC and 802.3x
pub const SW_PFC_RX: &str = "rocetop_switch_pfc_rx_frames_total";
pub const SW_PFC_TX: &str = "rocetop_switch_pfc_tx_frames_total";
pub const SW_PFC_ENABLED: &str = "rocetop_switch_pfc_enabled";
pub const SW_PFC_WATCHDOG_STORMS: &str = "rocetop_switch_pfc_watchdog_storms_total";
// PFC watchdog (SONiC `show pfcwd stats`, NX-OS `show queuing pfc-queue detail`) {switch,port,priority}
pub const SW_PFC_WATCHDOG_RESTORED: &str = "rocetop_switch_pfc_watchdog_restored_total";
/// 1 while the watchdog holds the queue shut (SONiC `stormed`, NX-OS `[Shutdown]`).
pub const SW_PFC_WATCHDOG_QUEUE_SHUT: &str = "rocetop_switch_pfc_watchdog_queue_shut";
/// Packets the watchdog dropped on a shut queue {direction=tx|rx}.
pub const SW_PFC_WATCHDOG_DROPPED: &str = "rocetop_switch_pfc_watchdog_dropped_packets_total";
pub const SW_LINK_PAUSE_RX: &str = "rocetop_switch_link_pause_rx_frames_total";
pub const SW_LINK_PAUSE_TX: &str = "rocetop_switch_link_pause_tx_frames_total";
pub const SW_FLOWCONTROL_ENABLED: &str = "rocetop_switch_flowcontrol_enabled";
// switch port counters
pub const SW_PORT_RX_BYTES: &str = "rocetop_switch_port_rx_bytes_total";
pub const SW_PORT_TX_BYTES: &str = "rocetop_switch_port_tx_bytes_total";
pub const SW_PORT_RX_PACKETS: &str = "rocetop_switch_port_rx_packets_total";
pub const SW_PORT_TX_PACKETS: &str = "rocetop_switch_port_tx_packets_total";
pub const SW_PORT_ERRORS: &str = "rocetop_switch_port_errors_total";
/// A switch port's MTU (`MTU 9216 bytes` in `show interface`; EOS `Ethernet MTU`/`IP MTU`), a gauge.
pub const SW_PORT_MTU_BYTES: &str = "rocetop_switch_port_mtu_bytes";
// switch QoS classification and ECN (topology reads: SONiC CONFIG_DB, NX-OS `show running-config ipqos`)
/// 1 per DSCP map a port classifies by {switch,port,map}; `port="all"`: the switch-wide binding.
pub const SW_QOS_DSCP_MAP: &str = "rocetop_switch_qos_dscp_map_info";
/// The priority a DSCP is classified to by a map {switch,map,dscp}: SONiC's traffic class, NX-OS's
/// qos-group carried to the PFC CoS its network-qos class pauses.
pub const SW_QOS_DSCP_PRIORITY: &str = "rocetop_switch_qos_dscp_priority";
/// 1 when a port classifies by DSCP, 0 when by CoS or not at all {switch,port}.
pub const SW_QOS_TRUST_DSCP: &str = "rocetop_switch_qos_trust_dscp";
/// 1 when ECN marking is configured on a priority's egress queue, 0 when it drops {switch,port,priority}.
pub const SW_QOS_ECN_ENABLED: &str = "rocetop_switch_qos_ecn_enabled";
/// The WRED/ECN minimum threshold of that queue, bytes {switch,port,priority}.
pub const SW_QOS_ECN_MIN_BYTES: &str = "rocetop_switch_qos_ecn_min_threshold_bytes";

// host NIC (ethtool -S)
pub const NIC_PFC_RX_PAUSE: &str = "rocetop_nic_pfc_rx_pause_frames_total";
pub const NIC_PFC_TX_PAUSE: &str = "rocetop_nic_pfc_tx_pause_frames_total";
// Prometheus wants base units: these are in seconds; the NIC counts µs, so the ethtool parser emits
// them as `Value::CounterMicros` and every read is in seconds (a rate is the paused fraction, 0..1).
pub const NIC_PFC_RX_PAUSE_DURATION: &str = "rocetop_nic_pfc_rx_pause_duration_seconds_total";
pub const NIC_PFC_TX_PAUSE_DURATION: &str = "rocetop_nic_pfc_tx_pause_duration_seconds_total";
pub const NIC_PFC_RX_PAUSE_TRANSITION: &str = "rocetop_nic_pfc_rx_pause_transitions_total";
pub const NIC_PFC_TX_PAUSE_TRANSITION: &str = "rocetop_nic_pfc_tx_pause_transitions_total";
// host QoS (mlnx_qos, sysfs ecn knobs, ethtool -a, mtu): gauges {node,netdev,...}
pub const NIC_QOS_PFC_ENABLED: &str = "rocetop_nic_qos_pfc_enabled";
/// 1 when the NIC classifies by DSCP (`Priority trust state: dscp`), 0 for PCP.
pub const NIC_QOS_TRUST_DSCP: &str = "rocetop_nic_qos_trust_dscp";
/// The priority a DSCP value maps to {dscp}.
pub const NIC_QOS_DSCP_PRIORITY: &str = "rocetop_nic_qos_dscp_priority";
/// The traffic class a priority rides {priority}.
pub const NIC_QOS_PRIORITY_TC: &str = "rocetop_nic_qos_priority_tc";
/// ETS minimum bandwidth of a traffic class, percent {tc}; strict classes have none.
pub const NIC_QOS_TC_BANDWIDTH_PERCENT: &str = "rocetop_nic_qos_tc_bandwidth_percent";
pub const NIC_QOS_TC_STRICT: &str = "rocetop_nic_qos_tc_strict";
pub const NIC_QOS_RX_BUFFER_BYTES: &str = "rocetop_nic_qos_receive_buffer_bytes";
/// The receive buffer a priority's PFC uses {priority}.
pub const NIC_QOS_PRIORITY_BUFFER: &str = "rocetop_nic_qos_priority_buffer";
/// DCQCN notification point / reaction point enabled (`ecn/roce_np|roce_rp/enable/<prio>`).
pub const NIC_QOS_DCQCN_NP_ENABLED: &str = "rocetop_nic_qos_dcqcn_np_enabled";
pub const NIC_QOS_DCQCN_RP_ENABLED: &str = "rocetop_nic_qos_dcqcn_rp_enabled";
/// 802.3x pause on the host NIC (`ethtool -a`) {direction=rx|tx}.
pub const NIC_FLOWCONTROL_ENABLED: &str = "rocetop_nic_flowcontrol_enabled";
pub const NIC_MTU_BYTES: &str = "rocetop_nic_mtu_bytes";
// topology
/// 1 per LLDP neighbour {node,netdev,switch,port,side=node|switch}: `side` says who reported it.
pub const LINK_NEIGHBOR_INFO: &str = "rocetop_link_neighbor_info";
// RDMA vs kernel bytes
pub const NODE_RDMA_BYTES: &str = "rocetop_node_rdma_bytes_total";
pub const NODE_KERNEL_BYTES: &str = "rocetop_node_kernel_bytes_total";
// RDMA port settings and state (gauges)
/// mlx5 refreshes hw_counters at most every `lifespan` ms (a setting, not a counter).
pub const RDMA_HW_COUNTERS_LIFESPAN: &str = "rocetop_rdma_hw_counters_lifespan_seconds";
/// The port state number from sysfs `ports/<n>/state` (`4: ACTIVE` → 4).
pub const RDMA_PORT_STATE: &str = "rocetop_rdma_port_state";

// training
pub const TRAIN_ITERATION: &str = "rocetop_train_iteration";
pub const TRAIN_LOSS: &str = "rocetop_train_loss";
pub const TRAIN_STEP_SECONDS: &str = "rocetop_train_step_seconds";
pub const TRAIN_ALLREDUCE_SECONDS: &str = "rocetop_train_allreduce_seconds";
pub const TRAIN_SAMPLES_PER_SECOND: &str = "rocetop_train_samples_per_second";
/// Highlighted training-log lines {node,log,class=warn|error|nccl|traceback|timeout}, counted by the
/// follower since it started (a traceback counts once), so alerts can fire on an increase.
/// Which network NCCL uses {node,log,rank,transport=ib_roce|ib|socket,device} (gauge 1), from
/// NCCL_DEBUG=INFO lines.
pub const NCCL_TRANSPORT_INFO: &str = "rocetop_nccl_transport_info";
pub const TRAIN_LOG_HIGHLIGHTS: &str = "rocetop_train_log_highlights_total";

// GPUs (nvidia-smi --query-gpu and topo -m on the node; dcgm-exporter in fleet mode) {node,gpu}:
// one unit per quantity, in the name.
/// 1 per GPU {node,gpu,uuid,pci_bus_id}: which board `gpu` (nvidia-smi's index) is.
pub const GPU_INFO: &str = "rocetop_gpu_info";
/// Percent of the last sample period a kernel ran (`utilization.gpu`, `DCGM_FI_DEV_GPU_UTIL`).
pub const GPU_UTILIZATION_PERCENT: &str = "rocetop_gpu_utilization_percent";
/// Percent of the period device memory was read or written (`utilization.memory`).
pub const GPU_MEMORY_UTILIZATION_PERCENT: &str = "rocetop_gpu_memory_utilization_percent";
pub const GPU_POWER_WATTS: &str = "rocetop_gpu_power_watts";
pub const GPU_TEMPERATURE_CELSIUS: &str = "rocetop_gpu_temperature_celsius";
/// Device memory in bytes (the driver prints MiB).
pub const GPU_MEMORY_USED_BYTES: &str = "rocetop_gpu_memory_used_bytes";
pub const GPU_MEMORY_TOTAL_BYTES: &str = "rocetop_gpu_memory_total_bytes";
/// 1 while a clock throttle reason holds {node,gpu,reason=sw_power_cap|hw_slowdown|sw_thermal|hw_thermal|hw_power_brake}.
pub const GPU_THROTTLE_ACTIVE: &str = "rocetop_gpu_clock_throttle_active";
/// ECC errors since the driver loaded (nvidia-smi's `volatile` counts).
pub const GPU_ECC_CORRECTED: &str = "rocetop_gpu_ecc_corrected_errors_total";
pub const GPU_ECC_UNCORRECTED: &str = "rocetop_gpu_ecc_uncorrected_errors_total";
/// 1 per GPU and NIC {node,gpu,device,path=PIX|PXB|PHB|NODE|SYS}: how the GPU reaches the NIC (`nvidia-smi topo -m`).
pub const GPU_NIC_PATH: &str = "rocetop_gpu_nic_path_info";
/// The NUMA node a GPU is attached to (`topo -m` NUMA Affinity).
pub const GPU_NUMA_NODE: &str = "rocetop_gpu_numa_node";
/// The last XID error the driver reported for the GPU (`DCGM_FI_DEV_XID_ERRORS`: a code, 0 for none).
pub const GPU_LAST_XID: &str = "rocetop_gpu_last_xid";
/// Fraction (0..1) of cycles the tensor pipe was active (`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE`).
pub const GPU_TENSOR_ACTIVE_RATIO: &str = "rocetop_gpu_tensor_active_ratio";

// ping
pub const PING_RTT_SECONDS: &str = "rocetop_ping_rtt_seconds";
pub const PING_COUNT: &str = "rocetop_ping_rtt_seconds_count";
pub const PING_LOST: &str = "rocetop_ping_lost_total";
pub const PING_SENT: &str = "rocetop_ping_sent_total";
/// RDMA RC probes answered only after the NIC's retransmit timeout (a frame was lost on the way and
/// resent): counted here, not as RTTs; they are also among the answered. Absent for TCP and UD.
pub const PING_RETRANSMITTED: &str = "rocetop_ping_retransmitted_total";
/// Probes answered in time (a counter; `_count` would read as a summary's count to promtool).
pub const PING_ANSWERED: &str = "rocetop_ping_answered_total";
/// Probes answered within the sliding window the quantiles describe.
pub const PING_WINDOW_PROBES: &str = "rocetop_ping_window_probes";
pub const PING_RTT_MEAN: &str = "rocetop_ping_rtt_mean_seconds";
pub const PING_RTT_STDEV: &str = "rocetop_ping_rtt_stdev_seconds";
/// Mean absolute difference of consecutive RTTs in the window.
pub const PING_JITTER: &str = "rocetop_ping_jitter_seconds";
/// Window histogram {peer,transport,bucket="00".."15"}: probes per bucket, and each bucket's upper
/// bound (15 equal buckets from min to p99, the last up to max; bounds move with the window).
pub const PING_BUCKET_PROBES: &str = "rocetop_ping_rtt_bucket_probes";
pub const PING_BUCKET_LE: &str = "rocetop_ping_rtt_bucket_le_seconds";

// health
pub const SOURCE_UP: &str = "rocetop_source_up";
pub const SOURCE_LAST_SUCCESS: &str = "rocetop_source_last_success_timestamp_seconds";
pub const SOURCE_UNKNOWN_LINES: &str = "rocetop_source_unparsed_lines";

/// `rocetop_rdma_<hw_counter>_total`, e.g. `np_cnp_sent` → `rocetop_rdma_np_cnp_sent_total`.
pub fn rdma_counter(hw_counter: &str) -> String {
    family("rocetop_rdma_", hw_counter)
}

/// `rocetop_nic_<ethtool_counter>_total` for every ethtool counter that has no name of its own.
pub fn nic_counter(ethtool_counter: &str) -> String {
    family("rocetop_nic_", ethtool_counter)
}

/// `rocetop_node_kernel_<counter>_total` for `/sys/class/net/<if>/statistics/<counter>` (not bytes).
pub fn kernel_counter(stat: &str) -> String {
    family("rocetop_node_kernel_", stat)
}

/// `<prefix><sanitized counter>_total`, in one allocation (thousands of samples a second).
fn family(prefix: &str, counter: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + counter.len() + "_total".len());
    out.push_str(prefix);
    sanitize_into(&mut out, counter);
    out.push_str("_total");
    out
}

/// The counter name as it appears inside a `rocetop_rdma_*_total` metric, if it is one.
pub fn rdma_counter_of(metric: &str) -> Option<&str> {
    metric
        .strip_prefix("rocetop_rdma_")
        .and_then(|s| s.strip_suffix("_total"))
}

/// A metric name the text exposition format can carry: `[a-zA-Z_:][a-zA-Z0-9_:]*`. A name from
/// another program (a fleet source's `__name__`) that is not one would break every line after it
/// in `rocetop export`, so it is refused where it is read.
pub fn is_metric_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_' || c == b':')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b':')
}

/// A label name of the text exposition format: `[a-zA-Z_][a-zA-Z0-9_]*`.
pub fn is_label_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Make a device counter name a valid Prometheus name fragment (`[a-zA-Z0-9_]`).
pub fn sanitize(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    sanitize_into(&mut out, raw);
    out
}

/// Append [`sanitize`]`(raw)` to `out`: ASCII alphanumerics lower-cased, every other run of
/// characters one `_`, none at either end.
fn sanitize_into(out: &mut String, raw: &str) {
    let start = out.len();
    for c in raw.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if out.len() > start && !out.ends_with('_') {
            out.push('_');
        }
    }
    if out.len() > start && out.ends_with('_') {
        out.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The previous sanitize (map, collapse `__`, trim `_`): the one-pass one must agree.
    fn sanitize_ref(raw: &str) -> String {
        let mut out: String = raw
            .trim()
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        while out.contains("__") {
            out = out.replace("__", "_");
        }
        out.trim_matches('_').to_string()
    }

    proptest::proptest! {
        #[test]
        fn sanitize_agrees_with_the_reference(s in "[aZ9_ .:é\\[\\]-]{0,10}") {
            proptest::prop_assert_eq!(sanitize(&s), sanitize_ref(&s));
            proptest::prop_assert_eq!(nic_counter(&s), format!("rocetop_nic_{}_total", sanitize_ref(&s)));
        }
    }

    #[test]
    fn family_names_are_prometheus_safe() {
        assert_eq!(
            rdma_counter("np_cnp_sent"),
            "rocetop_rdma_np_cnp_sent_total"
        );
        assert_eq!(
            nic_counter("rx_vport_rdma.unicast-bytes"),
            "rocetop_nic_rx_vport_rdma_unicast_bytes_total"
        );
        assert_eq!(
            rdma_counter_of("rocetop_rdma_np_cnp_sent_total"),
            Some("np_cnp_sent")
        );
        assert_eq!(rdma_counter_of("rocetop_nic_x_total"), None);
    }

    #[test]
    fn the_exposition_grammar_of_names() {
        for ok in [
            "a",
            "_x",
            "rocetop_rdma_np_cnp_sent_total",
            "job:rate5m",
            "A9",
        ] {
            assert!(is_metric_name(ok), "{ok}");
        }
        for bad in ["", "9a", "a b", "a\nb", "a{b}", "a-b", "é", "a\u{200b}"] {
            assert!(!is_metric_name(bad), "{bad:?}");
        }
        assert!(is_label_name("__name__") && is_label_name("rdma_port"));
        for bad in ["", "a:b", "1x", "k8s.pod", "a\tb"] {
            assert!(!is_label_name(bad), "{bad:?}");
        }
    }
}
