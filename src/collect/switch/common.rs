//! Helpers shared by the switch parsers: prompt/echo detection, JSON unwrapping (NX-API, eAPI),
//! numbers that come as strings or integers, and a sample set that keeps one value per series.

use crate::metrics::{Parsed, Sample, SeriesKey};
use crate::parse::num;
use serde_json::Value;
use std::collections::HashMap;

/// One value per series: a later `set` replaces, `add` sums (several cells of one counter).
#[derive(Default)]
pub struct Acc {
    samples: Vec<Sample>,
    index: HashMap<SeriesKey, usize>,
}

impl Acc {
    pub fn set(&mut self, s: Sample) {
        match self.index.get(&s.key) {
            Some(&i) => {
                if let Some(slot) = self.samples.get_mut(i) {
                    *slot = s;
                }
            }
            None => {
                self.index.insert(s.key.clone(), self.samples.len());
                self.samples.push(s);
            }
        }
    }

    pub fn add(&mut self, s: Sample) {
        use crate::metrics::Value as V;
        match self
            .index
            .get(&s.key)
            .and_then(|&i| self.samples.get_mut(i))
        {
            Some(slot) => {
                slot.value = match (slot.value, s.value) {
                    (V::Counter(a), V::Counter(b)) => V::Counter(a.saturating_add(b)),
                    (V::Counter32(a), V::Counter32(b)) => V::Counter32(a.saturating_add(b)),
                    (V::Gauge(a), V::Gauge(b)) => V::Gauge(a + b),
                    (_, b) => b,
                };
            }
            None => self.set(s),
        }
    }

    pub fn into_parsed(self, mut p: Parsed) -> Parsed {
        p.samples.extend(self.samples);
        p
    }
}

/// A prompt with an echoed command (`5K-A# show interface ...`, `# sh queuing summary`), a bare
/// prompt (`switch#`), or an echoed command on its own line.
pub fn is_prompt_or_echo(line: &str) -> bool {
    let t = line.trim();
    let is_cmd = |s: &str| {
        let s = s.trim_start();
        s.starts_with("show ") || s.starts_with("sh ") || s == "show" || s.is_empty()
    };
    if is_cmd(t) {
        return !t.is_empty();
    }
    match t.find(['#', '>']) {
        // The prompt is one word before the `#` (hostnames have no spaces).
        Some(i) => !t[..i].contains(char::is_whitespace) && is_cmd(&t[i + 1..]),
        None => false,
    }
}

/// The JSON document in `text`, if the output is JSON (a leading `{`, possibly after a prompt and
/// the echoed command). `Err` carries the parse error for the unknown-line report.
pub fn json_doc(text: &str) -> Option<Result<Value, String>> {
    let mut rest = text.trim_start_matches('\u{feff}');
    loop {
        let t = rest.trim_start();
        if t.starts_with('{') {
            return Some(serde_json::from_str(t).map_err(|e| format!("invalid JSON: {e}")));
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

/// A counter from JSON: an integer, an integral float, or a string as devices print it.
pub fn jnum(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => num::count(s),
        _ => None,
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
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "enabled" | "yes" | "true" => Some(1.0),
        "off" | "disabled" | "no" | "false" => Some(0.0),
        _ => None,
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
}
