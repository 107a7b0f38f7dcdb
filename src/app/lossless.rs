//! Proof that the lossless path is set up end to end, for every node netdev ↔ switch port pair:
//! the switch's no-drop priority is the host's PFC priority, the host trusts DSCP and maps the
//! RoCE DSCP to it, DCQCN is on for it, 802.3x is off where PFC is on, the host MTU fits the
//! switch port's (where both were read), and the switch classifies the RoCE DSCP onto it and
//! marks ECN on its queue ([`super::lossless_switch`]). Pure over the store: each finding names the wrong side and the command that fixes it;
//! what could not be read is a note, never a pass and never a failure.

use super::pairing::{self, Pair};
use crate::config::Config;
use crate::metrics::names::*;
use crate::metrics::query::ByOwner;
use crate::metrics::{Sample, Store};
use std::collections::BTreeSet;

pub use super::proof::{Finding, Proof, Side};

/// Whether a series is one of the topology reads the pairing and this proof stand on (LLDP, host
/// QoS, 802.3x and MTU of a host): a poll carrying one calls for a new proof. (A switch port's MTU
/// is not one: EOS prints it every poll; it is read when the next topology answer comes.)
pub fn feeds(name: &str) -> bool {
    name == LINK_NEIGHBOR_INFO
        || name.starts_with("rocetop_nic_qos_")
        || name == NIC_FLOWCONTROL_ENABLED
        || name == NIC_MTU_BYTES
        || name.starts_with("rocetop_switch_qos_")
}

/// A switch port's setting the proof compares (PFC priorities, 802.3x, MTU), which the counter
/// polls bring every interval.
pub fn switch_setting(name: &str) -> bool {
    name == SW_PFC_ENABLED || name == SW_FLOWCONTROL_ENABLED || name == SW_PORT_MTU_BYTES
}

/// What a poll brought that the proof stands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrived {
    Nothing,
    /// A switch's settings: the proof is due.
    SwitchSetting,
    /// Topology: pair again and prove again now.
    Topology,
}

impl Arrived {
    /// What `samples` bring.
    pub fn of(samples: &[Sample]) -> Arrived {
        let names = || samples.iter().map(|s| s.key.name.as_str());
        if names().any(feeds) {
            Arrived::Topology
        } else if names().any(switch_setting) {
            Arrived::SwitchSetting
        } else {
            Arrived::Nothing
        }
    }
}

/// The settings the proof reads, per pair.
const SETTINGS: [&str; 14] = [
    SW_PFC_ENABLED,
    SW_FLOWCONTROL_ENABLED,
    SW_PORT_MTU_BYTES,
    SW_QOS_TRUST_DSCP,
    SW_QOS_DSCP_MAP,
    SW_QOS_DSCP_PRIORITY,
    SW_QOS_ECN_ENABLED,
    NIC_QOS_PFC_ENABLED,
    NIC_QOS_TRUST_DSCP,
    NIC_QOS_DSCP_PRIORITY,
    NIC_QOS_DCQCN_NP_ENABLED,
    NIC_QOS_DCQCN_RP_ENABLED,
    NIC_FLOWCONTROL_ENABLED,
    NIC_MTU_BYTES,
];

fn value(store: &ByOwner, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    store.latest(name, labels).map(|(_, v)| v.as_f64())
}

/// Priorities with `name` = 1 among the series matching `labels`; None when none is known.
fn enabled_priorities(
    store: &ByOwner,
    name: &str,
    labels: &[(&str, &str)],
) -> Option<BTreeSet<u8>> {
    let mut seen = false;
    let mut on = BTreeSet::new();
    for (_, s) in store.select(name, labels) {
        let (Some(p), Some((_, v))) = (s.key.label("priority"), s.latest(store.store())) else {
            continue;
        };
        let Ok(p) = p.parse::<u8>() else {
            continue; // `all`: a port total, not a priority
        };
        seen = true;
        if v.as_f64() > 0.5 {
            on.insert(p);
        }
    }
    seen.then_some(on)
}

