//! The fabric demo's physics (`--demo fabric`, docs/topology.md): PFC pauses that travel hop by hop.
//!
//! Every switch port has an egress backlog on the lossless queue. A port whose egress is the
//! injected root (an incast toward a host, a congested spine egress, a deadlocked ring link) is
//! full; any other egress fills while its far end pauses it, to a share of how hard it is paused
//! (each hop passes on less, so the tree thins out two or three hops from its root). A switch sends
//! pauses out of every ingress port that feeds a filled egress (a leaf routes host to host, host to
//! uplink and uplink to host; a spine downlink to downlink), and the far end reacts a step later:
//! with the fill time, a few hundred ms per hop. Hosts never pause back, except the NIC of a pause
//! storm, which pauses its leaf port nonstop. Nothing pauses in between episodes.
//!
//! The episodes, at seeded times and places, every 60 s or so and each kind once in every four:
//! an incast at a leaf egress (root: that leaf port toward the host; half of them with every
//! sender on that leaf, nodes of one pod on one rail, so only that leaf's hosts are paused and the
//! episode stays on one rail), a NIC pause storm (root: the
//! host NIC), a congested spine egress (root: that spine port toward a leaf), and a leaf uplink
//! going down after which a ring of pauses forms among switches and holds until the link returns
//! (root: the cycle). [`Sim::fabric_episodes`] is the truth a pause-tree detector is checked against.

use super::*;
use crate::collect::demo::fabric::{Fabric, Role};

/// Below this backlog an ingress buffer stays under XOFF: no pause.
const XOFF: f64 = 0.3;
/// How much of the pausing a paused egress passes on upstream.
const PASS_ON: f64 = 0.7;
/// Backlog gained per step while paused (XOFF in three steps: with the far end reacting a step
/// later, about 300 ms a hop), lost per step otherwise.
const FILL: f64 = 0.1;
const DRAIN: f64 = 0.3;
/// Pause frames a port sends per step at full pressure (quanta refreshed about every 0.4 ms).
const FRAMES_PER_STEP: f64 = 250.0;
/// WRED on the lossless queue (the demo switches' configs: 150 KB of 3000 KB, at most 7 %): the
/// backlog, as a share of the queue, where marking starts, and the share it marks when full.
const ECN_MIN: f64 = 0.05;
const ECN_MAX_P: f64 = 0.07;
/// Pause frames a storming NIC sends per step: more than any switch port.
const STORM_FRAMES_PER_STEP: f64 = 400.0;
/// Slots of one episode each; the first slot starts here, seconds.
const SLOT_S: i64 = 60;
const FIRST_S: i64 = 20;
/// A deadlock's ring forms this long after its link goes down.
const RING_AFTER_MS: i64 = 1500;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpisodeKind {
    Incast,
    PauseStorm,
    SpineCongestion,
    Deadlock,
}

const KINDS: [EpisodeKind; 4] = [
    EpisodeKind::Incast,
    EpisodeKind::PauseStorm,
    EpisodeKind::SpineCongestion,
    EpisodeKind::Deadlock,
];

/// A node's NIC, by its netdev.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NodeNetdev {
    pub node: String,
    pub netdev: String,
}

/// Where an episode's pauses come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Root {
    /// A switch egress port that is congested itself (never paused by its far end).
    Port(SwitchPort),
    /// A host NIC that sends pauses without being paused.
    Nic(NodeNetdev),
    /// A ring of switch egress ports, each paused by the next (the last by the first): a deadlock.
    Cycle(Vec<SwitchPort>),
}

/// A link that went down, by its two ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkDown {
    pub leaf: SwitchPort,
    pub spine: SwitchPort,
    pub at_ms: i64,
}

/// One episode the fabric simulation injects: from `start_ms` (the root starts pausing) to
/// `end_ms` (it stops; the tree drains within a second or two).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FabricEpisode {
    pub start_ms: i64,
    pub end_ms: i64,
    pub kind: EpisodeKind,
    pub root: Root,
    /// The deadlock's link, down from before `start_ms` until `end_ms`.
    pub link_down: Option<LinkDown>,
    /// An incast whose senders are all on the root's own leaf (nodes of one pod talking over one
    /// rail, which never crosses a spine): the leaf pauses its host ports only, so the episode
    /// stays on one rail.
    pub on_one_leaf: bool,
}

