//! Fleet mode against bad input: the real Debian Prometheus behind basic auth, a
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
use rocetop::metrics::query::{latest, rate_sum};
use rocetop::metrics::{Store, names};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

/// The binary under test; `ROCETOP_TEST_BIN` points the tests that run it at another build (to
/// check that they fail on the one before the fixes).
fn bin() -> String {
    std::env::var("ROCETOP_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_rocetop").to_string())
}

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

// ---- a hostile Prometheus API on 127.0.0.1 ---------------------------------------------------

/// One request the hostile server got: its path, its form (decoded) and its head as sent.
struct Asked {
    path: String,
    form: std::collections::HashMap<String, String>,
    head: String,
}

/// What a request asks, as the collector asks it.
enum Ask {
    /// `count by (__name__)(...)`.
    Detect,
    /// A profile's range selector evaluated at `t` (s).
    Poll { t: f64 },
    /// `query_range` from `start` to `end` (s) every `step` s.
    Range { start: f64, end: f64, step: f64 },
}

impl Asked {
    fn num(&self, k: &str) -> f64 {
        self.form
            .get(k)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {k} in {:?}", self.form))
    }

    fn ask(&self) -> Ask {
        let q = self.form.get("query").map_or("", String::as_str);
        if self.path.ends_with("/query_range") {
            Ask::Range {
                start: self.num("start"),
                end: self.num("end"),
                step: self.num("step"),
            }
        } else if q.starts_with("count by (__name__)") {
            Ask::Detect
        } else {
            Ask::Poll {
                t: self.num("time"),
            }
        }
    }
}

/// `application/x-www-form-urlencoded` decoded.
fn form_decode(s: &str) -> std::collections::HashMap<String, String> {
    let dec = |v: &str| {
        let b = v.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            match b[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < b.len() => {
                    let h = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
                    out.push(u8::from_str_radix(h, 16).unwrap_or(b'?'));
                    i += 2;
                }
                c => out.push(c),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    s.split('&')
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (dec(k), dec(v)))
        .collect()
}

type Answer = dyn Fn(&Asked) -> String + Send + Sync;

/// A loopback server answering every request with the JSON `answer` gives (200), each request
/// kept (head and form) in the order it came.
fn hostile_api(answer: Box<Answer>) -> (u16, Arc<std::sync::Mutex<Vec<Asked>>>) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (kept, answer) = (asked.clone(), Arc::new(answer));
    std::thread::spawn(move || {
        for s in l.incoming().flatten() {
            let (kept, answer) = (kept.clone(), answer.clone());
            std::thread::spawn(move || {
                use std::io::Read as _;
                let mut r = BufReader::new(s.try_clone().expect("clone"));
                let (mut head, mut line) = (String::new(), String::new());
                while r.read_line(&mut line).is_ok_and(|n| n > 0) && line.trim_end() != "" {
                    head.push_str(&line);
                    line.clear();
                }
                let len = head
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let target = head.split(' ').nth(1).unwrap_or("").to_string();
                let (path, query) = target.split_once('?').unwrap_or((&target, ""));
                let form = if len > 0 {
                    String::from_utf8_lossy(&body).into_owned()
                } else {
                    query.to_string()
                };
                let a = Asked {
                    path: path.to_string(),
                    form: form_decode(&form),
                    head,
                };
                let json = answer(&a);
                kept.lock().expect("lock").push(a);
                let mut s = s;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                     Connection: close\r\n\r\n{json}",
                    json.len()
                );
            });
        }
    });
    (port, asked)
}

/// An API answer holding `items` (series objects).
fn answer_of(result_type: &str, items: &[serde_json::Value]) -> String {
    serde_json::json!({"status": "success", "data": {"resultType": result_type, "result": items}})
        .to_string()
}

/// The detection answer: one series per metric name.
fn detected(names_: &[&str]) -> String {
    let items: Vec<_> = names_
        .iter()
        .map(|n| serde_json::json!({"metric": {"__name__": n}, "value": [0, "1"]}))
        .collect();
    answer_of("vector", &items)
}

/// A range-vector series: its labels and its samples (s, value).
fn series_of(labels: &serde_json::Value, points: &[(f64, String)]) -> serde_json::Value {
    let values: Vec<_> = points
        .iter()
        .map(|(t, v)| serde_json::json!([t, v]))
        .collect();
    serde_json::json!({"metric": labels, "values": values})
}

/// The steps of a `query_range` (s).
fn steps(start: f64, end: f64, step: f64) -> Vec<f64> {
    let n = ((end - start) / step).round() as i64;
    (0..=n).map(|k| start + k as f64 * step).collect()
}

