//! The series the once-a-second evaluation reads (the alerts' rules and the episode detector's
//! observation), resolved once per store shape (`metrics::query::resolved`): an evaluation
//! reads their values without looking up a label (issue #20).

use super::RDMA_ERRORS;
use crate::metrics::Store;
use crate::metrics::names::*;
use crate::metrics::query::{Grouped, Listed};

#[derive(Debug)]
pub struct EvalIds {
    /// Switch ports' PFC frames received and sent, by (switch, port, priority): a port's rate is
    /// one of its priorities' (`episodes::port_pfc_in` says which), never their sum.
    pub pfc: [Grouped<3>; 2],
    /// By (switch, port, reason): the ingress drops of both, the queue drops of the episodes.
    pub ingress_drops: Grouped<3>,
    pub queue_drops: Grouped<3>,
    /// Queue drops by (switch, port, qos_group, reason): the alerts'.
    pub queue_drops_qos: Grouped<4>,
    /// Host pause time received and sent, by node.
    pub pause: [Grouped<1>; 2],
    /// [`RDMA_ERRORS`] by (node, device).
    pub rdma: [Grouped<2>; 4],
    /// 802.3x state by (switch, port, direction); PFC state by (switch, port, priority).
    pub flowcontrol: Listed<3>,
    pub pfc_enabled: Listed<3>,
    /// RTT quantiles by (peer, transport).
    pub rtt_p50: Listed<2>,
    pub rtt_p99: Grouped<2>,
    /// Training step and all-reduce time by log.
    pub step: Grouped<1>,
    pub allreduce: Grouped<1>,
    /// ECN-marked packets received and CNPs sent, every node.
    pub ecn: Listed<0>,
    pub cnp: Listed<0>,
}

impl Default for EvalIds {
    fn default() -> Self {
        let spr = ["switch", "port", "reason"];
        let pt = ["peer", "transport"];
        EvalIds {
            pfc: [SW_PFC_RX, SW_PFC_TX]
                .map(|n| Grouped::new(n, &[], ["switch", "port", "priority"])),
            ingress_drops: Grouped::new(SW_INGRESS_DROPPED, &[], spr),
            queue_drops: Grouped::new(SW_QUEUE_DROPPED, &[], spr),
            queue_drops_qos: Grouped::new(
                SW_QUEUE_DROPPED,
                &[],
                ["switch", "port", "qos_group", "reason"],
            ),
            pause: [NIC_PFC_RX_PAUSE_DURATION, NIC_PFC_TX_PAUSE_DURATION]
                .map(|n| Grouped::new(n, &[], ["node"])),
            rdma: RDMA_ERRORS.map(|c| Grouped::new(rdma_counter(c), &[], ["node", "device"])),
            flowcontrol: Listed::new(SW_FLOWCONTROL_ENABLED, &[], ["switch", "port", "direction"]),
            pfc_enabled: Listed::new(SW_PFC_ENABLED, &[], ["switch", "port", "priority"]),
            rtt_p50: Listed::new(PING_RTT_SECONDS, &[("quantile", "0.5")], pt),
            rtt_p99: Grouped::new(PING_RTT_SECONDS, &[("quantile", "0.99")], pt),
            step: Grouped::new(TRAIN_STEP_SECONDS, &[], ["log"]),
            allreduce: Grouped::new(TRAIN_ALLREDUCE_SECONDS, &[], ["log"]),
            ecn: Listed::new(rdma_counter("np_ecn_marked_roce_packets"), &[], []),
            cnp: Listed::new(rdma_counter("np_cnp_sent"), &[], []),
        }
    }
}

impl EvalIds {
    /// Resolved for `store` (once, while its set of series stays).
    pub fn of(store: &Store) -> EvalIds {
        let mut ids = EvalIds::default();
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
        for g in &mut self.pause {
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
    }
}
