//! Every command that writes to stdout ends quietly when its reader has gone (`| head -1`): no
//! panic, no backtrace, the SIGPIPE status coreutils give (141), never Rust's panic status 101.
//! The read end is closed before the command writes anything, so every run hits the closed pipe.

use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_rocetop");

/// Run `rocetop args` with its stdout a pipe nobody reads; the exit code and stderr.
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rocetop");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_quiet(args: &[&str]) {
    let (code, stderr) = with_closed_stdout(args);
    assert!(
        !stderr.contains("panicked") && !stderr.to_ascii_uppercase().contains("BACKTRACE"),
        "{args:?} printed a panic on a closed pipe:\n{stderr}"
    );
    assert_ne!(code, Some(101), "{args:?} exited with the panic status");
    assert_eq!(code, Some(141), "{args:?}: {stderr}");
    assert!(
        !stderr.contains("Broken pipe"),
        "a closed pipe is not an error to report: {stderr}"
    );
}

#[test]
fn snapshot_in_every_format() {
    for f in ["prom", "json", "table"] {
        assert_quiet(&["snapshot", "--demo", "--interval", "200ms", "--format", f]);
    }
}

#[test]
fn parse_in_every_format() {
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/linux/ethtool-S_mlx5_pfc-prio3_synthetic.txt"
    );
    for f in ["prom", "json", "table"] {
        assert_quiet(&["parse", "ethtool", fixture, "--format", f]);
    }
}

#[test]
fn check_and_replay_print() {
    assert_quiet(&["check", "--demo"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("pipe.rec");
    let rec = rec.to_str().expect("utf-8 path");
    let made = Command::new(BIN)
        .args(["record", "--demo", "--duration", "1s", "--out", rec])
        .output()
        .expect("record");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    for f in ["prom", "json", "table"] {
        assert_quiet(&["replay", rec, "--format", f]);
    }
}