fn pause_labels(node: &str) -> serde_json::Value {
    serde_json::json!({"__name__": names::NIC_PFC_RX_PAUSE, "node": node, "netdev": "ens1f0", "priority": "3"})
}

const TEN_YEARS_S: f64 = 10.0 * 365.0 * 86_400.0;

/// A history point ten years ahead (and a poll's sample there) would move the source's clock:
/// every later poll "earlier than the last" and dropped, while the source reads up. Refused and
/// counted: the polls after it are stored at their own times with the right rates, and the
/// source's notes say which answers could not be placed in time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_history_point_ten_years_ahead_is_refused_and_the_fleet_keeps_polling() {
    let (port, _) = hostile_api(Box::new(|a: &Asked| match a.ask() {
        Ask::Detect => detected(&[names::NIC_PFC_RX_PAUSE]),
        // gpu1 and gpu2 count 10 pause frames a second; gpu3's newest sample is in the future.
        Ask::Poll { t } => answer_of(
            "matrix",
            &[
                series_of(&pause_labels("gpu1"), &[(t, format!("{}", 10.0 * t))]),
                series_of(&pause_labels("gpu2"), &[(t, format!("{}", 10.0 * t))]),
                series_of(
                    &pause_labels("gpu3"),
                    &[(t, "1".into()), (t + TEN_YEARS_S, "2".into())],
                ),
            ],
        ),
        Ask::Range { start, end, step } => {
            let at = |ts: &[f64]| -> Vec<(f64, String)> {
                ts.iter().map(|t| (*t, format!("{}", 10.0 * t))).collect()
            };
            let mut ahead = at(&steps(start, end, step));
            ahead.push((end + TEN_YEARS_S, format!("{}", 10.0 * (end + TEN_YEARS_S))));
            answer_of(
                "matrix",
                &[
                    series_of(&pause_labels("gpu1"), &ahead),
                    series_of(&pause_labels("gpu2"), &at(&steps(start, end, step))),
                ],
            )
        }
    }));
    let cfg = config(&source(port, ""));
    let p = &cfg.prometheus[0];
    let t0 = 1_700_000_000_000 + 7_000;
    let (now, clock) = clock(t0);
    let transport = PromTransport::new(p, clock)
        .expect("transport")
        .with_history(std::time::Duration::from_secs(600));
    let mut store = Store::new(3_600_000, 4096);
    let src = fleet_source(p, &mut store, Arc::new(transport));
    let first = poll_once(&src).await;
    assert_eq!(first.error, None);
    let said = format!(
        "1 history points outside the range asked ({}..={} ms): the server's clock or data is \
         off, so they cannot be placed in time: refused",
        first.at - 600_000,
        first.at - 15_000
    );
    assert!(
        first.parsed.notes.contains(&said),
        "{:?}",
        first.parsed.notes
    );
    assert_eq!(first.history.times.last(), Some(&(first.at - 15_000)));
    first.apply(&mut store);
    let mut ats = vec![first.at];
    for k in 1..=3 {
        now.store(t0 + k * 15_000, Ordering::SeqCst);
        let c = poll_once(&src).await;
        assert_eq!(c.error, None);
        assert!(
            c.parsed.notes.iter().any(|n| n
                .starts_with("1 series have samples later than the time asked")
                && n.contains("cannot be placed in time")),
            "{:?}",
            c.parsed.notes
        );
        ats.push(c.at);
        c.apply(&mut store);
        for node in ["gpu1", "gpu2"] {
            let l = [("node", node)];
            assert_eq!(
                latest(&store, names::NIC_PFC_RX_PAUSE, &l).map(|(t, _)| t),
                Some(c.at),
                "poll {k}, {node}: stored at its own time"
            );
            assert_eq!(
                rate_sum(&store, names::NIC_PFC_RX_PAUSE, &l),
                Some(10.0),
                "poll {k}, {node}"
            );
        }
        assert_eq!(
            latest(&store, names::NIC_PFC_RX_PAUSE, &[("node", "gpu3")]),
            None,
            "a sample that cannot be placed in time is not shown"
        );
    }
    assert!(ats.windows(2).all(|w| w[1] - w[0] == 15_000), "{ats:?}");
    let h = store.source(src.id).expect("source");
    assert!(
        h.notes
            .iter()
            .any(|n| n.contains("cannot be placed in time")),
        "the source says so: {:?}",
        h.notes
    );
}

