//! Switch parsers on the fixtures in tests/fixtures/{nxos,sonic,arista} (sources in SOURCES.md
//! beside them): exact numbers, unknown-line counts, and no panic on mutated input.

use proptest::prelude::*;
use rocetop::metrics::Parsed;
use rocetop::metrics::Value::{self, Counter, Gauge};
use rocetop::metrics::names::*;
use rocetop::parse::{Ctx, ParseKind, parse};

fn fixture(rel: &str) -> String {
    let path = format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn run(kind: ParseKind, rel: &str) -> Parsed {
    parse(kind, &fixture(rel), &Ctx::named("sw1"))
}

fn get(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<Value> {
    p.find(name, labels)
}

fn c(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<u64> {
    match get(p, name, labels) {
        Some(Counter(v)) => Some(v),
        other => panic!("{name} {labels:?}: {other:?}"),
    }
}

// ---------------------------------------------------------------- NX-OS show queuing interface

#[test]
fn nxos7_synthetic_otel_queuing() {
    let p = run(
        ParseKind::NxosQueuing,
        "nxos/synthetic/show-queuing-interface_nxos7-style_SYNTHETIC-otel-test.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let q = |g| [("switch", "sw1"), ("port", "Ethernet2/1"), ("qos_group", g)];
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &q("0")), Some(12 + 22 + 34));
    assert_eq!(c(&p, SW_QUEUE_TX_BYTES, &q("0")), Some(1200 + 2200 + 3400));
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[("qos_group", "0"), ("reason", "tail")]
        ),
        Some(3)
    );
    // Two stat/value pairs on one box row.
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &q("3")), Some(50));
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[("qos_group", "3"), ("reason", "tail")]
        ),
        Some(6)
    );
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[("qos_group", "all"), ("reason", "wred")]
        ),
        Some(9)
    );
    assert_eq!(
        c(
            &p,
            SW_INGRESS_DROPPED,
            &[("port", "Ethernet2/1"), ("reason", "mmu")]
        ),
        Some(10)
    );
    assert_eq!(
        c(&p, SW_INGRESS_DROPPED_BYTES, &[("reason", "mmu")]),
        Some(1024)
    );
    assert_eq!(c(&p, SW_PFC_TX, &[("priority", "all")]), Some(11));
    assert_eq!(c(&p, SW_PFC_RX, &[("priority", "all")]), Some(12));
    assert_eq!(c(&p, SW_PFC_TX, &[("priority", "3")]), Some(7));
    assert_eq!(c(&p, SW_PFC_RX, &[("priority", "3")]), Some(8));
    assert_eq!(c(&p, SW_PFC_TX, &[("priority", "0")]), Some(0));
    assert_eq!(p.samples.len(), 3 + 2 + 1 + 2 + 2 + 4);
}

#[test]
fn nxos7_demo_queuing_with_config_tables() {
    let p = run(
        ParseKind::NxosQueuing,
        "nxos/synthetic/demo-show-queuing-interface_nxos7_SYNTHETIC.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let port = ("port", "Ethernet1/1/2");
    let g = |g| [port, ("qos_group", g)];
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &g("0")), Some(1204312 + 88210));
    assert_eq!(
        c(&p, SW_QUEUE_TX_BYTES, &g("0")),
        Some(1310339456 + 5645440)
    );
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &g("3")), Some(914877321));
    assert_eq!(c(&p, SW_QUEUE_TX_BYTES, &g("3")), Some(8233895889000));
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[port, ("qos_group", "3"), ("reason", "tail")]
        ),
        Some(117)
    );
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED_BYTES,
            &[port, ("qos_group", "3"), ("reason", "tail")]
        ),
        Some(964251)
    );
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &g("control")), Some(43921));
    assert_eq!(c(&p, SW_QUEUE_TX_BYTES, &g("control")), Some(5446204));
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &g("span")), Some(0));
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[("qos_group", "all"), ("reason", "wred")]
        ),
        Some(412)
    );
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[("qos_group", "all"), ("reason", "pause_flush")]
        ),
        Some(0)
    );
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[("qos_group", "all"), ("reason", "wred_non_ecn")]
        ),
        Some(0)
    );
    assert_eq!(
        c(&p, SW_INGRESS_DROPPED, &[port, ("reason", "mmu")]),
        Some(2213)
    );
    assert_eq!(
        c(&p, SW_INGRESS_DROPPED_BYTES, &[port, ("reason", "mmu")]),
        Some(19917000)
    );
    assert_eq!(c(&p, SW_PFC_TX, &[port, ("priority", "all")]), Some(19133));
    assert_eq!(c(&p, SW_PFC_RX, &[port, ("priority", "all")]), Some(1021));
    assert_eq!(c(&p, SW_PFC_TX, &[port, ("priority", "3")]), Some(19133));
    assert_eq!(c(&p, SW_PFC_RX, &[port, ("priority", "3")]), Some(1021));
    assert_eq!(c(&p, SW_PFC_RX, &[port, ("priority", "7")]), Some(0));
    // 6 groups × 4 stats, 3 egress drop lines, 2 ingress, 2 PPP, 8 COS × 2.
    assert_eq!(p.samples.len(), 24 + 3 + 2 + 2 + 16);
}

