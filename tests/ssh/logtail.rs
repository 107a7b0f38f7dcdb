//! The training-log follower on real files in temp dirs: `tail -F` semantics of the native follower
//! (append, rotation, truncation, deletion, a file that appears later, partial lines, the last N lines
//! of a big file read from its end), the partial-line buffer (proptest), and the follower task over
//! the local, demo and a flaky transport (tests/ssh/logtail/task.rs) and over a loopback sshd
//! (tests/ssh/logtail/over_ssh.rs).

#[path = "logtail/task.rs"]
mod task;

#[path = "logtail/over_ssh.rs"]
mod over_ssh;

use proptest::prelude::*;
use rocetop::collect::logtail::local::linebuf::{CUT_MARK, LineBuf};
use rocetop::collect::logtail::local::{Event, FileFollower, RETRY_EVERY};
use std::io::Write;
use std::path::Path;

fn append(p: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .expect("open for append");
    f.write_all(text.as_bytes()).expect("append");
}

/// Poll until the follower has nothing more to read right now.
fn drain(f: &mut FileFollower) -> Vec<Event> {
    let mut out = Vec::new();
    while f.poll(&mut out) {}
    out
}

fn lines(v: &[&str]) -> Vec<Event> {
    v.iter().map(|l| Event::Line(l.to_string())).collect()
}

fn notice(text: &str) -> Event {
    Event::Notice(text.to_string())
}

/// Let the missing-file retry come due.
fn wait_retry() {
    std::thread::sleep(RETRY_EVERY + std::time::Duration::from_millis(100));
}

#[test]
fn starts_with_the_last_lines_then_follows_appends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("train.log");
    append(&p, "1\n2\n3\n4\n5\n");
    let mut f = FileFollower::new(&p, 2);
    assert_eq!(drain(&mut f), lines(&["4", "5"]));
    assert_eq!(drain(&mut f), lines(&[]), "nothing new");
    append(&p, "6\n7");
    assert_eq!(drain(&mut f), lines(&["6"]), "7 waits for its newline");
    append(&p, "7\n8\n");
    assert_eq!(drain(&mut f), lines(&["77", "8"]));
}

#[test]
fn the_last_lines_count_an_unterminated_line_and_never_more_than_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("train.log");
    append(&p, "a\nb\nc");
    let mut f = FileFollower::new(&p, 2);
    assert_eq!(drain(&mut f), lines(&["b"]), "c has no newline yet");
    append(&p, "\n");
    assert_eq!(drain(&mut f), lines(&["c"]));
    let mut all = FileFollower::new(&p, 100);
    assert_eq!(drain(&mut all), lines(&["a", "b", "c"]));
    let mut none = FileFollower::new(&p, 0);
    assert_eq!(drain(&mut none), lines(&[]));
    append(&p, "d\n");
    assert_eq!(drain(&mut none), lines(&["d"]));
}

#[test]
fn rotation_finishes_the_old_file_then_reads_the_new_one_from_its_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("train.log");
    append(&p, "a\nb\n");
    let mut f = FileFollower::new(&p, 10);
    assert_eq!(drain(&mut f), lines(&["a", "b"]));
    append(&p, "c\n");
    // logrotate: rename, the writer still writes to the old file for a moment, then a new file.
    let old = dir.path().join("train.log.1");
    std::fs::rename(&p, &old).expect("rename");
    append(&old, "d\npartial");
    append(&p, "e\nf\n");
    let mut want = lines(&["c", "d", "partial"]);
    want.push(notice(&format!(
        "tail: '{}' has been replaced;  following new file",
        p.display()
    )));
    want.extend(lines(&["e", "f"]));
    assert_eq!(drain(&mut f), want);
    append(&p, "g\n");
    append(&old, "late\n");
    assert_eq!(drain(&mut f), lines(&["g"]), "the old file is done with");
}

#[test]
fn truncation_reads_the_file_again_from_its_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("train.log");
    append(&p, "first line\nsecond line\n");
    let mut f = FileFollower::new(&p, 10);
    assert_eq!(drain(&mut f), lines(&["first line", "second line"]));
    std::fs::write(&p, "x\n").expect("truncate and write");
    let mut want = vec![notice(&format!("tail: {}: file truncated", p.display()))];
    want.extend(lines(&["x"]));
    assert_eq!(drain(&mut f), want);
    append(&p, "y\n");
    assert_eq!(drain(&mut f), lines(&["y"]));
}

#[test]
fn a_deleted_file_is_said_once_and_followed_again_when_it_comes_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("train.log");
    append(&p, "a\n");
    let mut f = FileFollower::new(&p, 10);
    assert_eq!(drain(&mut f), lines(&["a"]));
    append(&p, "b\n");
    std::fs::remove_file(&p).expect("rm");
    assert_eq!(
        drain(&mut f),
        vec![
            Event::Line("b".into()),
            notice(&format!(
                "tail: '{}' has become inaccessible: No such file or directory",
                p.display()
            ))
        ],
        "what was written before the delete is still read"
    );
    wait_retry();
    assert_eq!(drain(&mut f), lines(&[]), "said once");
    append(&p, "c\nd\n");
    wait_retry();
    let mut want = vec![notice(&format!(
        "tail: '{}' has appeared;  following new file",
        p.display()
    ))];
    want.extend(lines(&["c", "d"]));
    assert_eq!(drain(&mut f), want, "the new file from its start");
}

