//! A deterministic App for tests: the reference lab, its demo simulation advanced on fixed
//! timestamps, and the simulation's counters turned into samples of the metric vocabulary (the
//! same names and labels the parsers emit), so snapshots do not depend on the wall clock or on
//! which parsers have landed. Pings, which the demo does not simulate, are synthesised.

#![allow(dead_code)]

use rocetop::app::{App, Event};
use rocetop::collect::demo::sim::Sim;
use rocetop::collect::poll::Collected;
use rocetop::collect::source::{self, RemoteFactory};
use rocetop::collect::transport::CollectError;
use rocetop::config::Config;
use rocetop::metrics::names::*;
use rocetop::metrics::store::SourceId;
use rocetop::metrics::{Parsed, Sample, Store, Ts};
use rocetop::theme::Theme;

/// 2023-11-14 22:13:20 UTC: every test clock starts here.
pub const T0: Ts = 1_700_000_000_000;

pub struct Lab {
    pub app: App,
    pub sim: Sim,
    /// Seconds of simulation fed so far.
    pub secs: i64,
    pub ping: SourceId,
    /// Send the simulated training log's new lines as `LogLines` (as the follower will).
    pub follow_log: bool,
    log_seen: u64,
}

impl Lab {
    pub fn new() -> Lab {
        Lab::with(Config::reference())
    }

    pub fn with(cfg: Config) -> Lab {
        let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 1000);
        let none: RemoteFactory<'_> = &|_, _| Err(CollectError::Unavailable("test".into()));
        let _ = source::build(&cfg, &mut store, none);
        // Ping sources are built from the config's [[ping]] peers.
        let ping = match store.source_by_name("ping ubunturdma2") {
            Some((id, _)) => id,
            None => store.add_source("ping ubunturdma2", 1000),
        };
        let sim = Sim::new(&cfg);
        let theme = Theme::named("dark").expect("dark theme");
        let mut app = App::new(cfg, store, theme, T0);
        app.ascii = false;
        Lab {
            app,
            sim,
            secs: 0,
            ping,
            follow_log: true,
            log_seen: 0,
        }
    }

    pub fn now(&self) -> Ts {
        T0 + self.secs * 1000
    }

    pub fn id(&self, name: &str) -> SourceId {
        self.app
            .store
            .source_by_name(name)
            .map(|(id, _)| id)
            .unwrap_or_else(|| panic!("no source {name}"))
    }

    /// Advance `n` seconds, polling every source once a second (all of them answering).
    pub fn run(&mut self, n: i64) {
        self.run_except(n, &[]);
    }

    /// Advance `n` seconds; sources in `silent` do not answer (no event at all, so they go stale).
    pub fn run_except(&mut self, n: i64, silent: &[&str]) {
        for _ in 0..n {
            self.secs += 1;
            self.sim.advance_to(self.secs * 1000);
            let at = self.now();
            for (name, parsed) in polls(&self.sim, &self.app.cfg, self.secs) {
                if silent.contains(&name.as_str()) {
                    continue;
                }
                let source = self.id(&name);
                self.collected(source, at, parsed, None);
            }
            if self.follow_log {
                self.send_log_lines();
            }
            self.app.update(Event::Tick, at);
        }
    }

    /// [`Lab::run`], returning the time spent in `App::update` and the events it was given.
    pub fn run_timed(&mut self, n: i64) -> (std::time::Duration, u32) {
        let (mut spent, mut events) = (std::time::Duration::ZERO, 0);
        for _ in 0..n {
            self.secs += 1;
            self.sim.advance_to(self.secs * 1000);
            let at = self.now();
            for (name, parsed) in polls(&self.sim, &self.app.cfg, self.secs) {
                let source = self.id(&name);
                let c = Collected {
                    source,
                    at,
                    parsed,
                    raw: Vec::new(),
                    error: None,
                };
                let start = std::time::Instant::now();
                self.app.update(Event::Collected(c), at);
                spent += start.elapsed();
                events += 1;
            }
            if self.follow_log {
                self.send_log_lines();
            }
            let start = std::time::Instant::now();
            self.app.update(Event::Tick, at);
            spent += start.elapsed();
        }
        (spent, events)
    }

    fn send_log_lines(&mut self) {
        let Some(log) = self.sim.logs.first() else {
            return;
        };
        let kept_from = log.written - log.lines.len() as u64;
        let from = self.log_seen.max(kept_from);
        let lines: Vec<String> = log
            .lines
            .range((from - kept_from) as usize..)
            .cloned()
            .collect();
        self.log_seen = log.written;
        let source = self.id(&format!("log {}:{}", log.node, log.path));
        let now = self.now();
        self.app.update(Event::LogLines { source, lines }, now);
    }

    pub fn collected(&mut self, source: SourceId, at: Ts, parsed: Parsed, error: Option<&str>) {
        let c = Collected {
            source,
            at,
            parsed,
            raw: Vec::new(),
            error: error.map(str::to_string),
        };
        self.app.update(Event::Collected(c), at);
    }

    /// A failed poll of `name` now.
    pub fn fail(&mut self, name: &str, why: &str) {
        let id = self.id(name);
        let at = self.now();
        self.collected(id, at, Parsed::default(), Some(why));
    }

    pub fn key(&mut self, code: crossterm::event::KeyCode) {
        let k = crossterm::event::KeyEvent::new(code, crossterm::event::KeyModifiers::NONE);
        let now = self.now();
        self.app.update(Event::Key(k), now);
    }

    pub fn chars(&mut self, s: &str) {
        for c in s.chars() {
            self.key(crossterm::event::KeyCode::Char(c));
        }
    }
}

