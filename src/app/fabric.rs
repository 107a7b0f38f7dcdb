//! The fabric graph: switches and host NICs joined by links, each link with both ends' device and
//! port. Switch↔switch links come from the switches' LLDP tables (each switch's newest answer,
//! both ends merged) and the config's `[[link]]` entries, which win on their ports; host↔switch
//! links are the pairing's (`pairing.rs`). Built by `App::update` when topology answers arrive,
//! never per frame; the PFC tab's pause tree, `snapshot` and the bundle read it.
//!
//! Port names are the parsers' (port-channels, breakouts as normalised); a node with NICs on
//! several switches (rails) has one link per NIC. A port two links claim keeps the word of its own
//! switch; where that switch said nothing, the claim is kept with the far port unknown, and the
//! conflict is said.

pub mod observe;
pub mod pause_tree;

use super::pairing::{Links, Names, newest_neighbors};
use crate::config::Config;
use crate::parse::switch::normalize_port;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What a device of the graph is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Switch,
    /// A configured node (its ports are netdevs).
    Host,
    /// A neighbour LLDP names that is neither a configured switch nor a node: not polled.
    Unpolled,
    /// Beyond a switch port whose neighbour no LLDP answer or config names.
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Device {
    pub kind: Kind,
    /// As configured (switch, node), as LLDP gave it (unpolled), or `switch port` it is beyond
    /// (unknown). Shown through `safe`: LLDP text is remote text.
    pub name: String,
}

impl Device {
    pub fn switch(name: &str) -> Device {
        Device {
            kind: Kind::Switch,
            name: name.to_string(),
        }
    }
    pub fn host(name: &str) -> Device {
        Device {
            kind: Kind::Host,
            name: name.to_string(),
        }
    }
    /// Whatever is beyond `switch`'s `port`.
    pub fn beyond(switch: &str, port: &str) -> Device {
        Device {
            kind: Kind::Unknown,
            name: format!("{switch} {port}"),
        }
    }
}

/// One end of a link: a device and its port (a host's netdev; empty where not known).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct End {
    pub device: Device,
    pub port: String,
}

impl End {
    pub fn new(device: Device, port: &str) -> End {
        End {
            device,
            port: port.to_string(),
        }
    }
}

/// A switch port, as the PFC counters key it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortKey {
    pub switch: String,
    pub port: String,
}

impl PortKey {
    pub fn new(switch: &str, port: &str) -> PortKey {
        PortKey {
            switch: switch.to_string(),
            port: port.to_string(),
        }
    }
}

/// Who said a link exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// A `[[link]]` entry.
    Config,
    /// Switches' LLDP tables: one end's, or both ends agreeing.
    Lldp,
    /// The pairing (config `switch_port`, else LLDP from either end).
    Pairing,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Link {
    pub a: End,
    pub b: End,
    pub via: Via,
}

impl Link {
    /// The end that is not `near` (`None`: `near` is no end of this link).
    pub fn far(&self, near: &End) -> Option<&End> {
        if self.a == *near {
            Some(&self.b)
        } else if self.b == *near {
            Some(&self.a)
        } else {
            None
        }
    }
}

/// A switch port two LLDP answers put on different links.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    pub port: End,
    /// The far ends claiming it.
    pub claims: Vec<End>,
}

/// How many links a new graph has that the old one had not, and the other way round.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Changes {
    pub added: usize,
    pub removed: usize,
}

/// A `[[link]]` end whose own switch's LLDP names another far end: the config wins in the
/// graph, and `check` says the cabling or the config is wrong.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Contradiction {
    pub port: End,
    pub config: End,
    pub lldp: End,
}

/// The graph. Links are sorted; a switch port's links are found through an index.
#[derive(Clone, Debug, Default)]
pub struct Fabric {
    pub links: Vec<Link>,
    pub conflicts: Vec<Conflict>,
    pub contradicted: Vec<Contradiction>,
    /// Switch port → the links it is an end of (a port with several nodes behind it has several).
    by_port: HashMap<PortKey, Vec<usize>>,
    /// Host → its links (one per NIC).
    by_host: HashMap<String, Vec<usize>>,
    /// Switch → the rail all its host ports are on (only where the fabric has several rails).
    rails: HashMap<String, Rail>,
}

