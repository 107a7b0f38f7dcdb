//! The real binary on the demo under tmux: every tab shows its header, a resize to 40x12 and back
//! works, q exits 0 and leaves the shell usable (cooked mode), SIGTERM and a panic in a background
//! task restore the terminal too, and without a TTY there is a clear message instead of a panic.
//! A counted skip where tmux is not installed (a failure under CI).

use std::process::{Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_rocetop");

use crate::skip;

/// Whether tmux runs here; if not, `test` is a counted skip (a failure under CI, where
/// scripts/test.sh installs tmux).
fn have_tmux(test: &str) -> bool {
    let ok = skip::have("tmux");
    if !ok {
        skip::skip(test, skip::Lack::Installed("tmux"), "tmux is not installed");
    }
    ok
}

struct Session(String);

impl Session {
    /// A detached tmux session of `w`x`h` running an interactive shell without rc files.
    fn new(tag: &str, w: u16, h: u16) -> Session {
        let name = format!("rocetop-test-{tag}-{}", std::process::id());
        let ok = Command::new("tmux")
            .args([
                "-L",
                &name,
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                &w.to_string(),
                "-y",
                &h.to_string(),
            ])
            .args([
                "env",
                "-i",
                "PATH=/usr/bin:/bin",
                "TERM=xterm-256color",
                "HOME=/tmp",
                "PS1=$ ",
                "bash",
                "--norc",
                "--noprofile",
            ])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "tmux new-session");
        Session(name)
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn send(&self, keys: &str) {
        self.tmux(&["send-keys", "-t", &self.0, keys]);
    }

    fn line(&self, cmd: &str) {
        self.tmux(&["send-keys", "-t", &self.0, "-l", cmd]);
        self.tmux(&["send-keys", "-t", &self.0, "Enter"]);
    }

    fn capture(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", &self.0])
    }

    /// Wait until the pane shows `what` (or time out, returning the last capture).
    fn wait_for(&self, what: &str, secs: u64) -> Result<String, String> {
        self.wait_for_fn(|c| c.contains(what), secs)
    }

    /// Wait until the pane's text satisfies `ok` (or time out, returning the last capture).
    fn wait_for_fn(&self, ok: impl Fn(&str) -> bool, secs: u64) -> Result<String, String> {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let c = self.capture();
            if ok(&c) {
                return Ok(c);
            }
            if Instant::now() > end {
                return Err(c);
            }
            sleep(Duration::from_millis(200));
        }
    }

    fn resize(&self, w: u16, h: u16) {
        self.tmux(&[
            "resize-window",
            "-t",
            &self.0,
            "-x",
            &w.to_string(),
            "-y",
            &h.to_string(),
        ]);
    }

    /// The rocetop process started by the pane's shell.
    fn child_pid(&self) -> Option<u32> {
        let shell = self.tmux(&["display", "-p", "-t", &self.0, "#{pane_pid}"]);
        let shell = shell.trim();
        let kids = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).ok()?;
        kids.split_whitespace().next()?.parse().ok()
    }

    /// After rocetop ended: the shell answers and the terminal is back in cooked mode.
    fn assert_shell_usable(&self) {
        self.line("stty -a | tr ' ' '\\n' | grep -x -e icanon -e -icanon; echo SHELL-$((40+2))");
        let c = self
            .wait_for("SHELL-42", 5)
            .unwrap_or_else(|c| panic!("the shell does not answer:\n{c}"));
        assert!(
            c.lines().any(|l| l.trim() == "icanon"),
            "terminal left in raw mode:\n{c}"
        );
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .status();
    }
}

