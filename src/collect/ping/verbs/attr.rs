//! QP state transitions as data: each builder returns the `ibv_qp_attr` and the mask that
//! `ibv_modify_qp` takes, so the values are checked against rc_pingpong's without a device.

use super::super::proto::ConnInfo;
use rdma_sys::{ibv_ah_attr, ibv_mtu, ibv_qp_attr, ibv_qp_attr_mask, ibv_qp_state};

/// This side's path parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Local {
    pub port: u8,
    pub gid_index: u8,
    /// IP traffic class (DSCP << 2 | ECN) of the RoCE v2 packets.
    pub traffic_class: u8,
    /// Service level (InfiniBand; RoCE maps it to the VLAN priority).
    pub sl: u8,
    /// Active MTU as the `ibv_mtu` enum.
    pub mtu: u8,
    pub psn: u32,
}

/// The GRH hop limit asked for. On RoCE the kernel replaces it when the QP goes to RTR with the IP
/// stack's hop limit toward the destination (`ib_resolve_unicast_gid_dmac` in core/verbs.c, from
/// the route it resolves the next hop's MAC with), so whatever is set here does not reach the wire
/// there; it matters only on InfiniBand, where a GRH crosses IB routers, and there rc_pingpong's 1
/// would stop at the first one (perftest asks for 255).
pub const HOP_LIMIT: u8 = 64;

fn zeroed() -> ibv_qp_attr {
    // SAFETY: ibv_qp_attr is plain C data (integers, nested structs and unions of integers); the
    // all-zero pattern is a valid value of every field.
    unsafe { std::mem::zeroed() }
}

/// RESET → INIT, as rc_pingpong: pkey 0, no remote access (send/recv needs none).
pub fn init(port: u8) -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port;
    a.qp_access_flags = 0;
    let m = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
        | ibv_qp_attr_mask::IBV_QP_PORT
        | ibv_qp_attr_mask::IBV_QP_ACCESS_FLAGS;
    (a, m)
}

/// INIT → RTR toward `remote`, as rc_pingpong; the GRH is set when the remote GID has an interface
/// id (always on RoCE), with this side's GID index, traffic class and [`HOP_LIMIT`].
pub fn rtr(local: &Local, remote: &ConnInfo) -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_RTR;
    a.path_mtu = local.mtu.min(remote.mtu).max(1) as ibv_mtu::Type;
    a.dest_qp_num = remote.qpn;
    a.rq_psn = remote.psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr = path(local, remote);
    let m = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_AV
        | ibv_qp_attr_mask::IBV_QP_PATH_MTU
        | ibv_qp_attr_mask::IBV_QP_DEST_QPN
        | ibv_qp_attr_mask::IBV_QP_RQ_PSN
        | ibv_qp_attr_mask::IBV_QP_MAX_DEST_RD_ATOMIC
        | ibv_qp_attr_mask::IBV_QP_MIN_RNR_TIMER;
    (a, m)
}

/// The Q_Key of rocetop's UD queue pairs (ud_pingpong's 0x11111111): a datagram carrying another
/// is dropped by the receiver.
pub const QKEY: u32 = 0x1111_1111;

/// The path toward `remote` (UD: its address handle; RC: the AV of RTR): a GRH when the remote GID
/// has an interface id (always on RoCE), with this side's GID index, traffic class and hop limit.
pub fn path(local: &Local, remote: &ConnInfo) -> ibv_ah_attr {
    // SAFETY: ibv_ah_attr is plain C data (integers and a union of byte arrays); zero is valid.
    let mut a: ibv_ah_attr = unsafe { std::mem::zeroed() };
    a.dlid = remote.lid;
    a.sl = local.sl;
    a.port_num = local.port;
    if remote.gid[8..].iter().any(|&b| b != 0) {
        a.is_global = 1;
        a.grh.hop_limit = HOP_LIMIT;
        a.grh.dgid.raw = remote.gid;
        a.grh.sgid_index = local.gid_index;
        a.grh.traffic_class = local.traffic_class;
    }
    a
}

