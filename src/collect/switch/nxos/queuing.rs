//! `show queuing interface` as text: the 7.x/ALE layout (config tables, boxed QOS GROUP tables with
//! Unicast / OOBFC Unicast / Multicast columns, Port Egress/Ingress Statistics, PFC Statistics), the
//! 9.x boxed layout (WRED/AFD & Tail, Q Depth, WD & Tail, per-port and per-slice ingress
//! overflow) and the N5K legacy layout (`EthernetX queuing information:`, `Statistics:`).

use super::{QStat, drop_reason, queue_stat};
use crate::collect::switch::common::{Acc, is_prompt_or_echo};
use crate::collect::switch::normalize_port;
use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::num::{count, is_rule};
use lines::{config_row, echoed_interface, label_value, qos_group_title};

mod lines;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Sec {
    None,
    /// `QoS-Group# Bandwidth% ...` or `QoS-Group# Pause Buff Size ...`: configuration, no counters.
    Config,
    Box,
    PortEgress,
    PortIngress,
    SliceIngress,
    Pfc,
    N5kTx,
    N5kRx,
    N5kStats,
}

struct St<'a> {
    sw: &'a str,
    port: Option<String>,
    qg: Option<String>,
    sec: Sec,
    acc: Acc,
    p: Parsed,
}

pub fn parse(text: &str, sw: &str) -> Parsed {
    let mut st = St {
        sw,
        port: None,
        qg: None,
        sec: Sec::None,
        acc: Acc::default(),
        p: Parsed::default(),
    };
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || is_rule(t) {
            continue;
        }
        if is_prompt_or_echo(t) {
            // `show queuing interface e1/51 | begin ...` names the port when the output is cut
            // before its `Egress Queuing for` header.
            if let Some(port) = echoed_interface(t) {
                st.port = Some(port);
                st.qg = None;
                st.sec = Sec::None;
            }
            continue;
        }
        if !st.line(t) {
            st.p.unknown(t);
        }
    }
    st.acc.into_parsed(st.p)
}

