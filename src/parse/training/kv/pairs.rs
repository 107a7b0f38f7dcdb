//! The tokenizer of the generic reader: every number in a line, with the key printed before it
//! (after the last delimiter), the separator that joined them and the unit the value carries.

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Unit {
    None,
    /// A duration; the factor converts to seconds.
    Time(f64),
    /// A time per step (`3ms/step`, `0.855 sec/step`): the step time whatever the key; the factor
    /// converts to seconds.
    PerStep(f64),
    SamplesPerSecond,
    Other,
}

/// Units a value may carry, longest first so that `samples/sec` is not read as `s`.
pub(super) const UNITS: &[(&str, Unit)] = &[
    ("samples/second", Unit::SamplesPerSecond),
    ("samples/sec", Unit::SamplesPerSecond),
    ("samples/s", Unit::SamplesPerSecond),
    ("sample/s", Unit::SamplesPerSecond),
    ("tokens/sec", Unit::Other),
    ("tokens/s", Unit::Other),
    ("tok/s", Unit::Other),
    ("sec/step", Unit::PerStep(1.0)),
    ("sec/iter", Unit::PerStep(1.0)),
    ("ms/step", Unit::PerStep(1e-3)),
    ("ms/iter", Unit::PerStep(1e-3)),
    ("us/step", Unit::PerStep(1e-6)),
    ("s/step", Unit::PerStep(1.0)),
    ("s/iter", Unit::PerStep(1.0)),
    ("it/s", Unit::Other),
    ("s/it", Unit::Other),
    ("seconds", Unit::Time(1.0)),
    ("secs", Unit::Time(1.0)),
    ("sec", Unit::Time(1.0)),
    ("msec", Unit::Time(1e-3)),
    ("ms", Unit::Time(1e-3)),
    ("us", Unit::Time(1e-6)),
    ("µs", Unit::Time(1e-6)),
    ("ns", Unit::Time(1e-9)),
    ("min", Unit::Time(60.0)),
    ("s", Unit::Time(1.0)),
    ("%", Unit::Other),
    ("GiB", Unit::Other),
    ("MiB", Unit::Other),
    ("GB", Unit::Other),
    ("MB", Unit::Other),
    ("KB", Unit::Other),
];

/// A number and the key printed before it.
#[derive(Debug)]
pub(super) struct Pair<'a> {
    pub key: &'a str,
    /// The key ended in `:` or `=`.
    pub sep: bool,
    /// The key is all the text between a delimiter (`|`, `,`, the line's start) and its value: a
    /// column of a `| key value |` record, so it needs no `:` to be a key.
    pub delimited: bool,
    /// The name of the bracket the pair is in (`tot_loss[loss=1.088, ...]`: `tot_loss`), so that
    /// `loss[loss=0.74]` and `tot_loss[loss=1.09]` are two different keys.
    pub outer: Option<&'a str>,
    pub value: f64,
    pub unit: Unit,
}

/// The pairs of a line, left to right.
pub(super) struct Pairs<'a> {
    s: &'a str,
    i: usize,
    key_start: usize,
    outer: Option<&'a str>,
}

impl<'a> Pairs<'a> {
    pub fn new(s: &'a str) -> Self {
        Self {
            s,
            i: 0,
            key_start: 0,
            outer: None,
        }
    }
}

/// Characters that end a key: what is before them belongs to something else.
fn is_hard_delimiter(c: u8) -> bool {
    matches!(
        c,
        b',' | b'|' | b';' | b'[' | b']' | b'{' | b'}' | b'<' | b'>' | b'\t'
    )
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'.'
}

impl<'a> Iterator for Pairs<'a> {
    type Item = Pair<'a>;

