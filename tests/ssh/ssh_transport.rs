//! The SSH transport against real OpenSSH sshd processes on 127.0.0.1 (never any other address).

use crate::skip;
use crate::sshd;

use rocetop::collect::ssh::{
    HostKeyPolicy, LegacyAlgorithms, PasswordSource, SshTarget, SshTransport, connect_all,
};
use rocetop::collect::{CollectError, Request, StreamEvent, Transport};
use sshd::{Agent, Options, Sshd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);

/// A target for `s` that authenticates with its client key only (no agent) and trusts what
/// `kh` says.
fn target(s: &Sshd, kh: &Path) -> SshTarget {
    let mut t = SshTarget::new(
        &format!("sshd{}", s.port),
        "127.0.0.1",
        s.port,
        &sshd::current_user(),
    );
    t.identity_files = vec![s.client_key.clone()];
    t.known_hosts = kh.to_path_buf();
    t.agent_socket = None;
    t.reconnect_min = Duration::from_millis(100);
    t.reconnect_max = Duration::from_millis(800);
    t
}

/// An sshd, a known_hosts that trusts it, and a transport to it.
fn trusted() -> (Sshd, PathBuf, SshTransport) {
    let s = Sshd::start();
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let tr = SshTransport::new(target(&s, &kh));
    (s, kh, tr)
}

fn cli(c: &str) -> Request {
    Request::Cli(c.to_string())
}

fn fingerprint(s: &Sshd, kind: &str) -> String {
    let out = std::process::Command::new("ssh-keygen")
        .arg("-lf")
        .arg(s.path(&format!("hostkey_{kind}.pub")))
        .output()
        .expect("ssh-keygen");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    text.split_whitespace()
        .nth(1)
        .expect("fingerprint")
        .to_string()
}

#[tokio::test]
async fn key_auth_runs_commands_on_one_connection() {
    let (s, _kh, tr) = trusted();
    tr.connect().await.expect("connect");
    for i in 0..5 {
        let out = tr
            .run(&cli(&format!("echo hello {i}; echo noise >&2")), T)
            .await;
        assert_eq!(out.expect("run"), format!("hello {i}\n"));
    }
    // Bytes that are not UTF-8 are decoded lossily, not an error.
    let out = tr.run(&cli("printf 'a\\377b\\n'"), T).await.expect("bytes");
    assert_eq!(out, "a\u{fffd}b\n");
    match tr
        .run(&cli("echo partial; echo 'no such device' >&2; exit 3"), T)
        .await
    {
        Err(CollectError::Command { status, stderr }) => {
            assert_eq!(status, "exit 3");
            assert_eq!(stderr, "no such device");
        }
        other => panic!("expected a command failure, got {other:?}"),
    }
    assert!(
        tr.failing_since().is_none(),
        "a command failure is not a host failure"
    );
    assert_eq!(
        s.accepted(),
        1,
        "one connection for every request: {}",
        s.log()
    );
}

#[tokio::test]
async fn parallel_requests_share_the_connection_within_the_channel_limit() {
    let (s, _kh, tr) = trusted();
    let log = s.path("overlap.log");
    let log = log.display();
    // Each command records when it starts and ends on the host; the overlap of those
    // intervals is how many channels were open at once (no wall-clock bound asserted).
    let reqs: Vec<Request> = (0..12)
        .map(|i| {
            cli(&format!(
                "echo \"$(date +%s%N) 1\" >> {log}; sleep 0.2; echo \"$(date +%s%N) -1\" >> {log}; echo {i}"
            ))
        })
        .collect();
    let out = tr.run_all(&reqs, T).await;
    for (i, r) in out.iter().enumerate() {
        assert_eq!(r.as_deref().expect("run"), format!("{i}\n"));
    }
    let text = std::fs::read_to_string(s.path("overlap.log")).expect("overlap log");
    let mut events: Vec<(u128, i32)> = text
        .lines()
        .filter_map(|l| {
            let (t, d) = l.split_once(' ')?;
            Some((t.parse().ok()?, d.parse().ok()?))
        })
        .collect();
    assert_eq!(events.len(), 24, "{text}");
    // Ends before starts at equal times, so touching intervals do not count as overlapping.
    events.sort();
    let (mut open, mut max) = (0, 0);
    for (_, d) in events {
        open += d;
        max = max.max(open);
    }
    assert!(max <= 4, "at most 4 channels at once, saw {max}");
    assert!(max >= 2, "requests ran in parallel, saw {max}");
    assert_eq!(s.accepted(), 1);
}

