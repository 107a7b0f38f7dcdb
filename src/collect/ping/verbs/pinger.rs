//! The pinger's RDMA loop, on its own OS thread (never on the async runtime's workers): one probe in
//! flight, sent on a fixed schedule of slots, the CQ busy-polled until its echo or its deadline.
//!
//! - The send time is read right before the post; the shared [`Link`] is touched only after the
//!   probe is settled, and then with `try_lock` (a report being built never delays a probe; the
//!   tally waits for the next probe instead).
//! - Every slot counts once the pinger has been told to reach its peer: one that passes while the
//!   session is down (retry wait, failed dial, device open or handshake) or being rebuilt counts as
//!   sent and lost, as in the TCP pinger. Only the very first session's setup (open, handshake,
//!   RTR/RTS: 5-30 ms on real NICs) sends nothing: its slots were never due, the pinger had no path
//!   yet. Either way the first probe after a setup leaves in its own slot, never as a late send of
//!   a past one (which `rtt_ns` would time from that slot, counting the setup as RTT).
//! - [`STALL_PROBES`] unanswered in a row, an error completion, a device event or a closed control
//!   connection tear the session down; it is rebuilt after [`RETRY`].

use super::super::proto::{ConnInfo, Hello, Mode, Msg, PROBE_LEN, Probe};
use super::super::stats::{Answer, rtt_ns};
use super::super::{Link, QpType, Status, VerbsOptions, lock, ns, tcp};
use super::{Device, Endpoint, RETRY, SLACK_NS, STALL_PROBES, Verbs, devices};
use std::io::Write;
use std::net::{IpAddr, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, TryLockError};
use std::time::{Duration, Instant};

/// The pinger's time, in ns since the plan's epoch.
pub trait Clock: Send {
    fn now(&self) -> u64;
    fn sleep_until(&self, t: u64);
}

/// The control connection to pingd, as the loop uses it.
pub trait Control: Send {
    /// Say the probe period and this side's QP; the peer's QP, or its refusal as an error.
    fn handshake(&mut self, period_ns: u64, mine: &ConnInfo) -> Result<ConnInfo, String>;
    /// False once the peer has closed the connection.
    fn alive(&mut self) -> bool;
}

pub trait Dialer: Send {
    type C: Control;
    /// Connect to pingd: the control connection and this side's address on it (the source address
    /// the kernel picked toward the peer).
    fn dial(&self) -> Result<(Self::C, IpAddr), String>;
}

/// How one slot's probe ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probed {
    Answered,
    /// Posted, and no echo within the deadline.
    Unanswered,
    /// Its slot was past the deadline before it could leave: lost, never posted.
    TooLate,
}

/// What happened since the last publish, kept off the shared link.
#[derive(Debug, Default)]
struct Tally {
    sent: u64,
    lost: u64,
    late: u64,
    retransmitted: u64,
    answers: Vec<Answer>,
}

pub struct Pinger<D, N, C> {
    pub device: D,
    pub dialer: N,
    pub clock: C,
    pub period_ns: u64,
    pub deadline_ns: u64,
    /// The peer, for messages.
    pub addr: String,
    pub link: Arc<Mutex<Link>>,
    pub stop: Arc<AtomicBool>,
    t0: u64,
    next: u64,
    seq: u64,
    tally: Tally,
    /// No session has been attempted yet: the first one's setup time sends nothing.
    first: bool,
    /// The session's retransmit timeout (RC): answers this slow are retransmissions, not RTTs.
    retransmit_ns: Option<u64>,
}

