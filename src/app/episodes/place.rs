//! Where a signal is, and where an episode is: the detector keeps separate places in separate
//! episodes (docs/user-guide.md, "Episodes"). A place is a switch port and the nodes the pairing
//! puts behind it; the fabric's links (which port pauses which) would make it finer.

use super::{Episode, Layer, Obs, STAND_RATIO, port_of, switch_of};
use crate::app::pairing::Links;

/// Where one abnormal signal is.
#[derive(Debug, PartialEq)]
pub(super) enum Spot {
    /// Fabric-wide (step, all-reduce, ECN, CNP): nowhere in particular.
    Wide,
    /// A port with nodes behind it (its drops, its PFC), or a paused node (and the ports the
    /// map puts it on): where a congestion point shows.
    At {
        ports: Vec<(String, String)>,
        nodes: Vec<String>,
    },
    /// A switch's internal or uplink port (no node behind it): a storm's spread on that switch.
    Switch(String),
    /// An RTT pair: the nodes its key names.
    Pair(Vec<String>),
}

impl Spot {
    /// The place of the signal `key` of `layer` (`pfc <switch> <port>`, `drop <switch> <port>
    /// <reason>`, `pause <node>`, `rtt <words>`, ...).
    pub(super) fn of(layer: Layer, key: &str, links: &Links) -> Spot {
        let port = |sw: &str, port: &str| {
            let nodes = links.behind_names(sw, port);
            (nodes, vec![(sw.to_string(), port.to_string())])
        };
        match layer {
            Layer::Training | Layer::Ecn => Spot::Wide,
            Layer::Drops => {
                let (nodes, ports) = port(switch_of(key), port_of(key));
                Spot::At { ports, nodes }
            }
            Layer::Pfc => match port(switch_of(key), port_of(key)) {
                (nodes, _) if nodes.is_empty() => Spot::Switch(switch_of(key).to_string()),
                (nodes, ports) => Spot::At { ports, nodes },
            },
            Layer::HostPause => {
                let node = key.trim_start_matches("pause ");
                let ports = (links.pairs.iter())
                    .filter(|p| p.node == node)
                    .map(|p| (p.switch.clone(), p.port.clone()))
                    .collect();
                Spot::At {
                    ports,
                    nodes: vec![node.to_string()],
                }
            }
            Layer::Rtt => Spot::Pair(key.split(' ').skip(1).map(str::to_string).collect()),
        }
    }
}

/// Where an open episode is: its culprit port and the nodes behind it; with none named, the
/// ports its congestion is spread over (or the node paused most, where no switch was read).
/// Empty (`any`) before any of that is known: it takes whatever comes.
#[derive(Debug, Default)]
pub(super) struct Place {
    ports: Vec<(String, String)>,
    nodes: Vec<String>,
    switches: Vec<String>,
}

impl Place {
    pub(super) fn of(ep: &Episode, links: &Links) -> Place {
        let mut ports: Vec<(String, String)> = match &ep.culprit {
            Some(c) => vec![c.clone()],
            None => (ep.spread.iter())
                .map(|s| (s.switch.clone(), s.port.clone()))
                .collect(),
        };
        let mut nodes = ep.culprit_nodes.clone();
        for (sw, port) in &ports {
            for n in links.behind(sw, port) {
                if !nodes.iter().any(|m| m == n) {
                    nodes.push(n.to_string());
                }
            }
        }
        if ports.is_empty() {
            // The node paused most (no switch read): the ports the map puts it on.
            for p in links.pairs.iter().filter(|p| nodes.contains(&p.node)) {
                ports.push((p.switch.clone(), p.port.clone()));
            }
        }
        let mut switches: Vec<String> = Vec::new();
        for (sw, _) in &ports {
            if !switches.contains(sw) {
                switches.push(sw.clone());
            }
        }
        Place {
            ports,
            nodes,
            switches,
        }
    }

    /// Whether anything is known of where it is.
    pub(super) fn known(&self) -> bool {
        !self.ports.is_empty() || !self.nodes.is_empty()
    }

    /// Whether a signal at `spot` is at this place: the same port or a node in common; an
    /// internal port on its switch; an RTT pair with one of its nodes. A place not known yet
    /// touches everything; a fabric-wide signal touches nothing.
    pub(super) fn touches(&self, spot: &Spot) -> bool {
        let node = |n: &String| self.nodes.contains(n);
        match spot {
            Spot::Wide => false,
            _ if !self.known() => true,
            Spot::At { ports, nodes } => {
                ports.iter().any(|p| self.ports.contains(p)) || nodes.iter().any(node)
            }
            Spot::Switch(sw) => self.switches.contains(sw),
            Spot::Pair(nodes) => nodes.iter().any(node),
        }
    }
}

/// Whether the place of the signals `spots` stands out as a congestion point of its own at `o`,
/// beside the open episodes whose onset peaks are `onsets` (by signal key): one of its ports
/// sends [`STAND_RATIO`] times the pauses the median other edge port of its switch sends, or one
/// of its nodes is paused that many times the median other node (a storm's backpressure pauses
/// every sender alike; a congestion point's own, more), with none of that signal's ports and
/// nodes below that many times what an open episode's onset made of it (a port the first storm
/// already paused that hard is that storm's, whatever drops there later).
pub(super) fn stands_out<'s>(
    spots: impl Iterator<Item = &'s Spot>,
    o: &Obs,
    links: &Links,
    onsets: &[&rustc_hash::FxHashMap<String, f64>],
) -> bool {
    let above = |mine: f64, others: Vec<f64>| mine > 0.0 && mine >= STAND_RATIO * median(others);
    let risen = |key: String, mine: f64| {
        (onsets.iter())
            .filter_map(|m| m.get(&key))
            .all(|peak| mine >= STAND_RATIO * peak)
    };
    // A signal's place stands out where it has risen everywhere (its port and its nodes) and is
    // above the rest somewhere.
    spots.into_iter().any(|spot| {
        let Spot::At { ports, nodes } = spot else {
            return false;
        };
        let mut above_rest = false;
        for (sw, port) in ports {
            let edge =
                (o.pfc.iter()).filter(|p| p.switch == *sw && !links.behind(sw, &p.port).is_empty());
            let Some(mine) = edge.clone().find(|p| p.port == *port) else {
                continue;
            };
            if !risen(format!("pfc {sw} {port}"), mine.rx + mine.tx) {
                return false;
            }
            let others = edge.filter(|p| p.port != *port).map(|p| p.tx).collect();
            above_rest |= above(mine.tx, others);
        }
        for n in nodes {
            let Some(mine) = o.pause.iter().find(|p| p.0 == *n).map(|p| p.1) else {
                continue;
            };
            if !risen(format!("pause {n}"), mine) {
                return false;
            }
            let others = (o.pause.iter())
                .filter(|p| p.0 != *n)
                .map(|p| p.1)
                .collect();
            above_rest |= above(mine, others);
        }
        above_rest
    })
}

/// The median of `v` (0 for none: alone, anything stands out).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
