//! An Arista EOS leaf's answers: eAPI JSON (`| json`) of `show interfaces counters queue` and
//! `show qos interfaces ecn counters queue`, and the text of `show interfaces` and `show lldp
//! neighbors` (`show priority-flow-control counters | json` is [`super::eos_pfc`]). The culprit's
//! ingress drops are VOQ drops, as on the 7280/7500 families.

use super::super::sim::{Sim, SwitchSim};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;

/// The edge ports: EOS counts queues on its front-panel ports only.
fn front(sw: &SwitchSim) -> impl Iterator<Item = &super::super::sim::PortSim> {
    sw.ports.iter().filter(|p| !p.internal)
}

/// `show interfaces counters queue | json`: egress per traffic class, the culprit's ingress VOQ drops.
pub fn queue_json(sw: &SwitchSim) -> String {
    let mut egress = Map::new();
    let mut ingress = Map::new();
    for p in front(sw) {
        let tcs: Map<String, Value> = (0..8)
            .map(|tc| {
                let q = p
                    .qos
                    .get(tc)
                    .filter(|_| tc < 4)
                    .cloned()
                    .unwrap_or_default();
                let dp = json!({ "DP0": {
                    "enqueuedPackets": q.tx_pkts,
                    "enqueuedBytes": q.tx_bytes,
                    "droppedPackets": q.dropped_pkts + if tc == 3 { p.wred_drops } else { 0 },
                    "droppedBytes": q.dropped_bytes,
                }});
                (format!("TC{tc}"), json!({ "dropPrecedences": dp }))
            })
            .collect();
        let uc = json!({ "ucastQueues": { "trafficClasses": tcs } });
        egress.insert(p.name.clone(), uc);
        let voq = json!({ "trafficClasses": { "TC3": {
            "droppedPackets": p.mmu_drops,
            "droppedBytes": p.mmu_drop_bytes,
        }}});
        ingress.insert(p.name.clone(), voq);
    }
    json!({
        "egressQueueCounters": { "interfaces": egress },
        "ingressVoqCounters": { "interfaces": ingress },
    })
    .to_string()
}

/// `show qos interfaces ecn counters queue | json`: ECN marks per queue (the RoCE queue's).
pub fn ecn_json(sw: &SwitchSim) -> String {
    let ports: Map<String, Value> = front(sw)
        .map(|p| {
            let q: Map<String, Value> = (0..8)
                .map(|tc| {
                    let m = if tc == 3 { p.ecn_marked } else { 0 };
                    (tc.to_string(), json!(m.to_string()))
                })
                .collect();
            (p.name.clone(), json!({ "queueCounters": q }))
        })
        .collect();
    json!({ "intfQueueCounters": ports }).to_string()
}

/// `show interfaces`: the counter lines of each front-panel port, and its MTU (9214, EOS's largest).
pub fn interfaces(sw: &SwitchSim) -> String {
    let mut out = String::new();
    for p in front(sw) {
        let pkts: u64 = p.qos.iter().map(|q| q.tx_pkts).sum();
        let bytes: u64 = p.qos.iter().map(|q| q.tx_bytes).sum();
        let _ = write!(
            out,
            "{} is up, line protocol is up (connected)\n  Hardware is Ethernet, address is 001c.7300.0001\n  Ethernet MTU 9214 bytes , BW 100000000 kbit\n  Full-duplex, 100Gb/s, auto negotiation: off, uni-link: n/a\n     {pkts} packets input, {bytes} bytes\n     0 input errors, 0 CRC, 0 alignment, 0 symbol, 0 input discards\n     {} PAUSE input\n     {pkts} packets output, {bytes} bytes\n     0 output errors, 0 collisions\n     {} PAUSE output\n",
            p.name, p.link_pause_rx, p.link_pause_tx
        );
    }
    out
}

/// `show lldp neighbors`: every node behind each port, by its first netdev, EOS's short names.
pub fn lldp_neighbors(sim: &Sim, sw: &SwitchSim) -> String {
    let mut out = String::from(
        "Port            Neighbor Device ID       Neighbor Port ID    TTL\n\
------------ ------------------------ ---------------------- ---\n",
    );
    for p in front(sw) {
        let short = p.name.replacen("Ethernet", "Et", 1);
        for node in p.nodes.iter().filter_map(|&i| sim.nodes.get(i)) {
            let Some(nd) = node.netdevs.first() else {
                continue;
            };
            let _ = writeln!(out, "{short:<15} {:<24} {:<19} 120", node.name, nd.name);
        }
        if let Some(peer) = p.peer.as_ref().filter(|_| !p.down) {
            let _ = writeln!(out, "{short:<15} {:<24} {:<19} 120", peer.system, peer.port);
        }
    }
    out
}

/// `show running-config`, as far as the lossless settings go, set up as the lab is: DSCP 26 →
/// traffic class 3 (EOS's default map does so too), DSCP trust, PFC no-drop on 3, ECN on queue 3,
/// every front-panel port through one `qos profile`.
pub fn running_config(sw: &SwitchSim) -> String {
    let mut out = String::from(
        "! Command: show running-config\n!\nqos map dscp 26 to traffic-class 3\n!\nqos profile ROCE\n   qos trust dscp\n   tx-queue 3\n      random-detect ecn minimum-threshold 150 kbytes maximum-threshold 3000 kbytes max-mark-probability 7\n   !\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n!\n",
    );
    for p in front(sw) {
        let _ = write!(
            out,
            "interface {}\n   mtu 9214\n   service-profile ROCE\n!\n",
            p.name
        );
    }
    out.push_str("end\n");
    out
}
