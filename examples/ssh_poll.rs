//! Poll N hosts over rocetop's SSH transport and print wall and CPU time per refresh (used by
//! bench/ssh_refresh.sh). Loopback only in the bench; any host given here is contacted.
//!
//! ssh_poll --user U --key FILE --known-hosts FILE --polls N --cmd CMD PORT...   (host 127.0.0.1)

use rocetop::collect::ssh::{SshTarget, SshTransport};
use rocetop::collect::{Request, Transport};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// This process's user+system CPU time, from /proc/self/stat (clock ticks of 10 ms).
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    // After the comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
    // utime stime.
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
    let ticks = num(11) + num(12);
    Duration::from_millis(ticks * 10)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let (mut user, mut key, mut kh, mut polls, mut cmd) = (
        String::from("root"),
        PathBuf::new(),
        PathBuf::new(),
        50usize,
        String::from("true"),
    );
    let mut ports: Vec<u16> = Vec::new();
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--user" => user = val()?,
            "--key" => key = PathBuf::from(val()?),
            "--known-hosts" => kh = PathBuf::from(val()?),
            "--polls" => polls = val()?.parse().map_err(|e| format!("--polls: {e}"))?,
            "--cmd" => cmd = val()?,
            p => ports.push(p.parse().map_err(|e| format!("port {p}: {e}"))?),
        }
    }
    let transports: Vec<SshTransport> = ports
        .iter()
        .map(|&p| {
            let mut t = SshTarget::new(&format!("h{p}"), "127.0.0.1", p, &user);
            t.identity_files = vec![key.clone()];
            t.known_hosts = kh.clone();
            t.agent_socket = None;
            SshTransport::new(t)
        })
        .collect();
    let (c0, t0) = (cpu(), Instant::now());
    for r in futures::future::join_all(transports.iter().map(|t| t.connect())).await {
        r.map_err(|e| e.to_string())?;
    }
    let (connect_wall, connect_cpu) = (t0.elapsed(), cpu() - c0);
    let req = Request::Cli(cmd);
    let timeout = Duration::from_secs(10);
    let (c0, t0) = (cpu(), Instant::now());
    for _ in 0..polls {
        for r in futures::future::join_all(transports.iter().map(|t| t.run(&req, timeout))).await {
            r.map_err(|e| e.to_string())?;
        }
    }
    let (wall, cpu_used) = (t0.elapsed(), cpu() - c0);
    let per = |d: Duration| d.as_secs_f64() * 1000.0 / polls.max(1) as f64;
    println!(
        "rocetop {} hosts {polls} refreshes: wall {:.2} ms/refresh cpu {:.2} ms/refresh (connect all: wall {:.0} ms cpu {:.0} ms)",
        transports.len(),
        per(wall),
        per(cpu_used),
        connect_wall.as_secs_f64() * 1000.0,
        connect_cpu.as_secs_f64() * 1000.0
    );
    Ok(())
}
