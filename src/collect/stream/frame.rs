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
//! The short form carries a counter line whose text before its value is unchanged
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
/// A changed line that ends in a number, whose text before the number is the same printable
/// ASCII as before (and over 3 bytes: shorter, `+<keep>` would save nothing), travels as
/// `<index>+<keep>\t<number>` (see the module's doc). The number is found by `/[0-9]+$/`, which
/// mawk matches in about linear time on a sysfs path; a "last word" pattern (`/[^: ]*$/`) was
/// retried from every '/' and doubled awk's CPU on a node (2000 dumps of 840 lines, 36 changed:
/// 0.36 s with no short form, 0.68 s with that pattern, 0.37-0.40 s with this one).
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
if ((i in p) && match(l, /[0-9]+$/) && RSTART > 4 && substr(p[i], 1, RSTART - 1) == substr(l, 1, RSTART - 1) && substr(l, 1, RSTART - 1) !~ /[^\t -~]/) o = o i "+" (RSTART - 1) "\t" substr(l, RSTART) "\n"
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

/// Changed lines a reassembler keeps room for between frames.
const KEEP_ROOM: usize = 64;

/// Bytes of changed lines' text a reassembler keeps room for between frames (a later frame's
/// changed lines are a few dozen short ones).
const KEEP_TEXT: usize = 4 << 10;

/// A dump larger than this many lines is refused (memory bound; a node prints a few thousand).
pub const MAX_LINES: usize = 4_000_000;

/// Why a frame passed the byte cap: the config key that sets it.
const CAP_KEY: &str = "poll.max_answer_bytes";

/// The most bytes a frame's line spends on its index (`4000000+16777216\t`, with room).
const INDEX_BYTES: usize = 24;

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

/// Frames in, full dumps out: keeps the last dump.
///
/// The dump is kept as the text it is (one string) with where each line starts, not a string
/// per line: at ~840 lines a node, 512 nodes kept ~430 000 small allocations (~100 KB a node with
/// their headers and the `Vec<String>`) where the text and its offsets take ~70 KB. A frame's
/// lines are held aside until its end, then the next dump's text is built in one pass (as the
/// dump handed on was built before).
#[derive(Debug)]
pub struct Reassembler {
    /// The last dump: every line followed by `\n`.
    text: String,
    /// Where each line of `text` starts, and `text.len()` last (one more than the lines).
    starts: Vec<u32>,
    /// The lines of the frame in progress: the dump's line count, each line it set (in the order
    /// first set) with where its new text lies in `pending_text`. One string for all, not one a
    /// line: a first frame sets every line (~840 a node), and 512 streams starting at once held
    /// ~840 small allocations each (~100 KB a node with their headers) until the frame's end.
    lines_now: usize,
    pending: Vec<Pending>,
    pending_text: String,
    /// Which lines the current frame set (only lines past the old end must be set). Grown as
    /// lines come, never from a header's claim: a header of 4 000 000 lines costs nothing until
    /// they are sent.
    set: Vec<bool>,
    /// Bytes of the frame in progress as they came (header and lines, each with its `\n`), and
    /// the most it may have: its lines' text (the cap) and each line's index.
    frame_bytes: usize,
    frame_max: usize,
    /// The most bytes a frame, the text of its changed lines, or the dump it builds may hold: an
    /// exec answer's cap (`poll.max_answer_bytes`), so that a node cannot send more through a
    /// stream than through an exec.
    cap: usize,
    /// The lines the current frame set, each with what it held before the frame.
    changes: Vec<(usize, String)>,
    /// Whether the current frame's dump has another number of lines than the one before.
    resized: bool,
    next_seq: u64,
    state: State,
    /// The last dump between frames, after [`Self::pack`] (`text` and `starts` are empty then).
    packed: Option<pack::Packed>,
    /// In a frame after one packed: the dump before the frame, packed; the next [`Self::pack`]
    /// builds from it (only the lines the frame set are compared with the template again).
    before: Option<pack::Packed>,
}

impl Default for Reassembler {
    fn default() -> Self {
        Self::new()
    }
}

impl Reassembler {
    /// With the default answer cap.
    pub fn new() -> Self {
        Self::with_cap(crate::config::DEFAULT_MAX_ANSWER_BYTES)
    }