impl<D: Device, N: Dialer, C: Clock> Pinger<D, N, C> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        device: D,
        dialer: N,
        clock: C,
        period: Duration,
        deadline: Duration,
        addr: &str,
        link: Arc<Mutex<Link>>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        Self {
            device,
            dialer,
            clock,
            period_ns: period.as_nanos().max(1) as u64,
            deadline_ns: deadline.as_nanos() as u64,
            addr: addr.to_string(),
            link,
            stop,
            t0: 0,
            next: 0,
            seq: 0,
            tally: Tally::default(),
            first: true,
            retransmit_ns: None,
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Ping until `stop`.
    pub fn run(&mut self) {
        self.t0 = self.clock.now();
        while !self.stopped() {
            if let Err(why) = self.session() {
                self.flush(true);
                let note = format!("RDMA ping to {}: {why}", self.addr);
                lock(&self.link, |l| {
                    l.notes = vec![note];
                    l.status = Status::Down(why);
                });
                self.wait_retry();
            }
        }
        self.flush(true);
    }

    /// One session's life: Ok when stopped, else why it ended (its endpoint is dropped on return:
    /// QP, CQ, MR, PD and context destroyed before the next one is built).
    fn session(&mut self) -> Result<(), String> {
        let first = std::mem::replace(&mut self.first, false);
        let began = self.clock.now();
        let (mut ctl, src) = self.dialer.dial()?;
        let mut ep = self.device.open(src)?;
        let remote = ctl.handshake(self.period_ns, &ep.info())?;
        ep.connect(&remote)?;
        let setup_ns = self.clock.now().saturating_sub(began);
        // Probing starts at the next slot to come: the past ones are skipped (first session) or
        // counted lost (a rebuild; those of the retry wait were counted there).
        if first {
            self.next = self.next.max(self.due());
        } else {
            self.skip_missed();
        }
        self.retransmit_ns = ep.retransmit_after_ns();
        let counts = self.retransmit_ns.is_some();
        let note = format!(
            "RDMA to {} via {} (set up in {})",
            self.addr,
            ep.describe(),
            millis(setup_ns)
        );
        lock(&self.link, |l| {
            l.status = Status::Up;
            l.notes = vec![note];
            l.counts_retransmits = counts;
        });
        let mut got = Vec::new();
        let mut unanswered = 0u32;
        while !self.stopped() {
            if !ctl.alive() {
                return Err("control connection closed by peer".into());
            }
            if let Some(ev) = ep.event() {
                return Err(format!("device event {ev}"));
            }
            match self.probe(&mut ep, &mut got)? {
                Probed::Answered => unanswered = 0,
                Probed::Unanswered => unanswered += 1,
                // Not posted: says nothing of the device (a lost probe's 1 s wait can leave a few
                // slots past the deadline, and a UD drop must not rebuild the session).
                Probed::TooLate => {}
            }
            self.flush(false);
            if unanswered >= STALL_PROBES {
                return Err(format!(
                    "{unanswered} probes in a row unanswered although posted (device reset?): \
                     rebuilding the session"
                ));
            }
        }
        Ok(())
    }

    /// Send the next slot's probe and wait for its echo: whether it was answered in time.
    fn probe(&mut self, ep: &mut D::Ep, got: &mut Vec<[u8; PROBE_LEN]>) -> Result<Probed, String> {
        let slot = self.t0 + self.next.saturating_mul(self.period_ns);
        self.next += 1;
        self.clock.sleep_until(slot);
        self.tally.sent += 1;
        if self.clock.now().saturating_sub(slot) > self.deadline_ns {
            // So late (the thread was stopped, the machine suspended) that no answer could count.
            self.tally.lost += 1;
            return Ok(Probed::TooLate);
        }
        let seq = self.seq;
        self.seq += 1;
        let mut b = Probe {
            seq,
            intended_ns: slot,
            sent_ns: 0,
        }
        .encode();
        let sent = self.clock.now();
        b[16..].copy_from_slice(&sent.to_be_bytes());
        if let Err(e) = ep.send(&b) {
            self.tally.lost += 1;
            return Err(e);
        }
        let give_up = sent.saturating_add(self.deadline_ns);
        loop {
            got.clear();
            let n = match ep.poll(got) {
                Ok(n) => n,
                Err(e) => {
                    self.tally.lost += 1;
                    return Err(e);
                }
            };
            let recv = self.clock.now();
            let mut mine = false;
            for p in got.iter().take(n).map(Probe::decode) {
                if p.seq == seq && recv <= give_up {
                    let rtt = rtt_ns(p.intended_ns, p.sent_ns, recv, SLACK_NS);
                    // Timed from its own send: a probe held up by an earlier one's resend is
                    // late in leaving, not itself resent.
                    let flight = recv.saturating_sub(p.sent_ns);
                    if self.retransmit_ns.is_some_and(|t| flight >= t) {
                        self.tally.retransmitted += 1;
                    } else {
                        self.tally.answers.push(Answer {
                            at_ns: recv,
                            rtt_ns: rtt,
                        });
                    }
                    mine = true;
                } else {
                    self.tally.late += 1;
                }
            }
            if mine {
                return Ok(Probed::Answered);
            }
            if recv >= give_up {
                self.tally.lost += 1;
                return Ok(Probed::Unanswered);
            }
            std::hint::spin_loop();
        }
    }

    /// The first slot that is not yet past.
    fn due(&self) -> u64 {
        let since = self.clock.now().saturating_sub(self.t0);
        since.div_ceil(self.period_ns)
    }

    /// Count the slots that passed unsent (session down or being built) as sent and lost.
    fn skip_missed(&mut self) {
        let due = self.due();
        if due > self.next {
            self.tally.sent += due - self.next;
            self.tally.lost += due - self.next;
            self.next = due;
        }
    }

    fn wait_retry(&mut self) {
        let until = self.clock.now().saturating_add(RETRY.as_nanos() as u64);
        let tick = 100_000_000;
        while !self.stopped() {
            let now = self.clock.now();
            if now >= until {
                break;
            }
            self.clock.sleep_until(now.saturating_add(tick).min(until));
            self.skip_missed();
            self.flush(true);
        }
    }

    /// Move the tally to the shared link; unless `wait`, only if nobody holds it now.
    fn flush(&mut self, wait: bool) {
        let mut g = match self.link.try_lock() {
            Ok(g) => g,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) if wait => {
                self.link.lock().unwrap_or_else(|p| p.into_inner())
            }
            Err(TryLockError::WouldBlock) => return,
        };
        let t = std::mem::take(&mut self.tally);
        g.window.sent += t.sent;
        g.window.lost += t.lost;
        g.window.late += t.late;
        for _ in 0..t.retransmitted {
            g.window.record_retransmitted();
        }
        for a in t.answers {
            g.window.record(a.at_ns, a.rtt_ns);
        }
    }
}

