//! RDMA ping-pong over verbs (rdma-sys), for the pinger and for `rocetop pingd`: RC by default, UD
//! on request (`QpType`).
//!
//! One QP per session; QPN, PSN, LID, GID and MTU are exchanged over the TCP control connection
//! (`proto::Msg::Info`, after the pinger's probe period), which stays open for the session's life.
//! The device, port and GID come from the route toward the peer ([`gid::select`](super::gid::select)):
//! the control connection's local address is the source the RoCE v2 packets carry.
//!
//! The loops ([`pinger`], [`responder`]) see the hardware only through [`Device`] and [`Endpoint`],
//! so they are tested against an in-memory fake pair (`fake`); [`ffi`] is the real thing. QP
//! attributes are built by pure functions ([`attr`]) tested against rc_pingpong's values.
//!
//! All `unsafe` of rocetop lives in this module (`ffi`, `attr`), each block with a `SAFETY` note.
#![allow(unsafe_code)]

use super::proto::{ConnInfo, PROBE_LEN};
use std::net::IpAddr;
use std::time::Duration;

pub mod attr;
pub mod ffi;
pub mod perftest;
pub mod pinger;
pub mod responder;

#[cfg(test)]
mod fake;

pub use ffi::{Verbs, describe, devices};
pub use pinger::start_pinger;
pub use responder::serve;

pub const UNAVAILABLE: &str = "RDMA unavailable on this host: no devices";
/// Slack for the pinger's own timer (a sleeping thread wakes within ~100 µs; the last stretch spins).
pub const SLACK_NS: u64 = 200_000;
/// Probes unanswered in a row, while the send queue still takes them, before the session is torn
/// down and rebuilt: a reset device can leave `poll_cq` empty forever.
pub const STALL_PROBES: u32 = 5;
/// A broken session is retried this often; the slots meanwhile count as lost (as the TCP pinger).
pub const RETRY: Duration = Duration::from_secs(1);

/// One RC endpoint (PD, CQ, QP, registered buffer, receives posted), as the loops use it.
pub trait Endpoint: Send {
    /// What the peer needs to reach this QP.
    fn info(&self) -> ConnInfo;
    /// RTR then RTS toward `remote`.
    fn connect(&mut self, remote: &ConnInfo) -> Result<(), String>;
    /// Post one inline signaled send.
    fn send(&mut self, data: &[u8; PROBE_LEN]) -> Result<(), String>;
    /// Poll the CQ once; received payloads are appended to `out`. A failed completion is an error.
    fn poll(&mut self, out: &mut Vec<[u8; PROBE_LEN]>) -> Result<usize, String>;
    /// A device event that ends the session (device fatal, port error, GID change), if one came.
    fn event(&mut self) -> Option<String>;
    /// "rocep19s0 port 1 GID 3 (RoCE v2 ::ffff:192.168.250.201 on ens224)"
    fn describe(&self) -> String;
    /// Where the transport resends a lost frame (RC): how long it waits first. An answer that took
    /// this long came through a resend, and is counted so, not as an RTT.
    fn retransmit_after_ns(&self) -> Option<u64>;
}

/// Opens endpoints: the device, port and GID follow the source address of the session.
pub trait Device: Send + Sync {
    type Ep: Endpoint;
    fn open(&self, src: IpAddr) -> Result<Self::Ep, String>;
}

/// How long pingd busy-polls after each probe of a pinger that sends every `period`: one period and
/// a quarter (the next probe is caught by the spin), at most `bound`. None: the pinger did not say.
pub fn spin_for(period: Option<Duration>, bound: Duration) -> Duration {
    match period {
        Some(p) => (p + p / 4).min(bound),
        None => bound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pingd_spins_one_period_and_a_quarter_at_most_the_bound() {
        let b = Duration::from_secs(1);
        assert_eq!(
            spin_for(Some(Duration::from_millis(100)), b),
            Duration::from_millis(125)
        );
        assert_eq!(spin_for(Some(Duration::from_secs(10)), b), b);
        assert_eq!(spin_for(None, b), b);
        assert_eq!(
            spin_for(Some(Duration::from_millis(1)), Duration::ZERO),
            Duration::ZERO
        );
    }
}
