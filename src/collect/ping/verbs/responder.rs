//! pingd's side of one RDMA session on an accepted control connection (after the hello): read the
//! pinger's period and `Info`, open the endpoint on the rail the connection arrived on, bring it to
//! RTR/RTS and answer with this side's `Info` — or a `Refuse` saying why not — then echo every
//! probe until the connection closes, an error completion or a device event.
//!
//! Polling: the pinger sends on a strict grid of slots and says its period in the handshake, so
//! once a probe has come the next is due one period after it (less the lateness it was sent with).
//! pingd sleeps until [`GUARD`] before that, busy-polls the CQ around it and echoes at once: at 10/s
//! that is about 0.3 % of a core per session, with no added latency for probes on their slot. A
//! probe that misses its slot (lost, or delayed by a retransmission) is waited for by polling every
//! 50 µs (up to ~0.1 ms late). Pingers sending faster than every [`FAST`], or that did not say
//! their period, are busy-polled for 1.25 periods after each probe, at most `bound`.

use super::super::proto::{ConnInfo, Msg, PROBE_LEN};
use super::super::tcp;
use super::{Device, Endpoint, spin_for};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long before a probe is due pingd wakes to spin for it, and how long after it keeps spinning
/// when it is late: more than a sleeping thread's usual wake-up lateness (timer slack 50 µs).
pub const GUARD: Duration = Duration::from_micros(300);
/// Below this period sleeping between probes saves little and risks a late wake: spin.
pub const FAST: Duration = Duration::from_millis(2);
/// The longest sleep: the control connection and device events are checked this often.
pub const CHECK: Duration = Duration::from_millis(10);
/// The poll step while a probe is off its slot.
pub const POLL: Duration = Duration::from_micros(50);

/// What the echo loop does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    Spin,
    /// Sleep [`POLL`], then look again.
    Poll,
    Sleep(Duration),
}

/// Offsets kept to estimate the pinger's clock: a few seconds of probes, so clock drift between
/// the hosts (tens of ppm) does not build up.
const OFFSETS: usize = 32;

/// When the next probe is due. Probes carry their slot on the pinger's clock; the smallest
/// (arrival − send stamp) of the recent ones maps that clock onto ours (a probe found late, after
/// pingd overslept, only raises its own value), so the next slot is expected where the pinger will
/// send it, never one oversleep later than the last arrival.
#[derive(Clone, Debug)]
pub struct Pace {
    period: Option<Duration>,
    bound: Duration,
    base: Instant,
    /// Recent (arrival ns since `base`) − (send stamp ns), newest last.
    offsets: std::collections::VecDeque<i128>,
    /// When the next probe should arrive, once one has.
    next: Option<Instant>,
    last: Instant,
}

impl Pace {
    pub fn new(period: Option<Duration>, bound: Duration, now: Instant) -> Self {
        Pace {
            period,
            bound,
            base: now,
            offsets: std::collections::VecDeque::with_capacity(OFFSETS),
            next: None,
            last: now,
        }
    }

    /// The probe of slot `intended_ns`, stamped `sent_ns` (the pinger's clock), was found at `at`.
    pub fn arrived(&mut self, at: Instant, intended_ns: u64, sent_ns: u64) {
        self.last = at;
        let Some(p) = self.period else {
            return;
        };
        let local = at.saturating_duration_since(self.base).as_nanos() as i128;
        if self.offsets.len() == OFFSETS {
            self.offsets.pop_front();
        }
        self.offsets.push_back(local - sent_ns as i128);
        let offset = self.offsets.iter().copied().min().unwrap_or(0);
        let due = intended_ns as i128 + p.as_nanos() as i128 + offset;
        let due = u64::try_from(due.max(0)).unwrap_or(u64::MAX);
        self.next = self.base.checked_add(Duration::from_nanos(due));
    }

    fn paced(&self) -> Option<(Duration, Instant)> {
        let p = self.period.filter(|p| *p >= FAST)?;
        Some((p, self.next?))
    }

    pub fn wait(&self, now: Instant) -> Wait {
        if self.bound.is_zero() {
            return Wait::Poll;
        }
        let Some((p, next)) = self.paced() else {
            // Not paced (yet): spin 1.25 periods after the last probe (or the start), then poll.
            return if now.saturating_duration_since(self.last) <= spin_for(self.period, self.bound)
            {
                Wait::Spin
            } else {
                Wait::Poll
            };
        };
        // The slot to wait for: the next one, or, once it is more than GUARD past, a later one.
        let given_up = next + GUARD;
        let (due, missed) = if now <= given_up {
            (next, false)
        } else {
            let n = (now - given_up).as_nanos().div_ceil(p.as_nanos()).max(1);
            (next + p * n.min(u32::MAX as u128) as u32, true)
        };
        let wake = due.checked_sub(GUARD).unwrap_or(due);
        if now >= wake {
            Wait::Spin
        } else if missed {
            // The expected probe has not come: it may yet, off its slot.
            Wait::Poll
        } else {
            Wait::Sleep((wake - now).min(CHECK))
        }
    }
}