/// A node's requests of one poll go in ONE exec (one "Starting session" in sshd's log), and each
/// comes back as its own answer: the sysfs dump, a failing `ethtool -S` as its own error, a tail.
#[tokio::test]
async fn a_nodes_requests_share_one_exec_and_keep_their_own_answers() {
    let (s, _kh, tr) = trusted();
    let root = s.path("sys");
    let hc = root.join("class/infiniband/mlx5_0/ports/1/hw_counters");
    std::fs::create_dir_all(&hc).expect("mkdir");
    std::fs::write(hc.join("np_cnp_sent"), "42\n").expect("write");
    let log = s.path("train.log");
    std::fs::write(&log, "step 1\nstep 2\n").expect("log");
    let reqs = vec![
        Request::SysfsDump {
            root: root.display().to_string(),
            devices: vec!["mlx5_0".into()],
            netdevs: vec![],
        },
        Request::Ethtool {
            netdev: "rocetopnosuch0".into(),
        },
        Request::Tail {
            path: log.display().to_string(),
            lines: 1,
        },
    ];
    let before = s.log().matches("Starting session").count();
    let out = tr.run_all(&reqs, T).await;
    let dump = out[0].as_deref().expect("dump");
    assert!(dump.contains("hw_counters/np_cnp_sent:42"), "{dump}");
    assert!(!dump.contains("@@rocetop"), "{dump}");
    // No such netdev (or no ethtool at all): an error of its own, with the reason.
    match &out[1] {
        Err(CollectError::Command { status, stderr }) => {
            assert_ne!(status, "exit 0");
            assert!(!stderr.is_empty(), "{status}");
        }
        other => panic!("ethtool of a missing netdev: {other:?}"),
    }
    assert_eq!(out[2].as_deref().expect("tail"), "step 2\n");
    let sessions = s.log().matches("Starting session").count() - before;
    assert_eq!(sessions, 1, "{}", s.log());
    assert_eq!(s.accepted(), 1);
}

#[tokio::test]
async fn agent_auth() {
    let s = Sshd::start();
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let agent = Agent::start(&[&s.client_key]);
    let mut t = target(&s, &kh);
    t.identity_files = vec![s.path("no_such_key")];
    t.agent_socket = Some(agent.socket.clone());
    let tr = SshTransport::new(t);
    assert_eq!(
        tr.run(&cli("echo via agent"), T).await.expect("run"),
        "via agent\n"
    );
    assert_eq!(s.accepted(), 1, "{}", s.log());
}

#[tokio::test]
async fn auth_failure_says_what_was_tried() {
    let s = Sshd::start();
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let wrong = s.path("wrong_key");
    sshd::keygen(&wrong, "ed25519", "");
    let locked = s.path("locked_key");
    sshd::keygen(&locked, "ed25519", "secret phrase");
    let mut t = target(&s, &kh);
    t.identity_files = vec![wrong.clone(), locked.clone()];
    // A backoff window no slow machine can outlast between the two calls below.
    t.reconnect_min = Duration::from_secs(60);
    t.reconnect_max = Duration::from_secs(60);
    let tr = SshTransport::new(t);
    let e = tr.run(&cli("true"), T).await.expect_err("must fail");
    let m = e.to_string();
    assert!(matches!(e, CollectError::Auth(_)), "{m}");
    assert!(
        m.starts_with(&format!(
            "auth failed: user {} (tried: {})",
            sshd::current_user(),
            wrong.display()
        )),
        "{m}"
    );
    assert!(
        m.contains(&format!(
            "key {} is encrypted: add it to ssh-agent (ssh-add {})",
            locked.display(),
            locked.display()
        )),
        "{m}"
    );
    assert!(m.contains("the server accepts publickey"), "{m}");
    // Within the backoff window the next call fails without a new attempt, saying when it retries.
    let again = tr
        .run(&cli("true"), T)
        .await
        .expect_err("still failing")
        .to_string();
    assert!(again.contains("retrying in "), "{again}");
}