fn poll(samples: Vec<Sample>) -> Parsed {
    Parsed {
        samples,
        ..Default::default()
    }
}

const QOS: [&str; 5] = ["0", "1", "2", "3", "control"];

/// What every source would report now, by source name.
pub fn polls(sim: &Sim, cfg: &Config, secs: i64) -> Vec<(String, Parsed)> {
    let mut out = Vec::new();
    for sw in &sim.switches {
        let s = sw.name.as_str();
        let mut v = Vec::new();
        for p in &sw.ports {
            let port = p.name.as_str();
            if !p.internal {
                for (q, stats) in QOS.iter().zip(&p.qos) {
                    let l = [("switch", s), ("port", port), ("qos_group", *q)];
                    v.push(Sample::counter(SW_QUEUE_TX_PACKETS, &l, stats.tx_pkts));
                    v.push(Sample::counter(SW_QUEUE_TX_BYTES, &l, stats.tx_bytes));
                }
                let l = [
                    ("switch", s),
                    ("port", port),
                    ("qos_group", "3"),
                    ("reason", "wred"),
                ];
                v.push(Sample::counter(SW_QUEUE_DROPPED, &l, p.wred_drops));
                let l = [("switch", s), ("port", port), ("reason", "mmu")];
                v.push(Sample::counter(SW_INGRESS_DROPPED, &l, p.mmu_drops));
                for (dir, name, val) in [
                    ("rx", SW_LINK_PAUSE_RX, p.link_pause_rx),
                    ("tx", SW_LINK_PAUSE_TX, p.link_pause_tx),
                ] {
                    v.push(Sample::counter(name, &[("switch", s), ("port", port)], val));
                    let on = if p.flowcontrol_on { 1.0 } else { 0.0 };
                    v.push(Sample::gauge(
                        SW_FLOWCONTROL_ENABLED,
                        &[("switch", s), ("port", port), ("direction", dir)],
                        on,
                    ));
                }
            }
            let l = [("switch", s), ("port", port), ("priority", "all")];
            v.push(Sample::counter(SW_PFC_RX, &l, p.pfc_rx));
            v.push(Sample::counter(SW_PFC_TX, &l, p.pfc_tx));
            let on = if p.pfc_on { 1.0 } else { 0.0 };
            v.push(Sample::gauge(
                SW_PFC_ENABLED,
                &[("switch", s), ("port", port), ("priority", "3")],
                on,
            ));
        }
        out.push((sw.name.clone(), poll(v)));
    }
    for n in &sim.nodes {
        let node = n.name.as_str();
        let mut v = Vec::new();
        for d in &n.devs {
            for (c, val) in &d.hw {
                if *c == "lifespan" {
                    continue;
                }
                let l = [
                    ("node", node),
                    ("device", d.name.as_str()),
                    ("rdma_port", "1"),
                ];
                v.push(Sample::counter(rdma_counter(c), &l, *val));
            }
        }
        for nd in &n.netdevs {
            let nd_name = nd.name.as_str();
            let l = [("node", node), ("netdev", nd_name), ("priority", "3")];
            v.push(Sample::counter(NIC_PFC_RX_PAUSE, &l, nd.rx_pause));
            v.push(Sample::counter(NIC_PFC_TX_PAUSE, &l, nd.tx_pause));
            v.push(Sample::counter_micros(
                NIC_PFC_RX_PAUSE_DURATION,
                &l,
                nd.rx_pause_us,
            ));
            v.push(Sample::counter_micros(
                NIC_PFC_TX_PAUSE_DURATION,
                &l,
                nd.tx_pause_us,
            ));
            let l = [("node", node), ("netdev", nd_name)];
            v.push(Sample::counter(
                nic_counter("rx_discards_phy"),
                &l,
                nd.rx_discards_phy,
            ));
            v.push(Sample::counter(
                nic_counter("tx_pause_storm_warning_events"),
                &l,
                nd.storm_warnings,
            ));
        }
        out.push((n.name.clone(), poll(v)));
    }
    for (l, log) in cfg.logs.iter().zip(&sim.logs) {
        let mut v = Vec::new();
        if let Some(line) = log.lines.iter().rev().find(|x| x.starts_with("Iteration")) {
            // "Iteration  120 | Loss: 2.3051 | AllReduce: 45.2ms | Total: 158.0ms"
            let nums: Vec<f64> = line
                .split(['|', ':'])
                .filter_map(|p| {
                    p.trim()
                        .trim_start_matches("Iteration")
                        .trim()
                        .trim_end_matches("ms")
                        .parse()
                        .ok()
                })
                .collect();
            if let [it, loss, ar, total] = nums[..] {
                let lb = [("node", l.node.as_str()), ("log", l.path.as_str())];
                v.push(Sample::gauge(TRAIN_ITERATION, &lb, it));
                v.push(Sample::gauge(TRAIN_LOSS, &lb, loss));
                v.push(Sample::gauge(TRAIN_ALLREDUCE_SECONDS, &lb, ar / 1e3));
                v.push(Sample::gauge(TRAIN_STEP_SECONDS, &lb, total / 1e3));
            }
        }
        out.push((format!("log {}:{}", l.node, l.path), poll(v)));
    }
    // Pings: RDMA and TCP to each peer, slower while the fabric is congested.
    let c = sim.congestion(secs * 1000);
    let mut v = Vec::new();
    for p in &cfg.pings {
        for (tr, base) in [("rdma", 12e-6), ("tcp", 48e-6)] {
            let l = |q| {
                [
                    ("peer", p.peer.as_str()),
                    ("transport", tr),
                    ("quantile", q),
                ]
            };
            let p50 = base * (1.0 + 0.5 * c);
            for (q, k) in [
                ("0", 0.8),
                ("0.5", 1.0),
                ("0.99", 1.6 + 4.0 * c),
                ("0.999", 2.0 + 6.0 * c),
                ("1", 2.5 + 8.0 * c),
            ] {
                v.push(Sample::gauge(PING_RTT_SECONDS, &l(q), p50 * k));
            }
            let l2 = [("peer", p.peer.as_str()), ("transport", tr)];
            v.push(Sample::gauge(
                "rocetop_ping_rtt_stdev_seconds",
                &l2,
                p50 * 0.2,
            ));
            v.push(Sample::gauge("rocetop_ping_jitter_seconds", &l2, p50 * 0.1));
            v.push(Sample::counter(
                "rocetop_ping_sent_total",
                &l2,
                secs as u64 * 10,
            ));
            v.push(Sample::counter(PING_LOST, &l2, 0));
        }
    }
    out.push(("ping ubunturdma2".into(), poll(v)));
    out
}
