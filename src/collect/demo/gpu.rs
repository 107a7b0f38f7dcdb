//! The demo nodes' GPUs, beside the fabric simulation (read from it, never changing it), printed
//! as nvidia-smi prints them so they go through the real parsers: every node's GPUs idle while
//! the fabric pauses (training waits on its all-reduce) and recover after; one node throttles on
//! its own now and then (a power cap, in a slot of its own where the fabric stays calm: a slow
//! GPU that is not the network), and the whole job's step slows with it (data parallel: every rank waits for the
//! slowest); one node's RDMA NIC hangs off the other socket from its first GPUs.

use super::sim::{NodeSim, Sim};
use crate::parse::host::gpu::QUERY_FIELDS;
use std::fmt::Write as _;

/// GPUs per demo node: two per socket.
pub const GPUS: usize = 4;
/// Busy GPUs' utilization, percent, on a quiet fabric.
pub const BUSY_PERCENT: f64 = 93.0;
/// How far utilization falls at full congestion, percent points (93 → 41).
pub const IDLE_DROP: f64 = 52.0;
/// Utilization of the throttling node's GPUs while power capped.
pub const THROTTLED_PERCENT: f64 = 58.0;
/// NVML `sw_power_cap` in `clocks_throttle_reasons.active`.
const SW_POWER_CAP: u64 = 0x4;

/// The node that throttles on its own: the last one.
pub fn throttling_node(sim: &Sim) -> Option<&str> {
    sim.nodes.last().map(|n| n.name.as_str())
}

/// The node whose NCCL NIC sits on the other socket from GPUs 0 and 1: the one whose training
/// log the demo writes (NCCL's `NCCL_DEBUG=INFO` lines there say which NICs it uses, so
/// `check` can tell), else the third (or the only).
pub fn wrong_socket_node(sim: &Sim) -> Option<&str> {
    let logged = (sim.logs.iter()).find_map(|l| sim.nodes.iter().find(|n| n.name == l.node));
    logged
        .or(sim.nodes.get(2))
        .or(sim.nodes.first())
        .map(|n| n.name.as_str())
}

/// How long the throttling node stays power capped: from the start of its slot.
pub const THROTTLE_MS: i64 = 10_000;

/// The windows (start, end) in which the throttling node is power capped, of the slots that
/// start before `until_ms`: the GPU slots, where the fabric stays calm ([`Sim::gpu_slots`]).
pub fn throttle_windows(sim: &Sim, until_ms: i64) -> Vec<(i64, i64)> {
    (sim.gpu_slots(until_ms).into_iter())
        .map(|s| (s, s + THROTTLE_MS))
        .collect()
}

/// Whether the throttling node is power capped at `t_ms` ([`throttle_windows`]).
pub fn throttled_at(sim: &Sim, t_ms: i64) -> bool {
    throttle_windows(sim, t_ms + 1)
        .iter()
        .any(|(s, e)| (*s..*e).contains(&t_ms))
}

/// How much longer a training step's compute takes at `t_ms`: the job runs at its slowest
/// GPU's pace, and a capped GPU gets through its work in proportion to its utilization.
pub fn compute_slowdown(sim: &Sim, t_ms: i64) -> f64 {
    if throttled_at(sim, t_ms) {
        BUSY_PERCENT / THROTTLED_PERCENT
    } else {
        1.0
    }
}

/// Deterministic jitter in [-1, 1] for one GPU in one second.
fn wobble(t_ms: i64, node: usize, gpu: usize) -> f64 {
    let mut x = (t_ms / 1000) as u64 ^ ((node as u64) << 20) ^ ((gpu as u64) << 40);
    x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 29;
    (x % 2001) as f64 / 1000.0 - 1.0
}

/// One GPU's readings at `t_ms`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    pub util: f64,
    pub power_w: f64,
    pub temp_c: f64,
    pub throttle: u64,
}

