//! Parsers for SONiC `show` tables (sonic-utilities): `show pfc counters` (Port Rx / Port Tx tables
//! with PFC0..7), `show queue counters` (UC/MC/ALL queues) and `show queue wredcounters`. Columns are
//! found by their header names; `For namespace ...` (multi-ASIC) and `Last cached time ...` lines are
//! understood; thousands separators and `N/A` are handled.

use super::common::{Acc, is_prompt_or_echo};
use super::normalize_port;
use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::num::{count, is_rule};

/// Lines every SONiC table command may print around its tables.
fn is_banner(t: &str) -> bool {
    let l = t.to_ascii_lowercase();
    // `Ethernet0 Last cached time for asic0 was ...`: per-port blocks name their port first.
    l.starts_with("for namespace")
        || l.contains("last cached time")
        || l.starts_with("last cleared")
}

/// Walk the tables of `text`: `on_header(cells)` returns true when a header was recognised,
/// `on_row(header, cells)` handles a data row (false = not understood).
/// `default`: the header rows are read with when the capture has none (`grep Ethernet4` of a
/// table whose column order is known).
fn tables(
    text: &str,
    default: Option<&[&str]>,
    mut on_header: impl FnMut(&[&str]) -> bool,
    mut on_row: impl FnMut(&[String], &[&str]) -> bool,
) -> Parsed {
    let mut p = Parsed::default();
    let mut header: Option<Vec<String>> = None;
    let mut headless = 0usize;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || is_rule(t) || is_prompt_or_echo(t) || is_banner(t) {
            continue;
        }
        let cells: Vec<&str> = split_cells(t);
        if on_header(&cells) {
            header = Some(cells.iter().map(|c| c.to_string()).collect());
            continue;
        }
        if header.is_none()
            && let Some(d) = default.filter(|d| t.split_whitespace().count() == d.len())
        {
            header = Some(d.iter().map(|c| c.to_string()).collect());
            headless += 1;
        }
        let ok = match &header {
            Some(h) if cells.len() == h.len() => on_row(h, &cells),
            // Cells wider than their column leave one space: fall back to any whitespace.
            Some(h) => {
                let ws: Vec<&str> = t.split_whitespace().collect();
                ws.len() == h.len() && on_row(h, &ws)
            }
            None => false,
        };
        if !ok {
            p.unknown(t);
        }
    }
    if headless > 0 {
        p.note(format!(
            "rows without a header read in the default column order: {}",
            default.unwrap_or_default().join(" ")
        ));
    }
    p
}

/// Columns are separated by two or more spaces in SONiC's tabulate output; a header like `Port Rx`
/// is one cell. Data cells never contain spaces, so single spaces split them too.
fn split_cells(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = t.trim();
    while !rest.is_empty() {
        let end = rest.find("  ").unwrap_or(rest.len());
        out.push(rest[..end].trim());
        rest = rest[end..].trim_start();
    }
    out
}

pub fn parse_pfc(text: &str, switch: &str) -> Parsed {
    let mut acc = Acc::default();
    let p = tables(
        text,
        None,
        |cells| {
            let first = cells
                .first()
                .map(|c| c.to_ascii_lowercase())
                .unwrap_or_default();
            (first == "port rx" || first == "port tx")
                && cells.iter().skip(1).all(|c| c.starts_with("PFC"))
        },
        |h, cells| {
            let name = match h.first().map(String::as_str) {
                Some(x) if x.eq_ignore_ascii_case("port tx") => SW_PFC_TX,
                _ => SW_PFC_RX,
            };
            let Some(port) = cells.first().map(|c| normalize_port(c)) else {
                return false;
            };
            for (col, cell) in h.iter().zip(cells).skip(1) {
                let prio = col.trim_start_matches("PFC");
                if let Some(v) = count(cell) {
                    acc.set(Sample::counter(
                        name,
                        &[
                            ("switch", switch),
                            ("port", port.as_str()),
                            ("priority", prio),
                        ],
                        v,
                    ));
                }
            }
            true
        },
    );
    acc.into_parsed(p)
}

/// A queue table (`Port  TxQ  <metric columns>`, or `Port  Voq ...` of `--voq`, whose ports are
/// system ports such as `host|ASIC0|Ethernet4`): each known column becomes one sample. `--json`
/// output (`{port: {queue: {totalpacket, ...}}}`) is read by [`queue_json`].
/// `order`: the command's own column order, for rows that come without their header.
fn queue_table(
    text: &str,
    switch: &str,
    order: &[&str],
    columns: &[(&str, &str, Option<&str>)],
) -> Parsed {
    if let Some(doc) = super::common::json_doc(text) {
        return queue_json(doc, switch, columns);
    }
    let mut acc = Acc::default();
    let p = tables(
        text,
        Some(order),
        |cells| {
            let q = |c: &str| c.eq_ignore_ascii_case("txq") || c.eq_ignore_ascii_case("voq");
            // `TxQ  WredDrp/pkts ...` with no Port column (a summary) is a header too: its rows
            // name no port, so they are not understood rather than read as a port.
            matches!(cells, [a, b, ..] if a.eq_ignore_ascii_case("port") && q(b))
                || matches!(cells, [a, b, ..] if q(a) && b.contains('/'))
        },
        |h, cells| {
            if !h.first().is_some_and(|c| c.eq_ignore_ascii_case("port")) {
                return false;
            }
            let (Some(port), Some(queue)) = (cells.first(), cells.get(1)) else {
                return false;
            };
            // Port and queue names are printable ASCII (`host|ASIC0|Ethernet4`, `UC3`): a row of
            // binary junk with the right number of cells is not a queue.
            let name_like = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_graphic());
            // SONiC names queues by type and index: UC3, MC10, ALL0.
            let digits = queue.trim_start_matches(|c: char| c.is_ascii_alphabetic());
            let queue_like = digits.len() < queue.len()
                && !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit());
            if !name_like(port) || !queue_like {
                return false;
            }
            let port = normalize_port(port);
            let mut ok = true;
            for (col, cell) in h.iter().zip(cells).skip(2) {
                let Some((_, metric, reason)) =
                    columns.iter().find(|(c, _, _)| c.eq_ignore_ascii_case(col))
                else {
                    // A column of a newer release (Trim/pkts, ...): the row is still understood.
                    continue;
                };
                let mut l = vec![
                    ("switch", switch),
                    ("port", port.as_str()),
                    ("queue", *queue),
                ];
                if let Some(r) = reason {
                    l.push(("reason", r));
                }
                match count(cell) {
                    Some(v) => acc.set(Sample::counter(*metric, &l, v)),
                    None if matches!(*cell, "N/A" | "-" | "NA") => {}
                    None => ok = false,
                }
            }
            ok
        },
    );
    acc.into_parsed(p)
}

