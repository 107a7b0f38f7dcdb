//! Topology and lossless-path parsers on real captures (tests/fixtures/topology/SOURCES.md):
//! LLDP tables of NX-OS, EOS and SONiC switches, `lldpctl` in its three formats, `mlnx_qos`, and
//! the SONiC PFC watchdog. Expected values were read off the captures by hand.

use rocetop::metrics::Parsed;
use rocetop::metrics::names::*;
use rocetop::parse::{Ctx, ParseKind, parse};

fn fixture(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/topology/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn run(kind: ParseKind, file: &str, name: &str) -> Parsed {
    parse(kind, &fixture(file), &Ctx::named(name))
}

/// (local label value, remote label value) of every neighbour sample, sorted.
fn links(
    p: &Parsed,
    local: &str,
    remote: &str,
    remote_port: &str,
) -> Vec<(String, String, String)> {
    let mut v: Vec<_> = p
        .samples
        .iter()
        .filter(|s| s.key.name == LINK_NEIGHBOR_INFO)
        .map(|s| {
            let l = |k: &str| s.key.label(k).unwrap_or("").to_string();
            (l(local), l(remote), l(remote_port))
        })
        .collect();
    v.sort();
    v
}

fn gauge(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let hits: Vec<f64> = p
        .samples
        .iter()
        .filter(|s| s.key.name == name && labels.iter().all(|(k, v)| s.key.label(k) == Some(v)))
        .map(|s| s.value.as_f64())
        .collect();
    assert!(
        hits.len() <= 1,
        "{name} {labels:?} matched {} samples",
        hits.len()
    );
    hits.first().copied()
}

fn t(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

#[test]
fn nxos_lldp_with_device_ids_on_their_own_line() {
    let p = run(
        ParseKind::LldpNeighbors,
        "show-lldp-neighbors_multiline-device-id_ntc-templates.txt",
        "n9k",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let l = links(&p, "port", "node", "netdev");
    assert_eq!(l.len(), 15, "Total entries displayed: 15");
    for want in [
        t("mgmt0", "dcx3.org.local", "Gi1/0/37"),
        t("Ethernet1/5", "fw1-clinical-partner", "ethernet1/9"),
        t("Ethernet3/1", "cr-ebc.org.local", "Fo1/0/8"),
        t("Ethernet4/1", "cr-park.org.local", "Fo1/0/8"),
        t("Ethernet4/24", "fw2-services", "ethernet1/24"),
    ] {
        assert!(l.contains(&want), "{want:?} not in {l:?}");
    }
    assert!(
        p.samples
            .iter()
            .all(|s| s.key.label("switch") == Some("n9k") && s.key.label("side") == Some("switch"))
    );
}

/// `show lldp neighbors detail`: one block a neighbour; a MAC port id gives way to the port's
/// description, and the System Description's later lines are no unknown lines.
#[test]
fn nxos_lldp_detail_blocks() {
    let p = run(
        ParseKind::LldpNeighbors,
        "show-lldp-neighbors-detail_nxos-9.3_ntc-templates.txt",
        "n9k",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(
        links(&p, "port", "node", "netdev"),
        [
            t("Ethernet1/52", "SW-NEXUS", "Ethernet1/52"),
            t("Ethernet101/1/10", "pure-storage", "eth0"),
        ]
    );
}

#[test]
fn eos_and_sonic_lldp_tables() {
    let e = run(
        ParseKind::LldpNeighbors,
        "show-lldp-neighbors_eos-4.32_veos-lab.txt",
        "l2",
    );
    assert_eq!(e.unknown_lines, 0, "{:?}", e.unknown_examples);
    assert_eq!(
        links(&e, "port", "node", "netdev"),
        vec![
            t("Ethernet1", "Site1-Host2", "Ethernet1"),
            t("Ethernet2", "Site1-Host2", "Ethernet2"),
            t("Ethernet51/1", "Site1-S1.act.lab", "Ethernet2/1"),
            t("Ethernet52/1", "Site1-S2.act.lab", "Ethernet2/1"),
            t("Ethernet53/1", "Site1-S3.act.lab", "Ethernet2/1"),
        ]
    );
    let s = run(
        ParseKind::LldpNeighbors,
        "show-lldp-table_real-gns3-lab.txt",
        "sonic1",
    );
    assert_eq!(s.unknown_lines, 0, "{:?}", s.unknown_examples);
    let l = links(&s, "port", "node", "netdev");
    assert_eq!(l.len(), 5, "Total entries displayed:  5");
    assert!(
        l.contains(&t("Ethernet0", "sonic3", "fortyGigE0/4")),
        "{l:?}"
    );
    assert!(
        l.contains(&t("Ethernet4", "sonic2", "fortyGigE0/8")),
        "{l:?}"
    );
    assert!(
        l.contains(&t("eth0", "sonic4", "0c:69:cf:50:00:00")),
        "{l:?}"
    );
}

#[test]
fn lldpctl_text_keyvalue_and_json() {
    let txt = run(
        ParseKind::Lldpctl,
        "lldpctl_two-ports_c2960s-neighbor.txt",
        "h1",
    );
    assert_eq!(txt.unknown_lines, 0, "{:?}", txt.unknown_examples);
    assert_eq!(
        links(&txt, "netdev", "switch", "port"),
        vec![
            t("eno1", "sw_tlsk.SR1.lan.kvt.su", "Gi1/0/11"),
            t("eno2", "sw_tlsk.SR1.lan.kvt.su", "Gi1/0/12"),
        ]
    );
    let kv = run(
        ParseKind::Lldpctl,
        "lldpctl-f-keyvalue_two-ports_mozilla-puppet-test.txt",
        "h2",
    );
    assert_eq!(kv.unknown_lines, 0);
    assert_eq!(
        links(&kv, "netdev", "switch", "port"),
        vec![
            t("eth0", "switch1.vlan.dc.mozilla.com", "Gi3/0/9"),
            t("eth1", "switch1.vlan.dc.mozilla.com", "Gi4/0/9"),
        ]
    );
    // Two neighbours on one port, MAC port ids: the descriptions name the ports.
    let js = run(
        ParseKind::Lldpctl,
        "lldpctl-f-json_two-neighbours-one-port_sonic-utilities-test_MOCK.json",
        "h3",
    );
    assert_eq!(
        links(&js, "netdev", "switch", "port"),
        vec![
            t("Ethernet0", "dummy", "First MAC"),
            t("Ethernet0", "dummy", "Second MAC"),
        ]
    );
    assert!(js.samples.iter().all(|s| s.key.label("node") == Some("h3")));
}

#[test]
fn mlnx_qos_dscp_trust_pfc_on_priority_5_and_a_moved_dscp_40() {
    let p = run(
        ParseKind::HostQos,
        "mlnx_qos_dscp-trust_pfc-prio5_ets-buffers.txt",
        "gpu8",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let nd = ("netdev", "ens4np0");
    assert_eq!(gauge(&p, NIC_QOS_TRUST_DSCP, &[nd]), Some(1.0));
    for prio in 0..8 {
        let want = if prio == 5 { 1.0 } else { 0.0 };
        let pr = prio.to_string();
        assert_eq!(
            gauge(&p, NIC_QOS_PFC_ENABLED, &[nd, ("priority", &pr)]),
            Some(want),
            "priority {prio}"
        );
    }
    assert_eq!(
        gauge(&p, NIC_QOS_DSCP_PRIORITY, &[nd, ("dscp", "26")]),
        Some(3.0)
    );
    // This host moved DSCP 40 from priority 5's neighbour range: `prio:5 dscp:40,47,...`.
    assert_eq!(
        gauge(&p, NIC_QOS_DSCP_PRIORITY, &[nd, ("dscp", "40")]),
        Some(5.0)
    );
    assert_eq!(
        gauge(&p, NIC_QOS_DSCP_PRIORITY, &[nd, ("dscp", "48")]),
        Some(6.0)
    );
    let dscps = p
        .samples
        .iter()
        .filter(|s| s.key.name == NIC_QOS_DSCP_PRIORITY)
        .count();
    assert_eq!(dscps, 64, "every DSCP value mapped once");
    assert_eq!(
        gauge(&p, NIC_QOS_TC_BANDWIDTH_PERCENT, &[("tc", "2")]),
        Some(80.0)
    );
    assert_eq!(gauge(&p, NIC_QOS_TC_STRICT, &[("tc", "5")]), Some(1.0));
    assert_eq!(
        gauge(&p, NIC_QOS_TC_BANDWIDTH_PERCENT, &[("tc", "5")]),
        None
    );
    assert_eq!(
        gauge(&p, NIC_QOS_PRIORITY_TC, &[("priority", "5")]),
        Some(5.0)
    );
    assert_eq!(
        gauge(&p, NIC_QOS_RX_BUFFER_BYTES, &[("buffer", "1")]),
        Some(220896.0)
    );
    assert_eq!(
        gauge(&p, NIC_QOS_RX_BUFFER_BYTES, &[("buffer", "max")]),
        Some(4151520.0)
    );
    assert_eq!(
        gauge(&p, NIC_QOS_PRIORITY_BUFFER, &[("priority", "5")]),
        Some(1.0)
    );
}

#[test]
fn sonic_pfc_watchdog_real_and_stormed() {
    let p = run(
        ParseKind::SonicPfcwd,
        "show-pfcwd-stats_real-z9332_issue9430.txt",
        "z9332",
    );
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let q = [("port", "Ethernet6"), ("priority", "3")];
    assert_eq!(gauge(&p, SW_PFC_WATCHDOG_STORMS, &q), Some(2.0));
    assert_eq!(gauge(&p, SW_PFC_WATCHDOG_RESTORED, &q), Some(2.0));
    assert_eq!(gauge(&p, SW_PFC_WATCHDOG_QUEUE_SHUT, &q), Some(0.0));
    let tx = [q[0], q[1], ("direction", "tx")];
    assert_eq!(gauge(&p, SW_PFC_WATCHDOG_DROPPED, &tx), Some(46416.0));
    let g = run(
        ParseKind::SonicPfcwd,
        "show-pfcwd-stats_sonic-utilities-test_TOOL-GENERATED.txt",
        "s",
    );
    assert_eq!(g.unknown_lines, 0);
    assert_eq!(
        gauge(
            &g,
            SW_PFC_WATCHDOG_QUEUE_SHUT,
            &[("port", "Ethernet8"), ("priority", "4")]
        ),
        Some(1.0)
    );
    assert_eq!(
        gauge(
            &g,
            SW_PFC_WATCHDOG_STORMS,
            &[("port", "Ethernet8"), ("priority", "4")]
        ),
        Some(3.0)
    );
}

#[test]
fn nxos_pfc_watchdog_box() {
    // The layout is synthetic (no real NX-OS capture known).
    let r = run(
        ParseKind::NxosPfcwd,
        "show-queuing-pfc-queue-detail_SYNTHETIC-otel-test.txt",
        "leaf",
    );
    assert_eq!(r.unknown_lines, 0, "{:?}", r.unknown_examples);
    let q = [("port", "Ethernet1/23"), ("priority", "3")];
    assert_eq!(gauge(&r, SW_PFC_WATCHDOG_QUEUE_SHUT, &q), Some(1.0));
    assert_eq!(gauge(&r, SW_PFC_WATCHDOG_STORMS, &q), Some(1.0));
    assert_eq!(gauge(&r, SW_PFC_WATCHDOG_RESTORED, &q), Some(2.0));
    assert_eq!(gauge(&r, SW_PFC_WATCHDOG_DROPPED, &q), Some(4.0));
}

/// The NX-OS MTU read (`nxos-mtu`) on a real `show interface` capture keeps only each port's MTU,
/// so its counters never land beside the counter polls' at minutes apart.
#[test]
fn nxos_mtu_read_keeps_only_the_mtu() {
    let path = format!(
        "{}/tests/fixtures/nxos/show-interface_n9k_ntc-templates_01.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("capture");
    let p = parse(ParseKind::NxosMtu, &text, &Ctx::named("leaf"));
    assert!(
        p.samples.iter().all(|s| s.key.name == SW_PORT_MTU_BYTES),
        "{:?}",
        p.samples.iter().map(|s| &s.key.name).collect::<Vec<_>>()
    );
    let mtu = |port: &str| {
        p.samples
            .iter()
            .find(|s| s.key.label("port") == Some(port))
            .map(|s| s.value.as_f64())
    };
    assert_eq!(mtu("Ethernet2/1"), Some(9100.0));
    assert_eq!(mtu("port-channel12.548"), Some(1550.0));
    assert_eq!(mtu("Ethernet1/1"), Some(1500.0));
    // The same capture through the counter parser still has its counters, and the MTU beside.
    let all = parse(ParseKind::NxosInterface, &text, &Ctx::named("leaf"));
    assert!(all.samples.iter().any(|s| s.key.name == SW_PORT_RX_BYTES));
    assert!(all.samples.iter().any(|s| s.key.name == SW_PORT_MTU_BYTES));
}