#[test]
fn six_tabs_resize_and_a_clean_quit() {
    if !have_tmux("six_tabs_resize_and_a_clean_quit") {
        return;
    }
    let s = Session::new("tabs", 120, 40);
    s.line(&format!("{BIN} --demo; echo EXITED-$?"));
    let c = s
        .wait_for("ubunturdma8", 10)
        .unwrap_or_else(|c| panic!("no node rows:\n{c}"));
    for w in ["Overview", "Queues", "PFC", "ECN/CNP", "Latency", "Log"] {
        assert!(c.contains(w), "tab label {w} missing:\n{c}");
    }
    for (key, header) in [
        ("2", "QoS"),
        ("3", "RxPPP"),
        ("4", "CNP sent/s"),
        ("5", "p99"),
        ("6", "Iteration"),
        ("1", "Nodes"),
    ] {
        s.send(key);
        s.wait_for(header, 5)
            .unwrap_or_else(|c| panic!("tab {key} shows no {header}:\n{c}"));
    }
    s.resize(40, 12);
    // Ready when the pane is 12 lines and still has its tab bar, not after a guessed sleep.
    let small = s
        .wait_for_fn(|c| c.lines().count() <= 12 && c.contains("Ove"), 10)
        .unwrap_or_else(|c| panic!("no small layout:\n{c}"));
    assert!(!small.contains("EXITED"), "ended during a resize:\n{small}");
    assert!(
        small.contains("Ove"),
        "the small screen still has its tab bar:\n{small}"
    );
    s.resize(120, 40);
    s.wait_for("ECN/CNP", 5)
        .unwrap_or_else(|c| panic!("no full tab bar after growing back:\n{c}"));
    for (w, h) in [(1, 1), (2, 1), (10, 3), (200, 60), (1, 1), (120, 40)] {
        s.resize(w, h);
        sleep(Duration::from_millis(150));
    }
    s.wait_for("ECN/CNP", 5)
        .unwrap_or_else(|c| panic!("did not survive a resize storm:\n{c}"));
    s.send("q");
    s.wait_for("EXITED-0", 5)
        .unwrap_or_else(|c| panic!("q did not exit with 0:\n{c}"));
    s.assert_shell_usable();
}

#[test]
fn sigterm_restores_the_terminal() {
    if !have_tmux("sigterm_restores_the_terminal") {
        return;
    }
    let s = Session::new("term", 100, 30);
    s.line(&format!("{BIN} --demo; echo EXITED-$?"));
    s.wait_for("Overview", 10)
        .unwrap_or_else(|c| panic!("did not start:\n{c}"));
    let pid = s.child_pid().expect("rocetop pid");
    let ok = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .is_ok_and(|st| st.success());
    assert!(ok, "kill -TERM {pid}");
    s.wait_for("EXITED-143", 5)
        .unwrap_or_else(|c| panic!("SIGTERM did not end it with 143:\n{c}"));
    s.assert_shell_usable();
}

/// How a recording session ends.
enum End {
    Key(&'static str),
    Signal(&'static str),
    /// `ROCETOP_TEST_PANIC_AFTER_MS`: a background task panics.
    Panic,
}

/// The `.rec` file in `dir` once it holds more than `polls` complete polls.
fn recording_with(dir: &std::path::Path, polls: usize, secs: u64) -> std::path::PathBuf {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        let rec = std::fs::read_dir(dir)
            .expect("dir")
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "rec"));
        if let Some(rec) = rec {
            let n = rocetop::record::Reader::open(&rec).map_or(0, |r| r.count());
            if n > polls {
                return rec;
            }
        }
        assert!(
            Instant::now() < end,
            "no recording of {polls} polls in {dir:?}"
        );
        sleep(Duration::from_millis(100));
    }
}

/// Record from the TUI (`r`), end it as `how`, expect exit status `code`: the terminal is
/// restored and the recording closed with its `end` record (every poll in it, nothing cut).
fn recording_closed_on(tag: &str, how: End, code: i32) {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = Session::new(tag, 100, 30);
    let env = match how {
        End::Panic => "ROCETOP_TEST_PANIC_AFTER_MS=8000 ",
        _ => "",
    };
    s.line(&format!(
        "cd '{}' && {env}{BIN} --demo 2>/dev/null; echo EXITED-$?",
        dir.path().display()
    ));
    s.wait_for("Overview", 10)
        .unwrap_or_else(|c| panic!("did not start:\n{c}"));
    s.send("r");
    s.wait_for("recording to", 5)
        .unwrap_or_else(|c| panic!("r did not start a recording:\n{c}"));
    let rec = recording_with(dir.path(), 5, 30);
    match how {
        End::Key(k) => s.send(k),
        End::Signal(sig) => {
            let pid = s.child_pid().expect("rocetop pid");
            let ok = Command::new("kill")
                .args([&format!("-{sig}"), &pid.to_string()])
                .status()
                .is_ok_and(|st| st.success());
            assert!(ok, "kill -{sig} {pid}");
        }
        End::Panic => {}
    }
    s.wait_for(&format!("EXITED-{code}"), 20)
        .unwrap_or_else(|c| panic!("{tag}: did not end with {code}:\n{c}"));
    s.assert_shell_usable();
    let mut r = rocetop::record::Reader::open(&rec).expect("open");
    let polls = r.by_ref().count();
    assert!(polls > 5, "{polls} polls");
    assert!(r.cut().is_none(), "{tag}: {:?}", r.cut());
    assert_eq!(
        r.end().map(|e| e.polls as usize),
        Some(polls),
        "{tag}: closed with its end record"
    );
}