fn list(s: &BTreeSet<u8>) -> String {
    if s.is_empty() {
        return "none".into();
    }
    s.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
}

/// `mlnx_qos --pfc` argument enabling exactly `prios`.
fn pfc_arg(prios: &BTreeSet<u8>) -> String {
    (0..8u8)
        .map(|p| if prios.contains(&p) { "1" } else { "0" })
        .collect::<Vec<_>>()
        .join(",")
}

/// Check every pair; the RoCE traffic's DSCP is `[roce] dscp`.
pub fn prove(cfg: &Config, store: &Store) -> Proof {
    let dscp = cfg.roce.dscp;
    let (pairs, disagreements) = pairing::pairs(cfg, store);
    let settings = ByOwner::new(store, &SETTINGS);
    let mut proof = Proof::default();
    for d in &disagreements {
        let pair = pairs
            .iter()
            .find(|p| p.node == d.node && p.port == d.config_port && p.switch == d.config_switch)
            .cloned()
            .unwrap_or_else(|| Pair {
                node: d.node.clone(),
                netdev: String::new(),
                switch: d.config_switch.clone(),
                port: d.config_port.clone(),
                from: pairing::From::Config,
            });
        let seen: Vec<String> = d
            .lldp
            .iter()
            .map(|(nd, sw, p)| format!("{nd} ↔ {sw} {p}"))
            .collect();
        let configured = pairing::said(cfg, &d.config_switch, &d.config_port);
        proof.findings.push(Finding {
            side: Side::Config,
            pair,
            link: d.node.clone(),
            problem: format!(
                "config says switch_port = \"{configured}\", LLDP says {}",
                seen.join(", ")
            ),
            fix: match d.lldp.as_slice() {
                [(_, sw, p)] => format!(
                    "set switch_port = \"{}\" for {} (or recable to {configured})",
                    pairing::said(cfg, sw, p),
                    d.node
                ),
                _ => format!("set switch_port for {} to the port it is cabled to", d.node),
            },
        });
    }
    for n in &cfg.nodes {
        if !pairs.iter().any(|p| p.node == n.name) {
            proof.notes.push(format!(
                "{}: no switch port known (no switch_port in config, no LLDP neighbour seen)",
                n.name
            ));
        }
    }
    let mut mtu_unknown = Vec::new();
    let mut unread = super::lossless_switch::Unread::default();
    for p in &pairs {
        if let Some(prio) = check_pair(cfg, &settings, dscp, p, &mut proof) {
            super::lossless_switch::check(
                cfg,
                &settings,
                prio,
                p,
                &link_of(p),
                &mut proof,
                &mut unread,
            );
        }
        if !check_mtu(cfg, &settings, p, &mut proof) {
            mtu_unknown.push(format!("{} {}", p.switch, p.port));
        }
    }
    if !mtu_unknown.is_empty() {
        proof.notes.push(format!(
            "MTU not proven on {} (host ≤ switch needs both read: host MTUs seen {}; the switch port's from NX-OS `show interface`, EOS `show interfaces`, SONiC CONFIG_DB PORT)",
            crate::app::ports::compress(&mtu_unknown),
            mtus(store)
        ));
    }
    proof.notes.extend(unread.notes());
    proof.pairs = pairs;
    proof
}

/// `ubunturdma1 ens224 ↔ NX_AI_Leaf1 Ethernet1/2/2` (no netdev where it is unknown).
fn link_of(p: &Pair) -> String {
    if p.netdev.is_empty() {
        format!("{} ↔ {} {}", p.node, p.switch, p.port)
    } else {
        format!("{} {} ↔ {} {}", p.node, p.netdev, p.switch, p.port)
    }
}