#[test]
fn nxos9_real_boxed_layout_and_slice_overflow() {
    let p = run(
        ParseKind::NxosQueuing,
        "nxos/show-queuing-interface_n9k-93180fx2_9x_grep-excerpts_REAL-linebreaks-restored.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    // The port comes from the echoed command: grep cut the `Egress Queuing for` header.
    let port = ("port", "Ethernet1/51");
    let g5 = [port, ("qos_group", "5")];
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &g5), Some(202328436));
    assert_eq!(c(&p, SW_QUEUE_TX_BYTES, &g5), Some(203884632744));
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[port, ("qos_group", "5"), ("reason", "wred_afd_tail")]
        ),
        Some(0)
    );
    assert_eq!(
        c(&p, SW_QUEUE_DROPPED_BYTES, &[("reason", "wred_afd_tail")]),
        Some(0)
    );
    assert_eq!(
        c(&p, SW_QUEUE_DROPPED, &[("reason", "watchdog_tail")]),
        Some(0)
    );
    assert_eq!(get(&p, SW_QUEUE_DEPTH, &g5), Some(Gauge(0.0)));
    assert_eq!(
        c(&p, SW_INGRESS_DROPPED, &[port, ("reason", "overflow")]),
        Some(19490)
    );
    assert_eq!(
        c(
            &p,
            SW_INGRESS_DROPPED,
            &[port, ("reason", "overflow_slice")]
        ),
        Some(71206)
    );
    assert_eq!(
        c(&p, SW_INGRESS_DROPPED, &[port, ("reason", "hi_priority")]),
        Some(0)
    );
    assert_eq!(
        c(&p, SW_INGRESS_DROPPED, &[port, ("reason", "low_priority")]),
        Some(0)
    );
    assert_eq!(c(&p, SW_PFC_TX, &[port, ("priority", "all")]), Some(150));
    assert_eq!(c(&p, SW_PFC_RX, &[port, ("priority", "all")]), Some(0));
    assert_eq!(c(&p, SW_PFC_TX, &[port, ("priority", "5")]), Some(150));
    assert_eq!(c(&p, SW_PFC_TX, &[port, ("priority", "3")]), Some(0));
    assert_eq!(p.samples.len(), 6 + 4 + 2 + 16);
}

#[test]
fn n5k_legacy_queuing_real_excerpt() {
    let p = run(
        ParseKind::NxosQueuing,
        "nxos/show-queuing-interface_n5k_legacy_excerpt.txt",
    );
    // The blog author's "(some output omitted for brevity)" is not switch output.
    assert_eq!(p.unknown_lines, 1, "{:?}", p.unknown_examples);
    let l = [
        ("port", "Ethernet1/47"),
        ("qos_group", "1"),
        ("reason", "discard"),
    ];
    assert_eq!(c(&p, SW_INGRESS_DROPPED, &l), Some(160104));
    let t = [("port", "Ethernet1/47"), ("qos_group", "1")];
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &t), Some(3774439486));
    assert_eq!(p.samples.len(), 2);
}

#[test]
fn n5k_legacy_queuing_synthetic() {
    let p = run(
        ParseKind::NxosQueuing,
        "nxos/synthetic/show-queuing-interface_legacy-n5k-style_SYNTHETIC-otel-test.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let l = [
        ("port", "Ethernet1/2"),
        ("qos_group", "1"),
        ("reason", "discard"),
    ];
    assert_eq!(c(&p, SW_INGRESS_DROPPED, &l), Some(106));
    assert_eq!(
        c(&p, SW_QUEUE_TX_PACKETS, &[("port", "Ethernet1/2")]),
        Some(105)
    );
}