/// "23.4 ms" (a setup time, for the session's note).
fn millis(ns: u64) -> String {
    format!("{:.1} ms", ns as f64 / 1e6)
}

/// Monotonic time since the plan's epoch; sleeps most of a wait and spins the last stretch, so a
/// probe leaves on time.
pub struct RealClock(pub Instant);

impl Clock for RealClock {
    fn now(&self) -> u64 {
        ns(self.0, Instant::now())
    }

    fn sleep_until(&self, t: u64) {
        let spin = 300_000;
        let now = self.now();
        if t > now + spin {
            std::thread::sleep(Duration::from_nanos(t - now - spin));
        }
        while self.now() < t {
            std::hint::spin_loop();
        }
    }
}

/// Dials pingd's control port, from `source` when set (as perftest's `--source_ip`): on a node
/// with several rails on one subnet the route picks one of them, and the source address is what
/// selects the rail, hence the device and GID of the session.
pub struct TcpDialer {
    pub addr: String,
    pub source: Option<IpAddr>,
    /// `Mode::Rdma` (RC) or `Mode::RdmaUd`: what the hello asks pingd for.
    pub mode: Mode,
}

impl TcpDialer {
    pub fn to(addr: &str) -> Self {
        Self {
            addr: addr.to_string(),
            source: None,
            mode: Mode::Rdma,
        }
    }

