//! Which digits of a line a sample's value is made of, so that a line whose only change is in
//! those digits is read again without the parser (delta.rs). A switch's moved `show queuing`
//! lines are counter cells (`|  Tx Pkts |  1070000|  0|  0|` → `... 1140000 ...`): the parser
//! split, trimmed and classified every cell and compared every key again only to set new
//! values, a large part of what `rocetop export` did.
//!
//! A line is cut into digit runs (maximal stretches of ASCII digits) and the text between them.
//! While tracing, the parser says which cells it read each sample's value from ([`Rec`]); a
//! cell that is one whole digit run becomes that run's bit in the sample's mask. A new line with
//! the same text between its runs, as many runs, and new digits only in runs that are values
//! ([`moved`]) makes the parser take the same steps: it reads a value cell only as a number, and
//! an all-digit cell of at most 19 digits is a number whatever its digits. So it sets the same
//! keys, and each value is the sum of its runs' new numbers.

use crate::metrics::Value;
use crate::parse::num::count;

/// A mask's bit for a gauge (the others are runs, the first 63 of a line).
pub const GAUGE: u64 = 1 << 63;

/// The most runs a line's values can be read from.
pub const MAX_RUNS: usize = 63;

/// What a line's puts were read from: one mask per sample set, in order (0: not from whole
/// digit runs, so the line is read by the parser).
#[derive(Default)]
pub struct Rec<'a> {
    /// The line being read: the cells are parts of it.
    line: &'a str,
    pub masks: Vec<u64>,
}

impl<'a> Rec<'a> {
    /// The next puts are read from `line`.
    pub fn line(&mut self, line: &'a str) {
        self.line = line;
    }

    /// A sample of value `value`, the sum of the cells of `from` that are numbers (box cells
    /// `-` and `N/A` add nothing).
    pub fn put(&mut self, value: Value, from: &[&str]) {
        let m = mask(self.line, value, from);
        self.masks.push(m);
    }
}

/// The mask of a sample of `line` of value `value` summed from the cells `from`.
fn mask(line: &str, value: Value, from: &[&str]) -> u64 {
    let kind = match value {
        Value::Counter(_) => 0,
        Value::Gauge(_) => GAUGE,
        _ => return 0,
    };
    let mut m = 0;
    for cell in from.iter().filter(|c| count(c).is_some()) {
        // Where the cell is in the line (parsers hand out parts of the line they read).
        let off = (cell.as_ptr() as usize).wrapping_sub(line.as_ptr() as usize);
        match run_index(line.as_bytes(), off, cell.len()) {
            Some(k) => m |= 1 << k,
            None => return 0,
        }
    }
    if m == 0 { 0 } else { m | kind }
}

/// The index of the digit run that bytes `off..off + len` of `line` are: none when they are not
/// a whole run (all digits, none just before or after), or past the 63rd.
fn run_index(line: &[u8], off: usize, len: usize) -> Option<usize> {
    let digit = |i: usize| line.get(i).is_some_and(u8::is_ascii_digit);
    let cell = line.get(off..off.checked_add(len)?)?;
    let whole = len > 0
        && cell.iter().all(u8::is_ascii_digit)
        && (off == 0 || !digit(off - 1))
        && !digit(off + len);
    let before = line.get(..off)?;
    let k = (0..before.len())
        .filter(|&i| digit(i) && (i == 0 || !digit(i - 1)))
        .count();
    (whole && k < MAX_RUNS).then_some(k)
}

/// Whether `new` is `old` with new digits only in the runs of `free` (a mask): the same text
/// between runs and as many runs. The numbers of `new`'s runs in `free` are put in `vals`.
pub fn moved(old: &str, new: &str, free: u64, vals: &mut [u64; MAX_RUNS]) -> bool {
    let (a, b) = (old.as_bytes(), new.as_bytes());
    if a.len() == b.len() {
        same_width(a, b, free, vals)
    } else {
        lockstep(a, b, free, vals)
    }
}

/// [`moved`] of two lines of one length (a fixed-width table's: the common case): then the runs
/// are at the same places, and one pass over both compares and reads them, 8 bytes at a time
/// where both have the same bytes and no digit (a table's padding). A walk that matched runs of
/// any width cost as much as splitting the line into cells.
fn same_width(a: &[u8], b: &[u8], free: u64, vals: &mut [u64; MAX_RUNS]) -> bool {
    // The run being read: its number, whether a digit changed or it passed u64; runs read.
    let mut run = Run::default();
    let mut k = 0;
    let mut i = 0;
    while i < a.len() {
        if let (Some(x), Some(y)) = (word(a, i), word(b, i))
            && x == y
            && !has_digit(x)
        {
            if !run.end(free, vals, &mut k) {
                return false;
            }
            i += 8;
            continue;
        }
        // Else these 8 bytes one by one.
        let to = (i + 8).min(a.len());
        for (&x, &y) in a
            .get(i..to)
            .unwrap_or(&[])
            .iter()
            .zip(b.get(i..to).unwrap_or(&[]))
        {
            let dy = y.wrapping_sub(b'0');
            if dy < 10 {
                if x.wrapping_sub(b'0') >= 10 {
                    return false;
                }
                run.digit(dy, x != y);
            } else if x != y || !run.end(free, vals, &mut k) {
                return false;
            }
        }
        i = to;
    }
    run.end(free, vals, &mut k)
}