#[test]
fn queuing_summary_is_config_only() {
    let p = run(
        ParseKind::NxosQueuing,
        "nxos/show-queuing-summary_n9k_default-8q.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert!(p.samples.is_empty());
}

#[test]
fn queuing_unknown_layout_is_not_zeros() {
    let p = run(
        ParseKind::NxosQueuing,
        "nxos/show-interface_n9k_ntc-templates_01.txt",
    );
    assert!(p.samples.is_empty());
    assert!(p.unknown_lines > 100);
}

#[test]
fn queuing_several_interfaces_back_to_back() {
    let one = fixture("nxos/synthetic/demo-show-queuing-interface_nxos7_SYNTHETIC.txt");
    let two = one.replace("Ethernet1/1/2", "Ethernet1/2/2");
    let p = parse(
        ParseKind::NxosQueuing,
        &format!("{one}\r\n{two}"),
        &Ctx::named("sw1"),
    );
    assert_eq!(p.unknown_lines, 0);
    for port in ["Ethernet1/1/2", "Ethernet1/2/2"] {
        assert_eq!(
            c(&p, SW_INGRESS_DROPPED, &[("port", port), ("reason", "mmu")]),
            Some(2213)
        );
    }
    assert_eq!(p.samples.len(), 2 * 47);
}

// ---------------------------------------------------------------- NX-OS PFC

fn pfc_enabled(p: &Parsed, port: &str) -> Vec<f64> {
    (0..8)
        .map(|i| {
            match get(
                p,
                SW_PFC_ENABLED,
                &[("port", port), ("priority", &i.to_string())],
            ) {
                Some(Gauge(v)) => v,
                other => panic!("{port} prio {i}: {other:?}"),
            }
        })
        .collect()
}

#[test]
fn pfc_n5k_real_with_prompt() {
    let p = run(
        ParseKind::NxosPfc,
        "nxos/show-interface-priority-flow-control_n5k_fcoe.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(
        c(
            &p,
            SW_PFC_RX,
            &[("port", "Ethernet1/47"), ("priority", "all")]
        ),
        Some(7316)
    );
    assert_eq!(
        c(
            &p,
            SW_PFC_TX,
            &[("port", "Ethernet1/47"), ("priority", "all")]
        ),
        Some(762946)
    );
    assert_eq!(c(&p, SW_PFC_TX, &[("port", "Ethernet1/48")]), Some(761362));
    assert_eq!(c(&p, SW_PFC_RX, &[("port", "Ethernet4/16")]), Some(0));
    assert_eq!(pfc_enabled(&p, "Ethernet1/47"), vec![0.0; 8]);
    assert_eq!(p.samples.len(), 4 * (2 + 8));
}

/// The `detail` layout, shaped as in the 93180FX2 article of the 9.x queuing fixture (line breaks
/// restored the same way, one interface).
#[test]
fn pfc_detail_layout_per_priority() {
    let rule = "-".repeat(117);
    let text = format!(
        "PrivN9K# show interface priority-flow-control detail\nEthernet1/51\n    Admin Mode: On\n    Oper Mode: On\n    \
         VL bitmap: (20)\n    Total Rx PFC Frames: 0\n    Total Tx PFC Frames: 150\n    {rule}\n        \
         |  Priority0  |  Priority1  |  Priority2  |  Priority3  |  Priority4  |  Priority5  |  Priority6  |  Priority7  |\n    \
         {rule}\n    Rx  |0            |0            |0            |0            |0            |0            |0            |0\n    \
         {rule}\n    Tx  |0            |0            |0            |0            |0            |150          |0            |0\n"
    );
    let p = parse(ParseKind::NxosPfc, &text, &Ctx::named("sw1"));
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let e = |prio| [("port", "Ethernet1/51"), ("priority", prio)];
    assert_eq!(c(&p, SW_PFC_TX, &e("all")), Some(150));
    assert_eq!(c(&p, SW_PFC_RX, &e("all")), Some(0));
    assert_eq!(c(&p, SW_PFC_TX, &e("5")), Some(150));
    assert_eq!(c(&p, SW_PFC_RX, &e("7")), Some(0));
    assert_eq!(
        pfc_enabled(&p, "Ethernet1/51"),
        vec![0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    );
    assert_eq!(p.samples.len(), 2 + 16 + 8);
}

#[test]
fn pfc_demo_rows() {
    let p = run(
        ParseKind::NxosPfc,
        "nxos/synthetic/demo-show-interface-priority-flow-control_SYNTHETIC.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(c(&p, SW_PFC_RX, &[("port", "Ethernet1/1/1")]), Some(1021));
    assert_eq!(c(&p, SW_PFC_TX, &[("port", "Ethernet1/1/1")]), Some(19133));
    assert_eq!(c(&p, SW_PFC_RX, &[("port", "ii1/1/1")]), Some(88412911));
    assert_eq!(c(&p, SW_PFC_TX, &[("port", "ii1/1/1")]), Some(102));
    let p3 = vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0];
    assert_eq!(pfc_enabled(&p, "Ethernet1/1/1"), p3);
    assert_eq!(pfc_enabled(&p, "ii1/1/1"), p3);
    assert_eq!(pfc_enabled(&p, "Ethernet1/2/1"), vec![0.0; 8]);
}

#[test]
fn pfc_synthetic_otel_bitmaps() {
    let p = run(
        ParseKind::NxosPfc,
        "nxos/synthetic/show-interface-priority-flow-control_SYNTHETIC-otel-test.txt",
    );
    assert_eq!(p.unknown_lines, 0);
    assert_eq!(c(&p, SW_PFC_RX, &[("port", "Ethernet1/2")]), Some(4088353));
    assert_eq!(c(&p, SW_PFC_TX, &[("port", "Ethernet1/5")]), Some(12));
    assert_eq!(
        pfc_enabled(&p, "Ethernet1/2"),
        vec![1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    );
    assert_eq!(pfc_enabled(&p, "Ethernet1/5"), vec![0.0; 8]);
}

#[test]
fn pfc_all_row_kinds_and_json() {
    let text = "sw# show interface priority-flow-control\n\
        Port               Mode Oper(VL bmap)  RxPPP      TxPPP\n\
        Vethernet12        Auto Off           1          2\n\
        Br-Ethernet1/3     On   On(8)         3          4\n\
        port-channel5      Auto On   (18)     5          6\n";
    let p = parse(ParseKind::NxosPfc, text, &Ctx::named("sw1"));
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(c(&p, SW_PFC_TX, &[("port", "Vethernet12")]), Some(2));
    assert_eq!(c(&p, SW_PFC_RX, &[("port", "Br-Ethernet1/3")]), Some(3));
    assert_eq!(
        pfc_enabled(&p, "port-channel5"),
        vec![0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    );
    let json = r#"{"TABLE_module":{"ROW_module":{"TABLE_pfc_interface":{"ROW_pfc_interface":[
        {"if_name_str":"Ethernet1/1/1","admin":"Auto","oper":"On (8)","rx-stats":"10","tx-stats":20},
        {"if_name_str":"ii1/1/1","admin":"Auto","oper":"Off","rx-stats":3,"tx-stats":"4"}]}}}}"#;
    for wrapped in [
        json.to_string(),
        format!(r#"{{"ins_api":{{"outputs":{{"output":{{"code":"200","body":{json}}}}}}}}}"#),
    ] {
        let p = parse(ParseKind::NxosPfc, &wrapped, &Ctx::named("sw1"));
        assert_eq!(p.unknown_lines, 0);
        assert_eq!(
            c(
                &p,
                SW_PFC_TX,
                &[("port", "Ethernet1/1/1"), ("priority", "all")]
            ),
            Some(20)
        );
        assert_eq!(c(&p, SW_PFC_RX, &[("port", "ii1/1/1")]), Some(3));
        assert_eq!(pfc_enabled(&p, "Ethernet1/1/1")[3], 1.0);
        assert_eq!(pfc_enabled(&p, "ii1/1/1"), vec![0.0; 8]);
    }
}

