use super::*;
use crate::metrics::Value;

#[test]
fn pause_names_are_matched_exactly() {
    use Kind::*;
    type Case = (&'static str, Option<(Dir, Prio, Kind)>);
    let cases: &[Case] = &[
        ("rx_prio3_pause", Some((Dir::Rx, Prio::P(3), Pause))),
        (
            "rx_prio3_pause_duration",
            Some((Dir::Rx, Prio::P(3), Duration)),
        ),
        (
            "rx_prio3_pause_transition",
            Some((Dir::Rx, Prio::P(3), Transition)),
        ),
        ("tx_prio7_pause", Some((Dir::Tx, Prio::P(7), Pause))),
        (
            "tx_prio0_pause_duration",
            Some((Dir::Tx, Prio::P(0), Duration)),
        ),
        ("rx_global_pause", Some((Dir::Rx, Prio::Global, Pause))),
        (
            "tx_global_pause_duration",
            Some((Dir::Tx, Prio::Global, Duration)),
        ),
        (
            "rx_global_pause_transition",
            Some((Dir::Rx, Prio::Global, Transition)),
        ),
        ("rx_prio3_pause_duration_x", None),
        ("rx_prio3_pauses", None),
        ("rx_prio3_bytes", None),
        ("rx_prio_pause", None),
        ("rx_prio123_pause", None),
        ("rx_prio3_pause ", None),
        ("xrx_prio3_pause", None),
        ("rx3_pause", None),
        ("tx_pause_storm_warning_events", None),
        ("rx_pause_ctrl_phy", None),
        ("", None),
    ];
    for (name, want) in cases {
        assert_eq!(pause_name(name), *want, "{name:?}");
    }
}

#[test]
fn duration_never_lands_in_the_frame_counter() {
    // Duration first, in case a matcher takes the first name that starts with the frame counter's.
    let text = "rx_prio3_pause_duration: 900\nrx_prio3_pause_transition: 4\nrx_prio3_pause: 5\n";
    let p = parse(text, "n", "ens192");
    let l = [("netdev", "ens192"), ("priority", "3")];
    assert_eq!(p.find(NIC_PFC_RX_PAUSE, &l), Some(Value::Counter(5)));
    assert_eq!(
        p.find(NIC_PFC_RX_PAUSE_DURATION, &l),
        Some(Value::CounterMicros(900)),
        "µs as the NIC counts them, read in seconds"
    );
    assert_eq!(
        p.find(NIC_PFC_RX_PAUSE_DURATION, &l).map(|v| v.as_f64()),
        Some(900e-6)
    );
    assert_eq!(
        p.find(NIC_PFC_RX_PAUSE_TRANSITION, &l),
        Some(Value::Counter(4))
    );
    assert_eq!(p.samples.len(), 3);
    assert!(p.notes.is_empty(), "{:?}", p.notes);
}

#[test]
fn global_pause_prefers_the_global_counters() {
    let text = "rx_pause_ctrl_phy: 1\ntx_pause_ctrl_phy: 2\nrx_global_pause: 3\n";
    let p = parse(text, "n", "e");
    let g = [("priority", "global")];
    assert_eq!(p.find(NIC_PFC_RX_PAUSE, &g), Some(Value::Counter(3)));
    assert_eq!(p.find(NIC_PFC_TX_PAUSE, &g), Some(Value::Counter(2)));
    assert_eq!(
        p.find("rocetop_nic_rx_pause_ctrl_phy_total", &[]),
        Some(Value::Counter(1))
    );
    assert_eq!(
        p.samples
            .iter()
            .filter(|s| s.key.name == NIC_PFC_RX_PAUSE)
            .count(),
        1
    );
    assert_eq!(
        p.notes,
        vec![
            "e: no rx_prio*_pause counters (PFC off on this port, or a VF: PFC counters live on the hypervisor)"
        ]
    );
}

#[test]
fn netdev_from_argument_command_or_dash() {
    let text =
        "[versa@ubunturdma1 ~]$ ethtool -S ens224\r\nNIC statistics:\r\n     rx_bytes: 10\r\n";
    let p = parse(text, "n", "");
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(
        p.find("rocetop_nic_rx_bytes_total", &[("netdev", "ens224")]),
        Some(Value::Counter(10))
    );
    let p = parse(text, "n", "ens192");
    assert_eq!(
        p.find("rocetop_nic_rx_bytes_total", &[("netdev", "ens192")]),
        Some(Value::Counter(10))
    );
    let p = parse("rx_bytes: 10\n", "n", "");
    assert_eq!(
        p.find("rocetop_nic_rx_bytes_total", &[("netdev", UNNAMED_NETDEV)]),
        Some(Value::Counter(10))
    );
}

#[test]
fn junk_is_counted_and_empty_output_is_noted() {
    let p = parse("rx_bytes: N/A\nsomething odd\n rx_ok: 1,200 \n", "n", "e");
    assert_eq!(p.unknown_lines, 2);
    assert_eq!(p.find("rocetop_nic_rx_bytes_total", &[]), None);
    assert_eq!(
        p.find("rocetop_nic_rx_ok_total", &[]),
        Some(Value::Counter(1200))
    );
    let p = parse("no stats available\n", "n", "lo");
    assert_eq!(p.unknown_lines, 0);
    assert_eq!(p.notes, vec!["lo: ethtool -S printed no counters"]);
}

#[test]
fn binary_garbage_with_a_colon_and_a_number_is_no_counter() {
    // Found by tests/parse/faults_parse.rs: 50 MB of junk made dozens of
    // `rocetop_nic_<junk>_total` series.
    let p = parse(
        "\u{fffd}\u{1}Qz\u{7f}k: 4\n\0\0x: 12\n%%: 3\n[0]: rx_ucast_packets: 7\n",
        "n",
        "e",
    );
    assert_eq!(p.unknown_lines, 3);
    assert_eq!(p.samples.len(), 1, "{:?}", p.samples);
    assert_eq!(
        p.find("rocetop_nic_0_rx_ucast_packets_total", &[]),
        Some(Value::Counter(7))
    );
}

#[test]
fn each_sample_names_the_line_its_value_came_from() {
    let text = "ethtool -S ens1\nNIC statistics:\n\n     rx_bytes: 5\n     rx_weird: 6\n     tx_pause_ctrl_phy: 7\n     rx_prio3_pause_duration: 8\n";
    let (p, lines) = parse_keeping_lines(text, "n", "", &mut |c| c != "rx_weird");
    assert_eq!(lines.len(), p.samples.len());
    let text_lines: Vec<&str> = num::lines(text).collect();
    for (s, &l) in p.samples.iter().zip(&lines) {
        let (_, v) = counter_line(text_lines[l as usize]).expect("a counter line");
        let got = match s.value {
            Value::Counter(x) | Value::Counter32(x) | Value::CounterMicros(x) => x,
            Value::Gauge(_) => panic!("a gauge"),
        };
        assert_eq!(got, v, "{:?} from line {l}", s.key);
    }
    // rx_weird is dropped: lines 3, 5 and 6 give samples (the header and blank line none).
    assert_eq!(lines, vec![3, 5, 6]);
    assert_eq!(
        counter_line("  rx_bytes : 1,024 \r"),
        Some(("rx_bytes", 1024))
    );
    assert_eq!(counter_line("NIC statistics:"), None);
}
