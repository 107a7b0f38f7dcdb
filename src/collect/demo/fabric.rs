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

/// Nodes in the fabric, and per pod.
pub const NODES: usize = 32;
const POD: usize = 16;
/// NICs per node, one per rail.
pub const RAILS: usize = 2;

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

/// The front-panel number of a leaf's first uplink (host ports are 1..=16).
const FIRST_UPLINK: usize = 49;

impl Fabric {
    pub fn builtin() -> Fabric {
        let spines = [("spine1", SwitchOs::Nxos), ("spine2", SwitchOs::Eos)];
        // (name, os, pod, rail)
        let leaves = [
            ("leaf1", SwitchOs::Nxos, 0, 0),
            ("leaf2", SwitchOs::Sonic, 0, 1),
            ("leaf3", SwitchOs::Eos, 1, 0),
            ("leaf4", SwitchOs::Nxos, 1, 1),
        ];
        let nodes: Vec<String> = (1..=NODES).map(|i| format!("gpu{i:02}")).collect();
        let mut switches = Vec::new();
        let mut uplinks = Vec::new();
        let mut hosts = Vec::new();
        for (li, &(leaf, os, pod, rail)) in leaves.iter().enumerate() {
            let mut ports: Vec<String> = (1..=POD).map(|n| port_name(os, n)).collect();
            for (si, &(spine, sos)) in spines.iter().enumerate() {
                let up = port_name(os, FIRST_UPLINK + si);
                ports.push(up.clone());
                uplinks.push(Uplink {
                    leaf: SwitchPort {
                        switch: leaf.into(),
                        port: up,
                    },
                    spine: SwitchPort {
                        switch: spine.into(),
                        port: port_name(sos, li + 1),
                    },
                });
            }
            for (k, node) in nodes[pod * POD..(pod + 1) * POD].iter().enumerate() {
                hosts.push(HostLink {
                    node: node.clone(),
                    rail,
                    device: format!("mlx5_{rail}"),
                    netdev: format!("ens{}f0np0", rail + 1),
                    leaf: SwitchPort {
                        switch: leaf.into(),
                        port: ports[k].clone(),
                    },
                });
            }
            switches.push(FabricSwitch {
                name: leaf.into(),
                os,
                role: Role::Leaf,
                ports,
            });
        }
        for &(spine, os) in &spines {
            switches.push(FabricSwitch {
                name: spine.into(),
                os,
                role: Role::Spine,
                ports: (1..=leaves.len()).map(|n| port_name(os, n)).collect(),
            });
        }
        // Spines first, as one reads a fabric top down.
        switches.rotate_right(spines.len());
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
    let text = Fabric::builtin().config_text(seed);
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
