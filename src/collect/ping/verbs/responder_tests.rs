//! pingd's RDMA session over a real loopback control connection, with fake endpoints; and the whole
//! pinger ↔ pingd handshake (Hello, Period, Info) over real TCP.

use super::super::fake::FakeDevice;
use super::super::pinger::{Pinger, RealClock, TcpDialer};
use super::*;
use crate::collect::ping::gid::Versions;
use crate::collect::ping::proto::{HELLO_LEN, Hello, Mode, Probe};
use crate::collect::ping::{Link, Options, lock};
use std::net::TcpListener;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type Served = JoinHandle<(Result<(), String>, Vec<String>)>;

/// pingd's session on one accepted connection (the hello already read, as pingd's accept loop
/// does), on its own thread; and the pinger's end of the connection.
fn pingd(dev: FakeDevice, bound: Duration) -> (Served, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr");
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().expect("accept");
        let mut h = [0u8; HELLO_LEN];
        s.read_exact(&mut h).expect("hello");
        let lines = Mutex::new(Vec::new());
        let r = serve(s, &dev, bound, &|l| lines.lock().expect("lines").push(l));
        (r, lines.into_inner().expect("lines"))
    });
    let mut c = TcpStream::connect(addr).expect("connect");
    c.write_all(&Hello { mode: Mode::Rdma }.encode())
        .expect("hello");
    (t, c)
}

fn request(c: &mut TcpStream, period: Option<u64>) -> Msg {
    let mut b = Vec::new();
    if let Some(p) = period {
        b.extend(Msg::Period(p).encode().expect("enc"));
    }
    let me = ConnInfo {
        qpn: 7,
        psn: 1,
        lid: 0,
        gid: [0; 16],
        mtu: 3,
        versions: Versions { v1: true, v2: true },
    };
    b.extend(Msg::Info(me).encode().expect("enc"));
    c.write_all(&b).expect("write");
    Msg::read_from(c).expect("answer")
}

fn stop() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

#[test]
fn probes_are_echoed_until_the_pinger_leaves() {
    let (mine, theirs) = FakeDevice::pair(stop());
    let (t, mut c) = pingd(theirs.clone(), Duration::from_secs(1));
    assert!(matches!(request(&mut c, Some(100_000_000)), Msg::Info(i) if i.qpn == 0x101));
    let p = Probe {
        seq: 9,
        intended_ns: 5,
        sent_ns: 6,
    }
    .encode();
    mine.tx.lock().expect("q").push_back(p);
    let mut spins = 0u64;
    while mine.rx.lock().expect("q").is_empty() && spins < 100_000_000 {
        spins += 1;
        std::thread::yield_now();
    }
    assert_eq!(
        mine.rx.lock().expect("q").pop_front(),
        Some(p),
        "echoed unchanged"
    );
    drop(c);
    let (r, lines) = t.join().expect("pingd");
    assert_eq!(r, Ok(()));
    assert_eq!(
        lines,
        vec![
            "RDMA via fake0 port 1 GID 3 (RoCE v2 ::ffff:127.0.0.1 on lo); probe period 100ms: \
             sleeps until 300µs before each probe is due (about 0.3 % of a core)"
        ]
    );
    let src = theirs.script.lock().expect("s").sources.clone();
    assert_eq!(
        src,
        vec!["127.0.0.1".parse::<std::net::IpAddr>().expect("ip")],
        "the rail the connection came on"
    );
}

/// A pinger that sends a `Period` every second and never its `Info` is cut off HANDSHAKE after
/// the hello (each message on time had kept it for as long as it liked).
#[test]
fn a_handshake_that_never_ends_is_cut_off() {
    let (_, theirs) = FakeDevice::pair(stop());
    let (t, mut c) = pingd(theirs, Duration::from_secs(1));
    let t0 = Instant::now();
    let period = Msg::Period(100_000_000).encode().expect("enc");
    while !t.is_finished() && t0.elapsed() < HANDSHAKE * 3 {
        let _ = c.write_all(&period);
        std::thread::sleep(Duration::from_millis(500));
    }
    let (r, _) = t.join().expect("pingd");
    let took = t0.elapsed();
    assert!(r.is_err(), "{r:?}");
    assert!(took < HANDSHAKE * 2, "the handshake went on for {took:?}");
}

#[test]
fn an_rtr_failure_is_refused_with_its_reason() {
    let (_, theirs) = FakeDevice::pair(stop());
    theirs.script.lock().expect("s").fail_connect =
        Some("QP to RTR: Invalid argument (os error 22)".into());
    let (t, mut c) = pingd(theirs, Duration::from_secs(1));
    let why = "pingd fake0 port 1 GID 3 (RoCE v2 ::ffff:127.0.0.1 on lo): \
               QP to RTR: Invalid argument (os error 22)";
    assert_eq!(request(&mut c, None), Msg::Refuse(why.into()));
    assert_eq!(t.join().expect("pingd").0, Err(why.into()));
}

