//! The pinger loop on the fake device and a virtual clock: every count below is exact.

use super::super::fake::{Ev, FakeClock, FakeDevice, FakeDialer, POLL_NS, SETUP_NS, SentLost};
use super::*;
use crate::collect::ping::Options;

const MS: u64 = 1_000_000;

struct Run {
    link: Arc<Mutex<Link>>,
    dev: FakeDevice,
    dialer: FakeDialer,
    clock: FakeClock,
    stop: Arc<AtomicBool>,
}

/// 10 probes/s, 50 ms deadline, an echoing peer; the script is set before `go`.
fn setup() -> Run {
    let link = Arc::new(Mutex::new(Link::new(&Options::with_rate(10.0))));
    let clock = FakeClock::default();
    let stop = Arc::new(AtomicBool::new(false));
    let dialer = FakeDialer {
        link: Some(link.clone()),
        ..FakeDialer::default()
    };
    Run {
        dev: FakeDevice::echo(Some(clock.clone()), stop.clone()),
        link,
        dialer,
        clock,
        stop,
    }
}

/// The link's probes sent, answered and lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Totals {
    sent: u64,
    answered: u64,
    lost: u64,
}

/// Totals of `sent`, `answered` and `lost`, for the tables of expectations.
fn totals(sent: u64, answered: u64, lost: u64) -> Totals {
    Totals {
        sent,
        answered,
        lost,
    }
}

impl Run {
    fn pinger(&self) -> Pinger<FakeDevice, FakeDialer, FakeClock> {
        self.pinger_every(Duration::from_millis(100))
    }

    fn pinger_every(&self, period: Duration) -> Pinger<FakeDevice, FakeDialer, FakeClock> {
        Pinger::new(
            self.dev.clone(),
            self.dialer.clone(),
            self.clock.clone(),
            period,
            Duration::from_millis(50),
            "peer:18515",
            self.link.clone(),
            self.stop.clone(),
        )
    }

    fn go(&self) {
        self.pinger().run();
    }

    fn totals(&self) -> Totals {
        lock(&self.link, |l| Totals {
            sent: l.window.sent,
            answered: l.window.answered,
            lost: l.window.lost,
        })
    }

    fn script<T>(&self, f: impl FnOnce(&mut super::super::fake::Script) -> T) -> T {
        f(&mut self.dev.script.lock().expect("script"))
    }

    /// Why each rebuilt session's predecessor ended.
    fn reasons(&self) -> Vec<Vec<String>> {
        self.dialer.notes_at_dial.lock().expect("notes").clone()
    }
}

#[test]
fn the_send_time_is_read_right_before_the_post_and_rtts_are_exact() {
    let mut r = setup();
    r.clock.tick = true;
    r.dev.clock = Some(r.clock.clone());
    r.script(|s| s.stop_after = Some(3));
    r.go();
    assert_eq!(r.totals(), totals(3, 3, 0));
    let log = r.clock.log.lock().expect("log").clone();
    let sends: Vec<usize> = (0..log.len())
        .filter(|&i| matches!(log[i], Ev::Send { .. }))
        .collect();
    assert_eq!(sends.len(), 3);
    for (k, &i) in sends.iter().enumerate() {
        let Ev::Send { seq, sent_ns: sent } = log[i] else {
            unreachable!()
        };
        assert_eq!(seq, k as u64);
        assert_eq!(
            log[i - 1],
            Ev::Now(sent),
            "the last clock read before the post is the stamp the probe carries"
        );
        // Every read moves the clock 1 ns: one read (the lateness check) between slot and stamp.
        // The session took 40 ms to set up (open, RTR/RTS): slot 0 passed then and was never sent;
        // the first probe leaves in slot 1.
        assert_eq!(
            sent,
            (k as u64 + 1) * 100 * MS + 1,
            "each probe leaves in its slot, the first one too"
        );
    }
    let s = lock(&r.link, |l| l.window.summary()).expect("answers");
    assert_eq!(
        (s.min_ns, s.max_ns),
        (POLL_NS + 1, POLL_NS + 1),
        "RTT = the echo's delay (and the 1 ns of the stamp's own read)"
    );
    let notes = lock(&r.link, |l| l.notes.clone());
    assert_eq!(
        notes,
        vec![
            "RDMA to peer:18515 via fake0 port 1 GID 3 (RoCE v2 ::ffff:127.0.0.1 on lo) \
             (set up in 40.0 ms)"
        ]
    );
    assert_eq!(
        r.script(|s| s.sources.clone()),
        vec!["10.0.0.1".parse::<IpAddr>().expect("ip")]
    );
}

