//! LLDP neighbour tables, from both ends of a link: a switch's `show lldp neighbors` (NX-OS, with
//! Device IDs long enough to push the row onto the next line; Arista EOS) or SONiC `show lldp
//! table`, and a Linux host's `lldpctl` (text, `-f keyvalue`, `-f json`). Both ends give the same
//! metric, `rocetop_link_neighbor_info{node,netdev,switch,port,side}` = 1, so that pairing a node's
//! netdev with its switch port is a lookup, whichever side was asked.

use super::switch::common::{is_prompt_or_echo, json_doc};
use super::switch::normalize_port;
use crate::metrics::names::LINK_NEIGHBOR_INFO;
use crate::metrics::{Parsed, Sample};
use crate::parse::num::is_rule;
use serde_json::Value;

/// One neighbour as the local end sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbor {
    /// The local interface (a switch port, or a host netdev).
    pub local: String,
    /// The neighbour's system name (or chassis id when it sends no name).
    pub remote: String,
    /// The neighbour's port (an interface name where it sends one, else its id).
    pub remote_port: String,
}

/// The marker the host request prints where lldpctl is not installed (see transport.rs).
pub const NOT_INSTALLED: &str = "rocetop: lldpctl not installed";

/// `show lldp neighbors` / `show lldp table` of switch `switch`.
pub fn parse_switch(text: &str, switch: &str) -> Parsed {
    let (found, mut p) = switch_neighbors(text);
    if found.is_empty() && p.unknown_lines == 0 {
        p.note("LLDP: the switch lists no neighbours (LLDP off on the ports, or nothing cabled)");
    }
    for n in found {
        let port = normalize_port(&n.local);
        p.push(Sample::gauge(
            LINK_NEIGHBOR_INFO,
            &[
                ("netdev", &n.remote_port),
                ("node", &n.remote),
                ("port", &port),
                ("side", "switch"),
                ("switch", switch),
            ],
            1.0,
        ));
    }
    p
}

/// `lldpctl` (any format) of node `node`.
pub fn parse_lldpctl(text: &str, node: &str) -> Parsed {
    let (found, mut p) = host_neighbors(text);
    if found.is_empty() && p.unknown_lines == 0 && p.notes.is_empty() {
        p.note("LLDP: lldpd sees no neighbour on any interface (LLDP off on the switch ports?)");
    }
    for n in found {
        let port = normalize_port(&n.remote_port);
        p.push(Sample::gauge(
            LINK_NEIGHBOR_INFO,
            &[
                ("netdev", &n.local),
                ("node", node),
                ("port", &port),
                ("side", "node"),
                ("switch", &n.remote),
            ],
            1.0,
        ));
    }
    p
}

/// The neighbours in a switch's table, whichever OS printed it.
pub fn switch_neighbors(text: &str) -> (Vec<Neighbor>, Parsed) {
    let mut p = Parsed::default();
    let mut out = Vec::new();
    let mut layout = Layout::Unknown;
    let mut cols: Vec<(usize, usize)> = Vec::new();
    // NX-OS: a Device ID too long for its column stands alone; the row follows on the next line.
    let mut pending: Option<String> = None;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || is_prompt_or_echo(t) || is_legend(t) || is_shell_prompt(t) {
            continue;
        }
        if let Some(l) = header(t) {
            layout = l;
            continue;
        }
        if is_rule(t) {
            if layout != Layout::Unknown && cols.is_empty() && t.contains(' ') {
                cols = dash_columns(raw);
            }
            continue;
        }
        let row = match layout {
            Layout::Nxos => nxos_row(raw, &mut pending),
            Layout::Eos => eos_row(t).map(Some),
            Layout::Sonic => sonic_row(raw, &cols).map(Some),
            Layout::Unknown => None,
        };
        match row {
            Some(Some(n)) => out.push(n),
            Some(None) => {}
            None => p.unknown(t),
        }
    }
    if let Some(d) = pending {
        p.unknown(&d);
    }
    (out, p)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Unknown,
    Nxos,
    Eos,
    Sonic,
}

fn header(t: &str) -> Option<Layout> {
    if t.starts_with("Device ID") && t.contains("Local Intf") {
        Some(Layout::Nxos)
    } else if t.starts_with("Port") && t.contains("Neighbor Device ID") {
        Some(Layout::Eos)
    } else if t.starts_with("LocalPort") && t.contains("RemoteDevice") {
        Some(Layout::Sonic)
    } else {
        None
    }
}