    fn connect(&self, sa: std::net::SocketAddr) -> std::io::Result<TcpStream> {
        let Some(src) = self.source else {
            return TcpStream::connect_timeout(&sa, tcp::CONNECT_TIMEOUT);
        };
        use socket2::{Domain, Protocol, Socket, Type};
        let s = Socket::new(Domain::for_address(sa), Type::STREAM, Some(Protocol::TCP))?;
        s.bind(&std::net::SocketAddr::new(src, 0).into())?;
        s.connect_timeout(&sa.into(), tcp::CONNECT_TIMEOUT)?;
        Ok(s.into())
    }
}

pub struct TcpControl(TcpStream, Mode);

impl Dialer for TcpDialer {
    type C = TcpControl;

    fn dial(&self) -> Result<(TcpControl, IpAddr), String> {
        let addr = &self.addr;
        let sa = addr
            .to_socket_addrs()
            .map_err(|e| format!("{addr}: {e}"))?
            .next()
            .ok_or_else(|| format!("{addr}: no address"))?;
        let s = self
            .connect(sa)
            .map_err(|e| match (self.source, e.kind()) {
                (Some(src), std::io::ErrorKind::AddrNotAvailable) => {
                    format!("source {src} is not an address of this host")
                }
                _ => format!("no answer from {addr}: {}", tcp::why(&e)),
            })?;
        s.set_nodelay(true).map_err(|e| e.to_string())?;
        let src = s.local_addr().map_err(|e| e.to_string())?.ip();
        Ok((TcpControl(s, self.mode), src))
    }
}

fn io(e: std::io::Error) -> String {
    format!("control connection: {}", tcp::why(&e))
}

impl Control for TcpControl {
    fn handshake(&mut self, period_ns: u64, mine: &ConnInfo) -> Result<ConnInfo, String> {
        let mode = self.1;
        let c = &mut self.0;
        let mut b = Hello { mode }.encode().to_vec();
        b.extend(Msg::Period(period_ns).encode().map_err(|e| e.to_string())?);
        b.extend(Msg::Info(*mine).encode().map_err(|e| e.to_string())?);
        c.write_all(&b).map_err(io)?;
        c.set_read_timeout(Some(Duration::from_secs(5)))
            .map_err(io)?;
        let answer = Msg::read_from(c).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => "control connection closed by peer before its \
                answer (a pingd older than this rocetop closes RDMA sessions of protocol 2)"
                .to_string(),
            _ => io(e),
        })?;
        let remote = match answer {
            Msg::Info(i) => i,
            Msg::Refuse(why) => return Err(format!("peer says: {why}")),
            Msg::Period(_) => return Err("control connection: unexpected message".into()),
        };
        c.set_nonblocking(true).map_err(io)?;
        Ok(remote)
    }

    fn alive(&mut self) -> bool {
        let mut b = [0u8; 1];
        match self.0.peek(&mut b) {
            Ok(0) => false,
            Ok(_) => true,
            Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
        }
    }
}

/// The RDMA side of the pinger: says right away if this host has no RDMA, else pings on a thread.
pub fn start_pinger(
    plan: tcp::Plan,
    opts: VerbsOptions,
    link: Arc<Mutex<Link>>,
    stop: Arc<AtomicBool>,
) {
    if let Err(why) = devices() {
        lock(&link, |l| l.notes = vec![why]);
        return;
    }
    let dialer = TcpDialer {
        addr: plan.addr.clone(),
        source: opts.source,
        mode: match opts.qp_type {
            QpType::Rc => Mode::Rdma,
            QpType::Ud => Mode::RdmaUd,
        },
    };
    let mut p = Pinger::new(
        Verbs(opts),
        dialer,
        RealClock(plan.epoch),
        plan.period,
        plan.deadline,
        &plan.addr,
        link.clone(),
        stop,
    );
    let spawned = std::thread::Builder::new()
        .name("rocetop-rdma-ping".into())
        .spawn(move || p.run());
    if let Err(e) = spawned {
        lock(&link, |l| {
            l.notes = vec![format!("RDMA pinger: cannot start a thread: {e}")]
        });
    }
}

#[cfg(test)]
#[path = "pinger_tests.rs"]
mod tests;
