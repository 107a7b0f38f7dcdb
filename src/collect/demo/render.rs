//! The demo's counters printed in the vendors' own formats, so they go through the same parsers as
//! live data: NX-OS 7.x `show queuing interface`, `show interface priority-flow-control` and
//! `show interface flowcontrol`, the mlx5 sysfs dump, `ethtool -S`, the lab's training log; a SONiC
//! or EOS switch in its own formats ([`sonic`], [`eos`]).

use super::sim::{NodeSim, PortSim, SwitchSim};
use std::fmt::Write as _;

pub mod eos;
pub mod sonic;

const RULE: &str = "+-------------------------------------------------------------------+";

fn box_row(out: &mut String, label: &str, v: [u64; 3]) {
    let _ = writeln!(out, "|{label:>16}|{:>16}|{:>16}|{:>16}|", v[0], v[1], v[2]);
}

fn qos_box(
    out: &mut String,
    title: &str,
    tx_pkts: u64,
    tx_bytes: u64,
    drop_pkts: u64,
    drop_bytes: u64,
) {
    let _ = writeln!(out, "{RULE}\n|{title:^67}|\n{RULE}");
    let _ = writeln!(
        out,
        "|                |  Unicast       | OOBFC Unicast  |  Multicast     |\n{RULE}"
    );
    box_row(out, "Tx Pkts ", [tx_pkts, 0, 0]);
    box_row(out, "Tx Byts ", [tx_bytes, 0, 0]);
    box_row(out, "Dropped Pkts ", [drop_pkts, 0, 0]);
    box_row(out, "Dropped Byts ", [drop_bytes, 0, 0]);
}

/// `show queuing interface <ports>` for the edge ports of `sw` (internal ports have no queuing view).
pub fn nxos_queuing(sw: &SwitchSim) -> String {
    let mut out = String::from("\nslot  1\n=======\n\n");
    for p in sw.ports.iter().filter(|p| !p.internal) {
        port_queuing(&mut out, p);
    }
    out
}

fn port_queuing(out: &mut String, p: &PortSim) {
    let _ = write!(
        out,
        "\nEgress Queuing for {} [System]\n\
------------------------------------------------------------------------------\n\
QoS-Group# Bandwidth% PrioLevel                Shape                   QLimit\n\
                                   Min          Max        Units   \n\
------------------------------------------------------------------------------\n",
        p.name
    );
    for (g, bw) in [(3, 50), (2, 0), (1, 0), (0, 50)] {
        let _ = writeln!(
            out,
            "      {g}            {bw:>2}         -           -            -     -            9(D)"
        );
    }
    for g in 0..4 {
        let q = &p.qos[g];
        qos_box(
            out,
            &format!("QOS GROUP {g}"),
            q.tx_pkts,
            q.tx_bytes,
            q.dropped_pkts,
            q.dropped_bytes,
        );
    }
    let ctl = &p.qos[4];
    qos_box(out, "CONTROL QOS GROUP", ctl.tx_pkts, ctl.tx_bytes, 0, 0);
    qos_box(out, "SPAN QOS GROUP", 0, 0, 0, 0);
    let _ = writeln!(out, "{RULE}\n");
    let _ = write!(
        out,
        "\nPort Egress Statistics\n--------------------------------------------------------\n\
Pause Flush Drop Pkts                    0\n\
WRED Drop Pkts                  {:>10}\n\
WRED Non ECN Drop Pkts                   0\n\n\n",
        p.wred_drops
    );
    let _ = write!(
        out,
        "Ingress Queuing for {}\n-----------------------------------------------------\n\
QoS-Group#                 Pause                    \n\
           Buff Size       Pause Th      Resume Th  \n\
-----------------------------------------------------\n\
      3          95680          34320          30160\n\
      2              0              0              0\n\
      1              0              0              0\n\
      0              0              0              0\n\n\n",
        p.name
    );
    let _ = write!(
        out,
        "Port Ingress Statistics\n--------------------------------------------------------\n\
Ingress MMU Drop Pkts           {:>10}\n\
Ingress MMU Drop Bytes          {:>10}\n\n\n",
        p.mmu_drops, p.mmu_drop_bytes
    );
    let _ = write!(
        out,
        "PFC Statistics\n------------------------------------------------------------------------------\n\
TxPPP:            {:>10}, RxPPP:            {:>10}\n\
------------------------------------------------------------------------------\n\
 COS QOS Group        PG   TxPause   TxCount         RxPause         RxCount\n",
        p.pfc_tx, p.pfc_rx
    );
    for cos in 0..8u64 {
        let (qg, pg, tx, rx) = if cos == 3 {
            ("3", "3", p.pfc_tx, p.pfc_rx)
        } else {
            ("0", "-", 0, 0)
        };
        let state = |on: bool| if on { "Active" } else { "Inactive" };
        let _ = writeln!(
            out,
            "     {cos}         {qg}         {pg}  {:>8} {tx:>9}        {:>8} {rx:>15}",
            state(cos == 3 && tx > 0),
            state(cos == 3 && rx > 0)
        );
    }
    let _ = writeln!(
        out,
        "------------------------------------------------------------------------------\n"
    );
}

/// `show interface priority-flow-control`: every port, edge and internal.
pub fn nxos_pfc(sw: &SwitchSim) -> String {
    let mut out = String::from(
        "\n============================================================\n\
Port               Mode Oper(VL bmap)  RxPPP      TxPPP     \n\
============================================================\n\n",
    );
    for p in &sw.ports {
        let oper = if p.pfc_on { "On  (8)   " } else { "Off       " };
        let _ = writeln!(
            out,
            "{:<19}Auto {oper}{:<11}{:<10}",
            p.name, p.pfc_rx, p.pfc_tx
        );
    }
    out
}

