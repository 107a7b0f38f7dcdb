//! Topology in the live App: the demo lab with its rare topology reads fed through the
//! live path (`support/feed.rs`), then one host's or switch's answer changed. What LLDP pairs
//! reaches the Queues and PFC tabs, the config's `switch_port` still wins, and a lossless-path
//! mismatch is marked on the PFC rows it bites, with the finding and its fix in the detail view.

use crate::feed;

use crossterm::event::KeyCode;
use feed::Lab;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rocetop::app::Tab;
use rocetop::app::table::{RowId, Tone, Val};
use rocetop::config::{Config, REFERENCE};
use rocetop::parse::ParseKind;

const LEAF: &str = "NX_AI_Leaf1";

/// The reference lab with ubunturdma6's `switch_port` line removed: only LLDP can place it.
fn lab_without_node6_port() -> Lab {
    let text = REFERENCE.replacen("switch_port = \"Ethernet1/1/2\"\n", "", 1);
    assert_ne!(text, REFERENCE, "the reference names node 6's port");
    let cfg = Config::from_str(&text, "test.toml", None).expect("config");
    Lab::with(cfg)
}

/// `lldpctl -f keyvalue` of a host whose `netdev` sees `port` of the leaf (by its FQDN and
/// short port name, as lldpd reports a Nexus).
fn lldpctl(netdev: &str, port: &str) -> String {
    format!(
        "lldp.{netdev}.via=LLDP\nlldp.{netdev}.chassis.name={LEAF}.lab.local\nlldp.{netdev}.port.ifname={port}\nlldp.{netdev}.port.descr=to gpu\n"
    )
}

/// The row of `tab` that stands for `id`.
fn row(lab: &Lab, tab: Tab, id: &RowId) -> rocetop::app::table::Row {
    let v = lab.app.table(tab);
    v.rows
        .iter()
        .chain(v.extra.iter())
        .find(|r| r.id == *id)
        .cloned()
        .unwrap_or_else(|| panic!("no row {id:?} on {tab:?}"))
}

fn port(p: &str) -> RowId {
    RowId::Port {
        switch: LEAF.into(),
        port: p.into(),
    }
}

#[test]
fn lldp_places_a_node_without_switch_port_on_the_queues_and_pfc_tabs() {
    let mut lab = lab_without_node6_port();
    lab.run(3);
    assert!(
        lab.app.links().behind(LEAF, "Ethernet1/1/2").is_empty(),
        "nothing tells where node 6 is yet: {:?}",
        lab.app.links().pairs
    );
    assert!(
        !row(&lab, Tab::Pfc, &port("Ethernet1/1/2"))
            .name
            .contains("ubunturdma6")
    );
    // The Overview's port column is made (and kept) before LLDP tells anything.
    let o = row(&lab, Tab::Overview, &RowId::Node("ubunturdma6".into()));
    assert_eq!(o.cells[2].val, Val::Text("-".into()), "{o:?}");
    lab.answer(
        "ubunturdma6 topology",
        &[(ParseKind::Lldpctl, lldpctl("ens192", "Eth1/1/2"))],
    );
    assert_eq!(
        lab.app.links().behind(LEAF, "Ethernet1/1/2"),
        ["ubunturdma6"],
        "{:?}",
        lab.app.links().pairs
    );
    // On another leaf the same port name is another port.
    assert!(lab.app.links().behind("leaf2", "Ethernet1/1/2").is_empty());
    let pfc = row(&lab, Tab::Pfc, &port("Ethernet1/1/2"));
    assert!(pfc.name.contains("ubunturdma6"), "{}", pfc.name);
    let queues = lab.app.table(Tab::Queues);
    let q = queues
        .rows
        .iter()
        .find(|r| matches!(&r.id, RowId::Queue { port, .. } if port == "Ethernet1/1/2"))
        .expect("a queue row of Ethernet1/1/2");
    assert!(q.name.contains("ubunturdma6"), "{}", q.name);
    // The Overview's port column names it too (the config names none).
    let o = row(&lab, Tab::Overview, &RowId::Node("ubunturdma6".into()));
    assert_eq!(o.cells[2].val, Val::Text("Eth1/1/2".into()), "{o:?}");
}

