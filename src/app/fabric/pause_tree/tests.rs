//! The tree on hand-built graphs: one row a case, each a fabric, rates, and what must come out.

use super::text::{across_switches, lines, phrase};
use super::*;
use crate::app::fabric::{Link, Via};
use crate::config::{Link as CfgLink, SwitchPort};

fn sp(s: &str) -> SwitchPort {
    let (switch, port) = s.split_once(':').expect("switch:port");
    SwitchPort {
        switch: switch.into(),
        port: port.into(),
    }
}

/// `switches`: "leaf1:U1 spine1:D1" pairs; `hosts`: "gpu1:ens1 leaf1:E1" pairs.
fn fabric(switches: &[&str], hosts: &[&str]) -> Fabric {
    let cfg: Vec<CfgLink> = (switches.iter())
        .map(|l| {
            let (a, b) = l.split_once(' ').expect("two ends");
            CfgLink { a: sp(a), b: sp(b) }
        })
        .collect();
    let hosts: Vec<Link> = (hosts.iter())
        .map(|l| {
            let (h, s) = l.split_once(' ').expect("two ends");
            let (node, netdev) = h.split_once(':').expect("node:netdev");
            let s = sp(s);
            Link {
                a: End::new(Device::host(node), netdev),
                b: End::new(Device::switch(&s.switch), &s.port),
                via: Via::Pairing,
            }
        })
        .collect();
    Fabric::build(&cfg, Vec::new(), hosts)
}

/// "leaf1:E1 rx=0 tx=500 load=3" per port.
fn ports(spec: &[&str]) -> HashMap<PortKey, PortPause> {
    let mut out = HashMap::new();
    for s in spec {
        let mut w = s.split_whitespace();
        let k = sp(w.next().expect("port"));
        let mut p = PortPause::default();
        for kv in w {
            let (k, v) = kv.split_once('=').expect("k=v");
            let v: f64 = v.parse().expect("number");
            match k {
                "rx" => p.rx = Some(v),
                "tx" => p.tx = Some(v),
                "load" => p.load = Some(v),
                _ => panic!("{k}"),
            }
        }
        out.insert(PortKey::new(&k.switch, &k.port), p);
    }
    out
}

/// A host's pause shares by node ("gpu1"), or by NIC ("gpu1:ens2").
fn hosts(
    spec: &[(&str, Option<f64>, Option<f64>)],
) -> (HashMap<String, HostPause>, HashMap<NicKey, HostPause>) {
    let (mut by_node, mut by_nic) = (HashMap::new(), HashMap::new());
    for (h, rx, tx) in spec {
        let p = HostPause { rx: *rx, tx: *tx };
        match h.split_once(':') {
            Some((node, netdev)) => {
                let k = NicKey {
                    node: node.into(),
                    netdev: netdev.into(),
                };
                by_nic.insert(k, p);
            }
            None => {
                by_node.insert(h.to_string(), p);
            }
        }
    }
    (by_node, by_nic)
}