/// A switch port by index into `Sim::switches` and its ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct At {
    switch: usize,
    port: usize,
}

/// What the far end of a switch port is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    Host { node: usize, netdev: usize },
    Switch(At),
}

pub struct Physics {
    fabric: Fabric,
    seed: u64,
    /// Per switch (Sim order): its role, and per port its far end.
    roles: Vec<Role>,
    ends: Vec<Vec<Option<End>>>,
    /// Lossless-queue egress backlog per switch port, 0..=1.
    level: Vec<Vec<f64>>,
    /// How hard each switch port paused its far end last step, 0..=1 (the far end reacts now).
    sending: Vec<Vec<f64>>,
}

impl Physics {
    /// Cable `sim`'s switches and nodes (made from [`Fabric::config_text`]) as `fabric` says, so
    /// LLDP on both ends names each link.
    pub fn new(sim: &mut Sim, fabric: Fabric) -> Physics {
        let find = |sim: &Sim, sp: &SwitchPort| -> Option<At> {
            let switch = sim.switches.iter().position(|s| s.name == sp.switch)?;
            let port = (sim.switches[switch].ports.iter()).position(|p| p.name == sp.port)?;
            Some(At { switch, port })
        };
        let mut ends: Vec<Vec<Option<End>>> = (sim.switches.iter())
            .map(|s| vec![None; s.ports.len()])
            .collect();
        for h in &fabric.hosts {
            let node = sim.nodes.iter().position(|n| n.name == h.node);
            let Some((node, at)) = node.zip(find(sim, &h.leaf)) else {
                continue;
            };
            let Some(netdev) = sim.nodes[node]
                .netdevs
                .iter()
                .position(|d| d.name == h.netdev)
            else {
                continue;
            };
            ends[at.switch][at.port] = Some(End::Host { node, netdev });
            sim.nodes[node].netdevs[netdev].lldp = Some(h.leaf.clone());
            sim.switches[at.switch].ports[at.port].peer = Some(Peer {
                system: h.node.clone(),
                port: h.netdev.clone(),
                bridge: false,
            });
        }
        for u in &fabric.uplinks {
            let (Some(a), Some(b)) = (find(sim, &u.leaf), find(sim, &u.spine)) else {
                continue;
            };
            ends[a.switch][a.port] = Some(End::Switch(b));
            ends[b.switch][b.port] = Some(End::Switch(a));
            for (here, there) in [(a, &u.spine), (b, &u.leaf)] {
                sim.switches[here.switch].ports[here.port].peer = Some(Peer {
                    system: there.switch.clone(),
                    port: there.port.clone(),
                    bridge: true,
                });
            }
        }
        // No pauses before the first episode: a healthy fabric absorbs its bursts with ECN.
        for sw in &mut sim.switches {
            for p in &mut sw.ports {
                p.pfc_rx = 0;
                p.pfc_tx = 0;
            }
        }
        let roles = (sim.switches.iter())
            .map(|s| {
                let spine = fabric
                    .switches
                    .iter()
                    .any(|f| f.name == s.name && f.role == Role::Spine);
                if spine { Role::Spine } else { Role::Leaf }
            })
            .collect();
        let zeros: Vec<Vec<f64>> = ends.iter().map(|e| vec![0.0; e.len()]).collect();
        Physics {
            fabric,
            seed: sim.seed,
            roles,
            ends,
            level: zeros.clone(),
            sending: zeros,
        }
    }

