//! The node's awk and the reassembler, together and apart.

use super::*;
use proptest::prelude::*;
use std::io::Write;
use std::process::{Command, Stdio};

/// `sh -c script` with its stdin and stdout piped to the test.
fn piped_sh(script: &str) -> std::process::Child {
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sh")
}

/// Run the node's awk on these dumps (as the loop would feed it) and reassemble its frames.
fn through_awk(dumps: &[String]) -> (Vec<String>, usize) {
    let wire = wire_of(dumps);
    let mut r = Reassembler::new();
    let mut got = Vec::new();
    for line in wire.split_terminator('\n') {
        if let Some(d) = r.push(line).expect("frame") {
            got.push(d);
            // As the stream does between frames.
            r.pack();
        }
    }
    (got, wire.len())
}

fn lines(v: &[&str]) -> String {
    v.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn only_changed_lines_travel_and_dumps_come_back_exact() {
    let d1 = lines(&["a:1", "b:2", "1.0", "", "x\ty"]);
    // "1.0" -> "1" must travel although awk compares numeric-looking lines as numbers.
    let d2 = lines(&["a:1", "b:3", "1", "", "x\ty"]);
    let d3 = lines(&["a:1", "b:3", "1", "", "x\ty", "new:7"]);
    let d4 = lines(&["a:0"]);
    let dumps = vec![d1, d2, d3, d4, String::new(), lines(&["z"])];
    let (got, _) = through_awk(&dumps);
    assert_eq!(got, dumps);
    // The unchanged second dump is a header and an end line only.
    let (_, wire1) = through_awk(&dumps[..1]);
    let (_, wire2) = through_awk(&[dumps[0].clone(), dumps[0].clone()]);
    assert_eq!(
        wire2 - wire1,
        "@@rocetop-stream 1 5 0\n@@rocetop-stream-end 1\n".len()
    );
}

/// A node's dump of a few lines reaches the client while the loop runs, not when it ends:
/// mawk (Debian's awk) reads a pipe in blocks unless told otherwise, which held small frames
/// back indefinitely. The loop never ends by itself, so a frame that waits for EOF never comes.
#[test]
fn a_small_frame_arrives_while_the_loop_runs() {
    use std::io::BufRead;
    let nonce = "0123456789abcdef";
    let mut child = piped_sh(&node_script("echo a:1", nonce));
    // Two ticks; stdin stays open, so the loop keeps running.
    let mut ticks = child.stdin.take().expect("stdin");
    ticks.write_all(b"\n\n").expect("ticks");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut r = Reassembler::new();
    let mut frames = 0;
    while frames < 2 {
        // Generous: the loop prints a frame a second; without the fix none ever arrives.
        let Ok(line) = rx.recv_timeout(std::time::Duration::from_secs(20)) else {
            break;
        };
        frames += usize::from(r.push(&line).expect("frame").is_some());
    }
    let _ = child.kill();
    let _ = child.wait();
    drop(ticks);
    assert_eq!(frames, 2, "frames of a running loop reached the reader");
}

/// The node dumps once per tick the client writes, never on its own, and ends when the
/// client's side of stdin closes. A batch command that reads stdin (here `cat`) cannot
/// swallow the ticks: it reads /dev/null.
#[test]
fn one_dump_per_tick_and_the_loop_ends_with_its_input() {
    let nonce = "0123456789abcdef";
    let mut child = piped_sh(&node_script("echo a:1; cat", nonce));
    let mut ticks = child.stdin.take().expect("stdin");
    ticks.write_all(b"\n\n\n").expect("ticks");
    drop(ticks);
    // Returns only when the loop and awk have ended (no `sleep`, no wait for a write error).
    let out = child.wait_with_output().expect("output");
    let mut r = Reassembler::new();
    let mut dumps = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).split_terminator('\n') {
        if let Some(d) = r.push(line).expect("frame") {
            dumps.push(d);
        }
    }
    assert_eq!(dumps, vec!["a:1\n".to_string(); 3]);
}

#[test]
fn broken_frames_are_errors_not_data() {
    let mut r = Reassembler::new();
    assert!(r.push("hello").is_err());
    let mut r = Reassembler::new();
    assert!(r.push("@@rocetop-stream 1 1 1").is_err(), "skipped frame 0");
    let mut r = Reassembler::new();
    r.push("@@rocetop-stream 0 1 1").expect("header");
    assert!(r.push("9\tx").is_err(), "index out of range");
    let mut r = Reassembler::new();
    r.push("@@rocetop-stream 0 1 1").expect("header");
    r.push("1\tx").expect("line");
    assert!(r.push("@@rocetop-stream-end 7").is_err());
}

