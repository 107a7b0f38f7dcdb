//! The streaming node collector's wire format, both ends: the POSIX `sh` loop a node runs (no
//! agent, no file written on the node) and the pure [`Reassembler`] that turns its frames back into
//! the exact batch output an exec poll would have returned.
//!
//! For every tick the client writes (a newline on the channel's stdin, once per interval) the loop
//! runs the poll's batched command (batch.rs) and pipes its output, ended
//! by an end line carrying the stream's nonce, into one long-lived `awk` that keeps the previous
//! dump in memory and prints a frame with only the lines that changed:
//!
//! ```text
//! @@rocetop-stream <seq> <lines> <changed>
//! <index>\t<line>            (changed times; index from 1) or
//! <index>+<keep>\t<tail>     the line is its previous text's first <keep> bytes, then <tail>
//! @@rocetop-stream-end <seq>
//! ```
//!
//! The first frame has every line. Lines are addressed by index, so a dump that grows (a new
//! device) costs one larger frame and stays exact; every content line is counted by the header,
//! so no output can forge a frame boundary.
//!
//! The short form carries a counter line whose text up to its last word is unchanged
//! (`/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data:` + the new value): a node's
//! frame is then ~20 bytes a changed counter instead of the ~60-110 of its sysfs path. The node
//! uses it only where the kept bytes are printable ASCII, so the client's lossily decoded previous
//! line holds exactly those bytes there, and the rebuilt line is the one the dump printed.

/// The end line the loop prints after each dump; the nonce keeps output from forging it.
fn end_line(nonce: &str) -> String {
    format!("@@rocetop-{nonce}-end")
}

/// The awk program: keeps the previous dump in `p`, the current in `c`; prints changed lines.
/// Comparisons are forced to strings (`""` concatenation): awk compares numeric-looking fields
/// as numbers, and "1.0" must differ from "1".
///
/// A changed line whose text before its last word (after the last ':', space or tab) is the same
/// printable ASCII as before travels as `<index>+<keep>\t<last word>` (see the module's doc).
///
/// A frame is built in `o` and written by `printf "%s"` alone (in pieces of at most ~16 KiB, so a
/// first frame of thousands of lines costs no quadratic copying): `mawk -W interactive` writes
/// unbuffered, one `write` per `printf` argument and one per literal character of the format
/// (strace), and sshd sends what each read of the pipe gets as its own SSH packet. Printing line
/// by line made a frame of 40 changed lines hundreds of packets, each one decrypted, one
/// allocation and two task wake-ups on the client, and as many writes and reads on the node.
const AWK: &str = r#"$0 == e { k = 0
for (i = 1; i <= n; i++) if (!(i in p) || (p[i] "") != (c[i] "")) { k++; ch[k] = i }
o = sprintf("@@rocetop-stream %d %d %d\n", s, n, k)
for (j = 1; j <= k; j++) { i = ch[j]; l = c[i]
if ((i in p) && match(l, /[^: \t]*$/) && RSTART > 4 && substr(p[i], 1, RSTART - 1) == substr(l, 1, RSTART - 1) && substr(l, 1, RSTART - 1) !~ /[^\t -~]/) o = o i "+" (RSTART - 1) "\t" substr(l, RSTART) "\n"
else o = o i "\t" l "\n"
p[i] = l; if (length(o) > 16384) { printf "%s", o; o = "" } }
for (i = n + 1; i <= m; i++) delete p[i]
printf "%s", o "@@rocetop-stream-end " (s + 0) "\n"
fflush(); o = ""; m = n; n = 0; s++; next }
{ c[++n] = $0 }"#;

/// The command a node runs for the whole stream: `batch` (the poll's batched command) once for
/// every line the client writes to its stdin. The client sets the pace, so the node forks no
/// `sleep` per interval (a third of the loop's forks) and sits in the shell's `read` builtin
/// between dumps. When the client goes away, `read` sees end of input (or awk's next write
/// fails): the loop ends, nothing is left running. The batch's stdin is /dev/null, so nothing
/// it runs can swallow a tick.
pub fn node_script(batch: &str, nonce: &str) -> String {
    // mawk (Debian's and Ubuntu's default awk) reads a pipe in blocks: a small dump would sit in
    // its buffer for many intervals. `-W interactive` makes it read line by line; other awks
    // read lines as they come and are not given the flag.
    format!(
        "A=awk; case $(awk -W version 2>&1 </dev/null) in *mawk*) A='awk -W interactive' ;; esac; \
         while read -r _; do {{ {batch}\n}} </dev/null 2>&1; printf '%s\\n' '{end}' || exit; done | LC_ALL=C $A -v e='{end}' '{AWK}'",
        end = end_line(nonce)
    )
}

