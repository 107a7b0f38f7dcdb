//! Bytes in, complete lines out: the partial last line waits for its newline, bounded in size.

/// The mark a cut line ends with, so nobody takes it for the whole line.
pub const CUT_MARK: &str = " [rocetop: line cut]";

/// Splits a byte stream into lines, for the local and the SSH log followers alike. A line longer
/// than `max` bytes is cut to its first `max` bytes (plus [`CUT_MARK`]) and the rest of it, up to
/// the next newline, is dropped: memory stays bounded by `max` whatever the file holds. A lone
/// `\r` (a tqdm-style progress bar redrawing itself) starts the line over, as a terminal shows
/// it: only the last state is emitted when the `\n` comes. Every byte is looked at once (linear),
/// and bytes that are not UTF-8 are replaced (lossy), never an error.
#[derive(Debug)]
pub struct LineBuf {
    buf: Vec<u8>,
    /// The current line was already cut and sent: drop bytes until the next newline.
    dropping: bool,
    /// The last byte seen was a `\r`: a `\n` next ends the line, anything else redraws it.
    after_cr: bool,
    max: usize,
}

impl LineBuf {
    pub fn new(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            dropping: false,
            after_cr: false,
            max: max.max(1),
        }
    }

    /// Feed bytes; `emit` gets every line they complete (without its `\n` or `\r\n`).
    pub fn push(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(String)) {
        while let Some(&first) = bytes.first() {
            if self.after_cr && first != b'\r' {
                self.after_cr = false;
                if first != b'\n' {
                    // The progress line is redrawn from its start: what it said before is gone.
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
                    emit(self.take(false));
                }
                self.dropping = false;
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
        had.then(|| self.take(false))
    }

    /// Forget a partial line (the file was truncated under it).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.dropping = false;
        self.after_cr = false;
    }

    /// Bytes waiting for their newline.
    pub fn pending(&self) -> usize {
        self.buf.len()
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
        fn chunking_does_not_matter(data in proptest::collection::vec(proptest::sample::select(b"ab\r\n".to_vec()), 0..64), cut in 0usize..64) {
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