// ---------------------------------------------------------------- NX-OS flowcontrol

fn fc(p: &Parsed, port: &str, dir: &str) -> Option<Value> {
    get(
        p,
        SW_FLOWCONTROL_ENABLED,
        &[("port", port), ("direction", dir)],
    )
}

#[test]
fn flowcontrol_demo() {
    let p = run(
        ParseKind::NxosFlowcontrol,
        "nxos/synthetic/demo-show-interface-flowcontrol_SYNTHETIC.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(
        c(&p, SW_LINK_PAUSE_RX, &[("port", "Ethernet1/2/1")]),
        Some(1133)
    );
    assert_eq!(
        c(&p, SW_LINK_PAUSE_TX, &[("port", "Ethernet1/2/1")]),
        Some(42)
    );
    assert_eq!(
        c(&p, SW_LINK_PAUSE_RX, &[("port", "Ethernet1/1/1")]),
        Some(0)
    );
    assert_eq!(fc(&p, "Ethernet1/1/1", "rx"), Some(Gauge(1.0)));
    assert_eq!(fc(&p, "Ethernet1/1/1", "tx"), Some(Gauge(0.0)));
    assert_eq!(fc(&p, "Ethernet1/1/2", "rx"), Some(Gauge(0.0)));
    assert_eq!(fc(&p, "Ethernet1/2/1", "tx"), Some(Gauge(1.0)));
    assert_eq!(p.samples.len(), 3 * 4);
}