#[tokio::test]
async fn unknown_host_is_refused_with_its_fingerprint() {
    let s = Sshd::start();
    let kh = s.path("known_hosts");
    std::fs::write(&kh, "").expect("empty known_hosts");
    let tr = SshTransport::new(target(&s, &kh));
    let e = tr.run(&cli("true"), T).await.expect_err("unknown host");
    let m = e.to_string();
    assert!(matches!(e, CollectError::HostKey(_)), "{m}");
    let fp = fingerprint(&s, "ed25519");
    assert!(fp.starts_with("SHA256:"));
    assert!(
        m.contains(&format!(
            "unknown host [127.0.0.1]:{}, key {fp} (ssh-ed25519)",
            s.port
        )),
        "{m}"
    );
    assert!(
        m.contains(&format!(
            "ssh-keyscan -p {} 127.0.0.1 >> {}",
            s.port,
            kh.display()
        )),
        "{m}"
    );
    assert_eq!(s.accepted(), 0);
    assert_eq!(
        std::fs::read_to_string(&kh).expect("kh"),
        "",
        "strict never writes"
    );
}

#[tokio::test]
async fn changed_host_key_is_refused_even_with_accept_new() {
    let mut s = Sshd::start();
    let kh = s.path("known_hosts");
    std::fs::write(&kh, "# lab hosts\n").expect("kh");
    s.trust(&kh, "ed25519");
    let tr = SshTransport::new(target(&s, &kh));
    tr.run(&cli("true"), T).await.expect("first connect");
    s.change_host_key();
    for policy in [HostKeyPolicy::Strict, HostKeyPolicy::AcceptNew] {
        let mut t = target(&s, &kh);
        t.policy = policy;
        let e = SshTransport::new(t)
            .run(&cli("true"), T)
            .await
            .expect_err("changed");
        let m = e.to_string();
        assert!(matches!(e, CollectError::HostKey(_)), "{m}");
        assert!(
            m.contains(&format!(
                "host key changed for [127.0.0.1]:{} ({} line 2)",
                s.port,
                kh.display()
            )),
            "{m}"
        );
        assert!(m.contains(&fingerprint(&s, "ed25519")), "{m}");
    }
    // The old transport's connection died with the restart; its reconnect is refused too.
    let e = tr.run(&cli("true"), T).await.expect_err("changed");
    assert!(e.to_string().contains("host key changed"), "{e}");
    assert_eq!(std::fs::read_to_string(&kh).expect("kh").lines().count(), 2);
}

#[tokio::test]
async fn accept_new_records_the_key_and_the_next_connect_uses_it() {
    let s = Sshd::start();
    let kh = s.path("sub/known_hosts"); // the directory does not exist yet
    let mut t = target(&s, &kh);
    t.policy = HostKeyPolicy::AcceptNew;
    let tr = SshTransport::new(t);
    assert_eq!(
        tr.run(&cli("echo new"), T).await.expect("accept-new"),
        "new\n"
    );
    let text = std::fs::read_to_string(&kh).expect("written");
    assert!(text.starts_with(&s.known_hosts_line("ed25519")), "{text}");
    // Strict now succeeds from the recorded key.
    let strict = SshTransport::new(target(&s, &kh));
    assert_eq!(
        strict.run(&cli("echo known"), T).await.expect("strict"),
        "known\n"
    );
    assert_eq!(
        std::fs::read_to_string(&kh).expect("kh"),
        text,
        "nothing more written"
    );
}

