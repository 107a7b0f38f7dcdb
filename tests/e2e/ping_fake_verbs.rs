//! The real verbs path (`ffi.rs`, rdma-sys's inline ops, the hand-written layouts) against the fake
//! `libibverbs.so.1` of `tests/fake-verbs/`, loaded through `LD_LIBRARY_PATH`: a pinger and a pingd
//! session in this process, over a loopback control connection, their QPs wired by the fake's
//! Unix datagram sockets. `scripts/fake-verbs.sh` builds the fake and the sysfs tree it reads and
//! runs this; elsewhere (the real libibverbs) it is a visible skip.
#![cfg(feature = "verbs")]

use crate::skip::{Lack, skip};
use rocetop::collect::ping::proto::Mode;
use rocetop::collect::ping::verbs::pinger::{Pinger, RealClock, TcpDialer};
use rocetop::collect::ping::verbs::{Device, Endpoint, Verbs, devices, serve};
use rocetop::collect::ping::{Link, Options, QpType, VerbsOptions, lock};
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

/// What one pinger/pingd session through the fake left behind.
struct Run {
    addr: String,
    served: Result<(), String>,
    lines: Vec<String>,
    notes: Vec<String>,
    rtts: Vec<u64>,
    summary: Option<rocetop::collect::ping::stats::Summary>,
    sent: u64,
    answered: u64,
    lost: u64,
    retransmitted: Option<u64>,
}

/// A pinger (options `mine`) and a pingd session (options `theirs`) over loopback for `secs`,
/// at 100 probes/s; `meanwhile` runs once the session is up (or after a second).
fn session(mine: VerbsOptions, theirs: VerbsOptions, secs: f64, meanwhile: impl FnOnce()) -> Run {
    // A trigger an earlier failed test left unconsumed would hit this session's first send.
    if let Ok(wire) = std::env::var("FAKE_VERBS_DIR") {
        for t in ["drop-next", "gid-change"] {
            let _ = std::fs::remove_file(format!("{wire}/{t}"));
        }
    }
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let theirs = Verbs(theirs);
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
    let dialer = TcpDialer {
        mode: match mine.qp_type {
            QpType::Rc => Mode::Rdma,
            QpType::Ud => Mode::RdmaUd,
        },
        ..TcpDialer::to(&addr)
    };
    let mut p = Pinger::new(
        Verbs(mine),
        dialer,
        RealClock(Instant::now()),
        Duration::from_millis(10),
        Duration::from_secs(1),
        &addr,
        link.clone(),
        stop.clone(),
    );
    let pinger = std::thread::spawn(move || p.run());
    let t0 = Instant::now();
    let end = t0 + Duration::from_secs_f64(secs);
    while t0.elapsed() < Duration::from_secs(1) && lock(&link, |l| l.window.answered) == 0 {
        std::thread::sleep(Duration::from_millis(10));
    }
    meanwhile();
    std::thread::sleep(end.saturating_duration_since(Instant::now()));
    stop.store(true, Ordering::Relaxed);
    pinger.join().expect("pinger");
    let (served, lines) = pingd.join().expect("pingd");
    lock(&link, |l| Run {
        addr: addr.clone(),
        served,
        lines,
        notes: l.notes.clone(),
        rtts: l.window.rtts(),
        summary: l.window.summary(),
        sent: l.window.sent,
        answered: l.window.answered,
        lost: l.window.lost,
        retransmitted: l.counts_retransmits.then_some(l.window.retransmitted),
    })
}