#[test]
fn a_device_that_cannot_open_is_refused_with_its_reason() {
    let (_, theirs) = FakeDevice::pair(stop());
    theirs.script.lock().expect("s").fail_open = vec![super::super::UNAVAILABLE.into()];
    let (t, mut c) = pingd(theirs, Duration::from_secs(1));
    assert_eq!(
        request(&mut c, Some(1)),
        Msg::Refuse(super::super::UNAVAILABLE.into())
    );
    assert!(t.join().expect("pingd").0.is_err());
}

#[test]
fn an_error_completion_ends_the_session() {
    let (_, theirs) = FakeDevice::pair(stop());
    theirs.script.lock().expect("s").fail_poll_after = Some(0);
    let (t, mut c) = pingd(theirs, Duration::ZERO);
    assert!(matches!(request(&mut c, None), Msg::Info(_)));
    let (r, lines) = t.join().expect("pingd");
    assert_eq!(
        r,
        Err("completion failed: transport retry counter exceeded".into())
    );
    assert!(
        lines[0].ends_with("probe period unknown: polls every 50 µs (replies up to ~0.1 ms late)"),
        "{lines:?}"
    );
}

#[test]
fn the_session_line_says_what_polling_costs() {
    let p = |ms| Some(Duration::from_millis(ms));
    let s = Duration::from_secs(1);
    assert!(
        session_line("d", p(2000), s).ends_with(
            "probe period 2s: sleeps until 300µs before each probe is due (about 0.0 % of a core)"
        ),
        "{}",
        session_line("d", p(2000), s)
    );
    assert!(
        session_line("d", Some(Duration::from_micros(100)), s)
            .ends_with("busy-polls 125µs after each probe (a whole core while the pinger runs)")
    );
    assert!(session_line("d", None, s).ends_with(
        "probe period unknown: busy-polls 1s after each probe (the pinger did not say its period)"
    ));
}

const MS: Duration = Duration::from_millis(1);

#[test]
fn pingd_sleeps_until_just_before_the_next_probe_is_due() {
    let t = Instant::now();
    let ns = |d: Duration| d.as_nanos() as u64;
    let mut pace = Pace::new(Some(100 * MS), Duration::from_secs(1), t);
    assert_eq!(
        pace.wait(t + 50 * MS),
        Wait::Spin,
        "before the first probe: as before"
    );
    // Slot 0 (pinger time 1 s) sent 2 ms late and found at t: slot 1 comes at t + 98 ms.
    pace.arrived(t, ns(1000 * MS), ns(1002 * MS));
    assert_eq!(
        pace.wait(t + MS),
        Wait::Sleep(CHECK),
        "long sleeps are cut to CHECK"
    );
    let due = t + 98 * MS;
    assert_eq!(pace.wait(due - GUARD - MS), Wait::Sleep(MS));
    assert_eq!(pace.wait(due - GUARD), Wait::Spin);
    assert_eq!(
        pace.wait(due + GUARD),
        Wait::Spin,
        "spins GUARD past it too"
    );
    // It did not come: it may still, off its slot (a retransmission), so poll until the next.
    assert_eq!(pace.wait(due + GUARD + MS), Wait::Poll);
    assert_eq!(pace.wait(due + 100 * MS - GUARD - MS), Wait::Poll);
    assert_eq!(
        pace.wait(due + 100 * MS - GUARD),
        Wait::Spin,
        "the next slot's probe"
    );
    assert_eq!(pace.wait(due + 350 * MS), Wait::Poll, "three slots missed");
    // Slot 5 sent on time but found 5 ms late (pingd overslept): slot 6 is still expected on
    // its own time, not 5 ms late; a late find never carries over.
    let slot5 = t + 498 * MS;
    pace.arrived(slot5 + 5 * MS, ns(1500 * MS), ns(1500 * MS));
    assert_eq!(pace.wait(slot5 + 6 * MS), Wait::Sleep(CHECK));
    assert_eq!(pace.wait(slot5 + 100 * MS - GUARD - MS), Wait::Sleep(MS));
    assert_eq!(pace.wait(slot5 + 100 * MS - GUARD), Wait::Spin);
}