/// A digit run being read by [`same_width`].
#[derive(Default)]
struct Run {
    open: bool,
    value: u64,
    changed: bool,
    over: bool,
}

impl Run {
    fn digit(&mut self, d: u8, changed: bool) {
        let (m, o1) = self.value.overflowing_mul(10);
        let (v, o2) = m.overflowing_add(u64::from(d));
        self.value = v;
        self.over |= o1 | o2;
        self.changed |= changed;
        self.open = true;
    }

    /// The run (if one is open) ends: run `k` of the line; false when it may not move and did,
    /// or a value passed u64.
    fn end(&mut self, free: u64, vals: &mut [u64; MAX_RUNS], k: &mut usize) -> bool {
        if !self.open {
            return true;
        }
        let run = std::mem::take(self);
        let ok = match vals.get_mut(*k) {
            Some(v) if free & (1 << *k) != 0 => {
                *v = run.value;
                !run.over
            }
            Some(_) => !run.changed,
            None => false,
        };
        *k += 1;
        ok
    }
}

/// Bytes `i..i + 8` of `t` as a word.
fn word(t: &[u8], i: usize) -> Option<u64> {
    let w: [u8; 8] = t.get(i..i + 8)?.try_into().ok()?;
    Some(u64::from_ne_bytes(w))
}

/// Whether a byte of `w` is an ASCII digit: a byte of `w ^ '0'` below 10 (the exact test for a
/// byte below n, n <= 128, of "Bit Twiddling Hacks").
fn has_digit(w: u64) -> bool {
    const ONES: u64 = u64::MAX / 255;
    let x = w ^ (ONES * u64::from(b'0'));
    x.wrapping_sub(ONES * 10) & !x & (ONES * 128) != 0
}

