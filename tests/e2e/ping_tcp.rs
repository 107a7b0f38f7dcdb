//! TCP pings end to end against a real `pingd` on 127.0.0.1: sane percentiles and no loss, a killed
//! responder gives loss and a clear error, and a responder that stalls once shows the stall in every
//! probe scheduled during it (no coordinated omission).

use crate::skip;

use rocetop::cmd::pingd;
use rocetop::collect::ping::proto::{HELLO_LEN, PROBE_LEN};
use rocetop::collect::ping::{self, Options, PingTransport, VerbsOptions};
use rocetop::collect::transport::Transport;
use rocetop::metrics::{Parsed, Value, names};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const T: Duration = Duration::from_secs(5);

async fn start_pingd() -> (SocketAddr, tokio::task::JoinHandle<std::io::Result<()>>) {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = l.local_addr().expect("addr");
    let opts = Arc::new(pingd::Options {
        listen: addr.to_string(),
        verbs: VerbsOptions::default(),
        spin: Duration::from_millis(1),
    });
    (addr, tokio::spawn(pingd::serve(l, opts)))
}

fn gauge(p: &Parsed, name: &str, extra: &[(&str, &str)]) -> f64 {
    let mut l = vec![("peer", "peer"), ("transport", "tcp")];
    l.extend_from_slice(extra);
    match p.find(name, &l) {
        Some(v) => v.as_f64(),
        None => panic!("no {name} {extra:?} in {p:?}"),
    }
}