/// UD RESET → INIT, as ud_pingpong: pkey 0, the port, [`QKEY`].
pub fn ud_init(port: u8) -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = port;
    a.qkey = QKEY;
    let m = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
        | ibv_qp_attr_mask::IBV_QP_PORT
        | ibv_qp_attr_mask::IBV_QP_QKEY;
    (a, m)
}

/// UD INIT → RTR: the state alone (each send names its destination).
pub fn ud_rtr() -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_RTR;
    (a, ibv_qp_attr_mask::IBV_QP_STATE)
}

/// UD RTR → RTS: the send PSN.
pub fn ud_rts(psn: u32) -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_RTS;
    a.sq_psn = psn;
    (
        a,
        ibv_qp_attr_mask::IBV_QP_STATE | ibv_qp_attr_mask::IBV_QP_SQ_PSN,
    )
}

/// The RC local ACK timeout exponent, as rc_pingpong: 4.096 µs × 2^14 ≈ 67 ms.
pub const ACK_TIMEOUT: u8 = 14;

/// How long an RC sender waits for an ACK before resending: 4.096 µs × 2^`timeout` (IBTA C9-141).
/// A probe answered no sooner than this had a frame lost and resent on the way.
pub fn ack_timeout_ns(timeout: u8) -> u64 {
    4096u64 << timeout.min(31)
}

/// RTR → RTS, as rc_pingpong: timeout [`ACK_TIMEOUT`], 7 retries, 7 RNR retries.
pub fn rts(psn: u32) -> (ibv_qp_attr, ibv_qp_attr_mask) {
    let mut a = zeroed();
    a.qp_state = ibv_qp_state::IBV_QPS_RTS;
    a.timeout = ACK_TIMEOUT;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = psn;
    a.max_rd_atomic = 1;
    let m = ibv_qp_attr_mask::IBV_QP_STATE
        | ibv_qp_attr_mask::IBV_QP_TIMEOUT
        | ibv_qp_attr_mask::IBV_QP_RETRY_CNT
        | ibv_qp_attr_mask::IBV_QP_RNR_RETRY
        | ibv_qp_attr_mask::IBV_QP_SQ_PSN
        | ibv_qp_attr_mask::IBV_QP_MAX_QP_RD_ATOMIC;
    (a, m)
}

#[cfg(test)]
mod tests {
    //! Expected values are rc_pingpong's (rdma-core libibverbs/examples/rc_pingpong.c,
    //! pp_init_ctx and pp_connect_ctx), written out as numbers from verbs.h.
    use super::*;
    use crate::collect::ping::gid::{Roce, Versions};

    const STATE: u32 = 1;
    const ACCESS_FLAGS: u32 = 1 << 3;
    const PKEY_INDEX: u32 = 1 << 4;
    const PORT: u32 = 1 << 5;
    const AV: u32 = 1 << 7;
    const PATH_MTU: u32 = 1 << 8;
    const TIMEOUT: u32 = 1 << 9;
    const RETRY_CNT: u32 = 1 << 10;
    const RNR_RETRY: u32 = 1 << 11;
    const RQ_PSN: u32 = 1 << 12;
    const MAX_QP_RD_ATOMIC: u32 = 1 << 13;
    const MIN_RNR_TIMER: u32 = 1 << 15;
    const SQ_PSN: u32 = 1 << 16;
    const MAX_DEST_RD_ATOMIC: u32 = 1 << 17;
    const DEST_QPN: u32 = 1 << 20;

    fn remote(gid: [u8; 16]) -> ConnInfo {
        ConnInfo {
            qpn: 0x1234,
            psn: 0xabcdef,
            lid: 7,
            gid,
            mtu: 5,
            versions: Versions::only(Roce::V2),
        }
    }

