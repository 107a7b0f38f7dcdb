//! The PFC pause tree: who pauses whom across the fabric, and where it starts. An edge "A pauses
//! B" is a link whose A end sends pause frames to B (A's switch counts them sent on its port, B's
//! switch counts them received, or a host's NIC counts its pause time). Walking the edges back
//! from the paused hosts ends at a root:
//!
//! - a switch that sends pauses while nobody pauses it: congestion at one of its egresses, the
//!   one pressed hardest (drops and ECN marks) that receives no pauses itself (where none is
//!   pressed, the one cabled port it does not pause while pausing all others): toward a host that
//!   is incast, toward another switch an ECMP collision (its other uplinks idle) or a slow link;
//! - a host NIC sending pauses itself: a slow receiver, or a pause storm (what the PFC watchdog
//!   catches) where it pauses nearly all the time;
//! - where the walk cannot go on: a port without pause counters (unknown, never "not paused"),
//!   a port whose neighbour no LLDP or config names, a neighbour that is not polled.
//!
//! A cycle of switches pausing each other is a PFC deadlock, said as one. Pure: the graph and the
//! rates in, the tree out; `App::update` makes it on the evaluation's rates, once a second.

pub mod text;

use super::{Device, End, Fabric, Kind, PortKey};
use crate::parse::switch::{PortClass, port_class};
use std::collections::{HashMap, HashSet};

/// Pause frames per second below this are a quiet port (counters tick now and then).
pub const MIN_FRAMES: f64 = 1.0;
/// A host paused less than this share of the interval is not paused.
pub const MIN_SHARE: f64 = 0.001;
/// A host NIC pausing its switch less than this share of the time is no cause: NICs send a few
/// pauses now and then.
pub const HOST_MIN_SHARE: f64 = 0.01;
/// A host NIC pausing its switch this share of the time or more is in a pause storm.
pub const STORM_SHARE: f64 = 0.9;

/// A switch port's PFC frames per second as the switch counts them, and how hard its egress is
/// pressed; `None` where it has no counters of that.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PortPause {
    /// Received: the neighbour pauses this switch.
    pub rx: Option<f64>,
    /// Sent: this switch pauses the neighbour.
    pub tx: Option<f64>,
    /// The port's queue drops and ECN marks per second.
    pub load: Option<f64>,
}

/// A host's pause time as a share of the newest interval (0..1), worst netdev.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HostPause {
    /// Paused by its switch.
    pub rx: Option<f64>,
    /// Pausing its switch.
    pub tx: Option<f64>,
}

/// A host NIC, as its pause-time counters key it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NicKey {
    pub node: String,
    pub netdev: String,
}

/// What the tree is made of.
pub struct Input<'a> {
    pub fabric: &'a Fabric,
    pub ports: &'a HashMap<PortKey, PortPause>,
    pub hosts: &'a HashMap<String, HostPause>,
    /// Each NIC's own pause time, where counted. A node with NICs on several switches (rails)
    /// is paused on one rail while the other flows: the node's worst NIC, said of every link of
    /// it, would have each of its switches pause it.
    pub nics: &'a HashMap<NicKey, HostPause>,
}

/// How hard an edge pauses.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// Pause frames per second (a switch's counters).
    PerSec(f64),
    /// Share of the time paused (a host NIC's pause duration, where no switch counts it).
    Share(f64),
}

/// `pauser` sends pauses to `paused`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Edge {
    pub pauser: End,
    pub paused: End,
    pub rate: Rate,
}

/// Why pausing starts where it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The congested egress faces a host: many senders to one receiver.
    Incast,
    /// The congested egress is one of several uplinks, the others not pressed.
    EcmpCollision,
    /// The congested egress is an uplink and so are the others, or it is the only one.
    SlowLink,
    /// The congested egress faces a neighbour no LLDP or config names.
    Egress,
    /// The switch pauses while nothing pauses it, no port counts drops or marks to say which
    /// egress is congested, and its pausing spares not one port alone.
    EgressUnknown,
    /// A host NIC pauses its switch: it cannot take what arrives.
    SlowReceiver,
    /// A host NIC pauses its switch nearly all the time.
    PauseStorm,
    /// The walk stops at a link without pause counters: whether it pauses is unknown.
    NoCounters,
    /// Pauses arrive on a port whose neighbour no LLDP or config names.
    NoLink,
    /// Pauses come from a neighbour that is not polled.
    NotPolled,
}

