//! What a node, switch, recording or peer sends cannot take the terminal, the memory or
//! the daemon. Each test feeds the binary the input that triggered a finding and checks its raw
//! output bytes, its exit, or its peak RSS (a generous bound, never a timing). 127.0.0.1 only,
//! port 0 only.

use crate::sshd;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The binary under test; `ROCETOP_TEST_BIN` points these tests at another build (to check that
/// they fail on the one before the fixes).
fn bin() -> String {
    std::env::var("ROCETOP_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_rocetop").to_string())
}
/// The device directory name that retitled the tmux pane in the adversarial run.
const HOSTILE_DEV: &str = "mlx5_\x1b]0;PWNDEV\x07";

struct Out {
    code: i32,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    /// Peak RSS of the child in KiB (from /usr/bin/time), when measured.
    peak_kib: Option<u64>,
}

impl Out {
    fn text(&self) -> String {
        format!(
            "{}{}",
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(&self.stderr)
        )
    }
}

/// Run the binary to its end (stdin from `input`); with `measure`, under `/usr/bin/time -f %M`.
fn run(args: &[&str], input: &[u8], measure: bool) -> Out {
    let dir = tempfile::tempdir().expect("tmp");
    let rss = dir.path().join("rss");
    let mut cmd = if measure {
        assert!(
            Path::new("/usr/bin/time").exists(),
            "peak RSS is measured with /usr/bin/time (GNU time): install it (apt-get install time)"
        );
        let mut c = Command::new("/usr/bin/time");
        c.arg("-f").arg("%M").arg("-o").arg(&rss).arg(bin());
        c
    } else {
        Command::new(bin())
    };
    let mut child = cmd
        .args(args)
        .env_remove("NO_COLOR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rocetop");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = feeder.join();
    let peak_kib = measure.then(|| {
        std::fs::read_to_string(&rss)
            .expect("time output")
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .expect("peak RSS in KiB")
    });
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: out.stderr,
        peak_kib,
    }
}

/// No byte that a terminal would act on: C0 controls but `\n` and `\t`, DEL, and C1 (as UTF-8).
fn assert_terminal_safe(what: &str, bytes: &[u8]) {
    for (i, w) in bytes.iter().enumerate() {
        let bad = (*w < 0x20 && *w != b'\n' && *w != b'\t') || *w == 0x7f;
        let c1 = *w == 0xc2 && bytes.get(i + 1).is_some_and(|n| (0x80..0xa0).contains(n));
        assert!(
            !bad && !c1,
            "{what}: byte {w:#04x} at {i} reaches the terminal: {:?}",
            String::from_utf8_lossy(&bytes[i.saturating_sub(40)..(i + 40).min(bytes.len())])
        );
    }
}

fn hw_counters_line(dev: &str, counter: &str, v: u64) -> String {
    format!("/sys/class/infiniband/{dev}/ports/1/hw_counters/{counter}:{v}\n")
}

// ---- 1. control bytes ------------------------------------------------------------------------

