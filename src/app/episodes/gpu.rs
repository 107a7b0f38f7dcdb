//! The GPUs on an episode's time axis. Training waits on its all-reduce, so a congested fabric
//! idles the GPUs: the episode keeps each node's calm utilization and its low while open, and
//! the sentence links the two (`GPU util 93→41 % on 8 nodes`). The other way round, a slow step
//! with every network layer read and calm while a node's GPUs hold a clock throttle reason is
//! that node's, not the network's (`ubunturdma8 GPUs 0-3 power-capped (sw_power_cap): not the
//! network`). GPUs never open an episode themselves: they are told beside the step they explain.

use super::{Episode, Layer, Obs, Signal, Signals};
use crate::app::alerts::EvalIdsCache;
use crate::app::table::short_names;
use crate::metrics::{Store, Ts};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A GPU reading older than this is not the node's state now: a node that stopped answering is
/// missing, not idle and not throttled.
pub const FRESH_MS: i64 = 30_000;
/// A node's GPUs idled in an episode when their low fell at least this many points under their
/// calm: the wobble of busy GPUs is a few points.
pub const IDLE_POINTS: f64 = 15.0;

/// A GPU that a clock throttle reason holds (`rocetop_gpu_clock_throttle_active` 1).
#[derive(Clone, Debug, PartialEq)]
pub struct Throttle<'a> {
    pub node: Cow<'a, str>,
    pub gpu: Cow<'a, str>,
    /// `sw_power_cap`, `hw_thermal`, ... (`parse::host::gpu::THROTTLE_REASONS`).
    pub reason: Cow<'a, str>,
}

impl Throttle<'_> {
    pub fn owned(self) -> Throttle<'static> {
        Throttle {
            node: Cow::Owned(self.node.into_owned()),
            gpu: Cow::Owned(self.gpu.into_owned()),
            reason: Cow::Owned(self.reason.into_owned()),
        }
    }
}

/// Node's GPUs' mean utilization.
pub type NodeUtils<'a> = Vec<(Cow<'a, str>, f64)>;

/// The GPUs at `at`: each node's mean utilization over its GPUs, ascending by node, and the GPUs a
/// throttle reason holds; readings older than [`FRESH_MS`] left out.
pub fn read<'a>(
    store: &'a Store,
    at: Ts,
    ids: &'a EvalIdsCache,
) -> (NodeUtils<'a>, Vec<Throttle<'a>>) {
    let fresh = |t: Ts| at - t <= FRESH_MS;
    let mut by_node: BTreeMap<&str, (f64, u32)> = BTreeMap::new();
    for ((t, v), [node, _gpu]) in ids.gpu_util.latest(store) {
        let v = v.as_f64();
        if fresh(t) && v.is_finite() {
            let e = by_node.entry(node).or_default();
            e.0 += v;
            e.1 += 1;
        }
    }
    let util = by_node
        .into_iter()
        .map(|(n, (sum, k))| (Cow::Borrowed(n), sum / f64::from(k)))
        .collect();
    let throttle = ids
        .gpu_throttle
        .latest(store)
        .filter(|((t, v), _)| fresh(*t) && v.as_f64() > 0.5)
        .map(|(_, [node, gpu, reason])| Throttle {
            node: Cow::Borrowed(node),
            gpu: Cow::Borrowed(gpu),
            reason: Cow::Borrowed(reason),
        })
        .collect();
    (util, throttle)
}

/// Each node's GPUs in calm (learnt only outside episodes, as the other signals' baselines):
/// their utilization, and whether a throttle reason held them (1) or not (0). A node throttled
/// through most of its calm (a power cap at full load is common) is its normal, not news.
#[derive(Debug, Default)]
pub struct Baselines {
    util: Signals,
    throttled: Signals,
}

impl Baselines {
    /// Keep `o`'s GPUs in the calm.
    pub fn learn(&mut self, o: &Obs) {
        for (node, v) in &o.gpu_util {
            self.util.entry_ref(&**node).or_default().learn(*v);
            let held = o.gpu_throttle.iter().any(|t| t.node == *node);
            let held = if held { 1.0 } else { 0.0 };
            self.throttled.entry_ref(&**node).or_default().learn(held);
        }
    }

    fn calm_util(&self, node: &str) -> Option<f64> {
        self.util.get(node).and_then(Signal::median)
    }

    /// Throttled through most of its calm.
    fn habitual(&self, node: &str) -> bool {
        self.throttled
            .get(node)
            .and_then(Signal::median)
            .is_some_and(|m| m > 0.5)
    }
}