/// Serve one session: Ok when the pinger closes the connection, else why it ended. `log` gets one
/// line when the session is up (its path and what its polling costs).
pub fn serve<D: Device>(
    mut c: TcpStream,
    device: &D,
    bound: Duration,
    log: &dyn Fn(String),
) -> Result<(), String> {
    let (period, remote) = read_request(&mut c)?;
    let src = c.local_addr().map_err(io)?.ip();
    let mut ep = match open_and_connect(device, src, &remote) {
        Ok(ep) => ep,
        Err(why) => {
            // The pinger shows this sentence; closing without it would say only "closed".
            let _ = c.write_all(&Msg::Refuse(why.clone()).encode().unwrap_or_default());
            return Err(why);
        }
    };
    c.write_all(&Msg::Info(ep.info()).encode().map_err(|e| e.to_string())?)
        .map_err(io)?;
    c.set_nonblocking(true).map_err(io)?;
    log(session_line(&ep.describe(), period, bound));
    echo(&mut c, &mut ep, Pace::new(period, bound, Instant::now()))
}

fn io(e: std::io::Error) -> String {
    format!("control connection: {}", tcp::why(&e))
}

/// The whole handshake (every message before the pinger's `Info`) is due this soon: a peer
/// sending a `Period` (or a byte) every few seconds had held its session, and its place among
/// pingd's sessions, for as long as it liked.
pub const HANDSHAKE: Duration = Duration::from_secs(5);

/// The pinger's period (if it sent one) and its `Info`, within [`HANDSHAKE`].
fn read_request(c: &mut TcpStream) -> Result<(Option<Duration>, ConnInfo), String> {
    let mut r = Due {
        c,
        until: Instant::now() + HANDSHAKE,
    };
    let mut period = None;
    loop {
        match Msg::read_from(&mut r).map_err(io)? {
            Msg::Period(ns) => period = Some(Duration::from_nanos(ns)),
            Msg::Info(i) => {
                r.c.set_read_timeout(None).map_err(io)?;
                return Ok((period, i));
            }
            Msg::Refuse(why) => return Err(format!("pinger says: {why}")),
        }
    }
}

/// Reads that all end by `until` (each read's timeout is what is left).
struct Due<'a> {
    c: &'a mut TcpStream,
    until: Instant,
}

impl Read for Due<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("handshake not done within {HANDSHAKE:?}"),
            ));
        }
        self.c.set_read_timeout(Some(left))?;
        self.c.read(buf)
    }
}

fn open_and_connect<D: Device>(
    device: &D,
    src: std::net::IpAddr,
    remote: &ConnInfo,
) -> Result<D::Ep, String> {
    let mut ep = device.open(src)?;
    ep.connect(remote)
        .map_err(|e| format!("pingd {}: {e}", ep.describe()))?;
    Ok(ep)
}

/// "RDMA via rocep19s0 port 1 GID 3 (...); probe period 100ms: sleeps until 300µs before each
/// probe is due (about 0.3 % of a core)"
pub fn session_line(path: &str, period: Option<Duration>, bound: Duration) -> String {
    let how = match period {
        _ if bound.is_zero() => "polls every 50 µs (replies up to ~0.1 ms late)".to_string(),
        Some(p) if p >= FAST => format!(
            "sleeps until {GUARD:?} before each probe is due (about {:.1} % of a core)",
            100.0 * GUARD.as_secs_f64() / p.as_secs_f64()
        ),
        Some(p) => {
            let spin = spin_for(Some(p), bound);
            let cost = if spin >= p {
                "a whole core while the pinger runs".to_string()
            } else {
                "then polls every 50 µs: replies up to ~0.1 ms late".to_string()
            };
            format!("busy-polls {spin:?} after each probe ({cost})")
        }
        None => {
            format!("busy-polls {bound:?} after each probe (the pinger did not say its period)")
        }
    };
    let period = period.map_or("unknown".into(), |p| format!("{p:?}"));
    format!("RDMA via {path}; probe period {period}: {how}")
}

fn echo<E: Endpoint>(c: &mut TcpStream, ep: &mut E, mut pace: Pace) -> Result<(), String> {
    let mut got: Vec<[u8; PROBE_LEN]> = Vec::new();
    let mut checked = Instant::now();
    loop {
        got.clear();
        if ep.poll(&mut got)? > 0 {
            for b in &got {
                ep.send(b)?;
            }
            if let Some(b) = got.last() {
                let p = super::super::proto::Probe::decode(b);
                pace.arrived(Instant::now(), p.intended_ns, p.sent_ns);
            }
        } else {
            match pace.wait(Instant::now()) {
                Wait::Spin => std::hint::spin_loop(),
                Wait::Poll => std::thread::sleep(POLL),
                Wait::Sleep(d) => std::thread::sleep(d),
            }
        }
        if checked.elapsed() > CHECK {
            checked = Instant::now();
            if let Some(ev) = ep.event() {
                return Err(format!("device event {ev}"));
            }
            // Nothing is expected on the control connection: drained; end of stream ends the session.
            let mut sink = [0u8; 64];
            match c.read(&mut sink) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(io(e)),
            }
        }
    }
}

#[cfg(test)]
#[path = "responder_tests.rs"]
mod tests;
