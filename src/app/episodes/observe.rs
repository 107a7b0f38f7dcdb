//! What the episode detector reads of the fabric at one instant, asked of the store through the
//! metrics query API (newest intervals). Missing data is absent here, never 0.

use crate::app::alerts::{EvalIdsCache, ROCE_PRIORITY};
use crate::metrics::query;
use crate::metrics::{Store, Ts};
use std::borrow::Cow;
use std::cmp::Ordering;

/// A switch port's PFC frames per second, by direction (switch's view).
#[derive(Clone, Debug, PartialEq)]
pub struct PortPfc<'a> {
    pub switch: Cow<'a, str>,
    pub port: Cow<'a, str>,
    /// Frames the switch received: the neighbour on this port asks the switch to stop sending.
    pub rx: f64,
    /// Frames the switch sent: its buffer for this port's ingress fills, it pauses the sender.
    pub tx: f64,
}

/// Drops on a switch port in the newest interval.
#[derive(Clone, Debug, PartialEq)]
pub struct PortDrops<'a> {
    pub switch: Cow<'a, str>,
    pub port: Cow<'a, str>,
    /// `mmu`, `wred`, ... as the switch names the reason, prefixed `ingress`/`queue`.
    pub reason: Cow<'a, str>,
    pub per_s: f64,
}

/// The fabric at `at`. Names are borrowed from the resolved series ([`EvalIdsCache`]) where they can
/// be: a fabric dropping on every port made ~400 allocations an evaluation of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Obs<'a> {
    pub at: Ts,
    /// Newest training step time, seconds (worst log).
    pub step_s: Option<f64>,
    pub allreduce_s: Option<f64>,
    pub pfc: Vec<PortPfc<'a>>,
    pub drops: Vec<PortDrops<'a>>,
    /// ECN-marked RoCE packets received per second, all nodes.
    pub ecn: Option<f64>,
    /// CNPs sent per second, all nodes.
    pub cnp: Option<f64>,
    /// Share of the newest interval each node's NIC was paused (rx, worst netdev).
    pub pause: Vec<(Cow<'a, str>, f64)>,
    /// RTT p99 per `peer transport`, seconds.
    pub rtt_p99: Vec<(Cow<'a, str>, f64)>,
    /// Each node's GPUs' mean utilization, percent; and the GPUs a clock throttle reason holds
    /// ([`super::gpu::read`]).
    pub gpu_util: Vec<(Cow<'a, str>, f64)>,
    pub gpu_throttle: Vec<super::gpu::Throttle<'a>>,
    /// What the PFC pause tree says where the pausing crosses switches (or deadlocks), made on
    /// the same rates ([`crate::app::fabric::pause_tree::text::across_switches`]).
    pub pause_root: Option<String>,
    /// The pause tree itself, made on the same rates, where it was made.
    pub pause_tree: Option<std::sync::Arc<crate::app::fabric::pause_tree::PauseTree>>,
    /// Each switch's rail where the fabric has several (`Fabric::rail_of`): an episode whose
    /// switches are all on one rail says so.
    pub rails: std::sync::Arc<std::collections::BTreeMap<String, u32>>,
}

fn max_of<K>(m: impl Iterator<Item = (K, f64)>) -> Option<f64> {
    m.map(|(_, v)| v).reduce(f64::max)
}

/// The words of a key, space-separated; a single word borrowed.
fn join<'a>(k: &[&'a str]) -> Cow<'a, str> {
    match k {
        [one] => Cow::Borrowed(one),
        _ => Cow::Owned(k.join(" ")),
    }
}

/// Switch ports' PFC frames per second, received and sent, keyed by (switch, port) borrowed
/// from the resolved series ([`EvalIdsCache`]), ascending by key. The alerts' per-port PFC rule reads
/// the same rates: `App::eval_alerts` computes them once for both (each is a rate of every PFC
/// series of the fabric).
pub type PortRates<'a> = Vec<PortRate<'a>>;