/// The host side of pair `p` and the PFC priorities of both; the no-drop priority, if known.
fn check_pair(cfg: &Config, store: &ByOwner, dscp: u8, p: &Pair, proof: &mut Proof) -> Option<u8> {
    let link = link_of(p);
    let mut find = |side, problem: String, fix: String| {
        proof.findings.push(Finding {
            side,
            pair: p.clone(),
            link: link.clone(),
            problem,
            fix,
        })
    };
    let sw = [("switch", p.switch.as_str()), ("port", p.port.as_str())];
    let host = [("node", p.node.as_str()), ("netdev", p.netdev.as_str())];
    let nd = if p.netdev.is_empty() {
        "<netdev>"
    } else {
        p.netdev.as_str()
    };
    let sw_pfc = enabled_priorities(store, SW_PFC_ENABLED, &sw);
    let host_pfc = if p.netdev.is_empty() {
        None
    } else {
        enabled_priorities(store, NIC_QOS_PFC_ENABLED, &host)
    };
    // The no-drop priority the fabric is built around: the switch's, else the host's.
    let lossless: Option<u8> = sw_pfc
        .as_ref()
        .and_then(|s| s.iter().next().copied())
        .or_else(|| host_pfc.as_ref().and_then(|h| h.iter().next().copied()));
    match (&sw_pfc, &host_pfc) {
        (Some(s), Some(h)) if s != h && !s.is_empty() => find(
            Side::Host,
            format!(
                "PFC on priorities {} on the host, the switch port's no-drop priority is {}",
                list(h),
                list(s)
            ),
            format!("mlnx_qos -i {nd} --pfc {}", pfc_arg(s)),
        ),
        (Some(s), Some(h)) if s.is_empty() && !h.is_empty() => find(
            Side::Switch,
            format!(
                "PFC is off on the switch port, the host has it on priorities {}",
                list(h)
            ),
            format!("interface {} ; priority-flow-control mode on", p.port),
        ),
        _ => {}
    }
    let Some(prio) = lossless else {
        proof
            .notes
            .push(format!("{link}: no PFC priority known on either side"));
        return None;
    };
    if p.netdev.is_empty() {
        proof.notes.push(format!("{link}: host side not checked (which netdev rides this port is unknown: set netdevs or run lldpd)"));
        return Some(prio);
    }
    if host_pfc.is_none() {
        proof.notes.push(format!(
            "{link}: host QoS unknown (mlnx_qos not installed or not run)"
        ));
    }
    match value(store, NIC_QOS_TRUST_DSCP, &host) {
        Some(t) if t < 0.5 => find(
            Side::Host,
            "the host NIC trusts PCP, the fabric classifies RoCE by DSCP".into(),
            format!("mlnx_qos -i {nd} --trust dscp"),
        ),
        _ => {}
    }
    let d = dscp.to_string();
    let mut dl = host.to_vec();
    dl.push(("dscp", &d));
    match value(store, NIC_QOS_DSCP_PRIORITY, &dl) {
        Some(m) if (m - f64::from(prio)).abs() > 0.5 => find(
            Side::Host,
            format!("DSCP {dscp} maps to priority {m} on the host, the no-drop priority is {prio}"),
            format!("mlnx_qos -i {nd} --dscp2prio set,{dscp},{prio}"),
        ),
        _ => {}
    }
    let pr = prio.to_string();
    let mut pl = host.to_vec();
    pl.push(("priority", &pr));
    for (name, point) in [
        (NIC_QOS_DCQCN_NP_ENABLED, "roce_np"),
        (NIC_QOS_DCQCN_RP_ENABLED, "roce_rp"),
    ] {
        match value(store, name, &pl) {
            Some(v) if v < 0.5 => find(
                Side::Host,
                format!("DCQCN {point} is off on priority {prio}"),
                format!("echo 1 > /sys/class/net/{nd}/ecn/{point}/enable/{prio}"),
            ),
            Some(_) => {}
            None => proof.notes.push(format!(
                "{link}: DCQCN knobs not readable (/sys/class/net/{nd}/ecn)"
            )),
        }
    }
    let fc_on = |name, labels: &[(&str, &str)]| {
        ["rx", "tx"].into_iter().any(|dir| {
            let mut l = labels.to_vec();
            l.push(("direction", dir));
            value(store, name, &l).is_some_and(|v| v > 0.5)
        })
    };
    if fc_on(NIC_FLOWCONTROL_ENABLED, &host) {
        find(
            Side::Host,
            "802.3x pause is on beside PFC (it pauses every priority)".into(),
            format!("ethtool -A {nd} rx off tx off"),
        );
    }
    // With `[alerts] flowcontrol` set, the switch's 802.3x is judged against it elsewhere.
    if cfg.alerts.flowcontrol.is_none() && fc_on(SW_FLOWCONTROL_ENABLED, &sw) {
        find(
            Side::Switch,
            "802.3x flowcontrol is on beside PFC".into(),
            format!(
                "interface {} ; flowcontrol receive off ; flowcontrol send off",
                p.port
            ),
        );
    }
    Some(prio)
}

