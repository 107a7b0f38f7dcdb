//! The switch side of the lossless proof, from its QoS configuration (SONiC CONFIG_DB, NX-OS
//! `show running-config ipqos`): the paired port classifies by DSCP, its DSCP map puts the RoCE
//! DSCP on the no-drop priority, and the no-drop queue marks ECN. A port's own setting wins over
//! the switch-wide one (`port="all"`: NX-OS `system qos`, SONiC's global map). What was not read
//! is collected for one note per fact, never passed.

use super::pairing::Pair;
use super::proof::{Finding, Proof, Side};
use crate::config::{Config, SwitchOs};
use crate::metrics::names::*;
use crate::metrics::query::ByOwner;

/// Ports (`leaf Ethernet1/1/1`) where a switch fact could not be read.
#[derive(Default)]
pub struct Unread {
    pub dscp: Vec<String>,
    pub ecn: Vec<String>,
}

impl Unread {
    /// The notes for `proof`: which facts were not proven, on which ports.
    pub fn notes(self) -> Vec<String> {
        let mut v = Vec::new();
        if !self.dscp.is_empty() {
            v.push(format!(
                "switch DSCP classification not proven on {} (not read: NX-OS `show running-config ipqos`, SONiC CONFIG_DB, EOS `show running-config`; or an EOS policy-map classifies the port)",
                crate::app::ports::compress(&self.dscp)
            ));
        }
        if !self.ecn.is_empty() {
            v.push(format!(
                "ECN marking on the switch's no-drop queue not proven on {} (no queuing policy or QUEUE/WRED_PROFILE read for it)",
                crate::app::ports::compress(&self.ecn)
            ));
        }
        v
    }
}

/// A gauge of the port, else of the switch as a whole (`port="all"`).
fn at_port(store: &ByOwner, name: &str, p: &Pair, extra: &[(&str, &str)]) -> Option<f64> {
    [p.port.as_str(), "all"].into_iter().find_map(|port| {
        let mut l = vec![("switch", p.switch.as_str()), ("port", port)];
        l.extend_from_slice(extra);
        store.latest(name, &l).map(|(_, v)| v.as_f64())
    })
}

/// The DSCP map (NX-OS qos policy, SONiC DSCP_TO_TC_MAP) the port classifies by.
fn map_of(store: &ByOwner, p: &Pair) -> Option<String> {
    [p.port.as_str(), "all"].into_iter().find_map(|port| {
        store
            .select(
                SW_QOS_DSCP_MAP,
                &[("switch", p.switch.as_str()), ("port", port)],
            )
            .find(|(_, s)| {
                s.latest(store.store())
                    .is_some_and(|(_, v)| v.as_f64() > 0.5)
            })
            .and_then(|(_, s)| s.key.label("map").map(str::to_string))
    })
}

fn os(cfg: &Config, switch: &str) -> SwitchOs {
    cfg.switches
        .iter()
        .find(|s| s.name == switch)
        .map_or(SwitchOs::Nxos, |s| s.os)
}