#[test]
fn parse_table_and_json_never_send_control_bytes() {
    let input = hw_counters_line(HOSTILE_DEV, "np_cnp_sent", 5)
        + &hw_counters_line("mlx5_\u{9b}2J\u{202e}", "np_cnp_sent", 6);
    for format in ["table", "prom", "json"] {
        let o = run(
            &[
                "parse",
                "hw-counters",
                "-",
                "--format",
                format,
                "--name",
                "n1",
            ],
            input.as_bytes(),
            false,
        );
        assert_eq!(o.code, 0, "{format}: {}", o.text());
        assert_terminal_safe(format, &o.stdout);
        assert_terminal_safe(format, &o.stderr);
        // The device was read, not dropped: its name is there, made visible.
        let text = o.text();
        let seen = match format {
            "table" => text.contains("mlx5_\\x1b]0;PWNDEV\\x07"),
            "prom" => text.contains("mlx5_\u{fffd}]0;PWNDEV\u{fffd}"),
            _ => text.contains("mlx5_\\u001b]0;PWNDEV\\u0007") && text.contains("\\u009b2J"),
        };
        assert!(seen, "{format}: {text}");
    }
    // JSON keeps the value: it parses back to the device name as the node wrote it.
    let o = run(
        &[
            "parse",
            "hw-counters",
            "-",
            "--format",
            "json",
            "--name",
            "n1",
        ],
        input.as_bytes(),
        false,
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(
        v.to_string().contains("mlx5_\\u001b]0;PWNDEV\\u0007"),
        "{v}"
    );
}

/// A node's sysfs device directory with an OSC title sequence in its name, read by the local
/// transport, printed by `snapshot` (table) and `check`.
#[test]
fn snapshot_and_check_escape_a_hostile_device_name() {
    let dir = tempfile::tempdir().expect("tmp");
    let port = dir
        .path()
        .join(format!("class/infiniband/{HOSTILE_DEV}/ports/1"));
    std::fs::create_dir_all(port.join("hw_counters")).expect("mkdir");
    std::fs::write(port.join("hw_counters/np_cnp_sent"), "7\n").expect("w");
    std::fs::write(port.join("state"), "4: ACTIVE\n").expect("w");
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "[[node]]\nname = \"here\"\nhost = \"127.0.0.1\"\nlocal = true\nsysfs_root = \"{}\"\n",
            dir.path().display()
        ),
    )
    .expect("w");
    let c = cfg.to_string_lossy();
    let o = run(
        &["snapshot", "--config", &c, "--interval", "100ms"],
        b"",
        false,
    );
    assert_terminal_safe("snapshot stdout", &o.stdout);
    assert_terminal_safe("snapshot stderr", &o.stderr);
    assert!(o.text().contains("\\x1b]0;PWNDEV\\x07"), "{}", o.text());
    let o = run(&["check", "--config", &c], b"", false);
    assert_terminal_safe("check stdout", &o.stdout);
    assert_terminal_safe("check stderr", &o.stderr);
}

#[test]
fn config_errors_escape_what_the_file_says() {
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        "[[node]]\nname = \"x\\u001b]0;PWNED\\u0007\\u001b[2J\"\nhost = \"h\"\n[\"\\u001b]0;k\\u0007\"]\n",
    )
    .expect("w");
    let o = run(
        &["snapshot", "--config", &cfg.to_string_lossy()],
        b"",
        false,
    );
    assert_eq!(o.code, 2, "{}", o.text());
    assert_terminal_safe("config error", &o.stderr);
    assert!(o.text().contains("\\x1b]0;PWNED\\x07"), "{}", o.text());
}

// ---- 3 / 7. sizes and linear paths -------------------------------------------------------------

/// 20k switch ports through `parse --format table`: the old table took 62 s here (one scan of
/// every series per port); now the peak memory stays proportional (a generous bound).
#[test]
fn a_20k_port_table_is_printed_whole() {
    let mut text = String::from("Port                 Mode Oper(VL bmap)  RxPPP      TxPPP\n");
    text.push_str("============================================================\n\n");
    for i in 0..20_000 {
        text.push_str(&format!(
            "Ethernet{}/{}/1        Auto On (8)        {}          {}\n",
            1 + i / 1000,
            1 + i % 1000,
            i,
            i * 2
        ));
    }
    let o = run(
        &[
            "parse", "nxos-pfc", "-", "--format", "table", "--name", "sw",
        ],
        text.as_bytes(),
        true,
    );
    assert_eq!(o.code, 0, "{}", String::from_utf8_lossy(&o.stderr));
    let rows = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("sw ") && l.contains("Ethernet"))
        .count();
    assert_eq!(rows, 20_000, "one row per port in SWITCH PORTS");
    let kib = o.peak_kib.expect("rss");
    assert!(kib < 400 * 1024, "peak RSS {kib} KiB for 20k ports");
}

// ---- 9. config and helpers ---------------------------------------------------------------------

