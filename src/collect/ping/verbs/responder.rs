//! pingd's side of one RDMA session on an accepted control connection (after the hello): read the
//! pinger's period and `Info`, open the endpoint on the rail the connection arrived on, bring it to
//! RTR/RTS and answer with this side's `Info` — or a `Refuse` saying why not — then echo every
//! probe until the connection closes, an error completion or a device event.
//!
//! Polling trade-off: the CQ is busy-polled for one probe period and a quarter after each probe
//! (the pinger's period from the handshake, at most `bound`), so at that rate every probe is caught
//! by the spin; after that it is polled every 50 µs, which costs the next probe up to ~50-110 µs.

use super::super::proto::{ConnInfo, Msg, PROBE_LEN};
use super::super::tcp;
use super::{Device, Endpoint, spin_for};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

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
    let spin = spin_for(period, bound);
    log(session_line(&ep.describe(), period, spin));
    echo(&mut c, &mut ep, spin)
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

/// "RDMA via rocep19s0 port 1 GID 3 (...); probe period 100ms: busy-polls 125ms after each probe
/// (a whole core)"
pub fn session_line(path: &str, period: Option<Duration>, spin: Duration) -> String {
    let cost = match period {
        Some(p) if spin >= p => "a whole core while the pinger runs",
        Some(_) => "then polls every 50 µs: replies up to ~0.1 ms late",
        None => "the pinger did not say its period",
    };
    let period = period.map_or("unknown".into(), |p| format!("{p:?}"));
    format!("RDMA via {path}; probe period {period}: busy-polls {spin:?} after each probe ({cost})")
}

fn echo<E: Endpoint>(c: &mut TcpStream, ep: &mut E, spin: Duration) -> Result<(), String> {
    let mut got: Vec<[u8; PROBE_LEN]> = Vec::new();
    let mut last = Instant::now();
    let mut checked = Instant::now();
    loop {
        got.clear();
        if ep.poll(&mut got)? > 0 {
            for b in &got {
                ep.send(b)?;
            }
            last = Instant::now();
        } else if last.elapsed() > spin {
            std::thread::sleep(Duration::from_micros(50));
        } else {
            std::hint::spin_loop();
        }
        if checked.elapsed() > Duration::from_millis(10) {
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
