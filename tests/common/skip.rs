//! A test that cannot run here is a visible skip, never a silent pass: it is printed, and written
//! to `target/tmp/rocetop-skips.log`, which `scripts/test.sh` sums up at the end ("N skipped: why").
//! Under CI (`CI` set) a missing dependency that `scripts/test.sh` installs is a failure.
#![allow(dead_code)]

use std::io::Write;

/// What the skipped test lacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lack {
    /// A tool `scripts/test.sh` installs (tmux, promtool, sshd): under CI its absence fails.
    Installed(&'static str),
    /// Something no script can provide (a privilege, a kernel module, hardware).
    Machine,
}

/// Record that `test` was skipped because of `why`. Panics under CI when `lack` is a dependency
/// the test script installs. Call it, then `return` from the test.
pub fn skip(test: &str, lack: Lack, why: &str) {
    if let Lack::Installed(tool) = lack {
        assert!(
            std::env::var_os("CI").is_none(),
            "{test}: {tool} is missing under CI, where scripts/test.sh installs it ({why})"
        );
    }
    eprintln!("SKIPPED {test}: {why}");
    let log = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("rocetop-skips.log");
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
    {
        let _ = writeln!(f, "{test}\t{why}");
    }
}

/// Whether `cmd --version` (or `cmd -V`) runs here.
pub fn have(cmd: &str) -> bool {
    ["--version", "-V"].iter().any(|a| {
        std::process::Command::new(cmd)
            .arg(a)
            .output()
            .is_ok_and(|o| o.status.success())
    })
}