#[test]
fn fast_pingers_and_spin_zero_keep_their_old_polling() {
    let t = Instant::now();
    let mut fast = Pace::new(Some(MS), Duration::from_secs(1), t);
    fast.arrived(t, 0, 0);
    assert_eq!(fast.wait(t + MS / 2), Wait::Spin, "1 ms: always spun");
    assert_eq!(
        fast.wait(t + 2 * MS),
        Wait::Poll,
        "1.25 periods after the last probe"
    );
    let mut never = Pace::new(Some(100 * MS), Duration::ZERO, t);
    never.arrived(t, 0, 0);
    assert_eq!(never.wait(t + 100 * MS), Wait::Poll, "--spin 0");
    let mut unknown = Pace::new(None, Duration::from_secs(1), t);
    unknown.arrived(t, 0, 0);
    assert_eq!(unknown.wait(t + 900 * MS), Wait::Spin);
    assert_eq!(unknown.wait(t + 1100 * MS), Wait::Poll);
}

#[test]
fn pinger_and_pingd_meet_over_tcp_and_probes_come_back() {
    let s = stop();
    let (mine, theirs) = FakeDevice::pair(s.clone());
    mine.script.lock().expect("s").stop_after = Some(5);
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let t = std::thread::spawn(move || {
        // pingd's accept loop reads the hello, then hands the connection over.
        let (mut c, _) = l.accept().expect("accept");
        let mut h = [0u8; HELLO_LEN];
        c.read_exact(&mut h).expect("hello");
        assert_eq!(Hello::decode(&h), Ok(Hello { mode: Mode::Rdma }));
        let lines = Mutex::new(Vec::new());
        let r = serve(c, &theirs, Duration::from_secs(1), &|l| {
            lines.lock().expect("l").push(l)
        });
        (r, lines.into_inner().expect("l"))
    });
    let link = Arc::new(Mutex::new(Link::new(&Options::with_rate(100.0))));
    Pinger::new(
        mine,
        TcpDialer::to(&addr),
        RealClock(std::time::Instant::now()),
        Duration::from_millis(10),
        Duration::from_secs(2),
        &addr,
        link.clone(),
        s,
    )
    .run();
    let (r, lines) = t.join().expect("pingd");
    assert_eq!(r, Ok(()), "the pinger's leaving ends the session");
    assert!(
        lines[0].contains("probe period 10ms: sleeps until 300µs before each probe is due"),
        "{lines:?}"
    );
    let (sent, answered, lost) = lock(&link, |l| (l.window.sent, l.window.answered, l.window.lost));
    assert_eq!(answered, 5, "every posted probe came back");
    assert_eq!(sent, answered + lost);
}

/// A pinger (its port's RoCE versions `mine`) and pingd (`theirs`) over loopback TCP; pingd serves
/// one session, then the pinger is stopped. pingd's result and lines, the pinger's notes and
/// (sent, answered).
fn meet(mine: Versions, theirs: Versions) -> (Result<(), String>, Vec<String>, Vec<String>, u64) {
    let s = stop();
    let (a, b) = FakeDevice::pair(s.clone());
    a.script.lock().expect("s").versions = Some(mine);
    b.script.lock().expect("s").versions = Some(theirs);
    a.script.lock().expect("s").stop_after = Some(3);
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let t = std::thread::spawn(move || {
        let (mut c, _) = l.accept().expect("accept");
        let mut h = [0u8; HELLO_LEN];
        c.read_exact(&mut h).expect("hello");
        let lines = Mutex::new(Vec::new());
        let r = serve(c, &b, Duration::from_millis(20), &|l| {
            lines.lock().expect("l").push(l)
        });
        (r, lines.into_inner().expect("l"))
    });
    let link = Arc::new(Mutex::new(Link::new(&Options::with_rate(100.0))));
    let mut p = Pinger::new(
        a,
        TcpDialer::to(&addr),
        RealClock(std::time::Instant::now()),
        Duration::from_millis(10),
        Duration::from_secs(2),
        &addr,
        link.clone(),
        s.clone(),
    );
    let pinger = std::thread::spawn(move || p.run());
    let (r, lines) = t.join().expect("pingd");
    // A refused pinger waits to retry: it is stopped once pingd's one session is over.
    s.store(true, std::sync::atomic::Ordering::Relaxed);
    pinger.join().expect("pinger");
    let (notes, answered) = lock(&link, |l| (l.notes.clone(), l.window.answered));
    (r, lines, notes, answered)
}

#[test]
fn a_roce_v1_only_peer_is_pinged_over_v1() {
    let both = Versions { v1: true, v2: true };
    let v1 = Versions::only(crate::collect::ping::gid::Roce::V1);
    let (r, lines, notes, answered) = meet(both, v1);
    assert_eq!(r, Ok(()));
    assert_eq!(answered, 3);
    assert!(
        lines[0].starts_with("RDMA via fake0 port 1 GID 2 (IB/RoCE v1 ::ffff:127.0.0.1 on lo);"),
        "{lines:?}"
    );
    assert!(
        notes[0].contains("via fake0 port 1 GID 2 (IB/RoCE v1 ::ffff:127.0.0.1 on lo)"),
        "the pinger switched to its v1 index too: {notes:?}"
    );
    let (_, lines, _, answered) = meet(both, both);
    assert_eq!(answered, 3);
    assert!(lines[0].contains("GID 3 (RoCE v2"), "v2 when both have it");
}