/// Check the switch side of pair `p` whose no-drop priority is `prio`.
pub fn check(
    cfg: &Config,
    store: &ByOwner,
    prio: u8,
    p: &Pair,
    link: &str,
    proof: &mut Proof,
    unread: &mut Unread,
) {
    let dscp = cfg.roce.dscp;
    let os = os(cfg, &p.switch);
    let port = p.port.as_str();
    let here = format!("{} {}", p.switch, p.port);
    let mut find = |problem: String, fix: String| {
        proof.findings.push(Finding {
            side: Side::Switch,
            pair: p.clone(),
            link: link.to_string(),
            problem,
            fix,
        })
    };
    let map = map_of(store, p);
    let policy = map.clone().unwrap_or_else(|| "ROCE_IN".into());
    match at_port(store, SW_QOS_TRUST_DSCP, p, &[]) {
        Some(t) if t < 0.5 => find(
            format!(
                "the switch port does not classify by DSCP{} (RoCE is marked DSCP {dscp})",
                map.as_ref()
                    .map(|m| format!(" (its policy {m} matches CoS)"))
                    .unwrap_or_default()
            ),
            match os {
                SwitchOs::Nxos => format!(
                    "class-map type qos match-all ROCE ; match dscp {dscp} ; policy-map type qos {policy} ; class ROCE ; set qos-group {prio} ; interface {port} ; service-policy type qos input {policy}"
                ),
                SwitchOs::Sonic => format!(
                    "sonic-db-cli CONFIG_DB hset 'PORT_QOS_MAP|{port}' dscp_to_tc_map AZURE"
                ),
                SwitchOs::Eos => format!("interface {port} ; qos trust dscp"),
            },
        ),
        Some(_) => {
            let d = dscp.to_string();
            let got = map.as_ref().and_then(|m| {
                store
                    .latest(
                        SW_QOS_DSCP_PRIORITY,
                        &[("switch", p.switch.as_str()), ("map", m), ("dscp", &d)],
                    )
                    .map(|(_, v)| v.as_f64())
            });
            match (got, &map) {
                (Some(m), Some(name)) if (m - f64::from(prio)).abs() > 0.5 => find(
                    format!(
                        "the switch maps DSCP {dscp} to priority {m} ({name}), the no-drop priority is {prio}"
                    ),
                    match os {
                        SwitchOs::Nxos => format!(
                            "class-map type qos match-all ROCE ; match dscp {dscp} ; policy-map type qos {name} ; class ROCE ; set qos-group {prio}"
                        ),
                        SwitchOs::Sonic => format!(
                            "sonic-db-cli CONFIG_DB hset 'DSCP_TO_TC_MAP|{name}' {dscp} {prio}"
                        ),
                        SwitchOs::Eos => {
                            format!("qos map dscp {dscp} to traffic-class {prio}")
                        }
                    },
                ),
                (Some(_), _) => {}
                (None, _) => unread.dscp.push(here.clone()),
            }
        }
        None => unread.dscp.push(here.clone()),
    }
    let pr = prio.to_string();
    match at_port(store, SW_QOS_ECN_ENABLED, p, &[("priority", &pr)]) {
        Some(e) if e < 0.5 => find(
            format!(
                "the switch's no-drop queue {prio} does not mark ECN (it drops instead: DCQCN never slows the senders, PFC does all the work)"
            ),
            match os {
                SwitchOs::Nxos => format!(
                    "policy-map type queuing <output policy> ; class type queuing c-out-8q-q{prio} ; random-detect minimum-threshold <min> kbytes maximum-threshold <max> kbytes drop-probability <p> weight 0 ecn"
                ),
                SwitchOs::Sonic => format!(
                    "sonic-db-cli CONFIG_DB hset 'QUEUE|{port}|{prio}' wred_profile AZURE_LOSSLESS (a WRED_PROFILE with ecn ecn_all)"
                ),
                SwitchOs::Eos => format!(
                    "interface {port} ; tx-queue {prio} ; random-detect ecn minimum-threshold <min> kbytes maximum-threshold <max> kbytes"
                ),
            },
        ),
        Some(_) => {}
        None => unread.ecn.push(here),
    }
}

#[cfg(test)]
mod tests {
    use crate::app::lossless::{Side, prove};
    use crate::config::Config;
    use crate::metrics::Store;
    use crate::parse::{Ctx, ParseKind, parse};

    const HOST: &str = "mlnx_qos -i ens224\nPriority trust state: dscp\ndscp2prio mapping:\n\tprio:3 dscp:31,30,29,28,27,26,25,24,\nPFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0   0   0   1   0   0   0   0\n/sys/class/net/ens224/ecn/roce_np/enable/3:1\n/sys/class/net/ens224/ecn/roce_rp/enable/3:1\n";

    /// A SONiC leaf whose CONFIG_DB is `db`, with n1's ens224 on Ethernet0.
    fn proof(db: &str) -> crate::app::lossless::Proof {
        proof_on("sonic", ParseKind::SonicQos, db)
    }

    /// A leaf of `os` whose QoS read (`kind`) answered `out`, with n1's ens224 on Ethernet0.
    fn proof_on(os: &str, kind: ParseKind, out: &str) -> crate::app::lossless::Proof {
        let cfg = Config::from_str(
            &format!("[[switch]]\nname = \"leaf\"\nhost = \"127.0.0.1\"\nos = \"{os}\"\nports = [\"Ethernet0\"]\n[[node]]\nname = \"n1\"\nhost = \"127.0.0.1\"\nnetdevs = [\"ens224\"]\nswitch_port = \"Ethernet0\"\n"),
            "t.toml",
            None,
        )
        .expect("config");
        let mut store = Store::new(600_000, 16);
        let sw = store.add_source("leaf topology", 1000);
        store.ingest(sw, 1, &parse(kind, out, &Ctx::named("leaf")));
        let n = store.add_source("n1 topology", 1000);
        store.ingest(n, 1, &parse(ParseKind::HostQos, HOST, &Ctx::named("n1")));
        prove(&cfg, &store)
    }

