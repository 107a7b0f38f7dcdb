//! The built-in fabric of `--demo fabric` (docs/topology.md, "The fabric demo"): two spines, four
//! leaves of mixed OS, 32 nodes with two NICs each on two rails. This is its cabling, which the
//! config has no shape for (a node names one `switch_port`; switches never name each other), and
//! the inventory made from it. The demo never connects anywhere: the hosts are names only.
//!
//! Rails: the nodes come in two pods of 16 (gpu01-16, gpu17-32); each pod has one leaf per rail,
//! so NIC0 (rail 0) of a pod's nodes is on its rail-0 leaf and NIC1 (rail 1) on its rail-1 leaf:
//! leaf1 (NX-OS) and leaf2 (SONiC) for gpu01-16, leaf3 (EOS) and leaf4 (NX-OS) for gpu17-32. Every
//! leaf has one uplink to each spine (spine1 NX-OS, spine2 EOS).

use crate::config::{Config, Scenario, SwitchOs, SwitchPort};
use std::fmt::Write as _;

/// Nodes in the built-in fabric.
pub const NODES: usize = 32;
/// NICs per node in the built-in fabric, one per rail.
pub const RAILS: usize = 2;

/// The size of a fabric: `pods` of `pod_nodes` nodes, each pod with one leaf per rail (node NIC
/// *i* on the pod's rail-*i* leaf), every leaf with one uplink to each spine. A leaf lists its
/// cabled host ports, then `idle_ports` uncabled ones (front-panel ports nobody plugged in,
/// polled all the same), then its uplinks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub spines: usize,
    pub pods: usize,
    pub rails: usize,
    pub pod_nodes: usize,
    pub idle_ports: usize,
}

impl Shape {
    /// `--demo fabric`: 2 spines, 4 leaves, 32 nodes on two rails.
    pub const BUILTIN: Shape = Shape {
        spines: 2,
        pods: 2,
        rails: RAILS,
        pod_nodes: NODES / 2,
        idle_ports: 0,
    };
    /// The size the fabric's screen budget is measured at (bench, `examples/render_time`):
    /// 8 spines and 56 leaves of 64 ports, 1008 nodes with two NICs.
    pub const WIDE: Shape = Shape {
        spines: 8,
        pods: 28,
        rails: 2,
        pod_nodes: 36,
        idle_ports: 20,
    };

    pub fn leaves(&self) -> usize {
        self.pods * self.rails
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Spine,
    Leaf,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FabricSwitch {
    pub name: String,
    pub os: SwitchOs,
    pub role: Role,
    /// Every cabled port, host ports first, then the uplinks (a spine: its downlinks).
    pub ports: Vec<String>,
}

/// A leaf's uplink and the spine port it lands on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uplink {
    pub leaf: SwitchPort,
    pub spine: SwitchPort,
}

/// One NIC of a node and the leaf port it is cabled to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostLink {
    pub node: String,
    pub rail: usize,
    pub device: String,
    pub netdev: String,
    pub leaf: SwitchPort,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Fabric {
    pub switches: Vec<FabricSwitch>,
    pub uplinks: Vec<Uplink>,
    pub hosts: Vec<HostLink>,
    /// Node names, in order.
    pub nodes: Vec<String>,
}

/// The port names of `os`: NX-OS `Ethernet1/N`, SONiC `Ethernet<N-1>` (from 0), EOS `EthernetN`.
fn port_name(os: SwitchOs, n: usize) -> String {
    match os {
        SwitchOs::Nxos => format!("Ethernet1/{n}"),
        SwitchOs::Sonic => format!("Ethernet{}", n - 1),
        SwitchOs::Eos => format!("Ethernet{n}"),
    }
}

/// The front-panel number of a leaf's first uplink when its host ports leave room below it.
const FIRST_UPLINK: usize = 49;
/// Operating systems of the leaves and spines, in turn.
const LEAF_OS: [SwitchOs; 4] = [
    SwitchOs::Nxos,
    SwitchOs::Sonic,
    SwitchOs::Eos,
    SwitchOs::Nxos,
];
const SPINE_OS: [SwitchOs; 2] = [SwitchOs::Nxos, SwitchOs::Eos];

impl Fabric {
    pub fn builtin() -> Fabric {
        Fabric::sized(Shape::BUILTIN)
    }

