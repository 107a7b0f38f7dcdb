//! Text from other machines (switch names, sysfs directory names, remote stderr, NX-API error
//! text, training logs) made safe for a terminal. A control byte that reaches the terminal can
//! retitle the window, clear the screen or rewrite what the user reads (`ESC ] 0;…BEL`, `ESC [2J`,
//! a CR that overwrites a line, a bidi override that reverses it). Every human-facing writer
//! passes its text through [`text`] where it leaves the program (lib.rs prints, the TUI's status
//! lines); machine formats keep their values and escape the same characters in their own syntax.
//!
//! The set of characters is the one ratatui already refuses to put in a cell (`char::is_control`:
//! C0, DEL, C1) plus the Unicode format characters (bidi controls, zero-width spaces and joiners)
//! and the fillers that draw as nothing, so the TUI and the printed commands agree.

use std::borrow::Cow;
use std::fmt::Write as _;

/// A character that must not reach a terminal as itself. `\n` and `\t` are handled by the callers
/// ([`text`] keeps them, [`line`] escapes them).
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || (c >= '\u{ad}' && is_format(c))
}

/// The Unicode format characters (general category Cf: bidi embeddings, overrides, isolates and
/// marks, which reorder what follows; zero-width spaces and joiners; the BOM; the soft hyphen;
/// tags) and the blank fillers: a terminal draws none of them as a character, so `gpu1` and
/// `gpu1` + U+200B look alike and a column holding one comes out a cell short.
fn is_format(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{600}'..='\u{605}' | '\u{61c}' | '\u{6dd}' | '\u{70f}' | '\u{890}'..='\u{891}'
        | '\u{8e2}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
        | '\u{110bd}' | '\u{110cd}' | '\u{13430}'..='\u{1343f}' | '\u{1bca0}'..='\u{1bca3}'
        | '\u{1d173}'..='\u{1d17a}' | '\u{e0001}' | '\u{e0020}'..='\u{e007f}'
        // Not Cf, but drawn as nothing: the combining grapheme joiner and the Hangul fillers.
        | '\u{34f}' | '\u{115f}' | '\u{1160}' | '\u{3164}' | '\u{ffa0}')
}

fn escape_with(
    s: &str,
    keep: impl Fn(char) -> bool,
    esc: impl Fn(&mut String, char),
) -> Cow<'_, str> {
    // Printable ASCII (almost all output) is decided on bytes, in one pass.
    let suspect = s.bytes().any(|b| !(0x20..0x7f).contains(&b));
    if !suspect || !s.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if is_unsafe(c) && !keep(c) {
            esc(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Visible escape of one character: `\x1b` for ASCII controls, `\u{9b}` above.
fn visible(out: &mut String, c: char) {
    if (c as u32) < 0x80 {
        let _ = write!(out, "\\x{:02x}", c as u32);
    } else {
        let _ = write!(out, "\\u{{{:x}}}", c as u32);
    }
}

/// Multi-line human text (tables, reports, error chains): line ends and tabs kept, every other
/// control or bidi character shown as a visible escape (`\x1b]0;x\x07`).
pub fn text(s: &str) -> Cow<'_, str> {
    escape_with(s, |c| c == '\n' || c == '\t', visible)
}

/// One-line human text (a name, a reason in a status cell): line ends and tabs escaped too.
pub fn line(s: &str) -> Cow<'_, str> {
    escape_with(s, |_| false, visible)
}

/// JSON text already escapes C0 (serde): DEL, C1 and bidi characters become `\u00XX`/`\uXXXX`,
/// which denote the same string, so the value is unchanged and the bytes are safe to print.
pub fn json(s: &str) -> Cow<'_, str> {
    escape_with(
        s,
        |c| c == '\n' || c == '\t',
        |out, c| {
            // Above U+FFFF (tags, some format characters): JSON's escape is a surrogate pair.
            for u in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(out, "\\u{u:04x}");
            }
        },
    )
}

/// [`json`] over a byte stream, for a document too big to hold as one string (`parse --format
/// json` of a 125k-port reply is ~490 MB of text): each write leaves as the bytes [`json`] gives
/// for the whole document. A character split between two writes waits for its last byte (at most
/// 3 bytes carried); bytes that are not UTF-8 become U+FFFD as `String::from_utf8_lossy` makes them.
pub struct JsonWriter<W: std::io::Write> {
    inner: W,
    carry: Vec<u8>,
}

impl<W: std::io::Write> JsonWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            carry: Vec::new(),
        }
    }

    /// The end of the stream: a character still incomplete is written as U+FFFD.
    pub fn finish(mut self) -> std::io::Result<W> {
        if !self.carry.is_empty() {
            self.carry.clear();
            self.inner.write_all("\u{fffd}".as_bytes())?;
        }
        Ok(self.inner)
    }
}