#[test]
fn flowcontrol_synthetic_shape_and_json() {
    let p = run(
        ParseKind::NxosFlowcontrol,
        "nxos/synthetic/show-interface-flowcontrol_SYNTHETIC-otel-test.txt",
    );
    assert_eq!(p.unknown_lines, 0);
    assert_eq!(c(&p, SW_LINK_PAUSE_RX, &[("port", "Gi1/1")]), Some(123));
    assert_eq!(c(&p, SW_LINK_PAUSE_TX, &[("port", "Ethernet1/2")]), Some(8));
    assert_eq!(fc(&p, "Gi1/1", "rx"), Some(Gauge(1.0)));
    let json = r#"{"TABLE_flowcontrol":{"ROW_flowcontrol":{"interface":"Eth1/1","send_oper":"off","recv_oper":"on","rx-pause":"77","tx-pause":5}}}"#;
    let p = parse(ParseKind::NxosFlowcontrol, json, &Ctx::named("sw1"));
    assert_eq!(p.unknown_lines, 0);
    assert_eq!(
        c(&p, SW_LINK_PAUSE_RX, &[("port", "Ethernet1/1")]),
        Some(77)
    );
    assert_eq!(c(&p, SW_LINK_PAUSE_TX, &[("port", "Ethernet1/1")]), Some(5));
    assert_eq!(fc(&p, "Ethernet1/1", "rx"), Some(Gauge(1.0)));
}

// ---------------------------------------------------------------- NX-OS show interface

