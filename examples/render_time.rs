//! Render time of one frame of every tab at 120x40, for 8 (the demo lab) and 512 nodes
//! (bench/gpu512.toml), fed through the same deterministic live path as the UI tests
//! (tests/support/feed.rs). A benchmark, not a test: it prints figures and asserts nothing.
//! Times are this thread's CPU time (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`), not the wall
//! clock: on a shared box the wall clock counts the time other processes held the core, which
//! made the same binary's "after new data" vary 3x from run to run. Not
//! `/proc/thread-self/schedstat` either: the kernel updates a running thread's figure there only
//! at a scheduler tick, so a 0.5 ms frame read as 0 or 4 ms.
//!
//!   cargo run --release --example render_time
//!   bench/render512.sh                        # two builds side by side
//!
//! For a profile of one case: RENDER_NODES=512 RENDER_TABS=Pfc,Queues RENDER_FRAMES=50 (frames
//! after new data per tab; 5 by default). RENDER_WARM=600: the frames after 600 s of history
//! rather than 30 (windows "since start" reaching past the 180 s of intervals kept per series).

#[path = "../tests/support/feed.rs"]
mod feed;

use crossterm::event::KeyCode;
use feed::Lab;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use rocetop::app::Tab;
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
    for nodes in [8usize, 512] {
        if only_nodes.is_some_and(|n| n != nodes) {
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
                "render {nodes} nodes, {:<10} 120x40: {same:>10.2?} per frame, {:>10.2?} after new data; App::update {:>8.2?} per poll",
                name,
                fresh / m,
                upd / polls.max(1)
            );
        }
    }
}