#[tokio::test]
async fn host_known_only_by_its_ecdsa_key_is_known() {
    let s = Sshd::with(Options {
        host_keys: vec!["ed25519", "ecdsa"],
        ..Options::default()
    });
    let kh = s.path("known_hosts");
    s.trust(&kh, "ecdsa");
    let tr = SshTransport::new(target(&s, &kh));
    assert_eq!(
        tr.run(&cli("echo ok"), T).await.expect("ecdsa known"),
        "ok\n"
    );
}

#[tokio::test]
async fn hashed_known_hosts_entries_are_read() {
    let s = Sshd::start();
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let st = std::process::Command::new("ssh-keygen")
        .arg("-H")
        .arg("-f")
        .arg(&kh)
        .output()
        .expect("hash");
    assert!(st.status.success());
    assert!(std::fs::read_to_string(&kh).expect("kh").starts_with("|1|"));
    let tr = SshTransport::new(target(&s, &kh));
    assert_eq!(tr.run(&cli("echo ok"), T).await.expect("hashed"), "ok\n");
}

#[tokio::test]
async fn proxy_jump_through_a_second_sshd() {
    let jump = Sshd::with(Options {
        extra: vec!["LogLevel DEBUG1".into()],
        ..Options::default()
    });
    let dest = Sshd::start();
    let kh = dest.path("known_hosts");
    jump.trust(&kh, "ed25519");
    dest.trust(&kh, "ed25519");
    let mut t = target(&dest, &kh);
    t.proxy_jump = Some(Box::new(target(&jump, &kh)));
    let tr = SshTransport::new(t);
    assert!(tr.describe().contains(" via 127.0.0.1"));
    assert_eq!(
        tr.run(&cli("echo through"), T).await.expect("jump"),
        "through\n"
    );
    assert_eq!(
        tr.run(&cli("echo again"), T).await.expect("jump"),
        "again\n"
    );
    assert_eq!(jump.accepted(), 1);
    assert_eq!(dest.accepted(), 1);
    let log = jump.log();
    assert!(
        log.contains(&format!("target 127.0.0.1 port {}", dest.port)),
        "the jump host opened the tunnel: {log}"
    );
}

#[tokio::test]
async fn eight_hosts_in_parallel_one_connection_each() {
    let hosts: Vec<Sshd> = (0..8).map(|_| Sshd::start()).collect();
    let kh = hosts[0].path("known_hosts");
    for h in &hosts {
        h.trust(&kh, "ed25519");
    }
    let trs: Vec<SshTransport> = hosts
        .iter()
        .map(|h| SshTransport::new(target(h, &kh)))
        .collect();
    let refs: Vec<&SshTransport> = trs.iter().collect();
    let t0 = Instant::now();
    for r in connect_all(&refs, 3, Duration::from_millis(20)).await {
        r.expect("connect");
    }
    assert!(
        t0.elapsed() >= Duration::from_millis(140),
        "staggered by 20 ms each"
    );
    for poll in 0..5 {
        let req = cli(&format!("echo poll {poll}"));
        let outs = futures::future::join_all(trs.iter().map(|t| t.run(&req, T))).await;
        for o in outs {
            assert_eq!(o.expect("poll"), format!("poll {poll}\n"));
        }
    }
    for h in &hosts {
        assert_eq!(
            h.accepted(),
            1,
            "each sshd sees exactly one connection: {}",
            h.log()
        );
    }
}