impl Cause {
    /// The walk stopped where pausing is not known (no counters, no link, not polled): where
    /// it came from is not said, only where it was last seen.
    pub fn unknown_beyond(self) -> bool {
        matches!(self, Cause::NoCounters | Cause::NoLink | Cause::NotPolled)
    }

    pub fn words(self) -> &'static str {
        match self {
            Cause::Incast => "incast",
            Cause::EcmpCollision => "ECMP collision",
            Cause::SlowLink => "slow link",
            Cause::Egress => "congested egress",
            Cause::EgressUnknown => "congested egress not known",
            Cause::SlowReceiver => "slow receiver",
            Cause::PauseStorm => "NIC pause storm",
            Cause::NoCounters => "no pause counters",
            Cause::NoLink => "neighbour not in LLDP",
            Cause::NotPolled => "neighbour not polled",
        }
    }
}

/// Where pausing starts.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Root {
    /// The device (a switch's congested port, a host's NIC) where it starts.
    pub at: End,
    /// What that port faces (the incast host, the uplink's far end), where known.
    pub toward: Option<End>,
    pub cause: Cause,
    /// Switches the pausing spreads to, by hops from the root (the root's own first).
    pub spread: Vec<Vec<String>>,
    /// Hosts paused downstream of it.
    pub hosts: Vec<String>,
}

/// A link the walk could not judge.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Unknown {
    pub at: End,
    pub toward: End,
    pub why: Cause,
}

#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PauseTree {
    /// Every edge, pauser order.
    pub edges: Vec<Edge>,
    /// Most hosts reached first.
    pub roots: Vec<Root>,
    /// Hosts something pauses.
    pub paused_hosts: Vec<String>,
    /// Devices pausing each other in a cycle: a PFC deadlock.
    pub deadlocks: Vec<Vec<String>>,
    /// Links next to pausing devices whose pausing is not counted.
    pub unknown: Vec<Unknown>,
}

/// What one direction of a link says: the frames and shares counted, if any were.
#[derive(Default)]
struct Evidence {
    frames: Option<f64>,
    share: Option<f64>,
}

impl Evidence {
    fn known(&self) -> bool {
        self.frames.is_some() || self.share.is_some()
    }
    fn rate(&self) -> Option<Rate> {
        match (self.frames, self.share) {
            (Some(f), _) if f >= MIN_FRAMES => Some(Rate::PerSec(f)),
            (_, Some(s)) if s >= MIN_SHARE => Some(Rate::Share(s)),
            _ => None,
        }
    }
    fn frames(&mut self, v: Option<f64>) {
        if let Some(v) = v {
            self.frames = Some(self.frames.map_or(v, |f| f.max(v)));
        }
    }
    fn share(&mut self, v: Option<f64>) {
        if let Some(v) = v {
            self.share = Some(self.share.map_or(v, |s| s.max(v)));
        }
    }
}

