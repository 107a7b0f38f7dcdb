//! The demo cluster's physics: counters that move the way the lab's did (docs/architecture.md).
//!
//! Time advances in fixed 100 ms steps with one seeded RNG drawn in a fixed order, so the same seed and
//! the same poll times give the same outputs. The story: all-reduce bursts every 0.5 s; sparse ECN
//! marks and CNPs; congestion episodes where one switch's fabric ports storm with PFC while ECN
//! stays sparse, step and all-reduce times climb and the culprit port drops in the ingress MMU; now
//! and then an edge port's 802.3x flowcontrol goes off. Where the congestion happens comes from the
//! inventory: `[simulation] culprit_port` (the lab's Ethernet1/1/2), else drawn for each episode
//! from the cabled ports with the seed ([`Hotspot`]).

use crate::config::{Config, SwitchOs, SwitchPort};
use std::collections::VecDeque;

pub const STEP_MS: i64 = 100;
const LINK_BYTES_PER_STEP: f64 = 10e9 / 8.0 * 0.1; // 10G breakout ports
const MTU_PKT: f64 = 4200.0;
pub const LOG_KEEP: usize = 2000;

/// splitmix64: tiny, seedable, good enough for a simulation, and no dependency.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn f(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Poisson-distributed count (Knuth for small means, normal approximation above).
    pub fn poisson(&mut self, mean: f64) -> u64 {
        if mean <= 0.0 {
            return 0;
        }
        if mean > 30.0 {
            let (u1, u2) = (self.f().max(1e-12), self.f());
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            return (mean + z * mean.sqrt()).max(0.0).round() as u64;
        }
        let l = (-mean).exp();
        let (mut k, mut p) = (0u64, 1.0);
        loop {
            p *= self.f();
            if p <= l {
                return k;
            }
            k += 1;
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Qos {
    pub tx_pkts: u64,
    pub tx_bytes: u64,
    pub dropped_pkts: u64,
    pub dropped_bytes: u64,
}

#[derive(Clone, Debug, Default)]
pub struct PortSim {
    pub name: String,
    pub internal: bool,
    /// QoS groups 0..=3 (3 = RoCE), then control.
    pub qos: [Qos; 5],
    pub wred_drops: u64,
    /// Lossless-queue packets WRED marked ECT→CE (the fabric demo; the lab's NX-OS output has no
    /// such counter).
    pub ecn_marked: u64,
    pub mmu_drops: u64,
    pub mmu_drop_bytes: u64,
    pub pfc_rx: u64,
    pub pfc_tx: u64,
    pub link_pause_rx: u64,
    pub link_pause_tx: u64,
    pub flowcontrol_on: bool,
    pub pfc_on: bool,
    pub nodes: Vec<usize>,
    /// What LLDP sees on the port besides `nodes` (the fabric demo: a host NIC or another switch).
    pub peer: Option<Peer>,
    /// The link is down (the fabric demo's deadlock starts so): no traffic, no LLDP neighbour.
    pub down: bool,
}

impl PortSim {
    /// One step's egress: `bytes` of RoCE in MTU packets on the lossless group, a few small
    /// packets on group 0 and control frames, drawn from `rng` in that order.
    pub fn transmit(&mut self, bytes: u64, rng: &mut Rng) {
        let pkts = bytes / MTU_PKT as u64;
        self.qos[3].tx_pkts += pkts;
        self.qos[3].tx_bytes += pkts * MTU_PKT as u64;
        let small = rng.poisson(3.0);
        self.qos[0].tx_pkts += small;
        self.qos[0].tx_bytes += small * 900;
        let ctl = rng.poisson(0.5);
        self.qos[4].tx_pkts += ctl;
        self.qos[4].tx_bytes += ctl * 124;
    }
}

/// An LLDP neighbour: its system name and port (a switch's interface or a host's netdev).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    pub system: String,
    pub port: String,
    /// A switch (LLDP capability bridge/router) rather than a station.
    pub bridge: bool,
}

#[derive(Clone, Debug)]
pub struct SwitchSim {
    pub name: String,
    /// Whose output formats it answers in.
    pub os: SwitchOs,
    pub ports: Vec<PortSim>,
}

#[derive(Clone, Debug, Default)]
pub struct DevSim {
    pub name: String,
    pub netdev: Option<String>,
    /// hw_counters in the order mlx5 lists them.
    pub hw: Vec<(&'static str, u64)>,
    pub xmit_words: u64,
    pub rcv_words: u64,
}

#[derive(Clone, Debug, Default)]
pub struct NetdevSim {
    pub name: String,
    pub rx_pause: u64,
    pub rx_pause_us: u64,
    pub rx_pause_transition: u64,
    pub tx_pause: u64,
    pub tx_pause_us: u64,
    pub tx_pause_transition: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub kernel_rx_bytes: u64,
    pub kernel_tx_bytes: u64,
    pub rx_discards_phy: u64,
    pub storm_warnings: u64,
    /// The leaf port this netdev is cabled to, as its lldpd sees it (the fabric demo; the lab's
    /// nodes see their configured port).
    pub lldp: Option<SwitchPort>,
}

#[derive(Clone, Debug)]
pub struct NodeSim {
    pub name: String,
    pub devs: Vec<DevSim>,
    pub netdevs: Vec<NetdevSim>,
    /// The switch port the config cables it to (how much of an episode it feels follows).
    pub at: Option<SwitchPort>,
}

#[derive(Clone, Debug)]
pub struct LogSim {
    pub node: String,
    pub path: String,
    pub lines: VecDeque<String>,
    /// Lines ever written, so followers can ask for what is new.
    pub written: u64,
}

/// The hw_counters files of a ConnectX (mlx5) port, as the demo nodes and the store benchmark have them.
pub const MLX5_HW_COUNTERS: &[&str] = &[
    "duplicate_request",
    "implied_nak_seq_err",
    "lifespan",
    "local_ack_timeout_err",
    "np_cnp_sent",
    "np_ecn_marked_roce_packets",
    "out_of_buffer",
    "out_of_sequence",
    "packet_seq_err",
    "req_cqe_error",
    "req_cqe_flush_error",
    "req_remote_access_errors",
    "req_remote_invalid_request",
    "resp_cqe_error",
    "resp_cqe_flush_error",
    "resp_local_length_error",
    "resp_remote_access_errors",
    "rnr_nak_retry_err",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
    "rp_cnp_handled",
    "rp_cnp_ignored",
    "rx_atomic_requests",
    "rx_dct_connect",
    "rx_icrc_encapsulated",
    "rx_read_requests",
    "rx_write_requests",
];

/// Length of an injected congestion episode, seconds.
pub const EPISODE_S: f64 = 15.0;

/// One episode slot in this many the fabric stays calm and the GPUs tell their own story
/// instead: a node power capped, the whole job's step slow with it (`gpu::throttle_windows`).
/// A slot of its own: the detector needs a calm longer than the gaps between congestion
/// episodes leave (their tails and its settle each side) to tell the two apart.
pub const GPU_SLOT_EVERY: u64 = 8;

/// Where one episode happens: the port that drops (its nodes feel it fully), the ports whose
/// nodes feel it more than the rest, and the ports that storm with PFC.
#[derive(Clone, Debug, PartialEq)]
pub struct Hotspot {
    pub culprit: SwitchPort,
    pub congested: Vec<SwitchPort>,
    pub storm: Vec<SwitchPort>,
}

impl Hotspot {
    /// How much of the congestion a node cabled to `at` feels: all of it behind the culprit, 0.7
    /// behind a congested port, 0.3 elsewhere on the fabric.
    fn exposure(&self, at: Option<&SwitchPort>) -> f64 {
        match at {
            Some(a) if *a == self.culprit => 1.0,
            Some(a) if self.congested.contains(a) => 0.7,
            _ => 0.3,
        }
    }

    fn storms(&self, switch: &str, port: &str) -> bool {
        self.storm
            .iter()
            .any(|p| p.switch == switch && p.port == port)
    }
}

/// One congestion episode the simulation injects.
#[derive(Clone, Debug, PartialEq)]
pub struct Injected {
    pub start_ms: i64,
    pub end_ms: i64,
    /// Which layer it happens in, in words.
    pub layer: &'static str,
    /// The switch and edge port that drop.
    pub switch: String,
    pub port: String,
    /// The nodes the config cables to that port: the culprit's nodes.
    pub victims: Vec<String>,
    /// The ports that storm with PFC.
    pub storm_ports: Vec<String>,
}

pub struct Sim {
    seed: u64,
    rng: Rng,
    /// The config's `[simulation] culprit_port` and `congested_ports`, when it names them.
    fixed: Option<Hotspot>,
    /// The cabled edge ports (each once, sorted) an episode's culprit is drawn from otherwise.
    cabled: Vec<SwitchPort>,
    /// `[simulation] rate_scale`: the congestion counters' rates as a share of the lab's.
    scale: f64,
    /// Steps simulated so far.
    pub steps: u64,
    pub switches: Vec<SwitchSim>,
    pub nodes: Vec<NodeSim>,
    pub logs: Vec<LogSim>,
    pub iteration: u64,
    next_iter_ms: f64,
    pub last_step_ms: f64,
    pub last_allreduce_ms: f64,
    loss: f64,
    /// The fabric demo's physics and its episodes (None: the lab's).
    fabric: Option<hops::Physics>,
}

impl Sim {
    fn write_iteration(&mut self, it: u64, loss: f64, ar: f64, total: f64, warn: bool) {
        let nodes = self.nodes.len();
        for log in &mut self.logs {
            let mut push = |l: String| {
                log.lines.push_back(l);
                log.written += 1;
                if log.lines.len() > LOG_KEEP {
                    log.lines.pop_front();
                }
            };
            push(format!(
                "Iteration {it:>4} | Loss: {loss:.4} | AllReduce: {ar:.1}ms | Total: {total:.1}ms"
            ));
            push(format!(
                "  → All {nodes} servers exchanging ~150.5MB gradients"
            ));
            push("  → Check switch for ECN/PFC activity!".to_string());
            push(String::new());
            if warn {
                push(format!(
                    "{}:2291:2310 [0] NCCL WARN NET/IB : Got completion from peer 192.168.250.20{} with error 12, opcode 0, len 0, vendor err 129",
                    log.node,
                    (it / 10) % 8 + 1
                ));
            }
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.steps as i64 * STEP_MS
    }

    /// Start (s after the demo started) of congestion episode `k` (0, 1, ...).
    fn episode_start_s(&self, k: u64) -> f64 {
        let jitter = (Rng::new(self.seed ^ k).next_u64() % 8) as f64;
        15.0 + 45.0 * k as f64 + jitter
    }

    /// Where episode `k` happens: the config's ports, else a cabled port drawn with the seed (and
    /// another on its switch feeling it too). None when nothing is cabled to congest.
    pub fn hotspot(&self, k: u64) -> Option<Hotspot> {
        if let Some(h) = &self.fixed {
            return Some(h.clone());
        }
        if self.cabled.is_empty() {
            return None;
        }
        let mut rng = Rng::new(self.seed ^ k.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ 0x5EED);
        let culprit = self.cabled[(rng.next_u64() % self.cabled.len() as u64) as usize].clone();
        let others: Vec<&SwitchPort> = (self.cabled.iter())
            .filter(|p| p.switch == culprit.switch && **p != culprit)
            .collect();
        let congested = match others.len() {
            0 => Vec::new(),
            n => vec![others[(rng.next_u64() % n as u64) as usize].clone()],
        };
        Some(self.with_storm(culprit, congested))
    }

    /// The ports of the culprit's switch that storm: its internal fabric ports (`ii…`), else the
    /// ports nothing is cabled to (its uplinks).
    pub(super) fn with_storm(&self, culprit: SwitchPort, congested: Vec<SwitchPort>) -> Hotspot {
        let sw = self.switches.iter().find(|s| s.name == culprit.switch);
        let ports = sw.map(|s| s.ports.as_slice()).unwrap_or_default();
        let internal: Vec<&PortSim> = ports.iter().filter(|p| p.internal).collect();
        let storming = if internal.is_empty() {
            ports.iter().filter(|p| p.nodes.is_empty()).collect()
        } else {
            internal
        };
        let storm = storming
            .into_iter()
            .map(|p| SwitchPort {
                switch: culprit.switch.clone(),
                port: p.name.clone(),
            })
            .collect();
        Hotspot {
            culprit,
            congested,
            storm,
        }
    }

    /// Whether slot `k` is the GPUs' ([`GPU_SLOT_EVERY`]; a cluster of one node has no other
    /// node to wait for a slow one, so none).
    pub fn gpu_slot(&self, k: u64) -> bool {
        self.nodes.len() > 1 && k % GPU_SLOT_EVERY == GPU_SLOT_EVERY - 1
    }

    /// The start (ms) of every GPU slot that starts before `until_ms`.
    pub fn gpu_slots(&self, until_ms: i64) -> Vec<i64> {
        (0u64..)
            .map(|k| (k, self.episode_start_s(k)))
            .take_while(|(_, s)| *s * 1000.0 < until_ms as f64)
            .filter(|(k, _)| self.gpu_slot(*k))
            .map(|(_, s)| (s * 1000.0) as i64)
            .collect()
    }

    /// Every congestion episode this simulation injects that starts before `until_ms`: the
    /// truth an episode detector is checked against (when, where, which layer, whose nodes).
    /// The lab's kind only: the fabric demo's are [`Sim::fabric_episodes`].
    pub fn injected(&self, until_ms: i64) -> Vec<Injected> {
        (0u64..)
            .map(|k| (k, self.episode_start_s(k)))
            .take_while(|(_, s)| *s * 1000.0 < until_ms as f64)
            .filter(|(k, _)| !self.gpu_slot(*k))
            .filter_map(|(k, s)| {
                let h = self.hotspot(k)?;
                let victims = (self.nodes.iter())
                    .filter(|n| n.at.as_ref() == Some(&h.culprit))
                    .map(|n| n.name.clone())
                    .collect();
                Some(Injected {
                    start_ms: (s * 1000.0) as i64,
                    end_ms: ((s + EPISODE_S) * 1000.0) as i64,
                    layer: "switch: PFC storm on the culprit switch's fabric ports, drops at the culprit port",
                    switch: h.culprit.switch.clone(),
                    port: h.culprit.port.clone(),
                    victims,
                    storm_ports: h.storm.into_iter().map(|p| p.port).collect(),
                })
            })
            .collect()
    }

    /// The episode under way at `t_ms` (its number), if any.
    fn episode_at(&self, t_ms: i64) -> Option<u64> {
        let t = t_ms as f64 / 1000.0;
        let k = ((t - 15.0) / 45.0).floor();
        if k < 0.0 {
            return None;
        }
        let x = t - self.episode_start_s(k as u64);
        (0.0..EPISODE_S).contains(&x).then_some(k as u64)
    }

    /// Congestion intensity in [0, 1] at `t_ms`: episodes of 15 s every ~45 s, the first at 15 s
    /// (none in a GPU slot).
    pub fn congestion(&self, t_ms: i64) -> f64 {
        if let Some(f) = &self.fabric {
            return f.intensity(t_ms);
        }
        let t = t_ms as f64 / 1000.0;
        let k = ((t - 15.0) / 45.0).floor();
        if k < 0.0 {
            return 0.0;
        }
        if self.gpu_slot(k as u64) {
            return 0.0;
        }
        let start = self.episode_start_s(k as u64);
        let x = t - start;
        if !(0.0..15.0).contains(&x) {
            return 0.0;
        }
        (x / 3.0).min(1.0).min((15.0 - x) / 3.0).max(0.0)
    }

    /// 802.3x flowcontrol on the first cabled edge port goes on (misconfigured) for 20 s every 2 min.
    pub fn flowcontrol_glitch(t_ms: i64) -> bool {
        (t_ms / 1000) % 120 >= 70 && (t_ms / 1000) % 120 < 90
    }

    /// Simulate up to `t_ms` after the start (never backwards).
    pub fn advance_to(&mut self, t_ms: i64) {
        while self.now_ms() + STEP_MS <= t_ms {
            self.step();
        }
    }

    fn step(&mut self) {
        self.steps += 1;
        let t = self.now_ms();
        let c = self.congestion(t);
        if let Some(mut f) = self.fabric.take() {
            f.step(self, t);
            self.fabric = Some(f);
            self.train_step(t, c);
            return;
        }
        let burst = (t / STEP_MS) % 5 < 2;
        let spot = if c > 0.0 {
            self.episode_at(t).and_then(|k| self.hotspot(k))
        } else {
            None
        };
        let exposure: Vec<f64> = (self.nodes.iter())
            .map(|n| spot.as_ref().map_or(0.3, |h| h.exposure(n.at.as_ref())))
            .collect();
        let s = self.scale;
        let rng = &mut self.rng;

        // Hosts: traffic, ECN/CNP, pauses.
        let mut cnps_sent = 0u64;
        let mut node_traffic = Vec::with_capacity(self.nodes.len());
        // Pause frames this step per node: (received from the switch, sent to it).
        let mut node_pause = vec![(0u64, 0u64); self.nodes.len()];
        for (ni, n) in self.nodes.iter_mut().enumerate() {
            let exp = exposure[ni];
            let util = if burst {
                0.85 * (1.0 - 0.45 * c * exp)
            } else {
                0.01
            };
            let bytes = (LINK_BYTES_PER_STEP * util * (0.95 + 0.1 * rng.f())) as u64;
            node_traffic.push(bytes);
            let ecn_mean = s * if burst { 0.15 + 2.5 * c * exp } else { 0.01 };
            for (di, d) in n.devs.iter_mut().enumerate() {
                let share = if di == 0 { 1.0 } else { 0.1 };
                let dev_bytes = (bytes as f64 * share) as u64;
                d.xmit_words += dev_bytes / 4;
                d.rcv_words += dev_bytes / 4;
                let marks = rng.poisson(ecn_mean * share);
                let cnp = marks.saturating_sub(rng.poisson(0.05 * marks as f64));
                cnps_sent += cnp;
                bump(&mut d.hw, "np_ecn_marked_roce_packets", marks);
                bump(&mut d.hw, "np_cnp_sent", cnp);
                bump(&mut d.hw, "rx_write_requests", dev_bytes / 65536);
                bump(&mut d.hw, "out_of_sequence", rng.poisson(0.02 * c * exp));
                bump(&mut d.hw, "packet_seq_err", rng.poisson(0.003 * c * exp));
                if c > 0.8 {
                    bump(&mut d.hw, "local_ack_timeout_err", rng.poisson(0.002 * exp));
                    bump(&mut d.hw, "rp_cnp_ignored", rng.poisson(0.01 * exp));
                }
            }
            for nd in &mut n.netdevs {
                let frames = rng.poisson(s * if burst { 1.0 + 120.0 * c * exp } else { 0.05 });
                nd.rx_pause += frames;
                nd.rx_pause_us += (frames as f64 * 180.0 * (0.8 + 0.4 * rng.f())) as u64;
                nd.rx_pause_transition += frames / 4;
                let tx_frames = rng.poisson(s * 0.3 * c * exp);
                nd.tx_pause += tx_frames;
                nd.tx_pause_us += tx_frames * 40;
                node_pause[ni].0 += frames;
                node_pause[ni].1 += tx_frames;
                nd.rx_bytes += bytes;
                nd.tx_bytes += bytes;
                nd.rx_packets += bytes / MTU_PKT as u64;
                nd.tx_packets += bytes / MTU_PKT as u64;
                nd.kernel_rx_bytes += 2_000 + rng.poisson(20.0) * 100;
                nd.kernel_tx_bytes += 2_500 + rng.poisson(20.0) * 100;
                if c > 0.9 && rng.f() < 0.002 {
                    nd.storm_warnings += 1;
                }
            }
        }
        // Senders handle the CNPs the receivers sent, spread over the cluster.
        let n_devs: u64 = self
            .nodes
            .iter()
            .map(|n| n.devs.len() as u64)
            .sum::<u64>()
            .max(1);
        for n in &mut self.nodes {
            for d in &mut n.devs {
                let share = cnps_sent / n_devs
                    + u64::from(rng.f() < (cnps_sent % n_devs) as f64 / n_devs as f64);
                bump(&mut d.hw, "rp_cnp_handled", share);
            }
        }

        // Switch: queues follow host traffic; PFC mirrors host pauses; the hotspot's fabric ports
        // storm in episodes.
        let glitch = Self::flowcontrol_glitch(t);
        for sw in &mut self.switches {
            let mut first_cabled = true;
            for p in &mut sw.ports {
                let storm = spot.as_ref().is_some_and(|h| h.storms(&sw.name, &p.name));
                if p.internal {
                    let on = c > 0.0 && storm;
                    p.pfc_rx += rng.poisson(s * if on { 2500.0 * c } else { 0.2 });
                    p.pfc_tx += rng.poisson(s * if on { 900.0 * c } else { 0.1 });
                    continue;
                }
                if storm {
                    p.pfc_rx += rng.poisson(s * 2500.0 * c);
                    p.pfc_tx += rng.poisson(s * 900.0 * c);
                }
                let mut bytes = 0u64;
                for &i in &p.nodes {
                    bytes += node_traffic.get(i).copied().unwrap_or(0);
                    // The switch's TxPPP are the pauses its hosts received, RxPPP those they sent.
                    let (rx, tx) = node_pause.get(i).copied().unwrap_or((0, 0));
                    p.pfc_tx += rx;
                    p.pfc_rx += tx;
                }
                p.transmit(bytes, rng);
                p.wred_drops += rng.poisson(s * 0.002 * c * p.nodes.len() as f64);
                let culprit = spot
                    .as_ref()
                    .is_some_and(|h| h.culprit.switch == sw.name && h.culprit.port == p.name);
                if culprit && c > 0.6 {
                    let d = rng.poisson(s * 6.0 * (c - 0.6) / 0.4);
                    p.mmu_drops += d;
                    p.mmu_drop_bytes += d * MTU_PKT as u64;
                }
                if !p.nodes.is_empty() {
                    p.flowcontrol_on = first_cabled && glitch;
                    first_cabled = false;
                }
                if p.flowcontrol_on {
                    p.link_pause_rx += rng.poisson(2.0);
                }
            }
        }

        self.train_step(t, c);
    }

    fn train_step(&mut self, t: i64, c: f64) {
        if (t as f64) < self.next_iter_ms {
            return;
        }
        let slow = super::gpu::compute_slowdown(self, t);
        let rng = &mut self.rng;
        self.iteration += 1;
        self.last_allreduce_ms = 45.0 * (1.0 + 3.5 * c) + rng.f() * 4.0;
        // Compute (slower where a GPU is throttled: every rank waits for it), then the all-reduce.
        let compute = 111.0 * (1.0 + 0.4 * c) * slow;
        self.last_step_ms = compute + self.last_allreduce_ms + rng.f() * 3.0;
        self.next_iter_ms = t as f64 + self.last_step_ms;
        self.loss = (self.loss * 0.9993 + 0.0004 * rng.f()).max(0.05);
        if self.iteration % 10 == 0 {
            let it = self.iteration;
            let (loss, ar, total) = (self.loss, self.last_allreduce_ms, self.last_step_ms);
            let warn = c > 0.9 && rng.f() < 0.3;
            let nodes = self.nodes.len();
            for log in &mut self.logs {
                let mut push = |l: String| {
                    log.lines.push_back(l);
                    log.written += 1;
                    if log.lines.len() > LOG_KEEP {
                        log.lines.pop_front();
                    }
                };
                push(format!(
                    "Iteration {it:>4} | Loss: {loss:.4} | AllReduce: {ar:.1}ms | Total: {total:.1}ms"
                ));
                push(format!(
                    "  → All {nodes} servers exchanging ~150.5MB gradients"
                ));
                push("  → Check switch for ECN/PFC activity!".to_string());
                push(String::new());
                if warn {
                    push(format!(
                        "{}:2291:2310 [0] NCCL WARN NET/IB : Got completion from peer 192.168.250.20{} with error 12, opcode 0, len 0, vendor err 129",
                        log.node,
                        (it / 10) % 8 + 1
                    ));
                }
            }
        }
    }
}

fn bump(hw: &mut [(&'static str, u64)], name: &str, by: u64) {
    if let Some(slot) = hw.iter_mut().find(|(n, _)| *n == name) {
        slot.1 = slot.1.wrapping_add(by);
    }
}

pub mod hops;
mod start;
#[cfg(test)]
mod tests;