/// A rail: the place of a NIC among its node's paired NICs, in netdev order, from 1 (a node's
/// first NIC is on rail 1). A switch is on a rail when every NIC cabled to it has that place; a
/// fabric whose nodes have one NIC each has one rail and no switch is said to be on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rail(pub u32);

impl std::fmt::Display for Rail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rail {}", self.0)
    }
}

/// Two or more NICs of one node cabled to one switch: not rail-cabled (a rail's switch failing
/// takes both).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Doubled {
    pub host: String,
    pub switch: String,
    /// The host's netdevs on it.
    pub netdevs: Vec<String>,
}

/// A switch↔switch link as one switch's LLDP table says it: `near` is that switch's own port.
struct Claim {
    near: End,
    far: End,
}

impl Fabric {
    /// The graph of the config, the store's LLDP answers and the pairing made of them.
    pub fn of(cfg: &Config, store: &crate::metrics::Store, pairing: &Links) -> Fabric {
        let (switches, nodes) = (Names::switches(cfg), Names::nodes(cfg));
        let switch_of = |name: &str| switches.get(name).map(str::to_string);
        let is_node = |name: &str| nodes.get(name).is_some();
        let mut claims = Vec::new();
        for s in newest_neighbors(store) {
            if s.key.label("side") != Some("switch") {
                continue;
            }
            let l = |k: &str| s.key.label(k).unwrap_or("");
            let (Some(near_sw), remote) = (switch_of(l("switch")), l("node")) else {
                continue;
            };
            let near = End::new(Device::switch(&near_sw), l("port"));
            match switch_of(remote) {
                Some(far_sw) if far_sw != near_sw => claims.push(Claim {
                    near,
                    far: End::new(Device::switch(&far_sw), &normalize_port(l("netdev"))),
                }),
                // A switch hearing itself (a loopback cable) is no link of the graph.
                Some(_) => {}
                // The pairing has the nodes.
                None if is_node(remote) => {}
                None => claims.push(Claim {
                    near,
                    far: End::new(
                        Device {
                            kind: Kind::Unpolled,
                            name: remote.to_string(),
                        },
                        l("netdev"),
                    ),
                }),
            }
        }
        let host_links = (pairing.pairs.iter())
            .filter(|p| !p.switch.is_empty())
            .map(|p| Link {
                a: End::new(Device::host(&p.node), &p.netdev),
                b: End::new(Device::switch(&p.switch), &p.port),
                via: Via::Pairing,
            });
        Fabric::build(&cfg.links, claims, host_links.collect())
    }

    /// The config's links and `switch_port`s alone (no topology read yet).
    pub fn from_config(cfg: &Config) -> Fabric {
        let store = crate::metrics::Store::new(1, 1);
        Fabric::of(cfg, &store, &Links::of(cfg, &store))
    }

    /// A graph of these links alone (tests, benchmarks, a hand-built fabric).
    pub fn from_links(links: Vec<Link>) -> Fabric {
        Fabric::build(&[], Vec::new(), links)
    }