#[tokio::test]
async fn killed_sshd_fails_alone_and_is_reconnected_when_back() {
    let (mut a, kha, _) = trusted();
    // A backoff long enough that the call right after the failure is surely inside it, short
    // enough that the reconnect below comes within its deadline.
    let mut t = target(&a, &kha);
    t.reconnect_min = Duration::from_secs(3);
    t.reconnect_max = Duration::from_secs(3);
    let ta = SshTransport::new(t);
    let (b, _khb, tb) = trusted();
    ta.run(&cli("echo a"), T).await.expect("a up");
    tb.run(&cli("echo b"), T).await.expect("b up");
    a.kill();
    let e = ta.run(&cli("echo a"), T).await.expect_err("a is down");
    assert!(matches!(e, CollectError::Refused(_)), "{e}");
    assert!(
        e.to_string()
            .starts_with("connection refused by 127.0.0.1:"),
        "{e}"
    );
    let (err, since) = ta.failing_since().expect("failing");
    assert_eq!(err, e);
    // During the backoff no new attempt is made: the last error comes back with the retry time.
    let fast = ta
        .run(&cli("echo a"), T)
        .await
        .expect_err("still down")
        .to_string();
    assert!(fast.contains("retrying in"), "{fast}");
    assert_eq!(
        tb.run(&cli("echo b"), T).await.expect("b keeps working"),
        "b\n"
    );
    assert_eq!(
        ta.failing_since().expect("still failing").1,
        since,
        "since when, unchanged"
    );
    a.restart();
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        match ta.run(&cli("echo a"), T).await {
            Ok(o) => {
                assert_eq!(o, "a\n");
                break;
            }
            Err(e) => assert!(Instant::now() < until, "no reconnect: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ta.failing_since().is_none());
    assert_eq!(b.accepted(), 1);
}

#[tokio::test]
async fn a_hanging_command_times_out_and_the_connection_serves_on() {
    let (s, kh, _) = trusted();
    // Not root: OpenSSH delivers signals to sessions only with privilege separation.
    let mut t = target(&s, &kh);
    t.user = sshd::unprivileged_user().0;
    let tr = SshTransport::new(t);
    // A duration no other test uses, so the check below sees only this test's commands.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let secs = format!("29.{:06}", (std::process::id() ^ nanos) % 1_000_000);
    let hang = format!("sleep {secs}");
    // More hung commands than channels: each is closed at its timeout, freeing its slot.
    for _ in 0..5 {
        let t0 = Instant::now();
        let e = tr
            .run(&cli(&hang), Duration::from_millis(300))
            .await
            .expect_err("hangs");
        assert_eq!(e, CollectError::Timeout(Duration::from_millis(300)));
        assert_eq!(e.to_string(), "timed out after 0.3 s");
        // Far below the command's 30 s: the timeout ended it, not the command.
        assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());
    }
    assert_eq!(
        tr.run(&cli("echo alive"), T).await.expect("next request"),
        "alive\n"
    );
    assert_eq!(s.accepted(), 1);
    // The abandoned commands were signalled, not left running on the host.
    let until = Instant::now() + Duration::from_secs(5);
    while tr
        .run(&cli(&format!("pgrep -f 'slee[p] {secs}' || true")), T)
        .await
        .expect("pgrep")
        .trim()
        != ""
    {
        assert!(
            Instant::now() < until,
            "timed-out commands still running: {}",
            s.log()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn follow_streams_lines_until_dropped() {
    let (s, kh, _) = trusted();
    let mut t = target(&s, &kh);
    t.user = sshd::unprivileged_user().0;
    let tr = SshTransport::new(t);
    let log = s.path("training.log");
    std::fs::write(&log, "iter 1\niter 2\n").expect("log");
    let req = Request::Follow {
        path: log.to_string_lossy().to_string(),
        lines: 10,
    };
    let mut rx = tr.stream(&req).await.expect("stream");
    assert_eq!(next(&mut rx).await, StreamEvent::Line("iter 1".into()));
    assert_eq!(next(&mut rx).await, StreamEvent::Line("iter 2".into()));
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&log)
            .expect("append");
        f.write_all(b"iter 3 loss 0.5\n").expect("write");
    }
    assert_eq!(
        next(&mut rx).await,
        StreamEvent::Line("iter 3 loss 0.5".into())
    );
    drop(rx);
    // The channel is closed: its `tail` ends and the connection keeps serving.
    assert_eq!(tr.run(&cli("echo still"), T).await.expect("run"), "still\n");
    let until = Instant::now() + Duration::from_secs(5);
    // Only this test's tail: its log lives in this sshd's own temp dir.
    let dir = s
        .dir
        .path()
        .file_name()
        .map(|d| d.to_string_lossy().to_string())
        .unwrap_or_default();
    while tr
        .run(
            &cli(&format!("pgrep -f '[t]ail -n 10 -F .*{dir}' || true")),
            T,
        )
        .await
        .expect("pgrep")
        .trim()
        != ""
    {
        assert!(
            Instant::now() < until,
            "tail still running after the receiver was dropped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn next(rx: &mut tokio::sync::mpsc::Receiver<StreamEvent>) -> StreamEvent {
    tokio::time::timeout(T, rx.recv())
        .await
        .expect("line in time")
        .expect("open")
}

/// A ForceCommand "switch": answers a few `show` commands (chained with ';' too) and hangs up
/// the whole connection after each exec, as some NX-OS/IOS versions do.
const SWITCH: &str = r#"#!/bin/bash
IFS=';' read -ra parts <<<"${SSH_ORIGINAL_COMMAND:-}"
for c in "${parts[@]}"; do
  c=$(echo "$c" | sed 's/^ *//; s/ *$//')
  case "$c" in
    "show version") echo "NXOS: version 9.3(8)" ;;
    "show clock") echo "12:00:00.000 UTC Mon Jan 01 2024" ;;
    "show interface priority-flow-control") echo "Ethernet1/1/1  Auto  On  (8)  100  200" ;;
    "") ;;
    *) echo "% Invalid command at '^' marker." ;;
  esac