/// A fleet counter at or beyond 2^64 is refused and counted: missing, never u64::MAX (which
/// made a rate of ~10^18 a second on the screen); the other nodes keep their rates.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_counter_beyond_2_64_is_refused_not_saturated() {
    // From the second poll on, gpu1's counter reads 10^20.
    let polls = AtomicUsize::new(0);
    let (port, _) = hostile_api(Box::new(move |a: &Asked| match a.ask() {
        Ask::Detect => detected(&[names::NIC_PFC_RX_PAUSE]),
        Ask::Poll { t } => {
            let big = if polls.fetch_add(1, Ordering::SeqCst) >= 1 {
                "1e20".to_string()
            } else {
                "100".into()
            };
            answer_of(
                "matrix",
                &[
                    series_of(&pause_labels("gpu1"), &[(t, big)]),
                    series_of(&pause_labels("gpu2"), &[(t, format!("{}", 3.0 * t))]),
                ],
            )
        }
        Ask::Range { .. } => answer_of("matrix", &[]),
    }));
    let cfg = config(&source(port, ""));
    let mut store = Store::new(3_600_000, 100);
    let t0 = 1_700_000_000_000 + 7_000;
    let (now, src) = past_source(&cfg, 0, &mut store, t0);
    let mut first_at = None;
    for k in 0..3 {
        now.store(t0 + k * 15_000, Ordering::SeqCst);
        let c = poll_once(&src).await;
        assert_eq!(c.error, None);
        let beyond = c.parsed.notes.iter().any(|n| {
            n == "1 samples refused (a counter at or beyond 2^64: saturated, no counter holds it)"
        });
        assert_eq!(beyond, k >= 1, "poll {k}: {:?}", c.parsed.notes);
        first_at.get_or_insert(c.at);
        c.apply(&mut store);
        let gpu1 = rate_sum(&store, names::NIC_PFC_RX_PAUSE, &[("node", "gpu1")]);
        assert_eq!(gpu1, None, "poll {k}: missing, never a giant rate");
        if k >= 1 {
            assert_eq!(
                latest(&store, names::NIC_PFC_RX_PAUSE, &[("node", "gpu1")]).map(|(t, _)| t),
                first_at,
                "poll {k}: the refused value is not stored"
            );
            assert_eq!(
                rate_sum(&store, names::NIC_PFC_RX_PAUSE, &[("node", "gpu2")]),
                Some(3.0)
            );
        }
    }
}

/// A bearer token with a CR or LF would end the Authorization header and add its own: refused
/// where it is read, with where it came from and not the token, before any request is sent (the
/// server never sees the injected header), in the library and in the binary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bearer_token_with_a_line_break_is_refused_before_any_request() {
    let (port, asked) = hostile_api(Box::new(|a: &Asked| match a.ask() {
        Ask::Detect => detected(&[names::NIC_PFC_RX_PAUSE]),
        _ => answer_of("matrix", &[]),
    }));
    // A lone CR survives the first line of a command's output.
    let cfg = config(&source(
        port,
        "bearer_token_command = \"printf 'tok3n\\\\rX-Injected: 1'\"",
    ));
    let mut store = Store::new(3_600_000, 100);
    let (_, src) = past_source(&cfg, 0, &mut store, 1_700_000_000_000);
    let e = poll_once(&src).await.error.expect("refused");
    assert_eq!(
        e,
        "auth failed: fleet: the bearer token from command `printf 'tok3n\\rX-Injected: 1'` \
         holds a line break (CR or LF): refused, as it would add request headers of its own"
    );
    // CR LF from the environment, through the binary.
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("c.toml");
    std::fs::write(
        &file,
        source(
            port,
            "bearer_token_env = \"ROCETOP_TEST_TOKEN\"\nstep = \"1s\"",
        ),
    )
    .expect("config");
    let out = std::process::Command::new(bin())
        .arg("--config")
        .arg(&file)
        .args(["snapshot", "--format", "json"])
        .env("ROCETOP_TEST_TOKEN", "tok3n\r\nX-Injected: 1")
        .output()
        .expect("rocetop snapshot");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("the bearer token from $ROCETOP_TEST_TOKEN holds a line break (CR or LF)"),
        "{err}"
    );
    assert!(!err.contains("tok3n"), "{err}");
    let heads: Vec<String> = asked
        .lock()
        .expect("lock")
        .iter()
        .map(|a| a.head.clone())
        .collect();
    assert!(
        heads.iter().all(|h| !h.contains("X-Injected")),
        "an injected header reached the server: {heads:?}"
    );
}