/// The JSON keys of each table column (`show queue counters --json`, `show queue wredcounters
/// --json`).
const JSON_KEYS: &[(&str, &str)] = &[
    ("Counter/pkts", "totalpacket"),
    ("Counter/bytes", "totalbytes"),
    ("Drop/pkts", "droppacket"),
    ("Drop/bytes", "dropbytes"),
    ("WredDrp/pkts", "wreddroppacket"),
    ("WredDrp/bytes", "wreddropbytes"),
    ("EcnMarked/pkts", "ecnmarkedpacket"),
];

fn queue_json(
    doc: Result<serde_json::Value, String>,
    switch: &str,
    columns: &[(&str, &str, Option<&str>)],
) -> Parsed {
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    let v = match doc {
        Ok(v) => v,
        Err(e) => {
            p.unknown(&e);
            return p;
        }
    };
    let Some(ports) = v.as_object() else {
        p.unknown("JSON that is not an object of ports");
        return p;
    };
    for (port, queues) in ports {
        let Some(queues) = queues.as_object() else {
            p.unknown(&format!("{port}: not an object of queues"));
            continue;
        };
        let port = normalize_port(port);
        for (queue, c) in queues {
            for (col, metric, reason) in columns {
                let Some(key) = JSON_KEYS.iter().find(|(c, _)| c == col).map(|k| k.1) else {
                    continue;
                };
                let Some(val) = c.get(key) else { continue };
                let mut l = vec![
                    ("switch", switch),
                    ("port", port.as_str()),
                    ("queue", queue.as_str()),
                ];
                if let Some(r) = reason {
                    l.push(("reason", r));
                }
                if let Some(n) =
                    super::common::jtake(&mut p, || format!("{port} {queue} {key}"), val)
                {
                    acc.set(Sample::counter(*metric, &l, n));
                }
            }
        }
    }
    acc.into_parsed(p)
}

pub fn parse_queue(text: &str, switch: &str) -> Parsed {
    queue_table(
        text,
        switch,
        &[
            "Port",
            "TxQ",
            "Counter/pkts",
            "Counter/bytes",
            "Drop/pkts",
            "Drop/bytes",
        ],
        &[
            ("Counter/pkts", SW_QUEUE_TX_PACKETS, None),
            ("Counter/bytes", SW_QUEUE_TX_BYTES, None),
            ("Drop/pkts", SW_QUEUE_DROPPED, Some("drop")),
            ("Drop/bytes", SW_QUEUE_DROPPED_BYTES, Some("drop")),
        ],
    )
}

pub fn parse_wred(text: &str, switch: &str) -> Parsed {
    queue_table(
        text,
        switch,
        &[
            "Port",
            "TxQ",
            "WredDrp/pkts",
            "WredDrp/bytes",
            "EcnMarked/pkts",
            "EcnMarked/bytes",
        ],
        &[
            ("WredDrp/pkts", SW_QUEUE_DROPPED, Some("wred")),
            ("WredDrp/bytes", SW_QUEUE_DROPPED_BYTES, Some("wred")),
            ("EcnMarked/pkts", SW_QUEUE_ECN_MARKED, None),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Value as V;

    #[test]
    fn multi_asic_and_cached_lines() {
        let t = "Last cached time was 2024-01-01 00:00:00\nFor namespace asic0:\n  Port Rx    PFC0    PFC3\n---------  ------  ------\nEthernet0   1,200     N/A\n";
        let p = parse_pfc(t, "s");
        assert_eq!(p.unknown_lines, 0);
        assert_eq!(
            p.find(SW_PFC_RX, &[("priority", "0")]),
            Some(V::Counter(1200))
        );
        assert_eq!(p.find(SW_PFC_RX, &[("priority", "3")]), None);
    }

    #[test]
    fn rows_without_header_take_the_default_columns_or_are_unknown() {
        // `show queue counters | grep Ethernet0`: the column order of the command is known.
        let p = parse_queue("Ethernet0    UC0   1  2  3  4\n", "s");
        assert_eq!(p.unknown_lines, 0);
        assert_eq!(
            p.find(SW_QUEUE_DROPPED_BYTES, &[("queue", "UC0")]),
            Some(V::Counter(4))
        );
        assert!(p.notes.iter().any(|n| n.contains("default column order")));
        // A PFC row says neither Rx nor Tx without its header.
        let p = parse_pfc("Ethernet0  1  2  3  4  5  6  7  8\n", "s");
        assert!(p.samples.is_empty());
        assert_eq!(p.unknown_lines, 1);
    }
}
