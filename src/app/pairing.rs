//! Which switch port each node netdev is cabled to, from LLDP (either end) and the config's
//! `switch_port`. The config wins, and where LLDP disagrees the disagreement is kept to be shown.
//! Works per netdev, so two NICs on two leaves, bond members and breakout ports pair one by one.

use crate::config::Config;
use crate::metrics::names::LINK_NEIGHBOR_INFO;
use crate::metrics::store::SourceId;
use crate::metrics::{Store, Ts};
use crate::parse::switch::normalize_port;
use std::collections::HashMap;

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

/// LLDP put a node on another switch or port than its `switch_port`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub node: String,
    /// The switch the config puts it on (empty where the config names none).
    pub config_switch: String,
    pub config_port: String,
    /// (netdev, switch, port) as LLDP sees them.
    pub lldp: Vec<(String, String, String)>,
}

/// The LLDP neighbour series of each source's newest LLDP read: a neighbour it no longer lists (a
/// recabled node, a NIC gone) keeps its old series in the store but is no link now.
pub(crate) fn newest_neighbors(store: &Store) -> Vec<&crate::metrics::store::Series> {
    let mut newest: HashMap<SourceId, Ts> = HashMap::new();
    for (_, s) in store.select(LINK_NEIGHBOR_INFO, &[]) {
        if let Some(t) = s.last_seen(store) {
            let e = newest.entry(s.source).or_insert(t);
            *e = (*e).max(t);
        }
    }
    store
        .select(LINK_NEIGHBOR_INFO, &[])
        .map(|(_, s)| s)
        .filter(|s| s.last_seen(store) == newest.get(&s.source).copied())
        .collect()
}

/// Configured names by the host name LLDP may give for them (`ubunturdma1.lab.local` is
/// `ubunturdma1`; names compare without case), for the lookup of every LLDP neighbour: a scan of
/// the config for each one was quadratic at a thousand nodes.
pub(crate) struct Names<'a> {
    by_short: HashMap<String, &'a str>,
}