/// One port's [`PortRates`]: each direction's rates where the port has counters of it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PortRate<'a> {
    pub key: [&'a str; 2],
    pub rx: Option<query::Agg>,
    pub tx: Option<query::Agg>,
}

impl PortRate<'_> {
    /// PFC frames per second received and sent, where either is known.
    pub fn rate(&self) -> Option<f64> {
        let mut sum = None;
        for r in [self.rx, self.tx]
            .into_iter()
            .flatten()
            .filter_map(|a| a.rate)
        {
            *sum.get_or_insert(0.0) += r;
        }
        sum
    }
}

/// [`PortRates`] of `store`, its series resolved in `ids`: each direction's ports (ascending by
/// key) with one priority's rate each ([`one_rate`]), the two directions merged in one walk.
pub fn port_pfc_in<'a>(store: &'a Store, ids: &'a EvalIdsCache) -> PortRates<'a> {
    let [rx, tx] = ids.pfc.each_ref().map(|g| one_rate(g.rate_by(store)));
    let (mut rx, mut tx) = (rx.into_iter().peekable(), tx.into_iter().peekable());
    let mut out = Vec::new();
    loop {
        let order = match (rx.peek(), tx.peek()) {
            (None, None) => return out,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((r, _)), Some((t, _))) => r.cmp(t),
        };
        let (r, t) = match order {
            Ordering::Less => (rx.next(), None),
            Ordering::Greater => (None, tx.next()),
            Ordering::Equal => (rx.next(), tx.next()),
        };
        let key = r.or(t).map(|(k, _)| k).unwrap_or_default();
        out.push(PortRate {
            key,
            rx: r.map(|(_, a)| a),
            tx: t.map(|(_, a)| a),
        });
    }
}

/// Which of a port's PFC series tell its rate: those of the best [`PfcPick`] the port has. A
/// switch may count the same pauses twice: NX-OS per class (`show queuing`) and as the port
/// total (`priority="all"`, TxPPP/RxPPP); SONiC per class only; EOS the total only. Summing
/// them all would double an NX-OS edge port. Chosen by the series a port has (not by which
/// have a rate now), so a class that stops answering reads as missing, not as another count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PfcPick {
    /// The lossless (RoCE) class itself: what the congestion is about.
    Lossless,
    /// The port total, where the class is not counted apart.
    Total,
    /// Neither: the classes there are, summed (they do not overlap).
    Classes,
}

impl PfcPick {
    /// The pick a series of `priority` (`"3"`, `"all"`, `""` where unlabelled) is.
    pub fn of(priority: &str) -> PfcPick {
        match priority {
            ROCE_PRIORITY => PfcPick::Lossless,
            "all" => PfcPick::Total,
            _ => PfcPick::Classes,
        }
    }
}