    fn next(&mut self) -> Option<Pair<'a>> {
        let b = self.s.as_bytes();
        while self.i < b.len() {
            let i = self.i;
            let c = b[i];
            if (i == 0 || !is_word(b[i - 1]))
                && let Some((value, end)) = non_finite(self.s, i)
            {
                let (key, sep, delimited) = key_before(&self.s[self.key_start..i]);
                self.key_start = end;
                self.i = end;
                return Some(Pair {
                    key,
                    sep,
                    delimited,
                    outer: self.outer,
                    value,
                    unit: Unit::None,
                });
            }
            let starts = c.is_ascii_digit()
                || (matches!(c, b'-' | b'+' | b'.')
                    && b.get(i + 1).is_some_and(u8::is_ascii_digit));
            if starts && (i == 0 || !is_word(b[i - 1])) {
                if let Some((value, unit, end)) = number(self.s, i) {
                    let (key, sep, delimited) = key_before(&self.s[self.key_start..i]);
                    self.key_start = end;
                    self.i = end;
                    return Some(Pair {
                        key,
                        sep,
                        delimited,
                        outer: self.outer,
                        value,
                        unit,
                    });
                }
                // not a number after all (`0x1f`, `8a000`, `1.2.3`, `1e-400`): skip the token,
                // exponent sign included, so its tail is not read as a number of its own
                self.i += 1;
                while self.i < b.len() && (is_word(b[self.i]) || matches!(b[self.i], b'-' | b'+')) {
                    self.i += 1;
                }
                continue;
            }
            if is_word(c) || starts {
                self.i += 1;
                while self.i < b.len() && is_word(b[self.i]) {
                    self.i += 1;
                }
            } else {
                if c == b'[' {
                    // a name glued to its bracket: `tot_loss[`
                    let name = b[..i].iter().rev().take_while(|c| is_word(**c)).count();
                    self.outer = (name > 0).then(|| &self.s[i - name..i]);
                } else if c == b']' {
                    self.outer = None;
                }
                self.i += 1;
            }
        }
        None
    }
}

/// The key in the text between the previous value and this one: after the last hard delimiter (or
/// `: ` / ` - ` that ends an earlier phrase), without its separator and quotes; whether it had a
/// separator, and whether it fills its column (see [`Pair::delimited`]).
fn key_before(text: &str) -> (&str, bool, bool) {
    // `Epoch [1/10], Step [100/600]`: a bracket right before the value belongs to the value.
    let t = text
        .trim_end_matches([' ', '\'', '"'])
        .trim_end_matches(['[', '('])
        .trim_end_matches([' ', '\'', '"']);
    let (t, sep) = match t.strip_suffix([':', '=']) {
        Some(k) => (k.trim_end_matches([' ', '\'', '"']), true),
        None => (t, false),
    };
    let hard = t.bytes().rposition(is_hard_delimiter);
    let mut from = hard.map_or(0, |p| p + 1);
    let mut phrase = false;
    for phrase_end in [": ", " - ", "= "] {
        if let Some(p) = t.rfind(phrase_end)
            && p + phrase_end.len() > from
        {
            from = p + phrase_end.len();
            phrase = true;
        }
    }
    let key = t.get(from..).unwrap_or("").trim();
    // Only a `|` or `,` column is a key of several words without a separator (`| train loss 2.3 |`);
    // the line's start is prose as often (`saving at step 5`).
    let delimited = !phrase
        && hard.is_some_and(|p| matches!(t.as_bytes().get(p), Some(b'|' | b',')))
        && !key.is_empty();
    // A bare key is one word after punctuation: `INFO - Step 10` yes, `saving at step 5` no;
    // or a name of two words (`INFO:tensorflow:global step 1`).
    if !sep && !delimited && key.contains(' ') {
        let two = key.rsplit([' ', ':']).take(2).collect::<Vec<_>>();
        if let [last, before] = two[..]
            && BARE_PAIRS.contains(&(before, last))
        {
            let from = key.len() - last.len() - 1 - before.len();
            return (key.get(from..).unwrap_or(""), false, false);
        }
        // after a log level: `00:20:21 SUCCESS Step 0`
        let mut words = key.rsplit(' ');
        if let (Some(last), Some(level)) = (words.next(), words.next())
            && level.len() >= 3
            && level.bytes().all(|c| c.is_ascii_uppercase())
        {
            return (last, false, false);
        }
        return ("", false, false);
    }
    (key, sep, delimited)
}

/// Two-word names that need no `:` (see `key_before`).
const BARE_PAIRS: &[(&str, &str)] = &[("global", "step"), ("train", "step")];

