//! Helpers shared by the switch parsers: prompt/echo detection, JSON unwrapping (NX-API, eAPI),
//! numbers that come as strings or integers, and a sample set that keeps one value per series.

use crate::metrics::{Parsed, Sample, SeriesKey};
use crate::parse::num;
use hashbrown::HashTable;
use rustc_hash::FxHasher;
use serde_json::Value;
use std::hash::Hasher;

/// One value per series: a later `set` replaces, `add` sums (several cells of one counter).
///
/// Each key lives once, in its sample: the index holds sample numbers by their key's hash, keys
/// told apart by comparing them in `samples`, so no key is cloned and hashing is cheap (a switch
/// poll sets a few thousand samples). While a big answer is read (1.25M samples for 125k ports),
/// the index is 5 bytes a slot and each sample's hash 4 beside it (so growing the index hashes no
/// key again), and the samples grow by an eighth at a time, not by doubling, so what the parse
/// holds at its peak is close to what it gives.
#[derive(Default)]
pub struct Acc {
    samples: Vec<Sample>,
    /// Per sample, its key's hash (folded to 32 bits: [`spread`] makes the index's hash of it).
    hashes: Vec<u32>,
    index: HashTable<u32>,
}

/// A key's hash folded to 32 bits, kept per sample.
fn fold(h: u64) -> u32 {
    (h >> 32) as u32 ^ h as u32
}