done
# Hang up: end the connection's sshd process once the output is out.
(sleep 0.05; kill "$PPID") >/dev/null 2>&1 &
"#;

#[tokio::test]
async fn a_switch_that_hangs_up_after_each_exec_still_polls() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = dir.path().join("fake-switch.sh");
    std::fs::write(&script, SWITCH).expect("script");
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .expect("chmod");
    let s = Sshd::with(Options {
        force_command: Some(script.display().to_string()),
        ..Options::default()
    });
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let mut t = target(&s, &kh);
    t.switch_mode = true;
    let tr = SshTransport::new(t);
    let reqs = [
        cli("show version"),
        cli("show clock"),
        cli("show interface priority-flow-control"),
    ];
    let polls = 6;
    for _ in 0..polls {
        let out = tr.run_all(&reqs, T).await;
        let all: String = out.into_iter().map(|r| r.expect("poll")).collect();
        assert!(all.contains("NXOS: version 9.3(8)"), "{all}");
        assert!(all.contains("12:00:00.000 UTC"), "{all}");
        assert!(all.contains("Ethernet1/1/1  Auto  On  (8)"), "{all}");
        assert!(!all.contains("Invalid"), "{all}");
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    assert!(
        tr.closes_after_exec(),
        "learned that this switch hangs up after an exec"
    );
    assert!(
        tr.failing_since().is_none(),
        "hanging up is normal for this switch"
    );
    // Joined mode: one exec (so one connection) per poll once learned.
    let n = s.accepted();
    assert!(n <= polls + 2, "{n} connections for {polls} polls");
    let out = tr.run_all(&reqs, T).await;
    assert_eq!(s.accepted(), n + 1, "one connection for a whole poll");
    let first = out[0].as_deref().expect("joined");
    assert_eq!(
        first,
        "NXOS: version 9.3(8)\n12:00:00.000 UTC Mon Jan 01 2024\nEthernet1/1/1  Auto  On  (8)  100  200\n"
    );
    assert_eq!(out[1].as_deref().expect("empty"), "");
    // ... and the transport says so: the poll's parser splits only what it knows was joined.
    let a = tr.run_poll(&reqs, T).await;
    assert_eq!(a.joined, vec![0, 1, 2]);
    assert!(a.each[0].as_deref().is_ok_and(|t| t.contains("12:00:00")));
    // A single request works too.
    assert_eq!(
        tr.run(&cli("show clock"), T).await.expect("one"),
        "12:00:00.000 UTC Mon Jan 01 2024\n"
    );
}

