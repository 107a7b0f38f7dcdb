//! Number and token helpers shared by the parsers: counters as devices print them.

/// A counter as printed by a device: `1234`, `1,234`, `1_234`, `1'234`. `N/A`, `-`, empty and
/// negative numbers are `None` (missing, never 0).
pub fn count(s: &str) -> Option<u64> {
    let s = trim(s).as_bytes();
    let end = s
        .iter()
        .rposition(|b| !matches!(b, b'.' | b',' | b';'))
        .map_or(0, |i| i + 1);
    let s = &s[..end];
    if s.first().is_none_or(|b| !b.is_ascii_digit()) {
        return None;
    }
    let mut v: u64 = 0;
    for &b in s {
        match b {
            b'0'..=b'9' => v = v.checked_mul(10)?.checked_add(u64::from(b - b'0'))?,
            b',' | b'_' | b'\'' => {}
            _ => return None,
        }
    }
    Some(v)
}

/// `str::trim`, faster on the ASCII text devices print: ASCII whitespace is cut byte by byte, and
/// characters are decoded only where the text starts or ends with a non-ASCII one. A table's
/// padding is skipped 8 spaces at a compare: a switch's boxed cells are mostly leading spaces, and
/// trimming them byte by byte was most of splitting a box line.
pub fn trim(s: &str) -> &str {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c);
    let b = s.as_bytes();
    let mut pad = 0;
    while b.get(pad..pad + 8).is_some_and(|w| w == b"        ") {
        pad += 8;
    }
    let rest = b.get(pad..).unwrap_or(&[]);
    let Some(start) = rest.iter().position(|c| !ws(c)).map(|i| pad + i) else {
        return "";
    };
    let end = b.iter().rposition(|c| !ws(c)).map_or(start, |i| i + 1);
    // Both ends are ASCII non-whitespace bytes here, hence char boundaries.
    let t = s.get(start..end).unwrap_or(s);
    if t.as_bytes().first().is_some_and(|c| !c.is_ascii())
        || t.as_bytes().last().is_some_and(|c| !c.is_ascii())
    {
        return t.trim();
    }
    t
}

/// `str::lines`, splitting with a vectorised byte search (outputs of 100s of KB every second).
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let r = rest?;
        match memchr::memchr(b'\n', r.as_bytes()) {
            Some(i) => {
                rest = r.get(i + 1..).filter(|t| !t.is_empty());
                let line = r.get(..i).unwrap_or("");
                Some(line.strip_suffix('\r').unwrap_or(line))
            }
            None => {
                rest = None;
                (!r.is_empty()).then_some(r)
            }
        }
    })
}

/// How many lines [`lines`] gives, counting newlines (memchr's vectorised count: a node's
/// outputs are counted every frame; a search per line cost several times more, and a plain
/// byte loop more still).
pub fn line_count(text: &str) -> usize {
    let b = text.as_bytes();
    memchr::memchr_iter(b'\n', b).count() + usize::from(b.last().is_some_and(|&c| c != b'\n'))
}

/// The lines that differ between `old` and `new` as [`lines`] splits them, in order, each with
/// its index and both texts; `None` when the two do not have as many lines. The equal stretch
/// before each difference is skipped 16 bytes at a compare ([`same_prefix`]) and its lines counted
/// after: a switch's answers of 100s of KB, most lines unchanged, are compared every poll, and a
/// search for each line's end was a visible part of `rocetop export`'s CPU.
pub fn diff_lines<'o, 'n>(old: &'o str, new: &'n str) -> Option<Vec<(usize, &'o str, &'n str)>> {
    // The line at byte `i` of `t` as `lines` gives it, and where the next one starts.
    fn at(t: &str, i: usize) -> (&str, usize) {
        let r = t.get(i..).unwrap_or("");
        match memchr::memchr(b'\n', r.as_bytes()) {
            Some(k) => {
                let l = r.get(..k).unwrap_or("");
                (l.strip_suffix('\r').unwrap_or(l), i + k + 1)
            }
            None => (r, t.len()),
        }
    }
    let (a, b) = (old.as_bytes(), new.as_bytes());
    let (mut i, mut j, mut line) = (0, 0, 0);
    let mut out = Vec::new();
    loop {
        // The whole lines both texts share from here on: skipped, counted.
        let (ra, rb) = (a.get(i..).unwrap_or(&[]), b.get(j..).unwrap_or(&[]));
        let same = same_prefix(ra, rb);
        let whole = memchr::memrchr(b'\n', ra.get(..same).unwrap_or(&[])).map_or(0, |k| k + 1);
        line += memchr::memchr_iter(b'\n', ra.get(..whole).unwrap_or(&[])).count();
        (i, j) = (i + whole, j + whole);
        if i >= a.len() || j >= b.len() {
            break;
        }
        // The line at `i` differs in its bytes (or only in a `\r` that `lines` drops).
        let ((x, ni), (y, nj)) = (at(old, i), at(new, j));
        if x != y {
            out.push((line, x, y));
        }
        (i, j, line) = (ni, nj, line + 1);
    }
    // Any text left is one more line (`lines` gives every non-empty rest).
    (i >= a.len() && j >= b.len()).then_some(out)
}