    fn local() -> Local {
        Local {
            port: 1,
            gid_index: 3,
            traffic_class: 106,
            sl: 3,
            mtu: 3,
            psn: 0x123456,
        }
    }

    #[test]
    fn init_is_rc_pingpongs() {
        let (a, m) = init(2);
        assert_eq!(m.0, STATE | PKEY_INDEX | PORT | ACCESS_FLAGS);
        assert_eq!(a.qp_state, ibv_qp_state::IBV_QPS_INIT);
        assert_eq!((a.pkey_index, a.port_num, a.qp_access_flags), (0, 2, 0));
    }

    #[test]
    fn rtr_is_rc_pingpongs_with_a_routable_grh() {
        let v4 = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 250, 202];
        let (a, m) = rtr(&local(), &remote(v4));
        assert_eq!(
            m.0,
            STATE | AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER
        );
        assert_eq!(a.qp_state, ibv_qp_state::IBV_QPS_RTR);
        assert_eq!(a.path_mtu, 3, "the smaller of both sides' MTU");
        assert_eq!((a.dest_qp_num, a.rq_psn), (0x1234, 0xabcdef));
        assert_eq!((a.max_dest_rd_atomic, a.min_rnr_timer), (1, 12));
        let ah = a.ah_attr;
        assert_eq!(
            (ah.dlid, ah.sl, ah.src_path_bits, ah.port_num),
            (7, 3, 0, 1)
        );
        assert_eq!(ah.is_global, 1);
        // SAFETY (test): reading the raw bytes of the GID union that rtr() wrote.
        assert_eq!(unsafe { ah.grh.dgid.raw }, v4);
        assert_eq!(ah.grh.sgid_index, 3);
        assert_eq!(ah.grh.traffic_class, 106);
        assert_eq!(
            ah.grh.hop_limit, HOP_LIMIT,
            "rc_pingpong says 1: not routable over InfiniBand routers"
        );
        // A GID with no interface id (an InfiniBand peer known by LID only): no GRH.
        let (a, _) = rtr(&local(), &remote([0; 16]));
        assert_eq!(a.ah_attr.is_global, 0);
    }

    #[test]
    fn rts_is_rc_pingpongs() {
        let (a, m) = rts(0x123456);
        assert_eq!(
            m.0,
            STATE | TIMEOUT | RETRY_CNT | RNR_RETRY | SQ_PSN | MAX_QP_RD_ATOMIC
        );
        assert_eq!(a.qp_state, ibv_qp_state::IBV_QPS_RTS);
        assert_eq!((a.timeout, a.retry_cnt, a.rnr_retry), (14, 7, 7));
        // A retransmitted probe takes at least 67 ms.
        assert_eq!(ack_timeout_ns(a.timeout), 67_108_864);
        assert_eq!((a.sq_psn, a.max_rd_atomic), (0x123456, 1));
    }

    /// UD as ud_pingpong: a Q_Key at INIT, the state alone at RTR, the PSN at RTS; the address
    /// handle carries the same GRH as RC's RTR.
    #[test]
    fn ud_transitions_are_ud_pingpongs() {
        let (a, m) = ud_init(2);
        assert_eq!((a.port_num, a.qkey), (2, 0x1111_1111));
        assert_eq!(
            m,
            ibv_qp_attr_mask::IBV_QP_STATE
                | ibv_qp_attr_mask::IBV_QP_PKEY_INDEX
                | ibv_qp_attr_mask::IBV_QP_PORT
                | ibv_qp_attr_mask::IBV_QP_QKEY
        );
        assert_eq!(ud_rtr().1, ibv_qp_attr_mask::IBV_QP_STATE);
        let (a, m) = ud_rts(7);
        assert_eq!(a.sq_psn, 7);
        assert_eq!(
            m,
            ibv_qp_attr_mask::IBV_QP_STATE | ibv_qp_attr_mask::IBV_QP_SQ_PSN
        );
    }
}