/// The fake's log (opens, closes, events, violations), if the script set one.
fn fake_log() -> String {
    std::env::var("FAKE_VERBS_LOG")
        .ok()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

fn log_count(line: &str) -> usize {
    fake_log().lines().filter(|l| *l == line).count()
}

fn no_violations() {
    let log = fake_log();
    assert!(!log.contains("VIOLATION"), "{log}");
}

/// A copy of the fake's sysfs tree under a new temporary root, every GID typed `ty` (None: as the
/// script wrote it); the fake reads GIDs from the script's tree, rocetop its types from this one.
fn tree_typed(sysfs: &str, ty: Option<&str>) -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tempdir");
    let ok = std::process::Command::new("cp")
        .args(["-a", &format!("{sysfs}/."), &d.path().display().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "copy the sysfs tree");
    let types = d
        .path()
        .join("class/infiniband/fakerxe0/ports/1/gid_attrs/types");
    if let Some(ty) = ty {
        for e in std::fs::read_dir(&types).expect("types") {
            std::fs::write(e.expect("entry").path(), format!("{ty}\n")).expect("type");
        }
    }
    d
}

fn opts_at(root: &str) -> VerbsOptions {
    VerbsOptions {
        sysfs_root: root.to_string(),
        ..VerbsOptions::default()
    }
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
    let opts = opts_at(&sysfs);
    let Run {
        addr,
        served,
        lines,
        notes,
        rtts,
        summary,
        sent,
        answered,
        lost,
        ..
    } = session(opts.clone(), opts, secs as f64, || {});
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
    // its own slot once the session was up. Counted, the first RTT would be the whole 40 ms; the
    // bound sits halfway, so a loaded machine's scheduling delay is not read as setup.
    assert!(
        rtts.first().is_some_and(|&r| r < 20_000_000),
        "setup counted as RTT: {first:?}"
    );
    // Every verbs object was destroyed children first (the fake refuses and logs otherwise).
    no_violations();
}

/// pingd opens each device once, however many sessions use it: one context and one PD, shared by
/// every endpoint, closed with the last of them.
#[test]
fn ten_sessions_on_one_device_open_it_once() {
    let Some(sysfs) = fake_sysfs("ten_sessions_on_one_device_open_it_once") else {
        return;
    };
    let (opens, closes) = (log_count("OPEN fakerxe0"), log_count("CLOSE fakerxe0"));
    let v = Verbs(opts_at(&sysfs));
    let ip = "127.0.0.1".parse().expect("ip");
    let eps: Vec<_> = (0..10).map(|_| v.open(ip).expect("open")).collect();
    let qpns: std::collections::BTreeSet<u32> = eps.iter().map(|e| e.info().qpn).collect();
    assert_eq!(qpns.len(), 10, "one QP per session");
    assert_eq!(log_count("OPEN fakerxe0") - opens, 1, "{}", fake_log());
    drop(eps);
    assert_eq!(log_count("CLOSE fakerxe0") - closes, 1, "{}", fake_log());
    // A later session opens it again (nothing is kept open past its last user).
    drop(v.open(ip).expect("open"));
    assert_eq!(log_count("OPEN fakerxe0") - opens, 2);
    no_violations();
}

/// A GID_CHANGE for an entry other than ours (an alias, a VLAN attaching) leaves the session up:
/// no rebuild, no probe lost. When our entry did change, the session is rebuilt.
#[test]
fn a_gid_change_elsewhere_leaves_the_session_alone() {
    let Some(sysfs) = fake_sysfs("a_gid_change_elsewhere_leaves_the_session_alone") else {
        return;
    };
    let wire = std::env::var("FAKE_VERBS_DIR").expect("FAKE_VERBS_DIR");
    let trigger = format!("{wire}/gid-change");
    let events = log_count("EVENT GID_CHANGE");
    let opts = opts_at(&sysfs);
    let r = session(opts.clone(), opts, 1.5, || {
        std::fs::write(&trigger, "").expect("trigger")
    });
    assert_eq!(log_count("EVENT GID_CHANGE") - events, 1, "the event came");
    assert!(r.answered > 100, "{:?}", r.notes);
    assert_eq!(r.lost, 0, "no rebuild: {:?}", r.notes);

    // Our entry (index 3, RoCE v2 127.0.0.1) now holds another address in the pinger's view.
    let changed = tree_typed(&sysfs, None);
    let gid3 = changed
        .path()
        .join("class/infiniband/fakerxe0/ports/1/gids/3");
    let root = changed.path().display().to_string();
    let r = session(opts_at(&root), opts_at(&sysfs), 1.5, || {
        std::fs::write(&gid3, "0000:0000:0000:0000:0000:ffff:0a00:0001\n").expect("gid");
        std::fs::write(&trigger, "").expect("trigger")
    });
    assert!(r.answered > 0, "{:?}", r.notes);
    assert!(r.lost > 0, "our entry changed: the session was torn down");
    no_violations();
}

/// Two ends with RoCE v1 GIDs only (a plain ConnectX-3) ping over v1.
#[test]
fn a_roce_v1_only_pair_pings_over_v1() {
    let Some(sysfs) = fake_sysfs("a_roce_v1_only_pair_pings_over_v1") else {
        return;
    };
    let v1 = tree_typed(&sysfs, Some("IB/RoCE v1"));
    let o = opts_at(&v1.path().display().to_string());
    let r = session(o.clone(), o, 1.0, || {});
    assert!(r.answered > 0, "{:?}", r.notes);
    assert!(
        r.notes.iter().any(|n| n.contains("(IB/RoCE v1 ")),
        "{:?}",
        r.notes
    );
    no_violations();
}

/// A v1-only end and a v2-only end are refused with the reason, not left in an RC retry loop.
#[test]
fn a_v1_v2_mix_is_refused_with_its_reason() {
    let Some(sysfs) = fake_sysfs("a_v1_v2_mix_is_refused_with_its_reason") else {
        return;
    };
    let v1 = tree_typed(&sysfs, Some("IB/RoCE v1"));
    let v2 = tree_typed(&sysfs, Some("RoCE v2"));
    let r = session(
        opts_at(&v1.path().display().to_string()),
        opts_at(&v2.path().display().to_string()),
        0.5,
        || {},
    );
    assert_eq!(r.answered, 0);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("RoCE versions differ") && n.contains("ConnectX-3")),
        "{:?}",
        r.notes
    );
    no_violations();
}

