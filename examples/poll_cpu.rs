//! CPU of the monitor's hot path per refresh, without the network: the raw outputs of one second of
//! bench/perf.sh's simulated fabric (captured by `bench/perf/capture.sh DIR N`: N nodes' sysfs dump
//! and 751-counter mlx5 `ethtool -S`, one NX-OS switch's `show queuing interface` of 32 ports,
//! `show interface priority-flow-control` and `show interface flowcontrol`) go through the same
//! `parse_outputs` and `Store` ingestion the collectors use, ITERS times. Sources are built from a
//! config like bench/perf.sh's, so the `[poll] nic_counters` subset and the switch's `ports` filter
//! apply as in a live poll. Prints µs per refresh (all N+1 sources) and per parser.
//!
//!   bench/perf/capture.sh /tmp/pcap 8
//!   cargo run --release --example poll_cpu -- /tmp/pcap [ITERS=200]
//!
//! For instruction counts that a busy machine does not disturb, run it under callgrind at two
//! iteration counts and take the difference (setup cancels out):
//!
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/poll_cpu /tmp/pcap 1
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/examples/poll_cpu /tmp/pcap 11

use rocetop::collect::poll::{Collected, parse_outputs};
use rocetop::collect::source::{self, RemoteFactory, Source, SourceKind};
use rocetop::collect::transport::CollectError;
use rocetop::config::Config;
use rocetop::metrics::Store;
use rocetop::parse::{Ctx, ParseKind, parse};
use std::path::Path;
use std::time::{Duration, Instant};

fn read(dir: &Path, name: &str) -> String {
    let p = dir.join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| {
        eprintln!("{}: {e} (run bench/perf/capture.sh first)", p.display());
        std::process::exit(2)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(dir) = args.get(1).map(Path::new) else {
        eprintln!("usage: poll_cpu DIR [ITERS=200]   (DIR from bench/perf/capture.sh DIR N)");
        std::process::exit(2)
    };
    let iters: u32 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let n = (1..)
        .take_while(|i| dir.join(format!("node{i}.hw")).exists())
        .count();

    let mut toml = String::from(
        "demo = false\n[poll]\ninterval = \"1s\"\nretention = \"15m\"\n\n[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nos = \"nxos\"\nports = [\"Ethernet1/1-32\", \"ii1/1/1-6\"]\n",
    );
    for i in 1..=n {
        toml.push_str(&format!(
            "\n[[node]]\nname = \"node{i}\"\nhost = \"127.0.0.1\"\nsysfs_root = \"/sys\"\ndevices = [\"rocep11s0\"]\nnetdevs = [\"enp{i}s0\"]\n"
        ));
    }
    let cfg = Config::from_str(&toml, "poll_cpu.toml", None).unwrap_or_else(|e| {
        eprintln!("config: {e:?}");
        std::process::exit(2)
    });
    let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 16);
    let none: RemoteFactory<'_> = &|_, _| Err(CollectError::Unavailable("offline".into()));
    let sources = source::build(&cfg, &mut store, none);

    // Each source's raw outputs, in its probes' order, as a poll hands them to parse_outputs.
    let mut polls: Vec<(&Source, Vec<(ParseKind, String)>)> = Vec::new();
    for s in &sources {
        let raw = match s.kind {
            SourceKind::Switch => vec![
                (ParseKind::NxosQueuing, read(dir, "sw.queuing")),
                (ParseKind::NxosPfc, read(dir, "sw.pfc")),
                (ParseKind::NxosFlowcontrol, read(dir, "sw.flowcontrol")),
            ],
            SourceKind::Node => vec![
                (ParseKind::HwCounters, read(dir, &format!("{}.hw", s.name))),
                (
                    ParseKind::Ethtool,
                    read(dir, &format!("{}.ethtool", s.name)),
                ),
            ],
            _ => continue,
        };
        polls.push((s, raw));
    }

    let t0 = Instant::now();
    let (mut parse_t, mut ingest_t) = (Duration::ZERO, Duration::ZERO);
    let mut samples = 0usize;
    for it in 0..iters {
        let at = 1_700_000_000_000 + i64::from(it) * 1000;
        for (src, raw) in &polls {
            let t = Instant::now();
            let parsed = parse_outputs(src, raw);
            let t2 = Instant::now();
            samples += parsed.samples.len();
            let c = Collected {
                source: src.id,
                at,
                parsed,
                raw: Some(Vec::new()),
                error: None,
                history: Default::default(),
            };
            c.apply(&mut store);
            drop(c);
            parse_t += t2 - t;
            ingest_t += t2.elapsed();
        }
    }
    let total = t0.elapsed();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(iters.max(1));
    println!(
        "poll_cpu: {n} nodes + 1 switch, {iters} refreshes: {:.1} µs/refresh (parse_outputs {:.1} µs, store {:.1} µs), {} samples/refresh",
        per(total),
        per(parse_t),
        per(ingest_t),
        samples / iters.max(1) as usize
    );

    // Each parser alone (no subset, no filter), on node1's and the switch's outputs.
    if iters >= 10 {
        let ctx = Ctx::named("x");
        for (kind, file) in [
            (ParseKind::NxosQueuing, "sw.queuing"),
            (ParseKind::NxosPfc, "sw.pfc"),
            (ParseKind::NxosFlowcontrol, "sw.flowcontrol"),
            (ParseKind::HwCounters, "node1.hw"),
            (ParseKind::Ethtool, "node1.ethtool"),
        ] {
            let text = read(dir, file);
            let t = Instant::now();
            let mut k = 0;
            for _ in 0..iters {
                k += parse(kind, &text, &ctx).samples.len();
            }
            println!(
                "  {:<17} {:>8.1} µs  ({} samples, {} B)",
                kind.name(),
                per(t.elapsed()),
                k / iters as usize,
                text.len()
            );
        }
        if let Some((src, raw)) = polls.iter().find(|(s, _)| s.kind == SourceKind::Node) {
            let t = Instant::now();
            let mut k = 0;
            for _ in 0..iters {
                k += parse_outputs(src, &raw[1..]).samples.len();
            }
            println!(
                "  {:<17} {:>8.1} µs  ({} samples: the nic_counters subset)",
                "ethtool (subset)",
                per(t.elapsed()),
                k / iters as usize
            );
        }
    }
}
