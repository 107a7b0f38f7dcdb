//! Bytes in, complete lines out: the partial last line waits for its newline, bounded in size.

/// The mark a cut line ends with, so nobody takes it for the whole line.
pub const CUT_MARK: &str = " [rocetop: line cut]";

/// Splits a byte stream into lines. A line longer than `max` bytes is cut to its first `max` bytes
/// (plus [`CUT_MARK`]) and the rest of it, up to the next newline, is dropped: memory stays bounded
/// by `max` whatever the file holds. Bytes that are not UTF-8 are replaced (lossy), never an error.
#[derive(Debug)]
pub struct LineBuf {
    buf: Vec<u8>,
    /// The current line was already cut and sent: drop bytes until the next newline.
    dropping: bool,
    max: usize,
}

impl LineBuf {
    pub fn new(max: usize) -> Self {
        Self {
            buf: Vec::new(),
            dropping: false,
            max: max.max(1),
        }
    }

    /// Feed bytes; `emit` gets every line they complete (without its `\n` and a trailing `\r`).
    pub fn push(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(String)) {
        while !bytes.is_empty() {
            let nl = bytes.iter().position(|&b| b == b'\n');
            let (chunk, rest) = match nl {
                Some(i) => (&bytes[..i], Some(&bytes[i + 1..])),
                None => (bytes, None),
            };
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
            match rest {
                Some(rest) => {
                    if !self.dropping {
                        emit(self.take(false));
                    }
                    self.dropping = false;
                    bytes = rest;
                }
                None => bytes = &[],
            }
        }
    }

    /// The partial last line, if any (the file ended without a newline and will not grow again:
    /// it was rotated away or deleted).
    pub fn finish(&mut self) -> Option<String> {
        let had = !self.buf.is_empty();
        self.dropping = false;
        had.then(|| self.take(false))
    }

    /// Forget a partial line (the file was truncated under it).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.dropping = false;
    }

    /// Bytes waiting for their newline.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    fn take(&mut self, cut: bool) -> String {
        if !cut && self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
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
    fn invalid_utf8_is_replaced() {
        let (out, _) = lines(100, &[b"a\xffb\n"]);
        assert_eq!(out, ["a\u{fffd}b"]);
    }
}
