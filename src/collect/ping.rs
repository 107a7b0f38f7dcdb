//! Latency: continuous pings from this machine to each configured peer's `rocetop pingd`, over TCP and
//! (feature `verbs`) RDMA RC send/recv, summarised over a sliding window.
//!
//! A ping source is an ordinary [`Source`](super::Source) of kind `Ping`: its transport is a
//! [`PingTransport`] whose pingers run in the background from the first poll on; each poll (every
//! `poll.ping_interval`) answers a text [report] of the window, parsed by [`report::parse`] (parse
//! kind `ping`), so recordings and replay treat pings like any other source. Published per
//! `{peer, transport}`: `rocetop_ping_rtt_seconds{quantile="0"|"0.5"|"0.99"|"0.999"|"1"}`, mean,
//! stdev, jitter, the window's probe count, counters sent/answered/lost, and the window histogram
//! `rocetop_ping_rtt_bucket_probes` / `_le_seconds` {bucket="00".."15"} that the Latency tab draws.
//!
//! The TCP connection is also the control channel of the RDMA session, so a peer that does not
//! accept it is a failed source ("no answer from 10.0.0.2:18515: connection refused").

pub mod demo;
pub mod gid;
pub mod proto;
pub mod report;
pub mod stats;
pub mod tcp;
#[cfg(feature = "verbs")]
pub mod verbs;

use super::demo::DemoCluster;
use super::transport::{CollectError, Request, Transport};
use crate::config;
use async_trait::async_trait;
use stats::Window;
use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::parse::ping::parse;

/// Where `rocetop pingd` listens unless told otherwise (the port `ib_send_lat` uses).
pub const DEFAULT_PORT: u16 = 18515;
pub const WINDOW: Duration = Duration::from_secs(10);
pub const DEADLINE: Duration = Duration::from_secs(1);
const MAX_SAMPLES: usize = 200_000;
pub const NO_VERBS: &str = "RDMA pings: built without verbs";

/// The queue pair type of RDMA pings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QpType {
    /// Reliable connected (the default): what RDMA traffic sees, the NIC's resends included; a
    /// dropped frame shows as a retransmitted probe.
    #[default]
    Rc,
    /// Unreliable datagram (as rdma-core's ud_pingpong): nothing is resent, a drop is a lost probe.
    Ud,
}

/// How the RDMA side picks its device and marks its packets.
#[derive(Clone, Debug)]
pub struct VerbsOptions {
    /// RDMA device (default: the one whose RoCE v2 GID is the source address toward the peer).
    pub device: Option<String>,
    /// Port of a pinned device.
    pub port: u8,
    /// GID index of a pinned device (default: its RoCE v2 GID equal to the source address).
    pub gid_index: Option<u8>,
    /// IP traffic class of the pings (default 106: DSCP 26, ECT(0) — the lab's lossless class).
    pub traffic_class: u8,
    /// Service level (default 0).
    pub sl: u8,
    /// Bind the control connection to this local address (its rail, so its device and GID).
    pub source: Option<IpAddr>,
    /// `device = "all"`: one session per port of every device, each bound to its rail's address.
    pub every_rail: bool,
    pub qp_type: QpType,
    pub sysfs_root: String,
}

impl Default for VerbsOptions {
    fn default() -> Self {
        Self {
            device: None,
            port: 1,
            gid_index: None,
            traffic_class: 106,
            sl: 0,
            source: None,
            every_rail: false,
            qp_type: QpType::Rc,
            sysfs_root: "/sys".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    /// Probes per second.
    pub rate: f64,
    pub window: Duration,
    pub deadline: Duration,
    pub verbs: VerbsOptions,
}

impl Options {
    pub fn with_rate(rate: f64) -> Self {
        Self {
            rate,
            window: WINDOW,
            deadline: DEADLINE,
            verbs: VerbsOptions::default(),
        }
    }

    pub fn period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.rate.clamp(0.01, 100_000.0))
    }
}

