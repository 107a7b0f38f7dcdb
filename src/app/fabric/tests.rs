use super::*;
use crate::metrics::Store;
use crate::parse::{Ctx, ParseKind, parse};

fn cfg(extra: &str) -> Config {
    let text = format!(
        "[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\n[[switch]]\nname = \"leaf2\"\nhost = \"127.0.0.1\"\nos = \"sonic\"\n[[switch]]\nname = \"spine1\"\nhost = \"127.0.0.1\"\nos = \"eos\"\n[[node]]\nname = \"gpu1\"\nhost = \"127.0.0.1\"\n{extra}"
    );
    Config::from_str(&text, "test.toml", None).expect("config")
}

const NXOS_HEAD: &str = "Device ID            Local Intf      Hold-time  Capability  Port ID\n";
const EOS_HEAD: &str = "Port          Neighbor Device ID       Neighbor Port ID    TTL\n---------- ------------------------ ---------------------- ---\n";
const SONIC_HEAD: &str = "LocalPort    RemoteDevice    RemotePortID       Capability    RemotePortDescr\n-----------  --------------  -----------------  ------------  -----------------\n";

fn store_with(outputs: &[(&str, ParseKind, String)]) -> Store {
    let mut store = Store::new(600_000, 16);
    for (who, kind, text) in outputs {
        let id = store.add_source(&format!("{who} topology"), 300_000);
        store.ingest(id, 1_000, &parse(*kind, text, &Ctx::named(who)));
    }
    store
}

fn fabric_of(cfg: &Config, store: &Store) -> Fabric {
    Fabric::of(cfg, store, &Links::of(cfg, store))
}

fn said(f: &Fabric) -> Vec<String> {
    f.links
        .iter()
        .map(|l| {
            format!(
                "{} {} - {} {} ({:?})",
                l.a.device.name, l.a.port, l.b.device.name, l.b.port, l.via
            )
        })
        .collect()
}

/// Every switch OS's table gives the same links; both ends of one link make one link; a node on
/// two switches (rails) has one link per NIC.
#[test]
fn switch_links_from_every_os_both_ends_merged_and_rails() {
    let store = store_with(&[
        (
            "leaf1",
            ParseKind::LldpNeighbors,
            format!(
                "{NXOS_HEAD}spine1.fabric.local  Eth1/49         120        BR          Ethernet1\ngpu1                 Eth1/1          120        S           ens1f0\n"
            ),
        ),
        (
            "spine1",
            ParseKind::LldpNeighbors,
            format!(
                "{EOS_HEAD}Et1           leaf1                    Ethernet1/49        120\nEt2           leaf2                    Ethernet48          120\n"
            ),
        ),
        (
            "leaf2",
            ParseKind::LldpNeighbors,
            format!(
                "{SONIC_HEAD}Ethernet48   spine1          Ethernet2          BR            Ethernet2\nEthernet0    gpu1            ens2f0             S             ens2f0\n"
            ),
        ),
    ]);
    let f = fabric_of(&cfg(""), &store);
    assert_eq!(
        said(&f),
        [
            "leaf1 Ethernet1/49 - spine1 Ethernet1 (Lldp)",
            "leaf2 Ethernet48 - spine1 Ethernet2 (Lldp)",
            "gpu1 ens1f0 - leaf1 Ethernet1/1 (Pairing)",
            "gpu1 ens2f0 - leaf2 Ethernet0 (Pairing)",
        ],
        "{f:#?}"
    );
    assert!(f.conflicts.is_empty());
    assert_eq!(f.of_host("gpu1").count(), 2);
    let at: Vec<&End> = f.at("spine1", "Ethernet2").map(|l| &l.a).collect();
    assert_eq!(at[0].device.name, "leaf2");
}

/// A neighbour that is neither a configured switch nor a node is kept, said as not polled; its
/// name (remote text, here with control bytes) stays as sent in the model.
#[test]
fn a_neighbour_not_polled_is_kept_and_named_as_not_polled() {
    let store = store_with(&[(
        "leaf1",
        ParseKind::LldpNeighbors,
        format!(
            "{NXOS_HEAD}spine9\u{1b}[2J          Eth1/50         120        BR          Ethernet7\n"
        ),
    )]);
    let f = fabric_of(&cfg(""), &store);
    let l = f.at("leaf1", "Ethernet1/50").next().expect("a link");
    let far = l
        .far(&End::new(Device::switch("leaf1"), "Ethernet1/50"))
        .expect("far");
    assert_eq!(far.device.kind, Kind::Unpolled);
    let j = json(&f).to_string();
    let printed = crate::safe::json(&j);
    assert!(!printed.contains('\u{1b}'), "{printed}");
}

