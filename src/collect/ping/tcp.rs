//! The TCP pinger: one persistent connection (TCP_NODELAY) to a peer's `rocetop pingd`, probes sent
//! on a fixed schedule by one future and read back by another, so a slow reply never delays the next
//! probe (several stay in flight). Each probe carries its slot and its send time; the echo is timed on
//! arrival. A broken connection is retried every second; probes due meanwhile count as lost.

use super::proto::{Hello, Mode, PROBE_LEN, Probe};
use super::stats::rtt_ns;
use super::{Link, Status, lock, ns};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

/// Timer lateness tolerated before a probe is timed from its slot (tokio timers have 1 ms ticks).
pub const SLACK_NS: u64 = 2_000_000;
pub const RETRY: Duration = Duration::from_secs(1);
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Clone, Debug)]
pub struct Plan {
    /// host:port
    pub addr: String,
    pub period: Duration,
    /// A probe not answered within this is lost.
    pub deadline: Duration,
    /// Zero of the ns timestamps.
    pub epoch: Instant,
}

/// Why a connection failed, in the words of `ping` and `ssh`.
pub fn why(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".into(),
        io::ErrorKind::ConnectionReset => "connection reset by peer".into(),
        io::ErrorKind::UnexpectedEof => "connection closed by peer".into(),
        io::ErrorKind::TimedOut => "timed out".into(),
        io::ErrorKind::HostUnreachable => "host unreachable".into(),
        io::ErrorKind::NetworkUnreachable => "network unreachable".into(),
        _ => e.to_string(),
    }
}

/// Ping until the task is aborted.
pub async fn run(plan: Plan, link: Arc<Mutex<Link>>) {
    let mut next_seq = 0u64;
    loop {
        let outcome =
            match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&plan.addr)).await {
                Ok(Ok(s)) => {
                    lock(&link, |l| l.status = Status::Up);
                    let e = session(s, &plan, &link, &mut next_seq).await;
                    why(&e)
                }
                Ok(Err(e)) => why(&e),
                Err(_) => format!("connect timed out after {} s", CONNECT_TIMEOUT.as_secs()),
            };
        let reason = format!("no answer from {}: {outcome}", plan.addr);
        lock(&link, |l| {
            l.abandon();
            l.status = Status::Down(reason);
        });
        tokio::time::sleep(RETRY).await;
        // The probes that were due while there was no connection were not answered.
        let missed = (RETRY.as_nanos() / plan.period.as_nanos().max(1)) as u64;
        lock(&link, |l| {
            l.window.sent += missed;
            l.window.lost += missed;
        });
    }
}

/// One connection's life: returns why it ended.
async fn session(s: TcpStream, plan: &Plan, link: &Mutex<Link>, next_seq: &mut u64) -> io::Error {
    if let Err(e) = s.set_nodelay(true) {
        return e;
    }
    let (rd, wr) = s.into_split();
    let r = tokio::select! {
        r = write_loop(wr, plan, link, next_seq) => r,
        r = read_loop(rd, plan, link) => r,
    };
    r.err().unwrap_or_else(|| io::Error::other("session ended"))
}

async fn write_loop(
    mut wr: OwnedWriteHalf,
    plan: &Plan,
    link: &Mutex<Link>,
    next_seq: &mut u64,
) -> io::Result<()> {
    wr.write_all(&Hello { mode: Mode::Tcp }.encode()).await?;
    let start = Instant::now();
    let period_ns = plan.period.as_nanos().max(1) as u64;
    let deadline_ns = plan.deadline.as_nanos() as u64;
    let mut n = 0u64;
    loop {
        let slot = start + Duration::from_nanos(period_ns.saturating_mul(n));
        tokio::time::sleep_until(slot.into()).await;
        n += 1;
        let now = Instant::now();
        let behind = now.saturating_duration_since(slot);
        // Slots so far behind that no answer could be in time (the process was stopped, the machine
        // suspended) are lost, not sent in a burst.
        if behind > plan.deadline {
            let skip = behind.as_nanos() as u64 / period_ns;
            n += skip;
            lock(link, |l| {
                l.window.sent += skip + 1;
                l.window.lost += skip + 1;
            });
            continue;
        }
        let seq = *next_seq;
        *next_seq += 1;
        let probe = Probe {
            seq,
            intended_ns: ns(plan.epoch, slot),
            sent_ns: ns(plan.epoch, now),
        };
        lock(link, |l| {
            l.expire(probe.sent_ns);
            l.sent(seq, probe.intended_ns + deadline_ns);
        });
        wr.write_all(&probe.encode()).await?;
    }
}

async fn read_loop(mut rd: OwnedReadHalf, plan: &Plan, link: &Mutex<Link>) -> io::Result<()> {
    let mut buf = [0u8; PROBE_LEN];
    loop {
        rd.read_exact(&mut buf).await?;
        let recv = ns(plan.epoch, Instant::now());
        let p = Probe::decode(&buf);
        let rtt = rtt_ns(p.intended_ns, p.sent_ns, recv, SLACK_NS);
        lock(link, |l| l.answered(p.seq, recv, rtt));
    }
}
