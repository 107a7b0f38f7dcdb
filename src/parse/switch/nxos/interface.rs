//! `show interface` counters. Text: a block per interface (`Ethernet2/1 is up`), with counter lines
//! of `<number> <name>` pairs (NX-OS `RX`/`TX` sections: `48034291 input packets  3680032221 bytes`,
//! `0 Rx pause`; Arista EOS: `12 packets input, 3456 bytes`, `0 PAUSE input`). Descriptive lines
//! inside a block are understood; lines outside any block are not. JSON: NX-API `TABLE_interface`.

use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::num::count;
use crate::parse::switch::common::{Acc, find_rows, is_prompt_or_echo, jnum, jstr, nxapi_bodies};
use crate::parse::switch::normalize_port;
use serde_json::Value;

/// An interface header: starts at column 0, the first word names an interface, then ` is `.
fn header(raw: &str) -> Option<&str> {
    if raw.starts_with(char::is_whitespace) {
        return None;
    }
    let mut w = raw.split_whitespace();
    let name = w.next()?;
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().any(|c| c.is_ascii_digit())
        && w.next() == Some("is");
    ok.then_some(name)
}

/// `0 runts  0 giants  20 CRC/FCS` → [(0, "runts"), (0, "giants"), (20, "crc/fcs")].
fn pairs(line: &str) -> Vec<(u64, String)> {
    let mut out: Vec<(u64, String)> = Vec::new();
    for tok in line.split(|c: char| c.is_whitespace() || c == ',') {
        if tok.is_empty() {
            continue;
        }
        match count(tok) {
            Some(n) => out.push((n, String::new())),
            None => {
                if let Some((_, name)) = out.last_mut() {
                    if !name.is_empty() {
                        name.push(' ');
                    }
                    name.push_str(&tok.to_ascii_lowercase());
                }
            }
        }
    }
    out
}

pub(crate) fn parse_text(text: &str, sw: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    let mut port: Option<String> = None;
    for raw in text.lines() {
        let raw = raw.trim_end_matches('\r');
        let t = raw.trim();
        if t.is_empty() || is_prompt_or_echo(t) {
            continue;
        }
        if let Some(name) = header(raw) {
            port = Some(normalize_port(name));
            continue;
        }
        let Some(pt) = port.as_deref() else {
            p.unknown(t);
            continue;
        };
        if !t.starts_with(|c: char| c.is_ascii_digit()) {
            continue; // a descriptive line of the block (Hardware, MTU, RX, TX, ...)
        }
        let mut prev = String::new();
        for (v, name) in pairs(t) {
            let (metric, dir) = match name.as_str() {
                "input packets" | "packets input" => (SW_PORT_RX_PACKETS, None),
                "output packets" | "packets output" => (SW_PORT_TX_PACKETS, None),
                "bytes" if prev.contains("input") => (SW_PORT_RX_BYTES, None),
                "bytes" if prev.contains("output") => (SW_PORT_TX_BYTES, None),
                "input error" | "input errors" => (SW_PORT_ERRORS, Some("rx")),
                "output error" | "output errors" => (SW_PORT_ERRORS, Some("tx")),
                "rx pause" | "pause input" => (SW_LINK_PAUSE_RX, None),
                "tx pause" | "pause output" => (SW_LINK_PAUSE_TX, None),
                _ => {
                    prev = name;
                    continue;
                }
            };
            prev = name;
            let mut l = vec![("switch", sw), ("port", pt)];
            if let Some(d) = dir {
                l.push(("direction", d));
            }
            acc.set(Sample::counter(metric, &l, v));
        }
    }
    acc.into_parsed(p)
}

pub(crate) fn parse_json(doc: &Value, sw: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    let mut rows = Vec::new();
    for body in nxapi_bodies(doc) {
        find_rows(body, "TABLE_interface", &mut rows);
    }
    if rows.is_empty() {
        p.unknown("JSON without TABLE_interface");
    }
    const MAP: &[(&str, &str, Option<&str>)] = &[
        ("eth_inpkts", SW_PORT_RX_PACKETS, None),
        ("eth_outpkts", SW_PORT_TX_PACKETS, None),
        ("eth_inbytes", SW_PORT_RX_BYTES, None),
        ("eth_outbytes", SW_PORT_TX_BYTES, None),
        ("eth_inerr", SW_PORT_ERRORS, Some("rx")),
        ("eth_outerr", SW_PORT_ERRORS, Some("tx")),
        ("eth_inpause", SW_LINK_PAUSE_RX, None),
        ("eth_outpause", SW_LINK_PAUSE_TX, None),
    ];
    for r in rows {
        let Some(port) = jstr(r, "interface") else {
            p.unknown("ROW_interface without interface");
            continue;
        };
        let port = normalize_port(&port);
        for (key, metric, dir) in MAP {
            if let Some(v) = r.get(*key).and_then(jnum) {
                let mut l = vec![("switch", sw), ("port", port.as_str())];
                if let Some(d) = dir {
                    l.push(("direction", d));
                }
                acc.set(Sample::counter(*metric, &l, v));
            }
        }
    }
    acc.into_parsed(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counter_pairs() {
        let p = pairs("48034291 input packets  3680032221 bytes");
        assert_eq!(
            p,
            vec![
                (48034291, "input packets".into()),
                (3680032221, "bytes".into())
            ]
        );
        assert_eq!(pairs("12 packets input, 3456 bytes").len(), 2);
        assert_eq!(header("Ethernet2/1 is up"), Some("Ethernet2/1"));
        assert_eq!(header("admin state is up, Dedicated Interface"), None);
        assert_eq!(header("  RX"), None);
    }
}