#[test]
fn the_config_port_wins_and_the_disagreement_is_marked_on_the_pfc_tab() {
    let mut lab = Lab::new();
    lab.run(3);
    assert!(
        lab.app.lossless().findings.is_empty(),
        "the demo lab is consistent: {:?}",
        lab.app.lossless().findings
    );
    assert!(
        !lab.app.lossless().pairs.is_empty(),
        "the demo's topology reads were proven"
    );
    // Node 6 is configured on Ethernet1/1/2, but was recabled to Ethernet1/1/3: its lldpd and
    // the leaf's LLDP table both say so now.
    lab.answer(
        "ubunturdma6 topology",
        &[(ParseKind::Lldpctl, lldpctl("ens192", "Eth1/1/3"))],
    );
    let table = rocetop::collect::demo::topology::nxos_lldp(&lab.sim, &lab.sim.switches[0]);
    let moved: String = table
        .lines()
        .map(|l| {
            if l.starts_with("ubunturdma6 ") {
                format!("{}\n", l.replace("Eth1/1/2 ", "Eth1/1/3 "))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_ne!(moved, table, "the demo's table lists node 6");
    lab.answer(
        &format!("{LEAF} topology"),
        &[(ParseKind::LldpNeighbors, moved)],
    );
    assert_eq!(
        lab.app.links().behind(LEAF, "Ethernet1/1/2"),
        ["ubunturdma6"]
    );
    assert!(lab.app.links().behind(LEAF, "Ethernet1/1/3").is_empty());
    assert_eq!(lab.app.links().disagreements.len(), 1);
    let r = row(&lab, Tab::Pfc, &port("Ethernet1/1/2"));
    let p3 = &r.cells[8];
    assert_eq!(p3.val, Val::Text("on !".into()), "{r:?}");
    assert_eq!(p3.tone, Some(Tone::Crit));
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("LLDP says") && n.contains("set switch_port = \"Ethernet1/1/3\"")),
        "{:?}",
        r.notes
    );
    // Another port stays unmarked.
    let other = row(&lab, Tab::Pfc, &port("Ethernet1/1/1"));
    assert_eq!(other.cells[8].val, Val::Text("on".into()));
    assert!(other.notes.is_empty());
}

/// ubunturdma1 (ens224, behind Ethernet1/2/2) has PFC on priority 5 instead of 3.
const WRONG_PFC: &str = "mlnx_qos -i ens224\nDCBX mode: OS controlled\nPriority trust state: dscp\ndscp2prio mapping:\n        prio:3 dscp:31,30,29,28,27,26,25,24,\nPFC configuration:\n        priority    0   1   2   3   4   5   6   7\n        enabled     0   0   0   0   0   1   0   0\n/sys/class/net/ens224/mtu:9000\n/sys/class/net/ens224/ecn/roce_np/enable/3:1\n/sys/class/net/ens224/ecn/roce_rp/enable/3:1\nethtool -a ens224\nPause parameters for ens224:\nRX:\t\toff\nTX:\t\toff\n";

fn wrong_host() -> Lab {
    let mut lab = Lab::new();
    lab.run(3);
    lab.answer(
        "ubunturdma1 topology",
        &[(ParseKind::HostQos, WRONG_PFC.to_string())],
    );
    lab.run(2);
    lab
}

#[test]
fn a_host_pfc_mismatch_marks_its_port_and_host_rows_with_the_fix() {
    let lab = wrong_host();
    let f = &lab.app.lossless().findings;
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].fix
            .contains("mlnx_qos -i ens224 --pfc 0,0,0,1,0,0,0,0")
    );
    let sw = row(&lab, Tab::Pfc, &port("Ethernet1/2/2"));
    assert_eq!(sw.cells[8].val, Val::Text("on !".into()));
    assert!(
        sw.notes.iter().any(|n| n.contains("[host side]")),
        "{:?}",
        sw.notes
    );
    let host = row(
        &lab,
        Tab::Pfc,
        &RowId::Netdev {
            node: "ubunturdma1".into(),
            netdev: "ens224".into(),
            priority: "3".into(),
        },
    );
    assert_eq!(host.cells[2].val, Val::Text("3 !".into()));
    assert!(
        host.notes
            .iter()
            .any(|n| n.contains("--pfc 0,0,0,1,0,0,0,0"))
    );
    // ubunturdma3 shares the port but its own settings are right: its rows stay unmarked.
    let peer = row(
        &lab,
        Tab::Pfc,
        &RowId::Netdev {
            node: "ubunturdma3".into(),
            netdev: "ens224".into(),
            priority: "3".into(),
        },
    );
    assert_eq!(peer.cells[2].val, Val::Text("3".into()));
}

