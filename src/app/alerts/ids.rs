//! The series the once-a-second evaluation reads (the alerts' rules and the episode detector's
//! observation), resolved once per store shape (`metrics::query::resolved`): an evaluation
//! reads their values without looking up a label.

use super::RDMA_ERRORS;
use crate::metrics::Store;
use crate::metrics::names::*;
use crate::metrics::query::{GroupedCache, ListedCache};

#[derive(Debug)]
pub struct EvalIdsCache {
    /// Switch ports' PFC frames received and sent, by (switch, port, priority): a port's rate is
    /// one of its priorities' (`episodes::port_pfc_in` says which), never their sum.
    pub pfc: [GroupedCache<3>; 2],
    /// By (switch, port, reason): the ingress drops of both, the queue drops of the episodes.
    pub ingress_drops: GroupedCache<3>,
    pub queue_drops: GroupedCache<3>,
    /// Queue drops by (switch, port, qos_group, reason): the alerts'.
    pub queue_drops_qos: GroupedCache<4>,
    /// ECN-marked packets by (switch, port): how hard a port's egress is pressed (the pause tree).
    pub queue_ecn: GroupedCache<2>,
    /// Host pause time received and sent, by node.
    pub pause: [GroupedCache<1>; 2],
    /// The same by (node, netdev): the pause tree's links are a NIC's each.
    pub nic_pause: [GroupedCache<2>; 2],
    /// [`RDMA_ERRORS`] by (node, device).
    pub rdma: [GroupedCache<2>; 4],
    /// 802.3x state by (switch, port, direction); PFC state by (switch, port, priority).
    pub flowcontrol: ListedCache<3>,
    pub pfc_enabled: ListedCache<3>,
    /// RTT quantiles by (peer, transport).
    pub rtt_p50: ListedCache<3>,
    pub rtt_p99: GroupedCache<3>,
    /// Training step and all-reduce time by log.
    pub step: GroupedCache<1>,
    pub allreduce: GroupedCache<1>,
    /// ECN-marked packets received and CNPs sent, every node.
    pub ecn: ListedCache<0>,
    pub cnp: ListedCache<0>,
    /// The GPUs' utilization by (node, gpu), their clock throttle reasons by (node, gpu,
    /// reason), and the last XID each reported by (node, gpu): the episodes' GPU link and the
    /// XID alert.
    pub gpu_util: ListedCache<2>,
    pub gpu_throttle: ListedCache<3>,
    pub gpu_xid: ListedCache<2>,
}

impl Default for EvalIdsCache {
    fn default() -> Self {
        let spr = ["switch", "port", "reason"];
        // A rail (`device = "all"`) is its own RTT series: its p99 against its own p50.
        let pt = ["peer", "transport", "device"];
        EvalIdsCache {
            pfc: [SW_PFC_RX, SW_PFC_TX]
                .map(|n| GroupedCache::new(n, &[], ["switch", "port", "priority"])),
            ingress_drops: GroupedCache::new(SW_INGRESS_DROPPED, &[], spr),
            queue_drops: GroupedCache::new(SW_QUEUE_DROPPED, &[], spr),
            queue_drops_qos: GroupedCache::new(
                SW_QUEUE_DROPPED,
                &[],
                ["switch", "port", "qos_group", "reason"],
            ),
            queue_ecn: GroupedCache::new(SW_QUEUE_ECN_MARKED, &[], ["switch", "port"]),
            pause: [NIC_PFC_RX_PAUSE_DURATION, NIC_PFC_TX_PAUSE_DURATION]
                .map(|n| GroupedCache::new(n, &[], ["node"])),
            nic_pause: [NIC_PFC_RX_PAUSE_DURATION, NIC_PFC_TX_PAUSE_DURATION]
                .map(|n| GroupedCache::new(n, &[], ["node", "netdev"])),
            rdma: RDMA_ERRORS.map(|c| GroupedCache::new(rdma_counter(c), &[], ["node", "device"])),
            flowcontrol: ListedCache::new(
                SW_FLOWCONTROL_ENABLED,
                &[],
                ["switch", "port", "direction"],
            ),
            pfc_enabled: ListedCache::new(SW_PFC_ENABLED, &[], ["switch", "port", "priority"]),
            rtt_p50: ListedCache::new(PING_RTT_SECONDS, &[("quantile", "0.5")], pt),
            rtt_p99: GroupedCache::new(PING_RTT_SECONDS, &[("quantile", "0.99")], pt),
            step: GroupedCache::new(TRAIN_STEP_SECONDS, &[], ["log"]),
            allreduce: GroupedCache::new(TRAIN_ALLREDUCE_SECONDS, &[], ["log"]),
            ecn: ListedCache::new(rdma_counter("np_ecn_marked_roce_packets"), &[], []),
            cnp: ListedCache::new(rdma_counter("np_cnp_sent"), &[], []),
            gpu_util: ListedCache::new(GPU_UTILIZATION_PERCENT, &[], ["node", "gpu"]),
            gpu_throttle: ListedCache::new(GPU_THROTTLE_ACTIVE, &[], ["node", "gpu", "reason"]),
            gpu_xid: ListedCache::new(GPU_LAST_XID, &[], ["node", "gpu"]),
        }
    }
}

impl EvalIdsCache {
    /// Resolved for `store` (once, while its set of series stays).
    pub fn of(store: &Store) -> EvalIdsCache {
        let mut ids = EvalIdsCache::default();
        ids.resolve(store);
        ids
    }

    /// Resolve again what `store`'s new series or sources (or another store) moved.
    pub fn resolve(&mut self, store: &Store) {
        for g in &mut self.pfc {
            g.resolve(store);
        }
        self.ingress_drops.resolve(store);
        self.queue_drops.resolve(store);
        self.queue_drops_qos.resolve(store);
        self.queue_ecn.resolve(store);
        for g in &mut self.pause {
            g.resolve(store);
        }
        for g in &mut self.nic_pause {
            g.resolve(store);
        }
        for g in &mut self.rdma {
            g.resolve(store);
        }
        for l in [&mut self.flowcontrol, &mut self.pfc_enabled] {
            l.resolve(store);
        }
        self.rtt_p50.resolve(store);
        self.rtt_p99.resolve(store);
        self.step.resolve(store);
        self.allreduce.resolve(store);
        self.ecn.resolve(store);
        self.cnp.resolve(store);
        self.gpu_util.resolve(store);
        self.gpu_throttle.resolve(store);
        self.gpu_xid.resolve(store);
    }
}