impl PauseTree {
    pub fn of(input: &Input<'_>) -> PauseTree {
        let Input {
            fabric,
            ports,
            hosts,
            nics,
        } = *input;
        // Looked up by borrowed names: four lookups a link, none allocating.
        let by_name: HashMap<(&str, &str), &PortPause> = (ports.iter())
            .map(|(k, p)| ((k.switch.as_str(), k.port.as_str()), p))
            .collect();
        let port = |e: &End| match e.device.kind {
            Kind::Switch => by_name
                .get(&(e.device.name.as_str(), e.port.as_str()))
                .copied(),
            _ => None,
        };
        let by_nic: HashMap<(&str, &str), &HostPause> = (nics.iter())
            .map(|(k, p)| ((k.node.as_str(), k.netdev.as_str()), p))
            .collect();
        // The NIC's own figures; the node's where it has none per NIC.
        let host = |e: &End| match e.device.kind {
            Kind::Host => {
                let own = by_nic.get(&(e.device.name.as_str(), e.port.as_str()));
                own.copied().or_else(|| hosts.get(&e.device.name))
            }
            _ => None,
        };
        // What says `x` pauses `y`: x's switch sending, y's receiving, the hosts' pause time.
        let says = |x: &End, y: &End| {
            let mut ev = Evidence::default();
            // A host's own pause time says how much it pauses; the switch's frames only count
            // where the NIC has no such counter.
            if let Some(s) = host(x).and_then(|h| h.tx) {
                if s < HOST_MIN_SHARE {
                    ev.share = Some(0.0);
                    return ev;
                }
            }
            ev.frames(port(x).and_then(|p| p.tx));
            ev.frames(port(y).and_then(|p| p.rx));
            ev.share(host(x).and_then(|h| h.tx));
            ev.share(host(y).and_then(|h| h.rx));
            ev
        };
        let mut edges = Vec::new();
        let mut unjudged: Vec<(End, End)> = Vec::new();
        for l in &fabric.links {
            for (x, y) in [(&l.a, &l.b), (&l.b, &l.a)] {
                let ev = says(x, y);
                match ev.rate() {
                    Some(rate) => edges.push(Edge {
                        pauser: x.clone(),
                        paused: y.clone(),
                        rate,
                    }),
                    None if !ev.known() => unjudged.push((x.clone(), y.clone())),
                    None => {}
                }
            }
        }
        // Ports with counters the graph has no link for: what is beyond them is unknown. An
        // internal port's received pauses are the switch's own chips asking each other (no
        // device outside pauses it); what it sends spreads inside the switch.
        let mut lonely: Vec<(&PortKey, &PortPause)> = (ports.iter())
            .filter(|(k, _)| fabric.at_key(k).next().is_none())
            .collect();
        lonely.sort_by(|a, b| a.0.cmp(b.0));
        for (k, p) in lonely {
            let near = End::new(Device::switch(&k.switch), &k.port);
            let far = End::new(Device::beyond(&k.switch, &k.port), "");
            let rate = |v: Option<f64>| v.filter(|v| *v >= MIN_FRAMES).map(Rate::PerSec);
            if let Some(rate) = rate(p.tx) {
                edges.push(Edge {
                    pauser: near.clone(),
                    paused: far.clone(),
                    rate,
                });
            }
            let internal = port_class(&k.port) == PortClass::Internal;
            if let Some(rate) = rate(p.rx).filter(|_| !internal) {
                edges.push(Edge {
                    pauser: far,
                    paused: near,
                    rate,
                });
            }
        }
        // A paused host the graph has no link for: paused by something unknown.
        let mut names: Vec<&String> = hosts.keys().collect();
        names.sort();
        for h in names {
            let rx = hosts[h].rx.filter(|s| *s >= MIN_SHARE);
            if let (Some(s), None) = (rx, fabric.of_host(h).next()) {
                let beyond = Device {
                    kind: Kind::Unknown,
                    name: h.clone(),
                };
                edges.push(Edge {
                    pauser: End::new(beyond, ""),
                    paused: End::new(Device::host(h), ""),
                    rate: Rate::Share(s),
                });
            }
        }
        edges.sort_by(|a, b| (&a.pauser, &a.paused).cmp(&(&b.pauser, &b.paused)));
        Graph::new(edges, ports, hosts, fabric).tree(unjudged)
    }
}

/// The tree as JSON (`snapshot --format json`, the bundle's `fabric.json`): its edges, roots,
/// paused hosts, deadlocks and unknowns, and the sentence an episode says of it.
pub fn json(t: &PauseTree) -> serde_json::Value {
    let mut v = serde_json::to_value(t).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("sentence".into(), text::phrase(t).into());
    }
    v
}

impl Rate {
    /// The rate as a number (frames/s, or share) for ordering.
    pub fn value(self) -> f64 {
        match self {
            Rate::PerSec(v) | Rate::Share(v) => v,
        }
    }
}

/// The edges as a device graph: indices, out- and in-lists.
struct Graph<'a> {
    edges: Vec<Edge>,
    devices: Vec<Device>,
    index: HashMap<Device, usize>,
    out: Vec<Vec<usize>>,
    into: Vec<Vec<usize>>,
    ports: &'a HashMap<PortKey, PortPause>,
    hosts: &'a HashMap<String, HostPause>,
    fabric: &'a Fabric,
}

