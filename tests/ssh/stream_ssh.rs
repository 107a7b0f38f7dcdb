//! The streaming node collector (`[poll] mode = "stream"`) against a real sshd on
//! 127.0.0.1 serving fake sysfs trees: it gives exactly what an exec poll gives, follows counter
//! resets and new devices, survives its loop being killed, carries a 1 MB frame and a 3 MB line,
//! and a slow reader holds the node back instead of growing memory.

use crate::sshd;

use rocetop::collect::poll::{Collected, KeepRaw, poll_once, spawn_all};
use rocetop::collect::source::{Source, SourceKind, build};
use rocetop::collect::ssh::{SshTarget, SshTransport};
use rocetop::collect::transport::{ByteEvent, Transport};
use rocetop::config::Config;
use rocetop::metrics::Store;
use sshd::Sshd;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

const PORT: &str = "class/infiniband/mlx5_0/ports/1";

fn write(root: &Path, rel: &str, v: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    let tmp = p.with_extension("tmp~");
    std::fs::write(&tmp, format!("{v}\n")).expect("write");
    std::fs::rename(&tmp, &p).expect("rename");
}

fn tree(root: &Path, cnp: u64) {
    write(
        root,
        &format!("{PORT}/hw_counters/np_cnp_sent"),
        &cnp.to_string(),
    );
    write(
        root,
        &format!("{PORT}/hw_counters/np_ecn_marked_roce_packets"),
        "77",
    );
    write(root, &format!("{PORT}/hw_counters/lifespan"), "10");
    write(root, &format!("{PORT}/counters/port_rcv_data"), "1000");
    write(root, &format!("{PORT}/gid_attrs/ndevs/0"), "lo");
    write(root, &format!("{PORT}/state"), "4: ACTIVE");
    write(root, "class/net/lo/statistics/rx_bytes", "4096");
}

fn config(s: &Sshd, kh: &Path, root: &Path, mode: &str) -> Config {
    Config::from_str(&config_text(s, kh, root, mode), "stream.toml", None).expect("config")
}

fn config_text(s: &Sshd, kh: &Path, root: &Path, mode: &str) -> String {
    format!(
        "[ssh]\nknown_hosts = \"{}\"\nssh_config = \"{}\"\nconnect_timeout = \"5s\"\ncommand_timeout = \"10s\"\n\
         [poll]\ninterval = \"1s\"\nmode = \"{mode}\"\n\
         [[node]]\nname = \"n1\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nidentity_file = \"{}\"\nsysfs_root = \"{}\"\n",
        kh.display(),
        kh.with_file_name("no_ssh_config").display(),
        s.port,
        sshd::current_user(),
        s.client_key.display(),
        root.display()
    )
}

fn sources(s: &Sshd, root: &Path, mode: &str) -> Vec<Arc<Source>> {
    let kh = s.path("known_hosts_stream");
    s.trust(&kh, "ed25519");
    let cfg = config(s, &kh, root, mode);
    let mut store = Store::new(600_000, 10_000);
    // The node's polls are under test; its rare topology read (exec, not streamed) is left out.
    build(&cfg, &mut store, rocetop::cmd::remote())
        .into_iter()
        .filter(|s| s.kind == SourceKind::Node)
        .map(Arc::new)
        .collect()
}

async fn next(rx: &mut mpsc::Receiver<Collected>) -> Collected {
    tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .expect("a poll within 60 s")
        .expect("collectors alive")
}

/// Polls until `ok` says this one is what the test waits for (generous deadline, no timing claim).
async fn until(rx: &mut mpsc::Receiver<Collected>, ok: impl Fn(&Collected) -> bool) -> Collected {
    let end = Instant::now() + Duration::from_secs(90);
    loop {
        assert!(Instant::now() < end, "the awaited poll never came");
        let c = next(rx).await;
        if ok(&c) {
            return c;
        }
    }
}

fn value(c: &Collected, suffix: &str, device: &str) -> Option<f64> {
    c.parsed
        .samples
        .iter()
        .find(|s| s.key.name.ends_with(suffix) && s.key.label("device") == Some(device))
        .map(|s| s.value.as_f64())
}

fn has_netdev(c: &Collected) -> bool {
    c.error.is_none()
        && c.raw
            .iter()
            .flatten()
            .any(|(_, t)| t.contains("class/net/lo/statistics"))
}

