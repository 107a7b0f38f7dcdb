//! A SONiC leaf's answers, in sonic-utilities' tabulate layout: `show queue counters`, `show queue
//! wredcounters`, `show lldp table`, `show pfcwd stats` (`show pfc counters` is
//! [`super::sonic_pfc`]). SONiC has no ingress MMU table here: its drops are the RoCE queue's (UC3).

use super::super::sim::{PortSim, Sim, SwitchSim};
use std::fmt::Write as _;

/// Unicast queues per port; the RoCE class is UC3, as the lab's qos-group 3.
const QUEUES: usize = 8;

fn queue_rows(out: &mut String, p: &PortSim, each: impl Fn(usize) -> [u64; 4]) {
    for q in 0..QUEUES {
        let [a, b, c, d] = each(q);
        let _ = writeln!(
            out,
            "{:>9}  {:>5}  {a:>14}  {b:>15}  {c:>14}  {d:>15}",
            p.name,
            format!("UC{q}")
        );
    }
}

/// `show queue counters`: packets and bytes sent per queue, and the queue's drops.
pub fn queue_counters(sw: &SwitchSim) -> String {
    let mut out = String::from(
        "     Port    TxQ    Counter/pkts    Counter/bytes       Drop/pkts       Drop/bytes\n\
---------  -----  --------------  ---------------  --------------  ---------------\n",
    );
    for p in &sw.ports {
        queue_rows(&mut out, p, |q| match p.qos.get(q).filter(|_| q < 4) {
            Some(c) if q == 3 => [
                c.tx_pkts,
                c.tx_bytes,
                c.dropped_pkts + p.mmu_drops,
                c.dropped_bytes + p.mmu_drop_bytes,
            ],
            Some(c) => [c.tx_pkts, c.tx_bytes, c.dropped_pkts, c.dropped_bytes],
            None => [0; 4],
        });
        out.push('\n');
    }
    out
}

/// `show queue wredcounters`: WRED drops and ECN marks of the RoCE queue.
pub fn wred_counters(sw: &SwitchSim) -> String {
    let mut out = String::from(
        "     Port    TxQ    WredDrp/pkts    WredDrp/bytes  EcnMarked/pkts  EcnMarked/bytes\n\
---------  -----  --------------  ---------------  --------------  ---------------\n",
    );
    for p in &sw.ports {
        queue_rows(&mut out, p, |q| {
            let (w, m) = if q == 3 {
                (p.wred_drops, p.ecn_marked)
            } else {
                (0, 0)
            };
            [w, w * 4200, m, m * 4200]
        });
        out.push('\n');
    }
    out
}

/// `show lldp table`: every node behind each port, by its first netdev.
pub fn lldp_table(sim: &Sim, sw: &SwitchSim) -> String {
    let mut out = String::from(
        "Capability codes: (R) Router, (B) Bridge, (O) Other\n\
LocalPort    RemoteDevice    RemotePortID       Capability    RemotePortDescr\n\
-----------  --------------  -----------------  ------------  -----------------\n",
    );
    for p in &sw.ports {
        for node in p.nodes.iter().filter_map(|&i| sim.nodes.get(i)) {
            let Some(nd) = node.netdevs.first() else {
                continue;
            };
            let _ = writeln!(
                out,
                "{:<11}  {:<14}  {:<17}  {:<12}  {}",
                p.name, node.name, nd.name, "S", nd.name
            );
        }
        if let Some(peer) = p.peer.as_ref().filter(|_| !p.down) {
            let cap = if peer.bridge { "BR" } else { "S" };
            let _ = writeln!(
                out,
                "{:<11}  {:<14}  {:<17}  {cap:<12}  {}",
                p.name, peer.system, peer.port, peer.port
            );
        }
    }
    out
}

/// `show pfcwd stats`: the watchdog on the RoCE queue (3) of every port with PFC, never stormed.
pub fn pfcwd_stats(sw: &SwitchSim) -> String {
    let mut out = String::from(
        "      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP\n\
-----------  -----------  -------------------------  ------------  ------------  -----------------  -----------------\n",
    );
    for p in sw.ports.iter().filter(|p| p.pfc_on && !p.internal) {
        let _ = writeln!(
            out,
            "{:>11}  {:>11}  {:>25}  {:>12}  {:>12}  {:>17}  {:>17}",
            format!("{}:3", p.name),
            "operational",
            "0/0",
            "0/0",
            "0/0",
            "0/0",
            "0/0"
        );
    }
    out
}

/// `show runningconfiguration all`: the CONFIG_DB tables of the lossless settings, set up as the
/// lab is (DSCP 26 → TC 3, PFC on 3, ECN on queue 3, MTU 9100 above the hosts' 9000).
pub fn running_config(sw: &SwitchSim) -> String {
    let dscp: serde_json::Map<String, serde_json::Value> = (0..64u8)
        .map(|d| (d.to_string(), serde_json::json!((d / 8).to_string())))
        .collect();
    let mut port = serde_json::Map::new();
    let mut qos_map = serde_json::Map::new();
    let mut queue = serde_json::Map::new();
    for p in sw.ports.iter().filter(|p| !p.internal) {
        port.insert(p.name.clone(), serde_json::json!({ "mtu": "9100" }));
        qos_map.insert(
            p.name.clone(),
            serde_json::json!({ "dscp_to_tc_map": "AZURE", "pfc_enable": "3" }),
        );
        queue.insert(
            format!("{}|3", p.name),
            serde_json::json!({ "wred_profile": "AZURE_LOSSLESS" }),
        );
    }
    serde_json::json!({
        "PORT": port,
        "PORT_QOS_MAP": qos_map,
        "DSCP_TO_TC_MAP": { "AZURE": dscp },
        "QUEUE": queue,
        "WRED_PROFILE": { "AZURE_LOSSLESS": {
            "ecn": "ecn_all",
            "wred_green_enable": "true",
            "green_min_threshold": "153600",
            "green_max_threshold": "3072000",
        }},
    })
    .to_string()
}