/// `host` → `host:18515`; `host:port` and `[v6]:port` stay.
pub fn with_default_port(addr: &str) -> String {
    let has_port = addr
        .rsplit_once(':')
        .is_some_and(|(h, p)| p.parse::<u16>().is_ok() && (!h.contains(':') || h.ends_with(']')));
    if has_port {
        addr.to_string()
    } else if addr.contains(':') {
        format!("[{addr}]:{DEFAULT_PORT}")
    } else {
        format!("{addr}:{DEFAULT_PORT}")
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    Starting,
    Up,
    Down(String),
}

/// One transport's state, shared between its pinger and the polls.
#[derive(Debug)]
pub struct Link {
    pub window: Window,
    pub status: Status,
    /// Probes in flight: seq → deadline (ns).
    pub outstanding: BTreeMap<u64, u64>,
    pub notes: Vec<String>,
    /// The transport resends lost frames and the pinger counts the probes that needed it (RDMA
    /// RC): the report carries `window.retransmitted`; otherwise it is not measured, not zero.
    pub counts_retransmits: bool,
}

impl Link {
    pub fn new(opts: &Options) -> Self {
        Self {
            window: Window::new(opts.window.as_nanos() as u64, MAX_SAMPLES),
            status: Status::Starting,
            outstanding: BTreeMap::new(),
            notes: Vec::new(),
            counts_retransmits: false,
        }
    }

    pub fn sent(&mut self, seq: u64, deadline_ns: u64) {
        self.window.sent += 1;
        self.outstanding.insert(seq, deadline_ns);
    }

    pub fn answered(&mut self, seq: u64, at_ns: u64, rtt_ns: u64) {
        if self.outstanding.remove(&seq).is_some() {
            self.window.record(at_ns, rtt_ns);
        } else {
            self.window.late += 1;
        }
    }

    /// Probes past their deadline are lost.
    pub fn expire(&mut self, now_ns: u64) {
        while let Some((_, &dl)) = self.outstanding.first_key_value() {
            if dl >= now_ns {
                break;
            }
            self.outstanding.pop_first();
            self.window.lost += 1;
        }
    }

    /// The connection is gone: nothing in flight can be answered.
    pub fn abandon(&mut self) {
        self.window.lost += self.outstanding.len() as u64;
        self.outstanding.clear();
    }

    fn section<'a>(&mut self, transport: &'a str, now_ns: u64) -> report::Section<'a> {
        self.expire(now_ns);
        self.window.prune(now_ns);
        report::Section {
            transport,
            device: None,
            sent: self.window.sent,
            answered: self.window.answered,
            lost: self.window.lost,
            retransmitted: self.counts_retransmits.then_some(self.window.retransmitted),
            summary: self.window.summary(),
        }
    }
}

/// Run `f` on a link. A pinger that panicked mid-update leaves counters, not broken invariants, so a
/// poisoned lock is used as is.
pub fn lock<T>(m: &Mutex<Link>, f: impl FnOnce(&mut Link) -> T) -> T {
    let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
    f(&mut g)
}

/// Nanoseconds from `epoch` to `t`.
pub fn ns(epoch: Instant, t: Instant) -> u64 {
    t.saturating_duration_since(epoch).as_nanos() as u64
}

/// The background pingers; they stop when the transport is dropped.
struct Running {
    tcp: tokio::task::AbortHandle,
    stop: Arc<AtomicBool>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.tcp.abort();
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// One RDMA pinger's link, and the rail it pings over where `device = "all"`.
struct RdmaLink {
    /// The `device` label of its rows (None: the one session of a peer, no label).
    device: Option<String>,
    link: Arc<Mutex<Link>>,
}

/// The transport of a real ping source.
pub struct PingTransport {
    peer: String,
    addr: String,
    opts: Options,
    epoch: Instant,
    tcp: Arc<Mutex<Link>>,
    /// One link, or one per rail (`device = "all"`, filled when the pingers start).
    rdma: Mutex<Vec<RdmaLink>>,
    running: Mutex<Option<Running>>,
}

impl std::fmt::Debug for PingTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PingTransport({} at {})", self.peer, self.addr)
    }
}

