use super::*;
use crate::metrics::Value;

const DUMP: &str = "\
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/hw_counters/np_cnp_sent:42
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/hw_counters/np_ecn_marked_roce_packets:1,234\r
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/hw_counters/out_of_sequence:7
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/hw_counters/lifespan:12
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/counters/port_xmit_data:100
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/counters/port_rcv_data:250
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/state:4: ACTIVE
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/gid_attrs/ndevs/10:ens192.100
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/gid_attrs/ndevs/2:ens192
/tmp/x/sys/class/infiniband/rocep11s0/ports/1/rate:25 Gb/sec (1X EDR)
/tmp/x/sys/class/net/ens192/statistics/rx_bytes:5000
/tmp/x/sys/class/net/ens192/statistics/tx_bytes:6000
/tmp/x/sys/class/net/ens192/statistics/rx_dropped:3
";

fn labels(dev: &str) -> [(&'static str, &str); 3] {
    [("node", "n1"), ("device", dev), ("rdma_port", "1")]
}

#[test]
fn counters_state_lifespan_and_bytes() {
    let p = parse(DUMP, "n1");
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let l = labels("rocep11s0");
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &l),
        Some(Value::Counter(42))
    );
    assert_eq!(
        p.find("rocetop_rdma_np_ecn_marked_roce_packets_total", &l),
        Some(Value::Counter(1234))
    );
    // a 32-bit mlx5 Q counter
    assert_eq!(
        p.find("rocetop_rdma_out_of_sequence_total", &l),
        Some(Value::Counter32(7))
    );
    assert_eq!(
        p.find(names::RDMA_HW_COUNTERS_LIFESPAN, &l),
        Some(Value::Gauge(0.012))
    );
    assert_eq!(p.find("rocetop_rdma_lifespan_total", &[]), None);
    assert_eq!(p.find(names::RDMA_PORT_STATE, &l), Some(Value::Gauge(4.0)));
    assert_eq!(
        p.find("rocetop_rdma_port_xmit_data_total", &l),
        Some(Value::Counter(100))
    );
    // words × 4, labelled with the netdev of the lowest GID index (2 < 10 numerically)
    let tx = [("node", "n1"), ("netdev", "ens192"), ("direction", "tx")];
    let rx = [("node", "n1"), ("netdev", "ens192"), ("direction", "rx")];
    assert_eq!(p.find(NODE_RDMA_BYTES, &tx), Some(Value::Counter(400)));
    assert_eq!(p.find(NODE_RDMA_BYTES, &rx), Some(Value::Counter(1000)));
    assert_eq!(p.find(NODE_KERNEL_BYTES, &tx), Some(Value::Counter(6000)));
    assert_eq!(p.find(NODE_KERNEL_BYTES, &rx), Some(Value::Counter(5000)));
    assert_eq!(
        p.find(
            "rocetop_node_kernel_rx_dropped_total",
            &[("netdev", "ens192")]
        ),
        Some(Value::Counter(3))
    );
    assert!(p.notes.is_empty(), "{:?}", p.notes);
    assert_eq!(
        ports(DUMP),
        vec![PortInfo {
            device: "rocep11s0".into(),
            rdma_port: "1".into(),
            netdev: Some("ens192".into())
        }]
    );
}

#[test]
fn vport_byte_counters_take_precedence_over_words() {
    let dump = "\
/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data:100
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/tx_vport_rdma_unicast_bytes:1000
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/tx_vport_rdma_multicast_bytes:24
/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:100
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:0
";
    let p = parse(dump, "n");
    // no GID netdev: the device name stands in
    let tx = [("netdev", "mlx5_0"), ("direction", "tx")];
    let rx = [("netdev", "mlx5_0"), ("direction", "rx")];
    assert_eq!(p.find(NODE_RDMA_BYTES, &tx), Some(Value::Counter(1024)));
    assert_eq!(p.find(NODE_RDMA_BYTES, &rx), Some(Value::Counter(400)));
    assert_eq!(
        p.samples
            .iter()
            .filter(|s| s.key.name == NODE_RDMA_BYTES)
            .count(),
        2
    );
}