/// A hangup (the terminal closed, an ssh session dropped) while recording.
#[test]
fn sighup_restores_the_terminal_and_closes_the_recording() {
    if have_tmux("sighup_restores_the_terminal_and_closes_the_recording") {
        recording_closed_on("hup", End::Signal("HUP"), 129);
    }
}

#[test]
fn sigterm_closes_the_recording() {
    if have_tmux("sigterm_closes_the_recording") {
        recording_closed_on("termrec", End::Signal("TERM"), 143);
    }
}

#[test]
fn q_closes_the_recording() {
    if have_tmux("q_closes_the_recording") {
        recording_closed_on("qrec", End::Key("q"), 0);
    }
}

#[test]
fn a_panic_closes_the_recording() {
    if have_tmux("a_panic_closes_the_recording") {
        recording_closed_on("panicrec", End::Panic, 101);
    }
}

#[test]
fn a_panic_in_a_background_task_ends_the_app_and_restores_the_terminal() {
    if !have_tmux("a_panic_in_a_background_task_ends_the_app_and_restores_the_terminal") {
        return;
    }
    let s = Session::new("panic", 100, 30);
    s.line(&format!(
        "ROCETOP_TEST_PANIC_AFTER_MS=1500 {BIN} --demo 2>/dev/null; echo EXITED-$?"
    ));
    s.wait_for("EXITED-101", 10)
        .unwrap_or_else(|c| panic!("a task panic did not end the app with 101:\n{c}"));
    s.assert_shell_usable();
}

/// An allocation that fails aborts the process (no destructor runs): the terminal is restored
/// all the same. Run from `sh`, which (unlike an interactive bash) does not put the terminal
/// back itself after a job a signal killed, and asked before any shell prompt: cooked mode and
/// the main screen, with SIGABRT (134) as the exit status.
#[test]
fn an_allocation_failure_restores_the_terminal() {
    if !have_tmux("an_allocation_failure_restores_the_terminal") {
        return;
    }
    let s = Session::new("oom", 100, 30);
    s.line(&format!(
        "sh -c 'ulimit -c 0; ROCETOP_TEST_ALLOC_FAIL_AFTER_MS=1500 {BIN} --demo 2>/dev/null; \
         echo EXITED-$?; stty -a | tr \" \" \"\\n\" | grep -x -e icanon -e -icanon'"
    ));
    let c = s
        .wait_for_fn(|c| c.lines().any(|l| l.trim().ends_with("icanon")), 10)
        .unwrap_or_else(|c| panic!("the allocation failure did not end it:\n{c}"));
    assert!(c.contains("EXITED-134"), "aborted (SIGABRT):\n{c}");
    let alt = s.tmux(&["display", "-p", "-t", &s.0, "#{alternate_on}"]);
    assert_eq!(alt.trim(), "0", "left in the alternate screen:\n{c}");
    assert!(
        c.lines().any(|l| l.trim() == "icanon"),
        "left in raw mode:\n{c}"
    );
}

