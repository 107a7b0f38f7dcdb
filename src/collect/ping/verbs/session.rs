//! The RDMA ping-pong loops over an [`Endpoint`](super::Endpoint): the pinger's thread and pingd's
//! responder. No `unsafe` here: every verbs call goes through the endpoint's methods.

use super::super::proto::{Hello, Mode, Msg, Probe};
use super::super::stats::rtt_ns;
use super::super::{Link, Status, VerbsOptions, lock, ns, tcp};
use super::{Endpoint, SLACK_NS, devices};
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const RETRY: Duration = Duration::from_secs(5);

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
    let l2 = link.clone();
    let spawned = std::thread::Builder::new()
        .name("rocetop-rdma-ping".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                if let Err(why) = session(&plan, &opts, &l2, &stop) {
                    lock(&l2, |l| {
                        l.abandon();
                        l.notes = vec![format!("RDMA ping to {}: {why}", plan.addr)];
                        l.status = Status::Down(why);
                    });
                }
                let until = Instant::now() + RETRY;
                while Instant::now() < until && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        });
    if let Err(e) = spawned {
        lock(&link, |l| {
            l.notes = vec![format!("RDMA pinger: cannot start a thread: {e}")]
        });
    }
}

fn control(addr: &str) -> Result<TcpStream, String> {
    let sa = addr
        .to_socket_addrs()
        .map_err(|e| format!("{addr}: {e}"))?
        .next()
        .ok_or_else(|| format!("{addr}: no address"))?;
    let s = TcpStream::connect_timeout(&sa, tcp::CONNECT_TIMEOUT)
        .map_err(|e| format!("no answer from {addr}: {}", tcp::why(&e)))?;
    s.set_nodelay(true).map_err(|e| e.to_string())?;
    Ok(s)
}

/// True while the peer keeps the control connection open (the stream is non-blocking).
fn alive(s: &TcpStream) -> bool {
    let mut b = [0u8; 1];
    match s.peek(&mut b) {
        Ok(0) => false,
        Ok(_) => true,
        Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
    }
}

fn session(
    plan: &tcp::Plan,
    opts: &VerbsOptions,
    link: &Mutex<Link>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let mut ep = Endpoint::open(opts)?;
    let mut c = control(&plan.addr)?;
    let io = |e: std::io::Error| format!("control connection: {}", tcp::why(&e));
    c.write_all(&Hello { mode: Mode::Rdma }.encode())
        .map_err(io)?;
    c.write_all(&Msg::Info(ep.info()).encode().map_err(|e| e.to_string())?)
        .map_err(io)?;
    c.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(io)?;
    let remote = match Msg::read_from(&mut c).map_err(io)? {
        Msg::Info(i) => i,
        Msg::Refuse(why) => return Err(format!("peer says: {why}")),
    };
    ep.connect(&remote)?;
    c.set_nonblocking(true).map_err(io)?;
    lock(link, |l| {
        l.status = Status::Up;
        l.notes.clear();
    });
    let period_ns = plan.period.as_nanos().max(1) as u64;
    let deadline_ns = plan.deadline.as_nanos() as u64;
    let start = Instant::now();
    let mut seq = 0u64;
    let mut got = Vec::new();
    for n in 0u64.. {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        if !alive(&c) {
            return Err("control connection closed by peer".into());
        }
        let slot = start + Duration::from_nanos(period_ns.saturating_mul(n));
        // Sleep most of the way, spin the last stretch: the send leaves on time.
        let now = Instant::now();
        if slot > now + Duration::from_micros(300) {
            std::thread::sleep(slot - now - Duration::from_micros(300));
        }
        while Instant::now() < slot {
            std::hint::spin_loop();
        }
        let sent = Instant::now();
        if sent.saturating_duration_since(slot) > plan.deadline {
            lock(link, |l| {
                l.window.sent += 1;
                l.window.lost += 1;
            });
            continue;
        }
        let probe = Probe {
            seq,
            intended_ns: ns(plan.epoch, slot),
            sent_ns: ns(plan.epoch, sent),
        };
        seq += 1;
        lock(link, |l| l.sent(probe.seq, probe.intended_ns + deadline_ns));
        ep.send(&probe.encode())?;
        // Busy-poll until the echo of this probe or its deadline.
        let give_up = sent + plan.deadline;
        'wait: while Instant::now() < give_up {
            got.clear();
            if ep.poll(&mut got)? == 0 {
                std::hint::spin_loop();
                continue;
            }
            let recv = ns(plan.epoch, Instant::now());
            for b in &got {
                let p = Probe::decode(b);
                let rtt = rtt_ns(p.intended_ns, p.sent_ns, recv, SLACK_NS);
                lock(link, |l| l.answered(p.seq, recv, rtt));
                if p.seq == probe.seq {
                    break 'wait;
                }
            }
        }
        lock(link, |l| l.expire(ns(plan.epoch, Instant::now())));
    }
    Ok(())
}

/// pingd's side of one RDMA session on an accepted control connection (after the hello): answer
/// the pinger's `Info`, then echo every probe until the connection closes. The CQ is busy-polled for
/// `spin` after each probe (exact RTTs at rates of 1/spin and up), then polled every 50 µs.
pub fn serve(mut c: TcpStream, opts: &VerbsOptions, spin: Duration) -> Result<(), String> {
    let io = |e: std::io::Error| format!("control connection: {}", tcp::why(&e));
    c.set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(io)?;
    let remote = match Msg::read_from(&mut c).map_err(io)? {
        Msg::Info(i) => i,
        Msg::Refuse(why) => return Err(format!("pinger says: {why}")),
    };
    let mut ep = match Endpoint::open(opts) {
        Ok(ep) => ep,
        Err(why) => {
            let _ = c.write_all(&Msg::Refuse(why.clone()).encode().unwrap_or_default());
            return Err(why);
        }
    };
    ep.connect(&remote)?;
    c.write_all(&Msg::Info(ep.info()).encode().map_err(|e| e.to_string())?)
        .map_err(io)?;
    c.set_nonblocking(true).map_err(io)?;
    let mut got = Vec::new();
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
            if !alive(&c) {
                return Ok(());
            }
            // Drain anything the pinger wrote on the control connection (nothing is expected).
            let mut sink = [0u8; 64];
            let _ = c.read(&mut sink);
        }
    }
}
