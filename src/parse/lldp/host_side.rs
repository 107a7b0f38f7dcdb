//! A Linux host's `lldpctl`: text, `-f keyvalue` or `-f json`.

use super::NOT_INSTALLED;
use super::Neighbor;
use crate::metrics::Parsed;
use crate::parse::host::prompt;
use crate::parse::num::is_rule;
use crate::parse::switch::common::json_doc;
use serde_json::Value;

/// The neighbours in `lldpctl` output: text, `-f keyvalue` or `-f json`.
pub fn host_neighbors(text: &str) -> (Vec<Neighbor>, Parsed) {
    let mut p = Parsed::default();
    if text.lines().any(|l| l.trim() == NOT_INSTALLED) {
        p.note("lldpctl is not installed on this node: install lldpd to pair netdevs with switch ports");
        return (Vec::new(), p);
    }
    if text.contains("unable to connect to socket") {
        p.note("lldpctl cannot reach lldpd (is the lldpd service running?)");
        return (Vec::new(), p);
    }
    match json_doc(text) {
        Some(Ok(v)) => return (json_neighbors(&v), p),
        Some(Err(e)) => {
            p.unknown(&e);
            return (Vec::new(), p);
        }
        None => {}
    }
    if text.lines().any(|l| l.trim_start().starts_with("lldp.")) {
        return keyvalue_neighbors(text, p);
    }
    text_neighbors(text, p)
}

/// Partially known neighbour of one interface, filled field by field.
#[derive(Default)]
struct Partial {
    name: Option<String>,
    chassis_id: Option<String>,
    port_id: Option<(String, String)>,
    port_descr: Option<String>,
}

impl Partial {
    fn finish(self, local: String) -> Option<Neighbor> {
        let remote = self.name.or(self.chassis_id)?;
        // A MAC port id says little; the description is usually the interface name then.
        let port = match self.port_id {
            Some((kind, v)) if kind != "mac" => Some(v),
            Some((_, mac)) => self.port_descr.or(Some(mac)),
            None => self.port_descr,
        }?;
        Some(Neighbor {
            local,
            remote,
            remote_port: port,
        })
    }
}

/// `lldpctl` text: `Interface:    eno1, via: LLDP, ...` blocks.
fn text_neighbors(text: &str, mut p: Parsed) -> (Vec<Neighbor>, Parsed) {
    let mut out = Vec::new();
    let mut cur: Option<(String, Partial)> = None;
    // SysDescr runs on over several lines (a Cisco banner): those lines are part of it.
    let mut in_descr = false;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || is_rule(t) || prompt::command(t, "lldpctl").is_some() {
            continue;
        }
        let kv = t
            .split_once(':')
            .filter(|(k, _)| KNOWN_TEXT_KEYS.contains(&k.trim()));
        let Some((key, val)) = kv else {
            if !in_descr && t != "LLDP neighbors:" {
                p.unknown(t);
            }
            continue;
        };
        in_descr = key == "SysDescr";
        let val = val.trim();
        match key {
            "Interface" => {
                if let Some((l, part)) = cur.take() {
                    out.extend(part.finish(l));
                }
                let name = val.split(',').next().unwrap_or("").trim().to_string();
                cur = Some((name, Partial::default()));
            }
            "SysName" => with(&mut cur, |c| c.name = Some(val.to_string())),
            "ChassisID" => with(&mut cur, |c| c.chassis_id = Some(id_value(val).1)),
            "PortID" => with(&mut cur, |c| c.port_id = Some(id_value(val))),
            "PortDescr" => with(&mut cur, |c| c.port_descr = Some(val.to_string())),
            // Everything else of a block is known and not needed (SysDescr, Capability, TTL, ...).
            _ => {}
        }
    }
    if let Some((l, part)) = cur.take() {
        out.extend(part.finish(l));
    }
    (out, p)
}

/// The keys of an `lldpctl` text block (lldpd 0.9–1.0).
const KNOWN_TEXT_KEYS: [&str; 22] = [
    "Interface",
    "Chassis",
    "ChassisID",
    "SysName",
    "SysDescr",
    "MgmtIP",
    "MgmtIface",
    "Capability",
    "Port",
    "PortID",
    "PortDescr",
    "TTL",
    "PMD autoneg",
    "Adv",
    "MAU oper type",
    "VLAN",
    "PPVID",
    "PI",
    "LLDP-MED",
    "Device Type",
    "LLDP neighbors",
    "Unknown TLVs",
];

fn with(cur: &mut Option<(String, Partial)>, f: impl FnOnce(&mut Partial)) {
    if let Some((_, c)) = cur.as_mut() {
        f(c);
    }
}