#[test]
fn slots_while_the_peer_or_device_is_unreachable_are_lost() {
    let r = setup();
    *r.dialer.fails.lock().expect("fails") = 1;
    r.script(|s| {
        s.fail_open = vec!["no active port has a RoCE v2 GID ::ffff:10.0.0.1".into()];
        s.stop_after = Some(2);
    });
    r.go();
    // Dial fails at 0 s, the device open at 1 s: slots 0..19 pass unsent; the session built at 2 s
    // is up at 2.04 s, so slot 20 passed while it was built (lost); slots 21, 22 answered.
    assert_eq!(r.totals(), totals(23, 2, 21));
    let counts = r.dialer.counts_at_dial.lock().expect("counts").clone();
    assert_eq!(
        counts,
        [(0, 0), (10, 10), (20, 20)].map(|(sent, lost)| SentLost { sent, lost }),
        "lost while down, not only once back up"
    );
    let why = r.reasons();
    assert_eq!(why.len(), 3);
    assert_eq!(
        why[1],
        vec!["RDMA ping to peer:18515: no answer from peer: connection refused"]
    );
    assert_eq!(
        why[2],
        vec!["RDMA ping to peer:18515: no active port has a RoCE v2 GID ::ffff:10.0.0.1"]
    );
}

#[test]
fn an_error_completion_tears_the_session_down_and_it_is_rebuilt() {
    let r = setup();
    r.script(|s| {
        s.fail_poll_after = Some(3);
        s.stop_after = Some(6);
    });
    r.go();
    // Slots 0, 1 answered; 2 in flight when the error came (lost); 3..12 pass during the 1 s retry;
    // 13, 14, 15 answered on the new session.
    assert_eq!(r.totals(), totals(16, 5, 11));
    assert_eq!(r.script(|s| s.opens), 2);
    assert_eq!(
        r.reasons()[1],
        vec!["RDMA ping to peer:18515: completion failed: transport retry counter exceeded"]
    );
}

#[test]
fn a_cq_that_stays_empty_gets_the_session_rebuilt() {
    let r = setup();
    r.script(|s| {
        s.blackhole_opens = 1;
        s.stop_after = Some(STALL_PROBES as u64 + 2);
    });
    r.go();
    // Slots 0..4 posted and never answered; the rebuild waits 1 s from slot 4's deadline (450 ms):
    // slots 5..14 pass; 15 and 16 answered on the new session.
    assert_eq!(r.totals(), totals(17, 2, 15));
    assert_eq!(r.script(|s| s.opens), 2);
    let why = &r.reasons()[1][0];
    assert!(
        why.contains("5 probes in a row unanswered although posted (device reset?)"),
        "{why}"
    );
}

#[test]
fn a_device_event_ends_the_session() {
    let r = setup();
    r.script(|s| {
        s.event = Some("fake0: local catastrophic error".into());
        s.stop_after = Some(1);
    });
    r.go();
    assert_eq!(r.script(|s| s.opens), 2);
    assert_eq!(
        r.reasons()[1],
        vec!["RDMA ping to peer:18515: device event fake0: local catastrophic error"]
    );
}

