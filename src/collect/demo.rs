//! The demo cluster as a transport: every source of the configured inventory answers its requests
//! from one shared simulation, in the vendors' text formats, so the demo exercises the real parsers.

pub mod fabric;
pub mod gpu;
pub mod render;
pub mod sim;
pub mod topology;

use super::transport::{CollectError, Request, StreamEvent, Transport};
use crate::config::{Config, SwitchOs};
use async_trait::async_trait;
use sim::Sim;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// One simulation shared by every demo source, on the real clock since it started.
#[derive(Clone)]
pub struct DemoCluster {
    sim: Arc<Mutex<Sim>>,
    start: Instant,
}

impl std::fmt::Debug for DemoCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DemoCluster")
    }
}

impl DemoCluster {
    pub fn new(cfg: &Config) -> Self {
        Self {
            sim: Arc::new(Mutex::new(Sim::new(cfg))),
            start: Instant::now(),
        }
    }

    /// Run `f` on the simulation advanced to now.
    fn with_sim<T>(&self, f: impl FnOnce(&mut Sim) -> T) -> Result<T, CollectError> {
        let mut sim = self
            .sim
            .lock()
            .map_err(|_| CollectError::Io("demo simulation poisoned".into()))?;
        sim.advance_to(self.start.elapsed().as_millis() as i64);
        Ok(f(&mut sim))
    }

    /// Milliseconds since the demo started (the simulated pingers' clock).
    pub fn elapsed_ms(&self) -> i64 {
        self.start.elapsed().as_millis() as i64
    }

    /// Congestion intensity at each of `times_ms` (see `Sim::congestion`), under one lock.
    pub fn congestion_at(&self, times_ms: &[i64]) -> Vec<f64> {
        self.with_sim(|sim| times_ms.iter().map(|&t| sim.congestion(t)).collect())
            .unwrap_or_else(|_| vec![0.0; times_ms.len()])
    }

    pub fn switch(&self, name: &str) -> DemoTransport {
        DemoTransport {
            cluster: self.clone(),
            who: Who::Switch(name.to_string()),
        }
    }

    pub fn node(&self, name: &str) -> DemoTransport {
        DemoTransport {
            cluster: self.clone(),
            who: Who::Node(name.to_string()),
        }
    }
}

#[derive(Clone, Debug)]
enum Who {
    Switch(String),
    Node(String),
}

#[derive(Clone, Debug)]
pub struct DemoTransport {
    cluster: DemoCluster,
    who: Who,
}

impl DemoTransport {
    fn answer(&self, req: &Request) -> Result<String, CollectError> {
        let who = self.who.clone();
        let req = req.clone();
        self.cluster.with_sim(move |sim| answer(sim, &who, &req))?
    }
}

fn answer(sim: &Sim, who: &Who, req: &Request) -> Result<String, CollectError> {
    let unsupported = || CollectError::Command {
        status: "exit status 1".into(),
        stderr: format!("demo: no answer for {req:?}"),
    };
    match (who, req) {
        (Who::Switch(name), Request::Cli(cmd)) => {
            let sw = sim
                .switches
                .iter()
                .find(|s| &s.name == name)
                .ok_or_else(unsupported)?;
            switch_answer(sim, sw, cmd).ok_or_else(|| CollectError::Command {
                status: "exit status 1".into(),
                // A command the demo cannot answer is a failed request, never an empty answer
                // that would count the switch up with nothing read.
                stderr: format!(
                    "demo: a {:?} switch's answer to {cmd:?} is not simulated",
                    sw.os
                ),
            })
        }
        (Who::Node(name), _) => {
            let node = sim
                .nodes
                .iter()
                .find(|n| &n.name == name)
                .ok_or_else(unsupported)?;
            match req {
                Request::SysfsDump { root, .. } => Ok(render::sysfs_dump(node, root)),
                Request::Ethtool { netdev } => {
                    render::ethtool(node, netdev).ok_or_else(|| CollectError::Command {
                        status: "exit status 1".into(),
                        stderr: format!(
                            "Cannot get stats strings information: No such device ({netdev})"
                        ),
                    })
                }
                Request::Tail { path, lines } | Request::Follow { path, lines } => {
                    let log = sim
                        .logs
                        .iter()
                        .find(|l| &l.node == name && &l.path == path)
                        .ok_or_else(|| CollectError::Command {
                            status: "exit status 1".into(),
                            stderr: format!(
                                "tail: cannot open '{path}': No such file or directory"
                            ),
                        })?;
                    let from = log.lines.len().saturating_sub(*lines);
                    let mut s: String = log.lines.range(from..).map(|l| format!("{l}\n")).collect();
                    if s.is_empty() {
                        s.push('\n');
                    }
                    Ok(s)
                }
                Request::Lldp => Ok(topology::lldpctl(sim, node)),
                Request::HostQos { root, .. } => Ok(topology::host_qos(node, root)),
                Request::Gpu { .. } => Ok(gpu::query_csv(sim, node)),
                Request::GpuTopo { .. } => Ok(gpu::topo(sim, node)),
                Request::Cli(_) | Request::PromQueries => Err(unsupported()),
            }
        }
        _ => Err(unsupported()),
    }
}