/// Why a stream cannot be trusted any more; the source reconnects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameError(pub String);

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A dump larger than this many lines is refused (memory bound; a node prints a few thousand).
pub const MAX_LINES: usize = 4_000_000;

#[derive(Debug)]
enum State {
    /// Between frames: expecting a header.
    Idle,
    /// Inside frame `seq`: `left` changed lines to come, then the end line.
    Body {
        seq: u64,
        left: usize,
        grew_from: usize,
    },
    End {
        seq: u64,
    },
}

/// Frames in, full dumps out: keeps the last value of every line.
#[derive(Debug)]
pub struct Reassembler {
    lines: Vec<String>,
    /// Which lines the current frame set (only lines past the old end must be set).
    set: Vec<bool>,
    /// The lines the current frame set, each with what it held before the frame.
    changes: Vec<(usize, String)>,
    /// Whether the current frame's dump has another number of lines than the one before.
    resized: bool,
    next_seq: u64,
    state: State,
}

impl Default for Reassembler {
    fn default() -> Self {
        Self::new()
    }
}

impl Reassembler {
    pub fn new() -> Self {
        Reassembler {
            lines: Vec::new(),
            set: Vec::new(),
            changes: Vec::new(),
            resized: true,
            next_seq: 0,
            state: State::Idle,
        }
    }

    /// Feed one line (without its `\n`); a complete dump when it ends a frame.
    pub fn push(&mut self, line: &str) -> Result<Option<String>, FrameError> {
        match self.state {
            State::Idle => self.header(line).map(|()| None),
            State::Body {
                seq,
                left,
                grew_from,
            } => {
                let (idx, keep, text) = indexed(line)
                    .ok_or_else(|| bad(format!("frame {seq}: not an indexed line: {line:.80}")))?;
                let slot = idx
                    .checked_sub(1)
                    .filter(|&i| i < self.lines.len())
                    .ok_or_else(|| bad(format!("frame {seq}: line index {idx} out of range")))?;
                let cur = &mut self.lines[slot];
                // A line set twice in a frame keeps what it held before the frame.
                if !self.set[slot] {
                    self.changes.push((slot, cur.clone()));
                }
                match keep {
                    None => {
                        cur.clear();
                        cur.push_str(text);
                    }
                    // The line's previous text up to `keep`, then the new tail: in place.
                    Some(k) if cur.is_char_boundary(k) => {
                        cur.truncate(k);
                        cur.push_str(text);
                    }
                    Some(k) => {
                        return Err(bad(format!(
                            "frame {seq}: line {idx} keeps {k} bytes of {}",
                            cur.len()
                        )));
                    }
                }
                self.set[slot] = true;
                self.state = if left > 1 {
                    State::Body {
                        seq,
                        left: left - 1,
                        grew_from,
                    }
                } else {
                    self.check_grown(seq, grew_from)?;
                    State::End { seq }
                };
                Ok(None)
            }
            State::End { seq } => {
                if line != format!("@@rocetop-stream-end {seq}") {
                    return Err(bad(format!(
                        "frame {seq}: expected its end, got {line:.80}"
                    )));
                }
                self.state = State::Idle;
                Ok(Some(self.text()))
            }
        }
    }

