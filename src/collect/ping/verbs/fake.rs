//! An in-memory stand-in for the verbs endpoint, clock and control connection, so the pinger's and
//! pingd's loops run in tests without RDMA hardware. A device's endpoints read from `rx` and write
//! to `tx`: the same queue for an echoing peer, crossed queues for a pinger/pingd pair.

use super::super::Link;
use super::super::gid::{self, Choice, Entry, Roce, Versions};
use super::super::proto::{ConnInfo, PROBE_LEN, Probe};
use super::pinger::{Clock, Control, Dialer};
use super::{Device, Endpoint};
use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub type Queue = Arc<Mutex<VecDeque<[u8; PROBE_LEN]>>>;

/// Each poll of a fake endpoint advances the fake clock this much (so an echo has an RTT of
/// exactly this, and an empty CQ lets time pass).
pub const POLL_NS: u64 = 10_000;
/// What opening an endpoint, and bringing it to RTS, each cost: about what a real NIC takes
/// (device open, PD/CQ/QP creation, two `modify_qp` through the kernel), so setup time shows in
/// any loop that mistakes it for RTT.
pub const SETUP_NS: u64 = 20_000_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    Now(u64),
    /// A probe posted: its seq and the send time it carries.
    Send {
        seq: u64,
        sent_ns: u64,
    },
}

/// Virtual time: moves when slept on or polled (and by 1 ns per read if `tick`, so every read is
/// distinct). Every read is logged.
#[derive(Clone, Default)]
pub struct FakeClock {
    pub t: Arc<Mutex<u64>>,
    pub log: Arc<Mutex<Vec<Ev>>>,
    pub tick: bool,
}

impl FakeClock {
    fn advance(&self, d: u64) {
        *self.t.lock().expect("clock") += d;
    }
}

/// Spend [`SETUP_NS`]: on the fake clock when there is one, else for real.
fn spend_setup(clock: &Option<FakeClock>) {
    match clock {
        Some(c) => c.advance(SETUP_NS),
        None => std::thread::sleep(std::time::Duration::from_nanos(SETUP_NS)),
    }
}

impl Clock for FakeClock {
    fn now(&self) -> u64 {
        let mut g = self.t.lock().expect("clock");
        let t = *g;
        *g += u64::from(self.tick);
        self.log.lock().expect("log").push(Ev::Now(t));
        t
    }

    fn sleep_until(&self, t: u64) {
        let mut g = self.t.lock().expect("clock");
        *g = (*g).max(t);
    }
}

/// What the fake device does; counters the tests read.
#[derive(Default)]
pub struct Script {
    pub fail_open: Vec<String>,
    pub fail_connect: Option<String>,
    /// Endpoints opened from now on whose sends vanish (a reset device): this many.
    pub blackhole_opens: u32,
    /// The next poll after this many sends (in all) fails with an error completion, once.
    pub fail_poll_after: Option<u64>,
    pub event: Option<String>,
    /// The RoCE versions the fake port has its GID as (None: both, index 2 v1 and 3 v2).
    pub versions: Option<Versions>,
    /// Set `stop` after this many sends in all.
    pub stop_after: Option<u64>,
    pub opens: u64,
    pub sends: u64,
    pub sources: Vec<IpAddr>,
}

#[derive(Clone)]
pub struct FakeDevice {
    pub script: Arc<Mutex<Script>>,
    pub rx: Queue,
    pub tx: Queue,
    pub clock: Option<FakeClock>,
    pub stop: Arc<AtomicBool>,
}

impl FakeDevice {
    /// A device whose peer echoes every probe at once.
    pub fn echo(clock: Option<FakeClock>, stop: Arc<AtomicBool>) -> Self {
        let q = Queue::default();
        Self {
            script: Arc::default(),
            rx: q.clone(),
            tx: q,
            clock,
            stop,
        }
    }

    /// Two devices wired to each other.
    pub fn pair(stop: Arc<AtomicBool>) -> (Self, Self) {
        let (a, b) = (Queue::default(), Queue::default());
        let d = |rx: &Queue, tx: &Queue| Self {
            script: Arc::default(),
            rx: rx.clone(),
            tx: tx.clone(),
            clock: None,
            stop: stop.clone(),
        };
        (d(&a, &b), d(&b, &a))
    }
}

pub struct FakeEp {
    dev: FakeDevice,
    blackhole: bool,
    qpn: u32,
    choice: Choice,
    /// The version agreed on in `connect`.
    agreed: Option<Roce>,
}

/// The fake port: ::ffff:127.0.0.1 on lo at index 2 as v1 and 3 as v2, as the script says.
fn fake_choice(v: Versions) -> Choice {
    let entry = |index: u8, ty: &str| Entry {
        index,
        ty: ty.into(),
    };
    Choice {
        device: "fake0".into(),
        port: 1,
        v1: v.v1.then(|| entry(2, "IB/RoCE v1")),
        v2: v.v2.then(|| entry(3, "RoCE v2")),
        gid: "0000:0000:0000:0000:0000:ffff:7f00:0001".into(),
        netdev: Some("lo".into()),
    }
}