/// Ends the child it holds, also when the test panics.
struct Reaper(std::process::Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A fleet of three healthy nodes (gpu1..gpu3, 10 pause frames a second) and, from gpu9, two
/// series whose `__name__` spells more exposition lines: a series of its own, and a line no
/// parser reads (which fails the whole scrape).
fn forging_fleet() -> Box<Answer> {
    let forged = [
        serde_json::json!({
            "__name__": format!(
                "{}{{node=\"evil\",netdev=\"e\",priority=\"3\"}} 1\nrocetop_spoofed_total 666\n{}",
                names::NIC_PFC_RX_PAUSE,
                names::NIC_PFC_TX_PAUSE
            ),
            "node": "gpu9", "netdev": "ens1f0", "priority": "3"
        }),
        serde_json::json!({
            "__name__": "rocetop_rdma_np_cnp_sent\nrocetop_spoofed_total{node=\"gpu1\"} 1\n_total",
            "node": "gpu9", "device": "mlx5_0", "rdma_port": "1"
        }),
    ];
    Box::new(move |a: &Asked| {
        let all = |points: &dyn Fn() -> Vec<(f64, String)>| -> Vec<serde_json::Value> {
            ["gpu1", "gpu2", "gpu3"]
                .iter()
                .map(|n| pause_labels(n))
                .chain(forged.iter().cloned())
                .map(|l| series_of(&l, &points()))
                .collect()
        };
        let count = |t: f64| format!("{}", (10.0 * t).round());
        match a.ask() {
            Ask::Detect => detected(&[names::NIC_PFC_RX_PAUSE]),
            Ask::Poll { t } => answer_of("matrix", &all(&|| vec![(t, count(t))])),
            Ask::Range { start, end, step } => answer_of(
                "matrix",
                &all(&|| {
                    steps(start, end, step)
                        .into_iter()
                        .map(|t| (t, count(t)))
                        .collect()
                }),
            ),
        }
    })
}

/// `promtool check metrics` on `text` (promtool is checked for by the caller).
fn promtool_check(promtool: &std::path::Path, text: &str) {
    let mut child = std::process::Command::new(promtool)
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("feed promtool");
    let out = child.wait_with_output().expect("promtool");
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `__name__` holding newlines reached `rocetop export` as it was: a real Prometheus scraping
/// it read the spoofed series, or failed the whole scrape and every healthy series was gone.
/// Refused where it is read and counted in the source's notes (never shown): the export passes
/// `promtool check metrics`, and the real Prometheus scraping it has the target up, every healthy
/// series, and nothing the names spelled.
#[test]
fn forged_metric_names_never_reach_a_real_prometheus_scraping_export() {
    let test = "prometheus_faults::forged_names";
    let Some(bins) = prometheus(test) else { return };
    let (api, _) = hostile_api(forging_fleet());
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("c.toml");
    std::fs::write(&file, source(api, "step = \"1s\"")).expect("config");
    let mut child = Reaper(
        std::process::Command::new(bin())
            .arg("--config")
            .arg(&file)
            .args(["export", "--listen", "127.0.0.1:0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("rocetop export"),
    );
    let mut err = BufReader::new(child.0.stderr.take().expect("stderr"));
    let mut line = String::new();
    err.read_line(&mut line).expect("first line");
    let port: u16 = line
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no loopback address in {line:?}"));
    std::thread::spawn(move || for _ in err.lines() {});
    let healthy = |text: &str| {
        ["gpu1", "gpu2", "gpu3"].iter().all(|n| {
            text.lines().any(|l| {
                l.starts_with(&format!("{}{{", names::NIC_PFC_RX_PAUSE))
                    && l.contains(&format!("node=\"{n}\""))
            })
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let text = loop {
        let (_, t) = prom::get(port, "/metrics", None);
        if healthy(&t) {
            break t;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "export never served the fleet: {t}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        !text.contains("spoofed") && !text.contains("evil"),
        "a forged name reached the export:\n{text}"
    );
    promtool_check(&bins.1, &text);

    let server = prom::start_with(
        &bins,
        &prom::Options {
            scrape: vec![format!("127.0.0.1:{port}")],
            ..prom::Options::default()
        },
    );
    let value = |promql: &str| -> Vec<(String, String)> {
        let (_, body) = prom::query(server.port, promql, None);
        let v: serde_json::Value = serde_json::from_str(&body).expect("an API answer");
        v["data"]["result"]
            .as_array()
            .expect("a vector")
            .iter()
            .map(|s| {
                (
                    s["metric"].to_string(),
                    s["value"][1].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    // Three scrapes at 1 s, then what the server holds.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while value("count_over_time(up{job=\"rocetop\"}[1m])")
        .first()
        .is_none_or(|(_, n)| n.parse::<u32>().unwrap_or(0) < 3)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "never scraped: {}",
            server.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let up = value("up{job=\"rocetop\"}");
    assert_eq!(up.len(), 1, "{up:?}");
    assert_eq!(up[0].1, "1", "the scrape succeeded: {up:?}");
    let nodes = value(&format!("count by (node) ({})", names::NIC_PFC_RX_PAUSE));
    let nodes: Vec<&str> = nodes.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        nodes.len(),
        3,
        "every healthy node, nothing else: {nodes:?}"
    );
    assert!(value("{__name__=~\"rocetop_spoofed.*\"}").is_empty());
    assert!(value(&format!("{}{{node=\"evil\"}}", names::NIC_PFC_RX_PAUSE)).is_empty());
    assert_eq!(value("rocetop_source_up{source=\"fleet\"}")[0].1, "1");

    // The refusal is counted where the user looks (the source's notes), the names never shown.
    let out = std::process::Command::new(bin())
        .arg("--config")
        .arg(&file)
        .args(["snapshot", "--format", "table"])
        .output()
        .expect("rocetop snapshot");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{table}");
    assert!(
        table.contains(
            "note: fleet: 2 series refused: a metric name outside the exposition format \
             ([a-zA-Z_:][a-zA-Z0-9_:]*)"
        ),
        "{table}"
    );
    assert!(
        !table.contains("spoofed") && !table.contains("evil"),
        "{table}"
    );
}

/// The node names a fleet's labels give, with a line break, a tab, a BEL and a zero-width space
/// in them: `snapshot` and `check` print each escaped, so no forged row stands in the table and
/// `gpu1` + U+200B does not pass for `gpu1`; JSON keeps the value (`\u200b`), its bytes safe too.
#[test]
fn names_with_line_breaks_and_zero_width_characters_print_escaped() {
    let nodes = [
        "gpu1",
        "gpu1\u{200b}",
        "gpu2\nforged-row mlx5_9",
        "gpu3\tx",
        "gpu4\u{7}",
    ];
    let (api, _) = hostile_api(Box::new(move |a: &Asked| {
        let all = |t: f64| -> Vec<serde_json::Value> {
            nodes
                .iter()
                .map(|n| {
                    let l = serde_json::json!({"__name__": names::rdma_counter("np_cnp_sent"), "node": n, "device": "mlx5_0", "rdma_port": "1"});
                    series_of(&l, &[(t, format!("{}", (5.0 * t).round()))])
                })
                .collect()
        };
        match a.ask() {
            Ask::Detect => detected(&[names::rdma_counter("np_cnp_sent").as_str()]),
            Ask::Poll { t } => answer_of("matrix", &all(t)),
            Ask::Range { .. } => answer_of("matrix", &[]),
        }
    }));
    let dir = tempfile::tempdir().expect("tmp");
    let file = dir.path().join("c.toml");
    std::fs::write(&file, source(api, "step = \"1s\"")).expect("config");
    let run = |args: &[&str]| {
        let o = std::process::Command::new(bin())
            .arg("--config")
            .arg(&file)
            .args(args)
            .output()
            .expect("rocetop");
        // Nothing a terminal drops or obeys: no control but the line ends, no U+200B.
        for bytes in [&o.stdout, &o.stderr] {
            let text = String::from_utf8_lossy(bytes);
            assert!(
                !text
                    .chars()
                    .any(|c| (c.is_control() && c != '\n') || c == '\u{200b}'),
                "{args:?}: {text:?}"
            );
        }
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let table = run(&["snapshot", "--format", "table"]);
    assert!(
        !table.lines().any(|l| l.starts_with("forged-row")),
        "a remote name made a row of its own:\n{table}"
    );
    for shown in [
        "gpu1\\u{200b} ",
        "gpu2\\x0aforged-row mlx5_9",
        "gpu3\\x09x",
        "gpu4\\x07",
    ] {
        assert!(table.contains(shown), "{shown}:\n{table}");
    }
    // Every node a row of its own in the NODES table, each as wide as the header says.
    let rows: Vec<&str> = table
        .lines()
        .skip_while(|l| !l.starts_with("NODES"))
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(rows.len(), nodes.len(), "{table}");
    let check = run(&["check"]);
    assert!(
        !check.lines().any(|l| l.starts_with("forged-row")),
        "{check}"
    );
    let json = run(&["snapshot", "--format", "json"]);
    assert!(json.contains("gpu1\\u200b"), "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert!(v.to_string().contains("gpu1\u{200b}"), "the value is kept");
}
