//! LLDP neighbour tables, from both ends of a link: a switch's `show lldp neighbors` (NX-OS, with
//! Device IDs long enough to push the row onto the next line; Arista EOS) or SONiC `show lldp
//! table`, and a Linux host's `lldpctl` (text, `-f keyvalue`, `-f json`). Both ends give the same
//! metric, `rocetop_link_neighbor_info{node,netdev,switch,port,side}` = 1, so that pairing a node's
//! netdev with its switch port is a lookup, whichever side was asked.

use super::switch::normalize_port;
use crate::metrics::names::LINK_NEIGHBOR_INFO;
use crate::metrics::{Parsed, Sample};

mod host_side;
mod switch_side;
pub use host_side::host_neighbors;
pub use switch_side::switch_neighbors;

/// One neighbour as the local end sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbor {
    /// The local interface (a switch port, or a host netdev).
    pub local: String,
    /// The neighbour's system name (or chassis id when it sends no name).
    pub remote: String,
    /// The neighbour's port (an interface name where it sends one, else its id).
    pub remote_port: String,
}

/// The marker the host request prints where lldpctl is not installed (see transport.rs).
pub const NOT_INSTALLED: &str = "rocetop: lldpctl not installed";

/// `show lldp neighbors` / `show lldp table` of switch `switch`.
pub fn parse_switch(text: &str, switch: &str) -> Parsed {
    let (found, mut p) = switch_neighbors(text);
    if found.is_empty() && p.unknown_lines == 0 {
        p.note("LLDP: the switch lists no neighbours (LLDP off on the ports, or nothing cabled)");
    }
    for n in found {
        let port = normalize_port(&n.local);
        p.push(Sample::gauge(
            LINK_NEIGHBOR_INFO,
            &[
                ("netdev", &n.remote_port),
                ("node", &n.remote),
                ("port", &port),
                ("side", "switch"),
                ("switch", switch),
            ],
            1.0,
        ));
    }
    p
}

/// `lldpctl` (any format) of node `node`.
pub fn parse_lldpctl(text: &str, node: &str) -> Parsed {
    let (found, mut p) = host_neighbors(text);
    if found.is_empty() && p.unknown_lines == 0 && p.notes.is_empty() {
        p.note("LLDP: lldpd sees no neighbour on any interface (LLDP off on the switch ports?)");
    }
    for n in found {
        let port = normalize_port(&n.remote_port);
        p.push(Sample::gauge(
            LINK_NEIGHBOR_INFO,
            &[
                ("netdev", &n.local),
                ("node", node),
                ("port", &port),
                ("side", "node"),
                ("switch", &n.remote),
            ],
            1.0,
        ));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nxos_rows_with_device_ids_alone_on_a_line_and_with_spaces() {
        let text = "Device ID            Local Intf      Hold-time  Capability  Port ID\n\
                    gpu node 7\n                     Eth1/1/1        120                     ens224\n\
                    leaf2                Eth1/2/1        120        BR           Ethernet1/49\n\
                    Total entries displayed: 2\n";
        let (n, p) = switch_neighbors(text);
        assert_eq!(p.unknown_lines, 0, "{p:?}");
        assert_eq!(
            n,
            vec![
                Neighbor {
                    local: "Eth1/1/1".into(),
                    remote: "gpu node 7".into(),
                    remote_port: "ens224".into()
                },
                Neighbor {
                    local: "Eth1/2/1".into(),
                    remote: "leaf2".into(),
                    remote_port: "Ethernet1/49".into()
                },
            ]
        );
    }

    #[test]
    fn a_table_with_no_neighbours_is_a_note_not_an_error() {
        let p = parse_switch(
            "Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\nDevice ID            Local Intf      Hold-time  Capability  Port ID\nTotal entries displayed: 0\n",
            "leaf",
        );
        assert!(p.samples.is_empty());
        assert_eq!(p.unknown_lines, 0);
        assert!(p.notes[0].contains("no neighbours"), "{p:?}");
        let h = parse_lldpctl(
            "-------------------------------------------------------------------------------\nLLDP neighbors:\n-------------------------------------------------------------------------------\n",
            "n1",
        );
        assert!(h.samples.is_empty() && h.unknown_lines == 0, "{h:?}");
        assert!(h.notes[0].contains("no neighbour"), "{h:?}");
        let none = parse_lldpctl("rocetop: lldpctl not installed\n", "n1");
        assert!(none.notes[0].contains("not installed"), "{none:?}");
    }

    #[test]
    fn keyvalue_and_json_agree() {
        let kv = "lldp.ens224.via=LLDP\nlldp.ens224.chassis.mac=00:11:22:33:44:55\nlldp.ens224.chassis.name=NX AI Leaf1\nlldp.ens224.port.ifname=Eth1/2/2\nlldp.ens224.port.descr=to node 1\n";
        let js = r#"{"lldp":{"interface":{"ens224":{"via":"LLDP","chassis":{"NX AI Leaf1":{"id":{"type":"mac","value":"00:11:22:33:44:55"}}},"port":{"id":{"type":"ifname","value":"Eth1/2/2"},"descr":"to node 1"}}}}}"#;
        let want = vec![Neighbor {
            local: "ens224".into(),
            remote: "NX AI Leaf1".into(),
            remote_port: "Eth1/2/2".into(),
        }];
        assert_eq!(host_neighbors(kv).0, want);
        assert_eq!(host_neighbors(js).0, want);
        let p = parse_lldpctl(kv, "ubunturdma1");
        assert_eq!(
            p.samples[0].key.to_string(),
            "rocetop_link_neighbor_info{netdev=\"ens224\",node=\"ubunturdma1\",port=\"Ethernet1/2/2\",side=\"node\",switch=\"NX AI Leaf1\"}"
        );
    }

    #[test]
    fn json0_arrays_and_a_mac_port_id_fall_back_to_the_description() {
        let js = r#"{"lldp":[{"interface":[{"name":"eth0","chassis":[{"id":[{"type":"mac","value":"aa"}],"name":[{"value":"switch1"}]}],"port":[{"id":[{"type":"mac","value":"02:01"}],"descr":[{"value":"Ethernet7"}]}]}]}]}"#;
        assert_eq!(
            host_neighbors(js).0,
            vec![Neighbor {
                local: "eth0".into(),
                remote: "switch1".into(),
                remote_port: "Ethernet7".into()
            }]
        );
    }

    #[test]
    fn garbage_is_counted_and_never_panics() {
        for t in [
            "{",
            "Device ID Local Intf\n\u{feff}é Eth1/1 x",
            "LocalPort RemoteDevice\n---  --\né",
            "lldp.=\n",
            "Chassis id: x\nLocal Port id:\nPort id\n\u{1b}[2J: y\n",
            "Chassis id:",
        ] {
            let _ = parse_switch(t, "s");
            let _ = parse_lldpctl(t, "n");
        }
        assert_eq!(parse_lldpctl("{", "n").unknown_lines, 1);
    }
}
