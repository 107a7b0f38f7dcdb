//! A last dump kept between frames as its differences from one shared dump.
//!
//! 512 nodes print the same `ethtool -S` names and sysfs paths: a node's ~30 KB dump differs
//! from any other's mostly in the counters' values. Between frames (most of a node's time) only
//! the lines that differ from the same line of one process-wide template dump (the first one
//! packed) are kept, each as how many of its first bytes it shares with that line and its own
//! rest. Exact whatever the dumps are: a line that shares nothing keeps all its text; the
//! template only decides how much is saved.

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

/// A dump as its differences from the template: the lines that are not the template's same
/// line, each as how many first bytes it shares with it (`keep`) and its own rest (its tail).
/// A line the same as the template's is not kept at all (most of a node's `ethtool -S` lines:
/// counters that do not move print the same on every node).
#[derive(Debug)]
pub(super) struct Packed {
    tpl: Arc<Template>,
    /// Lines in the dump.
    n: u32,
    /// The lines that differ, in order.
    diffs: Box<[Diff]>,
    tails: Box<str>,
}

/// Line `line` (from 0): the template's same line up to `keep` bytes (none past the template's
/// end), then its tail, which ends at `end` in `tails` (and starts where the diff before's ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Diff {
    line: u32,
    keep: u32,
    end: u32,
}

impl Packed {
    /// The dump `text` (every line followed by `\n`; lines start at `starts`, `text.len()` last).
    pub(super) fn new(text: &str, starts: &[u32]) -> Packed {
        Self::against(template(text, starts), text, starts)
    }

    fn against(tpl: Arc<Template>, text: &str, starts: &[u32]) -> Packed {
        let n = starts.len() - 1;
        let (mut diffs, mut tails) = (Vec::new(), String::new());
        for i in 0..n {
            diff(&tpl, text, starts, i, &mut diffs, &mut tails);
        }
        Packed {
            tpl,
            // Below 4 GiB: the dump's own length is (checked in `apply`), and so its lines.
            n: n as u32,
            diffs: diffs.into(),
            tails: tails.into(),
        }
    }

    pub(super) fn line_count(&self) -> usize {
        self.n as usize
    }

    /// Where diff `j`'s tail starts in `tails`.
    fn tail_from(&self, j: usize) -> usize {
        j.checked_sub(1).map_or(0, |j| self.diffs[j].end as usize)
    }

    /// The dump `text` (lines at `starts`) where it is this one's but for the lines `set` marks
    /// (one a line): built from this one, the diffs of unset lines and their tails copied in
    /// runs (a frame sets a few dozen of ~840 lines, and packing every line again was most of a
    /// node's frame), the set lines compared with the template. Another line count: packed anew.
    pub(super) fn update(&self, text: &str, starts: &[u32], set: &[bool]) -> Packed {
        let n = starts.len() - 1;
        if self.line_count() != n || set.len() != n {
            return Self::against(self.tpl.clone(), text, starts);
        }
        let mut diffs = Vec::with_capacity(self.diffs.len() + 8);
        let mut tails = String::with_capacity(self.tails.len() + 64);
        let old = &self.diffs[..];
        let mut j = 0;
        let copy = |a: usize, b: usize, diffs: &mut Vec<Diff>, tails: &mut String| {
            if a < b {
                let (from, to) = (self.tail_from(a), old[b - 1].end as usize);
                let shift = (tails.len() as u32).wrapping_sub(from as u32);
                diffs.extend(old[a..b].iter().map(|d| Diff {
                    end: d.end.wrapping_add(shift),
                    ..*d
                }));
                tails.push_str(&self.tails[from..to]);
            }
        };
        for (i, _) in set.iter().enumerate().filter(|(_, s)| **s) {
            let a = j;
            while j < old.len() && (old[j].line as usize) < i {
                j += 1;
            }
            copy(a, j, &mut diffs, &mut tails);
            if j < old.len() && old[j].line as usize == i {
                j += 1;
            }
            diff(&self.tpl, text, starts, i, &mut diffs, &mut tails);
        }
        copy(j, old.len(), &mut diffs, &mut tails);
        Packed {
            tpl: self.tpl.clone(),
            n: self.n,
            diffs: diffs.into(),
            tails: tails.into(),
        }
    }

    /// The dump back: its text and line starts.
    ///
    /// In copies of runs of the template between the lines that differ, not line by line;
    /// the starts of a run's lines are the template's, shifted.
    pub(super) fn unpack(&self) -> (String, Vec<u32>) {
        let n = self.line_count();
        let (tpl, ts) = (&self.tpl.text[..], &self.tpl.starts[..]);
        let nt = ts.len() - 1;
        let both = n.min(nt);
        // The exact length: the template's lines, less and more for the lines that differ.
        let mut len = ts[both] as isize;
        for (j, d) in self.diffs.iter().enumerate() {
            let (i, tail) = (d.line as usize, d.end as usize - self.tail_from(j));
            len += match i < nt {
                true => (d.keep as usize + tail) as isize - (ts[i + 1] - ts[i] - 1) as isize,
                false => tail as isize + 1,
            };
        }
        let mut o = Out {
            text: String::with_capacity(len.max(0) as usize),
            starts: Vec::with_capacity(n + 1),
            line_from: 0,
            run_from: 0,
            shift: 0,
        };
        let mut from = 0;
        for d in &self.diffs[..] {
            let (i, k, end) = (d.line as usize, d.keep as usize, d.end as usize);
            o.flush(tpl, ts, i.min(nt));
            o.starts.push(o.text.len() as u32);
            if i < nt {
                let t = ts[i] as usize;
                o.text.push_str(&tpl[t..t + k]);
                o.text.push_str(&self.tails[from..end]);
                // Its `\n`: the template's, which the run from here starts with.
                o.run_from = ts[i + 1] as usize - 1;
                o.shift = (o.text.len() as u32).wrapping_sub(o.run_from as u32);
            } else {
                o.text.push_str(&self.tails[from..end]);
                o.text.push('\n');
            }
            o.line_from = i + 1;
            from = end;
        }
        o.flush(tpl, ts, both);
        o.starts.push(o.text.len() as u32);
        (o.text, o.starts)
    }
}