    /// Frames, their changed lines and the dumps they build bounded by `cap` bytes each.
    pub fn with_cap(cap: usize) -> Self {
        Reassembler {
            text: String::new(),
            starts: vec![0],
            lines_now: 0,
            pending: Vec::new(),
            pending_text: String::new(),
            set: Vec::new(),
            frame_bytes: 0,
            frame_max: 0,
            cap,
            changes: Vec::new(),
            resized: true,
            next_seq: 0,
            state: State::Idle,
            packed: None,
            before: None,
        }
    }

    /// Done with the frame's dump until the next frame: keep it small (pack.rs) and drop what
    /// only a frame uses. [`Self::dump`], `line`, `lines` and `changes` answer only between a
    /// frame's end and this; the next frame's header unpacks the dump. Nothing mid-frame.
    pub fn pack(&mut self) {
        if self.packed.is_some() || !matches!(self.state, State::Idle) {
            return;
        }
        // One mark a line of the dump (the frame grew `set` only as far as the lines it sent).
        self.set.resize(self.starts.len().saturating_sub(1), false);
        self.packed = Some(match self.before.take() {
            // `text` is `before`'s dump but for the lines `set` marks (or, if the frame failed,
            // `before`'s own): lines not set are taken as they were packed.
            Some(b) => b.update(&self.text, &self.starts, &self.set),
            None => pack::Packed::new(&self.text, &self.starts),
        });
        self.text = String::new();
        self.starts = Vec::new();
        self.changes = Vec::new();
        self.pending = Vec::new();
        self.pending_text = String::new();
        self.set = Vec::new();
    }

    /// The last dump's text back from [`Self::pack`], kept packed too for the next `pack`
    /// (a dump not packed since the frame before has none: it is packed anew).
    fn unpack(&mut self) {
        self.before = self.packed.take().inspect(|p| {
            (self.text, self.starts) = p.unpack();
        });
    }

    /// Feed one line (without its `\n`); a complete dump (a copy of [`Self::dump`]) when it
    /// ends a frame.
    #[cfg(test)]
    pub fn push(&mut self, line: &str) -> Result<Option<String>, FrameError> {
        Ok(self.push_line(line)?.then(|| self.text.clone()))
    }