#[test]
fn a_v1_v2_mix_is_refused_with_its_reason() {
    use crate::collect::ping::gid::Roce;
    let (r, _, notes, answered) = meet(Versions::only(Roce::V2), Versions::only(Roce::V1));
    let why = "pingd fake0 port 1 GID 2 (IB/RoCE v1 ::ffff:127.0.0.1 on lo): RoCE versions \
               differ: this end has RoCE v1 only, the peer RoCE v2 only; both ends must send the \
               same (a ConnectX-3 has RoCE v2 GIDs only with the ROCE_V1_V2 firmware capability)";
    assert_eq!(r, Err(why.into()));
    assert_eq!(answered, 0);
    assert_eq!(
        notes,
        vec![format!(
            "RDMA ping to {}: peer says: {why}",
            notes[0]
                .strip_prefix("RDMA ping to ")
                .and_then(|n| n.split(": ").next())
                .unwrap_or("?")
        )],
        "the pinger shows pingd's reason, not a retry loop"
    );
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_THREAD_CPUTIME_ID is always available on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// 50 pingers at 10/s, each with its pingd session over loopback TCP (fake endpoints, real clocks
/// and threads): what each session costs pingd, and that none is starved. Spinning 1.25 periods
/// after each probe, each session took a whole core (50 cores asked of this machine's few).
#[test]
fn fifty_sessions_at_ten_per_second_cost_pingd_little_and_none_starves() {
    const N: usize = 50;
    const SECS: u64 = 3;
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let s = stop();
    let mut pairs = Vec::new();
    for _ in 0..N {
        let (a, b) = FakeDevice::pair(s.clone());
        pairs.push((a, b));
    }
    let theirs: Vec<FakeDevice> = pairs.iter().map(|p| p.1.clone()).collect();
    // pingd: one thread per session, as pingd's blocking pool runs them; each reports its CPU time.
    let served = std::thread::spawn(move || {
        let mut threads = Vec::new();
        for dev in theirs {
            let (mut c, _) = l.accept().expect("accept");
            threads.push(std::thread::spawn(move || {
                let mut h = [0u8; HELLO_LEN];
                c.read_exact(&mut h).expect("hello");
                let started = thread_cpu();
                let t0 = Instant::now();
                let r = serve(c, &dev, Duration::from_secs(1), &|_| {});
                (r, thread_cpu() - started, t0.elapsed())
            }));
        }
        threads
            .into_iter()
            .map(|t| t.join().expect("session"))
            .collect::<Vec<_>>()
    });
    let mut pingers = Vec::new();
    let mut links = Vec::new();
    for (a, _) in pairs {
        let link = Arc::new(Mutex::new(Link::new(&Options::with_rate(10.0))));
        links.push(link.clone());
        let mut p = Pinger::new(
            a,
            TcpDialer::to(&addr),
            RealClock(Instant::now()),
            Duration::from_millis(100),
            Duration::from_secs(1),
            &addr,
            link,
            s.clone(),
        );
        pingers.push(std::thread::spawn(move || p.run()));
    }
    std::thread::sleep(Duration::from_secs(SECS));
    s.store(true, std::sync::atomic::Ordering::Relaxed);
    for p in pingers {
        p.join().expect("pinger");
    }
    let sessions = served.join().expect("pingd");
    let cpu: Duration = sessions.iter().map(|s| s.1).sum();
    let wall: Duration = sessions.iter().map(|s| s.2).sum();
    let share = cpu.as_secs_f64() / wall.as_secs_f64();
    let answered: Vec<u64> = links
        .iter()
        .map(|l| lock(l, |l| l.window.answered))
        .collect();
    crate::safe::eprintln(&format!(
        "pingd: {N} sessions at 10/s for {SECS} s: {:.3} % of a core per session \
         ({cpu:?} CPU in {wall:?} of sessions); answered per session min {} max {}",
        100.0 * share,
        answered.iter().min().unwrap_or(&0),
        answered.iter().max().unwrap_or(&0),
    ));
    assert!(sessions.iter().all(|s| s.0.is_ok()), "{sessions:?}");
    // About 25 slots after each 80 ms setup: none starved.
    assert!(
        answered.iter().all(|&n| n >= 20),
        "a session was starved: {answered:?}"
    );
    assert!(share < 0.02, "{:.2} % of a core per session", 100.0 * share);
}