/// The index's hash of a folded hash: its bits spread over all 64 (the table picks a slot from
/// the low bits and a tag from the high ones).
fn spread(h: u32) -> u64 {
    u64::from(h).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Acc {
    /// Room for `n` samples up front (a big output makes thousands: no regrowing on the way).
    pub fn with_capacity(n: usize) -> Self {
        Self {
            samples: Vec::with_capacity(n),
            hashes: Vec::with_capacity(n),
            index: HashTable::with_capacity(n),
        }
    }

    /// The sample with this key (whose folded hash is `h`), if any.
    fn slot(&self, h: u32, key: &SeriesKey) -> Option<usize> {
        let samples = &self.samples;
        self.index
            .find(spread(h), |&i| {
                samples.get(i as usize).is_some_and(|s| s.key == *key)
            })
            .map(|&i| i as usize)
    }

    fn insert(&mut self, h: u32, s: Sample) -> usize {
        let n = self.samples.len();
        if n == self.samples.capacity() {
            // A slow growth: a doubling leaves up to half the vector unused at the peak (and
            // big reallocations move pages rather than copy them).
            let more = (n / 8).max(64);
            self.samples.reserve_exact(more);
            self.hashes.reserve_exact(more);
        }
        self.samples.push(s);
        self.hashes.push(h);
        let hashes = &self.hashes;
        self.index.insert_unique(spread(h), n as u32, |&i| {
            spread(hashes.get(i as usize).copied().unwrap_or(0))
        });
        n
    }

    pub fn set(&mut self, s: Sample) {
        self.set_index(s);
    }

    /// [`Acc::set`], saying where the sample went (its index in the samples it ends as).
    pub fn set_index(&mut self, s: Sample) -> usize {
        self.set_hashed(fold(key_hash(&s.key)), s)
    }

    fn set_hashed(&mut self, h: u32, s: Sample) -> usize {
        match self.slot(h, &s.key) {
            Some(i) => {
                if let Some(slot) = self.samples.get_mut(i) {
                    *slot = s;
                }
                i
            }
            None => self.insert(h, s),
        }
    }

    pub fn add(&mut self, s: Sample) {
        use crate::metrics::Value as V;
        let h = fold(key_hash(&s.key));
        match self.slot(h, &s.key) {
            Some(i) => {
                if let Some(slot) = self.samples.get_mut(i) {
                    slot.value = match (slot.value, s.value) {
                        (V::Counter(a), V::Counter(b)) => V::Counter(a.saturating_add(b)),
                        (V::Counter32(a), V::Counter32(b)) => V::Counter32(a.saturating_add(b)),
                        (V::Gauge(a), V::Gauge(b)) => V::Gauge(a + b),
                        (_, b) => b,
                    };
                }
            }
            None => {
                self.insert(h, s);
            }
        }
    }

    pub fn into_parsed(self, mut p: Parsed) -> Parsed {
        if p.samples.is_empty() {
            p.samples = self.samples;
        } else {
            p.samples.extend(self.samples);
        }
        // Room nobody will use (up to an eighth of the vector, or half of one made by a
        // caller), held while the store and the renderers work.
        p.samples.shrink_to_fit();
        p
    }
}

/// A fast, non-cryptographic hash of a series key (`FxHasher`): the keys
/// come from one device's output, and a collision only costs a key comparison.
fn key_hash(k: &SeriesKey) -> u64 {
    let mut h = FxHasher::default();
    h.write(k.name.as_bytes());
    for (n, v) in &k.labels {
        h.write_u8(0xff);
        h.write(n.as_bytes());
        h.write_u8(0xfe);
        h.write(v.as_bytes());
    }
    h.finish()
}

/// A prompt with an echoed command (`5K-A# show interface ...`, `# sh queuing summary`), a bare
/// prompt (`switch#`), or an echoed command on its own line.
pub fn is_prompt_or_echo(line: &str) -> bool {
    let t = crate::parse::num::trim(line);
    let is_cmd = |s: &str| {
        let s = s.trim_start();
        s.starts_with("show ") || s.starts_with("sh ") || s == "show" || s.is_empty()
    };
    if is_cmd(t) {
        return !t.is_empty();
    }
    // The prompt is one word before the `#` (hostnames have no spaces): look no further than the
    // first word (ASCII whitespace ends it; other characters are left to the general check).
    match t.bytes().position(|b| {
        matches!(b, b'#' | b'>' | b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c) || !b.is_ascii()
    }) {
        Some(i) if matches!(t.as_bytes()[i], b'#' | b'>') => is_cmd(&t[i + 1..]),
        Some(i) if t.as_bytes()[i].is_ascii() => false,
        Some(_) => match t.find(['#', '>']) {
            Some(i) => !t[..i].contains(char::is_whitespace) && is_cmd(&t[i + 1..]),
            None => false,
        },
        None => false,
    }
}

/// The JSON document in `text`, if the output is JSON (a leading `{`, possibly after a prompt and
/// the echoed command). `Err` carries the parse error for the unknown-line report.
pub fn json_doc(text: &str) -> Option<Result<Value, String>> {
    json_text(text).map(|t| serde_json::from_str(t).map_err(|e| format!("invalid JSON: {e}")))
}

/// Where the JSON document of [`json_doc`] starts in `text`, if the output is JSON.
pub fn json_text(text: &str) -> Option<&str> {
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        let t = rest.trim_start();
        if t.starts_with('{') {
            return Some(t);
        }
        let (first, tail) = t.split_once('\n').unwrap_or((t, ""));
        if first.trim().is_empty() || !is_prompt_or_echo(first) {
            return None;
        }
        rest = tail;
    }
}

/// The command bodies inside an NX-API reply: `ins_api.outputs.output[].body`, JSON-RPC
/// `result[].body`, a bare `body`, or the document itself (`| json`).
pub fn nxapi_bodies(v: &Value) -> Vec<&Value> {
    if let Some(out) = v.pointer("/ins_api/outputs/output") {
        return each(out)
            .into_iter()
            .filter_map(|o| o.get("body"))
            .collect();
    }
    if let Some(res) = v.get("result").filter(|r| !r.is_null()) {
        return each(res)
            .into_iter()
            .map(|r| r.get("body").unwrap_or(r))
            .collect();
    }
    if let Some(b) = v.get("body") {
        return vec![b];
    }
    vec![v]
}

fn each(x: &Value) -> Vec<&Value> {
    match x {
        Value::Array(a) => a.iter().collect(),
        other => vec![other],
    }
}

/// The rows of `TABLE_x` in `v`: `ROW_x` is an object when there is one row, a list when several.
pub fn rows<'a>(v: &'a Value, table: &str) -> Vec<&'a Value> {
    let row_key = format!("ROW_{}", table.strip_prefix("TABLE_").unwrap_or(table));
    match v.get(table).and_then(|t| t.get(&row_key)) {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(o @ Value::Object(_)) => vec![o],
        _ => Vec::new(),
    }
}