async fn report(t: &PingTransport) -> Parsed {
    let text = t.run(&ping::request("peer"), T).await.expect("a report");
    let p = ping::parse(&text, "peer");
    assert_eq!(p.unknown_lines, 0, "{text}");
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pings_a_real_pingd_then_says_clearly_when_it_is_gone() {
    let (addr, server) = start_pingd().await;
    let t = PingTransport::new("peer", &addr.to_string(), Options::with_rate(200.0));
    report(&t).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let p = report(&t).await;
    let sent = gauge(&p, names::PING_SENT, &[]);
    assert!(sent >= 200.0, "200/s for 1.2 s, got {sent}");
    assert_eq!(
        p.find(names::PING_LOST, &[("transport", "tcp")]),
        Some(Value::Counter(0))
    );
    let q = |q: &str| gauge(&p, names::PING_RTT_SECONDS, &[("quantile", q)]);
    let (min, p50, p99, p999, max) = (q("0"), q("0.5"), q("0.99"), q("0.999"), q("1"));
    assert!(
        min > 0.0 && min <= p50 && p50 <= p99 && p99 <= p999 && p999 <= max,
        "{p:?}"
    );
    // Every answered probe came back within the deadline (later ones count as lost): a bound that
    // holds on a loaded machine too. The loopback RTT itself is a bench figure, not a test.
    assert!(max < ping::DEADLINE.as_secs_f64(), "{p:?}");
    // 200 real RTTs vary: a spread above zero, and no more than the range allows (a standard
    // deviation is at most half the range; a mean |difference| at most the range).
    let (stdev, jitter) = (
        gauge(&p, names::PING_RTT_STDEV, &[]),
        gauge(&p, names::PING_JITTER, &[]),
    );
    // (min and max are HDR-histogram values, within 0.1 %.)
    let range = max * 1.002 - min * 0.998;
    assert!(
        stdev > 0.0 && stdev <= range / 2.0,
        "stdev {stdev} of {min}..{max}"
    );
    assert!(
        jitter > 0.0 && jitter <= range,
        "jitter {jitter} of {min}..{max}"
    );
    assert!(gauge(&p, names::PING_WINDOW_PROBES, &[]) >= 200.0);
    let in_buckets: f64 = p
        .samples
        .iter()
        .filter(|s| s.key.name == names::PING_BUCKET_PROBES)
        .map(|s| s.value.as_f64())
        .sum();
    assert_eq!(in_buckets, gauge(&p, names::PING_WINDOW_PROBES, &[]));
    // TCP keeps going whatever RDMA can do here, and the note says which.
    if !cfg!(feature = "verbs") {
        assert_eq!(p.notes, vec![ping::NO_VERBS.to_string()]);
    } else if !std::path::Path::new("/sys/class/infiniband").exists() {
        assert_eq!(
            p.notes,
            vec!["RDMA unavailable on this host: no devices".to_string()]
        );
    }

    // Kill the responder: the connection breaks, reconnects are refused.
    server.abort();
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let err = t
        .run(&ping::request("peer"), T)
        .await
        .expect_err("the peer is gone");
    assert_eq!(
        err.to_string(),
        format!("no answer from {addr}: connection refused")
    );
    let (sent, answered, lost) = t.tcp_totals();
    assert!(
        lost >= 100,
        "probes due while the peer was gone are lost: {lost}"
    );
    assert!(answered + lost <= sent);
}

#[tokio::test]
async fn a_peer_that_never_listened_is_a_clear_error() {
    // Bind then drop: a loopback port nobody listens on.
    let addr = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind")
        .local_addr()
        .expect("addr");
    let t = PingTransport::new("peer", &addr.to_string(), Options::with_rate(10.0));
    let err = t
        .run(&ping::request("peer"), T)
        .await
        .expect_err("nobody there");
    assert_eq!(
        err.to_string(),
        format!("no answer from {addr}: connection refused")
    );
}

/// Echoes like pingd, but stops reading for `stall` after the `after`-th probe.
async fn stalling_responder(l: TcpListener, after: usize, stall: Duration) -> std::io::Result<()> {
    let (mut s, _) = l.accept().await?;
    s.set_nodelay(true)?;
    let mut hello = [0u8; HELLO_LEN];
    s.read_exact(&mut hello).await?;
    let mut buf = [0u8; PROBE_LEN];
    for n in 1.. {
        s.read_exact(&mut buf).await?;
        if n == after {
            tokio::time::sleep(stall).await;
        }
        s.write_all(&buf).await?;
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_shows_in_every_probe_scheduled_during_it() {
    let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = l.local_addr().expect("addr");
    let server = tokio::spawn(stalling_responder(l, 50, Duration::from_millis(200)));
    let t = PingTransport::new("peer", &addr.to_string(), Options::with_rate(100.0));
    report(&t).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let p = report(&t).await;
    let q = |q: &str| gauge(&p, names::PING_RTT_SECONDS, &[("quantile", q)]);
    assert!(
        q("1") >= 0.19,
        "the stalled probe waited 200 ms: max {}",
        q("1")
    );
    // About 20 probes were due during the stall; those in its first half waited over 100 ms. A
    // pinger that waited for each answer before sending the next would show one slow probe, and
    // its p99 (the 2nd slowest of ~150) would be fast.
    assert!(q("0.99") > 0.1, "p99 {}", q("0.99"));
    let mut over_100ms = 0.0;
    let mut prev_le = 0.0;
    let mut buckets: Vec<(f64, f64)> = Vec::new();
    for b in 0..16 {
        let id = format!("{b:02}");
        buckets.push((
            gauge(&p, names::PING_BUCKET_LE, &[("bucket", &id)]),
            gauge(&p, names::PING_BUCKET_PROBES, &[("bucket", &id)]),
        ));
    }
    for (le, n) in &buckets {
        if prev_le >= 0.1 {
            over_100ms += n;
        }
        prev_le = *le;
    }
    assert!(
        over_100ms >= 7.0,
        "probes over 100 ms: {over_100ms} ({buckets:?})"
    );
    assert_eq!(
        p.find(names::PING_LOST, &[("transport", "tcp")]),
        Some(Value::Counter(0))
    );
    server.abort();
}

/// Deletes the network namespace it names (only one this test created).
struct Netns(String);

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = std::process::Command::new("ip")
            .args(["netns", "del", &self.0])
            .status();
    }
}

struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn sh(args: &[&str]) -> bool {
    std::process::Command::new(args[0])
        .args(&args[1..])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// In a network namespace of its own, `tc netem delay 2ms` on loopback makes every packet wait 2 ms
/// each way: pings through pingd must report a p50 of about 4 ms. Skipped where namespaces cannot be
/// created (not root, no CAP_SYS_ADMIN, no `ip`/`tc`).
#[test]
fn netem_delay_on_loopback_gives_a_4ms_rtt() {
    let ns = format!("rocetop-ping-{}", std::process::id());
    const TEST: &str = "ping_tcp::netem_delay_on_loopback_gives_a_4ms_rtt";
    if !sh(&["ip", "netns", "add", &ns]) {
        let why = "cannot create a network namespace here (needs root or CAP_SYS_ADMIN, and `ip`)";
        skip::skip(TEST, skip::Lack::Machine, why);
        return;
    }
    let _ns = Netns(ns.clone());
    if !sh(&["ip", "-n", &ns, "link", "set", "lo", "up"])
        || !sh(&[
            "ip", "netns", "exec", &ns, "tc", "qdisc", "add", "dev", "lo", "root", "netem",
            "delay", "2ms",
        ])
    {
        let why = "no netem qdisc here (kernel module sch_netem, `tc` from iproute2)";
        skip::skip(TEST, skip::Lack::Machine, why);
        return;
    }
    let bin = env!("CARGO_BIN_EXE_rocetop");
    let _pingd = Child(
        std::process::Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns,
                bin,
                "pingd",
                "--listen",
                "127.0.0.1:18515",
            ])
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("pingd starts"),
    );
    std::thread::sleep(Duration::from_millis(500));
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "demo = false\n[[node]]\nname = \"peer\"\nhost = \"127.0.0.1\"\nlocal = true\n\
             sysfs_root = \"{}\"\n[[ping]]\npeer = \"peer\"\naddress = \"127.0.0.1\"\nrate = 50.0\n",
            dir.path().display()
        ),
    )
    .expect("config");
    let out = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns,
            bin,
            "snapshot",
            "--format",
            "prom",
            "--interval",
            "2s",
        ])
        .arg("--config")
        .arg(&cfg)
        .output()
        .expect("snapshot runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let p50: f64 = text
        .lines()
        .find(|l| l.starts_with("rocetop_ping_rtt_seconds{") && l.contains("quantile=\"0.5\""))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no p50 in {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert!(
        (0.0039..0.0060).contains(&p50),
        "p50 {p50} s, expected about 4 ms"
    );
}