/// How many leading bytes `a` and `b` share, compared 16 at a time (a byte loop or a `memcmp`
/// per line cost several times more).
pub fn same_prefix(a: &[u8], b: &[u8]) -> usize {
    let n = a.len().min(b.len());
    let (a, b) = (a.get(..n).unwrap_or(&[]), b.get(..n).unwrap_or(&[]));
    // As arrays, so that each compare is two loads, not a `memcmp` call.
    let chunk = |c: &[u8]| <[u8; 16]>::try_from(c).ok();
    let (ca, cb) = (a.chunks_exact(16), b.chunks_exact(16));
    let k = ca.zip(cb).take_while(|(p, q)| chunk(p) == chunk(q)).count() * 16;
    let tail = a
        .get(k..)
        .unwrap_or(&[])
        .iter()
        .zip(b.get(k..).unwrap_or(&[]));
    k + tail.take_while(|(p, q)| p == q).count()
}

/// A float as logs print them: `2.3045`, `1.5e-05`, `45.2ms` is not accepted here (see [`millis`]).
pub fn float(s: &str) -> Option<f64> {
    let s = s.trim().trim_end_matches([',', ';', '|']);
    let v: f64 = s.replace(',', "").parse().ok()?;
    // `1e-400` parses as 0: an underflow, not a measured zero.
    let underflow = v == 0.0
        && s.bytes()
            .take_while(|c| !matches!(c, b'e' | b'E'))
            .any(|c| matches!(c, b'1'..=b'9'));
    (v.is_finite() && !underflow).then_some(v)
}

/// A duration with an optional unit (`45.2ms`, `0.080s`, `156.3 ms`, `12us`) in seconds. A bare
/// number is taken in `default_unit_secs` (1.0 for seconds, 0.001 for milliseconds).
pub fn seconds(s: &str, default_unit_secs: f64) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')
        })
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v = float(num)?;
    // Divide rather than multiply by 1e-3: `45.2ms` should be exactly 0.0452 s.
    Some(match unit.trim() {
        "" if default_unit_secs < 1.0 => v / (1.0 / default_unit_secs).round(),
        "" => v * default_unit_secs,
        "s" | "sec" | "secs" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "ns" => v / 1e9,
        "m" | "min" => v * 60.0,
        _ => return None,
    })
}

/// Split on runs of whitespace and `|` (boxed tables) into non-empty cells.
pub fn cells(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || c == '|')
        .filter(|s| !s.is_empty())
        .collect()
}