/// Every row of `TABLE_x` anywhere below `v` (NX-OS nests tables under TABLE_module and the like).
pub fn find_rows<'a>(v: &'a Value, table: &str, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            if m.contains_key(table) {
                out.extend(rows(v, table));
                return;
            }
            m.values().for_each(|c| find_rows(c, table, out));
        }
        Value::Array(a) => a.iter().for_each(|c| find_rows(c, table, out)),
        _ => {}
    }
}

/// A counter from JSON: an integer, an integral float, or a string as devices print it. Values no
/// counter holds (see [`jcount`]) are `None`.
pub fn jnum(v: &Value) -> Option<u64> {
    match jcount(v) {
        JCount::Count(n) => Some(n),
        JCount::Missing | JCount::Bad(_) => None,
    }
}

/// A JSON counter judged: a count, a value the device marks as not counted (`"-"`, `"N/A"`), or
/// something no counter holds, with why.
#[derive(Debug, PartialEq)]
pub enum JCount {
    Count(u64),
    Missing,
    Bad(&'static str),
}

/// Floats from 2^53 up are not exact integers any more: a device that prints one has saturated
/// (`1e300`, `2^64`) rather than counted, and u64::MAX is -1 or a saturated register. Either as a
/// counter would make a giant rate; they are refused, never clamped.
pub fn jcount(v: &Value) -> JCount {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    match v {
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u64::MAX), ..) => JCount::Bad("u64::MAX (saturated or -1)"),
            (Some(u), ..) => JCount::Count(u),
            (None, Some(_), _) => JCount::Bad("negative"),
            (None, None, Some(f)) if f < 0.0 => JCount::Bad("negative"),
            (None, None, Some(f)) if f >= EXACT => JCount::Bad("beyond any counter (saturated)"),
            (None, None, Some(f)) if f.fract() == 0.0 => JCount::Count(f as u64),
            _ => JCount::Bad("not an integer"),
        },
        Value::String(s) => match num::count(s) {
            Some(u64::MAX) => JCount::Bad("u64::MAX (saturated or -1)"),
            Some(n) => JCount::Count(n),
            None if matches!(num::trim(s), "-" | "" | "N/A" | "NA" | "n/a") => JCount::Missing,
            None => JCount::Bad("not a count"),
        },
        Value::Bool(_) => JCount::Bad("a boolean"),
        Value::Null => JCount::Bad("null"),
        Value::Array(_) | Value::Object(_) => JCount::Bad("not a number"),
    }
}

/// [`jcount`] where a bad value is a line not understood (`what` names the field).
pub fn jtake(p: &mut Parsed, what: impl FnOnce() -> String, v: &Value) -> Option<u64> {
    match jcount(v) {
        JCount::Count(n) => Some(n),
        JCount::Missing => None,
        JCount::Bad(why) => {
            p.unknown(&format!("{}: {why}: {v}", what()));
            None
        }
    }
}