#[test]
fn a_frame_tells_what_it_changed() {
    let mut r = Reassembler::new();
    for l in ["@@rocetop-stream 0 2 2", "1\ta", "2\tb"] {
        r.push(l).expect("line");
    }
    r.push("@@rocetop-stream-end 0").expect("end");
    assert!(r.resized(), "the first dump");
    for l in ["@@rocetop-stream 1 2 1", "2\tc"] {
        r.push(l).expect("line");
    }
    let d = r.push("@@rocetop-stream-end 1").expect("end");
    assert_eq!(d.as_deref(), Some("a\nc\n"));
    assert!(!r.resized());
    assert_eq!(r.changes(), &[(1, "b".to_string())]);
    assert_eq!(r.lines().collect::<Vec<_>>(), ["a", "c"]);
    for l in ["@@rocetop-stream 2 3 1", "3\td", "@@rocetop-stream-end 2"] {
        r.push(l).expect("line");
    }
    assert!(r.resized(), "a line more");
}

#[test]
fn a_frame_that_lies_about_new_lines_is_refused() {
    // Fewer lines sent than the dump gained: refused at the header.
    let mut r = Reassembler::new();
    let e = r.push("@@rocetop-stream 0 2 1").expect_err("header");
    assert!(e.0.contains("only 1 sent"), "{e}");
    // Enough lines, but one set twice and a new one never.
    let mut r = Reassembler::new();
    r.push("@@rocetop-stream 0 2 2").expect("header");
    r.push("1\ta").expect("line");
    assert!(matches!(r.push("1\tb"), Err(FrameError(m)) if m.contains("new line 2")));
}

/// A header's claim costs nothing until its lines come: 4 000 000 lines, none sent yet, no room
/// kept for them (a line count is no promise of bytes).
#[test]
fn a_header_claiming_millions_of_lines_allocates_nothing_for_them() {
    let mut r = Reassembler::new();
    r.push("@@rocetop-stream 0 4000000 4000000")
        .expect("header");
    assert_eq!(r.set.capacity(), 0);
    assert!(r.pending.capacity() == 0 && r.pending_text.capacity() == 0);
    // Over the cap's worth of lines (each is at least its `\n`): refused at once.
    let mut small = Reassembler::with_cap(1000);
    let e = small.push("@@rocetop-stream 0 1001 1001").expect_err("cap");
    assert!(e.0.contains("poll.max_answer_bytes"), "{e}");
}

/// A node that rewrites one line with a megabyte again and again (or keeps a megabyte of it for
/// a dozen bytes on the wire, `1+1048576\t`), or sends a dump past the cap, is refused once its
/// frame's text passes the cap: memory stays bounded by what an exec answer may hold.
#[test]
fn a_frame_past_the_answer_cap_is_refused() {
    let cap = 64 << 10;
    let big = "x".repeat(16 << 10);
    // The same line set again and again.
    let mut r = Reassembler::with_cap(cap);
    r.push("@@rocetop-stream 0 1000 1000").expect("header");
    let mut err = None;
    for i in 0..1000 {
        if let Err(e) = r.push(&format!("1\t{big}")) {
            err = Some((i, e));
            break;
        }
    }
    let (i, e) = err.expect("refused");
    assert!(i <= cap / big.len(), "refused after {i} lines");
    assert!(e.0.contains("poll.max_answer_bytes"), "{e}");
    assert!(r.pending_text.capacity() <= 2 * cap);
    // A short line keeping all of the long one: refused before the copy.
    let mut r = Reassembler::with_cap(cap);
    r.push("@@rocetop-stream 0 1000 1000").expect("header");
    r.push(&format!("1\t{big}")).expect("line");
    let mut err = None;
    for i in 0..1000 {
        if let Err(e) = r.push(&format!("1+{}\t", big.len())) {
            err = Some((i, e));
            break;
        }
    }
    let (i, e) = err.expect("refused");
    assert!(i < cap / big.len(), "refused after {i} lines");
    assert!(e.0.contains("changed lines pass"), "{e}");
    assert!(r.pending_text.capacity() <= 2 * cap);
    // A whole dump over the cap, spread over frames so that no frame passes it: the dump does.
    let mut r = Reassembler::with_cap(cap);
    let n = 8;
    r.push(&format!("@@rocetop-stream 0 {n} {n}"))
        .expect("header");
    for i in 1..=n {
        r.push(&format!("{i}\t")).expect("line");
    }
    r.push("@@rocetop-stream-end 0").expect("end");
    let mut refused = None;
    for (seq, i) in (1..=n).enumerate() {
        let seq = seq + 1;
        r.push(&format!("@@rocetop-stream {seq} {n} 1"))
            .expect("header");
        r.push(&format!("{i}\t{big}")).expect("line");
        if let Err(e) = r.push(&format!("@@rocetop-stream-end {seq}")) {
            refused = Some((i, e));
            break;
        }
        r.pack();
    }
    let (i, e) = refused.expect("a dump over the cap");
    assert_eq!(i, cap / big.len(), "the dump that passes the cap");
    assert!(e.0.contains("a dump of"), "{e}");
}

