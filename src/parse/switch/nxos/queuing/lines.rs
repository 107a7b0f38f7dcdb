//! Single-line recognisers of the queuing text parser: box titles, config-table rows,
//! `label  value` lines and the interface an echoed command names.

use super::{LineStat, Sec};
use crate::metrics::names::*;
use crate::parse::num::{count, trim};
use crate::parse::switch::normalize_port;
use crate::parse::switch::nxos::drop_reason;

/// The non-empty cells of a box line, trimmed, into `cells` (cleared first). The bars are found
/// by one vectorised search over the line: a byte loop that cut at each bar cost more
/// (most of what is left is trimming the cells' padding). '|' is ASCII, so every cut is a char
/// boundary.
pub(super) fn split_cells<'a>(t: &'a str, cells: &mut Vec<&'a str>) {
    cells.clear();
    let mut from = 0;
    for bar in memchr::memchr_iter(b'|', t.as_bytes()).chain([t.len()]) {
        let cell = trim(t.get(from..bar).unwrap_or(""));
        if !cell.is_empty() {
            cells.push(cell);
        }
        from = bar + 1;
    }
}

/// `QOS GROUP 3` → 3, `CONTROL QOS GROUP` → control, `SPAN QOS GROUP` → span, `CPU QOS GROUP` → cpu.
pub(super) fn qos_group_title(cell: &str) -> Option<String> {
    let u = cell.to_ascii_uppercase();
    let i = u.find("QOS GROUP")?;
    let before = u[..i].trim();
    let after = u[i + "QOS GROUP".len()..]
        .split_whitespace()
        .next()
        .unwrap_or("");
    if !before.is_empty() {
        return Some(before.to_ascii_lowercase().replace(' ', "_"));
    }
    let n = after.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    (!n.is_empty()).then(|| n.to_ascii_lowercase())
}

/// A configuration table row (`3  50  -  -  -  -  9(D)`) or the second header line
/// (`Min Max Units`, `Buff Size Pause Th Resume Th`).
pub(super) fn config_row(toks: &[&str]) -> bool {
    const HEADER: &[&str] = &[
        "min",
        "max",
        "units",
        "buff",
        "size",
        "pause",
        "th",
        "resume",
        "shape",
        "qlimit",
        "bandwidth%",
        "priolevel",
    ];
    match toks.first() {
        Some(f) if f.bytes().all(|b| b.is_ascii_digit()) => true,
        Some(_) => toks
            .iter()
            .all(|t| HEADER.contains(&t.to_ascii_lowercase().as_str())),
        None => true,
    }
}

/// The one interface an echoed command names (`interface e1/51`, `interface ethernet 1/1`); none
/// for lists and ranges.
pub(super) fn echoed_interface(t: &str) -> Option<String> {
    let cmd = t.split('|').next()?;
    let toks: Vec<&str> = cmd.split_whitespace().collect();
    // `interface` as typed: `int`, `inter`, `interface` (the CLI takes any unique prefix).
    let i = toks.iter().position(|w| {
        w.len() >= 3 && w.len() <= 9 && "interface".starts_with(&*w.to_ascii_lowercase())
    })?;
    let rest = toks.get(i + 1..)?;
    let name = match rest {
        [n] => (*n).to_string(),
        [a, b] if !a.chars().any(|c| c.is_ascii_digit()) => format!("{a}{b}"),
        _ => return None,
    };
    let ok = name.chars().any(|c| c.is_ascii_digit()) && !name.contains([',', '-']);
    ok.then(|| normalize_port(&name))
}

/// `Label words   123` (or `Label: 123`) → (label, the value's text, value).
pub(super) fn label_value(t: &str) -> Option<(&str, &str, u64)> {
    let (label, text) = t.trim().rsplit_once(char::is_whitespace)?;
    let v = count(text)?;
    let label = label.trim().trim_end_matches(':').trim();
    (!label.is_empty()).then_some((label, text, v))
}

