//! Fault suite: `rocetop record` stopped by SIGTERM, SIGINT or SIGHUP closes
//! its recording cleanly (every poll readable, the `end` record present); under `nohup` (SIGHUP
//! ignored) a hangup does not stop it. (The TUI's SIGTERM/SIGHUP are in tests/tui/tui_tmux.rs.)

use rocetop::record::Reader;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_rocetop");

/// Start `rocetop record --demo` (through `sh -c` so a test can set signal dispositions first),
/// and wait until it says it records. An ignored SIGHUP is inherited (the test run itself may be
/// under `nohup`), so unless `sh_prefix` ignores it on purpose, `env` gives the recorder the
/// default disposition back: what it sees from a terminal.
fn start(out: &Path, sh_prefix: &str) -> (Child, std::thread::JoinHandle<String>) {
    let reset = if sh_prefix.contains("HUP") {
        ""
    } else {
        "env --default-signal=HUP"
    };
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "{sh_prefix} exec {reset} '{BIN}' record --demo --out '{}'",
            out.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn record");
    let err = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            if line.contains("recording") {
                let _ = tx.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("record started");
    (child, reader)
}

fn polls_in(out: &Path) -> usize {
    Reader::open(out).map(|r| r.count()).unwrap_or(0)
}

/// Wait until the file holds some polls (the demo polls every second).
fn wait_polls(out: &Path, n: usize) {
    let until = Instant::now() + Duration::from_secs(30);
    while polls_in(out) < n {
        assert!(Instant::now() < until, "no {n} polls recorded");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig}");
}

fn wait_exit(child: &mut Child, secs: u64) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return Some(st);
        }
        if Instant::now() > until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A recording stopped by `sig`: exits 0, and reads to its `end` record with every poll.
fn stopped_by(sig: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join(format!("{sig}.rec"));
    let (mut child, err) = start(&out, "");
    wait_polls(&out, 12);
    signal(&child, sig);
    let st = wait_exit(&mut child, 15);
    if st.is_none() {
        let _ = child.kill();
    }
    let err = err.join().unwrap_or_default();
    let st = st.unwrap_or_else(|| panic!("SIG{sig} did not stop record: {err}"));
    assert!(st.success(), "SIG{sig}: {st:?} {err}");
    assert!(err.contains("recorded"), "the summary is printed: {err}");
    let mut r = Reader::open(&out).expect("open");
    let polls: Vec<_> = r.by_ref().collect();
    assert!(r.cut().is_none(), "SIG{sig}: cut {:?}", r.cut());
    let end = r.end().unwrap_or_else(|| panic!("SIG{sig}: no end record"));
    assert_eq!(
        end.polls as usize,
        polls.len(),
        "every poll written is read"
    );
    let last = polls.iter().map(|p| p.at).max().expect("polls");
    assert!(end.at >= last, "the end comes after the last poll");
    // Replays to the last poll.
    let rep = Command::new(BIN)
        .args(["replay", "--format", "json"])
        .arg(&out)
        .output()
        .expect("replay");
    assert!(rep.status.success());
    assert!(
        !String::from_utf8_lossy(&rep.stderr).contains("ends early"),
        "{}",
        String::from_utf8_lossy(&rep.stderr)
    );
}

#[test]
fn sigterm_closes_the_recording() {
    stopped_by("TERM");
}

#[test]
fn sighup_closes_the_recording() {
    stopped_by("HUP");
}

#[test]
fn sigint_closes_the_recording() {
    stopped_by("INT");
}

/// `nohup rocetop record ...` must survive the terminal closing: a hangup it was told to ignore
/// does not stop it; SIGTERM still does, cleanly.
#[test]
fn under_nohup_a_hangup_is_ignored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("nohup.rec");
    let (mut child, err) = start(&out, "trap '' HUP;");
    wait_polls(&out, 12);
    signal(&child, "HUP");
    assert!(
        wait_exit(&mut child, 2).is_none(),
        "an ignored SIGHUP stopped the recording"
    );
    let before = polls_in(&out);
    wait_polls(&out, before + 12);
    signal(&child, "TERM");
    let st = wait_exit(&mut child, 15).expect("SIGTERM stops it");
    let err = err.join().unwrap_or_default();
    assert!(st.success(), "{err}");
    let mut r = Reader::open(&out).expect("open");
    let _ = r.by_ref().count();
    assert!(r.end().is_some(), "end record after SIGTERM");
}