#[test]
fn a_file_that_does_not_exist_yet_is_waited_for_and_read_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("later.log");
    let mut f = FileFollower::new(&p, 1);
    assert_eq!(
        drain(&mut f),
        vec![notice(&format!(
            "tail: cannot open '{}' for reading: No such file or directory",
            p.display()
        ))]
    );
    assert_eq!(drain(&mut f), lines(&[]), "said once");
    append(&p, "1\n2\n3\n");
    wait_retry();
    let mut want = vec![notice(&format!(
        "tail: '{}' has appeared;  following new file",
        p.display()
    ))];
    want.extend(lines(&["1", "2", "3"]));
    assert_eq!(
        drain(&mut f),
        want,
        "every line of a new file, not the last 1"
    );
}

#[test]
fn the_start_of_a_200_mb_file_reads_only_its_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("big.log");
    // 200 MB of lines would take a while to write: a sparse file of 200 MB, then 1000 lines.
    let file = std::fs::File::create(&p).expect("create");
    file.set_len(200 << 20).expect("sparse");
    drop(file);
    let mut body = String::from("\n");
    for i in 0..1000 {
        body.push_str(&format!("iteration {i} | loss: 1.{i:03}\n"));
    }
    append(&p, &body);
    let mut f = FileFollower::new(&p, 10);
    let got = drain(&mut f);
    let want: Vec<String> = (990..1000)
        .map(|i| format!("iteration {i} | loss: 1.{i:03}"))
        .collect();
    assert_eq!(
        got,
        lines(&want.iter().map(String::as_str).collect::<Vec<_>>())
    );
    assert!(
        f.bytes_read() < 256 * 1024,
        "read {} bytes of a 200 MB file",
        f.bytes_read()
    );
}

#[test]
fn a_start_further_back_than_the_scan_begins_at_a_line_boundary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("wide.log");
    // 20 MB without a newline, then 2 lines: the last 5 lines reach past the 16 MiB scan.
    let file = std::fs::File::create(&p).expect("create");
    file.set_len(20 << 20).expect("sparse");
    drop(file);
    append(&p, "\nx\ny\n");
    let mut f = FileFollower::new(&p, 5);
    assert_eq!(drain(&mut f), lines(&["x", "y"]), "no cut half line first");
}

#[test]
fn long_lines_and_invalid_utf8_do_not_break_the_follower() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("bin.log");
    let mut bytes = vec![b'z'; 200 * 1024];
    bytes.extend_from_slice(b"\nok \xff\xfe\n");
    std::fs::write(&p, &bytes).expect("write");
    let mut f = FileFollower::new(&p, 10);
    let got = drain(&mut f);
    assert_eq!(got.len(), 2, "{:?}", got.len());
    match &got[0] {
        Event::Line(l) => {
            assert_eq!(l.len(), 64 * 1024 + CUT_MARK.len());
            assert!(l.ends_with(CUT_MARK));
        }
        e => panic!("{e:?}"),
    }
    assert_eq!(got[1], Event::Line("ok \u{fffd}\u{fffd}".into()));
}

/// The reference: split the whole input at newlines; in each line, CRs just before the newline
/// end it (CRLF), any other CR redraws it (only the last state is a line, as a terminal shows a
/// progress bar); a state longer than `max` is cut (and marked) where it passes `max`.
fn reference(input: &[u8], max: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut segs: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    let last = segs.pop().unwrap_or_default();
    let cut = |st: &[u8]| format!("{}{CUT_MARK}", String::from_utf8_lossy(&st[..max]));
    let one = |seg: &[u8], terminated: bool, out: &mut Vec<String>| {
        let mut end = seg.len();
        while end > 0 && seg[end - 1] == b'\r' {
            end -= 1;
        }
        let states: Vec<&[u8]> = seg[..end].split(|&b| b == b'\r').collect();
        // `split` yields at least one (possibly empty) piece.
        let Some((final_state, earlier)) = states.split_last() else {
            return;
        };
        for st in earlier {
            if st.len() > max {
                out.push(cut(st));
            }
        }
        if final_state.len() > max {
            out.push(cut(final_state));
        } else if terminated || !final_state.is_empty() {
            out.push(String::from_utf8_lossy(final_state).into_owned());
        }
    };
    for s in segs {
        one(s, true, &mut out);
    }
    // The unterminated end: finish() gives it when it was not already cut.
    one(last, false, &mut out);
    out
}

proptest! {
    #[test]
    fn partial_line_buffer_is_independent_of_read_boundaries(
        input in proptest::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'\r'), Just(0xffu8), Just(0xc3u8), Just(b'a'), Just(b'b')],
            0..200,
        ),
        cuts in proptest::collection::vec(0usize..200, 0..12),
        max in 1usize..12,
    ) {
        let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= input.len()).collect();
        cuts.sort_unstable();
        let mut buf = LineBuf::new(max);
        let mut got = Vec::new();
        let mut at = 0;
        for c in cuts.into_iter().chain([input.len()]) {
            buf.push(&input[at..c], &mut |l| got.push(l));
            at = c;
            // the partial line and the first state a redrawn line keeps (linebuf.rs)
            prop_assert!(buf.pending() <= 2 * max, "the partial line stays bounded");
        }
        got.extend(buf.finish());
        prop_assert_eq!(got, reference(&input, max));
    }
}