/// Stream mode's poll of a static tree equals exec mode's, samples and raw text alike.
async fn same_as_exec(s: &Sshd, root: &Path) -> Collected {
    let exec = &sources(s, root, "exec")[0];
    assert!(!exec.transport.streams_polls());
    let first = poll_once(exec).await;
    assert_eq!(first.error, None);
    // The first dump taught the netdev; the second poll reads it too.
    let want = poll_once(exec).await;
    assert!(has_netdev(&want), "exec poll reads the discovered netdev");

    let stream = sources(s, root, "stream");
    assert!(stream[0].transport.streams_polls());
    let (tx, mut rx) = mpsc::channel(4);
    let tasks = spawn_all(stream, tx, KeepRaw::always());
    let got = until(&mut rx, has_netdev).await;
    // And the next frame (a delta with nothing changed) still rebuilds the same dump.
    let again = next(&mut rx).await;
    assert_eq!(got.raw, want.raw);
    assert_eq!(got.parsed, want.parsed);
    assert_eq!(again.raw, want.raw);
    assert_eq!(again.parsed, want.parsed);

    drop(tasks);

    // Not recording: the same parse, the text dropped in the collector.
    let (tx, mut rx) = mpsc::channel(4);
    let _tasks = spawn_all(sources(s, root, "stream"), tx, KeepRaw::default());
    let bare = until(&mut rx, |c| c.error.is_none() && c.parsed == want.parsed).await;
    assert_eq!(bare.raw, None);
    want
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_and_exec_give_identical_samples() {
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("root");
    tree(dir.path(), 100);
    let want = same_as_exec(&s, dir.path()).await;
    assert_eq!(value(&want, "np_cnp_sent_total", "mlx5_0"), Some(100.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_megabyte_frame_comes_back_exact() {
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("root");
    tree(dir.path(), 5);
    // ~13 000 counters of ~90 bytes a line: a first frame over 1 MB.
    for i in 0..13_000 {
        write(
            dir.path(),
            &format!("{PORT}/hw_counters/synthetic_counter_with_a_long_name_{i:05}"),
            &(i * 7).to_string(),
        );
    }
    let want = same_as_exec(&s, dir.path()).await;
    let bytes: usize = want.raw.iter().flatten().map(|(_, t)| t.len()).sum();
    assert!(bytes > 1_000_000, "the dump is {bytes} bytes");
}

/// A 3 MB line in a counter file (under the 32 MiB answer cap): exec reads it, and so does the
/// stream (one limit for both modes; the stream had refused any line over 1 MiB and restarted).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_3_mb_line_reads_as_exec_reads_it() {
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("root");
    tree(dir.path(), 7);
    write(
        dir.path(),
        &format!("{PORT}/hw_counters/a_long_one"),
        &"9".repeat(3 << 20),
    );
    let want = same_as_exec(&s, dir.path()).await;
    assert_eq!(value(&want, "np_cnp_sent_total", "mlx5_0"), Some(7.0));
    let longest = (want.raw.iter().flatten())
        .flat_map(|(_, t)| t.lines().map(str::len))
        .max();
    assert!(longest.is_some_and(|n| n > 3 << 20), "{longest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_counter_reset_and_a_new_device_mid_stream() {
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("root");
    tree(dir.path(), 5_000);
    let (tx, mut rx) = mpsc::channel(4);
    let _tasks = spawn_all(sources(&s, dir.path(), "stream"), tx, KeepRaw::always());
    let c = until(&mut rx, |c| c.error.is_none()).await;
    assert_eq!(value(&c, "np_cnp_sent_total", "mlx5_0"), Some(5_000.0));

    // The counter goes back (driver reload) and a second device appears.
    tree(dir.path(), 3);
    let p2 = "class/infiniband/mlx5_1/ports/1";
    write(dir.path(), &format!("{p2}/hw_counters/np_cnp_sent"), "42");
    write(dir.path(), &format!("{p2}/state"), "4: ACTIVE");
    let c = until(&mut rx, |c| {
        value(c, "np_cnp_sent_total", "mlx5_1").is_some()
    })
    .await;
    assert_eq!(c.error, None);
    assert_eq!(value(&c, "np_cnp_sent_total", "mlx5_1"), Some(42.0));
    assert_eq!(value(&c, "np_cnp_sent_total", "mlx5_0"), Some(3.0));
    // And the value after the reset moves on like any other.
    write(dir.path(), &format!("{PORT}/hw_counters/np_cnp_sent"), "9");
    let c = until(&mut rx, |c| {
        value(c, "np_cnp_sent_total", "mlx5_0") != Some(3.0)
    })
    .await;
    assert_eq!(value(&c, "np_cnp_sent_total", "mlx5_0"), Some(9.0));
    assert_eq!(value(&c, "np_cnp_sent_total", "mlx5_1"), Some(42.0));
}

/// Processes of ours whose command line names `needle` (the node's loop: its script names the
/// test's own sysfs root), by pid.
fn pids_with(needle: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if pid != me && String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loop_killed_on_the_node_is_down_then_back() {
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("root");
    tree(dir.path(), 1);
    let root = dir.path().to_string_lossy().to_string();
    let (tx, mut rx) = mpsc::channel(4);
    let _tasks = spawn_all(sources(&s, dir.path(), "stream"), tx, KeepRaw::always());
    // After discovery's restart (the netdev learned), the stream that stays.
    until(&mut rx, has_netdev).await;
    until(&mut rx, has_netdev).await;

    let pids = pids_with(&format!("{root}/class"));
    assert!(!pids.is_empty(), "the node's loop runs");
    for p in pids {
        let _ = std::process::Command::new("kill")
            .arg("-9")
            .arg(p.to_string())
            .status();
    }
    let down = until(&mut rx, |c| c.error.is_some()).await;
    assert!(
        down.error.as_deref().unwrap_or("").contains("stream"),
        "{down:?}"
    );
    write(dir.path(), &format!("{PORT}/hw_counters/np_cnp_sent"), "2");
    let back = until(&mut rx, |c| c.error.is_none()).await;
    assert_eq!(value(&back, "np_cnp_sent_total", "mlx5_0"), Some(2.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_reader_holds_the_node_back_and_loses_nothing() {
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("dir");
    let progress = dir.path().join("progress");
    let kh = s.path("known_hosts_slow");
    s.trust(&kh, "ed25519");
    let mut t = SshTarget::new("n1", "127.0.0.1", s.port, &sshd::current_user());
    t.identity_files = vec![s.client_key.clone()];
    t.known_hosts = kh;
    t.agent_socket = None;
    let tr = SshTransport::new(t);
    // 2000 blocks of 64 KiB (128 MiB), each one counted on the node once written.
    let (blocks, size) = (2000u64, 65_536u64);
    let cmd = format!(
        "i=0; while [ $i -lt {blocks} ]; do head -c {size} /dev/zero; i=$((i+1)); echo $i > '{}'; done",
        progress.display()
    );
    // Never ticked: the command does not read stdin.
    let mut rx = tr.stream_shell(&cmd).await.expect("stream").rx;
    let read = || {
        std::fs::read_to_string(&progress)
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Not reading: wait until the node stops making progress (it is blocked on its write).
    let end = Instant::now() + Duration::from_secs(60);
    let mut last = u64::MAX;
    loop {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let now = read();
        if now == last || Instant::now() > end {
            break;
        }
        last = now;
    }
    let stalled = read();
    assert!(
        stalled < blocks / 10,
        "a reader that reads nothing let the node write {stalled} of {blocks} blocks"
    );
    // Now read everything: every byte arrives.
    let mut got = 0u64;
    loop {
        match tokio::time::timeout(Duration::from_secs(60), rx.recv()).await {
            Ok(Some(ByteEvent::Data(b))) => got += b.len() as u64,
            Ok(Some(ByteEvent::End(_)) | None) => break,
            Err(_) => panic!("the stream stalled after {got} bytes"),
        }
    }
    assert_eq!(got, blocks * size);
    assert_eq!(read(), blocks);
}

/// A streamed node's polls are timed as an exec poll is (`rocetop_poll_duration_seconds`, from
/// the tick to the parsed answer): `rocetop export` in stream mode, whose only exec poll is the
/// node's one topology read, counts more polls than that.
#[test]
fn export_times_streamed_polls() {
    use std::io::{BufRead, BufReader, Read, Write};
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("dir");
    tree(dir.path(), 1);
    let kh = s.path("known_hosts_timed");
    s.trust(&kh, "ed25519");
    let cfg = dir.path().join("stream.toml");
    std::fs::write(&cfg, config_text(&s, &kh, dir.path(), "stream")).expect("config");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["export", "--listen", "127.0.0.1:0", "--config"])
        .arg(&cfg)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn rocetop export");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("stderr"))
        .read_line(&mut line)
        .expect("first line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    let count = || {
        let mut c = std::net::TcpStream::connect(&addr).expect("connect");
        write!(c, "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n").expect("request");
        let mut body = String::new();
        c.read_to_string(&mut body).expect("response");
        body.lines()
            .find_map(|l| l.strip_prefix("rocetop_poll_duration_seconds_count "))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    let end = Instant::now() + Duration::from_secs(60);
    let mut got = None;
    while Instant::now() < end {
        got = count();
        if got.is_some_and(|n| n >= 4) {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(got.is_some_and(|n| n >= 4), "polls timed: {got:?}");
}
