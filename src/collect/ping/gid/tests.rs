//! Device/GID selection on fake sysfs trees laid out as the kernel's (mlx5 RoCE ports: index 0/1 the
//! IPv6 link-local GID as RoCE v1/v2, 2/3 the netdev's IPv4 address, VLAN netdevs after).

use super::*;
use std::net::Ipv4Addr;

struct Tree(tempfile::TempDir);

const LL: &str = "fe80:0000:0000:0000:020c:29ff:fe5b:1a2c";

fn mapped(a: [u8; 4]) -> String {
    let [x, y, z, w] = a;
    format!("0000:0000:0000:0000:0000:ffff:{x:02x}{y:02x}:{z:02x}{w:02x}")
}

impl Tree {
    fn new() -> Self {
        Tree(tempfile::tempdir().expect("tmp"))
    }

    fn root(&self) -> &str {
        self.0.path().to_str().expect("utf8")
    }

    fn port(&self, dev: &str, port: u8, state: &str, link: &str) -> &Self {
        let p = self.dir(dev, port);
        for d in ["gids", "gid_attrs/types", "gid_attrs/ndevs"] {
            std::fs::create_dir_all(p.join(d)).expect("mkdir");
        }
        std::fs::write(p.join("state"), format!("{state}\n")).expect("w");
        std::fs::write(p.join("link_layer"), format!("{link}\n")).expect("w");
        self
    }

    fn gid(&self, dev: &str, port: u8, idx: u8, ty: &str, gid: &str, ndev: &str) -> &Self {
        let p = self.dir(dev, port);
        std::fs::write(p.join(format!("gid_attrs/types/{idx}")), format!("{ty}\n")).expect("w");
        std::fs::write(p.join(format!("gids/{idx}")), format!("{gid}\n")).expect("w");
        std::fs::write(
            p.join(format!("gid_attrs/ndevs/{idx}")),
            format!("{ndev}\n"),
        )
        .expect("w");
        self
    }

    fn dir(&self, dev: &str, port: u8) -> PathBuf {
        self.0
            .path()
            .join(format!("class/infiniband/{dev}/ports/{port}"))
    }

    /// A RoCE port whose netdev holds `v4`: the kernel's usual four GIDs.
    fn roce(&self, dev: &str, netdev: &str, v4: [u8; 4]) -> &Self {
        self.port(dev, 1, "4: ACTIVE", "Ethernet")
            .gid(dev, 1, 0, "IB/RoCE v1", LL, netdev)
            .gid(dev, 1, 1, "RoCE v2", LL, netdev)
            .gid(dev, 1, 2, "IB/RoCE v1", &mapped(v4), netdev)
            .gid(dev, 1, 3, "RoCE v2", &mapped(v4), netdev)
    }
}

fn route(a: [u8; 4], netdev: &str) -> Route {
    Route {
        src: IpAddr::V4(Ipv4Addr::from(a)),
        netdev: Some(netdev.into()),
    }
}

fn pick(t: &Tree, r: &Route, pin: &Pin) -> Result<(String, u8, u8), String> {
    select(t.root(), r, pin).map(|c| (c.device.clone(), c.port, c.gid_index()))
}

fn two_rails() -> Tree {
    let t = Tree::new();
    t.roce("rocep11s0", "ens192", [10, 0, 0, 1]);
    t.roce("rocep19s0", "ens224", [192, 168, 250, 201]);
    t
}

#[test]
fn each_route_picks_the_rail_it_leaves_through() {
    let t = two_rails();
    let none = Pin::default();
    assert_eq!(
        pick(&t, &route([192, 168, 250, 201], "ens224"), &none),
        Ok(("rocep19s0".into(), 1, 3)),
        "not the first device of the list"
    );
    assert_eq!(
        pick(&t, &route([10, 0, 0, 1], "ens192"), &none),
        Ok(("rocep11s0".into(), 1, 3))
    );
    let c = select(t.root(), &route([10, 0, 0, 1], "ens192"), &none).expect("choice");
    assert_eq!(
        c.to_string(),
        "rocep11s0 port 1 GID 3 (RoCE v2 ::ffff:10.0.0.1 on ens192)"
    );
    // Without the netdev (getifaddrs failed) the address alone still decides.
    let r = Route {
        src: "192.168.250.201".parse().expect("ip"),
        netdev: None,
    };
    assert_eq!(pick(&t, &r, &none), Ok(("rocep19s0".into(), 1, 3)));
}