/// Host MTU ≤ switch port MTU, where both were read (false: not proven). A switch port below its
/// jumbo maximum is the side to fix; one at it means the host is set too large.
fn check_mtu(cfg: &Config, store: &ByOwner, p: &Pair, proof: &mut Proof) -> bool {
    let sw = value(
        store,
        SW_PORT_MTU_BYTES,
        &[("switch", p.switch.as_str()), ("port", p.port.as_str())],
    );
    let host = if p.netdev.is_empty() {
        None
    } else {
        value(
            store,
            NIC_MTU_BYTES,
            &[("node", p.node.as_str()), ("netdev", p.netdev.as_str())],
        )
    };
    let (Some(sw), Some(host)) = (sw, host) else {
        return false;
    };
    if host <= sw {
        return true;
    }
    let max = match cfg
        .switches
        .iter()
        .find(|s| s.name == p.switch)
        .map(|s| s.os)
    {
        Some(crate::config::SwitchOs::Eos) => 9214.0,
        _ => 9216.0,
    };
    let (side, fix) = if sw < max {
        (Side::Switch, format!("interface {} ; mtu {max}", p.port))
    } else {
        (Side::Host, format!("ip link set dev {} mtu {sw}", p.netdev))
    };
    proof.findings.push(Finding {
        side,
        pair: p.clone(),
        link: format!("{} {} ↔ {} {}", p.node, p.netdev, p.switch, p.port),
        problem: format!(
            "MTU {host} on the host is above the switch port's {sw} (frames would be dropped)"
        ),
        fix,
    });
    true
}