/// Two switches claiming one port: the port's own switch decides; where it says nothing, both
/// claims keep their device with the far port unknown, and the conflict is said.
#[test]
fn two_switches_claiming_one_port() {
    let claims = |own: Option<&str>| {
        let mut outs = vec![
            (
                "leaf1",
                ParseKind::LldpNeighbors,
                format!(
                    "{NXOS_HEAD}spine1               Eth1/49         120        BR          Ethernet1\n"
                ),
            ),
            (
                "leaf2",
                ParseKind::LldpNeighbors,
                format!(
                    "{SONIC_HEAD}Ethernet48   spine1          Ethernet1          BR            Ethernet1\n"
                ),
            ),
        ];
        if let Some(o) = own {
            outs.push((
                "spine1",
                ParseKind::LldpNeighbors,
                format!("{EOS_HEAD}Et1           {o}\n"),
            ));
        }
        fabric_of(&cfg(""), &store_with(&outs))
    };
    let f = claims(None);
    assert_eq!(f.conflicts.len(), 1, "{f:#?}");
    assert_eq!(f.conflicts[0].port.port, "Ethernet1");
    assert_eq!(
        said(&f),
        [
            "leaf1 Ethernet1/49 - spine1  (Lldp)",
            "leaf2 Ethernet48 - spine1  (Lldp)"
        ]
    );
    let f = claims(Some("leaf2                    Ethernet48          120"));
    assert_eq!(
        said(&f),
        [
            "leaf1 Ethernet1/49 - spine1  (Lldp)",
            "leaf2 Ethernet48 - spine1 Ethernet1 (Lldp)"
        ]
    );
}

/// A `[[link]]` adds a link LLDP does not see and wins over LLDP on its ports.
#[test]
fn config_links_add_and_override() {
    let store = store_with(&[(
        "leaf1",
        ParseKind::LldpNeighbors,
        format!(
            "{NXOS_HEAD}spine1               Eth1/49         120        BR          Ethernet9\n"
        ),
    )]);
    let c = cfg(
        "[[link]]\na = \"leaf1:Ethernet1/49\"\nb = \"spine1:Ethernet1\"\n[[link]]\na = \"leaf2:Ethernet48\"\nb = \"spine1:Ethernet2\"\n",
    );
    let f = fabric_of(&c, &store);
    assert_eq!(
        said(&f),
        [
            "leaf1 Ethernet1/49 - spine1 Ethernet1 (Config)",
            "leaf2 Ethernet48 - spine1 Ethernet2 (Config)"
        ]
    );
}

#[test]
fn changes_are_counted_both_ways() {
    let one = store_with(&[(
        "leaf1",
        ParseKind::LldpNeighbors,
        format!(
            "{NXOS_HEAD}spine1               Eth1/49         120        BR          Ethernet1\n"
        ),
    )]);
    let two = store_with(&[(
        "leaf1",
        ParseKind::LldpNeighbors,
        format!(
            "{NXOS_HEAD}spine1               Eth1/50         120        BR          Ethernet2\nleaf2                Eth1/51         120        BR          Ethernet49\n"
        ),
    )]);
    let c = cfg("");
    let (a, b) = (fabric_of(&c, &one), fabric_of(&c, &two));
    let changes = |added, removed| Changes { added, removed };
    assert_eq!(b.changes_since(&a), changes(2, 1));
    assert_eq!(a.changes_since(&a), changes(0, 0));
}

/// A real NX-OS `show lldp neighbors detail` (ntc-templates): with its uplink's far switch
/// configured, the uplink is a switch link; the storage array it also lists is not polled.
#[test]
fn a_real_nxos_detail_capture_makes_the_uplink() {
    let text = include_str!(
        "../../../tests/fixtures/topology/show-lldp-neighbors-detail_nxos-9.3_ntc-templates.txt"
    );
    let c = Config::from_str(
        "[[switch]]\nname = \"n9k\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\n[[switch]]\nname = \"sw-nexus\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\n",
        "t.toml",
        None,
    )
    .expect("config");
    let f = fabric_of(
        &c,
        &store_with(&[("n9k", ParseKind::LldpNeighbors, text.to_string())]),
    );
    assert_eq!(
        said(&f),
        [
            "n9k Ethernet1/52 - sw-nexus Ethernet1/52 (Lldp)",
            "n9k Ethernet101/1/10 - pure-storage eth0 (Lldp)"
        ]
    );
    let far = f.links[1].b.device.kind;
    assert_eq!(far, Kind::Unpolled);
}

