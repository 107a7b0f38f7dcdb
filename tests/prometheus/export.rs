//! `rocetop export`: /metrics scraped over 127.0.0.1, valid for promtool, every source present;
//! 404 elsewhere; keep-alive and Connection: close; the binary stops cleanly on SIGTERM.

use crate::skip;

use rocetop::cmd::export::{serve, start_collectors};
use rocetop::config::Config;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One HTTP/1.1 response read off a stream: status, headers (lower-case names), body.
fn read_response(s: &mut impl BufRead) -> (u16, Vec<(String, String)>, String) {
    let mut line = String::new();
    s.read_line(&mut line).expect("status line");
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let mut headers = Vec::new();
    loop {
        line.clear();
        s.read_line(&mut line).expect("header");
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .expect("content-length");
    let mut body = vec![0; len];
    s.read_exact(&mut body).expect("body");
    (status, headers, String::from_utf8(body).expect("utf8"))
}

fn get(addr: &str, path: &str) -> (u16, Vec<(String, String)>, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    read_response(&mut BufReader::new(s))
}

/// `promtool check metrics` on `text`; a counted skip of `test` where promtool is missing (a
/// failure under CI, where scripts/test.sh installs it).
fn promtool_check(test: &str, text: &str) {
    let Ok(mut child) = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        let why = "promtool is not installed (Debian package `prometheus`); /metrics not validated";
        skip::skip(test, skip::Lack::Installed("promtool"), why);
        return;
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("feed promtool");
    let out = child.wait_with_output().expect("promtool");
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn metrics_over_loopback_are_valid_and_carry_every_source() {
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let cfg = Config::reference();
    let (listener, store, tasks) = rt.block_on(async {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let (store, tasks) = start_collectors(&cfg).await;
        (l, store, tasks)
    });
    let addr = listener.local_addr().expect("addr").to_string();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server = rt.spawn(serve(listener, store.clone(), async {
        let _ = stop_rx.await;
    }));
    // Until every demo source has answered once.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(15) {
        let up = store
            .lock()
            .map(|s| s.sources().all(|(_, h)| h.up == Some(true)))
            .unwrap_or(false);
        if up {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, headers, body) = get(&addr, "/metrics");
    assert_eq!(status, 200);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "content-type" && v.starts_with("text/plain; version=0.0.4"))
    );
    let names = store
        .lock()
        .map(|s| s.sources().map(|(_, h)| h.name.clone()).collect::<Vec<_>>())
        .expect("names");
    assert!(names.len() >= 10, "{names:?}");
    for n in &names {
        assert!(
            body.contains(&format!("rocetop_source_up{{source=\"{n}\"}} 1\n")),
            "{n} missing:\n{body}"
        );
    }
    assert!(
        body.contains("# HELP rocetop_source_up ")
            && body.contains("# TYPE rocetop_source_up gauge")
    );
    promtool_check(
        "export::metrics_over_loopback_are_valid_and_carry_every_source",
        &body,
    );

    let (status, _, _) = get(&addr, "/");
    assert_eq!(status, 404);
    let (status, _, _) = get(&addr, "/metrics/../x");
    assert_eq!(status, 404);

    // Keep-alive: two scrapes on one connection, then a close.
    let s = TcpStream::connect(&addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut w = s.try_clone().expect("clone");
    let mut r = BufReader::new(s);
    for _ in 0..2 {
        write!(w, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n").expect("send");
        let (status, headers, _) = read_response(&mut r);
        assert_eq!(status, 200);
        assert!(
            headers
                .iter()
                .any(|(k, v)| k == "connection" && v == "keep-alive")
        );
    }
    write!(w, "GET /nope HTTP/1.1\r\nConnection: close\r\n\r\n").expect("send");
    let (status, headers, _) = read_response(&mut r);
    assert_eq!(status, 404);
    assert!(
        headers
            .iter()
            .any(|(k, v)| k == "connection" && v == "close")
    );
    let mut rest = Vec::new();
    assert_eq!(
        r.read_to_end(&mut rest).expect("eof"),
        0,
        "server closed after Connection: close"
    );

    let _ = stop_tx.send(());
    rt.block_on(server).expect("server ends on shutdown");
    drop(tasks);
}

/// Ends the child it holds if the test panics first (a live exporter would hold the test's pipes).
struct Reaper(std::process::Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `rocetop export --demo` on an ephemeral loopback port (with SIGHUP at its default even if
/// this test run ignores it, as under nohup); wait until every demo source is up in /metrics.
fn serving() -> (Reaper, String, String) {
    let child = Command::new("env")
        .arg("--default-signal=HUP")
        .arg(env!("CARGO_BIN_EXE_rocetop"))
        .args(["export", "--demo", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rocetop export");
    let mut child = Reaper(child);
    let mut err = BufReader::new(child.0.stderr.take().expect("stderr"));
    let mut line = String::new();
    err.read_line(&mut line).expect("first line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .map(str::to_string)
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    assert!(
        !line.contains("warning"),
        "loopback is not warned about: {line}"
    );
    // Ready when the first polls are in, not after a guessed sleep.
    let t0 = Instant::now();
    let body = loop {
        let (status, _, body) = get(&addr, "/metrics");
        assert_eq!(status, 200);
        if body.contains("rocetop_source_up{source=\"NX_AI_Leaf1\"} 1") {
            break body;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "never up:\n{body}");
        std::thread::sleep(Duration::from_millis(50));
    };
    (child, addr, body)
}

/// Send `sig`; export must exit 0 and stop listening (generous deadline: a stop is awaited, not
/// timed). Returns the last /metrics it served.
fn stops_cleanly_on(sig: &str) -> String {
    let (mut child, addr, body) = serving();
    let child = &mut child.0;
    let killed = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "export did not stop on SIG{sig}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "SIG{sig}: {status}");
    assert!(
        std::net::TcpStream::connect(&addr).is_err(),
        "SIG{sig}: {addr} still accepts"
    );
    body
}

#[test]
fn the_binary_serves_valid_metrics_and_stops_on_sigterm() {
    let body = stops_cleanly_on("TERM");
    promtool_check(
        "export::the_binary_serves_valid_metrics_and_stops_on_sigterm",
        &body,
    );
}

#[test]
fn the_binary_stops_cleanly_on_sigint() {
    stops_cleanly_on("INT");
}

#[test]
fn the_binary_stops_cleanly_on_sighup() {
    stops_cleanly_on("HUP");
}

/// The warning is printed before the bind, so an address of TEST-NET-1 (RFC 5737, never assigned
/// here) shows it without this test listening anywhere but loopback.
#[test]
fn a_non_loopback_listen_address_is_warned_about() {
    let out = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["export", "--demo", "--listen", "192.0.2.1:0"])
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rocetop: warning: listening on 192.0.2.1:0, which is not a loopback address"),
        "{err}"
    );
    assert!(!out.status.success(), "cannot bind there: {err}");
    // (A loopback address gets no warning: `serving` checks export's first line.)
}

#[test]
fn contrib_scrape_config_and_dashboard_use_real_names() {
    use rocetop::metrics::names::*;
    let root = env!("CARGO_MANIFEST_DIR");
    let yml =
        std::fs::read_to_string(format!("{root}/contrib/prometheus.yml")).expect("prometheus.yml");
    assert!(yml.contains(&format!("\"{}\"", rocetop::cmd::export::DEFAULT_LISTEN)));
    match Command::new("promtool")
        .args(["check", "config", &format!("{root}/contrib/prometheus.yml")])
        .output()
    {
        Ok(o) => assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout)),
        Err(_) => skip::skip(
            "export::contrib_scrape_config_and_dashboard_use_real_names",
            skip::Lack::Installed("promtool"),
            "promtool is not installed; prometheus.yml not validated",
        ),
    }
    let dash: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/contrib/grafana-rocetop.json"))
            .expect("dashboard"),
    )
    .expect("dashboard is JSON");
    let mut known: Vec<String> = [
        SW_QUEUE_DROPPED,
        SW_INGRESS_DROPPED,
        SW_PFC_RX,
        SW_PFC_TX,
        NIC_PFC_RX_PAUSE,
        NIC_PFC_TX_PAUSE,
        NIC_PFC_RX_PAUSE_DURATION,
        NIC_PFC_TX_PAUSE_DURATION,
        NODE_RDMA_BYTES,
        NODE_KERNEL_BYTES,
        TRAIN_STEP_SECONDS,
        TRAIN_ALLREDUCE_SECONDS,
        PING_RTT_SECONDS,
        SOURCE_UP,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for c in [
        "np_ecn_marked_roce_packets",
        "np_cnp_sent",
        "rp_cnp_handled",
        "out_of_sequence",
        "packet_seq_err",
        "local_ack_timeout_err",
    ] {
        known.push(rdma_counter(c));
    }
    let re = regex::Regex::new(r"rocetop_[a-z0-9_]+").expect("regex");
    let panels = dash["panels"].as_array().expect("panels");
    let mut exprs = 0;
    for p in panels {
        for t in p["targets"].as_array().expect("targets") {
            let e = t["expr"].as_str().expect("expr");
            exprs += 1;
            for m in re.find_iter(e) {
                assert!(
                    known.iter().any(|k| k == m.as_str()),
                    "{}: unknown metric {}",
                    p["title"],
                    m.as_str()
                );
            }
        }
    }
    assert!(exprs >= 15);
    for want in ["CNP", "ECN", "PFC", "pause", "drops", "all-reduce", "p99"] {
        assert!(
            panels
                .iter()
                .any(|p| p["title"].as_str().is_some_and(|t| t.contains(want))),
            "no panel for {want}"
        );
    }
}

/// A TCP connection to `addr` from the loopback address `from` (127.0.0.2: another client).
fn connect_from(from: &str, addr: &str) -> std::io::Result<TcpStream> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let sock = tokio::net::TcpSocket::new_v4()?;
        sock.bind(format!("{from}:0").parse().map_err(std::io::Error::other)?)?;
        let s = sock
            .connect(addr.parse().map_err(std::io::Error::other)?)
            .await?;
        let s = s.into_std()?;
        s.set_nonblocking(false)?;
        Ok(s)
    })
}