#[test]
fn an_inactive_port_is_skipped_and_said() {
    let t = two_rails();
    t.port("rocep19s0", 1, "1: DOWN", "Ethernet");
    let e = pick(&t, &route([192, 168, 250, 201], "ens224"), &Pin::default())
        .expect_err("no fallback to the other rail");
    assert!(e.contains("rocep19s0 port 1 is 1: DOWN"), "{e}");
    assert!(e.contains("::ffff:192.168.250.201 on ens224"), "{e}");
}

#[test]
fn only_a_gid_equal_to_the_source_will_do_and_v2_is_preferred() {
    let t = Tree::new();
    t.port("mlx5_0", 1, "4: ACTIVE", "Ethernet")
        .gid("mlx5_0", 1, 0, "IB/RoCE v1", LL, "ens3")
        .gid("mlx5_0", 1, 1, "RoCE v2", LL, "ens3")
        .gid("mlx5_0", 1, 2, "IB/RoCE v1", &mapped([10, 1, 1, 9]), "ens3");
    let e = pick(&t, &route([10, 1, 1, 1], "ens3"), &Pin::default())
        .expect_err("index 0 is not a fallback");
    assert!(
        e.starts_with("no active port has a RoCE GID ::ffff:10.1.1.1"),
        "{e}"
    );
    t.gid("mlx5_0", 1, 3, "IB/RoCE v1", &mapped([10, 1, 1, 1]), "ens3")
        .gid("mlx5_0", 1, 4, "RoCE v2", &mapped([10, 1, 1, 1]), "ens3");
    let c = select(t.root(), &route([10, 1, 1, 1], "ens3"), &Pin::default()).expect("choice");
    assert_eq!((c.gid_index(), c.preferred()), (4, Roce::V2));
    assert_eq!(c.versions(), Versions { v1: true, v2: true });
    assert_eq!(c.entry(Roce::V1).map(|e| e.index), Some(3));
    assert_eq!(
        c.path(Roce::V1),
        "mlx5_0 port 1 GID 3 (IB/RoCE v1 ::ffff:10.1.1.1 on ens3)"
    );
}

/// A plain ConnectX-3 (mlx4 without ROCE_V1_V2): its GIDs are all "IB/RoCE v1". Asking for v2
/// only found nothing there, on the lab's mlx4_0 port 2.
#[test]
fn a_port_with_only_roce_v1_gids_is_used_as_v1() {
    let t = Tree::new();
    t.port("mlx4_0", 2, "4: ACTIVE", "Ethernet")
        .gid("mlx4_0", 2, 0, "IB/RoCE v1", LL, "ens1d1")
        .gid(
            "mlx4_0",
            2,
            2,
            "IB/RoCE v1",
            &mapped([192, 168, 250, 203]),
            "ens1d1",
        );
    let c = select(
        t.root(),
        &route([192, 168, 250, 203], "ens1d1"),
        &Pin::default(),
    )
    .expect("v1 will do");
    assert_eq!((c.port, c.gid_index(), c.preferred()), (2, 2, Roce::V1));
    assert_eq!(c.versions(), Versions::only(Roce::V1));
    assert_eq!(
        c.to_string(),
        "mlx4_0 port 2 GID 2 (IB/RoCE v1 ::ffff:192.168.250.203 on ens1d1)"
    );
}

