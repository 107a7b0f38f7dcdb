//! Memory of the training-log follower while a writer appends a lot (default 1 GiB) to the followed
//! file: the follower task over the native `tail -F`, its output applied to a Store as the app does.
//! Prints RSS before the append (the baseline), the peak, and after. Run by bench/log_memory.sh.
//!
//! Usage: log_memory [MIB] [DIR]

use rocetop::collect::local::LocalTransport;
use rocetop::collect::logtail::follow;
use rocetop::collect::source::Probe;
use rocetop::collect::{Request, Source, SourceKind};
use rocetop::metrics::Store;
use rocetop::parse::{Ctx, ParseKind};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

fn line(i: u64) -> String {
    match i % 5 {
        0 => format!(
            "Iteration {:>6} | Loss: {:.4} | AllReduce: {:.1}ms | Total: {:.1}ms\n",
            i / 5,
            2.0 / (1.0 + i as f64 / 1e6),
            45.0 + (i % 7) as f64,
            160.0 + (i % 11) as f64
        ),
        1 => "  → All 8 servers exchanging ~150.5MB gradients\n".into(),
        2 => "  → Check switch for ECN/PFC activity!\n".into(),
        3 if i % 1000 == 3 => "ubunturdma1:2291:2310 [0] NCCL WARN NET/IB : Got completion from peer 192.168.250.203 with error 12, opcode 0, len 0, vendor err 129\n".into(),
        _ => "\n".into(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mib: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1024);
    let dir = args
        .next()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let path = dir.join(format!("rocetop-log-memory-{}.log", std::process::id()));
    let mut f = std::fs::File::create(&path)?;
    for i in 0..1000 {
        f.write_all(line(i).as_bytes())?;
    }
    drop(f);

    let mut store = Store::new(15 * 60_000, 10_000);
    let p = path.to_string_lossy().to_string();
    let src = Source {
        id: store.add_source("log", 1000),
        name: "log".into(),
        kind: SourceKind::Log,
        interval: Duration::from_secs(1),
        timeout: Duration::from_secs(5),
        transport: Arc::new(LocalTransport),
        probes: vec![Probe {
            kind: ParseKind::TrainingLog,
            request: Request::Tail {
                path: p.clone(),
                lines: 200,
            },
        }],
        ctx: Ctx {
            name: "n1".into(),
            log: p,
        },
        ports: Vec::new(),
        discovery: None,
        format_regex: None,
        nic_counters: Vec::new(),
        nic_memo: Default::default(),
    };
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let task = tokio::spawn(follow::run(Arc::new(src), tx));

    // Baseline: the follower running, the first 200 lines in.
    let mut got = 0u64;
    while got < 200 {
        let Some(c) = rx.recv().await else { break };
        c.apply(&mut store);
        got += c
            .raw
            .iter()
            .flatten()
            .map(|(_, t)| t.split('\n').count() as u64)
            .sum::<u64>();
    }
    let before = status_kib("VmRSS:");

    let target = mib << 20;
    let wpath = path.clone();
    let writer = std::thread::spawn(move || -> std::io::Result<u64> {
        let mut f = std::fs::OpenOptions::new().append(true).open(&wpath)?;
        let (mut written, mut lines, mut i) = (0u64, 0u64, 1000u64);
        let mut buf = String::with_capacity(1 << 20);
        while written < target {
            buf.clear();
            while buf.len() < (1 << 20) - 200 {
                buf.push_str(&line(i));
                i += 1;
                lines += 1;
            }
            f.write_all(buf.as_bytes())?;
            written += buf.len() as u64;
        }
        Ok(lines)
    });

    let t0 = Instant::now();
    let mut writer = Some(writer);
    let mut lines = u64::MAX;
    let mut got_new = 0u64;
    let mut next_report = Instant::now();
    while got_new < lines {
        if writer.as_ref().is_some_and(|w| w.is_finished()) {
            if let Some(w) = writer.take() {
                lines = w.join().map_err(|_| "writer panicked")??;
            }
        }
        match tokio::time::timeout(Duration::from_secs(30), rx.recv()).await {
            Ok(Some(c)) => {
                c.apply(&mut store);
                got_new += c
                    .raw
                    .iter()
                    .flatten()
                    .map(|(_, t)| t.split('\n').count() as u64)
                    .sum::<u64>();
            }
            _ => break,
        }
        if next_report <= Instant::now() {
            println!(
                "t={:>5.1}s lines={got_new:>9} rss={} KiB",
                t0.elapsed().as_secs_f64(),
                status_kib("VmRSS:")
            );
            next_report += Duration::from_secs(5);
        }
    }
    let after = status_kib("VmRSS:");
    let peak = status_kib("VmHWM:");
    task.abort();
    let _ = std::fs::remove_file(&path);
    println!(
        "appended {mib} MiB ({lines} lines, {got_new} followed) in {:.1} s",
        t0.elapsed().as_secs_f64()
    );
    println!(
        "rss before {before} KiB, after {after} KiB, peak {peak} KiB; after/before {:.2}",
        after as f64 / before.max(1) as f64
    );
    if got_new != lines {
        return Err(format!("followed {got_new} of {lines} lines").into());
    }
    Ok(())
}