#[test]
fn config_from_a_device_or_a_fifo_is_refused_without_reading() {
    let o = run(&["snapshot", "--config", "/dev/zero"], b"", true);
    assert_eq!(o.code, 2, "{}", o.text());
    assert!(o.text().contains("not a regular file"), "{}", o.text());
    assert!(o.peak_kib.expect("rss") < 100 * 1024, "{:?}", o.peak_kib);
    let dir = tempfile::tempdir().expect("tmp");
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    // A hang would never end this run (the old code blocked in open(2)); the test harness's
    // own timeout is the guard.
    let o = run(
        &["snapshot", "--config", &fifo.to_string_lossy()],
        b"",
        false,
    );
    assert_eq!(o.code, 2, "{}", o.text());
    assert!(o.text().contains("not a regular file"), "{}", o.text());
    let big = dir.path().join("big.toml");
    let mut f = std::fs::File::create(&big).expect("create");
    let line = format!("# {}\n", "x".repeat(1000));
    for _ in 0..5000 {
        f.write_all(line.as_bytes()).expect("w");
    }
    drop(f);
    let o = run(
        &["snapshot", "--config", &big.to_string_lossy()],
        b"",
        false,
    );
    assert_eq!(o.code, 2, "{}", o.text());
    assert!(o.text().contains("more than"), "{}", o.text());
}

#[test]
fn hostfiles_are_capped_and_linear() {
    let dir = tempfile::tempdir().expect("tmp");
    let hosts = dir.path().join("hosts");
    let text: String = (0..80_000).map(|i| format!("gpu{i} slots=8\n")).collect();
    std::fs::write(&hosts, text).expect("w");
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "[[node]]\nhostfile = \"hosts\"\nuser = \"u\"\n").expect("w");
    let o = run(&["snapshot", "--config", &cfg.to_string_lossy()], b"", true);
    assert_eq!(o.code, 2, "{}", o.text());
    assert!(o.text().contains("more than 10000 hosts"), "{}", o.text());
    assert!(o.peak_kib.expect("rss") < 200 * 1024, "{:?}", o.peak_kib);
    std::fs::write(&hosts, "/dev/zero\n").expect("w");
    std::fs::write(&cfg, "[[node]]\nhostfile = \"/dev/zero\"\nuser = \"u\"\n").expect("w");
    let o = run(&["snapshot", "--config", &cfg.to_string_lossy()], b"", true);
    assert_eq!(o.code, 2, "{}", o.text());
    assert!(o.text().contains("not a regular file"), "{}", o.text());
}

// ---- 6. recordings -----------------------------------------------------------------------------

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(data).expect("gz");
    e.finish().expect("gz")
}

/// A short demo recording, decoded into its JSON lines.
fn demo_recording(dir: &Path) -> Vec<serde_json::Value> {
    let f = dir.join("demo.rec");
    let o = run(
        &[
            "record",
            "--demo",
            "--out",
            &f.to_string_lossy(),
            "--duration",
            "1500ms",
        ],
        b"",
        false,
    );
    assert_eq!(o.code, 0, "{}", o.text());
    let mut raw = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(&f).expect("open"))
        .read_to_end(&mut raw)
        .expect("gunzip");
    raw.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("record"))
        .collect()
}

fn write_recording(path: &Path, members: &[Vec<u8>]) {
    let mut f = std::fs::File::create(path).expect("create");
    for m in members {
        f.write_all(&gz(m)).expect("w");
    }
}

/// Records as a recording's lines, each sealed as the format says: its JSON object with a last
/// field `crc32`, the CRC-32 of the bytes before that field (written here from the format's
/// description, not by rocetop's writer).
fn lines(recs: &[serde_json::Value]) -> Vec<u8> {
    let mut v = Vec::new();
    for r in recs {
        // A record read back from a real recording carries its old seal.
        let mut r = r.clone();
        if let Some(o) = r.as_object_mut() {
            o.remove("crc32");
        }
        let mut body = r.to_string().into_bytes();
        body.pop();
        let mut crc = flate2::Crc::new();
        crc.update(&body);
        v.extend_from_slice(&body);
        v.extend_from_slice(format!(",\"crc32\":\"{:08x}\"}}\n", crc.sum()).as_bytes());
    }
    v
}

