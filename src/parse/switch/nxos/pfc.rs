//! `show interface priority-flow-control`: the table (`Port Mode Oper(VL bmap) RxPPP TxPPP`, every
//! row kind), the `detail` layout (Admin/Oper Mode, VL bitmap, per-priority Rx/Tx rows) and JSON
//! (`TABLE_pfc_interface.ROW_pfc_interface`: if_name_str, admin, oper, rx-stats, tx-stats).

use crate::metrics::names::*;
use crate::metrics::{self, Parsed, Sink};
use crate::parse::num::{count, is_rule};
use crate::parse::switch::common::{Acc, jnum, jstr};
use crate::parse::switch::normalize_port;
use crate::parse::switch::rows::{self, Rows};
use serde_json::Value;

/// The VL bitmap is hex: `(8)` = priority 3, `(9)` = 0 and 3, `(20)` = 5.
fn bitmap(s: &str) -> Option<u8> {
    let inner = s.split_once('(')?.1.split_once(')')?.0.trim();
    let inner = inner.strip_prefix("0x").unwrap_or(inner);
    u8::from_str_radix(inner, 16).ok()
}

/// SW_PFC_ENABLED for all eight priorities: 1 for each bitmap bit when oper is On, all 0 when Off.
/// Oper On without a bitmap says nothing per priority, so nothing is emitted.
fn enabled(acc: &mut dyn Sink, sw: &str, port: &str, oper_on: bool, bmap: Option<u8>) {
    let bits = match (oper_on, bmap) {
        (false, _) => 0,
        (true, Some(b)) => b,
        (true, None) => return,
    };
    const PRIORITIES: [&str; 8] = ["0", "1", "2", "3", "4", "5", "6", "7"];
    for (prio, pr) in PRIORITIES.iter().enumerate() {
        let v = f64::from((bits >> prio) & 1);
        acc.put(
            SW_PFC_ENABLED,
            &[("port", port), ("priority", pr), ("switch", sw)],
            metrics::Value::Gauge(v),
        );
    }
}

fn ppp(acc: &mut dyn Sink, sw: &str, port: &str, name: &str, prio: &str, v: u64) {
    acc.put(
        name,
        &[("port", port), ("priority", prio), ("switch", sw)],
        metrics::Value::Counter(v),
    );
}

fn oper_state(s: &str) -> Option<bool> {
    let w = s
        .trim()
        .split(['(', ' '])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    match w.as_str() {
        "on" => Some(true),
        "off" => Some(false),
        _ => None,
    }
}

fn looks_like_port(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.chars().any(|c| c.is_ascii_digit())
}

pub fn parse_text(text: &str, sw: &str) -> Parsed {
    let mut acc = Acc::default();
    let p = parse_text_into(text, sw, &mut acc);
    acc.into_parsed(p)
}

/// [`parse_text`] with each sample put in `acc` as its row is read: what else the text gave
/// (not-understood lines) is returned.
pub fn parse_text_into(text: &str, sw: &str, acc: &mut dyn Sink) -> Parsed {
    rows::parse_into(&Text { sw }, text, acc)
}

/// The text layouts, a line at a time (`switch::rows`: a poll's answer is read again only where
/// its lines changed).
pub struct Text<'a> {
    pub sw: &'a str,
}

/// What the `detail` layout keeps between lines: the port of the block and its oper mode.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct State {
    port: Option<String>,
    oper: Option<bool>,
}

