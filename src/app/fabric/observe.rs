//! What the pause tree reads of the store at one instant: every switch port's PFC rates (one per
//! direction, as the episode detector picks them), how hard each port's egress is pressed (the
//! episode observation's drops, and ECN marks per second), each host's pause time and each NIC's.
//! Rates come from `metrics/rate.rs` through the evaluation's resolved series; missing stays
//! missing.

use super::PortKey;
use super::pause_tree::{HostPause, NicKey, PortPause};
use crate::app::alerts::EvalIdsCache;
use crate::app::episodes::{Obs, PortRates};
use crate::metrics::Store;
use std::collections::HashMap;

/// The ports' and hosts' pause of `store`, `pfc` being [`crate::app::episodes::port_pfc_in`] of
/// it and `obs` the evaluation's observation made of the same (its drops and hosts' paused share
/// are used as they are, not read again).
pub fn inputs(store: &Store, ids: &EvalIdsCache, pfc: &PortRates<'_>, obs: &Obs<'_>) -> Inputs {
    let mut ports: HashMap<PortKey, PortPause> = HashMap::with_capacity(pfc.len());
    for p in pfc {
        let [sw, port] = p.key;
        ports.insert(
            PortKey::new(sw, port),
            PortPause {
                rx: p.rx.and_then(|a| a.rate),
                tx: p.tx.and_then(|a| a.rate),
                load: None,
            },
        );
    }
    let mut load = |sw: &str, port: &str, r: f64| {
        let e = ports.entry(PortKey::new(sw, port)).or_default();
        *e.load.get_or_insert(0.0) += r;
    };
    for d in &obs.drops {
        load(&d.switch, &d.port, d.per_s);
    }
    for ([sw, port], a) in ids.queue_ecn.rate_by(store) {
        if let Some(r) = a.rate {
            load(sw, port, r);
        }
    }
    let mut hosts: HashMap<String, HostPause> = HashMap::with_capacity(obs.pause.len());
    for (node, f) in &obs.pause {
        hosts.entry(node.to_string()).or_default().rx = Some(*f);
    }
    for ([node], f) in ids.pause[1].pause_fraction_by(store) {
        hosts.entry(node.to_string()).or_default().tx = Some(f);
    }
    let mut nics: HashMap<NicKey, HostPause> = HashMap::new();
    let [rx, tx] = &ids.nic_pause;
    let nic = |node: &str, netdev: &str| NicKey {
        node: node.to_string(),
        netdev: netdev.to_string(),
    };
    for ([node, netdev], f) in rx.pause_fraction_by(store) {
        nics.entry(nic(node, netdev)).or_default().rx = Some(f);
    }
    for ([node, netdev], f) in tx.pause_fraction_by(store) {
        nics.entry(nic(node, netdev)).or_default().tx = Some(f);
    }
    Inputs { ports, hosts, nics }
}

/// What [`inputs`] reads: per switch port, per host (its worst NIC), per NIC.
pub struct Inputs {
    pub ports: HashMap<PortKey, PortPause>,
    pub hosts: HashMap<String, HostPause>,
    pub nics: HashMap<NicKey, HostPause>,
}

impl Inputs {
    pub fn tree(&self, fabric: &super::Fabric) -> super::pause_tree::PauseTree {
        super::pause_tree::PauseTree::of(&super::pause_tree::Input {
            fabric,
            ports: &self.ports,
            hosts: &self.hosts,
            nics: &self.nics,
        })
    }
}

/// The pause tree of `store`'s newest rates on `fabric`, its series resolved here (`snapshot`,
/// which evaluates once; the screen reuses the evaluation's).
pub fn pause_tree_of(store: &Store, fabric: &super::Fabric) -> super::pause_tree::PauseTree {
    let ids = EvalIdsCache::of(store);
    let pfc = crate::app::episodes::port_pfc_in(store, &ids);
    let obs = crate::app::episodes::observe_with(store, 0, &pfc, &ids);
    inputs(store, &ids, &pfc, &obs).tree(fabric)
}
