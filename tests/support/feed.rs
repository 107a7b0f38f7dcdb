//! A deterministic App for tests: the reference lab, its demo simulation advanced on fixed
//! timestamps, and every poll fed through the live path (the demo's vendor-format text, the
//! sources' parsers and filters), so the labels and values the App sees are those the parsers
//! emit, and snapshots do not depend on the wall clock. Hand-built samples are for edge cases
//! the parsers cannot make (tests build them with `Lab::collected`).

#![allow(dead_code)]

use rocetop::app::{App, Event};
use rocetop::collect::demo::sim::Sim;
use rocetop::collect::demo::{DemoCluster, render, switch_answer};
use rocetop::collect::ping::demo::DemoPing;
use rocetop::collect::poll::{Collected, parse_outputs};
use rocetop::collect::source::{self, RemoteFactory, Source, SourceKind};
use rocetop::collect::transport::{CollectError, Request};
use rocetop::config::Config;
use rocetop::metrics::store::SourceId;
use rocetop::metrics::{Parsed, Store, Ts};
use rocetop::parse::ParseKind;
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
    /// The sources as the config builds them (their probes, parsers and filters).
    pub sources: Vec<Source>,
    /// The demo's pinger, asked on the simulation's clock.
    pinger: Option<DemoPing>,
    /// Log lines already polled.
    log_polled: u64,
    /// Answer the nodes' `nvidia-smi` query as the demo does. Off unless a test asks: the
    /// screens the snapshots hold are of the fabric alone.
    pub gpus: bool,
}

impl Lab {
    pub fn new() -> Lab {
        Lab::with(Config::reference())
    }

    pub fn with(cfg: Config) -> Lab {
        let sim = Sim::new(&cfg);
        Lab::with_sim(cfg, sim)
    }