#[test]
fn notes_for_missing_dcqcn_and_missing_rdma() {
    let p = parse(
        "/sys/class/infiniband/mlx4_0/ports/1/counters/port_rcv_data:8\n",
        "n",
    );
    assert_eq!(
        p.notes,
        vec!["mlx4_0: no DCQCN counters (np_cnp_sent...) in hw_counters"]
    );
    let p = parse("/sys/class/net/ens192/statistics/rx_bytes:1\n", "n");
    assert_eq!(p.notes, vec!["no RDMA device"]);
    let p = parse("", "n");
    assert_eq!(p.notes, vec!["no RDMA device"]);
}

#[test]
fn junk_is_counted_and_missing_stays_missing() {
    let dump = "\
grep: /sys/class/infiniband/x: No such file or directory
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:N/A
/sys/class/infiniband/mlx5_0/ports/1/state:ACTIVE
/sys/class/infiniband/mlx5_0/ports/1/weird/thing:1
no slash here
/sys/devices/pci0000:00/0000:00:03.0/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled:5
";
    let p = parse(dump, "n1");
    // grep's own error is understood (a file it could not read), the other four are not
    assert_eq!(p.unknown_lines, 4, "{:?}", p.unknown_examples);
    assert!(
        p.notes
            .iter()
            .any(|n| n.starts_with("files the capture could not read")),
        "{:?}",
        p.notes
    );
    assert_eq!(p.find("rocetop_rdma_np_cnp_sent_total", &[]), None);
    assert_eq!(p.find(names::RDMA_PORT_STATE, &[]), None);
    // a ':' in the root prefix does not cut the path
    assert_eq!(
        p.find("rocetop_rdma_rp_cnp_handled_total", &labels("mlx5_0")),
        Some(Value::Counter(5))
    );
}

#[test]
fn byte_counter_names() {
    assert_eq!(
        byte_counter_direction("tx_vport_rdma_unicast_bytes"),
        Some(TX)
    );
    assert_eq!(
        byte_counter_direction("rx_vport_rdma_multicast_bytes"),
        Some(RX)
    );
    assert_eq!(byte_counter_direction("rdma_rx_bytes"), Some(RX));
    assert_eq!(
        byte_counter_direction("rx_vport_rdma_unicast_packets"),
        None
    );
    assert_eq!(byte_counter_direction("rdma_rx_packets"), None);
    assert_eq!(byte_counter_direction("np_cnp_sent"), None);
}

/// Relative lines take their device and port from the last `cd`/heading; with none at all they
/// are still counted, under device and port "unknown", and a note says the capture names no device.
#[test]
fn relative_lines_take_the_context_or_say_unknown() {
    let p = parse(
        "[root@n1 1]# grep -r . hw_counters counters\nhw_counters/np_cnp_sent:7\ncounters/port_rcv_data:25\n",
        "n1",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let unknown = [
        ("node", "n1"),
        ("device", "unknown"),
        ("rdma_port", "unknown"),
    ];
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &unknown),
        Some(Value::Counter(7))
    );
    assert!(
        p.notes.iter().any(|n| n.contains("name no device")),
        "{:?}",
        p.notes
    );
    // The same lines after a `cd` into the port: its device and port.
    let p = parse(
        "$ cd /sys/class/infiniband/mlx5_2/ports/1\n$ grep -r . hw_counters\nhw_counters/np_cnp_sent:7\n",
        "n1",
    );
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &labels("mlx5_2")),
        Some(Value::Counter(7))
    );
    assert!(!p.notes.iter().any(|n| n.contains("name no device")));
    // A line that is neither a path, a heading nor a counter stays not understood.
    assert_eq!(
        parse("Port 1 hw counters: see below\n", "n1").unknown_lines,
        1
    );
}

/// `for f in .../hw_counters/*; do echo $f $(cat $f); done`: full paths with the value after a
/// space, read like grep's `path:value`.
#[test]
fn echo_loop_path_space_value() {
    let p = parse(
        "/sys/class/infiniband/mlx5_1/ports/1/hw_counters/np_cnp_sent 12\n/sys/class/infiniband/mlx5_1/ports/1/state 4: ACTIVE\n",
        "n1",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(
        p.find("rocetop_rdma_np_cnp_sent_total", &labels("mlx5_1")),
        Some(Value::Counter(12))
    );
    assert_eq!(
        p.find("rocetop_rdma_port_state", &labels("mlx5_1")),
        Some(Value::Gauge(4.0))
    );
}
