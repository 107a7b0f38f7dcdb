//! A switch's LLDP table: NX-OS `show lldp neighbors` (a long Device ID alone on its line) and
//! `show lldp neighbors detail` (a block of `Key: value` lines a neighbour), Arista EOS, SONiC
//! `show lldp table` (columns from its dash rule).

use super::Neighbor;
use crate::metrics::Parsed;
use crate::parse::host::prompt;
use crate::parse::num::is_rule;
use crate::parse::switch::common::is_prompt_or_echo;

/// The neighbours in a switch's table, whichever OS printed it.
pub fn switch_neighbors(text: &str) -> (Vec<Neighbor>, Parsed) {
    let mut p = Parsed::default();
    let mut out = Vec::new();
    let mut layout = Layout::Unknown;
    let mut cols: Vec<(usize, usize)> = Vec::new();
    // NX-OS: a Device ID too long for its column stands alone; the row follows on the next line.
    let mut pending: Option<String> = None;
    let mut detail: Option<Detail> = None;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || is_prompt_or_echo(t) || is_legend(t) || is_shell_prompt(t) {
            continue;
        }
        // NX-OS detail: each neighbour's block starts with its chassis id (after the table's
        // header, which detail prints too, empty).
        if let Some(id) = t.strip_prefix("Chassis id:") {
            out.extend(detail.take().and_then(Detail::neighbor));
            layout = Layout::NxosDetail;
            detail = Some(Detail {
                chassis: id.trim().to_string(),
                ..Detail::default()
            });
            continue;
        }
        if layout == Layout::NxosDetail {
            if !detail.as_mut().is_some_and(|d| d.line(t)) {
                p.unknown(t);
            }
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
            Layout::NxosDetail | Layout::Unknown => None,
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
    out.extend(detail.and_then(Detail::neighbor));
    (out, p)
}

/// One neighbour's block of NX-OS `show lldp neighbors detail`.
#[derive(Default)]
struct Detail {
    chassis: String,
    local: String,
    port: String,
    descr: String,
    name: String,
    /// Inside the System Description, which runs over several lines.
    in_descr: bool,
}

/// Keys of a detail block read for nothing (known, not data).
const DETAIL_OTHER: [&str; 9] = [
    "System Description",
    "Time remaining",
    "System Capabilities",
    "Enabled Capabilities",
    "Management Address",
    "Management Address IPV6",
    "Vlan ID",
    "Max Frame Size",
    "TAC support",
];

impl Detail {
    /// Take one line of the block; false where it is not one a block holds.
    fn line(&mut self, t: &str) -> bool {
        let Some((k, v)) = t.split_once(':') else {
            // The System Description's later lines (copyright and the like).
            return self.in_descr;
        };
        let v = v.trim();
        let slot = match k.trim() {
            "Local Port id" => &mut self.local,
            "Port id" => &mut self.port,
            "Port Description" => &mut self.descr,
            "System Name" => &mut self.name,
            k if DETAIL_OTHER.contains(&k) => {
                self.in_descr = k == "System Description" || (self.in_descr && k == "TAC support");
                return true;
            }
            _ => return self.in_descr,
        };
        self.in_descr = false;
        *slot = v.to_string();
        true
    }

    fn neighbor(self) -> Option<Neighbor> {
        let said = |s: &str| !s.is_empty() && s != "not advertised" && s != "null";
        if !said(&self.local) {
            return None;
        }
        let remote = if said(&self.name) {
            self.name
        } else {
            self.chassis
        };
        // A host's lldpd may send its MAC as the port id: its description names the netdev.
        let port = if (!said(&self.port) || is_mac(&self.port)) && said(&self.descr) {
            self.descr
        } else {
            self.port
        };
        Some(Neighbor {
            local: self.local,
            remote,
            remote_port: port,
        })
    }
}

/// `1a51.4800.0001`, `0c:42:a1:00:00:01`: a MAC address, not a port name.
fn is_mac(s: &str) -> bool {
    let hex: String = s
        .chars()
        .filter(|c| !matches!(c, '.' | ':' | '-'))
        .collect();
    hex.len() == 12 && hex.chars().all(|c| c.is_ascii_hexdigit()) && hex.len() < s.len()
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    Unknown,
    Nxos,
    NxosDetail,
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
    prompt::after_prompt(t).is_some_and(|w| w.first() == Some(&"show"))
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