#[test]
fn a_held_report_lock_never_holds_a_probe_back() {
    let r = setup();
    r.script(|s| s.stop_after = Some(1_000_000));
    let mut p = r.pinger();
    let t = std::thread::spawn(move || p.run());
    let sends = || r.script(|s| s.sends);
    // Wait for the session, then hold the link as a slow report would.
    while lock(&r.link, |l| l.status != Status::Up) {
        std::thread::yield_now();
    }
    let held = r.link.lock().expect("link");
    let before = sends();
    let mut spins = 0u64;
    while sends() < before + 20 && spins < 50_000_000 {
        spins += 1;
        std::thread::yield_now();
    }
    assert!(
        sends() >= before + 20,
        "probes kept leaving while the report held the link"
    );
    drop(held);
    r.stop.store(true, Ordering::Relaxed);
    t.join().expect("pinger");
    let Totals {
        sent,
        answered,
        lost,
    } = r.totals();
    assert_eq!(sent, sends(), "the tally reached the link once it was free");
    assert_eq!((answered, lost), (sent, 0));
}

/// At 1000/s a 40 ms setup spans 40 slots. Sent late and timed from their slots they recorded
/// 40 ms, 39 ms, ... on a fabric whose RTT is 10 µs.
#[test]
fn the_first_sessions_setup_is_neither_rtt_nor_loss() {
    let r = setup();
    r.script(|s| s.stop_after = Some(100));
    r.pinger_every(Duration::from_millis(1)).run();
    let skipped = 2 * SETUP_NS / MS;
    assert_eq!(skipped, 40);
    assert_eq!(
        r.totals(),
        totals(100, 100, 0),
        "the setup's slots were never due"
    );
    let s = lock(&r.link, |l| l.window.summary()).expect("answers");
    assert_eq!(
        (s.min_ns, s.max_ns),
        (POLL_NS, POLL_NS),
        "no setup in any RTT"
    );
    let first = r
        .clock
        .log
        .lock()
        .expect("log")
        .iter()
        .find(|e| matches!(e, Ev::Send { .. }))
        .cloned();
    assert_eq!(
        first,
        Some(Ev::Send {
            seq: 0,
            sent_ns: skipped * MS
        }),
        "the first probe leaves in slot 40"
    );
}

/// A rebuild's setup is time the peer was unreachable: its slots count as lost, none is sent late.
#[test]
fn a_rebuilds_setup_counts_lost_and_is_never_rtt() {
    let r = setup();
    r.script(|s| {
        s.fail_poll_after = Some(10);
        s.stop_after = Some(20);
    });
    r.pinger_every(Duration::from_millis(1)).run();
    // Session 1 up at 40 ms: slots 40..48 answered, 49 in flight when the completion failed (lost,
    // at 49.01 ms). Retry until 1049.01 ms: slots 50..1049 lost. Session 2 up at 1089.01 ms: slots
    // 1050..1089 passed while it was built (lost), 1090..1099 answered.
    let Totals {
        sent,
        answered,
        lost,
    } = r.totals();
    assert_eq!(answered, 19);
    assert_eq!(lost, 1 + 1000 + 40);
    assert_eq!(sent, answered + lost);
    let s = lock(&r.link, |l| l.window.summary()).expect("answers");
    assert_eq!(
        (s.min_ns, s.max_ns),
        (POLL_NS, POLL_NS),
        "no setup in any RTT"
    );
}

/// `source` binds the control connection (the rail of a multi-rail node): pingd sees that address,
/// and the session's device and GID follow it. An address this host lacks is named as such.
#[test]
fn the_control_connection_leaves_from_the_source_address() {
    use super::super::pinger::{Dialer, TcpDialer};
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = l.local_addr().expect("addr").to_string();
    let src: std::net::IpAddr = "127.0.0.2".parse().expect("ip");
    let d = TcpDialer {
        source: Some(src),
        ..TcpDialer::to(&addr)
    };
    let (_c, local) = d.dial().expect("dial");
    let (_s, peer) = l.accept().expect("accept");
    assert_eq!((local, peer.ip()), (src, src));
    let (_c, local) = TcpDialer::to(&addr).dial().expect("dial");
    assert_eq!(local, "127.0.0.1".parse::<std::net::IpAddr>().expect("ip"));
    let absent = TcpDialer {
        source: Some("192.0.2.1".parse().expect("ip")),
        ..TcpDialer::to(&addr)
    };
    assert_eq!(
        absent.dial().err(),
        Some("source 192.0.2.1 is not an address of this host".to_string())
    );
}