#[test]
fn without_a_terminal_it_says_so() {
    let out = Command::new(BIN)
        .arg("--demo")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("needs a terminal") && err.contains("rocetop snapshot"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_recording_replays_on_the_same_screen_with_pause() {
    if !have_tmux("a_recording_replays_on_the_same_screen_with_pause") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let rec = dir.path().join("demo.rec");
    let st = Command::new(BIN)
        .args(["record", "--demo", "--duration", "3s", "--out"])
        .arg(&rec)
        .status()
        .expect("record");
    assert!(st.success());
    let s = Session::new("replay", 120, 40);
    s.line(&format!("{BIN} replay {}; echo EXITED-$?", rec.display()));
    let c = s
        .wait_for("REPLAY", 10)
        .unwrap_or_else(|c| panic!("no replay clock:\n{c}"));
    assert!(c.contains("ubunturdma"), "node rows:\n{c}");
    s.send("Space");
    s.wait_for("PAUSED", 5)
        .unwrap_or_else(|c| panic!("space did not pause:\n{c}"));
    s.send("q");
    s.wait_for("EXITED-0", 5)
        .unwrap_or_else(|c| panic!("q did not exit cleanly:\n{c}"));
}

/// The real binary: `q` closing help does not quit; Enter charts the selected node and the key
/// that closes the chart does nothing else; then `q` quits.
#[test]
fn a_key_closing_an_overlay_does_nothing_else() {
    if !have_tmux("a_key_closing_an_overlay_does_nothing_else") {
        return;
    }
    let s = Session::new("overlay", 120, 40);
    s.line(&format!("{BIN} --demo; echo EXITED-$?"));
    s.wait_for("ubunturdma8", 10)
        .unwrap_or_else(|c| panic!("no node rows:\n{c}"));
    s.send("?");
    s.wait_for("any key closes this", 5)
        .unwrap_or_else(|c| panic!("? shows no help:\n{c}"));
    s.send("q");
    // The help goes away and rocetop keeps running.
    let mut c = s.capture();
    for _ in 0..25 {
        if !c.contains("any key closes this") {
            break;
        }
        sleep(Duration::from_millis(200));
        c = s.capture();
    }
    assert!(!c.contains("any key closes this"), "help still open:\n{c}");
    sleep(Duration::from_millis(700));
    let c = s.capture();
    assert!(!c.contains("EXITED"), "q closing help quit rocetop:\n{c}");
    assert!(c.contains("Nodes"), "{c}");
    s.send("Enter");
    let c = s
        .wait_for("(any key closes)", 5)
        .unwrap_or_else(|c| panic!("Enter shows no chart:\n{c}"));
    assert!(c.contains("ECN marked/s"), "the node's charts:\n{c}");
    s.send("q");
    sleep(Duration::from_millis(900));
    let c = s.capture();
    assert!(
        !c.contains("EXITED") && !c.contains("(any key closes)"),
        "q closing the chart quit or did not close it:\n{c}"
    );
    s.send("q");
    s.wait_for("EXITED-0", 5)
        .unwrap_or_else(|c| panic!("q did not exit with 0:\n{c}"));
}

/// Episodes: the demo's first congestion episode is told on the Overview, culprit port and node
/// named, without a key; `[` travels back with a banner, Esc returns live; `e` lists episodes.
#[test]
fn the_episode_line_names_the_culprit_and_time_travel_shows_a_banner() {
    if !have_tmux("the_episode_line_names_the_culprit_and_time_travel_shows_a_banner") {
        return;
    }
    let s = Session::new("episode", 140, 40);
    s.line(&format!("{BIN} --demo; echo EXITED-$?"));
    // The first episode starts 15-22 s in; the detector needs ~10 s of baseline before it.
    let c = s
        .wait_for("Ethernet1/1/2 → ubunturdma6", 45)
        .unwrap_or_else(|c| panic!("no episode naming the culprit:\n{c}"));
    assert!(c.contains(" Episode: step "), "{c}");
    assert!(c.contains("PFC storm ii1/1/1-6"), "{c}");
    s.send("[");
    let c = s
        .wait_for("Esc: live", 5)
        .unwrap_or_else(|c| panic!("no time-travel banner:\n{c}"));
    assert!(c.contains("(−10s)"), "{c}");
    assert!(
        c.contains("▼ cursor"),
        "the timeline marks the cursor:\n{c}"
    );
    s.send("Escape");
    sleep(Duration::from_millis(600));
    assert!(!s.capture().contains("Esc: live"), "Esc returns to live");
    s.send("e");
    s.wait_for("training lost", 5)
        .unwrap_or_else(|c| panic!("no episodes list:\n{c}"));
    s.send("Escape");
    s.send("q");
    s.wait_for("EXITED-0", 5)
        .unwrap_or_else(|c| panic!("q did not exit with 0:\n{c}"));
}