/// Kernels before gid_attrs (4.9) list GIDs with no type: rdma-core takes each for v1.
#[test]
fn without_gid_attrs_every_gid_is_v1() {
    let t = Tree::new();
    let p = t.dir("mlx4_0", 1);
    std::fs::create_dir_all(p.join("gids")).expect("mkdir");
    std::fs::write(p.join("state"), "4: ACTIVE\n").expect("w");
    std::fs::write(p.join("link_layer"), "Ethernet\n").expect("w");
    std::fs::write(p.join("gids/0"), format!("{LL}\n")).expect("w");
    std::fs::write(p.join("gids/1"), format!("{}\n", mapped([10, 3, 0, 1]))).expect("w");
    std::fs::write(
        p.join("gids/2"),
        "0000:0000:0000:0000:0000:0000:0000:0000\n",
    )
    .expect("w");
    let c = select(t.root(), &route([10, 3, 0, 1], "eth2"), &Pin::default()).expect("v1");
    assert_eq!((c.gid_index(), c.preferred()), (1, Roce::V1));
    assert_eq!(c.netdev, None, "no ndevs either: the address alone decides");
    assert_eq!(
        c.to_string(),
        "mlx4_0 port 1 GID 1 (IB/RoCE v1 ::ffff:10.3.0.1)"
    );
}

#[test]
fn both_ends_agree_on_v2_else_v1_and_a_mix_is_refused() {
    let both = Versions { v1: true, v2: true };
    let v1 = Versions::only(Roce::V1);
    let v2 = Versions::only(Roce::V2);
    assert_eq!(agree(both, both), Ok(Roce::V2));
    assert_eq!(agree(both, v1), Ok(Roce::V1), "a ConnectX-3 peer");
    assert_eq!(agree(v1, both), Ok(Roce::V1));
    assert_eq!(agree(v2, both), Ok(Roce::V2));
    assert_eq!(agree(v1, v1), Ok(Roce::V1));
    let e = agree(v2, v1).expect_err("mixed");
    assert_eq!(
        e,
        "RoCE versions differ: this end has RoCE v2 only, the peer RoCE v1 only; both ends must \
         send the same (a ConnectX-3 has RoCE v2 GIDs only with the ROCE_V1_V2 firmware capability)"
    );
    assert!(agree(both, Versions::default()).is_err());
    for v in [both, v1, v2, Versions::default()] {
        assert_eq!(Versions::from_bits(v.bits()), v);
    }
    assert_eq!(Versions::from_bits(0xfe), v2, "unknown bits are ignored");
}

#[test]
fn a_gid_change_elsewhere_in_the_table_leaves_the_session_alone() {
    let t = two_rails();
    let r = route([192, 168, 250, 201], "ens224");
    let c = select(t.root(), &r, &Pin::default()).expect("choice");
    assert_eq!(still_holds(t.root(), &c, 3, Roce::V2), Ok(()));
    // An IPv6 privacy address and a pod's interface arrive: new entries, ours untouched.
    t.gid(
        "rocep19s0",
        1,
        4,
        "IB/RoCE v1",
        "2001:0db8:0000:0000:1234:5678:9abc:def0",
        "ens224",
    )
    .gid(
        "rocep19s0",
        1,
        5,
        "RoCE v2",
        &mapped([10, 244, 1, 7]),
        "veth1",
    );
    assert_eq!(still_holds(t.root(), &c, 3, Roce::V2), Ok(()));
    // Our address moved away: the entry now holds another one.
    t.gid(
        "rocep19s0",
        1,
        3,
        "RoCE v2",
        &mapped([192, 168, 250, 99]),
        "ens224",
    );
    assert_eq!(
        still_holds(t.root(), &c, 3, Roce::V2),
        Err("GID 3 is now RoCE v2 ::ffff:192.168.250.99 on ens224".into())
    );
    // Gone (the address was removed: the kernel zeroes the entry).
    t.gid(
        "rocep19s0",
        1,
        3,
        "RoCE v2",
        "0000:0000:0000:0000:0000:0000:0000:0000",
        "",
    );
    assert_eq!(
        still_holds(t.root(), &c, 3, Roce::V2),
        Err("GID 3 is gone".into())
    );
    // The same address on another netdev is another path.
    t.gid(
        "rocep19s0",
        1,
        3,
        "RoCE v2",
        &mapped([192, 168, 250, 201]),
        "ens224.5",
    );
    assert!(still_holds(t.root(), &c, 3, Roce::V2).is_err());
    t.gid(
        "rocep19s0",
        1,
        3,
        "IB/RoCE v1",
        &mapped([192, 168, 250, 201]),
        "ens224",
    );
    assert!(
        still_holds(t.root(), &c, 3, Roce::V2).is_err(),
        "another version"
    );
}