/// Under RC a frame lost on the wire is resent by the NIC after its ACK timeout (4.096 µs × 2^14
/// ≈ 67 ms): the probe comes back, late. It counts as retransmitted, not lost and not as an RTT.
#[test]
fn a_drop_under_rc_counts_as_retransmitted() {
    let Some(sysfs) = fake_sysfs("a_drop_under_rc_counts_as_retransmitted") else {
        return;
    };
    let wire = std::env::var("FAKE_VERBS_DIR").expect("FAKE_VERBS_DIR");
    let o = opts_at(&sysfs);
    let r = session(o.clone(), o, 1.5, || {
        std::fs::write(format!("{wire}/drop-next"), "").expect("drop")
    });
    println!(
        "one frame dropped under RC: sent {} answered {} lost {} retransmitted {:?}, max RTT {:.3} ms",
        r.sent,
        r.answered,
        r.lost,
        r.retransmitted,
        r.rtts.iter().max().copied().unwrap_or(0) as f64 / 1e6
    );
    assert_eq!(r.retransmitted, Some(1), "{:?}", r.notes);
    assert_eq!(r.lost, 0);
    // Every answer but the resent one is an RTT sample (the window holds the whole run).
    assert_eq!(r.rtts.len() as u64, r.answered - 1, "the resend is no RTT");
    no_violations();
}

/// Under UD (as ud_pingpong) nothing is resent: the same drop is a lost probe, and retransmissions
/// are not measured (absent, not 0).
#[test]
fn a_drop_under_ud_is_lost() {
    let Some(sysfs) = fake_sysfs("a_drop_under_ud_is_lost") else {
        return;
    };
    let wire = std::env::var("FAKE_VERBS_DIR").expect("FAKE_VERBS_DIR");
    let o = VerbsOptions {
        qp_type: QpType::Ud,
        ..opts_at(&sysfs)
    };
    let r = session(o.clone(), o, 1.5, || {
        std::fs::write(format!("{wire}/drop-next"), "").expect("drop")
    });
    println!(
        "one frame dropped under UD: sent {} answered {} lost {} retransmitted {:?}; {:?}",
        r.sent, r.answered, r.lost, r.retransmitted, r.notes
    );
    assert_eq!(r.served, Ok(()), "{:?}", r.lines);
    // Still the first session (no rebuild), answering after the loss.
    assert!(
        r.notes.iter().any(|n| n.contains("over UD")),
        "{:?}",
        r.notes
    );
    assert!(r.answered > 20, "{:?}", r.notes);
    assert_eq!(r.retransmitted, None);
    // The drop, and any slot the pinger's 1 s wait for it left past the deadline.
    assert!(r.lost >= 1 && r.lost < 10, "lost {}", r.lost);
    no_violations();
}

/// `device = "all"` through the fake with two devices (`FAKE_VERBS_DEVICES=2`, fakerxe1 holding
/// 127.0.0.2; the script's second run): the real pinger opens one session per rail, each bound
/// to its rail's address and pinned to its device, against the real pingd; both rails answer, each
/// section of the report names its device, and the parsed metrics carry it as a label.
#[test]
fn every_rail_pings_through_the_fake_with_two_devices() {
    use rocetop::collect::ping::PingTransport;
    use rocetop::collect::transport::Transport;
    let test = "every_rail_pings_through_the_fake_with_two_devices";
    let sysfs = match (devices(), std::env::var("FAKE_VERBS_SYSFS")) {
        (Ok(d), Ok(s)) if d == ["fakerxe0", "fakerxe1"] => s,
        _ => {
            skip(
                test,
                Lack::Machine,
                "not on the fake libibverbs with two devices: run scripts/fake-verbs.sh",
            );
            return;
        }
    };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let text = rt.block_on(async {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = l.local_addr().expect("addr").to_string();
        let pingd = rocetop::cmd::pingd::Options {
            listen: addr.clone(),
            verbs: opts_at(&sysfs),
            spin: Duration::from_millis(10),
        };
        tokio::spawn(rocetop::cmd::pingd::serve(l, Arc::new(pingd)));
        let mut o = Options::with_rate(100.0);
        o.verbs = VerbsOptions {
            every_rail: true,
            ..opts_at(&sysfs)
        };
        let t = PingTransport::new("peer", &addr, o);
        let req = rocetop::collect::ping::request("peer");
        t.run(&req, Duration::from_secs(3))
            .await
            .expect("first poll");
        tokio::time::sleep(Duration::from_secs(2)).await;
        t.run(&req, Duration::from_secs(3)).await.expect("report")
    });
    println!("{text}");
    let p = rocetop::parse::ping::parse(&text, "peer");
    assert_eq!(p.unknown_lines, 0, "{text}");
    for dev in ["fakerxe0", "fakerxe1"] {
        let answered = p.find(
            rocetop::metrics::names::PING_ANSWERED,
            &[("transport", "rdma"), ("device", dev)],
        );
        assert!(
            matches!(answered, Some(rocetop::metrics::Value::Counter(n)) if n > 50),
            "{dev}: {answered:?}\n{text}"
        );
    }
    assert!(
        text.contains("via fakerxe1 port 1 GID 3 (RoCE v2 ::ffff:127.0.0.2"),
        "{text}"
    );
    assert!(
        text.contains("via fakerxe0 port 1 GID 3 (RoCE v2 ::ffff:127.0.0.1"),
        "{text}"
    );
    no_violations();
}