/// `show interface flowcontrol` (802.3x) for the edge ports, with NX-OS's short names.
pub fn nxos_flowcontrol(sw: &SwitchSim) -> String {
    let mut out = String::from(
        "\n--------------------------------------------------------------------------------\n\
Port         Send FlowControl  Receive FlowControl  RxPause TxPause\n\
             admin    oper     admin    oper\n\
--------------------------------------------------------------------------------\n",
    );
    for p in sw.ports.iter().filter(|p| !p.internal) {
        let short = p.name.replacen("Ethernet", "Eth", 1);
        let st = if p.flowcontrol_on { "on " } else { "off" };
        let _ = writeln!(
            out,
            "{short:<13}off      off      {st}      {st}         {:<7} {:<7}",
            p.link_pause_rx, p.link_pause_tx
        );
    }
    out
}

/// The `path:value` lines `grep -rs .` prints for the node's sysfs (Request::SysfsDump).
pub fn sysfs_dump(n: &NodeSim, root: &str) -> String {
    let mut out = String::new();
    for d in &n.devs {
        let port = format!("{root}/class/infiniband/{}/ports/1", d.name);
        for (name, v) in &d.hw {
            let _ = writeln!(out, "{port}/hw_counters/{name}:{v}");
        }
        let _ = writeln!(out, "{port}/counters/port_xmit_data:{}", d.xmit_words);
        let _ = writeln!(out, "{port}/counters/port_rcv_data:{}", d.rcv_words);
        let _ = writeln!(
            out,
            "{port}/counters/port_xmit_packets:{}",
            d.xmit_words / 1050
        );
        let _ = writeln!(
            out,
            "{port}/counters/port_rcv_packets:{}",
            d.rcv_words / 1050
        );
        if let Some(nd) = &d.netdev {
            let _ = writeln!(out, "{port}/gid_attrs/ndevs/0:{nd}");
            let _ = writeln!(out, "{port}/gid_attrs/ndevs/1:{nd}");
        }
        let _ = writeln!(out, "{port}/state:4: ACTIVE");
    }
    for nd in &n.netdevs {
        let st = format!("{root}/class/net/{}/statistics", nd.name);
        let _ = writeln!(out, "{st}/rx_bytes:{}", nd.kernel_rx_bytes);
        let _ = writeln!(out, "{st}/tx_bytes:{}", nd.kernel_tx_bytes);
        let _ = writeln!(out, "{st}/rx_dropped:0");
    }
    out
}

/// `ethtool -S <netdev>` of an mlx5 port with PFC on priority 3.
pub fn ethtool(n: &NodeSim, netdev: &str) -> Option<String> {
    let nd = n.netdevs.iter().find(|x| x.name == netdev)?;
    let mut out = format!("ethtool -S {netdev}\nNIC statistics:\n");
    let rows: [(&str, u64); 22] = [
        ("rx_packets", nd.rx_packets),
        ("rx_bytes", nd.rx_bytes),
        ("tx_packets", nd.tx_packets),
        ("tx_bytes", nd.tx_bytes),
        ("rx_discards_phy", nd.rx_discards_phy),
        ("tx_discards_phy", 0),
        ("rx_pause_ctrl_phy", 0),
        ("tx_pause_ctrl_phy", 0),
        ("rx_prio3_bytes", nd.rx_bytes),
        ("rx_prio3_packets", nd.rx_packets),
        ("tx_prio3_bytes", nd.tx_bytes),
        ("tx_prio3_packets", nd.tx_packets),
        ("rx_prio3_pause", nd.rx_pause),
        ("rx_prio3_pause_duration", nd.rx_pause_us),
        ("tx_prio3_pause", nd.tx_pause),
        ("tx_prio3_pause_duration", nd.tx_pause_us),
        ("rx_prio3_pause_transition", nd.rx_pause_transition),
        ("tx_prio3_pause_transition", nd.tx_pause_transition),
        ("rx_prio3_discards", 0),
        ("tx_pause_storm_warning_events", nd.storm_warnings),
        ("tx_pause_storm_error_events", 0),
        ("module_unplug", 0),
    ];
    for (k, v) in rows {
        let _ = writeln!(out, "     {k}: {v}");
    }
    Some(out)
}

/// SONiC `show pfc counters`: every port, received then sent, per priority (the RoCE class 3
/// carries the pauses; SONiC has no port total).
pub fn sonic_pfc(sw: &SwitchSim) -> String {
    let mut out = String::new();
    for (dir, tx) in [("Rx", false), ("Tx", true)] {
        let _ = writeln!(
            out,
            "  Port {dir}    PFC0    PFC1    PFC2    PFC3    PFC4    PFC5    PFC6    PFC7\n\
---------  ------  ------  ------  ------  ------  ------  ------  ------"
        );
        for p in &sw.ports {
            let _ = write!(out, "{:<10}", p.name);
            for prio in 0..8 {
                let count = if tx { p.pfc_tx } else { p.pfc_rx };
                let v = if prio == 3 { count } else { 0 };
                let _ = write!(out, " {v:>7}");
            }
            out.push('\n');
        }
        out.push('\n');
    }
    out
}

/// Arista EOS `show priority-flow-control counters | json`: every port's totals (EOS does not
/// count per class here).
pub fn eos_pfc(sw: &SwitchSim) -> String {
    let ports: serde_json::Map<String, serde_json::Value> = sw
        .ports
        .iter()
        .map(|p| {
            let v = serde_json::json!({ "rxFrames": p.pfc_rx, "txFrames": p.pfc_tx });
            (p.name.clone(), v)
        })
        .collect();
    serde_json::json!({ "interfaceCounters": ports }).to_string()
}
