//! Parsers for Arista EOS: eAPI JSON (`| json`) of `show priority-flow-control counters`,
//! `show interfaces counters queue [detail|drops]` (also its CLI text), `show qos interfaces ecn
//! counters queue`, and `show interfaces` text. `"-"` means "not counted" (missing, never 0); values come as strings or
//! numbers.

mod queue;
mod queue_text;

use super::common::{Acc, json_doc, jtake};
use super::normalize_port;
use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use serde_json::Value;

/// The JSON document, or a Parsed that says why there is none.
fn doc(text: &str) -> Result<Value, Parsed> {
    let mut p = Parsed::default();
    match json_doc(text) {
        Some(Ok(v)) => Ok(v),
        Some(Err(e)) => {
            p.unknown(&e);
            Err(p)
        }
        None => {
            text.lines().for_each(|l| p.unknown(l));
            p.note("expected eAPI JSON (run the command with `| json`)");
            Err(p)
        }
    }
}

/// eAPI over HTTP wraps replies as `{"result": [ {...} ]}`; `| json` over SSH is the bare object.
fn bodies(v: &Value) -> Vec<&Value> {
    match v.get("result") {
        Some(Value::Array(a)) => a.iter().collect(),
        Some(o @ Value::Object(_)) => vec![o],
        _ => vec![v],
    }
}

pub fn parse_pfc(text: &str, switch: &str) -> Parsed {
    let v = match doc(text) {
        Ok(v) => v,
        Err(p) => return p,
    };
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    per_interface(&v, "interfaceCounters", &mut p, |p, intf, c| {
        let port = normalize_port(intf);
        for (key, name) in [("rxFrames", SW_PFC_RX), ("txFrames", SW_PFC_TX)] {
            let Some(v) = c.get(key) else { continue };
            if let Some(n) = jtake(p, || format!("{intf} {key}"), v) {
                let l = [
                    ("switch", switch),
                    ("port", port.as_str()),
                    ("priority", "all"),
                ];
                acc.set(Sample::counter(name, &l, n));
            }
        }
    });
    acc.into_parsed(p)
}

/// Each interface under `table` (`{"Ethernet1": {...}}`) of every body; a reply with no such
/// table is not understood.
fn per_interface(
    v: &Value,
    table: &str,
    p: &mut Parsed,
    mut each: impl FnMut(&mut Parsed, &str, &Value),
) {
    let mut found = false;
    for b in bodies(v) {
        let Some(m) = b.get(table).and_then(Value::as_object) else {
            continue;
        };
        found = true;
        for (intf, c) in m {
            each(p, intf, c);
        }
    }
    if !found {
        p.unknown(&format!("JSON without {table}"));
    }
}

/// JSON when the output is JSON (`| json`, eAPI), the CLI tables otherwise.
pub fn parse_queue(text: &str, switch: &str) -> Parsed {
    match json_doc(text) {
        Some(Ok(v)) => queue::parse(&v, switch),
        Some(Err(e)) => {
            let mut p = Parsed::default();
            p.unknown(&e);
            p
        }
        None => queue_text::parse(text, switch),
    }
}

pub fn parse_ecn(text: &str, switch: &str) -> Parsed {
    let v = match doc(text) {
        Ok(v) => v,
        Err(p) => return p,
    };
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    per_interface(&v, "intfQueueCounters", &mut p, |p, intf, c| {
        let port = normalize_port(intf);
        let Some(q) = c.get("queueCounters").and_then(Value::as_object) else {
            p.unknown(&format!("{intf}: no queueCounters"));
            return;
        };
        for (tc, val) in q {
            // `"-"`: the queue is not counted, so no sample (and nothing to report).
            if let Some(n) = jtake(p, || format!("{intf} TC{tc}"), val) {
                let queue = format!("TC{tc}");
                let l = [
                    ("switch", switch),
                    ("port", port.as_str()),
                    ("queue", queue.as_str()),
                ];
                acc.set(Sample::counter(SW_QUEUE_ECN_MARKED, &l, n));
            }
        }
    });
    acc.into_parsed(p)
}

/// `show interfaces` text: the NX-OS block parser understands EOS counter lines too
/// (`12 packets input, 3456 bytes`, `0 PAUSE input`).
pub fn parse_interface(text: &str, switch: &str) -> Parsed {
    match json_doc(text) {
        Some(Ok(v)) => interface_json(&v, switch),
        Some(Err(e)) => {
            let mut p = Parsed::default();
            p.unknown(&e);
            p
        }
        None => super::nxos::interface::parse_text(text, switch),
    }
}

/// `show interfaces | json`: `interfaces.{name}.interfaceCounters` (inOctets, outOctets, ...).
fn interface_json(v: &Value, switch: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    let ifs = bodies(v)
        .into_iter()
        .find_map(|b| b.get("interfaces").and_then(Value::as_object));
    let Some(ifs) = ifs else {
        p.unknown("JSON without interfaces");
        return p;
    };
    for (intf, d) in ifs {
        let Some(c) = d.get("interfaceCounters") else {
            continue;
        };
        let port = normalize_port(intf);
        let mut sum = |keys: &[&str]| -> Option<u64> {
            let vals: Vec<u64> = keys
                .iter()
                .filter_map(|k| c.get(*k).map(|v| (k, v)))
                .filter_map(|(k, v)| jtake(&mut p, || format!("{intf} {k}"), v))
                .collect();
            // A sum past u64 is no count either (refused, not wrapped or clamped).
            let total = vals.iter().try_fold(0u64, |a, b| a.checked_add(*b));
            (!vals.is_empty()).then_some(total).flatten()
        };
        let rows: [(&str, Option<&str>, Option<u64>); 6] = [
            (SW_PORT_RX_BYTES, None, sum(&["inOctets"])),
            (SW_PORT_TX_BYTES, None, sum(&["outOctets"])),
            (
                SW_PORT_RX_PACKETS,
                None,
                sum(&["inUcastPkts", "inMulticastPkts", "inBroadcastPkts"]),
            ),
            (
                SW_PORT_TX_PACKETS,
                None,
                sum(&["outUcastPkts", "outMulticastPkts", "outBroadcastPkts"]),
            ),
            (SW_PORT_ERRORS, Some("rx"), sum(&["totalInErrors"])),
            (SW_PORT_ERRORS, Some("tx"), sum(&["totalOutErrors"])),
        ];
        for (name, dir, v) in rows {
            let Some(v) = v else { continue };
            let mut l = vec![("switch", switch), ("port", port.as_str())];
            if let Some(d) = dir {
                l.push(("direction", d));
            }
            acc.set(Sample::counter(name, &l, v));
        }
    }
    acc.into_parsed(p)
}