impl<'a> Names<'a> {
    /// The first of `names` wins where two have one host name.
    pub(crate) fn of(names: impl Iterator<Item = &'a str>) -> Names<'a> {
        let mut by_short = HashMap::new();
        for n in names {
            by_short.entry(short(n)).or_insert(n);
        }
        Names { by_short }
    }

    pub(crate) fn switches(cfg: &'a Config) -> Names<'a> {
        Names::of(cfg.switches.iter().map(|s| s.name.as_str()))
    }

    pub(crate) fn nodes(cfg: &'a Config) -> Names<'a> {
        Names::of(cfg.nodes.iter().map(|n| n.name.as_str()))
    }

    /// The configured name that `lldp` means.
    pub(crate) fn get(&self, lldp: &str) -> Option<&'a str> {
        self.by_short.get(&short(lldp)).copied()
    }
}

type Link = (String, String, String);

/// `ubunturdma1.lab.local` and `UbuntuRDMA1` alike: `ubunturdma1`.
fn short(s: &str) -> String {
    s.split('.').next().unwrap_or(s).to_ascii_lowercase()
}

/// Every LLDP neighbour sample in the store, read once: what nodes said (by node name) and what
/// switches said (by the short name they saw), so pairing N nodes costs one pass, not N.
struct Seen {
    by_node: HashMap<String, Vec<Link>>,
    by_switch: HashMap<String, Vec<Link>>,
}

impl Seen {
    fn of(cfg: &Config, store: &Store) -> Seen {
        let switches = Names::switches(cfg);
        // The configured switch that LLDP's system name means, else the name as LLDP gave it.
        let switch_name = |lldp: &str| switches.get(lldp).unwrap_or(lldp).to_string();
        let mut seen = Seen {
            by_node: HashMap::new(),
            by_switch: HashMap::new(),
        };
        for s in newest_neighbors(store) {
            let l = |k: &str| s.key.label(k).unwrap_or("").to_string();
            let (n, netdev, sw, port) = (l("node"), l("netdev"), l("switch"), l("port"));
            match s.key.label("side") {
                Some("node") => seen.by_node.entry(n).or_default().push((
                    netdev,
                    switch_name(&sw),
                    normalize_port(&port),
                )),
                // The switch sees the node by its system name and the netdev by its port id.
                Some("switch") => seen
                    .by_switch
                    .entry(short(&n))
                    .or_default()
                    .push((netdev, sw, port)),
                _ => {}
            }
        }
        seen
    }

    fn links(&self, node: &str) -> Vec<Link> {
        let mut out: Vec<Link> = self.by_node.get(node).cloned().unwrap_or_default();
        // The node names its netdev; the switch may only know a MAC for it: the node's word first.
        for l in self.by_switch.get(&short(node)).into_iter().flatten() {
            if !out.iter().any(|o| o.1 == l.1 && o.2 == l.2) {
                out.push(l.clone());
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Every (netdev, switch, port) LLDP reports for `node`, from the node's lldpctl and from the
/// switches' neighbour tables, without duplicates.
pub fn lldp_links(cfg: &Config, store: &Store, node: &str) -> Vec<Link> {
    Seen::of(cfg, store).links(node)
}

/// A `switch_port` as the config would say it: bare with one switch, `leaf2:Ethernet1/1/2` with
/// more (where a bare name could mean either leaf).
pub fn said(cfg: &Config, switch: &str, port: &str) -> String {
    if cfg.switches.len() > 1 && cfg.switches.iter().any(|s| s.name == switch) {
        format!("{switch}:{port}")
    } else {
        port.to_string()
    }
}

/// Pair every configured node; the second list holds where LLDP and config disagree.
pub fn pairs(cfg: &Config, store: &Store) -> (Vec<Pair>, Vec<Disagreement>) {
    let seen = Seen::of(cfg, store);
    let mut out = Vec::new();
    let mut disagree = Vec::new();
    for n in &cfg.nodes {
        let links = seen.links(&n.name);
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
        // Validation resolved the switch (named, or the one listing the port).
        let switch = n.switch.clone().unwrap_or_default();
        // The same port name on another leaf is another port.
        let agreeing: Vec<&(String, String, String)> = links
            .iter()
            .filter(|(_, sw, p)| *p == cp && (switch.is_empty() || *sw == switch))
            .collect();
        if !links.is_empty() && agreeing.is_empty() {
            disagree.push(Disagreement {
                node: n.name.clone(),
                config_switch: switch.clone(),
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

/// Which nodes are behind which switch port, as the tabs, alerts and episodes ask it: the pairs
/// of [`pairs`] indexed by port. Built by `App::update` when LLDP answers arrive (and from the
/// config alone before), so a frame never pairs anything itself.
#[derive(Clone, Debug, Default)]
pub struct Links {
    pub pairs: Vec<Pair>,
    pub disagreements: Vec<Disagreement>,
    /// port → (switch, node, from), matched on switch and port (leaves share port names); a
    /// config pair whose switch the config does not know is matched on its port alone.
    by_port: HashMap<String, Vec<(String, String, From)>>,
    /// Never the same for two pairings made in a process ([`Links::generation`]).
    generation: u64,
}

impl Links {
    /// Pair the config's nodes with what the store holds of LLDP.
    pub fn of(cfg: &Config, store: &Store) -> Links {
        let (pairs, disagreements) = pairs(cfg, store);
        let mut by_port: HashMap<String, Vec<(String, String, From)>> = HashMap::new();
        // In config order, so "nodes behind" lists read as the config lists them.
        for n in &cfg.nodes {
            for p in pairs.iter().filter(|p| p.node == n.name) {
                let v = by_port.entry(p.port.clone()).or_default();
                if !v
                    .iter()
                    .any(|(sw, node, _)| *sw == p.switch && *node == p.node)
                {
                    v.push((p.switch.clone(), p.node.clone(), p.from));
                }
            }
        }
        Links {
            pairs,
            disagreements,
            by_port,
            generation: crate::metrics::store::next_generation(),
        }
    }

    /// Which pairing this is: what was made from one (a layout's names of the nodes behind a
    /// port, an episode's story) holds while it stays.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The config's `switch_port`s alone (no LLDP read yet).
    pub fn from_config(cfg: &Config) -> Links {
        Links::of(cfg, &Store::new(1, 1))
    }

    /// The nodes cabled to `port` of `switch`, each once.
    pub fn behind(&self, switch: &str, port: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (sw, node, from) in self.by_port.get(port).into_iter().flatten() {
            let here = sw == switch || (*from == From::Config && sw.is_empty());
            if here && !out.contains(&node.as_str()) {
                out.push(node);
            }
        }
        out
    }

    /// The ports `node` is paired with (config, else LLDP), each once, in order.
    pub fn ports_of(&self, node: &str) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for p in self.pairs.iter().filter(|p| p.node == node) {
            if !out.contains(&p.port.as_str()) {
                out.push(&p.port);
            }
        }
        out
    }

    /// The nodes behind `port` of `switch`, owned (for episode chains and text).
    pub fn behind_names(&self, switch: &str, port: &str) -> Vec<String> {
        self.behind(switch, port)
            .into_iter()
            .map(str::to_string)
            .collect()
    }
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

    /// A configured name is found by the names LLDP gives for it (any case, with a domain), the
    /// first configured of two with one host name, and nothing else.
    #[test]
    fn names_are_found_by_host_name() {
        let names = Names::of(["leaf1", "Spine1.dc", "gpu01", "LEAF1"].into_iter());
        let table = [
            ("leaf1", Some("leaf1")),
            ("LEAF1.fabric.local", Some("leaf1")),
            ("spine1", Some("Spine1.dc")),
            ("SPINE1.other", Some("Spine1.dc")),
            ("gpu01.lab", Some("gpu01")),
            ("gpu1", None),
            ("leaf", None),
            ("", None),
        ];
        for (lldp, want) in table {
            assert_eq!(names.get(lldp), want, "{lldp:?}");
        }
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
    fn a_neighbour_missing_from_the_newest_read_is_forgotten() {
        let cfg = cfg("[[node]]\nname = \"gpu1\"\nhost = \"127.0.0.1\"\n");
        let mut store = Store::new(600_000, 16);
        let id = store.add_source("gpu1 topology", 300_000);
        let read = |port: &str| {
            parse(
                ParseKind::Lldpctl,
                &format!("lldp.ens1f0.chassis.name=leaf1\nlldp.ens1f0.port.ifname={port}\n"),
                &Ctx::named("gpu1"),
            )
        };
        store.ingest(id, 1_000, &read("Ethernet1/1/3"));
        assert_eq!(pairs(&cfg, &store).0[0].port, "Ethernet1/1/3");
        // Recabled: the next read sees another port; the old series is still in the store.
        store.ingest(id, 301_000, &read("Ethernet1/1/4"));
        let (p, _) = pairs(&cfg, &store);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].port, "Ethernet1/1/4");
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

    /// Two leaves share port names: a config pair is the named leaf's alone, and LLDP putting the
    /// node on the same port name of the other leaf is a disagreement, said with both switches.
    #[test]
    fn the_same_port_name_on_another_leaf_is_another_port() {
        let text = "[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\nports = [\"Ethernet1/1/1-4\"]\n[[switch]]\nname = \"leaf2\"\nhost = \"127.0.0.1\"\nos = \"eos\"\nports = [\"Ethernet1/1/1-4\"]\n[[node]]\nname = \"gpu1\"\nhost = \"127.0.0.1\"\nswitch_port = \"leaf1:Ethernet1/1/2\"\n[[node]]\nname = \"gpu5\"\nhost = \"127.0.0.1\"\nswitch_port = \"leaf2:Ethernet1/1/2\"\n";
        let cfg = Config::from_str(text, "t.toml", None).expect("config");
        let links = Links::from_config(&cfg);
        assert_eq!(links.behind("leaf1", "Ethernet1/1/2"), ["gpu1"]);
        assert_eq!(links.behind("leaf2", "Ethernet1/1/2"), ["gpu5"]);
        // gpu1's lldpd sees leaf2's Ethernet1/1/2: the port name agrees, the switch does not.
        let store = store_with(&[(
            "gpu1",
            ParseKind::Lldpctl,
            "lldp.ens1f0.chassis.name=leaf2\nlldp.ens1f0.port.ifname=Ethernet1/1/2\n",
        )]);
        let (_, disagree) = pairs(&cfg, &store);
        assert_eq!(
            disagree,
            [Disagreement {
                node: "gpu1".into(),
                config_switch: "leaf1".into(),
                config_port: "Ethernet1/1/2".into(),
                lldp: vec![("ens1f0".into(), "leaf2".into(), "Ethernet1/1/2".into())],
            }]
        );
        assert_eq!(said(&cfg, "leaf1", "Ethernet1/1/2"), "leaf1:Ethernet1/1/2");
        let proof = crate::app::lossless::prove(&cfg, &store);
        let f = proof.findings.first().expect("a finding");
        assert_eq!(
            f.problem,
            "config says switch_port = \"leaf1:Ethernet1/1/2\", LLDP says ens1f0 ↔ leaf2 Ethernet1/1/2"
        );
        assert!(
            f.fix
                .starts_with("set switch_port = \"leaf2:Ethernet1/1/2\" for gpu1"),
            "{}",
            f.fix
        );
    }
}