/// The frames the node's awk prints for these dumps, as they travel.
fn wire_of(dumps: &[String]) -> String {
    let nonce = "0123456789abcdef";
    let script = node_script("true", nonce);
    let pick = script.split_once("while read").expect("loop").0;
    let awk = format!("{pick}{}", script.split_once("; done | ").expect("pipe").1);
    let mut child = piped_sh(&awk);
    let input: String = dumps
        .iter()
        .map(|d| format!("{d}{}\n", end_line(nonce)))
        .collect();
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("awk output");
    writer.join().expect("join").expect("write");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A counter line that kept its name travels as index, kept length and value; a counter
/// reset (a shorter value), a line whose name changed, a line that is new (a new device) and
/// a line whose kept part is not ASCII travel whole; every dump comes back exact.
#[test]
fn a_changed_value_travels_without_its_name() {
    let path = "/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data";
    let d1 = lines(&[
        &format!("{path}:123456789"),
        "rx_bytes: 10",
        "état: 1",
        "4: ACTIVE",
    ]);
    let d2 = lines(&[
        &format!("{path}:123456790"),
        "rx_bytes: 7",
        "état: 2",
        "4: ACTIVE",
    ]);
    let d3 = lines(&[
        &format!("{path}:123456791"),
        "tx_bytes: 7",
        "état: 2",
        "1: DOWN",
        "/sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data:5",
    ]);
    let dumps = vec![d1, d2, d3];
    let (got, _) = through_awk(&dumps);
    assert_eq!(got, dumps);
    let wire = wire_of(&dumps);
    let frames: Vec<&str> = wire.split("@@rocetop-stream-end").collect();
    let keep = path.len() + 1;
    assert_eq!(
        frames[1],
        format!(" 0\n@@rocetop-stream 1 4 3\n1+{keep}\t123456790\n2+10\t7\n3\tétat: 2\n"),
        "second frame: a reset counter is a value too; a non-ASCII line travels whole"
    );
    assert_eq!(
        frames[2],
        format!(
            " 1\n@@rocetop-stream 2 5 4\n1+{keep}\t123456791\n2\ttx_bytes: 7\n4\t1: DOWN\n5\t/sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data:5\n"
        ),
        "third frame: a new name and a new line travel whole"
    );
}

#[test]
fn a_short_line_must_fit_what_it_keeps() {
    let mut r = Reassembler::new();
    for l in ["@@rocetop-stream 0 2 2", "1\tname: 1", "2\té:1"] {
        r.push(l).expect("line");
    }
    r.push("@@rocetop-stream-end 0").expect("end");
    r.push("@@rocetop-stream 1 2 1").expect("header");
    assert!(r.push("1+9\t2").is_err(), "keeps more than the line has");
    let mut r2 = Reassembler::new();
    for l in ["@@rocetop-stream 0 1 1", "1\té:1", "@@rocetop-stream-end 0"] {
        r2.push(l).expect("line");
    }
    r2.push("@@rocetop-stream 1 1 1").expect("header");
    assert!(r2.push("1+1\tx").is_err(), "cuts a character in two");
    // A line that is new has no previous text to keep.
    let mut r3 = Reassembler::new();
    r3.push("@@rocetop-stream 0 1 1").expect("header");
    assert!(r3.push("1+2\tx").is_err());
    let mut r4 = Reassembler::new();
    for l in [
        "@@rocetop-stream 0 1 1",
        "1\tname: 1",
        "@@rocetop-stream-end 0",
    ] {
        r4.push(l).expect("line");
    }
    for l in ["@@rocetop-stream 1 1 1", "1+6\t22"] {
        r4.push(l).expect("line");
    }
    let d = r4.push("@@rocetop-stream-end 1").expect("end");
    assert_eq!(d.as_deref(), Some("name: 22\n"));
    assert_eq!(r4.changes(), &[(0, "name: 1".to_string())]);
}

/// A frame cut short (the stream ended or broke inside it) never yields a dump; what follows
/// it is refused, so the source reconnects instead of reading a mix of two dumps.
#[test]
fn a_cut_frame_yields_no_dump() {
    let dumps = vec![lines(&["a:1", "b:1", "c:1"]), lines(&["a:2", "b:2", "c:2"])];
    let wire = wire_of(&dumps);
    let all: Vec<&str> = wire.split_terminator('\n').collect();
    // Every prefix of the second frame (header and some of its lines).
    let first_end = all
        .iter()
        .position(|l| l.starts_with("@@rocetop-stream-end"))
        .expect("end");
    for cut in first_end + 1..all.len() - 1 {
        let mut r = Reassembler::new();
        let mut dumps_out = 0;
        for l in &all[..cut] {
            dumps_out += usize::from(r.push(l).expect("frame").is_some());
        }
        assert_eq!(dumps_out, 1, "only the first, whole, frame");
        // The next frame's header where the cut frame's lines should go.
        assert!(r.push("@@rocetop-stream 2 3 0").is_err(), "cut at {cut}");
    }
}

fn dump() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-zé_0-9:. \t%\\\\-]{0,12}", 0..30)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn reassembled_equals_original(seq in prop::collection::vec(dump(), 1..6)) {
        let dumps: Vec<String> = seq.iter().map(|d| d.iter().map(|l| format!("{l}\n")).collect()).collect();
        let (got, _) = through_awk(&dumps);
        prop_assert_eq!(got, dumps);
    }

    #[test]
    fn reassembly_is_pure_and_exact(seq in prop::collection::vec(dump(), 1..6)) {
        // The same frames built here (no awk): a reassembler fed them gives every dump back.
        let mut r = Reassembler::new();
        let mut prev: Vec<String> = Vec::new();
        for (s, d) in seq.iter().enumerate() {
            let changed: Vec<usize> = (0..d.len()).filter(|&i| prev.get(i) != Some(&d[i])).collect();
            r.push(&format!("@@rocetop-stream {s} {} {}", d.len(), changed.len())).expect("header");
            for i in &changed {
                // The short form wherever the previous line shares a prefix (any length).
                let line = match prev.get(*i) {
                    Some(p) if !p.is_empty() => {
                        let keep = p.bytes().zip(d[*i].bytes()).take_while(|(a, b)| a == b).count();
                        let keep = (0..=keep).rev().find(|&k| d[*i].is_char_boundary(k)).unwrap_or(0);
                        format!("{}+{keep}\t{}", i + 1, &d[*i][keep..])
                    }
                    _ => format!("{}\t{}", i + 1, d[*i]),
                };
                r.push(&line).expect("line");
            }
            let out = r.push(&format!("@@rocetop-stream-end {s}")).expect("end");
            let want: String = d.iter().map(|l| format!("{l}\n")).collect();
            prop_assert_eq!(out, Some(want));
            // And each line where its start says (the delta reads lines by index).
            prop_assert_eq!(r.lines().collect::<Vec<_>>(), d.iter().map(String::as_str).collect::<Vec<_>>());
            prop_assert_eq!(r.line_count(), d.len());
            // Most dumps kept packed until the next frame (as the stream does each): runs of
            // packed frames (each built from the last packed), and a frame now and then not.
            if s % 3 != 0 {
                r.pack();
                prop_assert_eq!(r.line_count(), d.len());
            }
            prev = d.clone();
        }
    }
}

