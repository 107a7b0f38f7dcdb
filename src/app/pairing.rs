//! Which switch port each node netdev is cabled to, from LLDP (either end) and the config's
//! `switch_port`. The config wins, and where LLDP disagrees the disagreement is kept to be shown.
//! Works per netdev, so two NICs on two leaves, bond members and breakout ports pair one by one.

use crate::config::Config;
use crate::metrics::Store;
use crate::metrics::names::LINK_NEIGHBOR_INFO;
use crate::parse::switch::normalize_port;

/// One node netdev ↔ switch port.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    pub node: String,
    /// Empty where only the config names the port (it does not say which netdev).
    pub netdev: String,
    pub switch: String,
    pub port: String,
    pub from: From,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum From {
    Config,
    Lldp,
}

/// LLDP put a node on another port than its `switch_port`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub node: String,
    pub config_port: String,
    /// (netdev, switch, port) as LLDP sees them.
    pub lldp: Vec<(String, String, String)>,
}

/// `ubunturdma1.lab.local` is `ubunturdma1`; names compare without case.
fn same_host(a: &str, b: &str) -> bool {
    let short = |s: &str| s.split('.').next().unwrap_or(s).to_ascii_lowercase();
    a.eq_ignore_ascii_case(b) || short(a) == short(b)
}

/// The configured switch that LLDP's system name means, else the name as LLDP gave it.
fn switch_name(cfg: &Config, lldp: &str) -> String {
    cfg.switches
        .iter()
        .find(|s| same_host(&s.name, lldp))
        .map_or_else(|| lldp.to_string(), |s| s.name.clone())
}

/// Every (netdev, switch, port) LLDP reports for `node`, from the node's lldpctl and from the
/// switches' neighbour tables, without duplicates.
pub fn lldp_links(cfg: &Config, store: &Store, node: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    let mut from_switch = Vec::new();
    for (_, s) in store.select(LINK_NEIGHBOR_INFO, &[]) {
        let l = |k: &str| s.key.label(k).unwrap_or("").to_string();
        let (n, netdev, sw, port) = (l("node"), l("netdev"), l("switch"), l("port"));
        match s.key.label("side") {
            Some("node") if n == node => {
                out.push((netdev, switch_name(cfg, &sw), normalize_port(&port)))
            }
            // The switch sees the node by its system name and the netdev by its port id.
            Some("switch") if same_host(&n, node) => from_switch.push((netdev, sw, port)),
            _ => {}
        }
    }
    // The node names its netdev; the switch may only know a MAC for it: the node's word first.
    for l in from_switch {
        if !out.iter().any(|o| o.1 == l.1 && o.2 == l.2) {
            out.push(l);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Pair every configured node; the second list holds where LLDP and config disagree.
pub fn pairs(cfg: &Config, store: &Store) -> (Vec<Pair>, Vec<Disagreement>) {
    let mut out = Vec::new();
    let mut disagree = Vec::new();
    for n in &cfg.nodes {
        let links = lldp_links(cfg, store, &n.name);
        let Some(cp) = n.switch_port.as_deref().map(normalize_port) else {
            out.extend(links.into_iter().map(|(netdev, switch, port)| Pair {
                node: n.name.clone(),
                netdev,
                switch,
                port,
                from: From::Lldp,
            }));
            continue;
        };
        let switch = cfg
            .switches
            .iter()
            .find(|s| s.ports.contains(&cp))
            .or(cfg.switches.first())
            .map_or_else(String::new, |s| s.name.clone());
        let agreeing: Vec<&(String, String, String)> =
            links.iter().filter(|(_, _, p)| *p == cp).collect();
        if !links.is_empty() && agreeing.is_empty() {
            disagree.push(Disagreement {
                node: n.name.clone(),
                config_port: cp.clone(),
                lldp: links.clone(),
            });
        }
        // The config wins; LLDP still tells which netdev rides that port.
        let netdevs: Vec<String> = match agreeing.as_slice() {
            [] if n.netdevs.len() == 1 => n.netdevs.clone(),
            [] => vec![String::new()],
            a => a.iter().map(|(nd, _, _)| nd.clone()).collect(),
        };
        for netdev in netdevs {
            out.push(Pair {
                node: n.name.clone(),
                netdev,
                switch: switch.clone(),
                port: cp.clone(),
                from: From::Config,
            });
        }
    }
    out.sort();
    out.dedup();
    (out, disagree)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Ctx, ParseKind, parse};

    pub(crate) fn store_with(outputs: &[(&str, ParseKind, &str)]) -> Store {
        let mut store = Store::new(600_000, 16);
        for (who, kind, text) in outputs {
            let id = store.add_source(&format!("{who} topology"), 300_000);
            store.ingest(id, 1_000, &parse(*kind, text, &Ctx::named(who)));
        }
        store
    }

    fn cfg(nodes: &str) -> Config {
        let text = format!(
            "[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\nports = [\"Ethernet1/1/1-4\"]\n[[switch]]\nname = \"leaf2\"\nhost = \"127.0.0.1\"\nos = \"sonic\"\nports = [\"Ethernet0-8\"]\n{nodes}"
        );
        Config::from_str(&text, "test.toml", None).expect("config")
    }

    #[test]
    fn two_nics_on_two_leaves_pair_one_by_one_from_lldp() {
        let cfg = cfg("[[node]]\nname = \"gpu1\"\nhost = \"127.0.0.1\"\n");
        // gpu1's lldpd sees leaf1 by its FQDN on a breakout port; leaf2 (SONiC) sees gpu1 too.
        let store = store_with(&[
            (
                "gpu1",
                ParseKind::Lldpctl,
                "lldp.ens1f0.chassis.name=leaf1.fabric.local\nlldp.ens1f0.port.ifname=Eth1/1/3\n",
            ),
            (
                "leaf2",
                ParseKind::LldpNeighbors,
                "LocalPort    RemoteDevice    RemotePortID       Capability    RemotePortDescr\n-----------  --------------  -----------------  ------------  -----------------\nEthernet8    gpu1            ens2f0             S             ens2f0\n",
            ),
        ]);
        let (pairs, disagree) = pairs(&cfg, &store);
        assert!(disagree.is_empty());
        let got: Vec<(&str, &str, &str)> = pairs
            .iter()
            .map(|p| (p.netdev.as_str(), p.switch.as_str(), p.port.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("ens1f0", "leaf1", "Ethernet1/1/3"),
                ("ens2f0", "leaf2", "Ethernet8")
            ]
        );
        assert!(pairs.iter().all(|p| p.from == From::Lldp));
    }

    #[test]
    fn the_nodes_own_word_beats_the_switchs_mac_port_id() {
        let cfg =
            cfg("[[node]]\nname = \"gpu1\"\nhost = \"127.0.0.1\"\nswitch_port = \"Eth1/1/2\"\n");
        let store = store_with(&[
            (
                "gpu1",
                ParseKind::Lldpctl,
                "lldp.ens224.chassis.name=leaf1\nlldp.ens224.port.ifname=Ethernet1/1/2\n",
            ),
            (
                "leaf1",
                ParseKind::LldpNeighbors,
                "Device ID            Local Intf      Hold-time  Capability  Port ID\ngpu1                 Eth1/1/2        120        S            0c:42:a1:00:00:01\n",
            ),
        ]);
        let (pairs, disagree) = pairs(&cfg, &store);
        assert!(disagree.is_empty(), "{disagree:?}");
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!(pairs[0].netdev, "ens224");
        assert_eq!(pairs[0].from, From::Config);
    }
}