#[test]
fn pfc_detail_names_the_mismatch_and_its_fix() {
    let mut lab = wrong_host();
    lab.key(KeyCode::Char(char::from(b'1' + Tab::Pfc.index() as u8)));
    lab.key(KeyCode::Char('/'));
    lab.chars("Ethernet1/2/2");
    lab.key(KeyCode::Enter);
    lab.key(KeyCode::Enter);
    let mut t = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    t.draw(|f| rocetop::ui::draw(f, &lab.app)).expect("draw");
    let b = t.backend().buffer();
    let mut screen = String::new();
    for y in 0..b.area.height {
        let line: String = (0..b.area.width).map(|x| b[(x, y)].symbol()).collect();
        screen.push_str(line.trim_end());
        screen.push('\n');
    }
    insta::assert_snapshot!("pfc_lossless_mismatch_detail", screen);
}

/// The host rows of the PFC tab are selectable (after the port rows, by stable ids): the finding
/// that bites a host shows in that row's own detail view, and the selection stays on the host
/// row across refreshes.
#[test]
fn a_host_row_is_selectable_and_its_detail_names_its_finding() {
    let mut lab = wrong_host();
    lab.key(KeyCode::Char(char::from(b'1' + Tab::Pfc.index() as u8)));
    lab.key(KeyCode::Char('/'));
    lab.chars("ubunturdma1");
    lab.key(KeyCode::Enter);
    let v = lab.app.table(Tab::Pfc);
    assert!(!v.rows.is_empty() && !v.extra.is_empty(), "{v:?}");
    // Down past the port rows lands on the first host row.
    for _ in 0..v.rows.len() {
        lab.key(KeyCode::Down);
    }
    let sel = lab.app.selected_row().expect("a row is selected");
    let host = RowId::Netdev {
        node: "ubunturdma1".into(),
        netdev: "ens224".into(),
        priority: "3".into(),
    };
    assert!(
        matches!(&sel.id, RowId::Netdev { node, .. } if node == "ubunturdma1"),
        "{:?}",
        sel.id
    );
    // Walk to the priority-3 row (the one the finding marks), wherever the sort put it.
    while lab.app.selected_row().map(|r| r.id) != Some(host.clone()) {
        let before = lab.app.selected_row().map(|r| r.id);
        lab.key(KeyCode::Down);
        assert_ne!(
            lab.app.selected_row().map(|r| r.id),
            before,
            "no priority-3 host row"
        );
    }
    lab.run(2);
    assert_eq!(
        lab.app.selected_row().map(|r| r.id),
        Some(host.clone()),
        "the selection stays on its host row across refreshes"
    );
    lab.key(KeyCode::Enter);
    assert!(lab.app.detail());
    let mut t = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
    t.draw(|f| rocetop::ui::draw(f, &lab.app)).expect("draw");
    let b = t.backend().buffer();
    let mut screen = String::new();
    for y in 0..b.area.height {
        let line: String = (0..b.area.width).map(|x| b[(x, y)].symbol()).collect();
        screen.push_str(line.trim_end());
        screen.push('\n');
    }
    assert!(screen.contains("--pfc 0,0,0,1,0,0,0,0"), "{screen}");
    insta::assert_snapshot!("pfc_host_row_detail", screen);
}