#[test]
fn ipv6_sources_use_their_own_gid_and_link_local_is_never_picked() {
    let t = Tree::new();
    t.roce("mlx5_0", "ens3", [169, 254, 3, 4]).gid(
        "mlx5_0",
        1,
        5,
        "RoCE v2",
        "2001:0db8:0000:0000:0000:0000:0000:0005",
        "ens3",
    );
    let v6 = Route {
        src: "2001:db8::5".parse().expect("ip"),
        netdev: Some("ens3".into()),
    };
    assert_eq!(pick(&t, &v6, &Pin::default()), Ok(("mlx5_0".into(), 1, 5)));
    let e = pick(&t, &route([169, 254, 3, 4], "ens3"), &Pin::default())
        .expect_err("169.254 does not route");
    assert!(e.contains("link-local"), "{e}");
    let ll = Route {
        src: "fe80::20c:29ff:fe5b:1a2c".parse().expect("ip"),
        netdev: Some("ens3".into()),
    };
    assert!(pick(&t, &ll, &Pin::default()).is_err(), "fe80:: neither");
}

#[test]
fn a_gid_of_another_vlan_netdev_is_skipped() {
    let t = Tree::new();
    t.roce("rocep19s0", "ens224", [192, 168, 250, 201])
        // The same address on two VLANs over the port: only the route's netdev is the path.
        .gid(
            "rocep19s0",
            1,
            5,
            "RoCE v2",
            &mapped([10, 100, 0, 1]),
            "ens224.200",
        )
        .gid(
            "rocep19s0",
            1,
            7,
            "RoCE v2",
            &mapped([10, 100, 0, 1]),
            "ens224.100",
        );
    assert_eq!(
        pick(&t, &route([10, 100, 0, 1], "ens224.100"), &Pin::default()),
        Ok(("rocep19s0".into(), 1, 7))
    );
    assert!(
        pick(&t, &route([10, 100, 0, 1], "ens224.300"), &Pin::default()).is_err(),
        "no GID on that VLAN"
    );
}

#[test]
fn pins_are_obeyed_and_a_pin_on_the_wrong_rail_is_an_error() {
    let t = two_rails();
    let r = route([192, 168, 250, 201], "ens224");
    let dev = |d: &str| Pin {
        device: Some(d.into()),
        ..Pin::default()
    };
    assert_eq!(
        pick(&t, &r, &dev("rocep19s0")),
        Ok(("rocep19s0".into(), 1, 3))
    );
    let e = pick(&t, &r, &dev("rocep11s0")).expect_err("wrong rail");
    assert!(e.contains("::ffff:192.168.250.201 on ens224"), "{e}");
    let e = pick(&t, &r, &dev("mlx5_9")).expect_err("absent");
    assert_eq!(e, "no RDMA device mlx5_9 (have rocep11s0, rocep19s0)");
    let both = Pin {
        device: Some("rocep11s0".into()),
        port: Some(1),
        gid_index: Some(1),
    };
    assert_eq!(
        pick(&t, &r, &both),
        Ok(("rocep11s0".into(), 1, 1)),
        "as told"
    );
    let gid_only = Pin {
        gid_index: Some(3),
        ..Pin::default()
    };
    assert!(pick(&t, &r, &gid_only).is_err());
    let port2 = Pin {
        device: Some("rocep19s0".into()),
        port: Some(2),
        gid_index: None,
    };
    let e = pick(&t, &r, &port2).expect_err("no port 2");
    assert!(e.contains("rocep19s0 port 2 is missing"), "{e}");
}

#[test]
fn infiniband_ports_use_gid_0_when_pinned() {
    let t = Tree::new();
    t.port("mlx5_ib0", 1, "4: ACTIVE", "InfiniBand").gid(
        "mlx5_ib0",
        1,
        0,
        "IB/RoCE v1",
        "fe80:0000:0000:0000:0002:c903:0001:2345",
        "",
    );
    let r = route([10, 2, 0, 1], "ib0");
    assert!(pick(&t, &r, &Pin::default()).is_err(), "IB is not guessed");
    let dev = Pin {
        device: Some("mlx5_ib0".into()),
        ..Pin::default()
    };
    assert_eq!(pick(&t, &r, &dev), Ok(("mlx5_ib0".into(), 1, 0)));
}

