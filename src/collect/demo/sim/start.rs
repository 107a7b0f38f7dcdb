//! The demo cluster at its start: the switches, nodes and logs the config names, with counters
//! where a cluster up for a few days would have them, and the log's calm backlog.

use super::*;
use crate::collect::demo::fabric::Fabric;
use crate::config::Scenario;

impl Sim {
    /// The cluster `cfg` names; a fabric scenario cabled as the built-in fabric.
    pub fn new(cfg: &Config) -> Self {
        let fabric = (cfg.simulation.scenario == Scenario::Fabric).then(Fabric::builtin);
        Self::cabled(cfg, fabric)
    }

    /// The cluster `cfg` names (made from `fabric`'s [`Fabric::config_text`]), cabled as
    /// `fabric` says.
    pub fn with_fabric(cfg: &Config, fabric: Fabric) -> Self {
        Self::cabled(cfg, Some(fabric))
    }

    fn cabled(cfg: &Config, fabric: Option<Fabric>) -> Self {
        let seed = cfg.seed;
        let mut rng = Rng::new(seed);
        // Counters start where a cluster up for a few days would be.
        let mut big = |scale: f64| (rng.f() * scale) as u64;
        let switches = cfg
            .switches
            .iter()
            .map(|s| SwitchSim {
                name: s.name.clone(),
                os: s.os,
                ports: s
                    .ports
                    .iter()
                    .map(|p| {
                        let internal = p.starts_with("ii");
                        let mut port = PortSim {
                            name: p.clone(),
                            internal,
                            flowcontrol_on: false,
                            pfc_on: true,
                            nodes: cfg
                                .nodes
                                .iter()
                                .enumerate()
                                .filter(|(_, n)| {
                                    n.switch.as_deref() == Some(s.name.as_str())
                                        && n.switch_port.as_deref() == Some(p.as_str())
                                })
                                .map(|(i, _)| i)
                                .collect(),
                            ..Default::default()
                        };
                        if !internal {
                            port.qos[0].tx_pkts = big(2e6);
                            port.qos[0].tx_bytes = port.qos[0].tx_pkts * 900;
                            port.qos[3].tx_pkts = big(9e8);
                            port.qos[3].tx_bytes = port.qos[3].tx_pkts * 4200;
                            port.qos[4].tx_pkts = big(5e4);
                            port.qos[4].tx_bytes = port.qos[4].tx_pkts * 124;
                        }
                        port.pfc_rx = big(if internal { 9e7 } else { 2e3 });
                        port.pfc_tx = big(2e4);
                        port
                    })
                    .collect(),
            })
            .collect();
        let nodes: Vec<NodeSim> = cfg
            .nodes
            .iter()
            .map(|n| {
                let at = match (&n.switch, &n.switch_port) {
                    (Some(switch), Some(port)) => Some(SwitchPort {
                        switch: switch.clone(),
                        port: port.clone(),
                    }),
                    _ => None,
                };
                NodeSim {
                    name: n.name.clone(),
                    devs: n
                        .devices
                        .iter()
                        .enumerate()
                        .map(|(i, d)| DevSim {
                            name: d.clone(),
                            netdev: n.netdevs.get(i).cloned(),
                            hw: MLX5_HW_COUNTERS
                                .iter()
                                .map(|&c| {
                                    let v = match c {
                                        "lifespan" => 10,
                                        "np_cnp_sent"
                                        | "np_ecn_marked_roce_packets"
                                        | "rp_cnp_handled" => big(2e5),
                                        "rx_write_requests" | "rx_read_requests" => big(5e8),
                                        "out_of_sequence" => big(300.0),
                                        _ => 0,
                                    };
                                    (c, v)
                                })
                                .collect(),
                            xmit_words: big(1e12),
                            rcv_words: big(1e12),
                        })
                        .collect(),
                    netdevs: n
                        .netdevs
                        .iter()
                        .map(|nd| NetdevSim {
                            name: nd.clone(),
                            rx_pause: big(5e4),
                            rx_pause_us: big(4e7),
                            tx_pause: big(1e3),
                            rx_bytes: big(4e12),
                            tx_bytes: big(4e12),
                            kernel_rx_bytes: big(2e9),
                            kernel_tx_bytes: big(2e9),
                            ..Default::default()
                        })
                        .collect(),
                    at,
                }
            })
            .collect();
        let logs = cfg
            .logs
            .iter()
            .map(|l| LogSim {
                node: l.node.clone(),
                path: l.path.clone(),
                lines: VecDeque::new(),
                written: 0,
            })
            .collect();
        let mut cabled: Vec<SwitchPort> = nodes.iter().filter_map(|n| n.at.clone()).collect();
        cabled.sort();
        cabled.dedup();
        let mut sim = Self {
            seed,
            rng,
            fixed: None,
            cabled,
            scale: cfg.simulation.rate_scale,
            steps: 0,
            switches,
            nodes,
            logs,
            iteration: 1000,
            next_iter_ms: 0.0,
            last_step_ms: 156.0,
            last_allreduce_ms: 45.0,
            loss: 1.2127,
            fabric: None,
        };
        if let Some(fabric) = fabric {
            sim.fabric = Some(hops::Physics::new(&mut sim, fabric));
        }
        sim.fixed = (cfg.simulation.culprit_port.clone())
            .map(|c| sim.with_storm(c, cfg.simulation.congested_ports.clone()));
        sim.backlog();
        sim
    }

    /// The log as it looked before rocetop started: NCCL's start (run with `NCCL_DEBUG=INFO`: the
    /// RDMA devices it chose, a channel over them), then calm iterations up to the start.
    fn backlog(&mut self) {
        for log in &mut self.logs {
            let Some(n) = self.nodes.iter().find(|n| n.name == log.node) else {
                continue;
            };
            let devs: Vec<String> = (n.devs.iter().enumerate())
                .map(|(i, d)| format!("[{i}]{}:1/RoCE", d.name))
                .collect();
            if devs.is_empty() {
                continue;
            }
            let oob = n.netdevs.first().map_or("eth0", |d| d.name.as_str());
            let node = &log.node;
            for l in [
                format!(
                    "{node}:2291:2291 [0] NCCL INFO NET/IB : Using {} ; OOB {oob}:192.168.250.201<0>",
                    devs.join(" ")
                ),
                format!(
                    "{node}:2291:2310 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA"
                ),
            ] {
                log.lines.push_back(l);
                log.written += 1;
            }
        }
        for it in (800..=1000).step_by(10) {
            let ar = 45.0 + self.rng.f() * 4.0;
            let total = 111.0 + ar + self.rng.f() * 3.0;
            let loss = 1.2127 + (1000 - it) as f64 * 0.0007 + 0.0004 * self.rng.f();
            self.write_iteration(it, loss, ar, total, false);
        }
    }
}
