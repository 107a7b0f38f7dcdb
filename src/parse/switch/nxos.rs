//! Parsers for Cisco NX-OS outputs, text (SSH) or JSON (NX-API, `| json`): `show queuing
//! interface` in every layout seen in the field, `show interface priority-flow-control`,
//! `show interface flowcontrol` and `show interface`.

pub(crate) mod flowcontrol;
pub(crate) mod interface;
pub(crate) mod pfc;
pub(crate) mod queuing;
mod queuing_json;

use super::common::json_doc;
use super::nxapi;
use crate::metrics::{Parsed, Sink};

pub fn parse_queuing(text: &str, switch: &str) -> Parsed {
    match json_doc(text) {
        Some(Ok(v)) => queuing_json::parse(&v, switch),
        Some(Err(e)) => bad_json(e),
        None => queuing::parse(text, switch),
    }
}

pub fn parse_pfc(text: &str, switch: &str) -> Parsed {
    nxapi::parse_rows(text, "TABLE_pfc_interface", |p, acc, r| {
        pfc::json_row(p, acc, switch, r)
    })
    .unwrap_or_else(|| pfc::parse_text(text, switch))
}

/// [`parse_pfc`] with each sample put in `out` as its row is read (NX-API or text); what else
/// the output gave is returned. The samples are those of [`parse_pfc`], in its order, but a
/// series the output names twice comes twice (the accumulator [`parse_pfc`] collects into keeps
/// one per series: `parse::each_sample` makes them unique).
pub fn parse_pfc_into(text: &str, switch: &str, out: &mut dyn Sink) -> Parsed {
    match nxapi::parse_rows_into(text, "TABLE_pfc_interface", out, |p, acc, r| {
        pfc::json_row(p, acc, switch, r)
    }) {
        Some(Ok(p) | Err(p)) => p,
        None => pfc::parse_text_into(text, switch, out),
    }
}

pub fn parse_flowcontrol(text: &str, switch: &str) -> Parsed {
    nxapi::parse_rows(text, "TABLE_flowcontrol", |p, acc, r| {
        flowcontrol::json_row(p, acc, switch, r)
    })
    .unwrap_or_else(|| flowcontrol::parse_text(text, switch))
}

pub fn parse_interface(text: &str, switch: &str) -> Parsed {
    nxapi::parse_rows(text, "TABLE_interface", |p, acc, r| {
        interface::json_row(p, acc, switch, r)
    })
    .unwrap_or_else(|| interface::parse_text(text, switch))
}

fn bad_json(e: String) -> Parsed {
    let mut p = Parsed::default();
    p.unknown(&e);
    p
}

/// What a queue statistic label means (`Tx Pkts`, `WRED/AFD & Tail Drop Pkts`, `Q Depth Byts`),
/// shared by the text and JSON parsers.
#[derive(Debug, PartialEq)]
pub(crate) enum QStat {
    TxPkts,
    TxBytes,
    Dropped { reason: String, bytes: bool },
    Depth,
    EcnMarked,
}

pub(crate) fn queue_stat(label: &str) -> Option<QStat> {
    let l = label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase();
    let (stem, bytes) = if let Some(s) = l.strip_suffix(" pkts") {
        (s, false)
    } else if let Some(s) = l.strip_suffix(" byts").or_else(|| l.strip_suffix(" bytes")) {
        (s, true)
    } else {
        return None;
    };
    Some(match stem {
        "tx" => match bytes {
            false => QStat::TxPkts,
            true => QStat::TxBytes,
        },
        "q depth" if bytes => QStat::Depth,
        s if s.contains("ecn") && s.contains("mark") && !bytes => QStat::EcnMarked,
        s if s.contains("drop") => QStat::Dropped {
            reason: drop_reason(s),
            bytes,
        },
        _ => return None,
    })
}

/// `dropped` → `tail` (the 7.x column), `wd & tail drop` → `watchdog_tail`, `wred/afd & tail drop`
/// → `wred_afd_tail`, `wred drop` → `wred`, `ingress mmu drop` → `mmu`.
pub(crate) fn drop_reason(stem: &str) -> String {
    let s = stem.to_ascii_lowercase();
    let s = s.strip_prefix("ingress ").unwrap_or(&s);
    let s = s
        .strip_suffix(" dropped")
        .or_else(|| s.strip_suffix(" drop"))
        .or_else(|| s.strip_suffix(" drops"))
        .unwrap_or(if s == "dropped" || s == "drop" { "" } else { s });
    if s.is_empty() {
        return "tail".into();
    }
    let words: Vec<&str> = s
        .split_whitespace()
        .map(|w| if w == "wd" { "watchdog" } else { w })
        .collect();
    super::common::snake(&words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_stat_labels() {
        assert_eq!(queue_stat("Tx Pkts"), Some(QStat::TxPkts));
        assert_eq!(queue_stat("Tx  Byts"), Some(QStat::TxBytes));
        assert_eq!(queue_stat("Q Depth Byts"), Some(QStat::Depth));
        let d = |r: &str, bytes| {
            Some(QStat::Dropped {
                reason: r.into(),
                bytes,
            })
        };
        assert_eq!(queue_stat("Dropped Pkts"), d("tail", false));
        assert_eq!(queue_stat("Dropped Byts"), d("tail", true));
        assert_eq!(
            queue_stat("WRED/AFD & Tail Drop Pkts"),
            d("wred_afd_tail", false)
        );
        assert_eq!(queue_stat("WD & Tail Drop Pkts"), d("watchdog_tail", false));
        assert_eq!(queue_stat("WRED & Tail Drop Byts"), d("wred_tail", true));
        assert_eq!(queue_stat("Rx Widgets"), None);
        assert_eq!(drop_reason("Ingress MMU Drop"), "mmu");
        assert_eq!(drop_reason("Pause Flush Drop"), "pause_flush");
        assert_eq!(drop_reason("WRED Non ECN Drop"), "wred_non_ecn");
    }
}