#[test]
fn no_devices_and_netdev_lookup() {
    let t = Tree::new();
    assert_eq!(
        pick(&t, &route([10, 0, 0, 1], "x"), &Pin::default()),
        Err("RDMA unavailable on this host: no devices".into())
    );
    let addrs = vec![
        ("lo".to_string(), "127.0.0.1".parse().expect("ip")),
        ("ens224".to_string(), "192.168.250.201".parse().expect("ip")),
    ];
    assert_eq!(
        netdev_of("192.168.250.201".parse().expect("ip"), &addrs),
        Some("ens224".into())
    );
    assert_eq!(netdev_of("10.9.9.9".parse().expect("ip"), &addrs), None);
}

/// `device = "all"`: every port is a rail, each with its own netdev's address, in device order; a
/// port that cannot be pinged over is a rail with the reason, not left out.
#[test]
fn every_port_is_a_rail_with_its_address_or_why_not() {
    let t = two_rails();
    t.roce("mlx5_2", "ens256", [192, 168, 250, 203]);
    // An active port whose netdev has only its link-local address (no IPv4 configured).
    t.port("mlx5_3", 1, "4: ACTIVE", "Ethernet")
        .gid("mlx5_3", 1, 0, "IB/RoCE v1", LL, "ens257")
        .gid("mlx5_3", 1, 1, "RoCE v2", LL, "ens257");
    t.roce("mlx5_4", "ens258", [192, 168, 250, 204]);
    t.port("mlx5_4", 1, "1: DOWN", "Ethernet");
    t.port("mlx5_5", 1, "4: ACTIVE", "InfiniBand");
    let ip = |s: &str| Ok(s.parse::<IpAddr>().expect("ip"));
    let got: Vec<(String, u8, Result<IpAddr, String>)> = rails(t.root(), true)
        .expect("rails")
        .into_iter()
        .map(|r| (r.device, r.port, r.source))
        .collect();
    let want = [
        ("mlx5_2", ip("192.168.250.203")),
        ("mlx5_3", Err("no RoCE GID of an IPv4 address".to_string())),
        ("mlx5_4", Err("port 1 is 1: DOWN".to_string())),
        ("mlx5_5", Err("is InfiniBand".to_string())),
        ("rocep11s0", ip("10.0.0.1")),
        ("rocep19s0", ip("192.168.250.201")),
    ];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for ((dev, port, src), (wdev, wsrc)) in got.iter().zip(want) {
        assert_eq!((dev.as_str(), *port), (wdev, 1));
        match (src, wsrc) {
            (Ok(a), Ok(b)) => assert_eq!(*a, b, "{dev}"),
            (Err(e), Err(w)) => {
                assert!(e.contains(&w), "{dev}: {e}");
                assert!(e.starts_with(dev.as_str()), "names its device: {e}");
            }
            (a, b) => panic!("{dev}: {a:?}, want {b:?}"),
        }
    }
}

#[test]
fn a_rails_address_follows_the_peers_family() {
    let t = Tree::new();
    let v6 = "2001:0db8:0000:0000:0000:0000:0000:0011";
    t.roce("mlx5_0", "ens1", [10, 0, 0, 1])
        .gid("mlx5_0", 1, 4, "RoCE v2", v6, "ens1");
    let r = rails(t.root(), false).expect("rails");
    assert_eq!(r[0].source, Ok("2001:db8::11".parse().expect("ip")));
    let r = rails(t.root(), true).expect("rails");
    assert_eq!(r[0].source, Ok("10.0.0.1".parse().expect("ip")));
    assert!(rails(Tree::new().root(), true).is_err(), "no devices");
}

#[test]
fn a_rails_label_names_its_port_only_where_the_device_has_several() {
    let r = Rail {
        device: "mlx5_0".into(),
        port: 2,
        source: Err(String::new()),
    };
    assert_eq!(r.label(1), "mlx5_0");
    assert_eq!(r.label(2), "mlx5_0/2");
}