struct Case {
    name: &'static str,
    switches: &'static [&'static str],
    hosts: &'static [&'static str],
    ports: &'static [&'static str],
    nics: &'static [(&'static str, Option<f64>, Option<f64>)],
    /// (root's words, cause)
    roots: &'static [(&'static str, Cause)],
    paused: &'static [&'static str],
    deadlocks: &'static [&'static [&'static str]],
    phrase: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "chain: incast at leaf2 pauses spine1, which pauses leaf1 and its sender",
        switches: &["leaf1:U1 spine1:D1", "leaf2:U1 spine1:D2"],
        hosts: &["gpu1:ens1 leaf1:E1", "gpu17:ens1 leaf2:E7"],
        ports: &[
            "leaf1:E1 rx=0 tx=300",
            "leaf1:U1 rx=800 tx=0",
            "spine1:D1 rx=0 tx=800",
            "spine1:D2 rx=1200 tx=0",
            "leaf2:U1 rx=0 tx=1200",
            "leaf2:E7 rx=0 tx=0 load=40",
        ],
        nics: &[],
        roots: &[("leaf2 E7 -> gpu17 ens1 (incast)", Cause::Incast)],
        paused: &["gpu1"],
        deadlocks: &[],
        phrase: Some(
            "PFC root leaf2 E7 -> gpu17 ens1 (incast) · spread leaf2 -> spine1 -> leaf1 · 1 node paused",
        ),
    },
    Case {
        name: "fan-in: spine1's egress to leaf3 pauses both other leaves",
        switches: &[
            "leaf1:U1 spine1:D1",
            "leaf2:U1 spine1:D2",
            "leaf3:U1 spine1:D3",
        ],
        hosts: &[
            "gpu1:ens1 leaf1:E1",
            "gpu2:ens1 leaf2:E1",
            "gpu3:ens1 leaf3:E1",
        ],
        ports: &[
            "leaf1:E1 rx=0 tx=100",
            "leaf2:E1 rx=0 tx=120",
            "spine1:D1 rx=0 tx=400",
            "spine1:D2 rx=0 tx=500",
            "spine1:D3 rx=0 tx=0 load=90",
            "leaf3:U1 rx=0 tx=0",
        ],
        nics: &[],
        roots: &[(
            "spine1 D3 -> leaf3 U1 (ECMP collision)",
            Cause::EcmpCollision,
        )],
        paused: &["gpu1", "gpu2"],
        deadlocks: &[],
        phrase: Some(
            "PFC root spine1 D3 -> leaf3 U1 (ECMP collision) · spread spine1 -> leaf1, leaf2 · 2 nodes paused",
        ),
    },
    Case {
        name: "two roots: an incast on leaf1 and a NIC storm on leaf2",
        switches: &[],
        hosts: &[
            "gpu1:ens1 leaf1:E1",
            "gpu7:ens1 leaf1:E7",
            "gpu9:ens1 leaf2:E1",
            "gpu10:ens1 leaf2:E2",
        ],
        ports: &[
            "leaf1:E1 rx=0 tx=300",
            "leaf1:E7 rx=0 tx=0 load=10",
            "leaf2:E1 rx=2000 tx=0",
            "leaf2:E2 rx=0 tx=150",
        ],
        nics: &[("gpu9", Some(0.0), Some(0.95))],
        roots: &[
            ("leaf1 E7 -> gpu7 ens1 (incast)", Cause::Incast),
            ("gpu9 ens1 -> leaf2 E1 (NIC pause storm)", Cause::PauseStorm),
        ],
        paused: &["gpu1", "gpu10"],
        deadlocks: &[],
        phrase: Some("PFC root leaf1 E7 -> gpu7 ens1 (incast) (+1 more root) · 2 nodes paused"),
    },
    Case {
        name: "a slow receiver: a host pausing its switch part of the time",
        switches: &[],
        hosts: &["gpu9:ens1 leaf2:E1", "gpu10:ens1 leaf2:E2"],
        ports: &["leaf2:E1 rx=300 tx=0", "leaf2:E2 rx=0 tx=150"],
        nics: &[("gpu9", Some(0.0), Some(0.3))],
        roots: &[("gpu9 ens1 -> leaf2 E1 (slow receiver)", Cause::SlowReceiver)],
        paused: &["gpu10"],
        deadlocks: &[],
        phrase: None,
    },
    Case {
        name: "cycle: four switches pausing each other round is a deadlock",
        switches: &[
            "leaf1:U1 spine1:D1",
            "spine1:D2 leaf2:U1",
            "leaf2:U2 spine2:D2",
            "spine2:D1 leaf1:U2",
        ],
        hosts: &["gpu1:ens1 leaf1:E1"],
        ports: &[
            "leaf1:U1 rx=0 tx=500",
            "spine1:D2 rx=0 tx=500",
            "leaf2:U2 rx=0 tx=500",
            "spine2:D1 rx=0 tx=500",
            "leaf1:E1 rx=0 tx=100",
        ],
        nics: &[],
        roots: &[],
        paused: &["gpu1"],
        deadlocks: &[&["leaf1", "spine1", "leaf2", "spine2"]],
        phrase: Some("PFC deadlock leaf1 -> spine1 -> leaf2 -> spine2 -> leaf1 · 1 node paused"),
    },
    Case {
        name: "a link missing from LLDP: the walk ends at the port, beyond it unknown",
        switches: &[],
        hosts: &["gpu1:ens1 leaf1:E1"],
        ports: &["leaf1:E1 rx=0 tx=300", "leaf1:Ethernet1/49 rx=700 tx=0"],
        nics: &[],
        roots: &[("leaf1 Ethernet1/49 (neighbour not in LLDP)", Cause::NoLink)],
        paused: &["gpu1"],
        deadlocks: &[],
        phrase: Some(
            "PFC from unknown at leaf1 Ethernet1/49 (neighbour not in LLDP) · 1 node paused",
        ),
    },
    Case {
        name: "a link without pause counters: unknown, never not paused",
        switches: &["leaf1:U1 spine1:D1"],
        hosts: &["gpu1:ens1 leaf1:E1"],
        ports: &["leaf1:E1 rx=0 tx=300"],
        nics: &[],
        roots: &[(
            "leaf1 U1 -> spine1 D1 (no pause counters)",
            Cause::NoCounters,
        )],
        paused: &["gpu1"],
        deadlocks: &[],
        phrase: Some(
            "PFC from unknown at leaf1 U1 -> spine1 D1 (no pause counters) · 1 node paused",
        ),
    },
    Case {
        name: "the lab: one leaf, its internal ports storm, drops at an edge port",
        switches: &[],
        hosts: &["n1:ens224 NX:Ethernet1/1/1", "n6:ens192 NX:Ethernet1/1/2"],
        ports: &[
            "NX:Ethernet1/1/1 rx=0 tx=950",
            "NX:Ethernet1/1/2 rx=0 tx=0 load=6",
            "NX:ii1/1/1 rx=2500 tx=900",
            "NX:ii1/1/2 rx=2400 tx=880",
        ],
        nics: &[("n1", Some(0.2), Some(0.0))],
        roots: &[("NX Ethernet1/1/2 -> n6 ens192 (incast)", Cause::Incast)],
        paused: &["n1"],
        deadlocks: &[],
        phrase: Some("PFC root NX Ethernet1/1/2 -> n6 ens192 (incast) · 1 node paused"),
    },
    Case {
        name: "two rails: a node paused on one NIC is paused by that NIC's switch alone",
        switches: &[],
        hosts: &[
            "gpu1:ens1 leaf1:E1",
            "gpu1:ens2 leaf2:E1",
            "gpu2:ens1 leaf1:E2",
        ],
        ports: &[
            "leaf1:E1 rx=0 tx=300",
            "leaf1:E2 rx=0 tx=0 load=40",
            "leaf2:E1 rx=0 tx=0",
        ],
        nics: &[
            ("gpu1", Some(0.2), Some(0.0)),
            ("gpu1:ens1", Some(0.2), Some(0.0)),
            ("gpu1:ens2", Some(0.0), Some(0.0)),
        ],
        roots: &[("leaf1 E2 -> gpu2 ens1 (incast)", Cause::Incast)],
        paused: &["gpu1"],
        deadlocks: &[],
        phrase: None,
    },
    Case {
        name: "no drops or marks counted: the one cabled port the root spares is its egress",
        switches: &[],
        hosts: &[
            "gpu1:ens1 leaf1:E1",
            "gpu2:ens1 leaf1:E2",
            "gpu3:ens1 leaf1:E3",
        ],
        ports: &[
            "leaf1:E1 rx=0 tx=300",
            "leaf1:E2 rx=0 tx=280",
            "leaf1:E3 rx=0 tx=0",
            "leaf1:E9 rx=0 tx=0",
        ],
        nics: &[],
        roots: &[("leaf1 E3 -> gpu3 ens1 (incast)", Cause::Incast)],
        paused: &["gpu1", "gpu2"],
        deadlocks: &[],
        phrase: None,
    },
    Case {
        name: "no drops or marks counted, the senders all on the root's leaf: its uplinks pause \
               nothing, and the one host port spared is the egress",
        switches: &["leaf1:U1 spine1:D1", "leaf1:U2 spine2:D1"],
        hosts: &[
            "gpu1:ens1 leaf1:E1",
            "gpu2:ens1 leaf1:E2",
            "gpu3:ens1 leaf1:E3",
        ],
        ports: &[
            "leaf1:E1 rx=0 tx=300",
            "leaf1:E2 rx=0 tx=280",
            "leaf1:E3 rx=0 tx=0",
            "leaf1:U1 rx=0 tx=0",
            "leaf1:U2 rx=0 tx=0",
            "spine1:D1 rx=0 tx=0",
            "spine2:D1 rx=0 tx=0",
        ],
        nics: &[],
        roots: &[("leaf1 E3 -> gpu3 ens1 (incast)", Cause::Incast)],
        paused: &["gpu1", "gpu2"],
        deadlocks: &[],
        phrase: None,
    },
    Case {
        name: "no drops or marks counted, an uplink pausing too and two ports spared: not known",
        switches: &["leaf1:U1 spine1:D1", "leaf1:U2 spine2:D1"],
        hosts: &[
            "gpu1:ens1 leaf1:E1",
            "gpu2:ens1 leaf1:E2",
            "gpu3:ens1 leaf1:E3",
        ],
        ports: &[
            "leaf1:E1 rx=0 tx=300",
            "leaf1:E2 rx=0 tx=280",
            "leaf1:E3 rx=0 tx=0",
            "leaf1:U1 rx=0 tx=250",
            "leaf1:U2 rx=0 tx=0",
            "spine1:D1 rx=250 tx=0",
            "spine2:D1 rx=0 tx=0",
        ],
        nics: &[],
        roots: &[("leaf1 (congested egress not known)", Cause::EgressUnknown)],
        paused: &["gpu1", "gpu2"],
        deadlocks: &[],
        phrase: None,
    },
    Case {
        name: "no drops or marks counted, two cabled ports spared: the egress is not known",
        switches: &[],
        hosts: &[
            "gpu1:ens1 leaf1:E1",
            "gpu2:ens1 leaf1:E2",
            "gpu3:ens1 leaf1:E3",
            "gpu4:ens1 leaf1:E4",
        ],
        ports: &[
            "leaf1:E1 rx=0 tx=300",
            "leaf1:E2 rx=0 tx=280",
            "leaf1:E3 rx=0 tx=0",
            "leaf1:E4 rx=0 tx=0",
        ],
        nics: &[],
        roots: &[("leaf1 (congested egress not known)", Cause::EgressUnknown)],
        paused: &["gpu1", "gpu2"],
        deadlocks: &[],
        phrase: None,
    },
];

