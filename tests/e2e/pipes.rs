//! Every command that writes to stdout ends quietly when its reader has gone (`| head -1`): no
//! panic, no backtrace, the SIGPIPE status coreutils give (141), never Rust's panic status 101.
//! The read end is closed before the command starts, so every run hits the closed pipe (closing it
//! after the spawn raced the command: an answer smaller than the pipe's buffer could be written
//! whole first, and the run ended 0; seen once in CI under load).

use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_rocetop");

/// The write end of a pipe whose read end is already closed (`std::io::pipe` is newer than the
/// MSRV, and no safe wrapper of `pipe(2)` is in the tree). Both ends close on exec: with plain
/// `pipe`, a command another test thread spawned between the `pipe` and the `drop` inherited the
/// read end, kept it open, and this test's command wrote its answer whole and ended 0 (seen once
/// in scripts/test.sh).
#[allow(unsafe_code)]
fn pipe_without_reader() -> Stdio {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `pipe2` fills both descriptors on success; each is owned once below.
    let (read_end, write_end) = unsafe {
        assert_eq!(libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC), 0, "pipe2");
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    };
    drop(read_end);
    Stdio::from(write_end)
}

/// Run `rocetop args` with its stdout a pipe nobody reads; the exit code and stderr.
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let write_end = pipe_without_reader();
    let child = Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(write_end)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rocetop");
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