#[test]
fn crafted_recordings_are_bounded_and_read_no_files() {
    let dir = tempfile::tempdir().expect("tmp");
    let recs = demo_recording(dir.path());
    let header = recs[0].clone();
    let polls: Vec<_> = recs
        .iter()
        .filter(|r| r["type"] == "poll")
        .cloned()
        .collect();
    assert!(!polls.is_empty());

    // One 100 MiB record (a few hundred KB compressed) after the good ones.
    let mut huge = polls[0].clone();
    huge["outputs"] = serde_json::json!([{ "kind": "hw-counters", "text": "a".repeat(100 << 20) }]);
    let f = dir.path().join("huge.rec");
    write_recording(
        &f,
        &[
            lines(std::slice::from_ref(&header)),
            lines(&polls),
            lines(&[huge]),
        ],
    );
    let o = run(
        &["replay", &f.to_string_lossy(), "--format", "table"],
        b"",
        true,
    );
    assert_eq!(o.code, 0, "{}", o.text());
    assert!(o.text().contains("ends early"), "{}", o.text());
    let kib = o.peak_kib.expect("rss");
    assert!(kib < 200 * 1024, "peak RSS {kib} KiB for a 100 MiB record");

    // The stored config names a hostfile (a FIFO: reading it would hang; /dev/zero: fill memory).
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo")
            .success()
    );
    let mut h = header.clone();
    let cfg = format!(
        "[[node]]\nhostfile = \"{}\"\nuser = \"u\"\n",
        fifo.display()
    );
    h["config_toml"] = serde_json::Value::String(cfg);
    let f = dir.path().join("hostfile.rec");
    write_recording(&f, &[lines(&[h]), lines(&polls)]);
    let o = run(
        &["replay", &f.to_string_lossy(), "--format", "table"],
        b"",
        true,
    );
    assert_eq!(o.code, 0, "{}", o.text());
    assert!(o.peak_kib.expect("rss") < 300 * 1024, "{:?}", o.peak_kib);

    // No poll at all: a non-zero exit with the reason.
    let f = dir.path().join("empty.rec");
    write_recording(&f, &[lines(&[header])]);
    let o = run(
        &["replay", &f.to_string_lossy(), "--format", "table"],
        b"",
        false,
    );
    assert_ne!(o.code, 0, "{}", o.text());
    assert!(o.text().contains("no poll to replay"), "{}", o.text());
}

#[test]
fn a_recording_of_no_poll_fails_with_the_reason() {
    // A node whose SSH port accepts and never answers: no poll finishes in 300 ms.
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = l.local_addr().expect("addr").port();
    let dir = tempfile::tempdir().expect("tmp");
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!("[[node]]\nname = \"n\"\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"u\"\n"),
    )
    .expect("w");
    let out = dir.path().join("r.rec");
    let o = run(
        &[
            "record",
            "--config",
            &cfg.to_string_lossy(),
            "--out",
            &out.to_string_lossy(),
            "--duration",
            "300ms",
        ],
        b"",
        false,
    );
    drop(l);
    assert_ne!(o.code, 0, "{}", o.text());
    assert!(o.text().contains("no poll finished"), "{}", o.text());
}

// ---- 4. export ---------------------------------------------------------------------------------

/// Start a long-running command and read its stderr until `marker` names the address it serves.
fn start_server(args: &[&str], marker: &str) -> (Child, String) {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut err = child.stderr.take().expect("stderr");
    let mut seen = Vec::new();
    let mut b = [0u8; 1];
    let addr = loop {
        if err.read(&mut b).unwrap_or(0) == 0 {
            let _ = child.kill();
            panic!("no '{marker}' in: {}", String::from_utf8_lossy(&seen));
        }
        seen.push(b[0]);
        let s = String::from_utf8_lossy(&seen).into_owned();
        if let Some(i) = s.find(marker) {
            let rest = &s[i + marker.len()..];
            if let Some(end) = rest.find(|c: char| c == '/' || c == ';' || c.is_whitespace()) {
                break rest[..end].to_string();
            }
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = err.read_to_end(&mut sink);
    });
    (child, addr)
}

struct Kill(Child);
impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_scrape_is_answered_while_200_slow_clients_hang_on() {
    let (child, addr) = start_server(
        &["export", "--demo", "--listen", "127.0.0.1:0"],
        "serving http://",
    );
    let _guard = Kill(child);
    // 200 clients that send half a request and then nothing, from 8 addresses (within what one
    // address may hold).
    let mut slow = Vec::new();
    for i in 0..200 {
        let mut s = connect_from(&format!("127.0.0.{}", 1 + i % 8), &addr).expect("connect");
        s.write_all(b"GET /metr").expect("w");
        slow.push(s);
    }
    // A generous deadline, far above "under a second" and far below the 60 s the old slots held.
    let mut s = TcpStream::connect(&addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("w");
    let mut body = Vec::new();
    let _ = s.read_to_end(&mut body);
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.starts_with("HTTP/1.1 200"),
        "scrape answer: {text:.200}"
    );
    // The exposition itself (a source's health lines appear only once its first poll answered).
    assert!(text.contains("text/plain; version=0.0.4"), "{text:.200}");
    drop(slow);
}