    /// A fabric of `shape`: leaves `leaf1..` pod by pod (rail 0 first), spines `spine1..`, nodes
    /// `gpu01..`, the operating systems mixed in turn.
    pub fn sized(shape: Shape) -> Fabric {
        let count = shape.pods * shape.pod_nodes;
        let width = count.to_string().len().max(2);
        let nodes: Vec<String> = (1..=count).map(|i| format!("gpu{i:0width$}")).collect();
        let spines: Vec<(String, SwitchOs)> = (0..shape.spines)
            .map(|i| (format!("spine{}", i + 1), SPINE_OS[i % SPINE_OS.len()]))
            .collect();
        let host_side = shape.pod_nodes + shape.idle_ports;
        let first_uplink = FIRST_UPLINK.max(host_side + 1);
        let mut switches = Vec::new();
        let mut uplinks = Vec::new();
        let mut hosts = Vec::new();
        for li in 0..shape.leaves() {
            let (pod, rail) = (li / shape.rails, li % shape.rails);
            let leaf = format!("leaf{}", li + 1);
            let os = LEAF_OS[li % LEAF_OS.len()];
            let mut ports: Vec<String> = (1..=host_side).map(|n| port_name(os, n)).collect();
            for (si, (spine, sos)) in spines.iter().enumerate() {
                let up = port_name(os, first_uplink + si);
                ports.push(up.clone());
                uplinks.push(Uplink {
                    leaf: SwitchPort {
                        switch: leaf.clone(),
                        port: up,
                    },
                    spine: SwitchPort {
                        switch: spine.clone(),
                        port: port_name(*sos, li + 1),
                    },
                });
            }
            let pod_nodes = &nodes[pod * shape.pod_nodes..(pod + 1) * shape.pod_nodes];
            for (k, node) in pod_nodes.iter().enumerate() {
                hosts.push(HostLink {
                    node: node.clone(),
                    rail,
                    device: format!("mlx5_{rail}"),
                    netdev: format!("ens{}f0np0", rail + 1),
                    leaf: SwitchPort {
                        switch: leaf.clone(),
                        port: ports[k].clone(),
                    },
                });
            }
            switches.push(FabricSwitch {
                name: leaf,
                os,
                role: Role::Leaf,
                ports,
            });
        }
        for (spine, os) in spines {
            switches.push(FabricSwitch {
                name: spine,
                os,
                role: Role::Spine,
                ports: (1..=shape.leaves()).map(|n| port_name(os, n)).collect(),
            });
        }
        // Spines first, as one reads a fabric top down.
        switches.rotate_right(shape.spines);
        hosts.sort_by(|a, b| (&a.node, a.rail).cmp(&(&b.node, b.rail)));
        Fabric {
            switches,
            uplinks,
            hosts,
            nodes,
        }
    }

    /// The NICs of `node`, rail 0 first.
    pub fn nics<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a HostLink> + 'a {
        self.hosts.iter().filter(move |h| h.node == node)
    }

    /// The inventory as config text: every switch with its cabled ports, every node with its two
    /// devices and netdevs, the first node's training log. No `switch_port`: a node names one
    /// port, and its other NIC would then never pair; LLDP (both ends) pairs each NIC instead.
    pub fn config_text(&self, seed: u64) -> String {
        let mut t = format!(
            "# The built-in fabric of `rocetop --demo fabric` (src/collect/demo/fabric.rs).\n\
             demo = true\n\n[simulation]\nseed = {seed}\n\n[alerts]\nflowcontrol = \"off\"\n"
        );
        for s in &self.switches {
            let os = match s.os {
                SwitchOs::Nxos => "nxos",
                SwitchOs::Sonic => "sonic",
                SwitchOs::Eos => "eos",
            };
            let ports: Vec<String> = s.ports.iter().map(|p| format!("\"{p}\"")).collect();
            let _ = write!(
                t,
                "\n[[switch]]\nname = \"{0}\"\nhost = \"{0}\"\nuser = \"admin\"\nos = \"{os}\"\nports = [{1}]\n",
                s.name,
                ports.join(", ")
            );
        }
        for n in &self.nodes {
            let q = |f: fn(&HostLink) -> &str| {
                let v: Vec<String> = self.nics(n).map(|h| format!("\"{}\"", f(h))).collect();
                v.join(", ")
            };
            let _ = write!(
                t,
                "\n[[node]]\nname = \"{n}\"\nhost = \"{n}\"\ndevices = [{}]\nnetdevs = [{}]\n",
                q(|h| &h.device),
                q(|h| &h.netdev)
            );
        }
        if let Some(first) = self.nodes.first() {
            let _ = write!(
                t,
                "\n[[log]]\nnode = \"{first}\"\npath = \"~/training.log\"\n"
            );
        }
        t
    }
}

/// The inventory `--demo fabric` plays, on `seed`.
pub fn config(seed: u64) -> Config {
    config_of(&Fabric::builtin(), seed)
}

/// The inventory of `fabric` as a fabric demo plays it, on `seed`.
pub fn config_of(fabric: &Fabric, seed: u64) -> Config {
    let text = fabric.config_text(seed);
    match Config::from_str(&text, "built-in fabric", None) {
        Ok(mut c) => {
            c.simulation.scenario = Scenario::Fabric;
            c
        }
        // Built from constants and checked by a test; no user input reaches it.
        Err(e) => panic!("built-in fabric config is invalid: {e}"),
    }
}

#[cfg(test)]
mod tests;