/// `ifname Gi1/0/11` → (`ifname`, `Gi1/0/11`); a value without a subtype is its own value.
fn id_value(val: &str) -> (String, String) {
    match val.split_once(char::is_whitespace) {
        Some((kind, v))
            if ["ifname", "mac", "local", "ifalias", "ip"].contains(&kind)
                && !v.trim().is_empty() =>
        {
            (kind.to_string(), v.trim().to_string())
        }
        _ => (String::new(), val.to_string()),
    }
}

/// `lldpctl -f keyvalue`: `lldp.<if>.chassis.name=...`, `lldp.<if>.port.ifname=...`.
fn keyvalue_neighbors(text: &str, mut p: Parsed) -> (Vec<Neighbor>, Parsed) {
    let mut by_if: Vec<(String, Partial)> = Vec::new();
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || prompt::command(t, "lldpctl").is_some() {
            continue;
        }
        let Some((key, val)) = t.split_once('=') else {
            // lldpctl continues multi-line values (a SysDescr) on the next line.
            continue;
        };
        let Some(rest) = key.strip_prefix("lldp.") else {
            p.unknown(t);
            continue;
        };
        let Some((ifname, field)) = rest.split_once('.') else {
            continue;
        };
        let val = val.trim().trim_matches('"').to_string();
        let idx = match by_if.iter().position(|(n, _)| n == ifname) {
            Some(i) => i,
            None => {
                by_if.push((ifname.to_string(), Partial::default()));
                by_if.len() - 1
            }
        };
        let c = &mut by_if[idx].1;
        match field {
            "chassis.name" => c.name = Some(val),
            "chassis.mac" | "chassis.local" | "chassis.id" => c.chassis_id = Some(val),
            "port.ifname" => c.port_id = Some(("ifname".into(), val)),
            "port.local" => c.port_id = Some(("local".into(), val)),
            "port.mac" => c.port_id = Some(("mac".into(), val)),
            "port.descr" => c.port_descr = Some(val),
            _ => {}
        }
    }
    let out = by_if
        .into_iter()
        .filter_map(|(l, part)| part.finish(l))
        .collect();
    (out, p)
}

/// `lldpctl -f json` in its shapes: `interface` an object keyed by name, an array of one-key
/// objects (several neighbours, as lldpd prints them), or (`-f json0`) objects with a `name`.
fn json_neighbors(v: &Value) -> Vec<Neighbor> {
    let lldp = match v.get("lldp") {
        Some(Value::Array(a)) => a.first().cloned().unwrap_or(Value::Null),
        Some(o) => o.clone(),
        None => return Vec::new(),
    };
    let mut entries: Vec<(String, &Value)> = Vec::new();
    match lldp.get("interface") {
        Some(Value::Object(m)) => entries.extend(m.iter().map(|(k, v)| (k.clone(), v))),
        Some(Value::Array(a)) => {
            for e in a {
                match (e.get("name").and_then(Value::as_str), e.as_object()) {
                    (Some(n), _) => entries.push((n.to_string(), e)),
                    (None, Some(m)) => entries.extend(m.iter().map(|(k, v)| (k.clone(), v))),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    entries
        .into_iter()
        .filter_map(|(local, e)| json_entry(e).finish(local))
        .collect()
}

/// The first element of a json0 array, or the value itself.
fn one(v: &Value) -> &Value {
    match v {
        Value::Array(a) => a.first().unwrap_or(v),
        _ => v,
    }
}

/// `{"value": "x"}`, `[{"value": "x"}]` or `"x"`.
fn text_of(v: &Value) -> Option<String> {
    let v = one(v);
    v.as_str()
        .or_else(|| v.get("value").and_then(Value::as_str))
        .map(str::to_string)
}

fn json_entry(e: &Value) -> Partial {
    let mut c = Partial::default();
    if let Some(ch) = e.get("chassis").map(one) {
        // Keyed by the system name (`{"leaf-1": {"id": ...}}`) or carrying `name`/`id` itself.
        let body = match ch.as_object() {
            Some(m) if m.len() == 1 && !m.contains_key("id") && !m.contains_key("name") => {
                let (k, b) = m.iter().next().map(|(k, b)| (k.clone(), b)).unzip();
                c.name = k;
                b.unwrap_or(ch)
            }
            _ => ch,
        };
        if let Some(n) = body.get("name").and_then(text_of) {
            c.name = Some(n);
        }
        c.chassis_id = body.get("id").and_then(text_of);
    }
    if let Some(port) = e.get("port").map(one) {
        if let Some(id) = port.get("id").map(one) {
            let kind = id
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            c.port_id = text_of(id).map(|v| (kind, v));
        }
        c.port_descr = port.get("descr").and_then(text_of);
    }
    c
}