#[tokio::test]
async fn password_from_a_command_for_network_gear() {
    let (name, has_pw) = sshd::unprivileged_user();
    if !has_pw {
        skip::skip(
            "ssh_transport::password_from_a_command_for_network_gear",
            skip::Lack::Machine,
            "password auth needs a throwaway user, created only when the tests run as root",
        );
        return;
    }
    let s = Sshd::with(Options {
        extra: vec!["PasswordAuthentication yes".into()],
        ..Options::default()
    });
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let mut t = target(&s, &kh);
    t.user = name.clone();
    t.identity_files = vec![s.path("no_key_here")];
    t.password = Some(PasswordSource::Command(format!(
        "echo {}",
        sshd::TEST_PASSWORD
    )));
    let tr = SshTransport::new(t.clone());
    assert_eq!(
        tr.run(&cli("id -un"), T).await.expect("password auth"),
        format!("{name}\n")
    );
    assert!(s.log().contains("Accepted password"), "{}", s.log());
    t.password = Some(PasswordSource::Command("echo wrong".into()));
    let e = SshTransport::new(t.clone())
        .run(&cli("true"), T)
        .await
        .expect_err("wrong password");
    assert!(
        e.to_string().contains("(tried: password from command)"),
        "{e}"
    );
    t.password = Some(PasswordSource::Env(
        "ROCETOP_TEST_UNSET_PASSWORD_VAR".into(),
    ));
    let e = SshTransport::new(t)
        .run(&cli("true"), T)
        .await
        .expect_err("no password");
    assert!(
        e.to_string()
            .contains("password variable $ROCETOP_TEST_UNSET_PASSWORD_VAR is not set"),
        "{e}"
    );
}

#[tokio::test]
async fn legacy_algorithms_only_where_allowed() {
    // An old switch: only dh-group14-sha1 and hmac-sha1 (with a non-AEAD cipher, so the MAC
    // is negotiated).
    let s = Sshd::with(Options {
        extra: vec![
            "KexAlgorithms diffie-hellman-group14-sha1".into(),
            "MACs hmac-sha1".into(),
            "Ciphers aes128-ctr".into(),
        ],
        ..Options::default()
    });
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let e = SshTransport::new(target(&s, &kh))
        .run(&cli("true"), T)
        .await
        .expect_err("not by default");
    let m = e.to_string();
    assert!(m.contains("no Kex algorithm in common"), "{m}");
    assert!(m.contains("diffie-hellman-group14-sha1"), "{m}");
    assert!(m.contains("allow legacy algorithms for this device"), "{m}");
    let mut t = target(&s, &kh);
    t.extra_algorithms = Some(LegacyAlgorithms {
        dh_group14_sha1: true,
        ecdh_nistp: false,
        hmac_sha1: true,
    });
    let tr = SshTransport::new(t);
    assert_eq!(tr.run(&cli("echo old"), T).await.expect("legacy"), "old\n");
}