#[test]
fn nxos_interface_text_real() {
    let p = run(
        ParseKind::NxosInterface,
        "nxos/show-interface_n9k_ntc-templates_01.txt",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let e = |port| [("switch", "sw1"), ("port", port)];
    assert_eq!(c(&p, SW_PORT_RX_PACKETS, &e("Ethernet2/1")), Some(48034291));
    assert_eq!(c(&p, SW_PORT_RX_BYTES, &e("Ethernet2/1")), Some(3680032221));
    assert_eq!(c(&p, SW_PORT_TX_PACKETS, &e("Ethernet2/1")), Some(47856816));
    assert_eq!(c(&p, SW_PORT_TX_BYTES, &e("Ethernet2/1")), Some(3813447142));
    assert_eq!(c(&p, SW_LINK_PAUSE_RX, &e("Ethernet2/1")), Some(0));
    assert_eq!(
        c(&p, SW_PORT_RX_BYTES, &e("Ethernet1/1")),
        Some(38445458291444)
    );
    assert_eq!(
        c(&p, SW_PORT_TX_BYTES, &e("Ethernet1/1")),
        Some(9808040292632)
    );
    assert_eq!(
        c(
            &p,
            SW_PORT_ERRORS,
            &[("port", "Ethernet12/4"), ("direction", "rx")]
        ),
        Some(20)
    );
    assert_eq!(
        c(&p, SW_PORT_TX_PACKETS, &e("Ethernet12/4")),
        Some(826463803454)
    );
    assert_eq!(c(&p, SW_LINK_PAUSE_TX, &e("Ethernet12/4")), Some(0));
    // The sub-interface has no RX/TX block: nothing, not zeros.
    assert_eq!(get(&p, SW_PORT_RX_BYTES, &e("port-channel12.548")), None);
    // Every block names its MTU (`MTU 1550 bytes, BW ...`), the sub-interface's too.
    assert_eq!(
        get(&p, SW_PORT_MTU_BYTES, &e("port-channel12.548")),
        Some(Value::Gauge(1550.0))
    );
    assert_eq!(
        get(&p, SW_PORT_MTU_BYTES, &e("Ethernet2/1")),
        Some(Value::Gauge(9100.0))
    );
    assert_eq!(p.samples.len(), 3 * 8 + 4);
}

#[test]
fn nxos_interface_json_real() {
    let p = run(
        ParseKind::NxosInterface,
        "nxos/show-interface_nxapi-json_ansible-fixture.json",
    );
    assert_eq!(p.unknown_lines, 0);
    let e = [("port", "Ethernet2/1")];
    assert_eq!(c(&p, SW_LINK_PAUSE_RX, &e), Some(0));
    assert_eq!(c(&p, SW_LINK_PAUSE_TX, &e), Some(0));
    assert_eq!(c(&p, SW_PORT_RX_PACKETS, &e), Some(0));
    assert_eq!(get(&p, SW_PORT_RX_BYTES, &[("port", "loopback0")]), None);
    assert_eq!(get(&p, SW_PORT_MTU_BYTES, &e), Some(Value::Gauge(1500.0)));
    assert_eq!(
        p.samples.len(),
        8 + 2,
        "8 counters, the MTU of both interfaces"
    );
}

// ---------------------------------------------------------------- SONiC

#[test]
fn sonic_pfc_counters() {
    let p = run(ParseKind::SonicPfc, "sonic/show-pfc-counters.txt");
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(
        c(&p, SW_PFC_RX, &[("port", "Ethernet0"), ("priority", "0")]),
        Some(1200)
    );
    assert_eq!(
        c(&p, SW_PFC_RX, &[("port", "Ethernet4"), ("priority", "3")]),
        Some(403)
    );
    assert_eq!(
        c(&p, SW_PFC_TX, &[("port", "Ethernet8"), ("priority", "0")]),
        Some(1810)
    );
    assert_eq!(
        c(&p, SW_PFC_TX, &[("port", "Ethernet8"), ("priority", "7")]),
        Some(817)
    );
    assert_eq!(p.samples.len(), 2 * 3 * 8);
}

#[test]
fn sonic_queue_counters() {
    let p = run(ParseKind::SonicQueue, "sonic/show-queue-counters.txt");
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let q = |port, q| [("port", port), ("queue", q)];
    assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &q("Ethernet0", "UC3")), Some(52));
    assert_eq!(c(&p, SW_QUEUE_TX_BYTES, &q("Ethernet0", "UC3")), Some(70));
    assert_eq!(c(&p, SW_QUEUE_DROPPED, &q("Ethernet0", "UC3")), Some(19));
    assert_eq!(
        c(&p, SW_QUEUE_DROPPED_BYTES, &q("Ethernet4", "MC19")),
        Some(99)
    );
    assert_eq!(get(&p, SW_QUEUE_TX_PACKETS, &q("Ethernet0", "ALL20")), None);
    assert_eq!(p.samples.len(), 3 * 20 * 4);
}

#[test]
fn sonic_wred_counters() {
    let p = run(ParseKind::SonicWred, "sonic/show-queue-wredcounters.txt");
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let q = |port, q| [("port", port), ("queue", q)];
    assert_eq!(
        c(
            &p,
            SW_QUEUE_DROPPED,
            &[("port", "Ethernet0"), ("queue", "UC3"), ("reason", "wred")]
        ),
        Some(52)
    );
    assert_eq!(
        c(&p, SW_QUEUE_DROPPED_BYTES, &q("Ethernet0", "UC3")),
        Some(70)
    );
    assert_eq!(c(&p, SW_QUEUE_ECN_MARKED, &q("Ethernet0", "UC3")), Some(19));
    assert_eq!(
        c(&p, SW_QUEUE_ECN_MARKED, &q("Ethernet8", "MC11")),
        Some(29)
    );
    assert_eq!(get(&p, SW_QUEUE_ECN_MARKED, &q("Ethernet4", "ALL29")), None);
}

// ---------------------------------------------------------------- Arista EOS