    /// Feed one line (without its `\n`); true when it ends a frame: the dump is then
    /// [`Self::dump`], borrowed, not copied (a copy of each node's ~30 KB dump a frame, made and
    /// freed, left room in the heap that RSS kept).
    pub fn push_line(&mut self, line: &str) -> Result<bool, FrameError> {
        match self.state {
            State::Idle => self.header(line).map(|()| false),
            State::Body {
                seq,
                left,
                grew_from,
            } => {
                self.count(seq, line)?;
                let (idx, keep, text) = indexed(line)
                    .ok_or_else(|| bad(format!("frame {seq}: not an indexed line: {line:.80}")))?;
                let slot = idx
                    .checked_sub(1)
                    .filter(|&i| i < self.lines_now)
                    .ok_or_else(|| bad(format!("frame {seq}: line index {idx} out of range")))?;
                self.set_line(seq, idx, slot, keep, text)?;
                if self.set.len() <= slot {
                    self.set.resize(slot + 1, false);
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
                Ok(false)
            }
            State::End { seq } => {
                self.count(seq, line)?;
                if line != format!("@@rocetop-stream-end {seq}") {
                    return Err(bad(format!(
                        "frame {seq}: expected its end, got {line:.80}"
                    )));
                }
                self.state = State::Idle;
                self.apply()?;
                Ok(true)
            }
        }
    }

    /// Line `slot` (index `idx` in frame `seq`) is `text`, or with `keep` its text so far (in this
    /// frame, else the last dump's) up to that byte, then `text`.
    fn set_line(
        &mut self,
        seq: u64,
        idx: usize,
        slot: usize,
        keep: Option<usize>,
        text: &str,
    ) -> Result<(), FrameError> {
        // A line set twice in a frame keeps what it held before the frame; its second setting
        // starts from the first.
        let again = if self.set.get(slot).copied().unwrap_or(false) {
            Some(
                self.pending
                    .iter()
                    .rposition(|p| p.slot() == slot)
                    .ok_or_else(|| bad(format!("frame {seq}: line {idx} lost")))?,
            )
        } else {
            // A dump of another length is parsed afresh (delta.rs): its changes are not
            // kept (a first frame's were ~840 entries a node held until the next frame).
            if !self.resized {
                let old = line_in(&self.text, &self.starts, slot).unwrap_or("");
                self.changes.push((slot, old.to_string()));
            }
            None
        };
        // How many bytes of the line's text so far the new text starts with.
        let head = match keep {
            None => 0,
            Some(k) => {
                let base = match again {
                    Some(p) => &self.pending_text[self.pending[p].range()],
                    None => line_in(&self.text, &self.starts, slot).unwrap_or(""),
                };
                if !base.is_char_boundary(k) {
                    return Err(bad(format!(
                        "frame {seq}: line {idx} keeps {k} bytes of {}",
                        base.len()
                    )));
                }
                k
            }
        };
        // Checked before the copy: a short line keeping a long one's bytes (`1+1048576\t`, a dozen
        // bytes on the wire) would otherwise add a megabyte here each time it comes.
        let grows = head + text.len();
        if self.pending_text.len() + grows > self.cap {
            return Err(bad(format!(
                "frame {seq}: its changed lines pass {} bytes ({CAP_KEY}); refused",
                self.cap
            )));
        }
        let start = self.pending_text.len();
        match again {
            // Copied out first: the arena is about to grow (a line set twice is rare).
            Some(p) if head > 0 => {
                let a = self.pending[p].range().start;
                let kept = self.pending_text[a..a + head].to_string();
                self.pending_text.push_str(&kept);
            }
            Some(_) => {}
            None => {
                let base = line_in(&self.text, &self.starts, slot).unwrap_or("");
                self.pending_text.push_str(&base[..head]);
            }
        }
        self.pending_text.push_str(text);
        let (Ok(start), Ok(end)) = (start.try_into(), self.pending_text.len().try_into()) else {
            return Err(bad(format!("frame {seq}: over 4 GiB of changed lines")));
        };
        let slot = slot as u32; // below MAX_LINES
        match again {
            Some(p) => self.pending[p] = Pending { slot, start, end },
            None => self.pending.push(Pending { slot, start, end }),
        }
        Ok(())
    }

    fn header(&mut self, line: &str) -> Result<(), FrameError> {
        self.unpack();
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
        // Every line is at least its `\n`.
        if n > self.cap {
            return Err(bad(format!(
                "frame {seq}: {n} lines cannot fit in {} bytes ({CAP_KEY})",
                self.cap
            )));
        }
        let had = self.line_count();
        // Lines past the last dump's end must all be sent: a header claiming more than it sends
        // is refused here, before any line of it is waited for.
        if n.saturating_sub(had) > k {
            return Err(bad(format!(
                "frame {seq}: {n} lines, {had} known, but only {k} sent"
            )));
        }
        self.next_seq += 1;
        self.frame_bytes = 0;
        self.frame_max = (self.cap)
            .saturating_add(k.saturating_mul(INDEX_BYTES))
            .saturating_add(2 * line.len() + 64);
        self.count(seq, line)?;
        self.resized = had != n || seq == 0;
        // A first frame sets every line; later ones a few dozen. Their room is not kept.
        self.changes.clear();
        self.changes.shrink_to(KEEP_ROOM);
        self.pending.clear();
        self.pending_text.clear();
        self.lines_now = n;
        let grew_from = had.min(n);
        self.set.clear();
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

    /// The frame's end: the next dump's text, its lines the frame's where it set them and the
    /// last dump's elsewhere (`check_grown` made sure lines past the last dump's end were set).
    fn apply(&mut self) -> Result<(), FrameError> {
        if self.pending.is_empty() && self.lines_now == self.line_count() {
            return Ok(());
        }
        self.pending.sort_by_key(|p| p.slot);
        // The new text is runs of the last one's lines (copied whole, their starts shifted)
        // between the lines the frame set: a frame sets a few dozen of ~840 lines, and copying
        // line by line was most of a frame's cost. Lines past the last dump's end were all set
        // (`check_grown`); one that somehow was not is empty, as `line` answers.
        let old_n = self.line_count();
        // The bytes of lines a..b taken from the last dump (past its end: an empty line each).
        let run = |a: usize, b: usize| -> usize {
            if a >= b {
                return 0;
            }
            let c = b.min(old_n).max(a);
            let bytes = if a < c {
                (self.starts[c] - self.starts[a]) as usize
            } else {
                0
            };
            bytes + (b - c)
        };
        let mut len = 0;
        let mut from = 0;
        for p in &self.pending {
            len += run(from, p.slot()) + p.range().len() + 1;
            from = p.slot() + 1;
        }
        len += run(from, self.lines_now);
        if len > self.cap || u32::try_from(len).is_err() {
            return Err(bad(format!(
                "a dump of {len} bytes, over {} ({CAP_KEY}); refused",
                self.cap
            )));
        }
        let mut text = String::with_capacity(len);
        let mut starts = Vec::with_capacity(self.lines_now + 1);
        let mut from = 0;
        let arena = &self.pending_text;
        let ends = (self.pending.iter()).map(|p| (p.slot(), Some(&arena[p.range()])));
        for (j, l) in ends.chain(std::iter::once((self.lines_now, None))) {
            // Lines `from..j` from the last dump.
            let b = j.min(old_n);
            if from < b {
                let (sa, sb) = (self.starts[from] as usize, self.starts[b] as usize);
                let shift = text.len() as u32;
                starts.extend(self.starts[from..b].iter().map(|&x| x - sa as u32 + shift));
                text.push_str(&self.text[sa..sb]);
            }
            for _ in from.max(b)..j {
                starts.push(text.len() as u32);
                text.push('\n');
            }
            if let Some(l) = l {
                starts.push(text.len() as u32);
                text.push_str(l);
                text.push('\n');
            }
            from = j + 1;
        }
        starts.push(text.len() as u32);
        self.text = text;
        self.starts = starts;
        self.pending.clear();
        self.pending.shrink_to(KEEP_ROOM);
        self.pending_text.clear();
        self.pending_text.shrink_to(KEEP_TEXT);
        Ok(())
    }

    /// Lines the dump gained must all have come in this frame.
    fn check_grown(&self, seq: u64, grew_from: usize) -> Result<(), FrameError> {
        let sent = |i: usize| self.set.get(i).copied().unwrap_or(false);
        match (grew_from..self.lines_now).find(|&i| !sent(i)) {
            Some(i) => Err(bad(format!("frame {seq}: new line {} was not sent", i + 1))),
            None => Ok(()),
        }
    }

    /// One more line of frame `seq` came: refused once the frame passes what its header allows.
    fn count(&mut self, seq: u64, line: &str) -> Result<(), FrameError> {
        self.frame_bytes = self.frame_bytes.saturating_add(line.len() + 1);
        if self.frame_bytes > self.frame_max {
            return Err(bad(format!(
                "frame {seq}: over {} bytes (its lines' text may hold {} bytes, {CAP_KEY}); refused",
                self.frame_max, self.cap
            )));
        }
        Ok(())
    }

    /// The last dump: its lines, each followed by `\n`.
    pub fn dump(&self) -> &str {
        &self.text
    }

    /// Lines in the last dump.
    pub fn line_count(&self) -> usize {
        match &self.packed {
            Some(p) => p.line_count(),
            None => self.starts.len() - 1,
        }
    }

    /// Line `i` (from 0) of the last dump, without its `\n`.
    pub fn line(&self, i: usize) -> Option<&str> {
        line_in(&self.text, &self.starts, i)
    }

    /// The last dump's lines (without their `\n`).
    pub fn lines(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.line_count()).map(|i| self.line(i).unwrap_or(""))
    }

    /// What the last frame changed: each line it set (index from 0) with what the line held
    /// before; unchanged lines were not sent. Meaningful after the frame's dump came out, and
    /// empty when it was [`Self::resized`] (every line is new then).
    pub fn changes(&self) -> &[(usize, String)] {
        &self.changes
    }

    /// Whether the last dump has another number of lines than the one before (or is the first).
    pub fn resized(&self) -> bool {
        self.resized
    }
}

/// A line of the frame in progress: its index (from 0) and its new text's bytes in the arena.
#[derive(Debug)]
struct Pending {
    slot: u32,
    start: u32,
    end: u32,
}

impl Pending {
    fn slot(&self) -> usize {
        self.slot as usize
    }

    fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Line `i` (from 0) of a dump held as its text and line starts, without its `\n`.
fn line_in<'a>(text: &'a str, starts: &[u32], i: usize) -> Option<&'a str> {
    let (&a, &b) = (starts.get(i)?, starts.get(i + 1)?);
    text.get(a as usize..(b as usize).saturating_sub(1))
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

mod pack;

#[cfg(test)]
mod tests;