#[test]
fn the_tree_on_hand_built_graphs() {
    for c in CASES {
        let f = fabric(c.switches, c.hosts);
        let (p, (h, n)) = (ports(c.ports), hosts(c.nics));
        let t = PauseTree::of(&Input {
            fabric: &f,
            ports: &p,
            hosts: &h,
            nics: &n,
        });
        let roots: Vec<(String, Cause)> = (t.roots.iter())
            .map(|r| (text::root_words(r), r.cause))
            .collect();
        let want: Vec<(String, Cause)> =
            (c.roots.iter()).map(|(w, k)| (w.to_string(), *k)).collect();
        assert_eq!(roots, want, "{}: {t:#?}", c.name);
        assert_eq!(t.paused_hosts, c.paused, "{}", c.name);
        let dl: Vec<Vec<&str>> = t
            .deadlocks
            .iter()
            .map(|d| d.iter().map(String::as_str).collect())
            .collect();
        let want_dl: Vec<Vec<&str>> = c.deadlocks.iter().map(|d| d.to_vec()).collect();
        assert_eq!(dl, want_dl, "{}", c.name);
        if let Some(want) = c.phrase {
            assert_eq!(phrase(&t).as_deref(), Some(want), "{}", c.name);
            // An episode names the tree only where one switch does not tell it all.
            let crosses = want.contains(" · spread ") || want.starts_with("PFC deadlock");
            assert_eq!(across_switches(&t).is_some(), crosses, "{}", c.name);
        }
    }
}