impl PingTransport {
    pub fn new(peer: &str, addr: &str, opts: Options) -> Self {
        Self {
            peer: peer.to_string(),
            addr: with_default_port(addr),
            tcp: Arc::new(Mutex::new(Link::new(&opts))),
            rdma: Mutex::new(Vec::new()),
            opts,
            epoch: Instant::now(),
            running: Mutex::new(None),
        }
    }

    /// Start the pingers if they are not running; true the first time.
    fn start(&self) -> bool {
        let mut r = self.running.lock().unwrap_or_else(|p| p.into_inner());
        if r.is_some() {
            return false;
        }
        let plan = tcp::Plan {
            addr: self.addr.clone(),
            period: self.opts.period(),
            deadline: self.opts.deadline,
            epoch: self.epoch,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let handle = tokio::spawn(tcp::run(plan.clone(), self.tcp.clone()));
        self.start_rdma(plan, stop.clone());
        *r = Some(Running {
            tcp: handle.abort_handle(),
            stop,
        });
        true
    }

    /// A new RDMA link, reported under `device`.
    fn add_rdma(&self, device: Option<String>) -> Arc<Mutex<Link>> {
        let link = Arc::new(Mutex::new(Link::new(&self.opts)));
        self.rdma
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(RdmaLink {
                device,
                link: link.clone(),
            });
        link
    }

    #[cfg(feature = "verbs")]
    fn start_rdma(&self, plan: tcp::Plan, stop: Arc<AtomicBool>) {
        if !self.opts.verbs.every_rail {
            let link = self.add_rdma(None);
            verbs::start_pinger(plan, self.opts.verbs.clone(), link, stop);
            return;
        }
        let rails = match gid::rails(&self.opts.verbs.sysfs_root, peer_is_v4(&self.addr)) {
            Ok(r) => r,
            Err(why) => {
                let link = self.add_rdma(None);
                lock(&link, |l| l.notes = vec![why]);
                return;
            }
        };
        for (rail, label) in labelled(&rails) {
            let link = self.add_rdma(Some(label.clone()));
            match &rail.source {
                Ok(src) => {
                    let opts = VerbsOptions {
                        device: Some(rail.device.clone()),
                        port: rail.port,
                        source: Some(*src),
                        every_rail: false,
                        ..self.opts.verbs.clone()
                    };
                    verbs::start_pinger(plan.clone(), opts, link, stop.clone());
                }
                Err(why) => rail_down(&link, &self.addr, &label, why),
            }
        }
    }

    #[cfg(not(feature = "verbs"))]
    fn start_rdma(&self, _plan: tcp::Plan, _stop: Arc<AtomicBool>) {
        let link = self.add_rdma(None);
        lock(&link, |l| l.notes.push(NO_VERBS.into()));
    }

    /// Totals of the TCP pinger: (sent, answered, lost).
    pub fn tcp_totals(&self) -> (u64, u64, u64) {
        lock(&self.tcp, |l| {
            (l.window.sent, l.window.answered, l.window.lost)
        })
    }

    /// The report of the window now, or why the peer cannot be pinged.
    pub fn report(&self) -> Result<String, CollectError> {
        let now = ns(self.epoch, Instant::now());
        let (tcp, status) = lock(&self.tcp, |l| (l.section("tcp", now), l.status.clone()));
        if let Status::Down(why) = status {
            return Err(CollectError::Io(why));
        }
        let rdma = self.rdma.lock().unwrap_or_else(|p| p.into_inner());
        let mut sections = vec![tcp];
        let mut notes = Vec::new();
        for r in rdma.iter() {
            lock(&r.link, |l| {
                let active = l.status != Status::Starting || l.window.sent > 0;
                if active {
                    let mut s = l.section("rdma", now);
                    s.device = r.device.as_deref();
                    sections.push(s);
                }
                notes.extend(l.notes.iter().cloned());
            });
        }
        Ok(report::render(&sections, &notes))
    }

    /// After starting: wait (within `timeout`) for the connection's fate and a first answer.
    async fn settle(&self, timeout: Duration) {
        let until = Instant::now() + timeout.min(Duration::from_secs(3));
        let first_answer = Duration::from_millis(200);
        let mut up_at = None;
        while Instant::now() < until {
            let (status, answered) = lock(&self.tcp, |l| (l.status.clone(), l.window.answered));
            match status {
                Status::Down(_) => return,
                Status::Up if answered > 0 => return,
                Status::Up => {
                    let t = *up_at.get_or_insert_with(Instant::now);
                    if t.elapsed() > first_answer {
                        return;
                    }
                }
                Status::Starting => {}
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

#[async_trait]
impl Transport for PingTransport {
    /// Every request gets the report: a ping source asks one thing.
    async fn run(&self, _req: &Request, timeout: Duration) -> Result<String, CollectError> {
        if self.start() {
            self.settle(timeout).await;
        }
        self.report()
    }

    fn describe(&self) -> String {
        format!("ping {}", self.addr)
    }
}

/// Whether the peer at `addr` ("host:port") is reached over IPv4: a name counts as IPv4, the
/// family of nearly every RoCE fabric.
pub fn peer_is_v4(addr: &str) -> bool {
    addr.parse::<std::net::SocketAddr>()
        .map_or(true, |a| a.is_ipv4())
}

/// Each rail with its `device` label: the device, with the port where the device has several.
pub fn labelled(rails: &[gid::Rail]) -> Vec<(&gid::Rail, String)> {
    rails
        .iter()
        .map(|r| {
            let ports = rails.iter().filter(|o| o.device == r.device).count();
            (r, r.label(ports))
        })
        .collect()
}

/// A rail that cannot be pinged over: its row says so (no probes: nothing sent, nothing lost).
pub fn rail_down(link: &Mutex<Link>, addr: &str, label: &str, why: &str) {
    lock(link, |l| {
        l.status = Status::Down(why.to_string());
        l.notes = vec![format!("RDMA ping to {addr} over {label}: {why}")];
    });
}

/// The one request of a ping source (transports of ping sources ignore its text).
pub fn request(peer: &str) -> Request {
    Request::Cli(format!("ping {peer}"))
}

/// The transport of a configured `[[ping]]`: simulated in the demo, real otherwise.
pub fn transport(p: &config::Ping, demo: Option<&DemoCluster>) -> Arc<dyn Transport> {
    match demo {
        Some(d) => Arc::new(demo::DemoPing::new(d.clone(), &p.peer, p.rate)),
        None => {
            let mut o = Options::with_rate(p.rate);
            o.verbs = VerbsOptions {
                device: p.device.clone(),
                port: p.ib_port,
                gid_index: p.gid_index,
                traffic_class: p.traffic_class,
                sl: p.sl,
                source: p.source,
                every_rail: p.every_rail,
                qp_type: p.qp_type,
                ..VerbsOptions::default()
            };
            Arc::new(PingTransport::new(&p.peer, &p.address, o))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_get_the_default_port() {
        assert_eq!(with_default_port("192.0.2.202"), "192.0.2.202:18515");
        assert_eq!(with_default_port("198.51.100.1:9000"), "198.51.100.1:9000");
        assert_eq!(with_default_port("fe80::1"), "[fe80::1]:18515");
        assert_eq!(with_default_port("[::1]:7"), "[::1]:7");
        assert_eq!(with_default_port("node2"), "node2:18515");
    }

    #[test]
    fn a_link_counts_in_flight_answered_late_and_lost() {
        let mut l = Link::new(&Options::with_rate(10.0));
        l.sent(0, 100);
        l.sent(1, 200);
        l.sent(2, 300);
        l.answered(0, 50, 40);
        l.expire(250);
        assert_eq!((l.window.sent, l.window.answered, l.window.lost), (3, 1, 1));
        l.answered(1, 260, 250);
        assert_eq!(
            l.window.late, 1,
            "answered after its deadline: late, still lost"
        );
        l.abandon();
        assert_eq!(l.window.lost, 2);
        assert!(l.outstanding.is_empty());
    }
}
