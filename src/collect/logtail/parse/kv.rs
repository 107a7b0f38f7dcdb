//! The generic reader: every number in a line with the key printed before it — `key: value`,
//! `key=value`, `'key': value` (Python dicts), `Key N` (`Iteration 10`, `Epoch 1/3`, `loss 4.2`) —
//! mapped to a [`TrainRecord`] field by the key's name, with units from the key (`(ms)`, `_ms`) or the
//! value (`45.2ms`, `398 samples/sec`). One reader serves the lab's scripts, PyTorch DDP scripts,
//! Hugging Face dicts, Megatron iteration lines and DeepSpeed's lines alike, so a new script that
//! prints `step=.. loss=..` needs nothing new.

use super::TrainRecord;

/// One record read from a line.
#[derive(Debug)]
pub(super) struct Group {
    pub rec: TrainRecord,
    /// The record expects a follow-up line: a Megatron iteration line (its timer line), or a line
    /// that only names an iteration (DeepSpeed's `step=N`, completed by its throughput line).
    pub waits: bool,
}

#[derive(Debug, Default)]
pub(super) struct Read {
    pub groups: Vec<Group>,
    /// A run summary (`{'train_runtime': ...}`): understood, and not a step.
    pub summary: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Field {
    Iteration,
    Epoch,
    Loss,
    Step,
    /// Forward and backward time (ezpz `dtf` / `dtb`): their sum is the step time when no step time
    /// is printed.
    Forward,
    Backward,
    AllReduce,
    Samples,
    Rank,
    Summary,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    None,
    /// A duration; the factor converts to seconds.
    Time(f64),
    SamplesPerSecond,
    Other,
}

/// Units a value may carry, longest first so that `samples/sec` is not read as `s`.
const UNITS: &[(&str, Unit)] = &[
    ("samples/second", Unit::SamplesPerSecond),
    ("samples/sec", Unit::SamplesPerSecond),
    ("samples/s", Unit::SamplesPerSecond),
    ("sample/s", Unit::SamplesPerSecond),
    ("tokens/sec", Unit::Other),
    ("tokens/s", Unit::Other),
    ("tok/s", Unit::Other),
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

/// Keys whose value may follow without `:` or `=` (`Iteration 10`, `Epoch 1/3`, `loss 4.2`).
const BARE_KEYS: &[&str] = &[
    "iteration",
    "iter",
    "step",
    "steps",
    "epoch",
    "batch",
    "loss",
    "time",
];

/// Keys longer than this are prose, not keys.
const MAX_KEY: usize = 64;

/// Read every record in `body` (a line without its rank prefix).
pub(super) fn read(body: &str) -> Read {
    let mut read = Read::default();
    let mut acc = Acc::default();
    for pair in Pairs::new(body) {
        let Some((field, key)) = map(&pair) else {
            continue;
        };
        if field == Field::Summary {
            read.summary = true;
            continue;
        }
        // The same key twice means two records glued on one line: the second starts here.
        if acc.keys.contains(&key) {
            acc.finish(&mut read);
            acc = Acc::default();
        }
        acc.set(field, &key, &pair);
        acc.keys.push(key);
    }
    acc.finish(&mut read);
    if read.summary {
        read.groups.clear();
    }
    read
}

/// A record being read.
#[derive(Default)]
struct Acc {
    rec: TrainRecord,
    forward: Option<f64>,
    backward: Option<f64>,
    megatron: bool,
    keys: Vec<String>,
}

impl Acc {
    fn set(&mut self, field: Field, key: &str, p: &Pair<'_>) {
        let time = |unit_from_key: Option<f64>| -> Option<f64> {
            let s = match p.unit {
                Unit::Time(f) => scale(p.value, f),
                Unit::None => scale(p.value, unit_from_key.unwrap_or(1.0)),
                _ => return None,
            };
            (s >= 0.0).then_some(s)
        };
        let key_unit = key_unit(key).1;
        match field {
            Field::Iteration => set_once(&mut self.rec.iteration, whole(p.value)),
            Field::Rank => set_once(
                &mut self.rec.rank,
                whole(p.value).and_then(|v| u32::try_from(v).ok()),
            ),
            Field::Epoch => set_once(&mut self.rec.epoch, (p.value >= 0.0).then_some(p.value)),
            Field::Loss => set_once(&mut self.rec.loss, plain(p)),
            Field::Step => {
                if key.starts_with("elapsed time per iteration") {
                    self.megatron = true;
                }
                set_once(&mut self.rec.step_seconds, time(key_unit));
            }
            Field::Forward => set_once(&mut self.forward, time(key_unit)),
            Field::Backward => set_once(&mut self.backward, time(key_unit)),
            Field::AllReduce => set_once(&mut self.rec.allreduce_seconds, time(key_unit)),
            Field::Samples => set_once(
                &mut self.rec.samples_per_second,
                matches!(p.unit, Unit::None | Unit::SamplesPerSecond)
                    .then_some(p.value)
                    .filter(|v| *v >= 0.0),
            ),
            Field::Summary => {}
        }
    }

    fn finish(&mut self, read: &mut Read) {
        let mut rec = self.rec;
        if rec.step_seconds.is_none()
            && let (Some(f), Some(b)) = (self.forward, self.backward)
        {
            rec.step_seconds = Some(f + b);
        }
        let progress = rec.has_progress();
        if progress || rec.iteration.is_some() {
            read.groups.push(Group {
                rec,
                waits: self.megatron || !progress,
            });
        }
    }
}

/// `v` in a unit of `factor` seconds, in seconds. Sub-second units divide (`45.2ms` is exactly
/// 0.0452 s, as `num::seconds` reads it).
fn scale(v: f64, factor: f64) -> f64 {
    if factor < 1.0 {
        v / (1.0 / factor).round()
    } else {
        v * factor
    }
}

fn set_once<T>(slot: &mut Option<T>, v: Option<T>) {
    if slot.is_none() {
        *slot = v;
    }
}

/// A non-negative whole number (an iteration, a rank).
fn whole(v: f64) -> Option<u64> {
    (v >= 0.0 && v.fract() == 0.0 && v < 9.0e15).then_some(v as u64)
}

/// A value that must carry no unit (a loss).
fn plain(p: &Pair<'_>) -> Option<f64> {
    (p.unit == Unit::None).then_some(p.value)
}

/// The field a pair feeds, and its normalised key.
fn map(p: &Pair<'_>) -> Option<(Field, String)> {
    let key = normalise(p.key)?;
    let (base, _) = key_unit(&key);
    if !p.sep && !BARE_KEYS.contains(&base) {
        return None;
    }
    let field = match base {
        "iteration" | "iter" | "step" | "steps" | "global step" | "batch" | "train step" => {
            Field::Iteration
        }
        "epoch" | "train epoch" => Field::Epoch,
        "loss" | "lm loss" | "training loss" | "avg loss" | "average loss" | "train/loss" => {
            Field::Loss
        }
        "elapsed time per iteration"
        | "iter time"
        | "iteration time"
        | "step time"
        | "time per step"
        | "time per iteration"
        | "batch time"
        | "time"
        | "dt" => Field::Step,
        // The lab's `Total: 156.3ms` is the step time; a bare `total` elsewhere is a count.
        "total" if matches!(p.unit, Unit::Time(_)) => Field::Step,
        "dtf" => Field::Forward,
        "dtb" => Field::Backward,
        "allreduce" | "all reduce" | "allreduce time" | "all reduce time" => Field::AllReduce,
        "samples/sec" | "samples/s" | "sample/s" | "samples per second" | "samples per sec"
        | "currsamplespersec" => Field::Samples,
        "rank" | "global rank" => Field::Rank,
        "train runtime" => Field::Summary,
        _ if p.unit == Unit::SamplesPerSecond => Field::Samples,
        _ => return None,
    };
    Some((field, key))
}

/// The key without a unit suffix (`iter time (s)`, `elapsed time per iteration ms`), and the unit's
/// factor to seconds.
fn key_unit(key: &str) -> (&str, Option<f64>) {
    const SUFFIXES: &[(&str, f64)] = &[
        (" (ms)", 1e-3),
        (" ms", 1e-3),
        (" (s)", 1.0),
        (" (sec)", 1.0),
        (" s", 1.0),
        (" sec", 1.0),
        (" (us)", 1e-6),
        (" us", 1e-6),
    ];
    for (suffix, f) in SUFFIXES {
        if let Some(base) = key.strip_suffix(suffix) {
            return (base, Some(*f));
        }
    }
    (key, None)
}

/// Lower case, quotes and leading punctuation gone, `_` and `-` as spaces, one space between words.
fn normalise(raw: &str) -> Option<String> {
    let k = raw.trim_start_matches(|c: char| !c.is_alphanumeric());
    if k.is_empty() || k.len() > MAX_KEY {
        return None;
    }
    let mut out = String::with_capacity(k.len());
    for word in k.split(|c: char| c.is_whitespace() || c == '_' || c == '-') {
        if word.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.extend(word.chars().flat_map(char::to_lowercase));
    }
    // `time(ms)` as well as `time (ms)`
    if let Some(open) = out.rfind('(')
        && open > 0
        && !out[..open].ends_with(' ')
    {
        out.insert(open, ' ');
    }
    Some(out)
}

/// A number and the key printed before it.
#[derive(Debug)]
struct Pair<'a> {
    key: &'a str,
    /// The key ended in `:` or `=`.
    sep: bool,
    value: f64,
    unit: Unit,
}

/// The pairs of a line, left to right.
struct Pairs<'a> {
    s: &'a str,
    i: usize,
    key_start: usize,
}