/// A line set twice in one frame: its second setting starts from the first (with lines set in
/// between), and its change keeps what it held before the frame.
#[test]
fn a_line_set_twice_starts_from_its_first_setting() {
    let mut r = Reassembler::new();
    for l in [
        "@@rocetop-stream 0 4 4",
        "1\trx_bytes: 1",
        "2\tb: 1",
        "3\tc: 1",
        "4\td",
    ] {
        r.push(l).expect("first frame");
    }
    r.push("@@rocetop-stream-end 0").expect("end");
    for l in [
        "@@rocetop-stream 1 4 4",
        "1\trx_packets: 5",
        "3+3\t2",
        "1+12\t77",
        "1+3\tbytes: 9",
    ] {
        assert_eq!(r.push(l), Ok(None), "{l}");
    }
    let d = r.push("@@rocetop-stream-end 1").expect("end");
    assert_eq!(d.as_deref(), Some("rx_bytes: 9\nb: 1\nc: 2\nd\n"));
    assert_eq!(
        r.changes(),
        &[(0, "rx_bytes: 1".to_string()), (2, "c: 1".to_string())]
    );
    // Kept past the line's text of its first setting in this frame: refused.
    let mut r = Reassembler::new();
    for l in [
        "@@rocetop-stream 0 2 2",
        "1\tab",
        "2\tc",
        "@@rocetop-stream-end 0",
    ] {
        r.push(l).expect("line");
    }
    for l in ["@@rocetop-stream 1 2 2", "1\tx"] {
        r.push(l).expect("line");
    }
    assert!(
        r.push("1+2\ty").is_err(),
        "keeps 2 bytes of the 1 set first"
    );
}