#[test]
fn eos_pfc_counters() {
    let p = run(
        ParseKind::EosPfc,
        "arista/show-priority-flow-control-counters_eapi-json_anta-fixture.json",
    );
    assert_eq!(p.unknown_lines, 0);
    assert_eq!(
        c(
            &p,
            SW_PFC_RX,
            &[("port", "Ethernet3/1/1"), ("priority", "all")]
        ),
        Some(1)
    );
    assert_eq!(c(&p, SW_PFC_TX, &[("port", "Ethernet3/2/1")]), Some(2));
    assert_eq!(c(&p, SW_PFC_TX, &[("port", "Ethernet3/4/1")]), Some(1));
    assert_eq!(p.samples.len(), 8);
}

const EOS_QUEUE_CLI: &str = "arista/show-interfaces-counters-queue-detail_7280-7500_voq-and-egress_eos-central-article_excerpt.txt";

/// The CLI text of `show interfaces counters queue detail` and eAPI JSON with the same facts give
/// the same series (tabs and alerts read either), VoQ drops apart from egress queue drops.
#[test]
fn eos_queue_cli_text_matches_the_json_reading() {
    let text = run(ParseKind::EosQueue, EOS_QUEUE_CLI);
    assert_eq!(text.unknown_lines, 0, "{:?}", text.unknown_examples);
    let voq = [
        ("port", "Ethernet3/1/1"),
        ("queue", "TC1"),
        ("reason", "voq"),
    ];
    assert_eq!(c(&text, SW_INGRESS_DROPPED, &voq), Some(0));
    assert_eq!(
        get(&text, SW_QUEUE_DROPPED, &[("port", "Ethernet3/1/1")]),
        None
    );
    assert_eq!(
        c(&text, SW_QUEUE_TX_PACKETS, &[("port", "Ethernet4/1/1")]),
        Some(0)
    );
    let json = r#"{"egressQueueCounters":{"interfaces":{"Ethernet4/1/1":{"ucastQueues":{"trafficClasses":{"TC0":{"dropPrecedences":{"DP0":{"enqueuedPackets":0,"enqueuedBytes":0,"droppedPackets":0,"droppedBytes":0}}}}}}}},
      "ingressVoqCounters":{"interfaces":{"Ethernet3/1/1":{"trafficClasses":{"TC0":{"droppedPackets":0,"droppedBytes":0},"TC1":{"droppedPackets":0,"droppedBytes":0}}}}}}"#;
    let json = parse(ParseKind::EosQueue, json, &Ctx::named("sw1"));
    let keys = |p: &Parsed| {
        let mut k: Vec<String> = p.samples.iter().map(|s| s.key.to_string()).collect();
        k.sort();
        k
    };
    assert_eq!(keys(&text), keys(&json));
    assert_eq!(text.samples.len(), 8);
}

#[test]
fn eos_ecn_counters_dash_is_missing() {
    let p = run(
        ParseKind::EosEcn,
        "arista/show-qos-interfaces-ecn-counters-queue_eapi-json_anta-fixture.json",
    );
    assert_eq!(p.unknown_lines, 0);
    let q = |port, q| [("port", port), ("queue", q)];
    assert_eq!(
        get(&p, SW_QUEUE_ECN_MARKED, &q("Ethernet10/28/1", "TC0")),
        None
    );
    assert_eq!(
        c(&p, SW_QUEUE_ECN_MARKED, &q("Ethernet10/28/1", "TC1")),
        Some(0)
    );
    assert_eq!(
        c(&p, SW_QUEUE_ECN_MARKED, &q("Ethernet10/20/1", "TC1")),
        Some(2)
    );
    assert_eq!(
        c(&p, SW_QUEUE_ECN_MARKED, &q("Ethernet10/3/1", "TC2")),
        Some(2)
    );
    assert_eq!(
        get(&p, SW_QUEUE_ECN_MARKED, &q("Ethernet10/16/1", "TC2")),
        None
    );
    assert_eq!(p.samples.len(), 10);
}

