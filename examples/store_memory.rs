//! Memory of the store with N nodes and M minutes of 1 Hz history, filled without waiting: each node's
//! sysfs dump and `ethtool -S` (a real mlx5 one, bench/perf/ethtool-S_mlx5.txt) go through the real
//! parsers and the `[poll] nic_counters` subset once, then every simulated second the moving
//! counters advance and the poll is ingested as the collectors' results are. Prints the store's
//! size, RSS, bytes per point and ingest time, then the same points in the previous layout (one
//! `VecDeque` of 16-byte points per series, filled the same way) for comparison. Run by bench/perf.sh
//! (`PREFILL=1`) or directly:
//!
//!   store_memory [NODES=512] [MINUTES=15] [default|all]

use rocetop::collect::demo::sim::MLX5_HW_COUNTERS;
use rocetop::config::DEFAULT_NIC_COUNTERS;
use rocetop::metrics::{Parsed, Store, Value};
use rocetop::parse::keep::keep_counter;
use rocetop::parse::{Ctx, ParseKind, parse};
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::time::Instant;

const ETHTOOL: &str = include_str!("../bench/perf/ethtool-S_mlx5.txt");
const IB: &[&str] = &[
    "port_rcv_data",
    "port_xmit_data",
    "port_rcv_packets",
    "port_xmit_packets",
    "port_xmit_discards",
    "port_xmit_wait",
    "symbol_error",
    "link_downed",
    "port_rcv_errors",
    "unicast_rcv_packets",
    "unicast_xmit_packets",
];
const NET: &[&str] = &[
    "rx_bytes",
    "tx_bytes",
    "rx_packets",
    "tx_packets",
    "rx_dropped",
    "tx_dropped",
    "rx_errors",
    "tx_errors",
    "collisions",
    "multicast",
];

fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// One node's poll, parsed and cut to the subset, as `poll_once` does.
fn node_poll(i: usize, patterns: &[String]) -> Parsed {
    let root = "/sys";
    let port = format!("{root}/class/infiniband/rocep11s0/ports/1");
    let nd = format!("enp{i}s0");
    let mut dump = String::new();
    for (k, n) in MLX5_HW_COUNTERS.iter().enumerate() {
        let _ = writeln!(dump, "{port}/hw_counters/{n}:{}", 1000 * i + k);
    }
    for (k, n) in IB.iter().enumerate() {
        let _ = writeln!(dump, "{port}/counters/{n}:{}", 1000 * i + k);
    }
    let _ = writeln!(
        dump,
        "{port}/gid_attrs/ndevs/0:{nd}\n{port}/state:4: ACTIVE"
    );
    for (k, n) in NET.iter().enumerate() {
        let _ = writeln!(
            dump,
            "{root}/class/net/{nd}/statistics/{n}:{}",
            1000 * i + k
        );
    }
    let mut eth = format!("ethtool -S {nd}\nNIC statistics:\n{ETHTOOL}");
    for n in [
        "rx_prio3_pause",
        "rx_prio3_pause_duration",
        "tx_prio3_pause",
        "tx_prio3_pause_duration",
        "tx_pause_storm_warning_events",
    ] {
        let _ = writeln!(eth, "{n}: 0");
    }
    let ctx = Ctx::named(&format!("node{i}"));
    let mut p = parse(ParseKind::HwCounters, &dump, &ctx);
    p.merge(parse(ParseKind::Ethtool, &eth, &ctx));
    p.samples.retain(|s| keep_counter(&s.key.name, patterns));
    p
}

