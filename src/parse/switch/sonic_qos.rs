//! SONiC's lossless settings from its CONFIG_DB as JSON (`show runningconfiguration all`,
//! `sonic-cfggen -d --print-data`, a `config_db.json` or a rendered `qos.json`): which DSCP map
//! each port classifies by (PORT_QOS_MAP `dscp_to_tc_map` → DSCP_TO_TC_MAP), its PFC priorities
//! (`pfc_enable`), ECN marking on each queue (QUEUE `wred_profile` → WRED_PROFILE `ecn`) and the
//! port MTU (PORT `mtu`). Both layouts are read: nested (`"PORT": {"Ethernet0": {...}}`) and the
//! flat Redis keys (`"PORT|Ethernet0": {...}`); multi-ASIC dumps (`{"localhost": {...},
//! "asic0": {...}}`) are read namespace by namespace.
//!
//! SONiC's traffic class is the PFC priority and the queue index: its templates map TC, PG,
//! queue and PFC priority one to one (TC_TO_QUEUE_MAP, MAP_PFC_PRIORITY_TO_QUEUE), so a DSCP's
//! TC is compared with the no-drop priority as it is.

use super::common::json_doc;
use super::normalize_port;
use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The tables read, as `table → key → fields`.
type Tables = BTreeMap<String, BTreeMap<String, Map<String, Value>>>;

const READ: [&str; 6] = [
    "DEVICE_METADATA",
    "PORT",
    "PORT_QOS_MAP",
    "DSCP_TO_TC_MAP",
    "QUEUE",
    "WRED_PROFILE",
];

pub fn parse(text: &str, switch: &str) -> Parsed {
    let mut p = Parsed::default();
    let doc = match json_doc(text) {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            p.unknown(&e);
            return p;
        }
        None => {
            if let Some(l) = text.lines().find(|l| !l.trim().is_empty()) {
                p.unknown(l);
            }
            return p;
        }
    };
    let Some(top) = doc.as_object() else {
        p.unknown("the JSON document is not an object of CONFIG_DB tables");
        return p;
    };
    // A multi-ASIC dump holds one CONFIG_DB per namespace; a single one holds tables.
    let namespaces: Vec<&Map<String, Value>> = if has_tables(top) {
        vec![top]
    } else {
        top.values()
            .filter_map(Value::as_object)
            .filter(|m| has_tables(m))
            .collect()
    };
    if namespaces.is_empty() {
        p.note("no QoS table (PORT_QOS_MAP, DSCP_TO_TC_MAP, QUEUE, WRED_PROFILE, PORT) in this CONFIG_DB");
        return p;
    }
    for ns in namespaces {
        read(&mut p, &tables(ns), switch);
    }
    p
}

fn has_tables(m: &Map<String, Value>) -> bool {
    m.keys().any(|k| {
        let table = k.split('|').next().unwrap_or(k);
        READ.contains(&table)
    })
}

/// Nested and flat (`TABLE|key`) layouts into one shape; other tables are skipped.
fn tables(ns: &Map<String, Value>) -> Tables {
    let mut t = Tables::new();
    for (k, v) in ns {
        let Some(obj) = v.as_object() else { continue };
        match k.split_once('|') {
            Some((table, key)) if READ.contains(&table) => {
                // `sonic-db-dump` wraps the fields in `{"type": "hash", "value": {...}}`.
                let fields = obj.get("value").and_then(Value::as_object).unwrap_or(obj);
                t.entry(table.to_string())
                    .or_default()
                    .insert(key.to_string(), fields.clone());
            }
            None if READ.contains(&k.as_str()) => {
                let e = t.entry(k.clone()).or_default();
                for (key, f) in obj {
                    if let Some(f) = f.as_object() {
                        e.insert(key.clone(), f.clone());
                    }
                }
            }
            _ => {}
        }
    }
    t
}

fn field<'a>(f: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    f.get(name).and_then(Value::as_str).map(str::trim)
}

/// `[DSCP_TO_TC_MAP|AZURE]` (before 202012) or `AZURE`.
fn reference(s: &str) -> &str {
    let s = s.trim().trim_start_matches('[').trim_end_matches(']');
    s.rsplit_once('|').map_or(s, |(_, name)| name)
}

/// `Ethernet0,Ethernet4` (a key may name several ports).
fn ports(key: &str) -> Vec<String> {
    key.split(',')
        .map(normalize_port)
        .filter(|k| !k.is_empty())
        .collect()
}

