//! Render time of one frame of every tab at 120x40, for 8 (the demo lab) and 512 nodes
//! (bench/gpu512.toml), and for a fabric of 64 switches (8 spines, 56 leaves of 64 ports, 1008
//! nodes with two NICs: the fabric demo's physics, five seconds into its first episode), fed
//! through the same deterministic live path as the UI tests (tests/support/feed.rs). A benchmark, not a test: it prints figures and asserts nothing.
//! Times are this thread's CPU time (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), not the wall
//! clock: on a shared box the wall clock counts the time other processes held the core, which
//! made the same binary's "after new data" vary 3x from run to run. Not
//! `/proc/thread-self/schedstat` either: the kernel updates a running thread's figure there only
//! at a scheduler tick, so a 0.5 ms frame read as 0 or 4 ms.
//!
//!   cargo run --release --example render_time
//!   bench/render512.sh                        # two builds side by side
//!
//! For a profile of one case: RENDER_NODES=512 (8, 512 or 1008: the fabric) RENDER_TABS=Pfc,Queues RENDER_FRAMES=50 (frames
//! after new data per tab; 5 by default). RENDER_WARM=600: the frames after 600 s of history
//! rather than 30 (windows "since start" reaching past the 180 s of intervals kept per series).

#[path = "../tests/support/feed.rs"]
mod feed;

use crossterm::event::KeyCode;
use feed::Lab;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rocetop::app::Tab;
use rocetop::collect::demo::fabric::{Fabric, Shape, config_of};
use rocetop::collect::demo::sim::Sim;
use rocetop::ui;
use std::time::Duration;

/// CPU time this thread has run, where the OS tells it; the wall clock elsewhere.
#[derive(Clone, Copy)]
struct Cpu(Option<Duration>, std::time::Instant);

fn thread_cpu() -> Option<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the call's duration.
    #[allow(unsafe_code)] // std has no thread CPU clock
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

impl Cpu {
    fn now() -> Cpu {
        Cpu(thread_cpu(), std::time::Instant::now())
    }
    fn elapsed(self) -> Duration {
        match (self.0, thread_cpu()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => self.1.elapsed(),
        }
    }
}

/// A frame after new data, by name for a profiler
/// (`valgrind --tool=callgrind --toggle-collect='*draw_after_new_data*'`).
#[inline(never)]
fn draw_after_new_data(t: &mut Terminal<TestBackend>, app: &rocetop::app::App) {
    t.draw(|f| ui::draw(f, app)).expect("draw");
}

fn on_tab(lab: &mut Lab, tab: Tab) {
    lab.key(KeyCode::Char(char::from(b'1' + tab.index() as u8)));
}

/// Nodes in the wide fabric, [`Shape::WIDE`].
const WIDE_NODES: usize = Shape::WIDE.pods * Shape::WIDE.pod_nodes;

/// The fabric demo's physics on [`Shape::WIDE`], and its name in the output.
fn wide_fabric() -> (Lab, String) {
    let fabric = Fabric::sized(Shape::WIDE);
    let cfg = config_of(&fabric, 1);
    let what = format!("fabric {} switches", fabric.switches.len());
    let sim = Sim::with_fabric(&cfg, fabric);
    (Lab::with_sim(cfg, sim), what)
}

fn main() {
    // Two figures per tab: a frame redrawn with nothing new (a key, a resize), and the first
    // frame after a second of polls (what the live screen draws most). `App::update` per poll is
    // timed over that second of polls.
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let only_nodes: Option<usize> = env("RENDER_NODES").and_then(|v| v.parse().ok());
    let only_tabs = env("RENDER_TABS");
    let m: u32 = env("RENDER_FRAMES")
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let warm: i64 = env("RENDER_WARM")
        .and_then(|v| v.parse().ok())
        .unwrap_or(30);
    for nodes in [8usize, 512, WIDE_NODES] {
        if only_nodes.is_some_and(|n| n != nodes) {
            continue;
        }
        let (mut lab, what) = match nodes {
            8 => (
                Lab::with(rocetop::config::Config::reference()),
                "8 nodes".to_string(),
            ),
            512 => {
                let text = std::fs::read_to_string(concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/bench/gpu512.toml"
                ))
                .expect("bench config");
                let cfg =
                    rocetop::config::Config::from_str(&text, "gpu512.toml", None).expect("valid");
                (Lab::with(cfg), "512 nodes".to_string())
            }
            _ => wide_fabric(),
        };
        // The fabric into its first episode, where the PFC tab has a tree to draw.
        let first = lab.sim.fabric_episodes(120_000).first().map(|e| e.start_ms);
        lab.run(first.map_or(warm, |ms| ms / 1000 + 5));
        for tab in Tab::ALL {
            let name = format!("{tab:?}");
            if only_tabs
                .as_deref()
                .is_some_and(|t| !t.split(',').any(|t| t == name))
            {
                continue;
            }
            on_tab(&mut lab, tab);
            let mut t = Terminal::new(TestBackend::new(120, 40)).expect("terminal");
            t.draw(|f| ui::draw(f, &lab.app)).expect("draw");
            let n = 20;
            let start = Cpu::now();
            for _ in 0..n {
                t.draw(|f| ui::draw(f, &lab.app)).expect("draw");
            }
            let same = start.elapsed() / n;
            let (mut fresh, mut upd, mut polls) = (Duration::ZERO, Duration::ZERO, 0u32);
            for _ in 0..m {
                let (d, p) = lab.run_timed(1);
                upd += d;
                polls += p;
                let start = Cpu::now();
                draw_after_new_data(&mut t, &lab.app);
                fresh += start.elapsed();
            }
            println!(
                "render {what}, {:<10} 120x40: {same:>10.2?} per frame, {:>10.2?} after new data; App::update {:>8.2?} per poll",
                name,
                fresh / m,
                upd / polls.max(1)
            );
        }
    }
}