    fn build(config: &[crate::config::Link], claims: Vec<Claim>, hosts: Vec<Link>) -> Fabric {
        let end = |sp: &crate::config::SwitchPort| End::new(Device::switch(&sp.switch), &sp.port);
        let mut links: Vec<Link> = (config.iter())
            .map(|l| Link {
                a: end(&l.a),
                b: end(&l.b),
                via: Via::Config,
            })
            .collect();
        let configured: BTreeSet<End> = links
            .iter()
            .flat_map(|l| [l.a.clone(), l.b.clone()])
            .collect();
        let config_far: BTreeMap<&End, &End> = links
            .iter()
            .flat_map(|l| [(&l.a, &l.b), (&l.b, &l.a)])
            .collect();
        let contradicted: Vec<Contradiction> = (claims.iter())
            .filter_map(|c| {
                let far = *config_far.get(&c.near)?;
                (*far != c.far).then(|| Contradiction {
                    port: c.near.clone(),
                    config: far.clone(),
                    lldp: c.far.clone(),
                })
            })
            .collect();
        // The config wins on its ports: LLDP about them (from either end) is not asked.
        let claims: Vec<Claim> = claims
            .into_iter()
            .filter(|c| !configured.contains(&c.near) && !configured.contains(&c.far))
            .collect();
        // Who claims each switch port as its far end, and what its own switch says of it.
        let mut claimed: BTreeMap<&End, BTreeSet<&End>> = BTreeMap::new();
        let own: BTreeMap<&End, &End> = claims.iter().map(|c| (&c.near, &c.far)).collect();
        for c in &claims {
            if c.far.device.kind == Kind::Switch {
                claimed.entry(&c.far).or_default().insert(&c.near);
            }
        }
        let mut conflicts = Vec::new();
        for (port, by) in &claimed {
            let word = own.get(port).copied();
            let agreeing = word.is_some_and(|w| by.contains(w));
            if by.len() > 1 || (word.is_some() && !agreeing) {
                let mut claims: Vec<End> = by.iter().map(|e| (*e).clone()).collect();
                if let Some(w) = word.filter(|w| !by.contains(w)) {
                    claims.push(w.clone());
                }
                conflicts.push(Conflict {
                    port: (*port).clone(),
                    claims,
                });
            }
        }
        let disputed: BTreeSet<&End> = conflicts.iter().map(|c| &c.port).collect();
        let mut seen: BTreeSet<(End, End)> = BTreeSet::new();
        for c in &claims {
            // A disputed far port is kept as "this device, port unknown": the near switch's own
            // word about which device it faces still stands.
            let far = if disputed.contains(&c.far) && own.get(&c.far) != Some(&&c.near) {
                End::new(c.far.device.clone(), "")
            } else {
                c.far.clone()
            };
            let key = if c.near <= far {
                (c.near.clone(), far.clone())
            } else {
                (far.clone(), c.near.clone())
            };
            if seen.insert(key.clone()) {
                links.push(Link {
                    a: key.0,
                    b: key.1,
                    via: Via::Lldp,
                });
            }
        }
        links.extend(hosts);
        links.sort();
        links.dedup();
        let mut by_port: HashMap<PortKey, Vec<usize>> = HashMap::new();
        let mut by_host: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, l) in links.iter().enumerate() {
            for e in [&l.a, &l.b] {
                match e.device.kind {
                    Kind::Switch if !e.port.is_empty() => by_port
                        .entry(PortKey::new(&e.device.name, &e.port))
                        .or_default()
                        .push(i),
                    Kind::Host => by_host.entry(e.device.name.clone()).or_default().push(i),
                    _ => {}
                }
            }
        }
        let rails = rails_of(&links, &by_host);
        Fabric {
            links,
            conflicts,
            contradicted,
            by_port,
            by_host,
            rails,
        }
    }

    /// The rail `switch` is on: `None` for a switch with no host ports, one whose host ports are
    /// NICs of different places (a spine, a switch not rail-cabled) and in a one-rail fabric.
    pub fn rail_of(&self, switch: &str) -> Option<Rail> {
        self.rails.get(switch).copied()
    }

    /// The rail every one of `switches` is on, where they share one (`None` for none given).
    pub fn one_rail<'a>(&self, mut switches: impl Iterator<Item = &'a str>) -> Option<Rail> {
        let first = self.rail_of(switches.next()?)?;
        switches
            .all(|s| self.rail_of(s) == Some(first))
            .then_some(first)
    }

    /// Nodes with two or more NICs on one switch, by host then switch.
    pub fn doubled(&self) -> Vec<Doubled> {
        let mut by: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
        for l in self.links.iter().filter(|l| l.via == Via::Pairing) {
            if l.a.device.kind == Kind::Host && l.b.device.kind == Kind::Switch {
                let at = (l.a.device.name.as_str(), l.b.device.name.as_str());
                by.entry(at).or_default().push(l.a.port.clone());
            }
        }
        by.into_iter()
            .filter(|(_, n)| n.len() > 1)
            .map(|((host, switch), netdevs)| Doubled {
                host: host.to_string(),
                switch: switch.to_string(),
                netdevs,
            })
            .collect()
    }

    /// Each switch's rail, by name (empty where the fabric has one rail).
    pub fn rails(&self) -> std::collections::BTreeMap<String, u32> {
        self.rails.iter().map(|(s, r)| (s.clone(), r.0)).collect()
    }

    /// The far ends of `switch`'s `port` that are switches (polled or not): what an
    /// inter-switch port faces; none for a host port.
    pub fn neighbours<'a>(&'a self, switch: &str, port: &str) -> impl Iterator<Item = &'a End> {
        let near = End::new(Device::switch(switch), port);
        self.at(switch, port)
            .filter_map(move |l| l.far(&near))
            .filter(|far| matches!(far.device.kind, Kind::Switch | Kind::Unpolled))
    }

    /// The links `switch`'s `port` is an end of.
    pub fn at(&self, switch: &str, port: &str) -> impl Iterator<Item = &Link> {
        self.at_key(&PortKey::new(switch, port))
    }

    /// [`Fabric::at`] by key.
    pub fn at_key<'a>(&'a self, k: &PortKey) -> impl Iterator<Item = &'a Link> + use<'a> {
        let ids = self.by_port.get(k).map_or(&[][..], |v| v.as_slice());
        ids.iter().filter_map(|i| self.links.get(*i))
    }

    /// The links of `host` (one per NIC paired).
    pub fn of_host(&self, host: &str) -> impl Iterator<Item = &Link> {
        let ids = self.by_host.get(host).map_or(&[][..], |v| v.as_slice());
        ids.iter().filter_map(|i| self.links.get(*i))
    }

    /// Links in `self` not in `old`, and in `old` not in `self` (how they were learnt aside).
    pub fn changes_since(&self, old: &Fabric) -> Changes {
        let ends = |f: &Fabric| -> BTreeSet<(End, End)> {
            f.links.iter().map(|l| (l.a.clone(), l.b.clone())).collect()
        };
        let (now, was) = (ends(self), ends(old));
        Changes {
            added: now.difference(&was).count(),
            removed: was.difference(&now).count(),
        }
    }

    /// The switch↔switch links (LLDP and config), for `check` and the bundle.
    pub fn switch_links(&self) -> impl Iterator<Item = &Link> {
        self.links.iter().filter(|l| l.via != Via::Pairing)
    }
}

