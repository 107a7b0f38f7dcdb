//! `show queuing interface` as NX-API / `| json` JSON (keys: the N9K 9.3(x) schema and the notes in
//! the fixtures): TABLE_queuing_interface rows with TABLE_qosgrp_egress_stats, TABLE_egress_stats_entry,
//! TABLE_ingress_stats_entry, tx-ppp / rx-ppp and TABLE_pfc_stats.

use super::{QStat, drop_reason, queue_stat};
use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::switch::common::{Acc, find_rows, jnum, jstr, nxapi_bodies, rows};
use crate::parse::switch::normalize_port;
use serde_json::Value;

pub fn parse(doc: &Value, sw: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    let mut found = false;
    for body in nxapi_bodies(doc) {
        let mut ifs = Vec::new();
        find_rows(body, "TABLE_queuing_interface", &mut ifs);
        for row in ifs {
            found = true;
            interface(row, sw, &mut acc, &mut p);
        }
    }
    if !found {
        p.unknown("JSON without TABLE_queuing_interface");
    }
    acc.into_parsed(p)
}

fn interface(row: &Value, sw: &str, acc: &mut Acc, p: &mut Parsed) {
    let Some(port) = jstr(row, "if_name_str").or_else(|| jstr(row, "interface")) else {
        p.unknown("TABLE_queuing_interface row without if_name_str");
        return;
    };
    let port = normalize_port(&port);
    let port = port.as_str();
    let mk = |name: &str, extra: &[(&'static str, &str)], v: u64| {
        let mut l = vec![("switch", sw), ("port", port)];
        l.extend_from_slice(extra);
        Sample::counter(name, &l, v)
    };

    for g in rows(row, "TABLE_qosgrp_egress_stats") {
        let Some(qg) = jstr(g, "eq-qosgrp") else {
            continue;
        };
        let qg = qg.to_ascii_lowercase();
        for e in rows(g, "TABLE_qosgrp_egress_stats_entry") {
            let label = format!(
                "{} {}",
                jstr(e, "eq-stat-type").unwrap_or_default(),
                jstr(e, "eq-stat-units").unwrap_or_default()
            );
            let vals: Vec<u64> = [
                "eq-uc-stat-value",
                "eq-oobfc-uc-stat-value",
                "eq-mc-stat-value",
            ]
            .iter()
            .filter_map(|k| e.get(*k).and_then(jnum))
            .collect();
            let Some(stat) = queue_stat(&label) else {
                p.unknown(&label);
                continue;
            };
            if vals.is_empty() {
                continue;
            }
            let sum = vals.iter().fold(0u64, |a, b| a.saturating_add(*b));
            let l = [("qos_group", qg.as_str())];
            let s = match stat {
                QStat::TxPkts => mk(SW_QUEUE_TX_PACKETS, &l, sum),
                QStat::TxBytes => mk(SW_QUEUE_TX_BYTES, &l, sum),
                QStat::EcnMarked => mk(SW_QUEUE_ECN_MARKED, &l, sum),
                QStat::Depth => Sample::gauge(
                    SW_QUEUE_DEPTH,
                    &[("switch", sw), ("port", port), ("qos_group", qg.as_str())],
                    sum as f64,
                ),
                QStat::Dropped { reason, bytes } => {
                    let name = if bytes {
                        SW_QUEUE_DROPPED_BYTES
                    } else {
                        SW_QUEUE_DROPPED
                    };
                    mk(
                        name,
                        &[("qos_group", qg.as_str()), ("reason", reason.as_str())],
                        sum,
                    )
                }
            };
            acc.set(s);
        }
    }
    for (table, prefix, ingress) in [
        ("TABLE_egress_stats_entry", "ep", false),
        ("TABLE_ingress_stats_entry", "ip", true),
    ] {
        for e in rows(row, table) {
            let ty = jstr(e, &format!("{prefix}-stat-type")).unwrap_or_default();
            let units = jstr(e, &format!("{prefix}-stat-units")).unwrap_or_default();
            let Some(v) = e.get(format!("{prefix}-stat-value")).and_then(jnum) else {
                continue;
            };
            let bytes = units.to_ascii_lowercase().starts_with("byt");
            if !ty.to_ascii_lowercase().contains("drop") {
                p.unknown(&format!("{ty} {units}"));
                continue;
            }
            let reason = drop_reason(&ty);
            let s = match (ingress, bytes) {
                (true, false) => mk(SW_INGRESS_DROPPED, &[("reason", reason.as_str())], v),
                (true, true) => mk(SW_INGRESS_DROPPED_BYTES, &[("reason", reason.as_str())], v),
                (false, b) => {
                    let name = if b {
                        SW_QUEUE_DROPPED_BYTES
                    } else {
                        SW_QUEUE_DROPPED
                    };
                    mk(
                        name,
                        &[("qos_group", "all"), ("reason", reason.as_str())],
                        v,
                    )
                }
            };
            acc.set(s);
        }
    }
    for (key, name) in [("tx-ppp", SW_PFC_TX), ("rx-ppp", SW_PFC_RX)] {
        if let Some(v) = row.get(key).and_then(jnum) {
            acc.set(mk(name, &[("priority", "all")], v));
        }
    }
    for c in rows(row, "TABLE_pfc_stats") {
        let Some(cos) = jstr(c, "cos") else { continue };
        for (key, name) in [("tx-pause-count", SW_PFC_TX), ("rx-pause-count", SW_PFC_RX)] {
            if let Some(v) = c.get(key).and_then(jnum) {
                acc.set(mk(name, &[("priority", cos.as_str())], v));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Value as V;

    #[test]
    fn one_row_object_and_string_numbers() {
        let doc: Value = serde_json::from_str(
            r#"{"TABLE_module":{"ROW_module":{"TABLE_queuing_interface":{"ROW_queuing_interface":{
            "if_name_str":"Eth1/1","tx-ppp":"5","rx-ppp":6,
            "TABLE_qosgrp_egress_stats":{"ROW_qosgrp_egress_stats":[{"eq-qosgrp":"3",
              "TABLE_qosgrp_egress_stats_entry":{"ROW_qosgrp_egress_stats_entry":[
                {"eq-stat-type":"Tx","eq-stat-units":"Pkts","eq-uc-stat-value":"10","eq-mc-stat-value":2},
                {"eq-stat-type":"WRED/AFD & Tail Drop","eq-stat-units":"Pkts","eq-uc-stat-value":1}]}}]},
            "TABLE_ingress_stats_entry":{"ROW_ingress_stats_entry":{"ip-stat-type":"Ingress MMU Drop","ip-stat-units":"Pkts","ip-stat-value":"44"}},
            "TABLE_pfc_stats":{"ROW_pfc_stats":[{"cos":"3","tx-pause-count":"7","rx-pause-count":8}]}}}}}}"#,
        )
        .unwrap_or_default();
        let p = parse(&doc, "sw");
        let f = |n: &str, l: &[(&str, &str)]| p.find(n, l);
        assert_eq!(
            f(
                SW_QUEUE_TX_PACKETS,
                &[("port", "Ethernet1/1"), ("qos_group", "3")]
            ),
            Some(V::Counter(12))
        );
        assert_eq!(
            f(SW_QUEUE_DROPPED, &[("reason", "wred_afd_tail")]),
            Some(V::Counter(1))
        );
        assert_eq!(
            f(SW_INGRESS_DROPPED, &[("reason", "mmu")]),
            Some(V::Counter(44))
        );
        assert_eq!(f(SW_PFC_TX, &[("priority", "all")]), Some(V::Counter(5)));
        assert_eq!(f(SW_PFC_RX, &[("priority", "3")]), Some(V::Counter(8)));
        assert_eq!(p.unknown_lines, 0);
    }
}