// ---- 5. pingd ----------------------------------------------------------------------------------

/// With 40 file descriptors, a flood of 100 connections makes accept fail (EMFILE): the daemon
/// waits it out and still answers a ping afterwards.
#[test]
fn pingd_survives_a_connection_flood_and_fd_exhaustion() {
    use rocetop::collect::ping::proto::{Hello, Mode};
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 40 && exec {} pingd --listen 127.0.0.1:0",
            bin()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let (addr, mut err) = pingd_address(&mut child);
    let mut pingd = Kill(child);
    let drain = std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = err.read_to_end(&mut all);
        String::from_utf8_lossy(&all).into_owned()
    });
    // From 8 addresses: one address keeps at most 16 sessions, and the others' still take fds.
    let mut flood = Vec::new();
    for i in 0..100 {
        if let Ok(s) = connect_from(&format!("127.0.0.{}", 1 + i % 8), &addr) {
            flood.push(s);
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        pingd.0.try_wait().expect("wait").is_none(),
        "pingd exited under the flood"
    );
    drop(flood);
    // After the flood, a TCP session works: the echo comes back.
    let mut ok = false;
    for _ in 0..50 {
        if let Ok(mut s) = TcpStream::connect(&addr) {
            s.set_read_timeout(Some(Duration::from_secs(10)))
                .expect("t");
            let _ = s.write_all(&Hello { mode: Mode::Tcp }.encode());
            let _ = s.write_all(b"ping-1234");
            let mut got = [0u8; 9];
            if s.read_exact(&mut got).is_ok() && &got == b"ping-1234" {
                ok = true;
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        pingd.0.try_wait().expect("wait").is_none(),
        "pingd exited after the flood"
    );
    let _ = pingd.0.kill();
    let _ = pingd.0.wait();
    let log = drain.join().unwrap_or_default();
    assert!(ok, "no echo after the flood; pingd said: {log}");
    assert!(log.contains("accept failed"), "EMFILE was never hit: {log}");
}

// ---- 3. series per source ----------------------------------------------------------------------

/// An answer that names more series than any real switch has: the store keeps the first
/// MAX_SERIES_PER_SOURCE and says how many samples it dropped, rather than growing without end.
#[test]
fn a_source_cannot_make_endless_series() {
    use rocetop::metrics::store::MAX_SERIES_PER_SOURCE;
    use rocetop::metrics::{Parsed, Sample, Store};
    let mut store = Store::new(60_000, 4);
    let src = store.add_source("sw", 1000);
    let mut p = Parsed::default();
    for i in 0..MAX_SERIES_PER_SOURCE + 10 {
        let port = format!("Ethernet1/{i}");
        p.push(Sample::counter(
            "rocetop_switch_pfc_rx_frames_total",
            &[("switch", "sw"), ("port", &port), ("priority", "all")],
            1,
        ));
    }
    store.ingest(src, 1000, &p);
    assert_eq!(store.all().count(), MAX_SERIES_PER_SOURCE);
    let notes = &store.source(src).expect("source").notes;
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("10 samples of new series not stored")),
        "{notes:?}"
    );
    // Known series keep updating.
    store.ingest(src, 2000, &p);
    assert_eq!(store.all().count(), MAX_SERIES_PER_SOURCE);
}

// ---- the streaming collector, export and pingd slots, recordings ----------------------------

/// A node whose sshd runs `script` (POSIX sh) for every command, `$SSH_ORIGINAL_COMMAND` naming
/// what rocetop asked; its host key trusted in `kh`.
fn hostile_node(dir: &Path, name: &str, script: &str, kh: &Path) -> sshd::Sshd {
    let path = dir.join(format!("{name}.sh"));
    std::fs::write(&path, format!("#!/bin/sh\n{script}")).expect("script");
    assert!(
        Command::new("chmod")
            .arg("755")
            .arg(&path)
            .status()
            .expect("chmod")
            .success()
    );
    let s = sshd::Sshd::with(sshd::Options {
        force_command: Some(path.display().to_string()),
        ..Default::default()
    });
    s.trust(kh, "ed25519");
    s
}