impl<'a> Pairs<'a> {
    fn new(s: &'a str) -> Self {
        Self {
            s,
            i: 0,
            key_start: 0,
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
            let starts = c.is_ascii_digit()
                || (matches!(c, b'-' | b'+' | b'.')
                    && b.get(i + 1).is_some_and(u8::is_ascii_digit));
            if starts && (i == 0 || !is_word(b[i - 1])) {
                if let Some((value, unit, end)) = number(self.s, i) {
                    let (key, sep) = key_before(&self.s[self.key_start..i]);
                    self.key_start = end;
                    self.i = end;
                    return Some(Pair {
                        key,
                        sep,
                        value,
                        unit,
                    });
                }
                // not a number after all (`0x1f`, `8a000`, `1.2.3`): skip the word
            }
            if is_word(c) || starts {
                self.i += 1;
                while self.i < b.len() && is_word(b[self.i]) {
                    self.i += 1;
                }
            } else {
                self.i += 1;
            }
        }
        None
    }
}

/// The key in the text between the previous value and this one: after the last hard delimiter (or
/// `: ` / ` - ` that ends an earlier phrase), without its separator and quotes.
fn key_before(text: &str) -> (&str, bool) {
    // `Epoch [1/10], Step [100/600]`: a bracket right before the value belongs to the value.
    let t = text
        .trim_end_matches([' ', '\'', '"'])
        .trim_end_matches(['[', '('])
        .trim_end_matches([' ', '\'', '"']);
    let (t, sep) = match t.strip_suffix([':', '=']) {
        Some(k) => (k.trim_end_matches([' ', '\'', '"']), true),
        None => (t, false),
    };
    let mut from = t.bytes().rposition(is_hard_delimiter).map_or(0, |p| p + 1);
    for phrase_end in [": ", " - ", "= "] {
        if let Some(p) = t.rfind(phrase_end)
            && p + phrase_end.len() > from
        {
            from = p + phrase_end.len();
        }
    }
    let key = t.get(from..).unwrap_or("").trim();
    // A bare key is one word after punctuation: `INFO - Step 10` yes, `saving at step 5` no.
    if !sep && key.contains(' ') {
        return ("", false);
    }
    (key, sep)
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
    if !value.is_finite() {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn near(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    fn one(line: &str) -> TrainRecord {
        let r = read(line);
        assert_eq!(r.groups.len(), 1, "{line}: {:?}", r.groups);
        r.groups[0].rec
    }

    #[test]
    fn pairs_of_every_shape() {
        let r = one("Iteration   10 | Loss: 2.3045 | AllReduce: 45.2ms | Total: 156.3ms");
        assert_eq!(r.iteration, Some(10));
        assert_eq!(r.loss, Some(2.3045));
        assert!(near(r.allreduce_seconds, 0.0452));
        assert!(near(r.step_seconds, 0.1563));

        let r = one("steps: 100 loss: 0.0585 iter time (s): 0.186 samples/sec: 53.694");
        assert_eq!(
            (r.iteration, r.loss, r.step_seconds, r.samples_per_second),
            (Some(100), Some(0.0585), Some(0.186), Some(53.694))
        );

        let r = one("iter 10: loss 4.2180, time 125.33ms, mfu -100.00%");
        assert_eq!((r.iteration, r.loss), (Some(10), Some(4.218)));
        assert!(near(r.step_seconds, 0.12533));

        let r = one("2024-01-01 12:00:00,123 - __main__ - INFO - Step 10, loss: 2.5e-1");
        assert_eq!((r.iteration, r.loss), (Some(10), Some(0.25)));
    }

    #[test]
    fn common_script_formats() {
        // the PyTorch tutorials
        let r = one("Epoch [1/10], Step [100/600], Loss: 0.2345");
        assert_eq!(
            (r.epoch, r.iteration, r.loss),
            (Some(1.0), Some(100), Some(0.2345))
        );
        let r = one("Train Epoch: 1 [640/60000 (1%)]\tLoss: 2.300581");
        assert_eq!(
            (r.epoch, r.iteration, r.loss),
            (Some(1.0), None, Some(2.300581))
        );
        // torchtitan
        let r = one("step:  1  loss: 12.2446  memory: 31.09GiB(32.71%)  tps: 1,023  mfu: 3.16%");
        assert_eq!((r.iteration, r.loss), (Some(1), Some(12.2446)));
        // thousands separators
        let r = one("step=12,345 samples/sec: 1,234.5 loss=1");
        assert_eq!(
            (r.iteration, r.samples_per_second),
            (Some(12345), Some(1234.5))
        );
    }

    #[test]
    fn prose_is_not_a_record() {
        for line in [
            "Saving model checkpoint to trainer_output/checkpoint-10",
            "Warmup complete at step 5",
            "comm 0x1511d4005e60 rank 31 nranks 64 cudaDev 3 busId 8a000 - Init COMPLETE",
            "[Epoch 1] Epoch Time: 12.34s",
            "Epoch 1/3",
            "train_loss               =     2.9772",
            "Batch size = 8",
        ] {
            assert!(read(line).groups.is_empty(), "{line}");
        }
    }

    #[test]
    fn glued_records_split_on_a_repeated_key() {
        let r = read(
            "Iteration 10 | Loss: 2.3 | Total: 156.3msIteration 20 | Loss: 2.2 | Total: 150ms",
        );
        let its: Vec<_> = r
            .groups
            .iter()
            .map(|g| (g.rec.iteration, g.rec.loss))
            .collect();
        assert_eq!(its, vec![(Some(10), Some(2.3)), (Some(20), Some(2.2))]);
        let r = read("{'loss': 2.8, 'epoch': 0.1}{'loss': 2.9, 'epoch': 0.2}");
        assert_eq!(r.groups.len(), 2);
        assert_eq!(r.groups[1].rec.epoch, Some(0.2));
    }

    #[test]
    fn units_and_fractions() {
        assert_eq!(one("epoch 1/3, loss 1").epoch, Some(1.0));
        assert!(near(one("step_time_ms=250 step=3").step_seconds, 0.25));
        assert_eq!(
            one("Speed: 398 samples/sec, Batch 1").samples_per_second,
            Some(398.0)
        );
        assert_eq!(
            one("Throughput: 12 samples/s step 4").samples_per_second,
            Some(12.0)
        );
        let r = one(
            "elapsed time per iteration (ms): 13100.0/13240.9 | lm loss: 4.142716E-03 | iteration 3/ 5 |",
        );
        assert_eq!((r.loss, r.iteration), (Some(4.142716e-3), Some(3)));
        assert!(near(r.step_seconds, 13.1));
        assert!(read("elapsed time per iteration (ms): 1 |").groups[0].waits);
    }
}