impl St<'_> {
    /// Handle one non-blank line; false when it was not understood.
    fn line(&mut self, t: &str) -> bool {
        let lower = t.to_ascii_lowercase();
        if t.starts_with('|') {
            return self.box_line(t);
        }
        for (prefix, sec) in [
            ("egress queuing for ", Sec::Config),
            ("ingress queuing for ", Sec::Config),
        ] {
            if let Some(rest) = lower.strip_prefix(prefix) {
                let name = t.get(prefix.len()..).unwrap_or(rest);
                return self.set_port(name.split_whitespace().next(), sec);
            }
        }
        if let Some(name) = lower.strip_suffix(" queuing information:") {
            return self.set_port(t.get(..name.len()), Sec::None);
        }
        match lower.as_str() {
            "port egress statistics" => return self.enter(Sec::PortEgress),
            "port ingress statistics" | "per port ingress statistics" => {
                return self.enter(Sec::PortIngress);
            }
            "per slice ingress statistics" => return self.enter(Sec::SliceIngress),
            "pfc statistics" => return self.enter(Sec::Pfc),
            "tx queuing" => return self.enter(Sec::N5kTx),
            "rx queuing" => return self.enter(Sec::N5kRx),
            "statistics:" => return self.enter(Sec::N5kStats),
            _ => {}
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        let first = toks.first().copied().unwrap_or("");
        if first.eq_ignore_ascii_case("slot") && toks.len() == 2 {
            return true;
        }
        if first.eq_ignore_ascii_case("QoS-Group#") {
            self.qg = None;
            return self.enter(Sec::Config);
        }
        if first.eq_ignore_ascii_case("qos-group") {
            return self.n5k_qos_group(&toks);
        }
        if lower.starts_with("txppp") || lower.starts_with("rxppp") {
            return self.ppp(t);
        }
        match self.sec {
            Sec::Config => config_row(&toks),
            Sec::PortEgress | Sec::PortIngress | Sec::SliceIngress => self.stat_line(t),
            Sec::Pfc => self.pfc_row(&toks),
            Sec::N5kTx => first.bytes().all(|b| b.is_ascii_digit()) && !first.is_empty(),
            Sec::N5kRx => t.contains(':'),
            Sec::N5kStats => self.n5k_stat(t),
            Sec::None | Sec::Box => false,
        }
    }

    fn enter(&mut self, sec: Sec) -> bool {
        self.sec = sec;
        true
    }

    fn set_port(&mut self, name: Option<&str>, sec: Sec) -> bool {
        match name
            .map(str::trim)
            .filter(|n| n.chars().any(|c| c.is_ascii_digit()))
        {
            Some(n) => {
                self.port = Some(normalize_port(n));
                self.qg = None;
                self.sec = sec;
                true
            }
            None => false,
        }
    }

    fn labels<'b>(
        &'b self,
        port: &'b str,
        extra: &[(&'static str, &'b str)],
    ) -> Vec<(&'static str, &'b str)> {
        let mut l = vec![("switch", self.sw), ("port", port)];
        l.extend_from_slice(extra);
        l
    }

    /// A line inside a box: a QOS GROUP title, the column header, or stat/value cells (a row may
    /// hold two stat/value pairs).
    fn box_line(&mut self, t: &str) -> bool {
        let cells: Vec<&str> = t
            .split('|')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        if let [title] = cells.as_slice()
            && let Some(g) = qos_group_title(title)
        {
            self.qg = Some(g);
            self.sec = Sec::Box;
            return true;
        }
        if !cells.is_empty()
            && cells
                .iter()
                .all(|c| c.to_ascii_lowercase().contains("cast"))
        {
            return true;
        }
        // Group the cells into (label, values).
        let mut pairs: Vec<(&str, Vec<Option<u64>>)> = Vec::new();
        for c in &cells {
            let is_value = count(c).is_some() || matches!(*c, "-" | "N/A" | "NA");
            match (is_value, pairs.last_mut()) {
                (true, Some((_, vals))) => vals.push(count(c)),
                (true, None) => return false,
                (false, _) => pairs.push((c, Vec::new())),
            }
        }
        if pairs.is_empty() {
            return false;
        }
        let (Some(port), Some(qg)) = (self.port.clone(), self.qg.clone()) else {
            self.p
                .note("queue statistics without an interface or QoS group header were skipped");
            return false;
        };
        let mut ok = true;
        for (label, vals) in pairs {
            let Some(stat) = queue_stat(label) else {
                ok = false;
                continue;
            };
            let present: Vec<u64> = vals.iter().flatten().copied().collect();
            if present.is_empty() {
                continue; // every column was `-`: missing, not zero
            }
            let sum = present.iter().fold(0u64, |a, b| a.saturating_add(*b));
            let base = [("qos_group", qg.as_str())];
            let s = match stat {
                QStat::TxPkts => {
                    Sample::counter(SW_QUEUE_TX_PACKETS, &self.labels(&port, &base), sum)
                }
                QStat::TxBytes => {
                    Sample::counter(SW_QUEUE_TX_BYTES, &self.labels(&port, &base), sum)
                }
                QStat::Depth => {
                    Sample::gauge(SW_QUEUE_DEPTH, &self.labels(&port, &base), sum as f64)
                }
                QStat::EcnMarked => {
                    Sample::counter(SW_QUEUE_ECN_MARKED, &self.labels(&port, &base), sum)
                }
                QStat::Dropped { reason, bytes } => {
                    let name = if bytes {
                        SW_QUEUE_DROPPED_BYTES
                    } else {
                        SW_QUEUE_DROPPED
                    };
                    let l = self.labels(
                        &port,
                        &[("qos_group", qg.as_str()), ("reason", reason.as_str())],
                    );
                    Sample::counter(name, &l, sum)
                }
            };
            self.acc.set(s);
        }
        ok
    }

    /// `WRED Drop Pkts   9`, `Ingress MMU Drop Bytes 1024`, `Ingress Overflow Drop Pkts 19490`.
    fn stat_line(&mut self, t: &str) -> bool {
        let Some((label, v)) = label_value(t) else {
            return false;
        };
        let Some(port) = self.port.clone() else {
            return false;
        };
        let lower = label.to_ascii_lowercase();
        let (stem, bytes) = match lower.rsplit_once(' ') {
            Some((s, "pkts" | "packets")) => (s, false),
            Some((s, "bytes" | "byts")) => (s, true),
            _ => return false,
        };
        if self.sec == Sec::PortEgress {
            if stem.contains("ecn") && stem.contains("mark") && !bytes {
                let l = self.labels(&port, &[("qos_group", "all")]);
                self.acc.set(Sample::counter(SW_QUEUE_ECN_MARKED, &l, v));
                return true;
            }
            if !stem.contains("drop") {
                return false;
            }
            let reason = drop_reason(stem);
            let name = if bytes {
                SW_QUEUE_DROPPED_BYTES
            } else {
                SW_QUEUE_DROPPED
            };
            let l = self.labels(&port, &[("qos_group", "all"), ("reason", reason.as_str())]);
            self.acc.set(Sample::counter(name, &l, v));
            return true;
        }
        if !stem.contains("drop") {
            return false;
        }
        let mut reason = drop_reason(stem);
        if self.sec == Sec::SliceIngress {
            // A slice counter is shared by every port of the slice: keep it apart from the port's own.
            reason.push_str("_slice");
        }
        let name = if bytes {
            SW_INGRESS_DROPPED_BYTES
        } else {
            SW_INGRESS_DROPPED
        };
        let l = self.labels(&port, &[("reason", reason.as_str())]);
        self.acc.set(Sample::counter(name, &l, v));
        true
    }

    /// `TxPPP:   19133, RxPPP:   1021` → port totals.
    fn ppp(&mut self, t: &str) -> bool {
        let Some(port) = self.port.clone() else {
            return false;
        };
        let mut ok = false;
        for part in t.split(',') {
            let Some((k, v)) = part.split_once(':') else {
                continue;
            };
            let name = match k.trim().to_ascii_lowercase().as_str() {
                "txppp" => SW_PFC_TX,
                "rxppp" => SW_PFC_RX,
                _ => continue,
            };
            ok = true;
            if let Some(v) = count(v) {
                let l = self.labels(&port, &[("priority", "all")]);
                self.acc.set(Sample::counter(name, &l, v));
            }
        }
        ok
    }

    /// The per-COS table: `COS QOS Group PG TxPause TxCount RxPause RxCount` (7.x) or
    /// `PFC_COS QOS_Group TxPause TxCount RxPause RxCount` (9.x): the counts follow the states.
    fn pfc_row(&mut self, toks: &[&str]) -> bool {
        let first = toks.first().copied().unwrap_or("");
        let header = ["cos", "pfc_cos"].contains(&first.to_ascii_lowercase().as_str());
        if header {
            return true;
        }
        let Some(cos) = count(first).filter(|c| *c < 8) else {
            return false;
        };
        let state = |s: &str| matches!(s.to_ascii_lowercase().as_str(), "active" | "inactive");
        let idx: Vec<usize> = toks
            .iter()
            .enumerate()
            .filter(|(_, s)| state(s))
            .map(|(i, _)| i)
            .collect();
        let (Some(&tx_i), Some(&rx_i), Some(port)) = (idx.first(), idx.get(1), self.port.clone())
        else {
            return false;
        };
        let cos = cos.to_string();
        for (i, name) in [(tx_i, SW_PFC_TX), (rx_i, SW_PFC_RX)] {
            if let Some(v) = toks.get(i + 1).and_then(|s| count(s)) {
                let l = self.labels(&port, &[("priority", cos.as_str())]);
                self.acc.set(Sample::counter(name, &l, v));
            }
        }
        true
    }

    /// N5K `qos-group 1` (starts a group) or the TX table header `qos-group sched-type ...`.
    fn n5k_qos_group(&mut self, toks: &[&str]) -> bool {
        match toks {
            [_, n] if count(n).is_some() => {
                self.qg = Some((*n).to_string());
                true
            }
            [_, rest @ ..] => rest
                .iter()
                .all(|s| s.chars().all(|c| c.is_ascii_alphabetic() || c == '-')),
            _ => false,
        }
    }

    /// N5K `Statistics:` lines (`Pkts discarded on ingress : 160104`).
    fn n5k_stat(&mut self, t: &str) -> bool {
        let Some((k, v)) = t.split_once(':') else {
            return false;
        };
        let key = k
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        let (Some(port), qg) = (self.port.clone(), self.qg.clone()) else {
            return false;
        };
        let qg = qg.unwrap_or_else(|| "all".into());
        match key.as_str() {
            "pkts discarded on ingress" => {
                if let Some(v) = count(v) {
                    let l =
                        self.labels(&port, &[("qos_group", qg.as_str()), ("reason", "discard")]);
                    self.acc.set(Sample::counter(SW_INGRESS_DROPPED, &l, v));
                }
                true
            }
            "pkts sent to the port" => {
                if let Some(v) = count(v) {
                    let l = self.labels(&port, &[("qos_group", qg.as_str())]);
                    self.acc.set(Sample::counter(SW_QUEUE_TX_PACKETS, &l, v));
                }
                true
            }
            // Known N5K lines that carry nothing rocetop charts.
            "pkts received over the port"
            | "ucast pkts sent to the cross-bar"
            | "mcast pkts sent to the cross-bar"
            | "ucast pkts received from the cross-bar"
            | "mcast pkts received from the cross-bar"
            | "per-priority-pause status"
            | "total multicast crossbar statistics" => true,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_layout_gives_no_samples() {
        let p = parse("Totally different\n  output 12\n", "sw");
        assert!(p.samples.is_empty());
        assert_eq!(p.unknown_lines, 2);
    }

    #[test]
    fn crlf_and_missing_cells() {
        let t = "Egress Queuing for Eth1/1 [System]\r\n|  QOS GROUP 1 |\r\n|  Tx Pkts | - | 5 |\r\n| Q Depth Byts | - | - |\r\n";
        let p = parse(t, "sw");
        assert_eq!(p.unknown_lines, 0);
        let v = p.find(
            SW_QUEUE_TX_PACKETS,
            &[("port", "Ethernet1/1"), ("qos_group", "1")],
        );
        assert_eq!(v, Some(crate::metrics::Value::Counter(5)));
        assert_eq!(p.find(SW_QUEUE_DEPTH, &[]), None);
    }
}