fn node_toml(name: &str, s: &sshd::Sshd) -> String {
    format!(
        "[[node]]\nname = \"{name}\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nidentity_file = \"{}\"\n",
        s.port,
        sshd::current_user(),
        s.client_key.display()
    )
}

/// Run the binary to its end under `/usr/bin/time`: its output, peak RSS (KiB) and CPU seconds.
fn run_timed(args: &[&str]) -> (Out, u64, f64) {
    let dir = tempfile::tempdir().expect("tmp");
    let stats = dir.path().join("time");
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M %U %S")
        .arg("-o")
        .arg(&stats)
        .arg(bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn rocetop under /usr/bin/time");
    let t = std::fs::read_to_string(&stats).expect("time output");
    let f: Vec<f64> = t
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    assert_eq!(f.len(), 3, "time said {t:?}");
    let o = Out {
        code: out.status.code().unwrap_or(-1),
        stdout: out.stdout,
        stderr: out.stderr,
        peak_kib: Some(f[0] as u64),
    };
    (o, f[0] as u64, f[1] + f[2])
}

/// The poll records of a recording.
fn polls_of(rec: &Path) -> Vec<serde_json::Value> {
    let mut raw = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(rec).expect("open"))
        .read_to_end(&mut raw)
        .expect("gunzip");
    raw.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter(|r| r["type"] == "poll")
        .collect()
}

/// How many times a node's script started a stream (one line each in `file`).
fn starts(file: &Path) -> usize {
    std::fs::read_to_string(file).map_or(0, |s| s.lines().count())
}

/// Two streamed nodes over real sshd (a ForceCommand answers the stream): `big` sends a frame
/// header claiming 4 000 000 lines, a 1 MB first line, then 400 lines keeping all of it
/// (`1+1048576\t`, a dozen bytes each: 400 MB to rebuild); `junk` answers garbage. rocetop
/// records both for 14 s under the default config. The frame is refused at the answer cap
/// (`poll.max_answer_bytes`, 32 MiB), `big` is down with that reason, memory stays bounded
/// (before: every line kept, the process grew by a megabyte per dozen bytes received, to GBs),
/// and the broken streams back off instead of restarting every interval (each restart is a full
/// first dump on the node; `junk` had restarted 14-25 times in 15-30 s). Peak RSS and CPU are
/// printed.
#[test]
fn a_hostile_stream_is_refused_at_the_answer_cap_and_backs_off() {
    let dir = tempfile::tempdir().expect("tmp");
    let kh = dir.path().join("known_hosts");
    let guard = "case \"$SSH_ORIGINAL_COMMAND\" in *rocetop-stream*) ;; *) exit 0 ;; esac\n";
    let big_starts = dir.path().join("big.starts");
    let big = hostile_node(
        dir.path(),
        "big",
        &format!(
            "{guard}echo start >> '{}'\nread -r _ || exit 0\n\
             printf '@@rocetop-stream 0 4000000 4000000\\n'\n\
             printf '1\\t'; head -c 1048576 /dev/zero | tr '\\0' x; printf '\\n'\n\
             i=0; while [ $i -lt 400 ]; do printf '1+1048576\\t\\n'; i=$((i+1)); done\n\
             exec cat >/dev/null\n",
            big_starts.display()
        ),
        &kh,
    );
    let junk_starts = dir.path().join("junk.starts");
    let junk = hostile_node(
        dir.path(),
        "junk",
        &format!(
            "{guard}echo start >> '{}'\nread -r _ || exit 0\nprintf 'garbage, not a frame\\n'\n\
             exec cat >/dev/null\n",
            junk_starts.display()
        ),
        &kh,
    );
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!(
            "[ssh]\nknown_hosts = \"{}\"\nssh_config = \"{}\"\n[poll]\ninterval = \"1s\"\n{}{}",
            kh.display(),
            dir.path().join("no_ssh_config").display(),
            node_toml("big", &big),
            node_toml("junk", &junk),
        ),
    )
    .expect("config");
    let rec = dir.path().join("r.rec");
    let (o, kib, cpu) = run_timed(&[
        "record",
        "--config",
        &cfg.to_string_lossy(),
        "--out",
        &rec.to_string_lossy(),
        "--duration",
        "14s",
    ]);
    let (nb, nj) = (starts(&big_starts), starts(&junk_starts));
    eprintln!(
        "hostile stream, 14 s: peak RSS {:.1} MiB, CPU {cpu:.2} s; streams started: big {nb}, junk {nj}",
        kib as f64 / 1024.0
    );
    assert_eq!(o.code, 0, "{}", o.text());
    assert!(kib < 200 * 1024, "peak RSS {kib} KiB");
    let polls = polls_of(&rec);
    let errors = |name: &str| -> Vec<String> {
        (polls.iter())
            .filter(|p| p["name"] == name)
            .filter_map(|p| p["error"].as_str().map(str::to_string))
            .collect()
    };
    let big_errors = errors("big");
    assert!(
        big_errors
            .iter()
            .any(|e| e.contains("poll.max_answer_bytes") && e.contains("refused")),
        "big: {big_errors:?}"
    );
    let ok_big = (polls.iter()).any(|p| p["name"] == "big" && p["error"].is_null());
    assert!(!ok_big, "big never reads ok");
    assert!(!errors("junk").is_empty(), "junk is down");
    // Backing off (about 1, 2, 4, 8 s between starts): at most 5 in 14 s, where every interval
    // (1 s) gave 10 or more.
    for (name, n) in [("big", nb), ("junk", nj)] {
        assert!((2..=5).contains(&n), "{name}: {n} streams in 14 s");
    }
}