    /// The lab `cfg` names, simulated by `sim` (made from `cfg`).
    pub fn with_sim(cfg: Config, sim: Sim) -> Lab {
        let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 1000);
        let none: RemoteFactory<'_> = &|_, _| Err(CollectError::Unavailable("test".into()));
        let sources = source::build(&cfg, &mut store, none);
        let pinger = cfg
            .pings
            .first()
            .map(|p| DemoPing::new(DemoCluster::new(&cfg), &p.peer, p.rate));
        // Ping sources are built from the config's [[ping]] peers.
        let ping = match store.source_by_name("ping ubunturdma2") {
            Some((id, _)) => id,
            None => store.add_source("ping ubunturdma2", 1000),
        };
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
            sources,
            pinger,
            log_polled: 0,
            gpus: false,
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
            for (name, parsed) in polls(self) {
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
            for (name, parsed) in polls(self) {
                let source = self.id(&name);
                let c = Collected {
                    source,
                    at,
                    parsed,
                    raw: Some(Vec::new()),
                    error: None,
                    history: Default::default(),
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
            raw: Some(Vec::new()),
            error: error.map(str::to_string),
            history: Default::default(),
        };
        self.app.update(Event::Collected(c), at);
    }

    /// A poll of `name` now that answered `outputs` (captured text), through its parsers and
    /// filters as a live poll's answer goes, and the frame the screen draws after it.
    pub fn answer(&mut self, name: &str, outputs: &[(ParseKind, String)]) {
        let src = self
            .sources
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no source {name}"));
        let parsed = parse_outputs(src, outputs);
        let (id, at) = (src.id, self.now());
        self.collected(id, at, parsed, None);
        self.app.update(Event::Frame, at);
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

/// A topology source's answers from the demo lab (LLDP, the watchdog, host QoS), as the demo
/// transport gives them.
fn topology_answers(lab: &Lab, src: &Source) -> Vec<(ParseKind, String)> {
    use rocetop::collect::demo::topology;
    let sw = lab.sim.switches.iter().find(|s| s.name == src.ctx.name);
    let node = lab.sim.nodes.iter().find(|n| n.name == src.ctx.name);
    src.probes
        .iter()
        .filter_map(|p| {
            let text = match (&p.request, sw, node) {
                (Request::Cli(c), Some(sw), _) => switch_answer(&lab.sim, sw, c)?,
                (Request::Lldp, _, Some(n)) => topology::lldpctl(&lab.sim, n),
                (Request::HostQos { root, .. }, _, Some(n)) => topology::host_qos(n, root),
                _ => return None,
            };
            Some((p.kind, text))
        })
        .collect()
}

/// What every source would answer now, through the live path: the simulation rendered in the
/// vendors' text formats (as the demo transport answers), then each source's parsers and filters
/// (`parse_outputs`, as a poll does). The training log's new lines go through the training-log
/// parser; pings through the demo pinger's report and the ping parser.
pub fn polls(lab: &mut Lab) -> Vec<(String, Parsed)> {
    polls_raw(lab)
        .into_iter()
        .map(|(name, _, parsed)| (name, parsed))
        .collect()
}

/// One source's poll: its name, raw outputs (what a recording keeps) and what they parse to.
pub type RawPoll = (String, Vec<(ParseKind, String)>, Parsed);

/// [`polls`] with each source's raw outputs too.
pub fn polls_raw(lab: &mut Lab) -> Vec<RawPoll> {
    let mut out = Vec::new();
    let mut log_polled = lab.log_polled;
    for src in &lab.sources {
        let outputs: Vec<(ParseKind, String)> = match src.kind {
            SourceKind::Switch => {
                let Some(sw) = lab.sim.switches.iter().find(|s| s.name == src.name) else {
                    continue;
                };
                // In the switch's own OS's format, as the demo transport answers.
                src.probes
                    .iter()
                    .filter_map(|p| match &p.request {
                        Request::Cli(c) => Some((p.kind, switch_answer(&lab.sim, sw, c)?)),
                        _ => None,
                    })
                    .collect()
            }
            SourceKind::Node => {
                let Some(n) = lab.sim.nodes.iter().find(|x| x.name == src.name) else {
                    continue;
                };
                let mut v = Vec::new();
                for p in src.probes_now() {
                    match &p.request {
                        Request::SysfsDump { root, .. } => {
                            let dump = render::sysfs_dump(n, root);
                            if let Some(d) = &src.discovery {
                                d.learn(&dump);
                            }
                            v.push((p.kind, dump));
                        }
                        Request::Ethtool { netdev } => {
                            v.extend(render::ethtool(n, netdev).map(|t| (p.kind, t)));
                        }
                        Request::Gpu { .. } if lab.gpus => {
                            v.push((p.kind, rocetop::collect::demo::gpu::query_csv(&lab.sim, n)));
                        }
                        _ => {}
                    }
                }
                v
            }
            // Rare reads: at the first second, then every topology_interval, as the collector.
            SourceKind::Topology => {
                let every = (src.interval.as_millis() as i64 / 1000).max(1);
                if (lab.secs - 1) % every != 0 {
                    continue;
                }
                topology_answers(lab, src)
            }
            // Fleet sources are not part of the simulated lab's polls here.
            SourceKind::Prometheus => continue,
            SourceKind::Log => {
                let Some(log) = lab.sim.logs.iter().find(|l| src.ctx.log == l.path) else {
                    continue;
                };
                let kept_from = log.written - log.lines.len() as u64;
                let from = log_polled.max(kept_from);
                let text: String = log
                    .lines
                    .range((from - kept_from) as usize..)
                    .map(|l| format!("{l}\n"))
                    .collect();
                log_polled = log.written;
                vec![(ParseKind::TrainingLog, text)]
            }
            SourceKind::Ping => {
                let Some(pinger) = &lab.pinger else { continue };
                vec![(ParseKind::Ping, pinger.report_at(lab.secs * 1000))]
            }
        };
        let parsed = parse_outputs(src, &outputs);
        out.push((src.name.clone(), outputs, parsed));
    }
    lab.log_polled = log_polled;
    out
}