/// The next second: byte and packet counters move a lot, CNP/ECN a little, errors not at all.
fn advance(p: &mut Parsed, tick: u64, node: usize) {
    for (k, s) in p.samples.iter_mut().enumerate() {
        let step = if s.key.name.contains("bytes") || s.key.name.contains("data") {
            250_000_000 + (tick * 7919 + k as u64 * 31 + node as u64) % 50_000_000
        } else if s.key.name.contains("packets") {
            70_000 + (tick * 31 + k as u64) % 5_000
        } else if s.key.name.contains("cnp") || s.key.name.contains("ecn") {
            (tick * 13 + k as u64) % 60
        } else if s.key.name.contains("pause") {
            (tick * 17 + k as u64) % 200
        } else {
            0
        };
        match &mut s.value {
            Value::Counter(v) | Value::Counter32(v) | Value::CounterMicros(v) => {
                *v = v.wrapping_add(step)
            }
            Value::Gauge(_) => {}
        }
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let nodes: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(512);
    let minutes: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    let all = args.next().is_some_and(|a| a == "all");
    let patterns: Vec<String> = if all {
        Vec::new()
    } else {
        DEFAULT_NIC_COUNTERS.iter().map(|s| s.to_string()).collect()
    };
    let retention = minutes * 60_000;
    let ticks = minutes * 60;
    let rss0 = status_kib("VmRSS");
    // As the live screen sizes it (tui.rs: retention / interval + 16).
    let mut store = Store::new(retention, (retention / 1000 + 16) as usize);
    let mut polls: Vec<Parsed> = (1..=nodes).map(|i| node_poll(i, &patterns)).collect();
    let ids: Vec<_> = (1..=nodes)
        .map(|i| store.add_source(&format!("node{i}"), 1000))
        .collect();
    let t0: i64 = 1_700_000_000_000;
    let start = Instant::now();
    let mut last_minute = std::time::Duration::ZERO;
    for tick in 0..ticks {
        let tm = Instant::now();
        for (n, (p, id)) in polls.iter_mut().zip(&ids).enumerate() {
            advance(p, tick as u64, n);
            // Collectors are staggered over the second, and each answer has a few ms of jitter.
            let at =
                t0 + tick * 1000 + (n as i64 * 1000 / nodes as i64) + (tick * 7 + n as i64) % 9;
            store.ingest(*id, at, p);
        }
        if tick >= ticks - 60 {
            last_minute += tm.elapsed();
        }
    }
    let fill = start.elapsed();
    let st = store.stats();
    let rss1 = status_kib("VmRSS");
    println!(
        "{nodes} nodes, {minutes} min at 1 Hz, counters {}: {} series, {} points",
        if all { "all" } else { "default subset" },
        st.series,
        st.points
    );
    println!(
        "new layout (per-source clocks, compressed blocks): RSS {:.1} MB (store {:.1} MB over a {:.1} MB start), history {:.1} MB = {:.2} bytes/point",
        rss1 as f64 / 1024.0,
        (rss1 - rss0) as f64 / 1024.0,
        rss0 as f64 / 1024.0,
        st.history_bytes as f64 / 1e6,
        st.history_bytes as f64 / st.points.max(1) as f64
    );
    println!(
        "ingest: {:.1} us per node poll ({} samples) in the last minute; fill {:.1} s",
        last_minute.as_secs_f64() * 1e6 / (60 * nodes) as f64,
        polls.first().map_or(0, |p| p.samples.len()),
        fill.as_secs_f64()
    );
    // The previous layout: a VecDeque<{t: i64, raw: u64}> per series, capped as before.
    let cap = (retention / 1000 + 16) as usize;
    let before = status_kib("VmRSS");
    let mut old: Vec<VecDeque<(i64, u64)>> = Vec::with_capacity(st.series);
    for _ in 0..st.series {
        let mut q = VecDeque::new();
        for t in 0..(st.points / st.series.max(1)) as i64 {
            q.push_back((t, t as u64));
            if q.len() > cap {
                q.pop_front();
            }
        }
        old.push(q);
    }
    let after = status_kib("VmRSS");
    let old_bytes: usize = old.iter().map(|q| q.capacity() * 16).sum();
    println!(
        "old layout (VecDeque of 16-byte points): {:.1} MB more RSS for the same points ({:.2} bytes/point); {:.0}x the new history",
        (after - before) as f64 / 1024.0,
        old_bytes as f64 / st.points.max(1) as f64,
        old_bytes as f64 / st.history_bytes.max(1) as f64
    );
    drop(old);
    std::hint::black_box(&store);
}
