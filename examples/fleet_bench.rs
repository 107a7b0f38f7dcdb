//! Fleet-mode bench: a real Prometheus over a backfilled fleet (default 2000 nodes ×
//! 2 devices × 30 min at 15 s), read by a `[[prometheus]]` source. Reports the first full screen
//! (two polls, since rates need two samples, and a drawn 200x50 Overview frame), wall time and
//! rocetop CPU per refresh (poll + store + the Overview/ECN view models + one drawn frame), RSS,
//! and queries per refresh (counted by the transport); Prometheus' own CPU per refresh beside.
//!
//! The source backfills the store's history (`poll.retention`, 15 minutes) on its first poll, as
//! the TUI's does (`query_range`), so the first poll already gives rates and the
//! first screen is one poll; `no-history` measures without it (two polls).
//!
//!     cargo run --release --example fleet_bench -- [NODES] [no-history]

#[path = "../tests/common/prom.rs"]
mod prom;

use prom::{Fleet, STEP_S};
use rocetop::collect::poll::poll_once;
use rocetop::collect::prometheus::PromTransport;
use rocetop::collect::source::fleet_source;
use rocetop::config::Config;
use rocetop::metrics::Store;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Instant;

/// CPU time of this process (user + system), from /proc/self/stat, in ms.
fn cpu_ms() -> f64 {
    cpu_ms_of("self")
}

/// The same for process `pid` (the Prometheus server).
fn cpu_ms_of(pid: &str) -> f64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let f: Vec<&str> = s
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) * 10.0
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let nodes: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let history = std::env::args().nth(2).as_deref() != Some("no-history");
    let Some(bins) = prom::require() else { return };
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let start = (now_s - 3 * 3600) / STEP_S * STEP_S;
    let fleet = Fleet {
        nodes,
        start,
        faults: false,
    };
    let t = Instant::now();
    let server = prom::start(&bins, &fleet);
    eprintln!(
        "backfill + server ready: {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let cfg = Config::from_str(
        &format!(
            "[[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:{}\"\n",
            server.port
        ),
        "bench",
        None,
    )
    .expect("config");
    let p = &cfg.prometheus[0];
    let t0 = (start + 15 * 60) * 1000 + 7_000;
    let now = Arc::new(AtomicI64::new(t0));
    let n = now.clone();
    let mut transport =
        PromTransport::new(p, Arc::new(move || n.load(Ordering::SeqCst))).expect("transport");
    if history {
        transport = transport.with_history(cfg.poll.retention);
    }
    let transport = Arc::new(transport);
    let mut store = Store::new(24 * 3600 * 1000, 4096);
    let src = fleet_source(p, &mut store, transport.clone());
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let mut app = rocetop::app::App::new(cfg.clone(), store, theme, t0);
    let mut term =
        ratatui::Terminal::new(ratatui::backend::TestBackend::new(200, 50)).expect("terminal");
    let mut queries = Vec::new();
    let polls: i64 = 20;
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    // CPU is read in 10 ms ticks: the per-part figures are means over all refreshes but the first.
    let (mut poll_sum, mut update_sum, mut draw_sum) = (0.0, 0.0, 0.0);
    let mut first_screen = None;
    let server_pid = server.pid().to_string();
    let server_cpu0 = cpu_ms_of(&server_pid);
    let begin = Instant::now();
    for k in 0..polls {
        now.store(t0 + k * STEP_S * 1000, Ordering::SeqCst);
        let (w0, c0, q0) = (Instant::now(), cpu_ms(), transport.queries().await);
        let c = poll_once(&src).await;
        let c1 = cpu_ms();
        assert_eq!(c.error, None);
        let at = c.at;
        if k == 0 {
            eprintln!(
                "history backfilled: {} steps, {} series, {} points, in {:.0} ms wall",
                c.history.times.len(),
                c.history.series.len(),
                c.history.points(),
                w0.elapsed().as_secs_f64() * 1e3
            );
        }
        app.update(rocetop::app::Event::Collected(c), at);
        let c2 = cpu_ms();
        // The Overview (the first tab): its view model is computed inside draw.
        term.draw(|f| rocetop::ui::draw(f, &app)).expect("draw");
        let c3 = cpu_ms();
        wall.push(w0.elapsed().as_secs_f64() * 1e3);
        cpu.push(c3 - c0);
        let q = transport.queries().await - q0;
        queries.push(q);
        if k == usize::from(!history) as i64 {
            first_screen = Some(begin.elapsed().as_secs_f64());
        }
        if k > 0 {
            poll_sum += c1 - c0;
            update_sum += c2 - c1;
            draw_sum += c3 - c2;
        }
        let rows = rocetop::app::vm::overview::view(&app.ctx(rocetop::app::Tab::Overview)).rows;
        let ecn = rocetop::app::vm::congestion::view(&app.ctx(rocetop::app::Tab::Congestion)).rows;
        eprintln!(
            "refresh {k}: {:.0} ms wall, {:.0} ms CPU (poll {:.0}: HTTP, JSON, mapping; update {:.0}; draw {:.0}), {q} queries, {} overview rows, {} ECN rows, RSS {:.0} MB",
            wall[k as usize],
            cpu[k as usize],
            c1 - c0,
            c2 - c1,
            c3 - c2,
            rows.len(),
            ecn.len(),
            rss_mb()
        );
    }
    let server_cpu = (cpu_ms_of(&server_pid) - server_cpu0) / polls as f64;
    // The poll's parts: one more poll's raw answers, then the mapping of that text alone.
    now.store(t0 + polls * STEP_S * 1000, Ordering::SeqCst);
    let c0 = cpu_ms();
    let text = {
        use rocetop::collect::Transport as _;
        transport
            .run(&rocetop::collect::Request::PromQueries, p.timeout)
            .await
            .expect("answers")
    };
    let c1 = cpu_ms();
    let reps = 10;
    let mut samples = 0;
    for _ in 0..reps {
        samples = rocetop::parse::prom_api::parse(&text).samples.len();
    }
    let c2 = cpu_ms();
    eprintln!(
        "one poll's answers: {:.1} MB, {samples} samples; {:.0} ms CPU to fetch (HTTP + text), {:.1} ms to map (JSON + mapping)",
        text.len() as f64 / 1e6,
        c1 - c0,
        (c2 - c1) / reps as f64
    );
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let qmax = queries.iter().max().copied().unwrap_or(0);
    let qmin = queries.iter().min().copied().unwrap_or(0);
    let n = (polls - 1) as f64;
    println!(
        "fleet_bench nodes={nodes} first_screen_s={:.2} (1 poll with history, 2 without, + a drawn frame, step not waited) wall_ms_median={:.0} cpu_ms_median={:.0} cpu_ms_mean={:.1} (poll {:.1}, update {:.1}, draw {:.1}) rss_mb={:.0} queries_per_refresh={qmin}..{qmax} (the first adds detection) prometheus_cpu_ms_per_refresh={server_cpu:.0}",
        first_screen.unwrap_or(f64::NAN),
        med(&mut wall),
        med(&mut cpu),
        (poll_sum + update_sum + draw_sum) / n,
        poll_sum / n,
        update_sum / n,
        draw_sum / n,
        rss_mb()
    );
}
