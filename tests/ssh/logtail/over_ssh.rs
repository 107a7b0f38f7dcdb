//! The follower task over SSH (`tail -n N -F` on a loopback sshd): appends, rotation, truncation
//! and a dead sshd, each line delivered once and in order.

use super::task::{collect_until, log_source, raw_lines};
use crate::sshd::{self, Sshd};
use rocetop::collect::ssh::{SshTarget, SshTransport};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

fn append(p: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .expect("open");
    f.write_all(text.as_bytes()).expect("append");
}

#[tokio::test]
async fn a_remote_log_is_followed_through_rotation_truncation_and_a_dead_sshd() {
    let mut s = Sshd::start();
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    // Not root: OpenSSH signals sessions (ends `tail`) only with privilege separation.
    let user = sshd::unprivileged_user().0;
    let mut t = SshTarget::new("node", "127.0.0.1", s.port, &user);
    t.identity_files = vec![s.client_key.clone()];
    t.known_hosts = kh.clone();
    t.agent_socket = None;
    t.reconnect_min = Duration::from_millis(100);
    t.reconnect_max = Duration::from_millis(400);
    let log = s.path("training.log");
    std::fs::write(&log, "1\n2\n3\n").expect("log");
    let path = log.to_string_lossy().to_string();
    let src = log_source(Arc::new(SshTransport::new(t)), &path, 2, None);

    let mut step = 0;
    let got = collect_until(
        src,
        40,
        |got| {
            let raw = raw_lines(got);
            let has = |l: &str| raw.iter().any(|x| x == l);
            match step {
                0 if has("3") => append(&log, "4\n"),
                1 if has("4") => {
                    std::fs::rename(&log, s.path("training.log.1")).expect("rotate");
                    std::fs::write(&log, "5 five five\n").expect("new log");
                }
                2 if has("5 five five") => std::fs::write(&log, "6\n").expect("truncate"),
                3 if has("6") => {
                    s.kill();
                    append(&log, "7\n8\n");
                    s.restart();
                }
                _ => return,
            }
            step += 1;
        },
        |got| raw_lines(got).iter().any(|l| l == "8"),
    )
    .await;
    assert_eq!(
        raw_lines(&got),
        ["2", "3", "4", "5 five five", "6", "7", "8"],
        "notes: {:?}, errors: {:?}",
        got.iter().flat_map(|c| &c.parsed.notes).collect::<Vec<_>>(),
        got.iter()
            .filter_map(|c| c.error.as_ref())
            .collect::<Vec<_>>()
    );
    assert!(
        got.iter().any(|c| c.error.is_some()),
        "the dead sshd made the source down"
    );
    let notes: Vec<&String> = got.iter().flat_map(|c| &c.parsed.notes).collect();
    assert!(
        notes.iter().any(|n| n.contains("file truncated")),
        "tail's notices are notes: {notes:?}"
    );
}

/// A tqdm-style progress bar that redraws itself with `\r` and never ends a line for 16 MiB: the
/// SSH follower shows the last state once the line ends (as a terminal would), never the 16 MiB
/// of redraws; its line buffer is the local follower's (bounded, linear: see linebuf.rs).
#[tokio::test]
async fn a_remote_progress_bar_shows_its_last_state() {
    let s = Sshd::start();
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let user = sshd::unprivileged_user().0;
    let mut t = SshTarget::new("node", "127.0.0.1", s.port, &user);
    t.identity_files = vec![s.client_key.clone()];
    t.known_hosts = kh.clone();
    t.agent_socket = None;
    let log = s.path("progress.log");
    std::fs::write(&log, "start\n").expect("log");
    let path = log.to_string_lossy().to_string();
    let src = log_source(Arc::new(SshTransport::new(t)), &path, 1, None);
    let bar: String = (0..100)
        .map(|p| format!("\r{p:3}%|{:<50}| {p}/100 [00:01<00:02]", "#".repeat(p / 2)))
        .collect();
    let mut appended = false;
    let got = collect_until(
        src,
        120,
        |got| {
            if !appended && raw_lines(got).iter().any(|l| l == "start") {
                appended = true;
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&log)
                    .expect("open");
                let mut n = 0;
                while n < 16 << 20 {
                    f.write_all(bar.as_bytes()).expect("append");
                    n += bar.len();
                }
                f.write_all(b"\repoch 1 done: loss 0.5\n").expect("append");
            }
        },
        |got| raw_lines(got).iter().any(|l| l.contains("epoch 1 done")),
    )
    .await;
    assert_eq!(raw_lines(&got), ["start", "epoch 1 done: loss 0.5"]);
}