impl<W: std::io::Write> std::io::Write for JsonWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let joined;
        let mut rest = if self.carry.is_empty() {
            buf
        } else {
            let mut j = std::mem::take(&mut self.carry);
            j.extend_from_slice(buf);
            joined = j;
            &joined[..]
        };
        loop {
            let (good, bad) = match std::str::from_utf8(rest) {
                Ok(s) => (s, None),
                Err(e) => {
                    let (g, b) = rest.split_at(e.valid_up_to());
                    (
                        std::str::from_utf8(g).unwrap_or_default(),
                        Some((b, e.error_len())),
                    )
                }
            };
            self.inner.write_all(json(good).as_bytes())?;
            match bad {
                None => return Ok(buf.len()),
                // Cut inside a character: the next write brings the rest.
                Some((b, None)) => {
                    self.carry = b.to_vec();
                    return Ok(buf.len());
                }
                Some((b, Some(n))) => {
                    self.inner.write_all("\u{fffd}".as_bytes())?;
                    rest = &b[n..];
                }
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Where the format has no escape for them (Prometheus label values): U+FFFD, visibly "not this".
pub fn replaced(s: &str) -> Cow<'_, str> {
    escape_with(s, |c| c == '\n', |out, _| out.push('\u{fffd}'))
}

/// One line to stderr through [`text`]: the only way rocetop writes to stderr (a test keeps it
/// so). The callers build the line with `format!`.
pub fn eprintln(line: &str) {
    std::eprintln!("{}", text(line));
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn osc_title_and_clear_are_shown_not_sent() {
        let s = "mlx5_\x1b]0;PWNDEV\x07 \x1b[2J\r\u{9b}2J\u{202e}x\n\tok";
        assert_eq!(
            text(s),
            "mlx5_\\x1b]0;PWNDEV\\x07 \\x1b[2J\\x0d\\u{9b}2J\\u{202e}x\n\tok"
        );
        assert_eq!(line("a\nb\tc"), "a\\x0ab\\x09c");
        assert!(matches!(text("plain Ethernet1/1"), Cow::Borrowed(_)));
    }

    /// Zero-width and format characters are shown, so a name holding one does not pass for
    /// another; letters of other scripts are kept.
    #[test]
    fn zero_width_and_format_characters_are_shown() {
        assert_eq!(
            line("gpu1\u{200b}\u{feff}\u{ad}\u{2060}\u{e0041}"),
            "gpu1\\u{200b}\\u{feff}\\u{ad}\\u{2060}\\u{e0041}"
        );
        assert_eq!(text("\u{3164}x\u{200d}"), "\\u{3164}x\\u{200d}");
        assert!(matches!(text("é ß ж 节点 Ethernet1/1 ±"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_escapes_denote_the_same_string() {
        let v = serde_json::json!({ "name": "a\u{9b}b\u{7f}\u{202e}\x1b\u{200b}\u{e0041}" });
        let raw = serde_json::to_string(&v).expect("ok");
        let safe = json(&raw);
        assert!(!safe.chars().any(is_unsafe), "{safe}");
        let back: serde_json::Value = serde_json::from_str(&safe).expect("ok");
        assert_eq!(back, v);
    }

    /// Every writer to stdout/stderr goes through this module: a raw `println!`/`eprintln!`/
    /// `print!` anywhere else in src/ is a path that could forget to escape.
    #[test]
    fn no_raw_print_outside_this_module() {
        fn walk(dir: &std::path::Path, bad: &mut Vec<String>) {
            for e in std::fs::read_dir(dir).expect("ok").flatten() {
                let p = e.path();
                if p.is_dir() {
                    walk(&p, bad);
                } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("src/safe.rs") {
                    let src = std::fs::read_to_string(&p).expect("ok");
                    for (i, l) in src.lines().enumerate() {
                        let raw = ["println!(", "print!(", "eprint!("]
                            .iter()
                            .any(|m| l.contains(m));
                        if raw && !l.trim_start().starts_with("//") {
                            bad.push(format!("{}:{}: {l}", p.display(), i + 1));
                        }
                    }
                }
            }
        }
        let mut bad = Vec::new();
        walk(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut bad,
        );
        assert!(bad.is_empty(), "raw prints: {bad:#?}");
    }

    proptest! {
        /// Whatever goes in, nothing unsafe comes out, and a safe input is unchanged.
        #[test]
        fn nothing_unsafe_survives(s in "\\PC*|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}a-z\\n\\t]{0,64}") {
            let t = text(&s);
            prop_assert!(!t.chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t'));
            prop_assert!(!line(&s).chars().any(is_unsafe));
            prop_assert!(!replaced(&s).chars().any(|c| is_unsafe(c) && c != '\n'));
            if !s.chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t') {
                prop_assert_eq!(t.as_ref(), s.as_str());
            }
            // The printable characters keep their order: dropping the escapes gives them back.
            let kept: String = s.chars().filter(|c| !is_unsafe(*c) || *c == '\n' || *c == '\t').collect();
            let mut rest = t.as_ref();
            for c in kept.chars() {
                let at = rest.find(c);
                prop_assert!(at.is_some(), "{c:?} lost");
                rest = &rest[at.expect("ok") + c.len_utf8()..];
            }
        }

        /// The stream writer, cut anywhere (inside a character too), prints what [`json`] prints
        /// for the whole text.
        #[test]
        fn json_writer_in_pieces_equals_json_of_the_whole(
            s in "[\\x00-\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}é€😀]{0,48}",
            cuts in proptest::collection::vec(0usize..200, 0..6),
            tail in proptest::collection::vec(0x80u8..0xff, 0..3),
        ) {
            use std::io::Write as _;
            let mut bytes = s.clone().into_bytes();
            bytes.extend_from_slice(&tail);
            let mut at: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut w = JsonWriter::new(Vec::new());
            let mut from = 0;
            for c in at.into_iter().chain([bytes.len()]) {
                w.write_all(&bytes[from..c]).expect("vec");
                from = c;
            }
            let got = w.finish().expect("vec");
            let want = json(&String::from_utf8_lossy(&bytes)).into_owned();
            prop_assert_eq!(String::from_utf8(got).expect("utf-8 out"), want);
        }

        #[test]
        fn json_stays_valid_and_equal(s in "[\\x00-\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}é]{0,32}") {
            let raw = serde_json::to_string(&s).expect("ok");
            let safe = json(&raw);
            prop_assert!(!safe.chars().any(|c| is_unsafe(c) && c != '\n' && c != '\t'));
            let back: String = serde_json::from_str(&safe).expect("ok");
            prop_assert_eq!(back, s);
        }
    }
}