    const RIGHT: &str = r#"{"PORT_QOS_MAP": {"Ethernet0": {"dscp_to_tc_map": "AZURE", "pfc_enable": "3"}},
        "DSCP_TO_TC_MAP": {"AZURE": {"26": "3", "46": "5"}},
        "QUEUE": {"Ethernet0|3": {"wred_profile": "AZURE_LOSSLESS"}},
        "WRED_PROFILE": {"AZURE_LOSSLESS": {"ecn": "ecn_all", "green_min_threshold": "1048576"}}}"#;

    #[test]
    fn a_consistent_sonic_port_passes_and_says_nothing_unread() {
        let p = proof(RIGHT);
        assert!(p.findings.is_empty(), "{:?}", p.findings);
        assert!(
            !p.notes
                .iter()
                .any(|n| n.contains("DSCP classification") || n.contains("ECN marking")),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn each_wrong_switch_setting_is_named_on_the_switch_side_with_its_fix() {
        let cases = [
            (
                r#""26": "3""#,
                r#""26": "1""#,
                "the switch maps DSCP 26 to priority 1 (AZURE), the no-drop priority is 3",
                "sonic-db-cli CONFIG_DB hset 'DSCP_TO_TC_MAP|AZURE' 26 3",
            ),
            (
                r#""dscp_to_tc_map": "AZURE", "#,
                "",
                "does not classify by DSCP",
                "sonic-db-cli CONFIG_DB hset 'PORT_QOS_MAP|Ethernet0' dscp_to_tc_map AZURE",
            ),
            (
                r#""ecn": "ecn_all""#,
                r#""ecn": "ecn_none""#,
                "no-drop queue 3 does not mark ECN",
                "hset 'QUEUE|Ethernet0|3' wred_profile",
            ),
        ];
        for (from, to, problem, fix) in cases {
            let p = proof(&RIGHT.replace(from, to));
            assert_eq!(p.findings.len(), 1, "{to}: {:?}", p.findings);
            let f = &p.findings[0];
            assert_eq!(f.side, Side::Switch);
            assert!(f.problem.contains(problem), "{:?}", f);
            assert!(f.fix.contains(fix), "{:?}", f);
        }
        // SONiC's PFC priorities come from the same CONFIG_DB: the host is told to follow them.
        let p = proof(&RIGHT.replace(r#""pfc_enable": "3""#, r#""pfc_enable": "4""#));
        assert!(
            p.findings
                .iter()
                .any(|f| f.side == Side::Host && f.fix.contains("--pfc 0,0,0,0,1,0,0,0")),
            "{:?}",
            p.findings
        );
    }

    /// EOS from its running config: a routed port with the RoCE profile passes; the DSCP moved to
    /// another traffic class, or a switched port (CoS trust by default), is the switch's to fix.
    #[test]
    fn eos_running_config_is_proven_too() {
        const EOS: &str = "qos map dscp 26 to traffic-class 3\n!\nqos profile ROCE\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n   !\n   uc-tx-queue 3\n      random-detect ecn minimum-threshold 256 kbytes maximum-threshold 512 kbytes\n!\ninterface Ethernet0\n   no switchport\n   service-profile ROCE\n";
        let ok = proof_on("eos", ParseKind::EosQos, EOS);
        assert!(ok.findings.is_empty(), "{:?}", ok.findings);
        let moved = proof_on(
            "eos",
            ParseKind::EosQos,
            &EOS.replace("traffic-class 3", "traffic-class 4"),
        );
        assert_eq!(moved.findings.len(), 1, "{:?}", moved.findings);
        assert_eq!(moved.findings[0].side, Side::Switch);
        assert_eq!(moved.findings[0].fix, "qos map dscp 26 to traffic-class 3");
        let switched = proof_on(
            "eos",
            ParseKind::EosQos,
            &EOS.replace("no switchport", "switchport"),
        );
        assert_eq!(switched.findings.len(), 1, "{:?}", switched.findings);
        assert_eq!(
            switched.findings[0].fix,
            "interface Ethernet0 ; qos trust dscp"
        );
    }

    #[test]
    fn no_switch_qos_read_is_a_note_per_fact() {
        let p = proof("{\"PORT_QOS_MAP\": {\"Ethernet0\": {\"pfc_enable\": \"3\"}}}");
        // No DSCP map anywhere: the port does not classify by DSCP (a finding, not a note).
        assert_eq!(p.findings.len(), 1, "{:?}", p.findings);
        assert!(
            p.notes.iter().any(|n| n.contains(
                "ECN marking on the switch's no-drop queue not proven on leaf Ethernet0"
            )),
            "{:?}",
            p.notes
        );
    }
}