impl<'a> Graph<'a> {
    fn new(
        edges: Vec<Edge>,
        ports: &'a HashMap<PortKey, PortPause>,
        hosts: &'a HashMap<String, HostPause>,
        fabric: &'a Fabric,
    ) -> Graph<'a> {
        let mut g = Graph {
            fabric,
            hosts,
            edges: Vec::new(),
            devices: Vec::new(),
            index: HashMap::new(),
            out: Vec::new(),
            into: Vec::new(),
            ports,
        };
        for (i, e) in edges.iter().enumerate() {
            let a = g.id(&e.pauser.device);
            let b = g.id(&e.paused.device);
            g.out[a].push(i);
            g.into[b].push(i);
        }
        g.edges = edges;
        g
    }

    fn id(&mut self, d: &Device) -> usize {
        if let Some(i) = self.index.get(d) {
            return *i;
        }
        let i = self.devices.len();
        self.devices.push(d.clone());
        self.index.insert(d.clone(), i);
        self.out.push(Vec::new());
        self.into.push(Vec::new());
        i
    }

    fn tree(self, unjudged: Vec<(End, End)>) -> PauseTree {
        let in_tree = |d: &Device| self.index.contains_key(d);
        // Only the unjudged links next to the pausing matter: the walk might go on through them.
        let unknown: Vec<Unknown> = (unjudged.into_iter())
            .filter(|(x, y)| in_tree(&x.device) || in_tree(&y.device))
            .map(|(x, y)| Unknown {
                at: y,
                toward: x,
                why: Cause::NoCounters,
            })
            .collect();
        let mut roots = Vec::new();
        for (d, dev) in self.devices.iter().enumerate() {
            // A host NIC sending pauses is a cause whether or not it is paused too: its receive
            // side does not wait on its send side.
            let host = dev.kind == Kind::Host;
            if self.out[d].is_empty() || (!host && !self.into[d].is_empty()) {
                continue;
            }
            // Something may pause it that no counter shows: the walk stops there, unknown.
            if let Some(u) = unknown.iter().find(|u| u.at.device == *dev) {
                roots.push(self.root(d, u.at.clone(), Some(u.toward.clone()), Cause::NoCounters));
                continue;
            }
            let (at, toward, cause) = self.cause(d);
            roots.push(self.root(d, at, toward, cause));
        }
        roots.sort_by(|a, b| (b.hosts.len(), &a.at).cmp(&(a.hosts.len(), &b.at)));
        let mut paused_hosts: Vec<String> = (self.edges.iter())
            .filter(|e| e.paused.device.kind == Kind::Host)
            .map(|e| e.paused.device.name.clone())
            .collect();
        paused_hosts.sort();
        paused_hosts.dedup();
        PauseTree {
            deadlocks: self.cycles(),
            roots,
            paused_hosts,
            unknown,
            edges: self.edges,
        }
    }

    /// Why device `d`, which pauses and is paused by nothing, does.
    fn cause(&self, d: usize) -> (End, Option<End>, Cause) {
        let dev = &self.devices[d];
        let first_out = self.out[d].first().map(|e| &self.edges[*e].pauser);
        let here = first_out
            .cloned()
            .unwrap_or_else(|| End::new(dev.clone(), ""));
        match dev.kind {
            Kind::Host => {
                let own = self.hosts.get(&dev.name).and_then(|h| h.tx);
                let storm = own.is_some_and(|s| s >= STORM_SHARE)
                    || self.out[d].iter().any(|e| match self.edges[*e].rate {
                        Rate::Share(s) => s >= STORM_SHARE,
                        Rate::PerSec(_) => false,
                    });
                let cause = if storm {
                    Cause::PauseStorm
                } else {
                    Cause::SlowReceiver
                };
                let toward = self.out[d].first().map(|e| self.edges[*e].paused.clone());
                (here, toward, cause)
            }
            Kind::Unknown => {
                let near = self.out[d].first().map(|e| self.edges[*e].paused.clone());
                (near.unwrap_or(here), None, Cause::NoLink)
            }
            Kind::Unpolled => {
                let near = self.out[d].first().map(|e| self.edges[*e].paused.clone());
                (here, near, Cause::NotPolled)
            }
            Kind::Switch => self.egress(d),
        }
    }

    /// The congested egress of switch `d`: its most pressed port that is counted and paused by
    /// nothing (a host's few pauses now and then are not pausing, as for the edges); where no
    /// port is pressed, the one port its pausing spares.
    fn egress(&self, d: usize) -> (End, Option<End>, Cause) {
        let sw = self.devices[d].name.as_str();
        let paused: HashSet<&str> = (self.into[d].iter())
            .map(|e| self.edges[*e].paused.port.as_str())
            .collect();
        let mine: Vec<(&PortKey, &PortPause)> = (self.ports.iter())
            .filter(|(k, _)| k.switch == sw)
            .collect();
        let best = (mine.iter())
            .filter(|(k, p)| p.rx.is_some() && !paused.contains(k.port.as_str()))
            .filter_map(|(k, p)| p.load.filter(|l| *l > 0.0).map(|l| (l, *k)))
            .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
            .or_else(|| self.spared(&mine, &paused).map(|k| (0.0, k)));
        let Some((load, k)) = best else {
            return (End::new(Device::switch(sw), ""), None, Cause::EgressUnknown);
        };
        let at = End::new(Device::switch(sw), &k.port);
        let toward = self.facing(&at);
        let cause = match toward.as_ref().map(|e| e.device.kind) {
            Some(Kind::Host) => Cause::Incast,
            Some(Kind::Switch) => {
                // Other uplinks of the same switch, pressed less than half as hard: ECMP put the
                // flows on this one.
                let others = (mine.iter())
                    .filter(|(o, _)| o.port != k.port && self.uplink(o))
                    .count();
                let calm = (mine.iter())
                    .filter(|(o, p)| {
                        o.port != k.port && self.uplink(o) && p.load.unwrap_or(0.0) < load / 2.0
                    })
                    .count();
                if others > 0 && calm == others {
                    Cause::EcmpCollision
                } else {
                    Cause::SlowLink
                }
            }
            _ => Cause::Egress,
        };
        (at, toward, cause)
    }

    /// Where no port counts drops or marks: the one cabled port of a switch that it does not
    /// pause while it pauses every other cabled port. A switch pauses the ingresses that feed its
    /// congested egress; the egress's own ingress feeds it not, so it is the port spared. Where
    /// its uplinks pause nothing, the same among its host ports: the senders are all on this
    /// switch (nodes of one pod over one rail), no uplink feeds the egress, and the receiver's
    /// port is the one host port spared. None where more than one is spared (the pausing says no
    /// more) or too few are paused.
    fn spared<'p>(
        &self,
        mine: &[(&'p PortKey, &PortPause)],
        paused: &HashSet<&str>,
    ) -> Option<&'p PortKey> {
        let cabled: Vec<&(&PortKey, &PortPause)> = (mine.iter())
            .filter(|(k, _)| self.fabric.at_key(k).next().is_some())
            .collect();
        let sends = |p: &PortPause| p.tx.is_some_and(|t| t >= MIN_FRAMES);
        let one_spared = |among: &[&(&'p PortKey, &PortPause)]| {
            let pausing = among.iter().filter(|(_, p)| sends(p)).count();
            let mut spared = (among.iter())
                .filter(|(k, p)| p.tx.is_some() && !sends(p) && !paused.contains(k.port.as_str()));
            let one = spared.next()?;
            let all_others = pausing + 1 == among.len();
            (spared.next().is_none() && all_others && pausing >= 2).then_some(one.0)
        };
        one_spared(&cabled).or_else(|| {
            let (up, host): (Vec<&(&PortKey, &PortPause)>, Vec<_>) =
                cabled.iter().copied().partition(|(k, _)| self.uplink(k));
            let quiet_uplinks = up
                .iter()
                .all(|(k, p)| !sends(p) && !paused.contains(k.port.as_str()));
            if up.is_empty() || !quiet_uplinks {
                return None;
            }
            one_spared(&host)
        })
    }

    /// What switch port `at` faces, from the graph's links.
    fn facing(&self, at: &End) -> Option<End> {
        (self.fabric.at(&at.device.name, &at.port))
            .find_map(|l| l.far(at))
            .cloned()
    }

    fn uplink(&self, k: &PortKey) -> bool {
        let at = End::new(Device::switch(&k.switch), &k.port);
        self.facing(&at)
            .is_some_and(|e| e.device.kind == Kind::Switch)
    }

    /// A root at `d`, with the switches and hosts its pausing reaches.
    fn root(&self, d: usize, at: End, toward: Option<End>, cause: Cause) -> Root {
        let mut seen = HashSet::from([d]);
        let mut level = vec![d];
        let mut spread = Vec::new();
        let mut hosts = Vec::new();
        while !level.is_empty() {
            let names: Vec<String> = (level.iter())
                .filter(|i| self.devices[**i].kind == Kind::Switch)
                .map(|i| self.devices[*i].name.clone())
                .collect();
            if !names.is_empty() {
                spread.push(names);
            }
            let mut next = Vec::new();
            for i in &level {
                for e in &self.out[*i] {
                    let to = self.index[&self.edges[*e].paused.device];
                    if seen.insert(to) {
                        next.push(to);
                        if self.devices[to].kind == Kind::Host {
                            hosts.push(self.devices[to].name.clone());
                        }
                    }
                }
            }
            next.sort_by(|a, b| self.devices[*a].cmp(&self.devices[*b]));
            level = next;
        }
        hosts.sort();
        Root {
            at,
            toward,
            cause,
            spread,
            hosts,
        }
    }

    /// The cycles of the graph (strongly connected parts of two or more devices), Tarjan's walk
    /// without recursion.
    fn cycles(&self) -> Vec<Vec<String>> {
        let n = self.devices.len();
        let mut index = vec![usize::MAX; n];
        let mut low = vec![0; n];
        let mut on = vec![false; n];
        let mut stack = Vec::new();
        let mut next = 0;
        let mut out = Vec::new();
        for s in 0..n {
            if index[s] != usize::MAX {
                continue;
            }
            // (device, its next out-edge to look at)
            let mut walk = vec![(s, 0usize)];
            index[s] = next;
            low[s] = next;
            next += 1;
            stack.push(s);
            on[s] = true;
            while let Some(&mut (v, ref mut k)) = walk.last_mut() {
                if let Some(e) = self.out[v].get(*k) {
                    *k += 1;
                    let w = self.index[&self.edges[*e].paused.device];
                    // A host ends a pause chain: it forwards nothing, so no cycle passes it.
                    if self.devices[w].kind == Kind::Host || self.devices[v].kind == Kind::Host {
                        continue;
                    }
                    if index[w] == usize::MAX {
                        index[w] = next;
                        low[w] = next;
                        next += 1;
                        stack.push(w);
                        on[w] = true;
                        walk.push((w, 0));
                    } else if on[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                walk.pop();
                if let Some(&(u, _)) = walk.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut part = Vec::new();
                    while let Some(w) = stack.pop() {
                        on[w] = false;
                        part.push(w);
                        if w == v {
                            break;
                        }
                    }
                    if part.len() > 1 {
                        out.push(self.round(&part));
                    }
                }
            }
        }
        out.sort();
        out
    }

    /// A cycle's devices in the order the pausing goes round, from the first by name: each next
    /// the first by name it pauses that is not yet named.
    fn round(&self, part: &[usize]) -> Vec<String> {
        let name = |i: usize| &self.devices[i].name;
        let Some(mut at) = part.iter().copied().min_by(|a, b| name(*a).cmp(name(*b))) else {
            return Vec::new();
        };
        let mut order = vec![at];
        loop {
            let next = (self.out[at].iter())
                .map(|e| self.index[&self.edges[*e].paused.device])
                .filter(|w| part.contains(w) && !order.contains(w))
                .min_by(|a, b| name(*a).cmp(name(*b)));
            match next {
                Some(w) => {
                    order.push(w);
                    at = w;
                }
                None => break,
            }
        }
        // Members the walk did not pass (a cycle with branches) follow by name.
        let mut rest: Vec<usize> = part
            .iter()
            .copied()
            .filter(|w| !order.contains(w))
            .collect();
        rest.sort_by(|a, b| name(*a).cmp(name(*b)));
        order.extend(rest);
        order.into_iter().map(|i| name(i).clone()).collect()
    }
}

#[cfg(test)]
mod tests;