/// `admin@sonic1:~$ show lldp table` (SONiC's shell is bash, not a switch CLI prompt).
fn is_shell_prompt(t: &str) -> bool {
    super::host::prompt::after_prompt(t).is_some_and(|w| w.first() == Some(&"show"))
}

/// Capability legends, counters of the table and totals: known, not data.
fn is_legend(t: &str) -> bool {
    const PREFIXES: [&str; 11] = [
        "Capability codes",
        "(R) Router",
        "(W) WLAN",
        "Total entries displayed",
        "Last table change time",
        "Number of table",
        "(B) Bridge",
        "(T) Telephone",
        "(C) DOCSIS",
        "(S) Station",
        "(O) Other",
    ];
    PREFIXES.iter().any(|p| t.starts_with(p))
}

/// The column spans that a rule of dashes (`-----  ------`) draws, in bytes.
fn dash_columns(rule: &str) -> Vec<(usize, usize)> {
    let mut cols = Vec::new();
    let mut start = None;
    for (i, b) in rule.bytes().enumerate() {
        match (b == b'-', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                cols.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        cols.push((s, rule.len()));
    }
    cols
}

/// Does a token name an interface (`Eth1/1`, `mgmt0`, `Ethernet1/2/3`, `Gi1/0/1`, `Po12`)?
fn is_intf(tok: &str) -> bool {
    let digit = tok.find(|c: char| c.is_ascii_digit());
    match digit {
        Some(i) if i > 0 => tok[..i]
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '-'),
        _ => false,
    }
}

/// The capability column: letters of the legend only (`BR`, `B`).
fn is_caps(tok: &str) -> bool {
    !tok.is_empty() && tok.chars().all(|c| "RBTCWPSO".contains(c))
}

/// An NX-OS row `device  local-intf  hold  [caps]  port-id`, or the second line of one whose
/// Device ID stood alone. `Some(None)`: a Device ID line, kept for the next line.
fn nxos_row(raw: &str, pending: &mut Option<String>) -> Option<Option<Neighbor>> {
    let toks: Vec<(usize, &str)> = tokens(raw);
    // The local interface is the first interface-looking token followed by the hold time.
    let at = (0..toks.len()).find(|&i| {
        is_intf(toks[i].1) && toks.get(i + 1).is_some_and(|t| t.1.parse::<u32>().is_ok())
    });
    let Some(i) = at else {
        // A Device ID on its own line (it may hold spaces): the row's other half comes next.
        if pending.is_some() {
            return None;
        }
        *pending = Some(raw.trim().to_string());
        return Some(None);
    };
    let device = match raw.get(..toks[i].0).map(str::trim) {
        Some(d) if !d.is_empty() => {
            if pending.take().is_some() {
                return None;
            }
            d.to_string()
        }
        _ => pending.take()?,
    };
    let rest: Vec<&str> = toks[i + 2..].iter().map(|t| t.1).collect();
    let port = match rest.as_slice() {
        [] => return None,
        [caps, port @ ..] if is_caps(caps) && !port.is_empty() => port.join(" "),
        all => all.join(" "),
    };
    Some(Some(Neighbor {
        local: toks[i].1.to_string(),
        remote: device,
        remote_port: port,
    }))
}