/// A VOQ chassis keys its queues by system port, `dut-lc3|Asic0|Ethernet0`: this linecard's own
/// (its DEVICE_METADATA hostname) are its ports; another linecard's are not this switch's.
fn local_port<'a>(key: &'a str, host: Option<&str>) -> Result<&'a str, ()> {
    match key.split('|').collect::<Vec<_>>().as_slice() {
        [port] => Ok(port),
        [h, _asic, port] if Some(*h) == host => Ok(port),
        _ => Err(()),
    }
}

/// `3,4` or `3-4`: the priorities or queues a field or key names.
fn indices(s: &str) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.trim().parse::<u8>().ok()?, b.trim().parse::<u8>().ok()?);
                if a > b || b > 63 {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.parse::<u8>().ok()?),
        }
    }
    Some(v)
}

fn read(p: &mut Parsed, t: &Tables, switch: &str) {
    let empty = BTreeMap::new();
    let get = |name: &str| t.get(name).unwrap_or(&empty);
    // The maps: DSCP → TC, every entry written.
    for (map, entries) in get("DSCP_TO_TC_MAP") {
        for (dscp, tc) in entries {
            let (Ok(d), Some(Ok(tc))) = (
                dscp.trim().parse::<u8>(),
                tc.as_str().map(|s| s.trim().parse::<u8>()),
            ) else {
                p.unknown(&format!("DSCP_TO_TC_MAP|{map}: {dscp}: {tc}"));
                continue;
            };
            p.push(Sample::gauge(
                SW_QOS_DSCP_PRIORITY,
                &[("dscp", &d.to_string()), ("map", map), ("switch", switch)],
                f64::from(tc),
            ));
        }
    }
    // The switch-wide map classifies the ports that name none (SAI's switch QOS_DSCP_TO_TC_MAP).
    let global = get("PORT_QOS_MAP")
        .get("global")
        .and_then(|f| field(f, "dscp_to_tc_map"))
        .is_some();
    for (key, f) in get("PORT_QOS_MAP") {
        // `global`: the switch-wide map, read where a port names none.
        let targets = if key == "global" {
            vec!["all".to_string()]
        } else {
            ports(key)
        };
        for port in &targets {
            let map = field(f, "dscp_to_tc_map").map(reference);
            if let Some(m) = map {
                p.push(Sample::gauge(
                    SW_QOS_DSCP_MAP,
                    &[("map", m), ("port", port), ("switch", switch)],
                    1.0,
                ));
            }
            if key == "global" {
                continue;
            }
            p.push(Sample::gauge(
                SW_QOS_TRUST_DSCP,
                &[("port", port), ("switch", switch)],
                if map.is_some() || global { 1.0 } else { 0.0 },
            ));
            // No `pfc_enable`: PFC is off on every priority of the port.
            let on = match field(f, "pfc_enable").map(indices) {
                Some(Some(v)) => v,
                Some(None) => {
                    p.unknown(&format!(
                        "PORT_QOS_MAP|{key}: pfc_enable {:?}",
                        f.get("pfc_enable")
                    ));
                    continue;
                }
                None => Vec::new(),
            };
            for prio in 0..8u8 {
                p.push(Sample::gauge(
                    SW_PFC_ENABLED,
                    &[
                        ("port", port),
                        ("priority", &prio.to_string()),
                        ("switch", switch),
                    ],
                    if on.contains(&prio) { 1.0 } else { 0.0 },
                ));
            }
        }
    }
    let profiles = get("WRED_PROFILE");
    let host = get("DEVICE_METADATA")
        .get("localhost")
        .and_then(|f| field(f, "hostname"));
    let mut remote = 0usize;
    for (key, f) in get("QUEUE") {
        let Some((port_part, q)) = key.rsplit_once('|') else {
            p.unknown(&format!("QUEUE|{key}"));
            continue;
        };
        let Ok(port_part) = local_port(port_part, host) else {
            remote += 1;
            continue;
        };
        let Some(queues) = indices(q) else {
            p.unknown(&format!("QUEUE|{key}"));
            continue;
        };
        // No WRED profile, or one with `ecn_none`: the queue drops, it never marks.
        let profile = field(f, "wred_profile").map(reference);
        let wred = profile.and_then(|name| profiles.get(name));
        if let (Some(name), None) = (profile, wred) {
            p.note(format!(
                "QUEUE|{key} names WRED profile {name}, which is not in WRED_PROFILE"
            ));
            continue;
        }
        let ecn = wred
            .and_then(|w| field(w, "ecn"))
            .is_some_and(|e| e.starts_with("ecn_") && e != "ecn_none");
        let min = wred
            .filter(|_| ecn)
            .and_then(|w| field(w, "green_min_threshold"))
            .and_then(|s| s.parse::<f64>().ok());
        for port in ports(port_part) {
            for q in &queues {
                let l = [
                    ("port", port.as_str()),
                    ("priority", &q.to_string()),
                    ("switch", switch),
                ];
                p.push(Sample::gauge(
                    SW_QOS_ECN_ENABLED,
                    &l,
                    if ecn { 1.0 } else { 0.0 },
                ));
                if let Some(m) = min {
                    p.push(Sample::gauge(SW_QOS_ECN_MIN_BYTES, &l, m));
                }
            }
        }
    }
    if remote > 0 {
        p.note(format!(
            "{remote} queue(s) of VOQ system ports (`host|asic|port`) not read: {}",
            match host {
                Some(h) => format!("they belong to other linecards than {h}"),
                None => "no DEVICE_METADATA hostname says which linecard this is".to_string(),
            }
        ));
    }
    for (key, f) in get("PORT") {
        let Some(mtu) = field(f, "mtu") else { continue };
        match mtu.parse::<f64>() {
            Ok(v) => p.push(Sample::gauge(
                SW_PORT_MTU_BYTES,
                &[("port", &normalize_port(key)), ("switch", switch)],
                v,
            )),
            Err(_) => p.unknown(&format!("PORT|{key}: mtu {mtu}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        p.find(name, labels).map(|v| v.as_f64())
    }

    #[test]
    fn flat_redis_keys_read_as_the_nested_tables() {
        let flat = r#"{"PORT_QOS_MAP|Ethernet0,Ethernet4": {"dscp_to_tc_map": "[DSCP_TO_TC_MAP|AZURE]", "pfc_enable": "3"},
            "DSCP_TO_TC_MAP|AZURE": {"26": "3"}, "PORT|Ethernet0": {"mtu": "9100"},
            "QUEUE|Ethernet4|3-4": {"wred_profile": "[WRED_PROFILE|L]"}, "WRED_PROFILE|L": {"ecn": "ecn_all"}}"#;
        let p = parse(flat, "sw");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let sw = ("switch", "sw");
        assert_eq!(
            value(
                &p,
                SW_QOS_DSCP_MAP,
                &[sw, ("port", "Ethernet4"), ("map", "AZURE")]
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &p,
                SW_QOS_DSCP_PRIORITY,
                &[sw, ("map", "AZURE"), ("dscp", "26")]
            ),
            Some(3.0)
        );
        assert_eq!(
            value(
                &p,
                SW_PFC_ENABLED,
                &[sw, ("port", "Ethernet0"), ("priority", "3")]
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &p,
                SW_PFC_ENABLED,
                &[sw, ("port", "Ethernet0"), ("priority", "4")]
            ),
            Some(0.0)
        );
        assert_eq!(
            value(
                &p,
                SW_QOS_ECN_ENABLED,
                &[sw, ("port", "Ethernet4"), ("priority", "4")]
            ),
            Some(1.0)
        );
        assert_eq!(
            value(&p, SW_PORT_MTU_BYTES, &[sw, ("port", "Ethernet0")]),
            Some(9100.0)
        );
    }

    #[test]
    fn a_port_without_a_dscp_map_or_wred_does_not_trust_dscp_nor_mark() {
        let j = r#"{"PORT_QOS_MAP": {"Ethernet8": {"pfc_enable": "3,4"}},
            "QUEUE": {"Ethernet8|3": {"scheduler": "scheduler.1"}}}"#;
        let p = parse(j, "sw");
        let l = [("port", "Ethernet8"), ("switch", "sw")];
        assert_eq!(value(&p, SW_QOS_TRUST_DSCP, &l), Some(0.0));
        assert_eq!(
            value(&p, SW_QOS_ECN_ENABLED, &[l[0], ("priority", "3")]),
            Some(0.0)
        );
    }

    #[test]
    fn garbage_is_counted_never_a_panic() {
        for t in [
            "",
            "{",
            "[1,2]",
            "{\"PORT_QOS_MAP\": 3}",
            "{\"QUEUE\": {\"x\": {}}}",
            "{\"PORT_QOS_MAP\": {\"E0\": {\"pfc_enable\": \"9-1\"}}}",
            "{\"DSCP_TO_TC_MAP\": {\"A\": {\"x\": 1}}}",
        ] {
            let _ = parse(t, "sw");
        }
        assert!(parse("{", "sw").unknown_lines > 0);
    }
}