/// What the label of a statistics-section line means, or None when it is not a counter rocetop
/// keeps (`Pause Flush Drop Pkts` in port egress, `Ingress MMU Drop Bytes` in port ingress, ...).
pub(super) fn line_stat(sec: Sec, label: &str) -> Option<LineStat> {
    let lower = label.to_ascii_lowercase();
    let (stem, bytes) = match lower.rsplit_once(' ') {
        Some((s, "pkts" | "packets")) => (s, false),
        Some((s, "bytes" | "byts")) => (s, true),
        _ => return None,
    };
    if sec == Sec::PortEgress {
        if stem.contains("ecn") && stem.contains("mark") && !bytes {
            return Some(LineStat {
                name: SW_QUEUE_ECN_MARKED,
                reason: None,
                qos_all: true,
            });
        }
        if !stem.contains("drop") {
            return None;
        }
        return Some(LineStat {
            name: if bytes {
                SW_QUEUE_DROPPED_BYTES
            } else {
                SW_QUEUE_DROPPED
            },
            reason: Some(drop_reason(stem)),
            qos_all: true,
        });
    }
    if !stem.contains("drop") {
        return None;
    }
    let mut reason = drop_reason(stem);
    if sec == Sec::SliceIngress {
        // A slice counter is shared by every port of the slice: keep it apart from the port's own.
        reason.push_str("_slice");
    }
    Some(LineStat {
        name: if bytes {
            SW_INGRESS_DROPPED_BYTES
        } else {
            SW_INGRESS_DROPPED
        },
        reason: Some(reason),
        qos_all: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cells are those of splitting at every bar, trimming, and dropping empty ones.
    #[test]
    fn cells_are_split_at_bars_and_trimmed() {
        let mut cells = Vec::new();
        for t in [
            "",
            "|",
            "||",
            "|  Tx Pkts |         1070000|               0|               0|",
            "Tx Pkts | 5",
            "|  é  | \u{a0}7\u{a0} |x",
            "|\u{a0}| \u{3000}x | é|ü |\té\t|",
            " \t|\u{2003}",
            "| | \t |a|",
            "no bars at all",
        ] {
            split_cells(t, &mut cells);
            let want: Vec<&str> = t.split('|').map(trim).filter(|c| !c.is_empty()).collect();
            assert_eq!(cells, want, "{t:?}");
        }
        split_cells("|  Tx Pkts | 12 | - |", &mut cells);
        assert_eq!(cells, ["Tx Pkts", "12", "-"]);
    }

    #[test]
    fn titles() {
        assert_eq!(qos_group_title("QOS GROUP 3").as_deref(), Some("3"));
        assert_eq!(
            qos_group_title("CONTROL QOS GROUP").as_deref(),
            Some("control")
        );
        assert_eq!(qos_group_title("SPAN QOS GROUP").as_deref(), Some("span"));
        assert_eq!(qos_group_title("Tx Pkts"), None);
    }

    #[test]
    fn echoed_interfaces() {
        assert_eq!(
            echoed_interface("N9K# show queuing interface e1/51 | grep x").as_deref(),
            Some("Ethernet1/51")
        );
        assert_eq!(
            echoed_interface("show queuing interface ethernet 1/1").as_deref(),
            Some("Ethernet1/1")
        );
        assert_eq!(echoed_interface("show queuing interface e1/1-4"), None);
        // The keyword abbreviated as typed at the prompt.
        assert_eq!(
            echoed_interface("leaf1# sh queuing int e1/1 | b \"QOS GROUP 5\"").as_deref(),
            Some("Ethernet1/1")
        );
        assert_eq!(
            echoed_interface("leaf1# sh que inter eth1/7").as_deref(),
            Some("Ethernet1/7")
        );
        assert_eq!(echoed_interface("leaf1# sh queuing in e1/1"), None);
        assert_eq!(echoed_interface("show queuing"), None);
    }
}