/// [`moved`] of two lines of different lengths: runs matched one by one, of any width.
fn lockstep(a: &[u8], b: &[u8], free: u64, vals: &mut [u64; MAX_RUNS]) -> bool {
    let (mut i, mut j, mut k) = (0, 0, 0);
    loop {
        // The text up to the next run: the same bytes in both.
        while let Some(&c) = a.get(i).filter(|c| !c.is_ascii_digit()) {
            if b.get(j) != Some(&c) {
                return false;
            }
            (i, j) = (i + 1, j + 1);
        }
        let (Some(_), Some(d)) = (a.get(i), b.get(j)) else {
            // One line ended: the other must too (no run left in either).
            return i >= a.len() && j >= b.len();
        };
        if !d.is_ascii_digit() || k >= MAX_RUNS {
            return false;
        }
        let ie = i + a[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        let je = j + b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        let (x, y) = (&a[i..ie], &b[j..je]);
        if free & (1 << k) != 0 {
            let Some(v) = digits(y) else {
                return false;
            };
            vals[k] = v;
        } else if x != y {
            return false;
        }
        (i, j, k) = (ie, je, k + 1);
    }
}

/// The number an all-digit text is; none past u64 (then `count` has none either).
fn digits(d: &[u8]) -> Option<u64> {
    d.iter().try_fold(0u64, |v, &c| {
        v.checked_mul(10)?.checked_add(u64::from(c - b'0'))
    })
}

/// The value of a sample of mask `m`, from the runs' numbers `vals`: their sum, as the parser
/// adds a box label's columns (saturating).
pub fn value(m: u64, vals: &[u64; MAX_RUNS]) -> Value {
    let mut sum = 0u64;
    let mut bits = m & !GAUGE;
    while bits != 0 {
        let k = bits.trailing_zeros() as usize;
        sum = sum.saturating_add(vals.get(k).copied().unwrap_or(0));
        bits &= bits - 1;
    }
    if m & GAUGE != 0 {
        Value::Gauge(sum as f64)
    } else {
        Value::Counter(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line as its digit runs and the texts between them (the first text may be empty).
    fn cut(l: &str) -> (Vec<&str>, Vec<&str>) {
        let (mut texts, mut runs, mut at) = (Vec::new(), Vec::new(), 0);
        let b = l.as_bytes();
        while at <= b.len() {
            let t = b[at..].iter().take_while(|c| !c.is_ascii_digit()).count();
            texts.push(&l[at..at + t]);
            at += t;
            let d = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
            if d == 0 {
                break;
            }
            runs.push(&l[at..at + d]);
            at += d;
        }
        (texts, runs)
    }

    /// `moved` is: the same texts between runs, as many runs, runs outside `free` unchanged,
    /// runs in `free` numbers (their values given).
    #[test]
    fn moved_is_a_change_of_free_runs_only() {
        let lines = [
            "",
            "7",
            "|  Tx Pkts |  1070000|  0|  0|",
            "|  Tx Pkts |  1140000|  0|  0|",
            "|  Tx Pkts |  1140000|  5|  0|",
            "|  Tx Pkts | 11400000|  0|  0|",
            "|  Tx Pkts |11400000|  0|  0|",
            "|  Tx Pkts |  -|  0|  0|",
            "|  Tx Pkts 2|  1070000|  0|  0|",
            "|  Tx Pkts |  99999999999999999999|  0|  0|",
            "|  Tx Pkts |  18446744073709551615|  0|  0|",
            "|  Tx Pkts |  114000-|  0|  0|",
            "|  Tx Pkts |  1140000|  0|  0 ",
            "|  Tx Pkts |  1140000|  0|  01",
            "     3         3         3    Active        90          Active         120",
            "     4         3         3    Active        91          Active         120",
            "     3         3         3    Active        91          Active         121",
            "WRED Drop Pkts   9",
            "WRED Drop Pkts   10",
            "TxPPP:  90, RxPPP:  120",
        ];
        for free in [0u64, 0b1, 0b10, 0b110, 0b11000, u64::MAX >> 1] {
            for a in lines {
                for b in lines {
                    let mut vals = [0; MAX_RUNS];
                    let (ta, ra) = cut(a);
                    let (tb, rb) = cut(b);
                    let want = ta == tb
                        && ra.len() == rb.len()
                        && ra.iter().zip(&rb).enumerate().all(|(k, (x, y))| {
                            if free & (1 << k) != 0 {
                                y.parse::<u64>().is_ok()
                            } else {
                                x == y
                            }
                        });
                    assert_eq!(moved(a, b, free, &mut vals), want, "{a:?} {b:?} {free:b}");
                    if want {
                        for (k, y) in rb.iter().enumerate().filter(|(k, _)| free & (1 << k) != 0) {
                            assert_eq!(Some(vals[k]), y.parse().ok(), "{b:?} run {k}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn a_word_has_a_digit_where_a_byte_is_one() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut w = [b' '; 8];
                w[at] = b;
                assert_eq!(
                    has_digit(u64::from_ne_bytes(w)),
                    b.is_ascii_digit(),
                    "{b} at {at}"
                );
            }
        }
        // Two bytes of any values next to each other, among others.
        for (x, y) in (0..=255u8).flat_map(|x| (0..=255u8).map(move |y| (x, y))) {
            for at in [0, 3, 6] {
                let mut w = *b"/:\x00\xff ~\x80\x7f";
                (w[at], w[at + 1]) = (x, y);
                let want = w.iter().any(u8::is_ascii_digit);
                assert_eq!(has_digit(u64::from_ne_bytes(w)), want, "{w:?}");
            }
        }
        assert!(!has_digit(u64::from_ne_bytes(*b"/:/:/:/:")));
        assert!(has_digit(u64::from_ne_bytes(*b"\xff\x00\x80/9:\x7f ")));
    }

    #[test]
    fn a_value_is_the_sum_of_whole_runs() {
        let line = "|  Tx Pkts 2|  1070000|  - |  5|1,2|";
        let cell = |s: &str| {
            let at = line.find(s).expect("in the line");
            &line[at..at + s.len()]
        };
        let mut r = Rec::default();
        r.line(line);
        r.put(Value::Counter(1), &[cell("1070000"), cell("-"), cell("5")]);
        r.put(Value::Gauge(1.0), &[cell("5")]);
        // Not whole runs: part of one, grouped digits, a run's text with its padding.
        r.put(Value::Counter(1), &[cell("107")]);
        r.put(Value::Counter(1), &[cell("1,2")]);
        r.put(Value::Counter(1), &[cell("  5")]);
        // Another kind of value, and a value read from no cell.
        r.put(Value::Counter32(1), &[cell("5")]);
        r.put(Value::Counter(1), &[]);
        assert_eq!(r.masks, [0b110, GAUGE | 0b100, 0, 0, 0, 0, 0]);
        let vals = {
            let mut v = [0; MAX_RUNS];
            v[1] = u64::MAX;
            v[2] = 5;
            v
        };
        assert_eq!(value(0b110, &vals), Value::Counter(u64::MAX));
        assert_eq!(value(GAUGE | 0b100, &vals), Value::Gauge(5.0));
    }
}