/// `rocetop record --out` where a link was planted (to a file of the user's, or to nowhere):
/// refused with the reason, nothing written through it; a new recording is its owner's only.
#[test]
fn a_recording_never_follows_a_planted_link_and_is_private() {
    let dir = tempfile::tempdir().expect("tmp");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").expect("w");
    let link = dir.path().join("planted.rec");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let dangling = dir.path().join("dangling.rec");
    std::os::unix::fs::symlink(dir.path().join("made-through-link"), &dangling).expect("symlink");
    for out in [&link, &dangling, &victim] {
        let o = run(
            &[
                "record",
                "--demo",
                "--out",
                &out.to_string_lossy(),
                "--duration",
                "300ms",
            ],
            b"",
            false,
        );
        assert_ne!(o.code, 0, "{}", o.text());
        assert!(o.text().contains("never replaces"), "{}", o.text());
        assert_terminal_safe("record error", &o.stderr);
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("r"), "precious");
    assert!(!dir.path().join("made-through-link").exists());
    let fresh = dir.path().join("fresh.rec");
    // Under a permissive umask too.
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "umask 000 && exec '{}' record --demo --duration 1s --out '{}'",
            bin(),
            fresh.display()
        ))
        .output()
        .expect("record");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&fresh)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);
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
        s.into_std().and_then(|s| {
            s.set_nonblocking(false)?;
            Ok(s)
        })
    })
}

/// Whether the server closes `s` (EOF or reset) within `within`; false when it stays open.
fn closed_within(s: &mut TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).expect("timeout");
    let mut b = [0u8; 4096];
    loop {
        match s.read(&mut b) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return false;
            }
            Err(_) => return true,
        }
    }
}

/// pingd's sessions are shared fairly: one address keeps at most 16 open (an idle TCP session
/// renewed every minute had held a slot each, up to all 1024), a connection past that is closed
/// at once, and another address is still served; a session's hello is due within 5 s.
#[test]
fn pingd_keeps_one_source_to_its_share() {
    use rocetop::collect::ping::proto::{Hello, Mode};
    let mut child = Command::new(bin())
        .args(["pingd", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let (addr, mut err) = pingd_address(&mut child);
    let _pingd = Kill(child);
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = err.read_to_end(&mut sink);
    });
    let hello = Hello { mode: Mode::Tcp }.encode();
    let mut held = Vec::new();
    for _ in 0..16 {
        let mut s = TcpStream::connect(&addr).expect("connect");
        s.write_all(&hello).expect("hello");
        held.push(s);
    }
    // Each of the 16 is a working session.
    for s in &mut held {
        s.set_read_timeout(Some(Duration::from_secs(10)))
            .expect("t");
        s.write_all(b"ping-0001").expect("w");
        let mut got = [0u8; 9];
        s.read_exact(&mut got).expect("echo");
    }
    let mut over = TcpStream::connect(&addr).expect("connect");
    let _ = over.write_all(&hello);
    assert!(
        closed_within(&mut over, Duration::from_secs(3)),
        "a 17th session from one address is closed at once"
    );
    let mut other = connect_from("127.0.0.2", &addr).expect("connect from 127.0.0.2");
    other
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("t");
    other.write_all(&hello).expect("hello");
    other.write_all(b"ping-0002").expect("w");
    let mut got = [0u8; 9];
    other
        .read_exact(&mut got)
        .expect("another address is served");
    assert_eq!(&got, b"ping-0002");
    // A connection that never says hello is closed within the handshake's 5 s.
    let mut mute = connect_from("127.0.0.3", &addr).expect("connect");
    let t0 = std::time::Instant::now();
    assert!(closed_within(&mut mute, Duration::from_secs(15)));
    assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    drop(held);
}

