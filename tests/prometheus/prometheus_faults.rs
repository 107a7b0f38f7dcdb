//! Fleet mode against bad input (issue #17): the real Debian Prometheus behind basic auth, a
//! server that never answers, answers over the cap, and a TSDB with a vanishing node, +Inf and
//! duplicate series. The source shows its error or a note, the others keep going, and no zero is
//! ever invented. Loopback listeners stand in only where the real server cannot misbehave so
//! (one that accepts and never answers, a 50 MB answer).

use crate::prom;
use crate::prom_skip;
use crate::skip;

use prom::{Fleet, STEP_S};
use prom_skip::prometheus;
use rocetop::collect::poll::poll_once;
use rocetop::collect::prometheus::PromTransport;
use rocetop::collect::source::fleet_source;
use rocetop::config::Config;
use rocetop::metrics::query::rate_sum;
use rocetop::metrics::{Store, names};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

fn config(text: &str) -> Config {
    Config::from_str(text, "test", None).expect("valid config")
}

fn source(port: u16, extra: &str) -> String {
    format!("[[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:{port}\"\n{extra}\n")
}

fn three_hours_ago() -> i64 {
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    (now_s - 3 * 3600) / STEP_S * STEP_S
}

/// A clock at `t0` (ms) that the test moves.
fn clock(t0: i64) -> (Arc<AtomicI64>, rocetop::collect::prometheus::Clock) {
    let now = Arc::new(AtomicI64::new(t0));
    let n = now.clone();
    (now, Arc::new(move || n.load(Ordering::SeqCst)))
}

/// A fleet source of `cfg`'s `i`th `[[prometheus]]` reading the backfilled past at `t0`.
fn past_source(
    cfg: &Config,
    i: usize,
    store: &mut Store,
    t0: i64,
) -> (Arc<AtomicI64>, rocetop::collect::source::Source) {
    let p = &cfg.prometheus[i];
    let (now, clock) = clock(t0);
    let t = Arc::new(PromTransport::new(p, clock).expect("transport"));
    (now, fleet_source(p, store, t))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basic_auth_without_or_with_wrong_credentials_is_a_clear_401_and_right_ones_read() {
    let test = "prometheus_faults::basic_auth";
    let Some(bins) = prometheus(test) else { return };
    let Some(hash) = prom::bcrypt("s3cret pw") else {
        skip::skip(
            test,
            skip::Lack::Installed("apache2-utils"),
            "no htpasswd and no Python crypt to make a bcrypt hash",
        );
        return;
    };
    let start = three_hours_ago();
    let fleet = Fleet {
        nodes: 4,
        start,
        faults: false,
    };
    let basic = base64_basic("rocetop", "s3cret pw");
    let server = prom::start_with(
        &bins,
        &prom::Options {
            fleet: Some(&fleet),
            web_config: Some(format!("basic_auth_users:\n  rocetop: '{hash}'\n")),
            auth: Some(basic.clone()),
            ..prom::Options::default()
        },
    );
    // The server does guard: the test's own unauthenticated request is refused.
    assert_eq!(prom::get(server.port, "/-/ready", None).0, 401);

    let guarded = |name: &str, pw: &str| {
        format!(
            "[[prometheus]]\nname = \"{name}\"\nurl = \"http://127.0.0.1:{}\"\n\
             basic_user = \"rocetop\"\nbasic_password_command = \"printf %s '{pw}'\"\n",
            server.port
        )
    };
    let cfg = config(&format!(
        "{}{}{}",
        source(server.port, ""),
        guarded("wrong", "nope"),
        guarded("right", "s3cret pw")
    ));
    let mut store = Store::new(3_600_000, 100);
    let t0 = (start + 10 * 60) * 1000 + 7_000;
    let polls: Vec<_> = (0..3)
        .map(|i| past_source(&cfg, i, &mut store, t0).1)
        .collect();
    let (none, wrong, right) = futures::join!(
        poll_once(&polls[0]),
        poll_once(&polls[1]),
        poll_once(&polls[2])
    );
    for (who, c) in [("no credentials", &none), ("a wrong password", &wrong)] {
        let e = c
            .error
            .as_deref()
            .unwrap_or_else(|| panic!("{who}: no error"));
        assert!(
            e.starts_with("auth failed: HTTP 401 from 127.0.0.1:")
                && e.contains("basic_user/basic_password_env"),
            "{who}: {e}"
        );
        assert!(c.parsed.samples.is_empty(), "{who}");
    }
    assert_eq!(right.error, None);
    assert!(
        right
            .parsed
            .find(
                &names::rdma_counter("np_cnp_sent"),
                &[("node", "gpu0002"), ("device", "mlx5_1")]
            )
            .is_some(),
        "the right password reads the fleet: {:?}",
        right.parsed.notes
    );
    // The source's error is what the health bar shows; the password is in no message.
    none.apply(&mut store);
    let h = store.source(polls[0].id).expect("source");
    assert!(h.last_error.as_deref().is_some_and(|e| e.contains("401")));
    assert!(!format!("{:?}{:?}", wrong.error, right.parsed.notes).contains("s3cret"));
}

/// `Basic base64(user:password)` for the test's own readiness checks.
fn base64_basic(user: &str, pw: &str) -> String {
    use base64::Engine as _;
    let b = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pw}"));
    format!("Basic {b}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_that_forbids_is_an_auth_error_too() {
    // Prometheus itself answers 401; a proxy in front of it (oauth2-proxy, nginx) may say 403.
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut r = BufReader::new(s.try_clone().expect("clone"));
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let mut s = s;
            let _ = s.write_all(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nforbidden");
        }
    });
    let cfg = config(&source(port, "bearer_token_command = \"echo t0ken\""));
    let mut store = Store::new(3_600_000, 100);
    let (_, src) = past_source(&cfg, 0, &mut store, 1_700_000_000_000);
    let e = poll_once(&src).await.error.expect("refused");
    assert!(
        e.starts_with(&format!("auth failed: HTTP 403 from 127.0.0.1:{port}")),
        "{e}"
    );
    assert!(!e.contains("t0ken"));
}