/// What the simulated switch `sw` answers to `cmd`, in its own OS's format (the commands
/// `collect::source` sends it); None for a command the demo does not simulate.
pub fn switch_answer(sim: &Sim, sw: &sim::SwitchSim, cmd: &str) -> Option<String> {
    use render::{eos, sonic};
    Some(match sw.os {
        SwitchOs::Nxos => {
            if cmd.contains("show queuing interface") || cmd.contains("show queueing interface") {
                render::nxos_queuing(sw)
            } else if cmd.contains("priority-flow-control") {
                render::nxos_pfc(sw)
            } else if cmd.contains("flowcontrol") {
                render::nxos_flowcontrol(sw)
            } else if cmd.starts_with("show interface") {
                topology::nxos_interface_mtu(sw)
            } else if cmd.contains("lldp neighbors") {
                topology::nxos_lldp(sim, sw)
            } else if cmd.contains("pfc-queue") {
                topology::nxos_pfcwd(sw)
            } else if cmd.contains("running-config ipqos") {
                topology::nxos_ipqos(sw)
            } else {
                return None;
            }
        }
        SwitchOs::Sonic => match cmd {
            "show pfc counters" => render::sonic_pfc(sw),
            "show queue counters" => sonic::queue_counters(sw),
            "show queue wredcounters" => sonic::wred_counters(sw),
            "show lldp table" => sonic::lldp_table(sim, sw),
            "show pfcwd stats" => sonic::pfcwd_stats(sw),
            "show runningconfiguration all" => sonic::running_config(sw),
            _ => return None,
        },
        SwitchOs::Eos => match cmd {
            "show priority-flow-control counters | json" => render::eos_pfc(sw),
            "show interfaces counters queue | json" => eos::queue_json(sw),
            "show qos interfaces ecn counters queue | json" => eos::ecn_json(sw),
            "show interfaces" => eos::interfaces(sw),
            "show lldp neighbors" => eos::lldp_neighbors(sim, sw),
            "show running-config" => eos::running_config(sw),
            _ => return None,
        },
    })
}

#[async_trait]
impl Transport for DemoTransport {
    async fn run(&self, req: &Request, _timeout: Duration) -> Result<String, CollectError> {
        self.answer(req)
    }

    /// `tail -F` of a simulated log: the last lines, then every new line as the simulation writes it.
    async fn stream(&self, req: &Request) -> Result<mpsc::Receiver<StreamEvent>, CollectError> {
        let Request::Follow { path, lines } = req.clone() else {
            return Err(CollectError::Unavailable(format!(
                "demo cannot stream {req:?}"
            )));
        };
        let Who::Node(node) = self.who.clone() else {
            return Err(CollectError::Unavailable("a switch has no log".into()));
        };
        let cluster = self.cluster.clone();
        let (tx, rx) = mpsc::channel(1024);
        let seen0 = cluster.with_sim(|sim| {
            sim.logs
                .iter()
                .find(|l| l.node == node && l.path == path)
                .map(|l| l.written.saturating_sub(lines as u64))
        })?;
        let Some(mut seen) = seen0 else {
            return Err(CollectError::Command {
                status: "exit status 1".into(),
                stderr: format!("tail: cannot open '{path}': No such file or directory"),
            });
        };
        tokio::spawn(async move {
            loop {
                let new = cluster.with_sim(|sim| {
                    sim.logs
                        .iter()
                        .find(|l| l.node == node && l.path == path)
                        .map(|l| {
                            let kept_from = l.written - l.lines.len() as u64;
                            let from = seen.max(kept_from);
                            let v: Vec<String> = l
                                .lines
                                .range((from - kept_from) as usize..)
                                .cloned()
                                .collect();
                            (v, l.written)
                        })
                });
                if let Ok(Some((lines, written))) = new {
                    seen = written;
                    for l in lines {
                        if tx.send(StreamEvent::Line(l)).await.is_err() {
                            return;
                        }
                    }
                }
                if tx.is_closed() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        });
        Ok(rx)
    }

    fn describe(&self) -> String {
        match &self.who {
            Who::Switch(n) | Who::Node(n) => format!("demo {n}"),
        }
    }
}

#[cfg(test)]
mod tests;
