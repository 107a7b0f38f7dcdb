//! Bytes in, complete lines out: the partial last line waits for its newline, bounded in size.

/// The mark a cut line ends with, so nobody takes it for the whole line.
pub const CUT_MARK: &str = " [rocetop: line cut]";

/// Splits a byte stream into lines, for the local and the SSH log followers alike. A line longer
/// than `max` bytes is cut to its first `max` bytes (plus [`CUT_MARK`]) and the rest of it, up to
/// the next newline, is dropped: memory stays bounded by `max` whatever the file holds. A lone
/// `\r` (a tqdm-style progress bar redrawing itself) starts the line over, as a terminal shows
/// it: only the last state is emitted when the `\n` comes. One exception: a line written over a
/// progress bar that was first cleared with spaces (tqdm's `write`, which the Hugging Face Trainer
/// prints its log dicts with) is preceded by the line's first state, the bar as tqdm redrew it
/// right after the previous line: it names the step that line logged (see
/// `parse::training::progress`). Every byte is looked at once (linear), and bytes that are not
/// UTF-8 are replaced (lossy), never an error.
#[derive(Debug)]
pub struct LineBuf {
    buf: Vec<u8>,
    /// The current line was already cut and sent: drop bytes until the next newline.
    dropping: bool,
    /// The last byte seen was a `\r`: a `\n` next ends the line, anything else redraws it.
    after_cr: bool,
    /// The line's first non-blank state, when it was redrawn (at most `max` bytes).
    first: Option<Vec<u8>>,
    /// The line was cleared with spaces since its first state: it is a line written over a bar.
    cleared: bool,
    max: usize,
}