/// The host MTUs seen, for the note above (`9000`, or `1500, 9000`).
fn mtus(store: &Store) -> String {
    let set: BTreeSet<u64> = store
        .select(NIC_MTU_BYTES, &[])
        .filter_map(|(_, s)| s.latest(store).map(|(_, v)| v.as_f64() as u64))
        .collect();
    if set.is_empty() {
        return "unknown".into();
    }
    set.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Finding {
    /// One line: what is wrong, on which side, and the fix (the PFC tab's detail view).
    pub fn text(&self) -> String {
        let side = match self.side {
            Side::Host => "host",
            Side::Switch => "switch",
            Side::Config => "config",
        };
        format!("{} [{side} side]; fix: {}", self.problem, self.fix)
    }
}

impl Proof {
    /// The findings that bite `port` of `switch` (a config disagreement names no switch).
    pub fn at_port<'a>(
        &'a self,
        switch: &'a str,
        port: &'a str,
    ) -> impl Iterator<Item = &'a Finding> {
        self.findings.iter().filter(move |f| {
            f.pair.port == port && (f.pair.switch == switch || f.pair.switch.is_empty())
        })
    }

    /// The findings that bite `netdev` of `node` (or the node, where the netdev is unknown).
    pub fn at_netdev<'a>(
        &'a self,
        node: &'a str,
        netdev: &'a str,
    ) -> impl Iterator<Item = &'a Finding> {
        self.findings.iter().filter(move |f| {
            f.pair.node == node && (f.pair.netdev == netdev || f.pair.netdev.is_empty())
        })
    }

    /// The `check` section: pairs, findings with their fixes, notes.
    pub fn render(&self) -> String {
        use crate::safe::line as cell;
        use std::fmt::Write as _;
        let mut t = String::new();
        let _ = writeln!(
            t,
            "\nLossless path: {} link(s), {}",
            self.pairs.len(),
            if self.findings.is_empty() && self.notes.is_empty() {
                "consistent".to_string()
            } else if self.findings.is_empty() {
                // Unknown facts are not agreement: say what was not proven (the notes below).
                format!("no mismatch in what was read; {} note(s)", self.notes.len())
            } else {
                format!("{} mismatch(es)", self.findings.len())
            }
        );
        for p in &self.pairs {
            let from = match p.from {
                pairing::From::Config => "config",
                pairing::From::Lldp => "LLDP",
            };
            let nd = if p.netdev.is_empty() { "?" } else { &p.netdev };
            let _ = writeln!(
                t,
                "  {} {} ↔ {} {} ({from})",
                cell(&p.node),
                cell(nd),
                cell(&p.switch),
                cell(&p.port)
            );
        }
        for f in &self.findings {
            let side = match f.side {
                Side::Host => "host",
                Side::Switch => "switch",
                Side::Config => "config",
            };
            let _ = writeln!(
                t,
                "  MISMATCH {}: {} [{side} side]\n    fix: {}",
                cell(&f.link),
                cell(&f.problem),
                cell(&f.fix)
            );
        }
        for n in &self.notes {
            let _ = writeln!(t, "  note: {}", cell(n));
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Ctx, ParseKind, parse};

    fn proof(host: &str) -> Proof {
        proof_with(host, "", "")
    }

    /// `switch_intf`: the leaf's `show interface` (its MTU), empty for none read; `extra`: more
    /// config (`[roce]`).
    fn proof_with(host: &str, switch_intf: &str, extra: &str) -> Proof {
        let cfg = Config::from_str(
            &format!("{extra}[[switch]]\nname = \"leaf\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\nports = [\"Ethernet1/1/1\"]\n[[node]]\nname = \"n1\"\nhost = \"127.0.0.1\"\nnetdevs = [\"ens224\"]\nswitch_port = \"Ethernet1/1/1\"\n"),
            "t.toml",
            None,
        )
        .expect("config");
        let mut store = Store::new(600_000, 16);
        let sw = store.add_source("leaf", 1000);
        let pfc = "Port               Mode Oper(VL bmap)  RxPPP      TxPPP\nEthernet1/1/1      Auto On  (8)        0          0\n";
        store.ingest(sw, 1, &parse(ParseKind::NxosPfc, pfc, &Ctx::named("leaf")));
        if !switch_intf.is_empty() {
            let t = store.add_source("leaf topology", 1000);
            let mtu = parse(ParseKind::NxosMtu, switch_intf, &Ctx::named("leaf"));
            store.ingest(t, 1, &mtu);
        }
        let n = store.add_source("n1 topology", 1000);
        store.ingest(n, 1, &parse(ParseKind::HostQos, host, &Ctx::named("n1")));
        prove(&cfg, &store)
    }

    const RIGHT: &str = "mlnx_qos -i ens224\nPriority trust state: dscp\ndscp2prio mapping:\n\tprio:3 dscp:31,30,29,28,27,26,25,24,\nPFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0   0   0   1   0   0   0   0\n/sys/class/net/ens224/ecn/roce_np/enable/3:1\n/sys/class/net/ens224/ecn/roce_rp/enable/3:1\nethtool -a ens224\nPause parameters for ens224:\nRX:\t\toff\nTX:\t\toff\n";

    #[test]
    fn a_right_host_passes_and_each_wrong_setting_is_named_with_its_fix() {
        let ok = proof(RIGHT);
        assert!(ok.findings.is_empty(), "{:?}", ok.findings);
        let cases = [
            (
                "trust state: dscp",
                "trust state: pcp",
                "mlnx_qos -i ens224 --trust dscp",
            ),
            (
                "prio:3 dscp:31,30,29,28,27,26,",
                "prio:2 dscp:31,30,29,28,27,26,",
                "--dscp2prio set,26,3",
            ),
            (
                "roce_rp/enable/3:1",
                "roce_rp/enable/3:0",
                "echo 1 > /sys/class/net/ens224/ecn/roce_rp/enable/3",
            ),
            ("RX:\t\toff", "RX:\t\ton", "ethtool -A ens224 rx off tx off"),
            (
                "enabled     0   0   0   1",
                "enabled     0   0   0   0",
                "--pfc 0,0,0,1,0,0,0,0",
            ),
        ];
        for (from, to, fix) in cases {
            let p = proof(&RIGHT.replace(from, to));
            assert_eq!(p.findings.len(), 1, "{to}: {:?}", p.findings);
            assert_eq!(p.findings[0].side, Side::Host);
            assert!(p.findings[0].fix.contains(fix), "{to}: {:?}", p.findings[0]);
        }
    }

    #[test]
    fn no_mlnx_qos_is_a_note_not_a_mismatch() {
        let p = proof("mlnx_qos -i ens224\nrocetop: mlnx_qos not installed\n");
        assert!(p.findings.is_empty(), "{:?}", p.findings);
        assert!(
            p.notes.iter().any(|n| n.contains("host QoS unknown")),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn mtu_host_above_switch_names_the_side_below_its_maximum() {
        let intf = |mtu: u32| {
            format!(
                "Ethernet1/1/1 is up\nadmin state is up, Dedicated Interface\n  MTU {mtu} bytes, BW 100000000 Kbit, DLY 10 usec\n  RX\n    10 input packets  1000 bytes\n"
            )
        };
        let host = |mtu: u32| format!("{RIGHT}/sys/class/net/ens224/mtu:{mtu}\n");
        let fits = proof_with(&host(9000), &intf(9216), "");
        assert!(fits.findings.is_empty(), "{:?}", fits.findings);
        assert!(
            !fits.notes.iter().any(|n| n.contains("MTU not proven")),
            "{:?}",
            fits.notes
        );
        let small_switch = proof_with(&host(9000), &intf(1500), "");
        assert_eq!(
            small_switch.findings.len(),
            1,
            "{:?}",
            small_switch.findings
        );
        let f = &small_switch.findings[0];
        assert_eq!(f.side, Side::Switch);
        assert_eq!(f.fix, "interface Ethernet1/1/1 ; mtu 9216");
        assert!(
            f.problem
                .contains("MTU 9000 on the host is above the switch port's 1500")
        );
        let big_host = proof_with(&host(9600), &intf(9216), "");
        assert_eq!(big_host.findings.len(), 1, "{:?}", big_host.findings);
        assert_eq!(big_host.findings[0].side, Side::Host);
        assert_eq!(big_host.findings[0].fix, "ip link set dev ens224 mtu 9216");
        // The switch port's MTU not read: said, never passed.
        let unread = proof(&host(9000));
        assert!(unread.findings.is_empty());
        assert!(
            unread
                .notes
                .iter()
                .any(|n| n.contains("MTU not proven on leaf Ethernet1/1/1") && n.contains("9000")),
            "{:?}",
            unread.notes
        );
    }

    #[test]
    fn the_configured_roce_dscp_is_the_one_checked() {
        let host = RIGHT.replace(
            "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n",
            "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n\tprio:5 dscp:47,46,45,44,43,42,41,40,\n",
        );
        assert!(proof(&host).findings.is_empty(), "DSCP 26 rides priority 3");
        let p = proof_with(&host, "", "[roce]\ndscp = 46\n");
        assert_eq!(p.findings.len(), 1, "{:?}", p.findings);
        assert!(p.findings[0].problem.contains("DSCP 46 maps to priority 5"));
        assert_eq!(p.findings[0].fix, "mlnx_qos -i ens224 --dscp2prio set,46,3");
    }
}