/// A string field (numbers rendered as text).
pub fn jstr(v: &Value, key: &str) -> Option<String> {
    match v.get(key)? {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Lower-case snake_case of a counter label (`Pause Flush` → `pause_flush`, `WRED/AFD & Tail` →
/// `wred_afd_tail`).
pub fn snake(s: &str) -> String {
    crate::metrics::names::sanitize(s)
}

/// `on`/`off` as 1/0; anything else (`desired`, `NA`) is unknown.
pub fn on_off(s: &str) -> Option<f64> {
    let s = s.trim();
    let is = |words: &[&str]| words.iter().any(|w| s.eq_ignore_ascii_case(w));
    if is(&["on", "enabled", "yes", "true"]) {
        Some(1.0)
    } else if is(&["off", "disabled", "no", "false"]) {
        Some(0.0)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_and_echoes() {
        assert!(is_prompt_or_echo(
            "5K-A# show interface priority-flow-control"
        ));
        assert!(is_prompt_or_echo("# sh queuing summary "));
        assert!(is_prompt_or_echo("switch#"));
        assert!(is_prompt_or_echo("show queuing interface ethernet1/1"));
        assert!(!is_prompt_or_echo("COS QOS Group  PG"));
        assert!(!is_prompt_or_echo("QoS-Group# Bandwidth% PrioLevel"));
        assert!(!is_prompt_or_echo("Ethernet1/1 is up"));
    }

    fn is_prompt_or_echo_ref(line: &str) -> bool {
        let t = line.trim();
        let is_cmd = |s: &str| {
            let s = s.trim_start();
            s.starts_with("show ") || s.starts_with("sh ") || s == "show" || s.is_empty()
        };
        if is_cmd(t) {
            return !t.is_empty();
        }
        match t.find(['#', '>']) {
            Some(i) => !t[..i].contains(char::is_whitespace) && is_cmd(&t[i + 1..]),
            None => false,
        }
    }

    proptest::proptest! {
        #[test]
        fn prompt_check_agrees_with_the_reference(s in "[a# >\\x0bé\u{a0}showx]{0,12}") {
            proptest::prop_assert_eq!(is_prompt_or_echo(&s), is_prompt_or_echo_ref(&s));
        }
    }

    #[test]
    fn json_after_prompt_and_row_shapes() {
        let doc = json_doc("sw# show x | json\n{\"TABLE_a\": {\"ROW_a\": {\"k\": \"7\"}}}")
            .and_then(Result::ok);
        let doc = doc.unwrap_or_default();
        let r = rows(&doc, "TABLE_a");
        assert_eq!(r.len(), 1);
        assert_eq!(r.first().and_then(|x| x.get("k")).and_then(jnum), Some(7));
        assert!(json_doc("Port Mode").is_none());
        assert!(matches!(json_doc("{ broken"), Some(Err(_))));
    }

    #[test]
    fn json_counts_that_no_counter_holds_are_refused() {
        let j = |t: &str| jcount(&serde_json::from_str(t).unwrap_or(Value::Null));
        assert_eq!(j("12"), JCount::Count(12));
        assert_eq!(j("12.0"), JCount::Count(12));
        assert_eq!(j("\"1,234\""), JCount::Count(1234));
        assert_eq!(j("\"-\""), JCount::Missing);
        for bad in [
            "1e300",
            "18446744073709551616",
            "18446744073709551615",
            "-1",
            "-0.5",
            "1.5",
            "true",
            "null",
            "\"NaN\"",
            "\"inf\"",
        ] {
            assert!(matches!(j(bad), JCount::Bad(_)), "{bad}: {:?}", j(bad));
        }
        let mut p = Parsed::default();
        assert_eq!(
            jtake(&mut p, || "Et1 rxFrames".into(), &Value::Bool(true)),
            None
        );
        assert_eq!(p.unknown_lines, 1);
    }

    #[test]
    fn acc_sums_and_replaces() {
        let mut a = Acc::default();
        a.add(Sample::counter("m", &[("p", "1")], 2));
        a.add(Sample::counter("m", &[("p", "1")], 3));
        a.set(Sample::counter("n", &[], 1));
        a.set(Sample::counter("n", &[], 4));
        let p = a.into_parsed(Parsed::default());
        assert_eq!(p.find("m", &[]), Some(crate::metrics::Value::Counter(5)));
        assert_eq!(p.find("n", &[]), Some(crate::metrics::Value::Counter(4)));
    }

    #[test]
    fn acc_keys_sharing_a_hash_stay_apart() {
        let mut a = Acc::default();
        for (i, v) in [(1, 10), (2, 20), (3, 30), (2, 21), (1, 11)] {
            let i = i.to_string();
            a.set_hashed(7, Sample::counter("m", &[("p", i.as_str())], v));
        }
        let p = a.into_parsed(Parsed::default());
        let got: Vec<_> = p.samples.iter().map(|s| s.value).collect();
        use crate::metrics::Value::Counter as C;
        assert_eq!(got, vec![C(11), C(21), C(30)]);
        let mut b = Acc::default();
        for i in 0..5000u64 {
            b.set(Sample::counter("m", &[("p", &(i % 2500).to_string())], i));
        }
        let p = b.into_parsed(Parsed::default());
        assert_eq!(p.samples.len(), 2500);
        assert_eq!(p.find("m", &[("p", "7")]), Some(C(2507)));
    }
}