impl Device for FakeDevice {
    type Ep = FakeEp;

    fn open(&self, src: IpAddr) -> Result<FakeEp, String> {
        let mut s = self.script.lock().expect("script");
        s.opens += 1;
        s.sources.push(src);
        if !s.fail_open.is_empty() {
            return Err(s.fail_open.remove(0));
        }
        let blackhole = s.blackhole_opens > 0;
        s.blackhole_opens = s.blackhole_opens.saturating_sub(1);
        let qpn = 0x100 + s.opens as u32;
        let versions = s.versions.unwrap_or(Versions { v1: true, v2: true });
        drop(s);
        spend_setup(&self.clock);
        Ok(FakeEp {
            dev: self.clone(),
            blackhole,
            qpn,
            choice: fake_choice(versions),
            agreed: None,
        })
    }
}

impl Endpoint for FakeEp {
    fn info(&self) -> ConnInfo {
        ConnInfo {
            qpn: self.qpn,
            psn: 0x42,
            lid: 0,
            gid: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1],
            mtu: 3,
            versions: self.agreed.map_or(self.choice.versions(), Versions::only),
        }
    }

    fn connect(&mut self, remote: &ConnInfo) -> Result<(), String> {
        if let Some(e) = &self.dev.script.lock().expect("script").fail_connect {
            return Err(e.clone());
        }
        self.agreed = Some(gid::agree(self.choice.versions(), remote.versions)?);
        spend_setup(&self.dev.clock);
        Ok(())
    }

    fn send(&mut self, data: &[u8; PROBE_LEN]) -> Result<(), String> {
        let p = Probe::decode(data);
        if let Some(c) = &self.dev.clock {
            c.log.lock().expect("log").push(Ev::Send {
                seq: p.seq,
                sent_ns: p.sent_ns,
            });
        }
        let mut s = self.dev.script.lock().expect("script");
        s.sends += 1;
        if s.stop_after.is_some_and(|n| s.sends >= n) {
            self.dev.stop.store(true, Ordering::Relaxed);
        }
        if !self.blackhole {
            self.dev.tx.lock().expect("q").push_back(*data);
        }
        Ok(())
    }

    fn poll(&mut self, out: &mut Vec<[u8; PROBE_LEN]>) -> Result<usize, String> {
        if let Some(c) = &self.dev.clock {
            c.advance(POLL_NS);
        }
        {
            let mut s = self.dev.script.lock().expect("script");
            if s.fail_poll_after.is_some_and(|n| s.sends >= n) {
                s.fail_poll_after = None;
                return Err("completion failed: transport retry counter exceeded".into());
            }
        }
        let mut q = self.dev.rx.lock().expect("q");
        let n = q.len();
        out.extend(q.drain(..));
        Ok(n)
    }

    fn event(&mut self) -> Option<String> {
        self.dev.script.lock().expect("script").event.take()
    }

    fn retransmit_after_ns(&self) -> Option<u64> {
        None
    }

    fn describe(&self) -> String {
        self.choice
            .path(self.agreed.unwrap_or(self.choice.preferred()))
    }
}

/// A link's probes sent and lost so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentLost {
    pub sent: u64,
    pub lost: u64,
}

/// Dials fail this many times first; each dial records the link's notes (why the last session
/// ended) and its counters.
#[derive(Clone, Default)]
pub struct FakeDialer {
    pub fails: Arc<Mutex<u32>>,
    pub link: Option<Arc<Mutex<Link>>>,
    pub notes_at_dial: Arc<Mutex<Vec<Vec<String>>>>,
    pub counts_at_dial: Arc<Mutex<Vec<SentLost>>>,
}

pub struct FakeControl;

impl Dialer for FakeDialer {
    type C = FakeControl;

    fn dial(&self) -> Result<(FakeControl, IpAddr), String> {
        if let Some(l) = &self.link {
            let g = l.lock().expect("link");
            self.notes_at_dial
                .lock()
                .expect("notes")
                .push(g.notes.clone());
            let counts = SentLost {
                sent: g.window.sent,
                lost: g.window.lost,
            };
            self.counts_at_dial.lock().expect("counts").push(counts);
        }
        let mut f = self.fails.lock().expect("fails");
        if *f > 0 {
            *f -= 1;
            return Err("no answer from peer: connection refused".into());
        }
        Ok((FakeControl, "10.0.0.1".parse().expect("ip")))
    }
}

impl Control for FakeControl {
    fn handshake(&mut self, _period_ns: u64, mine: &ConnInfo) -> Result<ConnInfo, String> {
        Ok(*mine)
    }

    fn alive(&mut self) -> bool {
        true
    }
}
