//! A last dump kept between frames as its differences from one shared dump.
//!
//! 512 nodes print the same `ethtool -S` names and sysfs paths: a node's ~30 KB dump differs
//! from any other's mostly in the counters' values. Between frames (most of a node's time) each
//! line is kept as how many of its first bytes it shares with the same line of one process-wide
//! template dump (the first one packed), and its own rest. Exact whatever the dumps are: a line
//! that shares nothing keeps all its text; the template only decides how much is saved.

use std::sync::{Arc, Mutex, PoisonError};

/// A dump as its text and where each line starts (`text.len()` last).
#[derive(Debug)]
struct Template {
    text: Box<str>,
    starts: Box<[u32]>,
}

impl Template {
    fn line(&self, i: usize) -> &str {
        super::line_in(&self.text, &self.starts, i).unwrap_or("")
    }
}

/// The dump every stream's lines are kept against (one for the process: the first packed).
static TEMPLATE: Mutex<Option<Arc<Template>>> = Mutex::new(None);

fn template(text: &str, starts: &[u32]) -> Arc<Template> {
    let mut t = TEMPLATE.lock().unwrap_or_else(PoisonError::into_inner);
    t.get_or_insert_with(|| {
        Arc::new(Template {
            text: text.into(),
            starts: starts.into(),
        })
    })
    .clone()
}

/// A dump's lines, each the template's same line up to `keep` bytes, then its tail.
#[derive(Debug)]
pub(super) struct Packed {
    tpl: Arc<Template>,
    /// Per line: the bytes taken from the template's line (at most `u16::MAX`: the tail holds
    /// the rest of a longer shared start).
    keep: Box<[u16]>,
    /// Per line: where its tail ends in `tails` (it starts where the line before's ends).
    ends: Box<[u32]>,
    tails: Box<str>,
}

impl Packed {
    /// The dump `text` (every line followed by `\n`; lines start at `starts`, `text.len()` last).
    pub(super) fn new(text: &str, starts: &[u32]) -> Packed {
        Self::against(template(text, starts), text, starts)
    }

    fn against(tpl: Arc<Template>, text: &str, starts: &[u32]) -> Packed {
        let n = starts.len() - 1;
        let (mut keep, mut ends) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let mut tails = String::new();
        for i in 0..n {
            let line = super::line_in(text, starts, i).unwrap_or("");
            let k = shared(line, tpl.line(i));
            keep.push(k as u16);
            tails.push_str(&line[k..]);
            // Below 4 GiB: the dump's own length is (checked in `apply`).
            ends.push(tails.len() as u32);
        }
        Packed {
            tpl,
            keep: keep.into(),
            ends: ends.into(),
            tails: tails.into(),
        }
    }

    pub(super) fn line_count(&self) -> usize {
        self.keep.len()
    }

    /// The dump back: its text and line starts.
    pub(super) fn unpack(&self) -> (String, Vec<u32>) {
        let n = self.line_count();
        let len = self.keep.iter().map(|&k| k as usize + 1).sum::<usize>() + self.tails.len();
        let mut text = String::with_capacity(len);
        let mut starts = Vec::with_capacity(n + 1);
        let mut from = 0;
        for i in 0..n {
            starts.push(text.len() as u32);
            let end = self.ends[i] as usize;
            text.push_str(&self.tpl.line(i)[..self.keep[i] as usize]);
            text.push_str(&self.tails[from..end]);
            text.push('\n');
            from = end;
        }
        starts.push(text.len() as u32);
        (text, starts)
    }
}

/// How many first bytes `line` shares with `tpl`, at a character boundary of both (equal bytes
/// before it: a boundary of one is one of the other), at most `u16::MAX`.
fn shared(line: &str, tpl: &str) -> usize {
    let (a, b) = (line.as_bytes(), tpl.as_bytes());
    let n = a.len().min(b.len()).min(u16::MAX as usize);
    // Eight bytes a step: every line of every frame is compared (byte by byte, packing took
    // about as many instructions as the rest of a node's frame).
    let mut k = 0;
    while k + 8 <= n && word(a, k) == word(b, k) {
        k += 8;
    }
    while k < n && a[k] == b[k] {
        k += 1;
    }
    while !line.is_char_boundary(k) {
        k -= 1;
    }
    k
}

fn word(s: &[u8], k: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&s[k..k + 8]);
    u64::from_ne_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dump(lines: &[&str]) -> (String, Vec<u32>) {
        let mut text = String::new();
        let mut starts = vec![];
        for l in lines {
            starts.push(text.len() as u32);
            text.push_str(l);
            text.push('\n');
        }
        starts.push(text.len() as u32);
        (text, starts)
    }

    #[test]
    fn a_packed_dump_unpacks_to_itself_whatever_the_template() {
        let (t, s) = dump(&["rx_bytes: 10", "tx_bytes: 20", "λμ: 3", "x"]);
        let first = Packed::new(&t, &s);
        assert_eq!(first.unpack(), (t.clone(), s.clone()));
        // Another dump: lines that share a start with the template's, and lines that do not
        // (longer, shorter, a multi-byte character cut by the shared bytes, more lines).
        let (t2, s2) = dump(&["rx_bytes: 11", "tx_packets: 2", "λν: 3", "", "extra: 1", ""]);
        let p = Packed::new(&t2, &s2);
        assert_eq!(p.unpack(), (t2, s2));
        assert!(Arc::ptr_eq(&p.tpl, &first.tpl), "one template for all");
        // An empty dump.
        let (t3, s3) = dump(&[]);
        assert_eq!(Packed::new(&t3, &s3).unpack(), (t3, s3));
    }

    #[test]
    fn only_what_differs_from_the_template_is_kept() {
        let path = "/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data:";
        let (t, s) = dump(&[&format!("{path}123"), "rx_bytes: 7", "same"]);
        let tpl = Arc::new(Template {
            text: t.into(),
            starts: s.into(),
        });
        let (t2, s2) = dump(&[&format!("{path}456"), "rx_bytes: 71", "same", "new"]);
        let q = Packed::against(tpl, &t2, &s2);
        assert_eq!(q.tails.as_ref(), "4561new");
        assert_eq!(&q.keep[..], &[path.len() as u16, 11, 4, 0]);
        assert_eq!(q.unpack(), (t2, s2));
    }

    #[test]
    fn a_shared_start_stops_at_a_character_boundary() {
        assert_eq!(shared("aλ", "aμ"), 1);
        assert_eq!(shared("abc", "abd"), 2);
        assert_eq!(shared("", "abc"), 0);
        assert_eq!(shared("abc", "abc"), 3);
        // Past whole words: the first difference at every place of the second and third word.
        let base = "0123456789abcdefghijklmnopqrstuv";
        for i in 8..base.len() {
            let mut other = base.as_bytes().to_vec();
            other[i] = b'#';
            let other = String::from_utf8(other).expect("ascii");
            assert_eq!(shared(base, &other), i);
            assert_eq!(shared(&other[..i + 1], base), i);
        }
        assert_eq!(shared("0123456789λ", "0123456789μ"), 10);
        let long = "a".repeat(70_000);
        assert_eq!(shared(&long, &long), u16::MAX as usize);
    }
}
