//! CPU of the TUI's once-a-second evaluation (alerts, episodes) and of the rolled-up alert lines,
//! for 8 (the demo lab) and 512 nodes (bench/gpu512.toml), fed through the same deterministic
//! live path as the UI tests (tests/support/feed.rs). A benchmark, not a test: it prints figures
//! and asserts nothing. Times are this thread's CPU time
//! (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`: schedstat moves only at a scheduler tick).
//!
//!   cargo run --release --example eval_cost
//!   EVAL_NODES=512 EVAL_SECS=60 EVAL_WARM=30 target/release/examples/eval_cost
//!
//! Under callgrind (instructions, which load does not move): `valgrind --tool=callgrind
//! --toggle-collect='*eval_alerts*' target/release/examples/eval_cost`.

#[path = "../tests/support/feed.rs"]
mod feed;

use feed::Lab;
use rocetop::app::Event;
use std::time::Duration;

fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    #[allow(unsafe_code)] // std has no thread CPU clock
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn main() {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let only: Option<usize> = env("EVAL_NODES").and_then(|v| v.parse().ok());
    let secs: i64 = env("EVAL_SECS").and_then(|v| v.parse().ok()).unwrap_or(60);
    let warm: i64 = env("EVAL_WARM").and_then(|v| v.parse().ok()).unwrap_or(30);
    for nodes in [8usize, 512] {
        if only.is_some_and(|n| n != nodes) {
            continue;
        }
        let cfg = if nodes == 8 {
            rocetop::config::Config::reference()
        } else {
            let text =
                std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/bench/gpu512.toml"))
                    .expect("bench config");
            rocetop::config::Config::from_str(&text, "gpu512.toml", None).expect("valid")
        };
        let mut lab = Lab::with(cfg);
        lab.run(warm);
        let (mut ingest, mut eval, mut rolled) = (0u64, 0u64, 0u64);
        let evals0 = lab.app.alerts().evaluations();
        let mut lines = 0;
        for _ in 0..secs {
            lab.secs += 1;
            lab.sim.advance_to(lab.secs * 1000);
            let at = lab.now();
            let polls = feed::polls(&mut lab);
            let t = cpu_ns();
            for (name, parsed) in polls {
                let source = lab.id(&name);
                lab.collected(source, at, parsed, None);
            }
            let t1 = cpu_ns();
            // The tick evaluates (at most once a second), as the frames after polls do live.
            lab.app.update(Event::Tick, at);
            let t2 = cpu_ns();
            lines = lab.app.rolled().len();
            let t3 = cpu_ns();
            ingest += t1 - t;
            eval += t2 - t1;
            rolled += t3 - t2;
        }
        let evals = (lab.app.alerts().evaluations() - evals0).max(1);
        let per = |ns: u64, n: u64| Duration::from_nanos(ns / n.max(1));
        println!(
            "eval {nodes} nodes: {evals} evaluations, {:>10.2?} each; rolled-up lines ({lines} lines) {:>10.2?} a second; ingest {:>10.2?} a second; {} alerts active",
            per(eval, evals),
            per(rolled, secs as u64),
            per(ingest, secs as u64),
            lab.app.alerts().active().len(),
        );
    }
}