pub fn reading(sim: &Sim, node: usize, gpu: usize, t_ms: i64) -> Reading {
    let c = sim.congestion(t_ms);
    let throttled = node + 1 == sim.nodes.len() && throttled_at(sim, t_ms);
    let util = if throttled {
        THROTTLED_PERCENT + 2.0 * wobble(t_ms, node, gpu)
    } else {
        BUSY_PERCENT - IDLE_DROP * c + 2.0 * wobble(t_ms, node, gpu)
    }
    .clamp(0.0, 100.0)
    .round();
    Reading {
        util,
        power_w: if throttled {
            300.0
        } else {
            ((90.0 + 3.3 * util) * 100.0).round() / 100.0
        },
        temp_c: (38.0 + 0.3 * util).round() + if throttled { 8.0 } else { 0.0 },
        throttle: if throttled { SW_POWER_CAP } else { 0 },
    }
}

/// The node's answer to rocetop's `--query-gpu` (`--format=csv,nounits`), as driver 535 prints it.
pub fn query_csv(sim: &Sim, n: &NodeSim) -> String {
    let Some(node) = sim.nodes.iter().position(|x| x.name == n.name) else {
        return String::new();
    };
    let units = |f: &str| match f {
        "utilization.gpu" | "utilization.memory" => format!("{f} [%]"),
        "power.draw" => format!("{f} [W]"),
        "memory.used" | "memory.total" => format!("{f} [MiB]"),
        _ => f.to_string(),
    };
    let mut out = QUERY_FIELDS
        .iter()
        .map(|f| units(f))
        .collect::<Vec<_>>()
        .join(", ");
    out.push('\n');
    let t = sim.now_ms();
    for g in 0..GPUS {
        let r = reading(sim, node, g, t);
        let _ = writeln!(
            out,
            "{g}, GPU-{:08x}-0000-4000-8000-{:012x}, 00000000:{:02X}:00.0, {}, {}, {:.2}, {}, 0x{:016X}, 70123, 81920, 0, 0",
            node,
            g,
            0x18 + 0x20 * g,
            r.util,
            (r.util * 0.45).round(),
            r.power_w,
            r.temp_c,
            r.throttle,
        );
    }
    out
}