impl Rows for Text<'_> {
    type State = State;

    fn step(&self, st: &mut State, raw: &str, acc: &mut dyn Sink, p: &mut Parsed) {
        let sw = self.sw;
        let State { port, oper } = st;
        let t = crate::parse::num::trim(raw);
        if t.is_empty() || is_rule(t) || crate::parse::switch::common::is_prompt_or_echo(t) {
            return;
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        let header = |s: &str| {
            s.get(..5).is_some_and(|p| p.eq_ignore_ascii_case("port "))
                && s.as_bytes()
                    .windows(5)
                    .any(|w| w.eq_ignore_ascii_case(b"rxppp"))
        };
        if header(t) {
            return; // table header
        }
        if let [one] = toks.as_slice()
            && looks_like_port(one)
        {
            *port = Some(normalize_port(one));
            *oper = None;
            return;
        }
        if let Some((k, v)) = t.split_once(':')
            && let Some(pt) = port.clone()
        {
            match k.trim().to_ascii_lowercase().as_str() {
                "admin mode" => {}
                "oper mode" => {
                    *oper = oper_state(v);
                    if *oper == Some(false) {
                        enabled(acc, sw, &pt, false, None);
                    }
                }
                "vl bitmap" => {
                    if *oper == Some(true) {
                        enabled(acc, sw, &pt, true, bitmap(v));
                    }
                }
                "total rx pfc frames" | "total tx pfc frames" => {
                    let name = if k.to_ascii_lowercase().contains("rx") {
                        SW_PFC_RX
                    } else {
                        SW_PFC_TX
                    };
                    match count(v) {
                        Some(n) => ppp(acc, sw, &pt, name, "all", n),
                        None => p.unknown(t),
                    }
                }
                _ => p.unknown(t),
            }
            return;
        }
        if let Some(pt) = port.clone()
            && t.contains('|')
        {
            let cells: Vec<&str> = t
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            let first = cells.first().map(|c| c.to_ascii_lowercase());
            let name = match first.as_deref() {
                Some("rx") => SW_PFC_RX,
                Some("tx") => SW_PFC_TX,
                Some(f) if f.starts_with("priority") => return,
                _ => {
                    p.unknown(t);
                    return;
                }
            };
            for (prio, c) in cells.iter().skip(1).take(8).enumerate() {
                if let Some(v) = count(c) {
                    ppp(acc, sw, &pt, name, &prio.to_string(), v);
                }
            }
            return;
        }
        if !table_row(&toks, sw, acc) {
            p.unknown(t);
        }
    }
}

/// `Ethernet1/1/1  Auto On  (8)  1021  19133`, `Ethernet1/47 Auto Off 7316 762946`,
/// `Ethernet1/2/1  On   Off  0  0`.
fn table_row(toks: &[&str], sw: &str, acc: &mut dyn Sink) -> bool {
    let [port, _mode, rest @ ..] = toks else {
        return false;
    };
    if !looks_like_port(port) || rest.len() < 3 {
        return false;
    }
    let n = rest.len();
    let (Some(rx), Some(tx)) = (
        rest.get(n - 2).and_then(|s| count(s)),
        rest.get(n - 1).and_then(|s| count(s)),
    ) else {
        return false;
    };
    let oper_text = rest[..n - 2].join(" ");
    let Some(on) = oper_state(&oper_text) else {
        return false;
    };
    let port = normalize_port(port);
    ppp(acc, sw, &port, SW_PFC_RX, "all", rx);
    ppp(acc, sw, &port, SW_PFC_TX, "all", tx);
    enabled(acc, sw, &port, on, bitmap(&oper_text));
    true
}

/// One `ROW_pfc_interface` of an NX-API reply (see `nxapi::parse_rows`).
pub fn json_row(p: &mut Parsed, acc: &mut dyn Sink, sw: &str, r: &Value) {
    let Some(port) = jstr(r, "if_name_str").or_else(|| jstr(r, "interface")) else {
        p.unknown("ROW_pfc_interface without if_name_str");
        return;
    };
    let port = normalize_port(&port);
    for (key, name) in [("rx-stats", SW_PFC_RX), ("tx-stats", SW_PFC_TX)] {
        if let Some(v) = r.get(key).and_then(jnum) {
            ppp(acc, sw, &port, name, "all", v);
        }
    }
    // The bitmap may ride in `oper` ("On (8)") or in a key of its own.
    let oper = jstr(r, "oper").unwrap_or_default();
    let bmap_field = r
        .as_object()
        .and_then(|m| {
            m.iter()
                .find(|(k, _)| k.contains("bmap") || k.contains("bitmap"))
        })
        .and_then(|(_, v)| match v {
            Value::String(s) if s.contains('(') => bitmap(s),
            Value::String(s) => u8::from_str_radix(s.trim().trim_start_matches("0x"), 16).ok(),
            other => jnum(other).and_then(|n| u8::try_from(n).ok()),
        });
    if let Some(on) = oper_state(&oper) {
        enabled(acc, sw, &port, on, bitmap(&oper).or(bmap_field));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bitmaps_are_hex() {
        assert_eq!(bitmap("On (8)"), Some(8));
        assert_eq!(bitmap("(20)"), Some(0x20));
        assert_eq!(bitmap("On"), None);
        assert_eq!(bitmap("(zz)"), None);
    }
}
