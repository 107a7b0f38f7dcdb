//! The real verbs path (`ffi.rs`, rdma-sys's inline ops, the hand-written layouts) against the fake
//! `libibverbs.so.1` of `tests/fake-verbs/`, loaded through `LD_LIBRARY_PATH`: a pinger and a pingd
//! session in this process, over a loopback control connection, their QPs wired by the fake's
//! Unix datagram sockets. `scripts/fake-verbs.sh` builds the fake and the sysfs tree it reads and
//! runs this; elsewhere (the real libibverbs) it is a visible skip.
#![cfg(feature = "verbs")]

use crate::skip::{Lack, skip};
use rocetop::collect::ping::verbs::pinger::{Pinger, RealClock, TcpDialer};
use rocetop::collect::ping::verbs::{Verbs, devices, serve};
use rocetop::collect::ping::{Link, Options, VerbsOptions, lock};
use std::io::Read;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The fake's sysfs tree, if this process runs on the fake library.
fn fake_sysfs(test: &str) -> Option<String> {
    let sysfs = std::env::var("FAKE_VERBS_SYSFS").ok();
    match (devices(), sysfs) {
        (Ok(d), Some(s)) if d == ["fakerxe0"] => Some(s),
        _ => {
            skip(
                test,
                Lack::Machine,
                "not on the fake libibverbs: run scripts/fake-verbs.sh",
            );
            None
        }
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

#[test]
fn the_real_ffi_pings_through_the_fake_libibverbs() {
    let Some(sysfs) = fake_sysfs("the_real_ffi_pings_through_the_fake_libibverbs") else {
        return;
    };
    let secs: u64 = std::env::var("FAKE_VERBS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let opts = VerbsOptions {
        sysfs_root: sysfs,
        ..VerbsOptions::default()
    };
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let theirs = Verbs(opts.clone());
    let pingd = std::thread::spawn(move || {
        let (mut c, _) = l.accept().expect("accept");
        let mut hello = [0u8; 8];
        c.read_exact(&mut hello).expect("hello");
        let lines = Mutex::new(Vec::new());
        let r = serve(c, &theirs, Duration::from_secs(1), &|l| {
            lines.lock().expect("lines").push(l)
        });
        (r, lines.into_inner().expect("lines"))
    });
    let stop = Arc::new(AtomicBool::new(false));
    let link = Arc::new(Mutex::new(Link::new(&Options::with_rate(100.0))));
    let mut p = Pinger::new(
        Verbs(opts),
        TcpDialer(addr.clone()),
        RealClock(Instant::now()),
        Duration::from_millis(10),
        Duration::from_secs(1),
        &addr,
        link.clone(),
        stop.clone(),
    );
    let pinger = std::thread::spawn(move || p.run());
    std::thread::sleep(Duration::from_secs(secs));
    stop.store(true, Ordering::Relaxed);
    pinger.join().expect("pinger");
    let (served, lines) = pingd.join().expect("pingd");
    let (notes, rtts, summary, sent, answered, lost) = lock(&link, |l| {
        (
            l.notes.clone(),
            l.window.rtts(),
            l.window.summary(),
            l.window.sent,
            l.window.answered,
            l.window.lost,
        )
    });
    println!("pinger: {}", notes.join("; "));
    for l in &lines {
        println!("pingd: {l}");
    }
    let first: Vec<String> = rtts.iter().take(20).map(|&r| ms(r)).collect();
    println!("first 20 RTTs: {}", first.join(" "));
    if let Some(s) = &summary {
        println!(
            "Latency row: peer {addr} transport rdma min {} p50 {} p99 {} p99.9 {} max {} \
             loss {lost}/{sent}",
            ms(s.min_ns),
            ms(s.p50_ns),
            ms(s.p99_ns),
            ms(s.p999_ns),
            ms(s.max_ns)
        );
    }
    assert_eq!(served, Ok(()), "pingd's session ended cleanly: {lines:?}");
    assert!(answered > 0, "no RDMA probe completed: {notes:?}");
    assert_eq!(sent, answered + lost);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("via fakerxe0 port 1 GID 3 (RoCE v2")),
        "{notes:?}"
    );
    // The 40 ms of open and RTR (the fake's 20 ms each) are in no probe: the first one left in
    // its own slot once the session was up.
    assert!(
        rtts.first().is_some_and(|&r| r < 10_000_000),
        "setup counted as RTT: {first:?}"
    );
    // Every verbs object was destroyed children first (the fake refuses and logs otherwise).
    if let Ok(log) = std::env::var("FAKE_VERBS_LOG") {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        assert!(!text.contains("VIOLATION"), "{text}");
    }
}