/// A switch's PFC settings come with its counter polls, not the topology read: PFC turned off on
/// a port with hosts behind it reaches the proof (and the PFC tab) without a new topology read.
#[test]
fn a_switch_turning_pfc_off_is_proven_wrong_from_its_counter_polls() {
    let mut lab = Lab::new();
    lab.run(3);
    assert!(lab.app.lossless().findings.is_empty());
    let pfc = rocetop::collect::demo::render::nxos_pfc(&lab.sim.switches[0]);
    let off: String = pfc
        .lines()
        .map(|l| {
            if l.starts_with("Ethernet1/2/2 ") {
                format!("{}\n", l.replace("On  (8)   ", "Off       "))
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    assert_ne!(off, pfc, "the demo's table has Ethernet1/2/2 on");
    lab.answer(LEAF, &[(ParseKind::NxosPfc, off)]);
    // The switch answers nothing more; the ticks go on (the demo's next answer would turn it on).
    lab.run_except(40, &[LEAF]);
    let f: Vec<_> = lab
        .app
        .lossless()
        .findings
        .iter()
        .filter(|f| f.pair.port == "Ethernet1/2/2")
        .collect();
    assert!(!f.is_empty(), "{:?}", lab.app.lossless().findings);
    assert!(
        f.iter()
            .all(|f| f.side == rocetop::app::lossless::Side::Switch
                && f.fix.contains("priority-flow-control mode on")),
        "{f:?}"
    );
    let r = row(&lab, Tab::Pfc, &port("Ethernet1/2/2"));
    assert_eq!(r.cells[8].val, Val::Text("off !".into()));
}

/// A link that moves back to a port LLDP named before changes the links with no new series (the
/// layouts' other reason to be made again): the Overview, PFC and Queues rows follow it anyway.
#[test]
fn a_link_change_without_new_series_reaches_every_tab() {
    let mut lab = lab_without_node6_port();
    lab.run(3);
    let node6 = RowId::Node("ubunturdma6".into());
    // A second apart, as topology reads are (minutes, in the live program).
    let answer = |lab: &mut Lab, p: &str| {
        lab.run(1);
        lab.answer(
            "ubunturdma6 topology",
            &[(ParseKind::Lldpctl, lldpctl("ens192", p))],
        )
    };
    answer(&mut lab, "Eth1/1/2");
    // Recabled: the node's newest read names another port (new series).
    answer(&mut lab, "Eth1/1/3");
    assert_eq!(
        lab.app.links().behind(LEAF, "Ethernet1/1/3"),
        ["ubunturdma6"]
    );
    let o = row(&lab, Tab::Overview, &node6);
    assert_eq!(o.cells[2].val, Val::Text("Eth1/1/3".into()), "{o:?}");
    let shape = lab.app.live().shape_generation();
    answer(&mut lab, "Eth1/1/2");
    assert_eq!(
        lab.app.live().shape_generation(),
        shape,
        "the answer back made no new series: this is the links-only path"
    );
    assert_eq!(
        lab.app.links().behind(LEAF, "Ethernet1/1/2"),
        ["ubunturdma6"]
    );
    assert!(lab.app.links().behind(LEAF, "Ethernet1/1/3").is_empty());
    let o = row(&lab, Tab::Overview, &node6);
    assert_eq!(o.cells[2].val, Val::Text("Eth1/1/2".into()), "{o:?}");
    let pfc = |lab: &Lab, p: &str| row(lab, Tab::Pfc, &port(p)).name;
    assert!(pfc(&lab, "Ethernet1/1/2").contains("ubunturdma6"));
    assert!(!pfc(&lab, "Ethernet1/1/3").contains("ubunturdma6"));
    let queues = lab.app.table(Tab::Queues);
    let q = |p: &str| {
        queues
            .rows
            .iter()
            .find(|r| matches!(&r.id, RowId::Queue { port, .. } if port == p))
            .map(|r| r.name.clone())
            .unwrap_or_default()
    };
    assert!(
        q("Ethernet1/1/2").contains("ubunturdma6"),
        "{}",
        q("Ethernet1/1/2")
    );
    assert!(
        !q("Ethernet1/1/3").contains("ubunturdma6"),
        "{}",
        q("Ethernet1/1/3")
    );
}

/// Two leaves of different OS share port names; gpu1 is configured on leaf1's Ethernet1/1/2 but
/// its lldpd sees leaf2's port of that name. The name agrees, the switch does not: a disagreement,
/// marked on leaf1's row with the fix naming leaf2, never on leaf2's; leaf2's node stays leaf2's.
#[test]
fn the_same_port_name_on_the_other_leaf_is_a_disagreement_on_the_pfc_tab() {
    let text = "demo = true\n[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\nports = [\"Ethernet1/1/1-2\"]\n[[switch]]\nname = \"leaf2\"\nhost = \"127.0.0.1\"\nos = \"sonic\"\nports = [\"Ethernet1/1/1-2\"]\n[[node]]\nname = \"gpu1\"\nhost = \"127.0.0.1\"\ndevices = [\"mlx5_0\"]\nnetdevs = [\"ens1f0\"]\nswitch_port = \"leaf1:Ethernet1/1/2\"\n[[node]]\nname = \"gpu5\"\nhost = \"127.0.0.1\"\ndevices = [\"mlx5_0\"]\nnetdevs = [\"ens1f0\"]\nswitch_port = \"leaf2:Ethernet1/1/2\"\n";
    let cfg = Config::from_str(text, "t.toml", None).expect("config");
    let mut lab = Lab::with(cfg);
    lab.run(3);
    assert!(
        lab.app.links().disagreements.is_empty(),
        "the demo cables as configured: {:?}",
        lab.app.links().disagreements
    );
    lab.answer(
        "gpu1 topology",
        &[(
            ParseKind::Lldpctl,
            "lldp.ens1f0.via=LLDP\nlldp.ens1f0.chassis.name=leaf2\nlldp.ens1f0.port.ifname=Ethernet1/1/2\n"
                .to_string(),
        )],
    );
    // leaf1's table no longer lists it: another host is on that port now.
    let leaf1 = lab
        .sim
        .switches
        .iter()
        .find(|s| s.name == "leaf1")
        .expect("leaf1");
    let table = rocetop::collect::demo::topology::nxos_lldp(&lab.sim, leaf1);
    let gone = table.replace("gpu1 ", "gpu9 ");
    assert_ne!(gone, table, "the demo's table lists gpu1");
    lab.answer("leaf1 topology", &[(ParseKind::LldpNeighbors, gone)]);
    assert_eq!(lab.app.links().disagreements.len(), 1);
    assert_eq!(lab.app.links().behind("leaf1", "Ethernet1/1/2"), ["gpu1"]);
    assert_eq!(lab.app.links().behind("leaf2", "Ethernet1/1/2"), ["gpu5"]);
    let at = |switch: &str| RowId::Port {
        switch: switch.into(),
        port: "Ethernet1/1/2".into(),
    };
    let r = row(&lab, Tab::Pfc, &at("leaf1"));
    assert!(
        r.notes.iter().any(|n| n.contains(
            "config says switch_port = \"leaf1:Ethernet1/1/2\", LLDP says ens1f0 ↔ leaf2 Ethernet1/1/2"
        ) && n.contains("set switch_port = \"leaf2:Ethernet1/1/2\"")),
        "{:?}",
        r.notes
    );
    let other = row(&lab, Tab::Pfc, &at("leaf2"));
    assert!(
        !other.notes.iter().any(|n| n.contains("LLDP says")),
        "{:?}",
        other.notes
    );
}

/// A leaf of each OS, simulated in its own formats (LLDP, QoS configuration, MTU, PFC state): the
/// proof pairs every node and finds the lossless path set up right on all three.
#[test]
fn the_demo_proves_a_leaf_of_each_os_lossless() {
    let leaf = |name: &str, os: &str, ports: &str| {
        format!(
            "[[switch]]\nname = \"{name}\"\nhost = \"127.0.0.1\"\nos = \"{os}\"\nports = [{ports}]\n"
        )
    };
    let node = |name: &str, at: &str| {
        format!(
            "[[node]]\nname = \"{name}\"\nhost = \"127.0.0.1\"\ndevices = [\"mlx5_0\"]\nnetdevs = [\"ens1f0\"]\nswitch_port = \"{at}\"\n"
        )
    };
    let text = format!(
        "demo = true\n{}{}{}{}{}{}",
        leaf("nx", "nxos", "\"Ethernet1/1/1-2\", \"ii1/1/1-2\""),
        leaf("sonic", "sonic", "\"Ethernet0-1\""),
        leaf("eos", "eos", "\"Ethernet1-2\""),
        node("a", "Ethernet1/1/1"),
        node("b", "Ethernet0"),
        node("c", "Ethernet2"),
    );
    let cfg = Config::from_str(&text, "t.toml", None).expect("config");
    let mut lab = Lab::with(cfg);
    lab.run(3);
    let proof = &lab.app.lossless();
    assert!(proof.findings.is_empty(), "{:#?}", proof.findings);
    let on: std::collections::BTreeSet<&str> =
        proof.pairs.iter().map(|p| p.switch.as_str()).collect();
    assert_eq!(on.len(), 3, "every leaf proven: {:#?}", proof.pairs);
}

/// The fabric graph follows LLDP: a leaf's table naming a spine adds a switch↔switch link (a
/// neighbour not polled: the lab configures no spine), a later table naming another instead moves it,
/// and each change is said in the status bar.
#[test]
fn the_fabric_follows_the_leafs_lldp_and_says_each_change() {
    let mut lab = Lab::new();
    lab.run(3);
    let before = lab.app.fabric().links.len();
    let table = |rows: &str| {
        format!("Device ID            Local Intf      Hold-time  Capability  Port ID\n{rows}")
    };
    lab.answer(
        "NX_AI_Leaf1 topology",
        &[(
            ParseKind::LldpNeighbors,
            table("spine9               Eth1/2/4        120        BR          Ethernet1/1\n"),
        )],
    );
    assert_eq!(lab.app.fabric().links.len(), before + 1);
    let msg = lab
        .app
        .message()
        .map(|(_, m)| m.clone())
        .unwrap_or_default();
    assert_eq!(msg, "fabric links changed: +1 -0");
    lab.run(1);
    // Recabled: the next table names another neighbour on another port (an answer listing none
    // leaves the last one standing: only a source's newest neighbours count).
    lab.answer(
        "NX_AI_Leaf1 topology",
        &[(
            ParseKind::LldpNeighbors,
            table(
                "spine8               Eth1/2/3        120        BR          Ethernet1/2
",
            ),
        )],
    );
    assert_eq!(lab.app.fabric().links.len(), before + 1);
    assert!(lab.app.fabric().at(LEAF, "Ethernet1/2/4").next().is_none());
    let msg = lab
        .app
        .message()
        .map(|(_, m)| m.clone())
        .unwrap_or_default();
    assert_eq!(msg, "fabric links changed: +1 -1");
}

/// The first graph is made of every topology source's first answer, however they come in: no
/// change is said while it forms (the fabric demo's 38 topology sources bring 72 links), one is
/// once it has.
#[test]
fn the_first_graph_forming_is_no_change_to_say() {
    let mut lab = Lab::with(rocetop::collect::demo::fabric::config(1));
    for _ in 0..5 {
        lab.run(1);
        let msg = lab
            .app
            .message()
            .map(|(_, m)| m.clone())
            .unwrap_or_default();
        assert!(!msg.contains("fabric links changed"), "{msg}");
    }
    assert_eq!(lab.app.fabric().links.len(), 72);
    lab.answer(
        "leaf1 topology",
        &[(
            ParseKind::LldpNeighbors,
            "Device ID            Local Intf      Hold-time  Capability  Port ID
             spine9               Eth1/40         120        BR          Ethernet1/1
"
            .to_string(),
        )],
    );
    let msg = lab
        .app
        .message()
        .map(|(_, m)| m.clone())
        .unwrap_or_default();
    assert!(msg.starts_with("fabric links changed: "), "{msg}");
}

/// The fabric demo's node detail lists both NICs with their leaf, port and rail, and its port
/// column says the rails rather than a cut-off pair of ports; the lab's one-NIC node keeps its
/// port and says no rail.
#[test]
fn a_fabric_node_detail_lists_each_nic_with_its_rail() {
    let mut lab = Lab::with(rocetop::collect::demo::fabric::config(1));
    lab.run(3);
    let gpu01 = row(&lab, Tab::Overview, &RowId::Node("gpu01".into()));
    assert_eq!(
        gpu01.facts,
        [
            "ens1f0np0 → leaf1 Ethernet1/1 (rail 1)",
            "ens2f0np0 → leaf2 Ethernet0 (rail 2)",
        ]
    );
    assert_eq!(gpu01.cells[2].val, Val::Text("2 rails".into()));
    let mut lab = Lab::new();
    lab.run(3);
    let node = &lab.app.table(Tab::Overview).rows[0];
    assert!(
        node.facts.iter().all(|f| !f.contains("rail")),
        "{:?}",
        node.facts
    );
    assert!(!node.facts.is_empty());
}

/// An episode's pause tree at its PFC peak, as a user reaches it: `p` on the episode in the
/// episodes list shows it on the PFC tab; travelling into the episode (Enter) and pressing `p`
/// on the PFC tab shows the same tree; the bundle's text names the same roots.
#[test]
fn an_episodes_peak_tree_from_the_list_from_the_past_and_in_the_bundle() {
    let mut lab = Lab::with(rocetop::collect::demo::fabric::config(1));
    let mut found = None;
    for _ in 0..300 {
        lab.run(1);
        found = (lab.app.episodes().all().iter().enumerate())
            .find(|(_, e)| {
                e.end.is_some()
                    && e.peak_tree
                        .as_ref()
                        .is_some_and(|p| !p.tree.roots.is_empty())
            })
            .map(|(i, e)| (i, e.id));
        if found.is_some() {
            break;
        }
    }
    let (place, id) = found.expect("an ended episode with a rooted pause tree in 300 s");
    let ep = (lab.app.episodes().all().into_iter())
        .find(|e| e.id == id)
        .cloned()
        .expect("kept");
    let peak = ep.peak_tree.clone().expect("tree");
    let root_line = rocetop::app::fabric::pause_tree::text::lines(&peak.tree)
        .into_iter()
        .find(|l| l.text.starts_with("root "))
        .expect("a root line")
        .text;
    let screen = |lab: &Lab| {
        let mut t = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
        t.draw(|f| rocetop::ui::draw(f, &lab.app)).expect("draw");
        let b = t.backend().buffer().clone();
        (0..b.area.height)
            .map(|y| {
                (0..b.area.width)
                    .map(|x| b[(x, y)].symbol())
                    .collect::<String>()
                    + "\n"
            })
            .collect::<String>()
    };
    let title = format!("episode {id} at its PFC peak");
    lab.key(KeyCode::Char('e'));
    for _ in 0..place {
        lab.key(KeyCode::Char('j'));
    }
    lab.key(KeyCode::Char('p'));
    assert_eq!(lab.app.tab(), Tab::Pfc);
    let s = screen(&lab);
    assert!(s.contains(&title), "{s}");
    assert!(s.contains(&root_line), "{root_line}\n{s}");
    // `p` closes the tree; Enter on the episode travels to its start; `p` there shows the tree
    // of the episode the cursor is in.
    lab.key(KeyCode::Char('p'));
    assert!(!screen(&lab).contains(&title));
    lab.key(KeyCode::Char('e'));
    for _ in 0..place {
        lab.key(KeyCode::Char('j'));
    }
    lab.key(KeyCode::Enter);
    assert!(
        lab.app.travel().is_some(),
        "travelled to the episode's start"
    );
    lab.key(KeyCode::Char('3'));
    lab.key(KeyCode::Char('p'));
    let s = screen(&lab);
    let in_view = lab
        .app
        .episode_in_view()
        .map(|e| e.id)
        .expect("an episode at the cursor");
    assert!(
        s.contains(&format!("episode {in_view} at its PFC peak")),
        "{s}"
    );
    let text = rocetop::app::episodes::text::trees(
        lab.app.pause_tree(),
        lab.app.now(),
        &lab.app.episodes().all(),
        lab.app.links(),
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let p = rocetop::bundle::write_bundle_at(
        dir.path(),
        lab.app.cfg(),
        &lab.app.store,
        &[],
        &[],
        &rocetop::bundle::Found {
            episodes: &serde_json::Value::Array(vec![]),
            fabric: &serde_json::Value::Null,
            trees: &text,
        },
        lab.now(),
    )
    .expect("bundle");
    let written = std::fs::read_to_string(p.join("pause-trees.txt")).expect("pause-trees.txt");
    assert!(written.contains(&format!("episode {id}: ")), "{written}");
    assert!(written.contains(&root_line), "{written}");
}

/// The alerts read the graph: while the fabric demo's deadlock holds, a critical alert names the
/// cycle, and a PFC alert on a leaf's uplink names the spine across.
#[test]
fn a_deadlock_is_an_alert_and_an_uplinks_pfc_alert_names_the_spine() {
    use rocetop::app::alerts::{Severity, Subject};
    let mut lab = Lab::with(rocetop::collect::demo::fabric::config(3));
    let mut seen_deadlock = false;
    let mut seen_toward = false;
    for _ in 0..600 {
        lab.run(1);
        let active = lab.app.alerts().active();
        if !lab.app.pause_tree().deadlocks.is_empty() {
            let cycle = &lab.app.pause_tree().deadlocks[0];
            let a = (active.iter())
                .find(|a| a.what.starts_with("PFC deadlock: "))
                .unwrap_or_else(|| panic!("no deadlock alert: {active:#?}"));
            assert_eq!(a.severity, Severity::Crit);
            assert!(
                a.what.contains(&cycle.join(" -> ")),
                "{} / {cycle:?}",
                a.what
            );
            seen_deadlock = true;
        }
        for a in active.iter().filter(|a| a.what.contains(" toward ")) {
            let Subject::Port { switch, .. } = &a.subject else {
                panic!("{a:?}")
            };
            let across = a.what.split(" toward ").nth(1).unwrap_or("");
            assert!(
                switch.starts_with("leaf") && across.starts_with("spine")
                    || switch.starts_with("spine") && across.starts_with("leaf"),
                "{a:?}"
            );
            seen_toward = true;
        }
        if seen_deadlock && seen_toward {
            break;
        }
    }
    assert!(seen_deadlock, "no deadlock in 10 minutes of seed 3");
    assert!(seen_toward, "no PFC alert on an inter-switch port");
}

/// An incast whose senders are all on the root's own leaf (seed 4's first episode: nodes of one
/// pod over one rail) pauses that leaf's hosts only: the tree's root is the injected port, no
/// spine and no other leaf pauses, and the episode names that root (every host port pauses
/// alike, so no port stands out by the switch's counts) and says it is on that leaf's rail alone
/// (rails counted from 1, as the node view shows them: NIC0's is rail 1). An incast fed over the
/// spines (seed 1's) crosses both rails and says no rail.
#[test]
fn an_incast_on_one_leaf_stays_on_its_rail_and_says_so() {
    use rocetop::collect::demo::sim::hops::Root;
    for (seed, one_leaf) in [(4, true), (1, false)] {
        let mut lab = Lab::with(rocetop::collect::demo::fabric::config(seed));
        let episodes = lab.sim.fabric_episodes(200_000);
        let ep = (episodes.iter())
            .find(|e| e.kind == rocetop::collect::demo::sim::hops::EpisodeKind::Incast)
            .expect("an incast")
            .clone();
        assert_eq!(ep.on_one_leaf, one_leaf, "seed {seed}");
        let Root::Port(root) = &ep.root else {
            panic!("{ep:?}")
        };
        let rail = lab
            .sim
            .fabric()
            .expect("fabric")
            .hosts
            .iter()
            .find(|h| h.leaf == *root);
        let rail = rail.expect("the root faces a host").rail as u32 + 1;
        lab.run(ep.start_ms / 1000 + 6);
        let tree = lab.app.pause_tree();
        let roots: Vec<String> = tree.roots.iter().map(|r| format!("{r:?}")).collect();
        assert!(
            roots
                .iter()
                .any(|r| r.contains(&root.switch) && r.contains(&root.port)),
            "seed {seed}: {roots:?} names {root:?}"
        );
        let pausing: std::collections::BTreeSet<&str> = (tree.edges.iter())
            .map(|e| e.pauser.device.name.as_str())
            .collect();
        let open: Vec<&rocetop::app::episodes::Episode> = lab.app.episodes().open().collect();
        let said: Vec<String> = (open.iter())
            .map(|e| rocetop::app::episodes::text::story(e, lab.app.links()))
            .collect();
        if one_leaf {
            assert_eq!(
                pausing.into_iter().collect::<Vec<_>>(),
                [root.switch.as_str()],
                "seed {seed}: only the root's leaf pauses"
            );
            assert!(
                open.iter().any(|e| e.rail == Some(rail)),
                "seed {seed}: an episode on rail {rail}: {said:#?}"
            );
            assert!(
                said.iter()
                    .any(|s| s.contains(&format!("rail {rail} only"))),
                "{said:#?}"
            );
        } else {
            assert!(
                pausing.iter().any(|s| s.starts_with("spine")),
                "seed {seed}: {pausing:?}"
            );
            assert!(
                open.iter().all(|e| e.rail.is_none()),
                "seed {seed}: {said:#?}"
            );
        }
    }
}