impl LineBuf {
    pub fn new(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            dropping: false,
            after_cr: false,
            first: None,
            cleared: false,
            max: max.max(1),
        }
    }

    /// Feed bytes; `emit` gets every line they complete (without its `\n` or `\r\n`).
    pub fn push(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(String)) {
        while let Some(&first) = bytes.first() {
            if self.after_cr && first != b'\r' {
                self.after_cr = false;
                if first != b'\n' {
                    // The progress line is redrawn from its start: what it said before is gone
                    // (but for its first state, see the type's comment).
                    self.note_state();
                    self.buf.clear();
                    self.dropping = false;
                }
            }
            let end = memchr::memchr2(b'\n', b'\r', bytes);
            let chunk = &bytes[..end.unwrap_or(bytes.len())];
            if !self.dropping {
                let room = self.max - self.buf.len();
                if chunk.len() > room {
                    self.buf.extend_from_slice(&chunk[..room]);
                    self.emit_first(emit);
                    emit(self.take(true));
                    self.dropping = true;
                } else {
                    self.buf.extend_from_slice(chunk);
                }
            }
            let Some(i) = end else { return };
            if bytes[i] == b'\r' {
                self.after_cr = true;
            } else {
                if !self.dropping {
                    self.emit_first(emit);
                    emit(self.take(false));
                }
                self.dropping = false;
                self.first = None;
                self.cleared = false;
            }
            bytes = &bytes[i + 1..];
        }
    }

    /// The partial last line, if any (the file ended without a newline and will not grow again:
    /// it was rotated away or deleted).
    pub fn finish(&mut self) -> Option<String> {
        let had = !self.buf.is_empty();
        self.dropping = false;
        self.after_cr = false;
        self.first = None;
        self.cleared = false;
        had.then(|| self.take(false))
    }

    /// Forget a partial line (the file was truncated under it).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.dropping = false;
        self.after_cr = false;
        self.first = None;
        self.cleared = false;
    }

    /// Bytes waiting for their newline (the kept first state included).
    pub fn pending(&self) -> usize {
        self.buf.len() + self.first.as_ref().map_or(0, Vec::len)
    }

    /// A state the line is about to be redrawn over: the first non-blank one is kept; a blank one
    /// (spaces) is a bar cleared so that a line can be written over it.
    fn note_state(&mut self) {
        if self.dropping || self.buf.is_empty() {
            return;
        }
        if self.buf.iter().all(|&b| b == b' ') {
            self.cleared = self.first.is_some();
        } else if self.first.is_none() {
            self.first = Some(self.buf.clone());
        }
    }

    /// The first state of a line written over a cleared bar, before the line itself.
    fn emit_first(&mut self, emit: &mut impl FnMut(String)) {
        let first = self.first.take();
        if std::mem::take(&mut self.cleared)
            && let Some(f) = first
        {
            emit(String::from_utf8_lossy(&f).into_owned());
        }
    }

    fn take(&mut self, cut: bool) -> String {
        let mut s = String::from_utf8_lossy(&self.buf).into_owned();
        self.buf.clear();
        if self.buf.capacity() > 4 * 4096 {
            // One long line must not keep its buffer for the rest of the run.
            self.buf.shrink_to(4096);
        }
        if cut {
            s.push_str(CUT_MARK);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(max: usize, chunks: &[&[u8]]) -> (Vec<String>, LineBuf) {
        let mut b = LineBuf::new(max);
        let mut out = Vec::new();
        for c in chunks {
            b.push(c, &mut |l| out.push(l));
        }
        (out, b)
    }

    #[test]
    fn partial_lines_wait_for_their_newline() {
        let (out, mut b) = lines(100, &[b"ab", b"c\nde", b"f\r\n", b"g"]);
        assert_eq!(out, ["abc", "def"]);
        assert_eq!(b.pending(), 1);
        assert_eq!(b.finish().as_deref(), Some("g"));
        assert_eq!(b.finish(), None);
    }

    #[test]
    fn long_lines_are_cut_and_marked_once() {
        let (out, _) = lines(4, &[b"abcdefgh", b"ij\nxy\n"]);
        assert_eq!(out, [format!("abcd{CUT_MARK}"), "xy".to_string()]);
    }

    #[test]
    fn progress_bars_keep_their_last_state_across_chunks() {
        let (out, mut b) = lines(
            100,
            &[
                b"ep 1:  10%\rep 1:  50%",
                b"\r",
                b"ep 1: 100%\r",
                b"\n",
                b"a\r\r\nb\rc",
            ],
        );
        assert_eq!(out, ["ep 1: 100%", "a"]);
        assert_eq!(b.finish().as_deref(), Some("c"));
        // A cut line that is then redrawn starts over, uncut.
        let (out, _) = lines(4, &[b"abcdefgh\rxy\n"]);
        assert_eq!(out, [format!("abcd{CUT_MARK}"), "xy".to_string()]);
    }

    /// tqdm's `write` as the Hugging Face Trainer uses it (transformers 5.23, captured by
    /// scripts/frameworks.sh): the bar redrawn after the previous line, maybe advanced, cleared
    /// with spaces, then the line. The first state comes out before the line; a bar that is only
    /// redrawn, or cleared with nothing before it, stays one line.
    #[test]
    fn a_line_written_over_a_cleared_bar_keeps_the_bars_first_state() {
        let (out, _) = lines(
            200,
            &[
                b"\r 6%| 1/16 [00:01<00:20]\r 12%| 2/16 [00:01<00:09]",
                b"\r          \r{'loss': '4.595'}\n",
                b"\r 12%| 2/16 [00:01<00:09]\r     ",
                b"\r{'loss': '4.552'}\n\r   \rplain\n",
            ],
        );
        assert_eq!(
            out,
            [
                " 6%| 1/16 [00:01<00:20]",
                "{'loss': '4.595'}",
                " 12%| 2/16 [00:01<00:09]",
                "{'loss': '4.552'}",
                "plain",
            ]
        );
        let (out, _) = lines(8, &[b"\rab\r  \rlong line\n"]);
        assert_eq!(out, ["ab".to_string(), format!("long lin{CUT_MARK}")]);
    }

    /// 64 MiB of `\r`-only progress output: nothing is emitted, the buffer never holds more than
    /// one state (the old SSH follower held all of it and rescanned it per chunk).
    #[test]
    fn cr_only_input_stays_bounded() {
        let mut b = LineBuf::new(1 << 16);
        let chunk: Vec<u8> = b"  42%|####      | 420/1000 [00:01<00:02]\r".repeat(1024);
        let mut n = 0;
        for _ in 0..(64 << 20) / chunk.len() {
            b.push(&chunk, &mut |_| n += 1);
            assert!(b.pending() < 100, "{}", b.pending());
        }
        assert_eq!(n, 0);
        b.push(b"done\n", &mut |l| assert_eq!(l, "done"));
    }

    proptest::proptest! {
        /// Any split of the input into chunks gives the same lines as feeding it whole.
        #[test]
        fn chunking_does_not_matter(data in proptest::collection::vec(proptest::sample::select(b"ab \r\n".to_vec()), 0..64), cut in 0usize..64) {
            let cut = cut.min(data.len());
            let (whole, _) = lines(8, &[&data]);
            let (parts, _) = lines(8, &[&data[..cut], &data[cut..]]);
            proptest::prop_assert_eq!(whole, parts);
        }
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let (out, _) = lines(100, &[b"a\xffb\n"]);
        assert_eq!(out, ["a\u{fffd}b"]);
    }
}