    /// Episode `k` (one per slot): its kind from a seeded shuffle of the four kinds per four
    /// slots, its time and place drawn with the seed.
    pub fn episode(&self, k: u64) -> FabricEpisode {
        let mut order = KINDS;
        let mut shuffle = Rng::new(self.seed ^ (k / 4).wrapping_mul(0xA24B_AED4_963E_E407));
        for i in (1..order.len()).rev() {
            order.swap(i, (shuffle.next_u64() % (i as u64 + 1)) as usize);
        }
        let kind = order[(k % 4) as usize];
        let mut rng = Rng::new(self.seed ^ k.wrapping_mul(0x9FB2_1C65_1E98_DF25) ^ 0xFAB);
        // Late enough in the slot for a deadlock's link to go down in it first.
        let start_ms =
            (FIRST_S + SLOT_S * k as i64) * 1000 + 2000 + (rng.next_u64() % 13_000) as i64;
        let end_ms = start_ms + 12_000 + (rng.next_u64() % 8_000) as i64;
        let mut pick = |n: usize| (rng.next_u64() % n.max(1) as u64) as usize;
        let f = &self.fabric;
        let of_role = |r: Role| -> Vec<&str> {
            (f.switches.iter())
                .filter(|s| s.role == r)
                .map(|s| s.name.as_str())
                .collect()
        };
        let (leaves, spines) = (of_role(Role::Leaf), of_role(Role::Spine));
        let mut link_down = None;
        let root = match kind {
            EpisodeKind::Incast => {
                let h = &f.hosts[pick(f.hosts.len())];
                Root::Port(h.leaf.clone())
            }
            EpisodeKind::PauseStorm => {
                let h = &f.hosts[pick(f.hosts.len())];
                Root::Nic(NodeNetdev {
                    node: h.node.clone(),
                    netdev: h.netdev.clone(),
                })
            }
            EpisodeKind::SpineCongestion => {
                let u = &f.uplinks[pick(f.uplinks.len())];
                Root::Port(u.spine.clone())
            }
            EpisodeKind::Deadlock => {
                // The link down is one leaf's uplink to spine s; the ring runs over two other
                // leaves b and c and both spines: b → s → c → s' → b.
                let down = &f.uplinks[pick(f.uplinks.len())];
                let s = down.spine.switch.as_str();
                let other_spine = spines.iter().copied().find(|x| *x != s).unwrap_or(s);
                let rest: Vec<&str> = (leaves.iter().copied())
                    .filter(|l| *l != down.leaf.switch)
                    .collect();
                let b = rest[pick(rest.len())];
                let c_choices: Vec<&str> = rest.iter().copied().filter(|l| *l != b).collect();
                let c = c_choices[pick(c_choices.len())];
                let up = |leaf: &str, spine: &str| {
                    (f.uplinks.iter()).find(|u| u.leaf.switch == leaf && u.spine.switch == spine)
                };
                let ring = [
                    up(b, s).map(|u| u.leaf.clone()),
                    up(c, s).map(|u| u.spine.clone()),
                    up(c, other_spine).map(|u| u.leaf.clone()),
                    up(b, other_spine).map(|u| u.spine.clone()),
                ];
                link_down = Some(LinkDown {
                    leaf: down.leaf.clone(),
                    spine: down.spine.clone(),
                    at_ms: start_ms - RING_AFTER_MS,
                });
                Root::Cycle(ring.into_iter().flatten().collect())
            }
        };
        // Drawn after the rest, so each episode's time and place are what they were before.
        let on_one_leaf = kind == EpisodeKind::Incast && rng.next_u64() % 2 == 0;
        FabricEpisode {
            start_ms,
            end_ms,
            kind,
            root,
            link_down,
            on_one_leaf,
        }
    }

    /// The episode of the slot `t_ms` is in, under way or not.
    fn slot(&self, t_ms: i64) -> Option<FabricEpisode> {
        let k = (t_ms / 1000 - FIRST_S).div_euclid(SLOT_S);
        (k >= 0).then(|| self.episode(k as u64))
    }

    /// The episode whose slot `t_ms` is in, if it is under way then (its link down included).
    fn active(&self, t_ms: i64) -> Option<FabricEpisode> {
        let ep = self.slot(t_ms)?;
        let from = ep.link_down.as_ref().map_or(ep.start_ms, |l| l.at_ms);
        (from..ep.end_ms).contains(&t_ms).then_some(ep)
    }

    /// How hard training feels the fabric at `t_ms`, 0..=1: up over 2 s from an episode's start,
    /// down over 2 s after its end.
    pub fn intensity(&self, t_ms: i64) -> f64 {
        let Some(ep) = self.slot(t_ms) else {
            return 0.0;
        };
        let up = (t_ms - ep.start_ms) as f64 / 2000.0;
        let down = (ep.end_ms + 2000 - t_ms) as f64 / 2000.0;
        up.min(down).clamp(0.0, 1.0)
    }