    fn header(&mut self, line: &str) -> Result<(), FrameError> {
        let nums: Vec<u64> = line
            .strip_prefix("@@rocetop-stream ")
            .map(|r| r.split(' ').filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default();
        let [seq, n, k] = nums[..] else {
            return Err(bad(format!("expected a frame header, got {line:.80}")));
        };
        if seq != self.next_seq {
            return Err(bad(format!("frame {seq} after {}", self.next_seq)));
        }
        let (n, k) = (usize::try_from(n).unwrap_or(usize::MAX), k as usize);
        if n > MAX_LINES || k > n {
            return Err(bad(format!("frame {seq}: {k} of {n} lines is not a dump")));
        }
        self.next_seq += 1;
        self.resized = self.lines.len() != n || seq == 0;
        self.changes.clear();
        let grew_from = self.lines.len().min(n);
        self.lines.resize(n, String::new());
        self.set.clear();
        self.set.resize(n, false);
        self.state = if k == 0 {
            self.check_grown(seq, grew_from)?;
            State::End { seq }
        } else {
            State::Body {
                seq,
                left: k,
                grew_from,
            }
        };
        Ok(())
    }

    /// Lines the dump gained must all have come in this frame.
    fn check_grown(&self, seq: u64, grew_from: usize) -> Result<(), FrameError> {
        match self.set.iter().skip(grew_from).position(|s| !s) {
            Some(i) => Err(bad(format!(
                "frame {seq}: new line {} was not sent",
                grew_from + i + 1
            ))),
            None => Ok(()),
        }
    }

    /// The last dump's lines (without their `\n`).
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// What the last frame changed: each line it set (index from 0) with what the line held
    /// before; unchanged lines were not sent. Meaningful after the frame's dump came out.
    pub fn changes(&self) -> &[(usize, String)] {
        &self.changes
    }

    /// Whether the last dump has another number of lines than the one before (or is the first).
    pub fn resized(&self) -> bool {
        self.resized
    }

    /// The dump as the batch printed it: every line followed by `\n`.
    fn text(&self) -> String {
        let len = self.lines.iter().map(|l| l.len() + 1).sum();
        let mut s = String::with_capacity(len);
        for l in &self.lines {
            s.push_str(l);
            s.push('\n');
        }
        s
    }
}

/// `<index>\t<line>` or `<index>+<keep>\t<tail>`: the index, the bytes kept, the text.
fn indexed(line: &str) -> Option<(usize, Option<usize>, &str)> {
    let (head, text) = line.split_once('\t')?;
    Some(match head.split_once('+') {
        None => (head.parse().ok()?, None, text),
        Some((i, k)) => (i.parse().ok()?, Some(k.parse().ok()?), text),
    })
}

fn bad(s: String) -> FrameError {
    FrameError(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    /// Run the node's awk on these dumps (as the loop would feed it) and reassemble its frames.
    fn through_awk(dumps: &[String]) -> (Vec<String>, usize) {
        let nonce = "0123456789abcdef";
        let script = node_script("true", nonce);
        let pick = script.split_once("while read").expect("loop").0;
        let awk = format!("{pick}{}", script.split_once("; done | ").expect("pipe").1);
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(awk)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("awk");
        let mut input = String::new();
        for d in dumps {
            input.push_str(d);
            input.push_str(&end_line(nonce));
            input.push('\n');
        }
        let mut stdin = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
        let out = child.wait_with_output().expect("awk output");
        writer.join().expect("join").expect("write");
        let wire = String::from_utf8_lossy(&out.stdout).into_owned();
        let mut r = Reassembler::new();
        let mut got = Vec::new();
        for line in wire.split_terminator('\n') {
            if let Some(d) = r.push(line).expect("frame") {
                got.push(d);
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
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(node_script("echo a:1", nonce))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
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
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(node_script("echo a:1; cat", nonce))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh");
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
        assert_eq!(r.lines(), &["a".to_string(), "c".to_string()]);
        for l in ["@@rocetop-stream 2 3 1", "3\td", "@@rocetop-stream-end 2"] {
            r.push(l).expect("line");
        }
        assert!(r.resized(), "a line more");
    }

    #[test]
    fn a_frame_that_lies_about_new_lines_is_refused() {
        let mut r = Reassembler::new();
        r.push("@@rocetop-stream 0 2 1").expect("header");
        assert!(matches!(r.push("1\ta"), Err(FrameError(m)) if m.contains("new line 2")));
    }

    /// The frames the node's awk prints for these dumps, as they travel.
    fn wire_of(dumps: &[String]) -> String {
        let nonce = "0123456789abcdef";
        let script = node_script("true", nonce);
        let pick = script.split_once("while read").expect("loop").0;
        let awk = format!("{pick}{}", script.split_once("; done | ").expect("pipe").1);
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(awk)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("awk");
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
                prev = d.clone();
            }
        }
    }
}