/// A dump being unpacked: lines `line_from..` are the template's, from its byte `run_from`,
/// which is `shift` bytes on in `text`.
struct Out {
    text: String,
    starts: Vec<u32>,
    line_from: usize,
    run_from: usize,
    shift: u32,
}

impl Out {
    /// The template's lines up to `to` (not past its end), in one copy.
    fn flush(&mut self, tpl: &str, ts: &[u32], to: usize) {
        if self.line_from <= to {
            // Copied, then shifted in place (a loop the compiler makes wide: ~840 lines).
            let (at, shift) = (self.starts.len(), self.shift);
            self.starts.extend_from_slice(&ts[self.line_from..to]);
            for s in &mut self.starts[at..] {
                *s = s.wrapping_add(shift);
            }
            self.text.push_str(&tpl[self.run_from..ts[to] as usize]);
            (self.line_from, self.run_from) = (to, ts[to] as usize);
        }
    }
}

/// Line `i` of `text` (lines at `starts`) as a diff against `tpl`, pushed unless it is the
/// template's same line.
fn diff(
    tpl: &Template,
    text: &str,
    starts: &[u32],
    i: usize,
    diffs: &mut Vec<Diff>,
    tails: &mut String,
) {
    let line = super::line_in(text, starts, i).unwrap_or("");
    let past = i + 1 >= tpl.starts.len();
    let t = tpl.line(i);
    let k = shared(line, t);
    if !past && k == line.len() && k == t.len() {
        return;
    }
    tails.push_str(&line[k..]);
    diffs.push(Diff {
        line: i as u32,
        keep: k as u32,
        // Below 4 GiB: the dump's own length is.
        end: tails.len() as u32,
    });
}

/// How many first bytes `line` shares with `tpl`, at a character boundary of both (equal bytes
/// before it: a boundary of one is one of the other), at most `u16::MAX`.
fn shared(line: &str, tpl: &str) -> usize {
    let (a, b) = (line.as_bytes(), tpl.as_bytes());
    let n = a.len().min(b.len()).min(u16::MAX as usize);
    // Eight bytes a step: every line of every frame is compared (byte by byte, packing cost
    // about as much as the rest of a node's frame).
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
        let d = |line, keep, end| Diff { line, keep, end };
        let want = [d(0, path.len() as u32, 3), d(1, 11, 4), d(3, 0, 7)];
        assert_eq!(
            &q.diffs[..],
            &want[..],
            "the line that is the template's is not kept"
        );
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

    #[test]
    fn a_dump_packed_from_the_last_over_many_frames_is_the_dump() {
        // A small deterministic generator: no dependency on the order tests run in.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let words = ["rx_bytes: ", "tx_bytes: ", "λμ: ", "/sys/x/y: ", "", "ñ"];
        let mut lines: Vec<String> = (0..40)
            .map(|i| format!("{}{i}", words[i % words.len()]))
            .collect();
        let tpl = {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            let (t, s) = dump(&refs);
            Arc::new(Template {
                text: t.into(),
                starts: s.into(),
            })
        };
        let pack = |lines: &[String]| {
            let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
            dump(&refs)
        };
        let (t, s) = pack(&lines);
        let mut p = Packed::against(tpl.clone(), &t, &s);
        for frame in 0..300 {
            let mut set = vec![false; lines.len()];
            if frame % 37 == 36 {
                // A resize: lines added or removed (past the template's end too).
                let n = 1 + rnd(70) as usize;
                lines.resize_with(n, || format!("new λ{}", rnd(1000)));
                set = vec![true; n];
            } else {
                for _ in 0..rnd(6) {
                    let i = rnd(lines.len() as u64) as usize;
                    let w = words[rnd(words.len() as u64) as usize];
                    lines[i] = format!("{w}{}", rnd(100_000));
                    set[i] = true;
                }
                // A line marked set but the same (a frame may resend a line unchanged).
                let i = rnd(lines.len() as u64) as usize;
                set[i] = true;
            }
            let (t, s) = pack(&lines);
            let q = p.update(&t, &s, &set);
            assert_eq!(q.unpack(), (t.clone(), s.clone()), "frame {frame}");
            let fresh = Packed::against(tpl.clone(), &t, &s);
            assert_eq!(q.diffs, fresh.diffs, "frame {frame}");
            assert_eq!(q.n, fresh.n, "frame {frame}");
            assert_eq!(q.tails, fresh.tails, "frame {frame}");
            p = q;
        }
        // Every line set: as packed anew.
        let (t, s) = pack(&lines);
        let q = p.update(&t, &s, &vec![true; lines.len()]);
        assert_eq!(q.unpack(), (t, s));
    }
}