/// A fleet answer saved by hand (`parse prom-api`) whose node names hold a line break, a tab, a
/// BEL and a zero-width space, and a metric name that spells an exposition line: the table shows
/// each name escaped (no forged row), the Prometheus text has one line per series and none the
/// names started, the notes stay on their own `#` lines, and no output carries U+200B raw.
#[test]
fn parse_prints_remote_names_with_line_breaks_escaped() {
    let item = |name: &str, node: &str, v: u64| {
        serde_json::json!({"metric": {"__name__": name, "device": "mlx5_0", "port": "1",
            "instance": node}, "value": [1, v.to_string()]})
    };
    let cnp = "rdma_np_cnp_sent_total";
    let answer =
        serde_json::json!({"status": "success", "data": {"resultType": "vector", "result": [
            item(cnp, "gpu1", 1),
            item(cnp, "gpu2\nforged-row mlx5_9", 2),
            item(cnp, "gpu3\tx", 3),
            item(cnp, "gpu1\u{200b}", 4),
            item(cnp, "gpu4\u{7}", 5),
            item("rdma_x_total\nrocetop_spoofed_total 1\n#", "gpu5", 6),
        ]}})
        .to_string();
    for format in ["table", "prom", "json"] {
        let o = run(
            &["parse", "prom-api", "-", "--format", format],
            answer.as_bytes(),
            false,
        );
        assert_eq!(o.code, 0, "{format}: {}", o.text());
        assert_terminal_safe(format, &o.stdout);
        let text = o.text();
        assert!(!text.contains('\u{200b}'), "{format}: {text}");
        assert!(!text.contains('\t'), "{format}: {text}");
        assert!(
            !text.lines().any(|l| l.starts_with("forged-row")),
            "{format}: a name made a line of its own:\n{text}"
        );
        assert!(!text.contains("spoofed"), "{format}: {text}");
        match format {
            "table" => {
                for shown in [
                    "gpu2\\x0aforged-row",
                    "gpu3\\x09x",
                    "gpu1\\u{200b}",
                    "gpu4\\x07",
                ] {
                    assert!(text.contains(shown), "{shown}: {text}");
                }
            }
            "prom" => {
                let samples: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
                assert_eq!(samples.len(), 5, "one line per series: {text}");
                assert!(
                    samples
                        .iter()
                        .all(|l| l.starts_with("rocetop_rdma_np_cnp_sent_total{")),
                    "{text}"
                );
                assert!(
                    text.contains("1 series refused: a metric name outside the exposition format"),
                    "{text}"
                );
            }
            _ => {
                let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
                assert!(
                    v.to_string().contains("gpu1\u{200b}"),
                    "the value is kept: {v}"
                );
            }
        }
    }
}

/// The address a `pingd` started with `--listen 127.0.0.1:0` says it listens on (its first
/// stderr line), and its stderr to go on reading.
fn pingd_address(child: &mut Child) -> (String, std::process::ChildStderr) {
    let mut err = child.stderr.take().expect("stderr");
    let mut seen = String::new();
    let mut b = [0u8; 256];
    loop {
        let n = err.read(&mut b).expect("read");
        assert!(n > 0, "pingd ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&b[..n]));
        if let Some(rest) = seen.split("pingd listening on ").nth(1)
            && let Some(end) = rest.find(';')
        {
            return (rest[..end].to_string(), err);
        }
    }
}