/// Everything the server sends on `s` until it closes it, or until `within` passes (then None).
fn read_until_closed(s: &mut TcpStream, within: Duration) -> Option<String> {
    s.set_read_timeout(Some(within)).expect("timeout");
    let mut all = Vec::new();
    let mut b = [0u8; 4096];
    loop {
        match s.read(&mut b) {
            Ok(0) => return Some(String::from_utf8_lossy(&all).into_owned()),
            Ok(n) => all.extend_from_slice(&b[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return None;
            }
            Err(_) => return Some(String::from_utf8_lossy(&all).into_owned()),
        }
    }
}

/// 600 connections from one client that never send a byte: past 32 they get 503 at once (one
/// address cannot take every slot), the 32 it holds are closed 5 s after their accept (not after
/// the idle minute), and a scrape from another address is answered meanwhile. Before: 512 silent
/// connections held every slot for 60 s and every scrape got 503.
#[test]
fn silent_connections_of_one_client_cannot_hold_export_at_503() {
    let (_child, addr, _) = serving();
    let t0 = Instant::now();
    let mut silent: Vec<TcpStream> = (0..600)
        .map(|_| TcpStream::connect(&addr).expect("connect"))
        .collect();
    // Those past the client's 32 are answered at once; the 32 it holds get nothing.
    std::thread::sleep(Duration::from_secs(1));
    let (mut busy, mut held) = (0, Vec::new());
    for mut s in silent.drain(..) {
        match read_until_closed(&mut s, Duration::from_millis(50)) {
            Some(a) if a.starts_with("HTTP/1.1 503 ") && a.contains("from your address") => {
                busy += 1
            }
            Some(a) => {
                assert!(
                    a.is_empty(),
                    "nothing but a 503 is sent to a silent client: {a}"
                );
                held.push(s);
            }
            None => held.push(s),
        }
    }
    assert!(
        held.len() <= 32 && busy >= 568,
        "{busy} refused, {} held",
        held.len()
    );
    let mut other = connect_from("127.0.0.2", &addr).expect("connect from 127.0.0.2");
    other
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        other,
        "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let (status, _, body) = read_response(&mut BufReader::new(other));
    assert_eq!(status, 200, "{body:.200}");
    for s in &mut held {
        let closed = read_until_closed(s, Duration::from_secs(20)).expect("closed by the server");
        assert!(
            closed.is_empty(),
            "nothing sent to a silent client: {closed}"
        );
    }
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(15),
        "the silent connections were held {took:?}"
    );
    assert_eq!(get(&addr, "/metrics").0, 200, "the client is served again");
}