/// True for lines that only draw a table (`-----`, `+----+`, `=====`).
pub fn is_rule(line: &str) -> bool {
    let t = trim(line);
    let rule_byte = |b: &u8| matches!(b, b'-' | b'=' | b'+' | b'|' | b' ');
    // Most lines are ASCII: decide on bytes, and decode characters (box-drawing ones) only from
    // the first byte that is not ASCII; a line with a byte that is neither was decoded whole
    // after the byte scan, which cost more than the scan on a switch answer's box lines.
    !t.is_empty()
        && match t.as_bytes().iter().position(|b| !rule_byte(b)) {
            None => true,
            Some(i) => {
                t.as_bytes().get(i).is_some_and(|b| !b.is_ascii())
                    && t.get(i..).is_some_and(|rest| {
                        rest.chars()
                            .all(|c| matches!(c, '-' | '=' | '+' | '|' | ' ' | '─' | '━'))
                    })
            }
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `diff_lines` gives, by comparing the two texts' `lines` one by one.
    fn naive<'a>(a: &'a str, b: &'a str) -> Option<Vec<(usize, &'a str, &'a str)>> {
        let (x, y): (Vec<&str>, Vec<&str>) = (lines(a).collect(), lines(b).collect());
        (x.len() == y.len()).then(move || {
            x.iter()
                .zip(&y)
                .enumerate()
                .filter(|(_, (p, q))| p != q)
                .map(|(i, (p, q))| (i, *p, *q))
                .collect::<Vec<_>>()
        })
    }

    /// `diff_lines` gives what comparing the two texts' `lines` one by one gives.
    #[test]
    fn diff_lines_is_a_line_by_line_compare() {
        let texts = [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\n",
            "a\nb",
            "a\nb\n",
            "a\nc\n",
            "a\r\nb\r\n",
            "x\nb\n",
            "a\n\nb\n",
            "a\n\n",
            "\na\n",
            "ab\nb\n",
            "a\nbb\n",
            "a\nb\nc",
            "a\nb\nc\n",
            "a\r",
            "a\r\r\n",
            "é\nb\n",
            "e\nb\n",
            "a\nb\r",
        ];
        let mut changes = 0;
        for a in texts {
            for b in texts {
                assert_eq!(line_count(a), lines(a).count(), "{a:?}");
                let got = diff_lines(a, b);
                assert_eq!(got, naive(a, b), "{a:?} -> {b:?}");
                changes += got.map_or(0, |c| c.len());
            }
        }
        assert!(changes > 10, "{changes}");
    }

    /// Long lines (the 16-byte compares of `same_prefix`, a difference at every offset in and
    /// across them): each edit of a box table at every char of it, against the line by line
    /// compare, both ways.
    #[test]
    fn diff_lines_finds_every_edit_of_a_long_text() {
        let row = |v: u64| {
            format!(
                "|        Tx Pkts |{v:>16}|{:>16}|               0|\n",
                v * 3
            )
        };
        let mut base: String = (1..=6).map(|v| row(v * 1_000_003)).collect();
        base.push_str("\r\nPort Egress Statistics  é\nWRED Drop Pkts       12");
        let mut cases = 0;
        for (at, ch) in base.char_indices() {
            let after = at + ch.len_utf8();
            let (head, tail) = (&base[..at], &base[after..]);
            for edit in ["7", "x", "\n", "\r", "", "ab", "\n\n"] {
                let edited = format!("{head}{edit}{tail}");
                for (a, b) in [(&base, &edited), (&edited, &base)] {
                    assert_eq!(diff_lines(a, b), naive(a, b), "{a:?} -> {b:?}");
                    cases += usize::from(naive(a, b).is_some_and(|d| !d.is_empty()));
                }
            }
        }
        assert!(cases > 1000, "{cases}");
        for (a, b, same) in [
            ("", "", 0),
            ("abc", "abd", 2),
            (&base[..40], &base[..40], 40),
        ] {
            assert_eq!(same_prefix(a.as_bytes(), b.as_bytes()), same);
        }
        assert_eq!(same_prefix(base.as_bytes(), &base.as_bytes()[..33]), 33);
    }

    #[test]
    fn counts_tolerate_separators_and_refuse_junk() {
        let cases: &[(&str, Option<u64>)] = &[
            ("1234", Some(1234)),
            ("1,200", Some(1200)),
            (" 7 ", Some(7)),
            ("N/A", None),
            ("-", None),
            ("-1", None),
            ("", None),
            ("12ab", None),
            ("99999999999999999999999", None),
            ("18446744073709551615", Some(u64::MAX)),
            ("12.", Some(12)),
            ("1,234;", Some(1234)),
            ("...", None),
            (" 5\u{a0}", Some(5)),
        ];
        for (s, want) in cases {
            assert_eq!(count(s), *want, "count({s:?})");
        }
    }

    #[test]
    fn durations_with_units() {
        let near = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() < 1e-12);
        assert!(near(seconds("45.2ms", 1.0), 0.0452));
        assert!(near(seconds("0.080s", 1.0), 0.08));
        assert!(near(seconds("150891.7", 1e-3), 150.8917));
        assert!(near(seconds("12us", 1.0), 12e-6));
        assert_eq!(seconds("3parsecs", 1.0), None);
        assert!(float("1.5e-05").is_some_and(|v| (v - 1.5e-5).abs() < 1e-12));
        assert_eq!(float("nan"), None);
    }

    #[test]
    fn trim_and_lines_agree_with_std() {
        for s in [
            "",
            " ",
            "        ",
            "                 ",
            "         1070000",
            "        \t7 ",
            "        \u{a0}x\u{a0}        ",
            "a",
            " a ",
            "\t a b \r\n",
            "\u{a0}x\u{a0}",
            " \u{3000}y ",
            "é ",
            " \u{b}z\u{c}",
            "\u{a0}",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
        for t in [
            "", "\n", "a", "a\n", "a\r\nb", "a\n\nb\n", "a\r", "a\rb\n", "\r\n", "x\n\r\n", "a\n\n",
        ] {
            assert_eq!(
                lines(t).collect::<Vec<_>>(),
                t.lines().collect::<Vec<_>>(),
                "{t:?}"
            );
        }
    }

    #[test]
    fn cells_and_rules() {
        assert_eq!(
            cells("|  Tx Pkts |   12|  22|"),
            vec!["Tx", "Pkts", "12", "22"]
        );
        assert!(is_rule("+-----+----+"));
        assert!(!is_rule("Ethernet1/1"));
        // As a check of every character would say, box-drawing ones included.
        let reference = |l: &str| {
            let t = l.trim();
            !t.is_empty()
                && t.chars()
                    .all(|c| matches!(c, '-' | '=' | '+' | '|' | ' ' | '─' | '━'))
        };
        for l in [
            "",
            "   ",
            "|        Tx Pkts |         1070000|",
            "+---+",
            " ───── ",
            "━━━|━━━",
            "--─x",
            "--é",
            "|─|─|",
            "─a",
            "\u{a0}--\u{a0}",
            "== ==",
        ] {
            assert_eq!(is_rule(l), reference(l), "{l:?}");
        }
    }
}