/// `nan`, `inf`, `-inf`, `infinity` (any case) as a whole word at `i`: what Python prints for a loss
/// that diverged. Only a loss takes it; every other field refuses a value that is not finite.
fn non_finite(s: &str, i: usize) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let (neg, j) = match b.get(i) {
        Some(b'-') => (true, i + 1),
        Some(b'+') => (false, i + 1),
        _ => (false, i),
    };
    let n = b
        .get(j..)?
        .iter()
        .take_while(|c| c.is_ascii_alphabetic())
        .count();
    if n == 0 || b.get(j + n).is_some_and(|c| is_word(*c) && *c != b'.') {
        return None;
    }
    let word = s.get(j..j + n)?;
    let v = if word.eq_ignore_ascii_case("nan") {
        f64::NAN
    } else if word.eq_ignore_ascii_case("inf") || word.eq_ignore_ascii_case("infinity") {
        if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }
    } else {
        return None;
    };
    Some((v, j + n))
}

/// A number at `i`: its value, unit and where it ends. `1/ 1000` (Megatron) and `1/3` (epochs) read
/// as their first part. None when the digits are part of a word (`0x1f`, `8a000`, `v1.2.3`).
fn number(s: &str, i: usize) -> Option<(f64, Unit, usize)> {
    let b = s.as_bytes();
    let mut j = i;
    if matches!(b.get(j), Some(b'-' | b'+')) {
        j += 1;
    }
    let int = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
    j += int;
    // thousands separators: `1,024`, `12,345,678` (a list `0.1,0.2` or `1, 2` is not one)
    let mut grouped = false;
    while int > 0
        && b.get(j) == Some(&b',')
        && b.get(j + 1..j + 4)
            .is_some_and(|g| g.iter().all(u8::is_ascii_digit))
        && !b.get(j + 4).is_some_and(u8::is_ascii_digit)
    {
        j += 4;
        grouped = true;
    }
    let mut frac = 0;
    if b.get(j) == Some(&b'.') {
        frac = b[j + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        j += 1 + frac;
    }
    if int + frac == 0 {
        return None;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'-' | b'+')) {
            k += 1;
        }
        let exp = b[k.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if exp > 0 {
            j = k + exp;
        }
    }
    let text = s.get(i..j)?;
    let value: f64 = if grouped {
        text.replace(',', "").parse().ok()?
    } else {
        text.parse().ok()?
    };
    // `1e-400` underflows to 0: it is no measurement of zero.
    if !value.is_finite() || (value == 0.0 && underflowed(text)) {
        return None;
    }
    // `1/ 1000`, `13100.0/13240.9`: keep the first number
    let mut end = j;
    let after = &s[j..];
    let slash = after.trim_start_matches(' ');
    if let Some(rest) = slash.strip_prefix('/') {
        let rest = rest.trim_start_matches(' ');
        let n = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b'.')
            .count();
        if n > 0 && rest.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            end = s.len() - rest.len() + n;
        }
    }
    let (unit, end) = unit_after(s, end)?;
    Some((value, unit, end))
}

/// Whether a number that parsed as 0 had a non-zero digit before its exponent.
pub(crate) fn underflowed(text: &str) -> bool {
    text.bytes()
        .take_while(|c| !matches!(c, b'e' | b'E'))
        .any(|c| matches!(c, b'1'..=b'9'))
}

/// The unit right after a number, glued (`45.2ms`, `0.080s`) or after spaces (`398 samples/sec`).
/// None when the number is glued to a word that is no unit (`8a000`).
fn unit_after(s: &str, j: usize) -> Option<(Unit, usize)> {
    let rest = &s[j..];
    let glued = rest
        .chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '%');
    if glued {
        for (u, unit) in UNITS {
            if let Some(tail) = rest.strip_prefix(u)
                && !tail
                    .starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            {
                return Some((*unit, j + u.len()));
            }
        }
        // Two records glued together: `loss = 0.957Epoch: 0, ...` (a word that starts anew)
        if rest.starts_with(|c: char| c.is_ascii_uppercase()) {
            return Some((Unit::None, j));
        }
        return None;
    }
    let spaced = rest.trim_start_matches(' ');
    if spaced.len() < rest.len() {
        for (u, unit) in UNITS {
            // `min` or `s` after a space is as likely the next key
            if *u == "min" || *u == "s" {
                continue;
            }
            if let Some(tail) = spaced.strip_prefix(u)
                && !tail.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                && !tail.trim_start().starts_with([':', '='])
            {
                return Some((*unit, s.len() - tail.len()));
            }
        }
    }
    Some((Unit::None, j))
}