/// Tokens with their byte offsets.
fn tokens(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(st)) => {
                out.push((st, &s[st..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(st) = start {
        out.push((st, &s[st..]));
    }
    out
}

/// An EOS row `Et1   device name   port-id   120`: the device may hold spaces, the port id is the
/// token before the TTL.
fn eos_row(t: &str) -> Option<Neighbor> {
    let toks = tokens(t);
    let n = toks.len();
    if n < 4 || toks[n - 1].1.parse::<u32>().is_err() {
        return None;
    }
    let device = t.get(toks[1].0..toks[n - 2].0)?.trim();
    Some(Neighbor {
        local: toks[0].1.to_string(),
        remote: device.to_string(),
        remote_port: toks[n - 2].1.to_string(),
    })
}

/// A SONiC row, cut at the columns the dashes draw (tabulate pads every cell to its column).
fn sonic_row(raw: &str, cols: &[(usize, usize)]) -> Option<Neighbor> {
    let cell = |i: usize| -> Option<&str> {
        let (s, _) = *cols.get(i)?;
        let e = cols.get(i + 1).map_or(raw.len(), |c| c.0);
        Some(raw.get(s..e.min(raw.len()))?.trim())
    };
    if cols.len() < 3 {
        return None;
    }
    let (local, remote, port) = (cell(0)?, cell(1)?, cell(2)?);
    if local.is_empty() || remote.is_empty() || port.is_empty() || local.contains(' ') {
        return None;
    }
    Some(Neighbor {
        local: local.to_string(),
        remote: remote.to_string(),
        remote_port: port.to_string(),
    })
}

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
        if t.is_empty() || is_rule(t) || super::host::prompt::command(t, "lldpctl").is_some() {
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
        if t.is_empty() || super::host::prompt::command(t, "lldpctl").is_some() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nxos_rows_with_device_ids_alone_on_a_line_and_with_spaces() {
        let text = "Device ID            Local Intf      Hold-time  Capability  Port ID\n\
                    gpu node 7\n                     Eth1/1/1        120                     ens224\n\
                    leaf2                Eth1/2/1        120        BR           Ethernet1/49\n\
                    Total entries displayed: 2\n";
        let (n, p) = switch_neighbors(text);
        assert_eq!(p.unknown_lines, 0, "{p:?}");
        assert_eq!(
            n,
            vec![
                Neighbor {
                    local: "Eth1/1/1".into(),
                    remote: "gpu node 7".into(),
                    remote_port: "ens224".into()
                },
                Neighbor {
                    local: "Eth1/2/1".into(),
                    remote: "leaf2".into(),
                    remote_port: "Ethernet1/49".into()
                },
            ]
        );
    }

    #[test]
    fn a_table_with_no_neighbours_is_a_note_not_an_error() {
        let p = parse_switch(
            "Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\nDevice ID            Local Intf      Hold-time  Capability  Port ID\nTotal entries displayed: 0\n",
            "leaf",
        );
        assert!(p.samples.is_empty());
        assert_eq!(p.unknown_lines, 0);
        assert!(p.notes[0].contains("no neighbours"), "{p:?}");
        let h = parse_lldpctl(
            "-------------------------------------------------------------------------------\nLLDP neighbors:\n-------------------------------------------------------------------------------\n",
            "n1",
        );
        assert!(h.samples.is_empty() && h.unknown_lines == 0, "{h:?}");
        assert!(h.notes[0].contains("no neighbour"), "{h:?}");
        let none = parse_lldpctl("rocetop: lldpctl not installed\n", "n1");
        assert!(none.notes[0].contains("not installed"), "{none:?}");
    }

    #[test]
    fn keyvalue_and_json_agree() {
        let kv = "lldp.ens224.via=LLDP\nlldp.ens224.chassis.mac=00:11:22:33:44:55\nlldp.ens224.chassis.name=NX AI Leaf1\nlldp.ens224.port.ifname=Eth1/2/2\nlldp.ens224.port.descr=to node 1\n";
        let js = r#"{"lldp":{"interface":{"ens224":{"via":"LLDP","chassis":{"NX AI Leaf1":{"id":{"type":"mac","value":"00:11:22:33:44:55"}}},"port":{"id":{"type":"ifname","value":"Eth1/2/2"},"descr":"to node 1"}}}}}"#;
        let want = vec![Neighbor {
            local: "ens224".into(),
            remote: "NX AI Leaf1".into(),
            remote_port: "Eth1/2/2".into(),
        }];
        assert_eq!(host_neighbors(kv).0, want);
        assert_eq!(host_neighbors(js).0, want);
        let p = parse_lldpctl(kv, "ubunturdma1");
        assert_eq!(
            p.samples[0].key.to_string(),
            "rocetop_link_neighbor_info{netdev=\"ens224\",node=\"ubunturdma1\",port=\"Ethernet1/2/2\",side=\"node\",switch=\"NX AI Leaf1\"}"
        );
    }

    #[test]
    fn json0_arrays_and_a_mac_port_id_fall_back_to_the_description() {
        let js = r#"{"lldp":[{"interface":[{"name":"eth0","chassis":[{"id":[{"type":"mac","value":"aa"}],"name":[{"value":"switch1"}]}],"port":[{"id":[{"type":"mac","value":"02:01"}],"descr":[{"value":"Ethernet7"}]}]}]}]}"#;
        assert_eq!(
            host_neighbors(js).0,
            vec![Neighbor {
                local: "eth0".into(),
                remote: "switch1".into(),
                remote_port: "Ethernet7".into()
            }]
        );
    }

    #[test]
    fn garbage_is_counted_and_never_panics() {
        for t in [
            "{",
            "Device ID Local Intf\n\u{feff}é Eth1/1 x",
            "LocalPort RemoteDevice\n---  --\né",
            "lldp.=\n",
        ] {
            let _ = parse_switch(t, "s");
            let _ = parse_lldpctl(t, "n");
        }
        assert_eq!(parse_lldpctl("{", "n").unknown_lines, 1);
    }
}