#[test]
fn eos_interface_text() {
    let text = "Ethernet1 is up, line protocol is up (connected)\n  Hardware is Ethernet, address is 001c.7300.0001\n  \
        5 minutes input rate 0 bps (0.0% with framing overhead), 0 packets/sec\n     \
        12345 packets input, 1234567 bytes\n     Received 1 broadcasts, 123 multicast\n     \
        3 input errors, 0 CRC, 0 alignment, 0 symbol, 0 input discards\n     7 PAUSE input\n     \
        2345 packets output, 234567 bytes\n     0 output errors, 0 collisions\n     9 PAUSE output\n";
    let p = parse(ParseKind::EosInterface, text, &Ctx::named("sw1"));
    assert_eq!(p.unknown_lines, 0);
    let e = [("port", "Ethernet1")];
    assert_eq!(c(&p, SW_PORT_RX_PACKETS, &e), Some(12345));
    assert_eq!(c(&p, SW_PORT_RX_BYTES, &e), Some(1234567));
    assert_eq!(c(&p, SW_PORT_TX_BYTES, &e), Some(234567));
    assert_eq!(
        c(
            &p,
            SW_PORT_ERRORS,
            &[("port", "Ethernet1"), ("direction", "rx")]
        ),
        Some(3)
    );
    assert_eq!(c(&p, SW_LINK_PAUSE_RX, &e), Some(7));
    assert_eq!(c(&p, SW_LINK_PAUSE_TX, &e), Some(9));
}

#[test]
fn eos_text_where_json_expected_is_unknown() {
    let p = parse(
        ParseKind::EosPfc,
        "Port  RxPfc TxPfc\nEt1  1 2\n",
        &Ctx::named("sw1"),
    );
    assert!(p.samples.is_empty());
    assert_eq!(p.unknown_lines, 2);
}

// ---------------------------------------------------------------- no panics

const ALL: &[(ParseKind, &str)] = &[
    (
        ParseKind::NxosQueuing,
        "nxos/synthetic/demo-show-queuing-interface_nxos7_SYNTHETIC.txt",
    ),
    (
        ParseKind::NxosQueuing,
        "nxos/synthetic/show-queuing-interface_nxos7-style_SYNTHETIC-otel-test.txt",
    ),
    (
        ParseKind::NxosQueuing,
        "nxos/show-queuing-interface_n5k_legacy_excerpt.txt",
    ),
    (
        ParseKind::NxosPfc,
        "nxos/show-interface-priority-flow-control_n5k_fcoe.txt",
    ),
    (
        ParseKind::NxosPfc,
        "nxos/synthetic/demo-show-interface-priority-flow-control_SYNTHETIC.txt",
    ),
    (
        ParseKind::NxosFlowcontrol,
        "nxos/synthetic/demo-show-interface-flowcontrol_SYNTHETIC.txt",
    ),
    (
        ParseKind::NxosInterface,
        "nxos/show-interface_n9k_ntc-templates_01.txt",
    ),
    (
        ParseKind::NxosInterface,
        "nxos/show-interface_nxapi-json_ansible-fixture.json",
    ),
    (ParseKind::SonicPfc, "sonic/show-pfc-counters.txt"),
    (ParseKind::SonicQueue, "sonic/show-queue-counters.txt"),
    (ParseKind::SonicWred, "sonic/show-queue-wredcounters.txt"),
    (
        ParseKind::EosPfc,
        "arista/show-priority-flow-control-counters_eapi-json_anta-fixture.json",
    ),
    (
        ParseKind::EosEcn,
        "arista/show-qos-interfaces-ecn-counters-queue_eapi-json_anta-fixture.json",
    ),
    (ParseKind::EosQueue, EOS_QUEUE_CLI),
];

/// Every kind on every fixture's text, cut, spliced and mutated: never a panic.
fn mutate(text: &str, cut: usize, splice: &str, at: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let cut = cut % (chars.len() + 1);
    let at = at % (cut + 1);
    let mut s: String = chars[..cut].iter().collect();
    s.insert_str(
        s.char_indices().nth(at).map(|(i, _)| i).unwrap_or(s.len()),
        splice,
    );
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_panic_on_mutated_fixtures(
        which in 0..ALL.len(),
        kind_i in 0..ALL.len(),
        cut in 0usize..20_000,
        at in 0usize..20_000,
        splice in "[|+:(){}\\[\\]\"0-9a-zA-Z ,\r\n-]{0,40}",
    ) {
        let (_, file) = ALL[which];
        let (kind, _) = ALL[kind_i];
        let text = mutate(&fixture(file), cut, &splice, at);
        let p = parse(kind, &text, &Ctx::named("sw"));
        prop_assert!(p.unknown_examples.len() <= Parsed::MAX_EXAMPLES);
    }

    #[test]
    fn no_panic_on_random_text(text in "\\PC{0,400}") {
        for (kind, _) in ALL {
            let _ = parse(*kind, &text, &Ctx::named("sw"));
        }
    }
}