    fn at(&self, sim: &Sim, sp: &SwitchPort) -> Option<At> {
        let switch = sim.switches.iter().position(|s| s.name == sp.switch)?;
        let port = (sim.switches[switch].ports.iter()).position(|p| p.name == sp.port)?;
        Some(At { switch, port })
    }

    /// Whether switch `s` forwards what arrives on port `from` out of port `to`.
    fn feeds(&self, s: usize, from: usize, to: usize) -> bool {
        if from == to {
            return false;
        }
        match self.roles[s] {
            Role::Spine => true,
            // A leaf never sends what a spine gave it to another spine.
            Role::Leaf => !matches!(
                (self.ends[s][from], self.ends[s][to]),
                (Some(End::Switch(_)), Some(End::Switch(_)))
            ),
        }
    }

    /// One 100 ms step of the fabric at `t_ms`: traffic, backlogs, pauses.
    pub fn step(&mut self, sim: &mut Sim, t_ms: i64) {
        let ep = self.active(t_ms);
        let pausing = ep.as_ref().filter(|e| t_ms >= e.start_ms);
        // The ports forced full (the root's egress), the ring's ingress ports forced to pause,
        // the storming NIC, the link that is down.
        let mut full: Vec<At> = Vec::new();
        // The root egress of an incast on one leaf: only that leaf's hosts feed it.
        let mut fed_by_hosts: Option<At> = None;
        let mut ring_in: Vec<At> = Vec::new();
        let mut storm: Option<End> = None;
        let mut down: Vec<At> = Vec::new();
        if let Some(l) = ep.as_ref().and_then(|e| e.link_down.as_ref()) {
            down.extend(self.at(sim, &l.leaf));
            down.extend(self.at(sim, &l.spine));
        }
        // Through the drain after it too: the senders are the pod's all the while, so the uplinks
        // never feed that egress (else its backlog would pause the spines as it drains).
        if let Some(Root::Port(p)) = self.slot(t_ms).filter(|e| e.on_one_leaf).map(|e| e.root) {
            fed_by_hosts = self.at(sim, &p);
        }
        match pausing.map(|e| &e.root) {
            Some(Root::Port(p)) => full.extend(self.at(sim, p)),
            Some(Root::Nic(nic)) => {
                let node = sim.nodes.iter().position(|n| n.name == nic.node);
                storm = node.and_then(|n| {
                    let d = sim.nodes[n]
                        .netdevs
                        .iter()
                        .position(|d| d.name == nic.netdev)?;
                    Some(End::Host { node: n, netdev: d })
                });
            }
            Some(Root::Cycle(ring)) => {
                for p in ring {
                    let Some(a) = self.at(sim, p) else { continue };
                    full.push(a);
                    // The next switch in the ring pauses this egress from its port facing it.
                    if let Some(End::Switch(far)) = self.ends[a.switch][a.port] {
                        ring_in.push(far);
                    }
                }
            }
            None => {}
        }
        for (si, sw) in sim.switches.iter_mut().enumerate() {
            for (pi, p) in sw.ports.iter_mut().enumerate() {
                p.down = down.contains(&At {
                    switch: si,
                    port: pi,
                });
            }
        }

        // Backlogs: the root full, the rest filling toward a share of how hard they are paused.
        for si in 0..self.level.len() {
            for pi in 0..self.level[si].len() {
                let here = At {
                    switch: si,
                    port: pi,
                };
                let paused = match self.ends[si][pi] {
                    Some(End::Switch(far)) => self.sending[far.switch][far.port],
                    Some(host @ End::Host { .. }) => f64::from(u8::from(storm == Some(host))),
                    None => 0.0,
                };
                let l = &mut self.level[si][pi];
                *l = if down.contains(&here) {
                    0.0
                } else if full.contains(&here) {
                    (*l + 0.5).min(1.0)
                } else {
                    let target = PASS_ON * paused;
                    if *l < target {
                        (*l + FILL).min(target)
                    } else {
                        (*l - DRAIN).max(target)
                    }
                };
            }
        }
        // Pauses: out of every ingress port that feeds a backlog above XOFF.
        for si in 0..self.level.len() {
            for pi in 0..self.level[si].len() {
                let here = At {
                    switch: si,
                    port: pi,
                };
                let pressure = if down.contains(&here) {
                    0.0
                } else if ring_in.contains(&here) {
                    1.0
                } else {
                    let uplink = matches!(self.ends[si][pi], Some(End::Switch(_)));
                    (0..self.level[si].len())
                        .filter(|&e| self.feeds(si, pi, e))
                        .filter(|&e| {
                            !(uplink
                                && fed_by_hosts
                                    == Some(At {
                                        switch: si,
                                        port: e,
                                    }))
                        })
                        .map(|e| self.level[si][e])
                        .fold(0.0, f64::max)
                };
                self.sending[si][pi] = if pressure >= XOFF { pressure } else { 0.0 };
            }
        }

        let burst = (t_ms / STEP_MS) % 5 < 2;
        let rng = &mut sim.rng;
        // Pause frames on the wire this step.
        for si in 0..self.sending.len() {
            for pi in 0..self.sending[si].len() {
                let send = self.sending[si][pi];
                if send <= 0.0 {
                    continue;
                }
                let frames = rng.poisson(sim.scale * FRAMES_PER_STEP * send);
                sim.switches[si].ports[pi].pfc_tx += frames;
                match self.ends[si][pi] {
                    Some(End::Switch(far)) => {
                        sim.switches[far.switch].ports[far.port].pfc_rx += frames;
                    }
                    Some(End::Host { node, netdev }) => {
                        let nd = &mut sim.nodes[node].netdevs[netdev];
                        nd.rx_pause += frames;
                        nd.rx_pause_us += (frames as f64 * 180.0 * (0.8 + 0.4 * rng.f())) as u64;
                        nd.rx_pause_transition += frames / 4;
                    }
                    None => {}
                }
            }
        }
        if let Some(nic @ End::Host { node, netdev }) = storm {
            let frames = rng.poisson(sim.scale * STORM_FRAMES_PER_STEP);
            let nd = &mut sim.nodes[node].netdevs[netdev];
            nd.tx_pause += frames;
            nd.tx_pause_us += frames * 250;
            nd.tx_pause_transition += frames / 8;
            if rng.f() < 0.05 {
                nd.storm_warnings += 1;
            }
            let leaf = self.ends.iter().enumerate().find_map(|(si, e)| {
                let pi = e.iter().position(|x| *x == Some(nic))?;
                Some(At {
                    switch: si,
                    port: pi,
                })
            });
            if let Some(a) = leaf {
                sim.switches[a.switch].ports[a.port].pfc_rx += frames;
            }
        }

        // Traffic: all-reduce bursts on every NIC, slowed where the NIC is paused; each switch
        // port sends what its far end receives, less while its egress is backlogged.
        let mut nic_bytes: Vec<Vec<u64>> =
            sim.nodes.iter().map(|n| vec![0; n.netdevs.len()]).collect();
        for si in 0..self.ends.len() {
            for pi in 0..self.ends[si].len() {
                let Some(End::Host { node, netdev }) = self.ends[si][pi] else {
                    continue;
                };
                let util = if burst { 0.85 } else { 0.01 } * (1.0 - 0.6 * self.sending[si][pi]);
                let bytes = (LINK_BYTES_PER_STEP * util * (0.95 + 0.1 * rng.f())) as u64;
                nic_bytes[node][netdev] = bytes;
            }
        }
        // A leaf's uplinks carry a quarter of its hosts' traffic each; a spine port what the
        // leaf's uplink to it carries; a backlogged egress sends less.
        let leaf_bytes: Vec<u64> = (0..self.ends.len())
            .map(|si| {
                (self.ends[si].iter())
                    .map(|e| match e {
                        Some(End::Host { node, netdev }) => nic_bytes[*node][*netdev],
                        _ => 0,
                    })
                    .sum::<u64>()
                    / 4
            })
            .collect();
        let sent: Vec<Vec<u64>> = (0..self.ends.len())
            .map(|si| {
                (0..self.ends[si].len())
                    .map(|pi| {
                        let bytes = match self.ends[si][pi] {
                            Some(End::Host { node, netdev }) => nic_bytes[node][netdev],
                            Some(End::Switch(far)) => match self.roles[si] {
                                Role::Leaf => leaf_bytes[si],
                                Role::Spine => leaf_bytes[far.switch],
                            },
                            None => 0,
                        };
                        (bytes as f64 * (1.0 - 0.8 * self.level[si][pi])) as u64
                    })
                    .collect()
            })
            .collect();
        // WRED marks ECT→CE on a lossless egress whose backlog is past its minimum threshold, up
        // to the configs' mark probability; the receivers behind it (a host, or the hosts of the
        // leaf a spine port faces) count the marks and answer each with a CNP. Computed, not
        // drawn, so the rest of the run draws what it drew before.
        let mut marked: Vec<Vec<u64>> = self.ends.iter().map(|e| vec![0; e.len()]).collect();
        let mut received: Vec<Vec<u64>> =
            sim.nodes.iter().map(|n| vec![0; n.netdevs.len()]).collect();
        for si in 0..self.ends.len() {
            for pi in 0..self.ends[si].len() {
                let over = (self.level[si][pi] - ECN_MIN) / (1.0 - ECN_MIN);
                if over <= 0.0 || sim.switches[si].ports[pi].down {
                    continue;
                }
                let m = (sent[si][pi] as f64 / MTU_PKT * ECN_MAX_P * over.min(1.0)) as u64;
                marked[si][pi] = m;
                match self.ends[si][pi] {
                    Some(End::Host { node, netdev }) => received[node][netdev] += m,
                    Some(End::Switch(far)) => {
                        let hosts: Vec<(usize, usize)> = (self.ends[far.switch].iter())
                            .filter_map(|e| match e {
                                Some(End::Host { node, netdev }) => Some((*node, *netdev)),
                                _ => None,
                            })
                            .collect();
                        let n = hosts.len().max(1) as u64;
                        for (k, (node, netdev)) in hosts.into_iter().enumerate() {
                            received[node][netdev] += m / n + u64::from((k as u64) < m % n);
                        }
                    }
                    None => {}
                }
            }
        }
        let mut cnps_sent = 0u64;
        for (ni, n) in sim.nodes.iter_mut().enumerate() {
            for (di, nd) in n.netdevs.iter_mut().enumerate() {
                let bytes = nic_bytes[ni][di];
                nd.rx_bytes += bytes;
                nd.tx_bytes += bytes;
                nd.rx_packets += bytes / MTU_PKT as u64;
                nd.tx_packets += bytes / MTU_PKT as u64;
                nd.kernel_rx_bytes += 2_000 + rng.poisson(20.0) * 100;
                nd.kernel_tx_bytes += 2_500 + rng.poisson(20.0) * 100;
                let Some(d) = n
                    .devs
                    .iter_mut()
                    .find(|d| d.netdev.as_ref() == Some(&nd.name))
                else {
                    continue;
                };
                d.xmit_words += bytes / 4;
                d.rcv_words += bytes / 4;
                let marks =
                    rng.poisson(sim.scale * if burst { 0.15 } else { 0.01 }) + received[ni][di];
                cnps_sent += marks;
                bump(&mut d.hw, "np_ecn_marked_roce_packets", marks);
                bump(&mut d.hw, "np_cnp_sent", marks);
                bump(&mut d.hw, "rx_write_requests", bytes / 65536);
            }
        }
        let n_devs: u64 = (sim.nodes.iter())
            .map(|n| n.devs.len() as u64)
            .sum::<u64>()
            .max(1);
        for n in &mut sim.nodes {
            for d in &mut n.devs {
                let share = cnps_sent / n_devs
                    + u64::from(rng.f() < (cnps_sent % n_devs) as f64 / n_devs as f64);
                bump(&mut d.hw, "rp_cnp_handled", share);
            }
        }
        for (si, sw) in sim.switches.iter_mut().enumerate() {
            for (pi, p) in sw.ports.iter_mut().enumerate() {
                if p.down {
                    continue;
                }
                p.ecn_marked += marked[si][pi];
                p.transmit(sent[si][pi], rng);
            }
        }
    }
}

impl Sim {
    /// Every episode the fabric demo injects that starts before `until_ms` (none on the lab).
    pub fn fabric_episodes(&self, until_ms: i64) -> Vec<FabricEpisode> {
        let Some(f) = &self.fabric else {
            return Vec::new();
        };
        (0u64..)
            .map(|k| f.episode(k))
            .take_while(|e| e.start_ms < until_ms)
            .collect()
    }

    /// The fabric's cabling (None on the lab).
    pub fn fabric(&self) -> Option<&Fabric> {
        self.fabric.as_ref().map(|f| &f.fabric)
    }
}