/// One rate per port from `groups` (by switch, port, priority, ascending): the groups of the
/// port's best [`PfcPick`], summed.
fn one_rate<'a>(
    groups: impl Iterator<Item = ([&'a str; 3], query::Agg)>,
) -> Vec<([&'a str; 2], query::Agg)> {
    let mut out: Vec<([&'a str; 2], query::Agg)> = Vec::new();
    // The pick the port's kept rate is of.
    let mut kept_pick = PfcPick::Classes;
    for ([sw, port, prio], a) in groups {
        let key = [sw, port];
        let pick = PfcPick::of(prio);
        match out.last_mut().filter(|(k, _)| *k == key) {
            Some((_, kept)) if pick == kept_pick => {
                if let Some(r) = a.rate {
                    *kept.rate.get_or_insert(0.0) += r;
                }
                kept.reset |= a.reset;
            }
            Some((_, kept)) if pick < kept_pick => {
                *kept = a;
                kept_pick = pick;
            }
            Some(_) => {}
            None => {
                out.push((key, a));
                kept_pick = pick;
            }
        }
    }
    out
}

/// Read the newest state of the fabric from `store`.
pub fn observe(store: &Store, at: Ts) -> Obs<'static> {
    let ids = EvalIdsCache::of(store);
    let o = observe_with(store, at, &port_pfc_in(store, &ids), &ids);
    owned(o)
}

/// `o` with every name its own (outliving the series it was read through).
fn owned(o: Obs<'_>) -> Obs<'static> {
    let own = |c: Cow<'_, str>| Cow::Owned(c.into_owned());
    Obs {
        at: o.at,
        step_s: o.step_s,
        allreduce_s: o.allreduce_s,
        pfc: (o.pfc.into_iter())
            .map(|p| PortPfc {
                switch: own(p.switch),
                port: own(p.port),
                rx: p.rx,
                tx: p.tx,
            })
            .collect(),
        drops: (o.drops.into_iter())
            .map(|d| PortDrops {
                switch: own(d.switch),
                port: own(d.port),
                reason: own(d.reason),
                per_s: d.per_s,
            })
            .collect(),
        ecn: o.ecn,
        cnp: o.cnp,
        pause: o.pause.into_iter().map(|(k, v)| (own(k), v)).collect(),
        rtt_p99: o.rtt_p99.into_iter().map(|(k, v)| (own(k), v)).collect(),
        gpu_util: o.gpu_util.into_iter().map(|(k, v)| (own(k), v)).collect(),
        gpu_throttle: o.gpu_throttle.into_iter().map(|t| t.owned()).collect(),
        pause_root: o.pause_root,
        pause_tree: o.pause_tree,
        rails: o.rails,
    }
}

/// [`observe`] with the series resolved and the ports' PFC rates already read
/// ([`port_pfc_in`] of the same store).
pub fn observe_with<'a>(
    store: &'a Store,
    at: Ts,
    port_pfc: &PortRates<'a>,
    ids: &'a EvalIdsCache,
) -> Obs<'a> {
    let mut pfc = Vec::with_capacity(port_pfc.len());
    // The ports with received-PFC counters, as they come.
    for p in port_pfc {
        let Some(a) = p.rx else { continue };
        let t = p.tx.and_then(|a| a.rate);
        if a.rate.is_none() && t.is_none() {
            continue;
        }
        let [switch, port] = p.key;
        pfc.push(PortPfc {
            switch: Cow::Borrowed(switch),
            port: Cow::Borrowed(port),
            rx: a.rate.unwrap_or(0.0),
            tx: t.unwrap_or(0.0),
        });
    }
    let mut drops = Vec::new();
    for (g, kind) in [(&ids.ingress_drops, "ingress"), (&ids.queue_drops, "queue")] {
        for ([switch, port, reason], a) in g.rate_by(store) {
            if let Some(r) = a.rate.filter(|r| *r > 0.0) {
                let reason = format!("{kind} {reason}").trim().to_string();
                drops.push(PortDrops {
                    switch: Cow::Borrowed(switch),
                    port: Cow::Borrowed(port),
                    reason: Cow::Owned(reason),
                    per_s: r,
                });
            }
        }
    }
    let (gpu_util, gpu_throttle) = super::gpu::read(store, at, ids);
    Obs {
        pause_root: None,
        pause_tree: None,
        rails: Default::default(),
        at,
        step_s: max_of(ids.step.latest_by(store)),
        allreduce_s: max_of(ids.allreduce.latest_by(store)),
        pfc,
        drops,
        ecn: ids.ecn.rate_sum(store),
        cnp: ids.cnp.rate_sum(store),
        pause: ids.pause[0]
            .pause_fraction_by(store)
            .map(|(k, f)| (join(&k), f))
            .collect(),
        rtt_p99: ids
            .rtt_p99
            .latest_by(store)
            .map(|(k, v)| (join(&k), v))
            .collect(),
        gpu_util,
        gpu_throttle,
    }
}

#[cfg(test)]
mod tests;
