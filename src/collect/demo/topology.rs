//! The demo lab's topology and lossless settings, in the tools' own formats: NX-OS `show lldp
//! neighbors`, `show queuing pfc-queue detail` and `show running-config ipqos`, host `lldpctl -f keyvalue` and the host QoS
//! request. The lab is set up right (PFC and DCQCN on priority 3, DSCP trust, DSCP 26 → 3, MTU
//! 9000 under the switch's 9216), so `rocetop check --demo` finds it consistent.

use super::sim::{NodeSim, Sim, SwitchSim};
use std::fmt::Write as _;

/// NX-OS `show lldp neighbors`: every node behind each edge port, by its first netdev.
pub fn nxos_lldp(sim: &Sim, sw: &SwitchSim) -> String {
    let mut out = String::from(
        "Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\nDevice ID            Local Intf      Hold-time  Capability  Port ID\n",
    );
    let mut n = 0;
    for p in sw.ports.iter().filter(|p| !p.internal) {
        let short = p.name.replacen("Ethernet", "Eth", 1);
        for node in p.nodes.iter().filter_map(|&i| sim.nodes.get(i)) {
            let Some(nd) = node.netdevs.first() else {
                continue;
            };
            let _ = writeln!(
                out,
                "{:<21}{short:<16}120        S            {}",
                node.name, nd.name
            );
            n += 1;
        }
        if let Some(peer) = p.peer.as_ref().filter(|_| !p.down) {
            let cap = if peer.bridge { "BR" } else { "S " };
            let _ = writeln!(
                out,
                "{:<21}{short:<16}120        {cap}           {}",
                peer.system, peer.port
            );
            n += 1;
        }
    }
    let _ = writeln!(out, "Total entries displayed: {n}");
    out
}

/// NX-OS `show queuing pfc-queue detail`: the watchdog watches qos-group 3 on the edge ports.
pub fn nxos_pfcwd(sw: &SwitchSim) -> String {
    let mut out = String::new();
    for p in sw.ports.iter().filter(|p| !p.internal && p.pfc_on) {
        let _ = write!(
            out,
            "{} Interface PFC watchdog: [Enabled]\n+----------------------------------------------------+\n| QOS GROUP 3 [Active] PFC [YES] PFC-COS [3]\n+----------------------------------------------------+\n|                       Shutdown|                   0|\n|                       Restored|                   0|\n|             Total pkts dropped|                   0|\n+----------------------------------------------------+\n",
            p.name
        );
    }
    out
}

/// NX-OS `show interface` of the edge ports, as far as the MTU read needs it: the lab's 9216.
pub fn nxos_interface_mtu(sw: &SwitchSim) -> String {
    let mut out = String::new();
    for p in sw.ports.iter().filter(|p| !p.internal) {
        let _ = write!(
            out,
            "{} is up\nadmin state is up, Dedicated Interface\n  Hardware: 100000 Ethernet, address: 00de.fb00.0001\n  MTU 9216 bytes, BW 10000000 Kbit, DLY 10 usec\n",
            p.name
        );
    }
    out
}

/// NX-OS `show running-config ipqos` of the lab: DSCP 26 → qos-group 3, paused as CoS 3, ECN on
/// queue 3 switch-wide, the classification on every edge port.
pub fn nxos_ipqos(sw: &SwitchSim) -> String {
    let mut out = String::from(
        "!Command: show running-config ipqos\n\nversion 9.3(9)\n\nclass-map type qos match-all ROCE\n  match dscp 26\npolicy-map type qos ROCE_IN\n  class ROCE\n    set qos-group 3\npolicy-map type network-qos ROCE_NQ\n  class type network-qos c-8q-nq3\n    pause pfc-cos 3\n    mtu 9216\npolicy-map type queuing ROCE_OUT\n  class type queuing c-out-8q-q3\n    bandwidth remaining percent 50\n    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn\nsystem qos\n  service-policy type network-qos ROCE_NQ\n  service-policy type queuing output ROCE_OUT\n",
    );
    for p in sw.ports.iter().filter(|p| !p.internal) {
        let _ = write!(
            out,
            "\ninterface {}\n  service-policy type qos input ROCE_IN\n",
            p.name
        );
    }
    out
}

/// `lldpctl -f keyvalue` of a node: each netdev sees the switch port it is cabled to.
pub fn lldpctl(sim: &Sim, node: &NodeSim) -> String {
    let idx = sim.nodes.iter().position(|n| n.name == node.name);
    let mut out = String::new();
    // The fabric's NICs know their own leaf ports.
    for nd in &node.netdevs {
        if let Some(at) = &nd.lldp {
            let _ = write!(
                out,
                "lldp.{0}.via=LLDP\nlldp.{0}.chassis.name={1}\nlldp.{0}.port.ifname={2}\nlldp.{0}.port.descr={2}\n",
                nd.name, at.switch, at.port
            );
        }
    }
    if !out.is_empty() {
        return out;
    }
    for sw in &sim.switches {
        for p in sw
            .ports
            .iter()
            .filter(|p| idx.is_some_and(|i| p.nodes.contains(&i)))
        {
            for nd in node.netdevs.iter().take(1) {
                let _ = write!(
                    out,
                    "lldp.{0}.via=LLDP\nlldp.{0}.chassis.name={1}\nlldp.{0}.port.ifname={2}\nlldp.{0}.port.descr={2}\n",
                    nd.name, sw.name, p.name
                );
            }
        }
    }
    out
}

/// The host QoS request's output for every netdev of a node.
pub fn host_qos(node: &NodeSim, root: &str) -> String {
    let mut out = String::new();
    for nd in &node.netdevs {
        let n = &nd.name;
        let _ = writeln!(
            out,
            "mlnx_qos -i {n}\nDCBX mode: OS controlled\nPriority trust state: dscp\ndscp2prio mapping:"
        );
        for prio in 0..8u32 {
            let d: Vec<String> = (0..8)
                .rev()
                .map(|k| format!("{:02}", prio * 8 + k))
                .collect();
            let _ = writeln!(out, "\tprio:{prio} dscp:{},", d.join(","));
        }
        let _ = writeln!(
            out,
            "default priority:\nReceive buffer size (bytes): 130944,130944,0,0,0,0,0,0,max_buffer_size=262016\nCable len: 7\nPFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0   0   0   1   0   0   0   0\n\tbuffer      0   0   0   1   0   0   0   0"
        );
        for tc in 0..8 {
            let _ = writeln!(
                out,
                "tc: {tc} ratelimit: unlimited, tsa: vendor\n\t priority:  {tc}"
            );
        }
        let _ = writeln!(
            out,
            "ethtool -a {n}\nPause parameters for {n}:\nAutonegotiate:\toff\nRX:\t\toff\nTX:\t\toff\n{root}/class/net/{n}/mtu:9000"
        );
        for point in ["roce_np", "roce_rp"] {
            for prio in 0..8 {
                let on = u8::from(prio == 3);
                let _ = writeln!(out, "{root}/class/net/{n}/ecn/{point}/enable/{prio}:{on}");
            }
        }
    }
    out
}
