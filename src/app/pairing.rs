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