/// The node's `nvidia-smi topo -m` in the NIC-legend layout: GPUs 0-1 on socket 0, 2-3 on socket
/// 1, each RDMA device beside GPUs 0-1 (PIX), except on [`wrong_socket_node`], whose devices hang
/// off socket 1 and whose spare `mlx5_1` (not in NCCL's list) is the one beside GPUs 0-1.
pub fn topo(sim: &Sim, n: &NodeSim) -> String {
    let wrong = wrong_socket_node(sim) == Some(n.name.as_str());
    let mut nics: Vec<(String, bool)> = n.devs.iter().map(|d| (d.name.clone(), !wrong)).collect();
    if wrong {
        nics.push(("mlx5_1".into(), true));
    }
    let mut out = String::from("\t");
    for g in 0..GPUS {
        let _ = write!(out, "GPU{g}\t");
    }
    for i in 0..nics.len() {
        let _ = write!(out, "NIC{i}\t");
    }
    out.push_str("CPU Affinity\tNUMA Affinity\tGPU NUMA ID\n");
    for g in 0..GPUS {
        let socket0 = g < GPUS / 2;
        let _ = write!(out, "GPU{g}\t");
        for p in 0..GPUS {
            out.push_str(if p == g { " X \t" } else { "NV18\t" });
        }
        for (_, on_socket0) in &nics {
            let path = match (socket0, *on_socket0) {
                (true, true) => "PIX",
                (false, false) => "PXB",
                _ => "SYS",
            };
            let _ = write!(out, "{path}\t");
        }
        let (cpus, numa) = if socket0 {
            ("0-31,64-95", 0)
        } else {
            ("32-63,96-127", 1)
        };
        let _ = writeln!(out, "{cpus}\t{numa}\t\tN/A");
    }
    out.push_str("\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing at most a single PCIe bridge\n  NV#  = Connection traversing a bonded set of # NVLinks\n\nNIC Legend:\n\n");
    for (i, (name, _)) in nics.iter().enumerate() {
        let _ = writeln!(out, "  NIC{i}: {name}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::metrics::names::*;
    use crate::parse::host::gpu;

    fn demo() -> Sim {
        Sim::new(&Config::reference())
    }

    #[test]
    fn gpus_idle_while_the_fabric_pauses_and_one_node_throttles_on_its_own() {
        let mut sim = demo();
        let eps = sim.injected(400_000);
        let mid = (eps[1].start_ms + eps[1].end_ms) / 2;
        sim.advance_to(mid);
        let n0 = sim.nodes[0].clone();
        let p = gpu::parse(&query_csv(&sim, &n0), &n0.name);
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let util = p
            .find(GPU_UTILIZATION_PERCENT, &[("gpu", "0")])
            .map(|v| v.as_f64());
        assert!(
            util.is_some_and(|u| u < 50.0),
            "idle in the episode: {util:?}"
        );
        // The throttling node's window, and a quiet second on every other node.
        let (t, end) = throttle_windows(&sim, 400_000)[0];
        assert!(throttled_at(&sim, t) && !throttled_at(&sim, end));
        assert!(
            eps.iter().all(|e| t < e.start_ms || t >= e.end_ms),
            "apart from episodes"
        );
        let last = sim.nodes.len() - 1;
        assert_eq!(reading(&sim, last, 0, t).throttle, SW_POWER_CAP);
        assert!(reading(&sim, last, 0, t).util < 65.0);
        assert_eq!(reading(&sim, 0, 0, t).throttle, 0);
        assert!(reading(&sim, 0, 0, t).util > 85.0);
        // The whole job's step slows with its slowest GPU, and recovers after.
        let mut sim = demo();
        sim.advance_to(t - 1000);
        let calm = sim.last_step_ms;
        sim.advance_to(t + THROTTLE_MS / 2);
        let slow = sim.last_step_ms;
        sim.advance_to(end + 3_000);
        let after = sim.last_step_ms;
        assert!(
            slow > 1.3 * calm && after < 1.1 * calm,
            "step {calm:.0} → {slow:.0} → {after:.0} ms"
        );
    }

    /// Every throttle is kept apart from the congestion episodes by the calm the detector needs
    /// to tell them apart (a congestion tail and its 10 s settle before, the settle after).
    #[test]
    fn throttles_keep_clear_of_the_congestion() {
        for seed in 1..=6 {
            let mut cfg = Config::reference();
            cfg.seed = seed;
            let sim = Sim::new(&cfg);
            let (eps, w) = (sim.injected(1_800_000), throttle_windows(&sim, 1_800_000));
            assert!(w.len() >= 3, "seed {seed}: {} throttles in 30 min", w.len());
            for (s, e) in w {
                assert!(
                    eps.iter()
                        .all(|x| e + 14_000 <= x.start_ms || s >= x.end_ms + 20_000),
                    "seed {seed}: {s}..{e}"
                );
            }
        }
    }

    #[test]
    fn the_wrong_socket_node_reads_as_such() {
        let sim = demo();
        let name = wrong_socket_node(&sim).expect("a node").to_string();
        let n = sim.nodes.iter().find(|n| n.name == name).expect("node");
        let p = gpu::topo::parse(&topo(&sim, n), &name);
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let paths = gpu::topo::paths(&p);
        let dev = &n.devs[0].name;
        assert!(paths.contains(&("0".into(), dev.clone(), gpu::topo::Path::Sys)));
        assert!(paths.contains(&("0".into(), "mlx5_1".into(), gpu::topo::Path::Pix)));
        let other = sim
            .nodes
            .iter()
            .find(|x| x.name != name)
            .expect("another node");
        let q = gpu::topo::paths(&gpu::topo::parse(&topo(&sim, other), &other.name));
        assert!(q.contains(&("0".into(), other.devs[0].name.clone(), gpu::topo::Path::Pix)));
    }
}