#[tokio::test]
async fn one_session_at_a_time_is_retried_not_failed() {
    // Gear that allows a single channel: parallel requests wait for it instead of failing.
    let s = Sshd::with(Options {
        extra: vec!["MaxSessions 1".into()],
        ..Options::default()
    });
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let tr = SshTransport::new(target(&s, &kh));
    let reqs: Vec<Request> = (0..4).map(|i| cli(&format!("echo {i}"))).collect();
    for (i, r) in tr.run_all(&reqs, T).await.into_iter().enumerate() {
        assert_eq!(r.expect("retried"), format!("{i}\n"));
    }
    assert!(
        s.log().contains("no more sessions"),
        "the refusals were exercised"
    );
    assert_eq!(s.accepted(), 1);
}

/// A peer that stops answering without closing TCP (its connection process frozen) is noticed by
/// keepalives alone, within `keepalive_max` unanswered rounds, while a live idle peer is not
/// dropped. Here 0.5 s × 3 (the default is 5 s × 3); the deadline is generous, not the claim.
#[tokio::test]
async fn keepalives_notice_a_peer_that_stopped_answering() {
    let (s, kh, _) = trusted();
    let mut t = target(&s, &kh);
    t.keepalive_interval = Duration::from_millis(500);
    t.keepalive_max = 3;
    let tr = SshTransport::new(t);
    tr.run(&cli("true"), T).await.expect("first exec");
    // Idle across several keepalive rounds, a live peer answers them: still connected.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(3) {
        assert!(tr.is_connected().await, "a live idle peer was dropped");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    s.signal_connections("-STOP");
    let t0 = Instant::now();
    while tr.is_connected().await {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "a frozen peer still counts as connected after {:?}",
            t0.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    eprintln!(
        "dead peer noticed after {:?} (keepalive 0.5 s × 3)",
        t0.elapsed()
    );
    s.signal_connections("-CONT");
}

/// An endless answer (`yes`) stops at the answer cap with a message saying so, instead of filling
/// memory until the command timeout (the adversarial run saw 1.28 GB in 5 s); the command is
/// stopped and the connection serves on.
#[tokio::test]
async fn an_endless_answer_stops_at_the_cap() {
    let (s, kh, _) = trusted();
    let mut t = target(&s, &kh);
    t.user = sshd::unprivileged_user().0;
    t.max_answer_bytes = 1 << 20;
    let tr = SshTransport::new(t);
    let e = tr
        .run(&cli("yes"), Duration::from_secs(60))
        .await
        .expect_err("capped");
    assert!(
        e.to_string().contains("answered more than 1048576 bytes"),
        "{e}"
    );
    assert_eq!(
        tr.run(&cli("echo alive"), T).await.expect("next request"),
        "alive\n"
    );
}

/// Answers many channel windows and packets long, four at once on one connection (their packets
/// interleaved, each channel's window refilled as it is read), each arrive whole and in order: the
/// packet size a node's connection asks for (conn.rs) bounds the session's read buffer, not what
/// an answer may be.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_many_windows_long_arrive_whole_side_by_side() {
    use rocetop::collect::ssh::NODE_MAX_PACKET;
    // russh's default channel window (client::Config::window_size).
    const WINDOW: usize = 2 << 20;
    let (s, _kh, tr) = trusted();
    let n = 400_000u32;
    let want = |from: u32| -> String { (from..from + n).map(|i| format!("{i}\n")).collect() };
    let runs = [1_000_000u32, 2_000_000, 3_000_000, 4_000_000].map(|from| {
        let tr = &tr;
        async move {
            let cmd = format!("seq {from} {}", from + n - 1);
            (from, tr.run(&cli(&cmd), Duration::from_secs(60)).await)
        }
    });
    for (from, got) in futures::future::join_all(runs).await {
        let got = got.expect("answer");
        let want = want(from);
        assert!(want.len() > WINDOW && want.len() > 100 * NODE_MAX_PACKET as usize);
        assert_eq!(got.len(), want.len(), "answer from {from}");
        assert!(got == want, "answer from {from} differs");
    }
    assert_eq!(s.accepted(), 1, "one connection: {}", s.log());
}