#[test]
fn a_port_without_counters_is_said_unknown_in_the_view() {
    let f = fabric(&["leaf1:U1 spine1:D1"], &["gpu1:ens1 leaf1:E1"]);
    let p = ports(&["leaf1:E1 rx=0 tx=300"]);
    let t = PauseTree::of(&Input {
        fabric: &f,
        ports: &p,
        hosts: &HashMap::new(),
        nics: &HashMap::new(),
    });
    let text: Vec<String> = lines(&t).into_iter().map(|l| l.text).collect();
    assert!(
        text.iter()
            .any(|l| l == "unknown: whether spine1 D1 pauses leaf1 U1 (no pause counters)"),
        "{text:#?}"
    );
    assert!(!text.iter().any(|l| l.contains("not paused")), "{text:#?}");
}

#[test]
fn the_view_is_one_line_a_hop_with_rates() {
    let c = &CASES[0];
    let f = fabric(c.switches, c.hosts);
    let p = ports(c.ports);
    let t = PauseTree::of(&Input {
        fabric: &f,
        ports: &p,
        hosts: &HashMap::new(),
        nics: &HashMap::new(),
    });
    let got: Vec<(usize, String)> = lines(&t).into_iter().map(|l| (l.depth, l.text)).collect();
    assert_eq!(
        got,
        vec![
            (
                0,
                "root leaf2 E7 -> gpu17 ens1 (incast) · 1 node paused".to_string()
            ),
            (1, "leaf2 U1 pauses spine1 D2  1.2k/s".to_string()),
            (2, "spine1 D1 pauses leaf1 U1  800/s".to_string()),
            (3, "leaf1 E1 pauses gpu1 ens1  300/s".to_string()),
        ]
    );
}

#[test]
fn control_bytes_in_names_never_reach_the_text() {
    let f = fabric(&[], &["gpu\u{1b}[2J1:ens1 leaf1:E1"]);
    let p = ports(&["leaf1:E1 rx=0 tx=300", "leaf1:E9 rx=0 tx=0 load=5"]);
    let t = PauseTree::of(&Input {
        fabric: &f,
        ports: &p,
        hosts: &HashMap::new(),
        nics: &HashMap::new(),
    });
    for l in lines(&t) {
        assert!(!l.text.contains('\u{1b}'), "{l:?}");
    }
    assert!(!phrase(&t).unwrap_or_default().contains('\u{1b}'));
}