/// A loopback listener that accepts every connection and never answers.
fn silent_listener() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for s in l.incoming().flatten() {
            held.push(s);
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_and_the_other_source_keeps_going() {
    let Some(bins) = prometheus("prometheus_faults::slow") else {
        return;
    };
    let start = three_hours_ago();
    let server = prom::start(
        &bins,
        &Fleet {
            nodes: 4,
            start,
            faults: false,
        },
    );
    let slow = silent_listener();
    let cfg = config(&format!(
        "{}[[prometheus]]\nname = \"slow\"\nurl = \"http://127.0.0.1:{slow}\"\ntimeout = \"2s\"\n",
        source(server.port, "")
    ));
    let mut store = Store::new(3_600_000, 100);
    let t0 = (start + 10 * 60) * 1000 + 7_000;
    let (_, fleet) = past_source(&cfg, 0, &mut store, t0);
    let (_, stuck) = past_source(&cfg, 1, &mut store, t0);
    let (good, bad) = futures::join!(poll_once(&fleet), poll_once(&stuck));
    assert_eq!(
        bad.error.as_deref(),
        Some("timed out after 2 s"),
        "the configured timeout, named"
    );
    assert!(bad.parsed.samples.is_empty());
    assert_eq!(good.error, None, "the other source is not held up");
    assert!(!good.parsed.samples.is_empty());
}

/// A loopback server answering every request with `total` bytes of JSON-ish body in the given
/// framing; returns its port and how many body bytes it managed to write before the client hung
/// up.
fn flood(total: usize, chunked: bool) -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let written = Arc::new(AtomicUsize::new(0));
    let w = written.clone();
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let mut r = BufReader::new(s.try_clone().expect("clone"));
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let mut s = s;
            let head = if chunked {
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_string()
            } else {
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {total}\r\n\r\n"
                )
            };
            if s.write_all(head.as_bytes()).is_err() {
                continue;
            }
            let block = vec![b' '; 64 << 10];
            let mut sent = 0;
            while sent < total {
                let ok = if chunked {
                    s.write_all(format!("{:x}\r\n", block.len()).as_bytes())
                        .and_then(|_| s.write_all(&block))
                        .and_then(|_| s.write_all(b"\r\n"))
                } else {
                    s.write_all(&block)
                };
                if ok.is_err() {
                    break;
                }
                sent += block.len();
                w.store(sent, Ordering::SeqCst);
            }
        }
    });
    (port, written)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mb_answer_is_refused_at_the_cap_which_the_error_names() {
    const FIFTY_MB: usize = 50 << 20;
    // Declared length: refused before one body byte is read.
    let (port, written) = flood(FIFTY_MB, false);
    let cfg = config(&source(port, ""));
    let mut store = Store::new(3_600_000, 100);
    let (_, src) = past_source(&cfg, 0, &mut store, 1_700_000_000_000);
    let c = poll_once(&src).await;
    let e = c.error.expect("refused");
    assert_eq!(
        e,
        format!(
            "127.0.0.1:{port}: a reply of {FIFTY_MB} bytes, over the cap of 33554432 bytes \
             (poll.max_answer_bytes): narrow `selector` or raise the cap"
        )
    );
    assert!(
        written.load(Ordering::SeqCst) < FIFTY_MB,
        "the client hung up"
    );

    // Chunked (no length up front), with a 1 MiB cap: reading stops at the cap.
    let (port, written) = flood(FIFTY_MB, true);
    let cfg = config(&format!(
        "[poll]\nmax_answer_bytes = 1048576\n{}",
        source(port, "")
    ));
    let (_, src) = past_source(&cfg, 0, &mut store, 1_700_000_000_000);
    let c = poll_once(&src).await;
    let e = c.error.expect("refused");
    assert!(
        e.contains("over the cap of 1048576 bytes (poll.max_answer_bytes)"),
        "{e}"
    );
    // What the server got out before the hang-up is the cap plus socket buffers, not 50 MB.
    let w = written.load(Ordering::SeqCst);
    assert!(w < FIFTY_MB, "{w} bytes written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_answer_over_a_small_cap_is_refused_and_says_which_cap() {
    let Some(bins) = prometheus("prometheus_faults::cap") else {
        return;
    };
    let start = three_hours_ago();
    // 200 nodes: each profile's answer is well over 64 KiB; the detection answer is not.
    let server = prom::start(
        &bins,
        &Fleet {
            nodes: 200,
            start,
            faults: false,
        },
    );
    let cfg = config(&format!(
        "[poll]\nmax_answer_bytes = 65536\n{}",
        source(server.port, "")
    ));
    let mut store = Store::new(3_600_000, 100);
    let (_, src) = past_source(&cfg, 0, &mut store, (start + 600) * 1000 + 7_000);
    let c = poll_once(&src).await;
    let e = c.error.expect("every profile's answer is over the cap");
    assert!(
        e.contains("over the cap of 65536 bytes (poll.max_answer_bytes)"),
        "{e}"
    );
    assert!(c.parsed.samples.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vanished_node_inf_and_duplicate_series_invent_no_zeros() {
    let Some(bins) = prometheus("prometheus_faults::bad_data") else {
        return;
    };
    let start = three_hours_ago();
    let fleet = Fleet {
        nodes: 8,
        start,
        faults: true,
    };
    let server = prom::start(&bins, &fleet);
    let cfg = config(&source(server.port, ""));
    let mut store = Store::new(24 * 3600 * 1000, 4096);
    // Polls at minutes 15:00, 15:15, ... 17:00; node 3's last scrape is at 16:00 (poll 4).
    let t0 = (start + 15 * 60) * 1000 + 7_000;
    let (now, src) = past_source(&cfg, 0, &mut store, t0);
    let cnp = names::rdma_counter("np_cnp_sent");
    let ecn = names::rdma_counter("np_ecn_marked_roce_packets");
    let gone_poll = (fleet.gone_at() - start - 15 * 60) / STEP_S;
    assert_eq!(gone_poll, 4);
    for k in 0..9 {
        now.store(t0 + k * STEP_S * 1000, Ordering::SeqCst);
        let c = poll_once(&src).await;
        assert_eq!(c.error, None, "poll {k}");
        let notes = c.parsed.notes.clone();
        let missed = notes
            .iter()
            .find(|n| n.contains("missed the newest scrape"));
        c.apply(&mut store);
        // +Inf is refused every poll, with a note; never a value.
        assert!(
            notes.iter().any(|n| n.contains("refused (NaN, ±Inf")),
            "poll {k}: {notes:?}"
        );
        let node3 = rate_sum(&store, &cnp, &[("node", "gpu0003")]);
        if k == 0 {
            assert_eq!(node3, None, "one sample: no rate yet");
        } else if k <= gone_poll {
            assert_eq!(
                node3,
                Some((Fleet::cnp_rate(3, 0) + Fleet::cnp_rate(3, 1)) as f64),
                "poll {k}"
            );
        } else {
            // Gone: no rate at all, never the 0 that re-reading its last value would give.
            assert_eq!(node3, None, "poll {k}: a vanished node has no rate");
            let pause = rate_sum(&store, names::NIC_PFC_RX_PAUSE, &[("node", "gpu0003")]);
            assert_eq!(pause, None, "poll {k}");
        }
        if k == gone_poll + 1 {
            // Its 2 CNP and 2 pause series are left out, and the health bar says why.
            assert_eq!(
                missed.map(String::as_str),
                Some("4 series missed the newest scrape (target down or series stale): not shown"),
                "{notes:?}"
            );
        }
        if k <= gone_poll {
            assert_eq!(missed, None, "poll {k}: {notes:?}");
        }
        if k >= 1 {
            // The other nodes go on at their rates.
            for i in [1usize, 5, 6, 7] {
                assert_eq!(
                    rate_sum(
                        &store,
                        &cnp,
                        &[("node", &Fleet::node(i)), ("device", "mlx5_1")]
                    ),
                    Some(Fleet::cnp_rate(i, 1) as f64),
                    "poll {k} node {i}: one value per key (node 1 is in both exporters)"
                );
            }
            assert_eq!(
                rate_sum(&store, &ecn, &[("node", "gpu0004"), ("device", "mlx5_0")]),
                None,
                "+Inf is missing, not 0"
            );
            assert_eq!(
                rate_sum(&store, &ecn, &[("node", "gpu0004"), ("device", "mlx5_1")]),
                Some(Fleet::ecn_rate(4, 1) as f64)
            );
        }
    }
    // Node 1 is in both exporters: one series per key, kept once.
    assert_eq!(
        store.select(&cnp, &[("node", "gpu0001")]).count(),
        2,
        "one series per device"
    );
    // The vanished node keeps its row (the fleet still knows it), with no rates.
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let at = t0 + 8 * STEP_S * 1000;
    let app = rocetop::app::App::new(cfg.clone(), store, theme, at);
    let rows = rocetop::app::vm::congestion::view(&app.ctx(rocetop::app::Tab::Congestion)).rows;
    assert_eq!(rows.len(), 16, "8 nodes × 2 devices");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selector_the_server_cannot_parse_shows_its_own_message() {
    let Some(bins) = prometheus("prometheus_faults::bad_selector") else {
        return;
    };
    let start = three_hours_ago();
    let server = prom::start(
        &bins,
        &Fleet {
            nodes: 2,
            start,
            faults: false,
        },
    );
    // Braces balanced (the config accepts it), the value unquoted (PromQL does not).
    let cfg = config(&source(server.port, "selector = '{cluster=a}'"));
    let mut store = Store::new(3_600_000, 100);
    let (_, src) = past_source(&cfg, 0, &mut store, (start + 600) * 1000 + 7_000);
    let c = poll_once(&src).await;
    let e = c.error.expect("a bad query is an error");
    assert!(
        e.starts_with("Prometheus: ") && e.contains("parse error"),
        "{e}"
    );
    assert!(c.parsed.samples.is_empty());
}

#[test]
fn the_binary_fed_a_50_mb_answer_stays_within_its_cap_in_memory() {
    const FIFTY_MB: usize = 50 << 20;
    let test = "prometheus_faults::cap_memory";
    if !std::path::Path::new("/usr/bin/time").exists() {
        skip::skip(
            test,
            skip::Lack::Installed("time"),
            "peak RSS is measured with GNU time",
        );
        return;
    }
    let (port, _) = flood(FIFTY_MB, true);
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = dir.path().join("fleet.toml");
    std::fs::write(
        &cfg,
        format!("[poll]\nmax_answer_bytes = 1048576\n{}", source(port, "")),
    )
    .expect("config");
    let rss = dir.path().join("rss");
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M", "-o"])
        .arg(&rss)
        .arg(env!("CARGO_BIN_EXE_rocetop"))
        .arg("--config")
        .arg(&cfg)
        .args(["snapshot", "--format", "json"])
        .output()
        .expect("rocetop snapshot");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("fleet: 127.0.0.1:") && err.contains("over the cap of 1048576 bytes"),
        "{err}"
    );
    // GNU time writes "Command exited with non-zero status 1" first when it did.
    let peak_kib: u64 = std::fs::read_to_string(&rss)
        .expect("rss")
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .expect("KiB");
    // Reading the answer whole would take more than the answer itself; stopping at the cap takes
    // the process' usual size plus about the cap.
    assert!(
        peak_kib * 1024 < FIFTY_MB as u64,
        "peak RSS {peak_kib} KiB for a 50 MB answer capped at 1 MiB"
    );
    eprintln!("peak RSS {peak_kib} KiB");
}