/// What an episode saw of the GPUs.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Gpus {
    /// Each node whose GPUs reported while it was open and had a calm, ascending by node.
    pub nodes: Vec<NodeUtil>,
    /// Every GPU and reason a throttle held while it was open (none a node's habit), ascending.
    pub throttled: Vec<Throttled>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct NodeUtil {
    pub node: String,
    /// Its GPUs' calm utilization, percent (the median of its calm values).
    pub base: f64,
    /// Their lowest mean utilization while the episode was open.
    pub low: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Throttled {
    pub node: String,
    pub gpu: String,
    pub reason: String,
    /// When the episode first saw it.
    pub first: Ts,
}

/// Fold `o`'s GPUs into the open episode.
pub fn fold(ep: &mut Episode, o: &Obs, calm: &Baselines) {
    let g = &mut ep.gpu;
    for (node, v) in &o.gpu_util {
        match g.nodes.binary_search_by(|x| x.node.as_str().cmp(node)) {
            Ok(i) => g.nodes[i].low = g.nodes[i].low.min(*v),
            Err(i) => {
                if let Some(base) = calm.calm_util(node) {
                    let node = node.to_string();
                    g.nodes.insert(
                        i,
                        NodeUtil {
                            node,
                            base,
                            low: *v,
                        },
                    );
                }
            }
        }
    }
    for t in &o.gpu_throttle {
        if calm.habitual(&t.node) {
            continue;
        }
        let want = (&*t.node, &*t.gpu, &*t.reason);
        let found = (g.throttled)
            .binary_search_by(|x| (x.node.as_str(), x.gpu.as_str(), x.reason.as_str()).cmp(&want));
        if let Err(i) = found {
            let (node, gpu, reason) = (t.node.to_string(), t.gpu.to_string(), t.reason.to_string());
            let first = o.at;
            g.throttled.insert(
                i,
                Throttled {
                    node,
                    gpu,
                    reason,
                    first,
                },
            );
        }
    }
}

/// The nodes whose GPUs idled in `ep` ([`IDLE_POINTS`] under their calm).
pub fn idled(ep: &Episode) -> impl Iterator<Item = &NodeUtil> {
    ep.gpu
        .nodes
        .iter()
        .filter(|n| n.base - n.low >= IDLE_POINTS)
}

/// `GPU util 93→41 % on 8 nodes` (one node by name): the idled nodes' calm and low, averaged.
pub fn util_text(ep: &Episode) -> Option<String> {
    let idle: Vec<&NodeUtil> = idled(ep).collect();
    let n = idle.len() as f64;
    let on = match idle.as_slice() {
        [] => return None,
        [one] => one.node.clone(),
        many => format!("{} nodes", many.len()),
    };
    let base = idle.iter().map(|x| x.base).sum::<f64>() / n;
    let low = idle.iter().map(|x| x.low).sum::<f64>() / n;
    Some(format!("GPU util {base:.0}→{low:.0} % on {on}"))
}

/// Whether `ep` is the GPUs' own: the step slowed, no network layer was abnormal though the
/// switches were read, and a node's GPUs were throttled. With a switch unread the network is
/// not known to be calm, so this is never said then.
pub fn not_the_network(ep: &Episode) -> bool {
    !ep.gpu.throttled.is_empty()
        && ep.switch_read
        && ep.chain.iter().any(|p| p.layer == Layer::Training)
        && ep.chain.iter().all(|p| p.layer == Layer::Training)
}

/// What a throttle reason does to the clocks, in words.
fn words(reason: &str) -> &'static str {
    match reason {
        "sw_power_cap" => "power-capped",
        "hw_power_brake" => "power-braked",
        "sw_thermal" | "hw_thermal" => "thermally throttled",
        "hw_slowdown" => "slowed down by the board",
        _ => "throttled",
    }
}

/// `ubunturdma8 GPUs 0-3 power-capped (sw_power_cap): not the network`; several nodes by name
/// without their GPUs (`ubunturdma7,8 GPUs power-capped (sw_power_cap)`). The verdict only
/// where [`not_the_network`].
pub fn throttle_text(ep: &Episode) -> Option<String> {
    let t = &ep.gpu.throttled;
    let first = t.iter().min_by_key(|x| x.first)?;
    let mut nodes: Vec<&str> = t.iter().map(|x| x.node.as_str()).collect();
    nodes.dedup();
    let mut reasons: Vec<&str> = t.iter().map(|x| x.reason.as_str()).collect();
    reasons.sort_unstable();
    reasons.dedup();
    let who = match nodes.as_slice() {
        [one] => {
            let mut gpus: Vec<&str> = t.iter().map(|x| x.gpu.as_str()).collect();
            gpus.dedup();
            let s = if gpus.len() > 1 { "s" } else { "" };
            format!("{one} GPU{s} {}", crate::app::ports::compress(&gpus))
        }
        many => format!("{} GPUs", short_names(many)),
    };
    let verdict = if not_the_network(ep) {
        ": not the network"
    } else {
        ""
    };
    Some(format!(
        "{who} {} ({}){verdict}",
        words(&first.reason),
        reasons.join(", ")
    ))
}

#[cfg(test)]
mod tests;
