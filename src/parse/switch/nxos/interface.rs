//! `show interface` counters. Text: a block per interface (`Ethernet2/1 is up`), with counter lines
//! of `<number> <name>` pairs (NX-OS `RX`/`TX` sections: `48034291 input packets  3680032221 bytes`,
//! `0 Rx pause`; Arista EOS: `12 packets input, 3456 bytes`, `0 PAUSE input`), and the port's MTU
//! (`MTU 9216 bytes, BW ...`; EOS `Ethernet MTU 9214 bytes` or, routed, `IP MTU 1500 bytes`).
//! Other descriptive lines inside a block are understood; lines outside any block are not.
//! JSON: NX-API `TABLE_interface` (`eth_mtu` for the MTU).

use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::num::count;
use crate::parse::switch::common::{Acc, is_prompt_or_echo, jnum, jstr};
use crate::parse::switch::normalize_port;
use serde_json::Value;

/// An interface header: the first word names an interface (a letter first, a digit in it), then
/// ` is ` (indented too: a capture pasted from a doc or a test suite).
fn header(raw: &str) -> Option<&str> {
    let mut w = raw.split_whitespace();
    let name = w.next()?;
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().any(|c| c.is_ascii_digit())
        && w.next() == Some("is");
    ok.then_some(name)
}

/// `MTU 9216 bytes, BW 40000000 Kbit, DLY 10 usec` (NX-OS), `Ethernet MTU 9214 bytes , BW ...` or
/// `IP MTU 1500 bytes` (EOS) → the MTU.
fn mtu(line: &str) -> Option<u64> {
    let rest = ["MTU ", "Ethernet MTU ", "IP MTU "]
        .iter()
        .find_map(|p| line.strip_prefix(p))?;
    let mut w = rest.split_whitespace();
    let n = count(w.next()?)?;
    (w.next()?.trim_end_matches(',') == "bytes").then_some(n)
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

/// The one interface a `show interface X ...` command names (`sh int e1/47 | b RX` →
/// `Ethernet1/47`); None for `show interface` of all ports or a range.
fn prompt_port(line: &str) -> Option<String> {
    let cmd = line.split('|').next().unwrap_or(line);
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| w.starts_with("sh") && "show".starts_with(*w))?;
    let kw = words.get(at + 1)?;
    if kw.len() < 3 || !"interface".starts_with(*kw) {
        return None;
    }
    // `show interface ethernet 1/47` and `show int e1/47` alike
    let first = words.get(at + 2)?;
    let rest = if first.bytes().any(|b| b.is_ascii_digit()) {
        first.to_string()
    } else {
        format!("{first}{}", words.get(at + 3)?)
    };
    if rest.contains([',', '-']) {
        return None;
    }
    let name = normalize_port(&rest);
    let ok =
        name.starts_with("Ethernet") || name.starts_with("port-channel") || name.starts_with("ii");
    (ok && name.contains('/')).then_some(name)
}

pub(crate) fn parse_text(text: &str, sw: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    let mut port: Option<String> = None;
    for raw in text.lines() {
        let raw = raw.trim_end_matches('\r');
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if is_prompt_or_echo(t) {
            // `show int e1/47 | b RX`: the output starts inside the block, the port is in the prompt.
            if let Some(p) = prompt_port(t) {
                port = Some(p);
            }
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
        if let Some(m) = mtu(t) {
            acc.set(Sample::gauge(
                SW_PORT_MTU_BYTES,
                &[("switch", sw), ("port", pt)],
                m as f64,
            ));
            continue;
        }
        if !t.starts_with(|c: char| c.is_ascii_digit()) {
            continue; // a descriptive line of the block (Hardware, RX, TX, ...)
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

/// One `ROW_interface` of an NX-API reply (see `nxapi::parse_rows`).
pub(crate) fn json_row(p: &mut Parsed, acc: &mut Acc, sw: &str, r: &Value) {
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
    let Some(port) = jstr(r, "interface") else {
        p.unknown("ROW_interface without interface");
        return;
    };
    let port = normalize_port(&port);
    if let Some(m) = r.get("eth_mtu").and_then(jnum) {
        acc.set(Sample::gauge(
            SW_PORT_MTU_BYTES,
            &[("switch", sw), ("port", port.as_str())],
            m as f64,
        ));
    }
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

#[cfg(test)]
mod prompt_tests {
    use super::*;

    #[test]
    fn the_port_named_in_the_prompt() {
        assert_eq!(
            prompt_port("sw# show int e1/47 | b RX").as_deref(),
            Some("Ethernet1/47")
        );
        assert_eq!(
            prompt_port("N7K# sh interface ethernet 3/1").as_deref(),
            Some("Ethernet3/1")
        );
        assert_eq!(prompt_port("sw# show interface"), None);
        assert_eq!(prompt_port("sw# show interface e1/1-4"), None);
        assert_eq!(
            prompt_port("sw# show interface priority-flow-control"),
            None
        );
        let p = parse_text(
            "sw# show int e1/47 | b RX\n  RX\n    1234 input packets  99 bytes\n    7 Rx pause\n",
            "sw",
        );
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        assert_eq!(
            p.find(SW_LINK_PAUSE_RX, &[("port", "Ethernet1/47")]),
            Some(crate::metrics::Value::Counter(7))
        );
    }
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
        assert_eq!(
            mtu("MTU 9216 bytes, BW 40000000 Kbit, DLY 10 usec"),
            Some(9216)
        );
        assert_eq!(
            mtu("Ethernet MTU 9214 bytes , BW 100000000 kbit"),
            Some(9214)
        );
        assert_eq!(mtu("IP MTU 1500 bytes"), Some(1500));
        assert_eq!(mtu("MTU exceeded 3 times"), None);
    }
}