/// A host NIC's link to a switch port, as the pairing makes it.
fn nic(host: &str, netdev: &str, switch: &str, port: &str) -> Link {
    Link {
        a: End::new(Device::host(host), netdev),
        b: End::new(Device::switch(switch), port),
        via: Via::Pairing,
    }
}

/// A switch is on the rail of the NIC place all its host ports share; a spine, a switch with
/// NICs of both places and a one-NIC fabric have none; two NICs of a node on one switch are
/// doubled.
#[test]
fn rails_of_switches_and_nics_doubled_on_one_switch() {
    let uplink = Link {
        a: End::new(Device::switch("leaf1"), "Ethernet1/49"),
        b: End::new(Device::switch("spine1"), "Ethernet1"),
        via: Via::Lldp,
    };
    struct Case {
        name: &'static str,
        links: Vec<Link>,
        rails: &'static [(&'static str, Option<u32>)],
        one_rail: (&'static [&'static str], Option<u32>),
        doubled: &'static [&'static str],
    }
    let cases = [
        Case {
            name: "two rails, rail-cabled",
            links: vec![
                nic("gpu1", "ens1f0np0", "leaf1", "Ethernet1/1"),
                nic("gpu1", "ens2f0np0", "leaf2", "Ethernet0"),
                nic("gpu2", "ens1f0np0", "leaf1", "Ethernet1/2"),
                nic("gpu2", "ens2f0np0", "leaf2", "Ethernet1"),
                uplink.clone(),
            ],
            rails: &[("leaf1", Some(1)), ("leaf2", Some(2)), ("spine1", None)],
            one_rail: (&["leaf2", "leaf2"], Some(2)),
            doubled: &[],
        },
        Case {
            name: "two leaves of different rails are no one rail",
            links: vec![
                nic("gpu1", "ens1f0np0", "leaf1", "Ethernet1/1"),
                nic("gpu1", "ens2f0np0", "leaf2", "Ethernet0"),
            ],
            rails: &[("leaf1", Some(1)), ("leaf2", Some(2))],
            one_rail: (&["leaf1", "leaf2"], None),
            doubled: &[],
        },
        Case {
            name: "one NIC a node: one rail, never said",
            links: vec![
                nic("gpu1", "ens1f0", "leaf1", "Ethernet1/1"),
                nic("gpu2", "ens1f0", "leaf1", "Ethernet1/2"),
            ],
            rails: &[("leaf1", None)],
            one_rail: (&["leaf1"], None),
            doubled: &[],
        },
        Case {
            name: "both NICs of gpu2 on leaf1: leaf1 is on no rail",
            links: vec![
                nic("gpu1", "ens1f0np0", "leaf1", "Ethernet1/1"),
                nic("gpu1", "ens2f0np0", "leaf2", "Ethernet0"),
                nic("gpu2", "ens1f0np0", "leaf1", "Ethernet1/2"),
                nic("gpu2", "ens2f0np0", "leaf1", "Ethernet1/3"),
            ],
            rails: &[("leaf1", None), ("leaf2", Some(2))],
            one_rail: (&["leaf2"], Some(2)),
            doubled: &["gpu2 leaf1 ens1f0np0,ens2f0np0"],
        },
    ];
    for c in cases {
        let f = Fabric::from_links(c.links);
        for (sw, want) in c.rails {
            assert_eq!(f.rail_of(sw), want.map(Rail), "{}: {sw}", c.name);
        }
        let (sws, want) = c.one_rail;
        assert_eq!(
            f.one_rail(sws.iter().copied()),
            want.map(Rail),
            "{}",
            c.name
        );
        let doubled: Vec<String> = (f.doubled().iter())
            .map(|d| format!("{} {} {}", d.host, d.switch, d.netdevs.join(",")))
            .collect();
        assert_eq!(doubled, c.doubled, "{}", c.name);
    }
}