/// Each switch's rail: a host's links are sorted by its netdev, so a NIC's place among them is
/// its rail; a switch whose NICs agree on one place is on that rail. Nothing where no host has
/// two NICs.
fn rails_of(links: &[Link], by_host: &HashMap<String, Vec<usize>>) -> HashMap<String, Rail> {
    let mut seen: HashMap<&str, BTreeSet<Rail>> = HashMap::new();
    let mut most = 0;
    for ids in by_host.values() {
        let nics = ids.iter().filter_map(|i| links.get(*i));
        let mut n = 0;
        for (place, l) in nics.enumerate() {
            let sw = [&l.a, &l.b]
                .into_iter()
                .find(|e| e.device.kind == Kind::Switch);
            if let Some(sw) = sw {
                let rail = Rail(place as u32 + 1);
                seen.entry(sw.device.name.as_str())
                    .or_default()
                    .insert(rail);
            }
            n = place + 1;
        }
        most = most.max(n);
    }
    if most < 2 {
        return HashMap::new();
    }
    seen.into_iter()
        .filter_map(|(sw, r)| match r.iter().collect::<Vec<_>>()[..] {
            [one] => Some((sw.to_string(), *one)),
            _ => None,
        })
        .collect()
}

/// The graph and the pause tree made on it, as the bundle's `fabric.json` holds them.
pub fn json_with_tree(f: &Fabric, t: &pause_tree::PauseTree) -> serde_json::Value {
    let mut v = json(f);
    if let Some(o) = v.as_object_mut() {
        o.insert("pause_tree".into(), pause_tree::json(t));
    }
    v
}

/// The graph as JSON (the bundle's `fabric.json`, `snapshot --format json`). LLDP names are
/// remote text: what prints the document escapes it (`safe::json`).
pub fn json(f: &Fabric) -> serde_json::Value {
    let end = |e: &End| {
        serde_json::json!({
            "device": e.device.name,
            "kind": e.device.kind,
            "port": e.port,
        })
    };
    serde_json::json!({
        "links": f.links.iter().map(|l| serde_json::json!({
            "a": end(&l.a), "b": end(&l.b), "via": l.via,
        })).collect::<Vec<_>>(),
        "conflicts": f.conflicts.iter().map(|c| serde_json::json!({
            "port": end(&c.port),
            "claims": c.claims.iter().map(end).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests;
