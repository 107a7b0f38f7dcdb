//! `show queuing interface` as text: the 7.x/ALE layout (config tables, boxed QOS GROUP tables with
//! Unicast / OOBFC Unicast / Multicast columns, Port Egress/Ingress Statistics, PFC Statistics), the
//! 9.x boxed layout (WRED/AFD & Tail, Q Depth, WD & Tail, per-port and per-slice ingress
//! overflow) and the N5K legacy layout (`EthernetX queuing information:`, `Statistics:`).

use super::{QStat, queue_stat};
use crate::metrics::names::*;
use crate::metrics::{LabelName, Parsed, Sample, SeriesKey, Value};
use crate::parse::num::{count, is_rule, trim};
use crate::parse::switch::common::{Acc, is_prompt_or_echo};
use crate::parse::switch::normalize_port;
use crate::parse::switch::rows;
use lines::{config_row, echoed_interface, label_value, line_stat, qos_group_title, split_cells};

mod boxes;
mod delta;
mod lines;
mod runs;

pub use delta::{Trace, parse_traced, update, update_lines};

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

/// The sample a `label  value` line of a statistics section makes, worked out once per label.
#[derive(Clone, Debug)]
struct LineStat {
    name: &'static str,
    /// The `reason` label, if the metric has one.
    reason: Option<String>,
    /// Whether the sample carries `qos_group="all"` (port egress statistics).
    qos_all: bool,
}

/// A box row label's meaning: the metric and its `reason` label.
#[derive(Clone, Debug)]
struct BoxStat {
    name: &'static str,
    reason: Option<String>,
    gauge: bool,
}

/// Priorities as label values, without formatting a number per sample.
const PRIORITIES: [&str; 8] = ["0", "1", "2", "3", "4", "5", "6", "7"];

struct St<'a> {
    sw: &'a str,
    port: Option<String>,
    qg: Option<String>,
    sec: Sec,
    out: Out<'a>,
    p: Parsed,
    /// Buffers reused line after line.
    toks: Vec<&'a str>,
    cells: Vec<&'a str>,
    /// Labels seen before (the same few repeat for every port and group) and what they mean.
    box_memo: Vec<(&'a str, Option<BoxStat>)>,
    line_memo: Vec<(Sec, &'a str, Option<LineStat>)>,
}

/// Where the samples go.
struct Out<'a> {
    acc: Acc,
    /// When tracing (delta.rs): the index in `acc` of every sample set, in order.
    sets: Option<Vec<u32>>,
    /// When reading one line again (delta.rs): the samples it sets compared with the last
    /// parse's (held here meanwhile), instead of going to `acc`.
    redo: Option<(rows::Redo, Vec<Sample>)>,
    /// When tracing or reading a line again (delta.rs): which digits each sample's value is.
    runs: Option<runs::Rec<'a>>,
}

impl Out<'_> {
    /// A sample made whole (its value not read from cells [`runs`] knows).
    fn set(&mut self, s: Sample) {
        if let Some(r) = &mut self.runs {
            r.put(s.value, &[]);
        }
        self.add(s);
    }

    fn add(&mut self, s: Sample) {
        if let Some((r, last)) = &mut self.redo {
            r.set(last, s);
            return;
        }
        let i = self.acc.set_index(s);
        if let Some(sets) = &mut self.sets {
            sets.push(i as u32);
        }
    }

    /// [`Out::set`] of the sample `name{labels} = value`, the sum of the numbers of the cells
    /// `from` (parts of the line read): a line read again makes no key.
    fn put(&mut self, name: &str, labels: &[(LabelName, &str)], value: Value, from: &[&str]) {
        if let Some(r) = &mut self.runs {
            r.put(value, from);
        }
        match &mut self.redo {
            Some((r, last)) => r.put(last, name, labels, value),
            None => self.add(Sample {
                key: SeriesKey::new(name, labels),
                value,
            }),
        }
    }
}

impl<'a> St<'a> {
    fn new(sw: &'a str, capacity: usize) -> Self {
        St {
            sw,
            port: None,
            qg: None,
            sec: Sec::None,
            out: Out {
                acc: Acc::with_capacity(capacity),
                sets: None,
                redo: None,
                runs: None,
            },
            p: Parsed::default(),
            toks: Vec::new(),
            cells: Vec::new(),
            box_memo: Vec::new(),
            line_memo: Vec::new(),
        }
    }

    /// One raw line of the output; false when it was not understood (the caller counts it).
    fn step(&mut self, raw: &'a str) -> bool {
        let t = crate::parse::num::trim(raw);
        if t.is_empty() || is_rule(t) {
            return true;
        }
        if is_prompt_or_echo(t) {
            // `show queuing interface e1/51 | begin ...` names the port when the output is cut
            // before its `Egress Queuing for` header.
            if let Some(port) = echoed_interface(t) {
                self.port = Some(port);
                self.qg = None;
                self.sec = Sec::None;
            }
            return true;
        }
        self.line(t)
    }
}

pub fn parse(text: &str, sw: &str) -> Parsed {
    // About one sample per 135 bytes of the 7.x layout.
    let mut st = St::new(sw, (text.len() / 128).min(8192));
    for raw in crate::parse::num::lines(text) {
        if !st.step(raw) {
            st.p.unknown(crate::parse::num::trim(raw));
        }
    }
    st.out.acc.into_parsed(st.p)
}

/// ASCII case-insensitive `starts_with`.
fn starts_ci(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// ASCII case-insensitive `ends_with`.
fn ends_ci(s: &str, suffix: &str) -> bool {
    s.len() >= suffix.len()
        && s.as_bytes()[s.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// ASCII case-insensitive `contains` of a lower-case needle.
fn contains_ci(s: &str, needle: &str) -> bool {
    s.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

const SECTIONS: &[(&str, Sec)] = &[
    ("port egress statistics", Sec::PortEgress),
    ("port ingress statistics", Sec::PortIngress),
    ("per port ingress statistics", Sec::PortIngress),
    ("per slice ingress statistics", Sec::SliceIngress),
    ("pfc statistics", Sec::Pfc),
    ("tx queuing", Sec::N5kTx),
    ("rx queuing", Sec::N5kRx),
    ("statistics:", Sec::N5kStats),
];

impl<'a> St<'a> {
    /// Handle one non-blank line; false when it was not understood.
    fn line(&mut self, t: &'a str) -> bool {
        if t.starts_with('|') {
            return self.box_line(t);
        }
        for prefix in ["egress queuing for ", "ingress queuing for "] {
            if starts_ci(t, prefix) {
                let name = t.get(prefix.len()..).unwrap_or("");
                return self.set_port(name.split_whitespace().next(), Sec::Config);
            }
        }
        const N5K_HEADER: &str = " queuing information:";
        if ends_ci(t, N5K_HEADER) {
            return self.set_port(t.get(..t.len() - N5K_HEADER.len()), Sec::None);
        }
        if let Some((_, sec)) = SECTIONS.iter().find(|(s, _)| t.eq_ignore_ascii_case(s)) {
            return self.enter(*sec);
        }
        let mut toks = std::mem::take(&mut self.toks);
        toks.clear();
        toks.extend(t.split_whitespace());
        let ok = self.line_toks(t, &toks);
        self.toks = toks;
        ok
    }

    fn line_toks(&mut self, t: &'a str, toks: &[&'a str]) -> bool {
        let first = toks.first().copied().unwrap_or("");
        if first.eq_ignore_ascii_case("slot") && toks.len() == 2 {
            return true;
        }
        if first.eq_ignore_ascii_case("QoS-Group#") {
            self.qg = None;
            return self.enter(Sec::Config);
        }
        if first.eq_ignore_ascii_case("qos-group") {
            return self.n5k_qos_group(toks);
        }
        if starts_ci(t, "txppp") || starts_ci(t, "rxppp") {
            return self.ppp(t);
        }
        match self.sec {
            Sec::Config => config_row(toks),
            Sec::PortEgress | Sec::PortIngress | Sec::SliceIngress => self.stat_line(t),
            Sec::Pfc => self.pfc_row(toks),
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

    /// What a `label  value` line of a statistics section means (memoised per section and label).
    fn line_stat(&mut self, label: &'a str) -> Option<LineStat> {
        let sec = self.sec;
        if let Some((_, _, r)) = self
            .line_memo
            .iter()
            .find(|(s, l, _)| *s == sec && *l == label)
        {
            return r.clone();
        }
        let r = line_stat(sec, label);
        self.line_memo.push((sec, label, r.clone()));
        r
    }

    /// `WRED Drop Pkts   9`, `Ingress MMU Drop Bytes 1024`, `Ingress Overflow Drop Pkts 19490`.
    fn stat_line(&mut self, t: &'a str) -> bool {
        let Some((label, v_text, v)) = label_value(t) else {
            return false;
        };
        if self.port.is_none() {
            return false;
        }
        let Some(ls) = self.line_stat(label) else {
            return false;
        };
        let Some(port) = &self.port else {
            return false;
        };
        // In label-name order, so that the key needs no sorting.
        let mut labels = [("port", port.as_str()); 4];
        let mut n = 1;
        if ls.qos_all {
            labels[n] = ("qos_group", "all");
            n += 1;
        }
        if let Some(r) = &ls.reason {
            labels[n] = ("reason", r.as_str());
            n += 1;
        }
        labels[n] = ("switch", self.sw);
        self.out
            .put(ls.name, &labels[..=n], Value::Counter(v), &[v_text]);
        true
    }

    /// `TxPPP:   19133, RxPPP:   1021` → port totals.
    fn ppp(&mut self, t: &'a str) -> bool {
        let Some(port) = &self.port else {
            return false;
        };
        let mut ok = false;
        for part in t.split(',') {
            let Some((k, v_text)) = part.split_once(':') else {
                continue;
            };
            let k = k.trim();
            let name = if k.eq_ignore_ascii_case("txppp") {
                SW_PFC_TX
            } else if k.eq_ignore_ascii_case("rxppp") {
                SW_PFC_RX
            } else {
                continue;
            };
            ok = true;
            if let Some(v) = count(v_text) {
                let l = [
                    ("port", port.as_str()),
                    ("priority", "all"),
                    ("switch", self.sw),
                ];
                self.out.put(name, &l, Value::Counter(v), &[trim(v_text)]);
            }
        }
        ok
    }

    /// The per-COS table: `COS QOS Group PG TxPause TxCount RxPause RxCount` (7.x) or
    /// `PFC_COS QOS_Group TxPause TxCount RxPause RxCount` (9.x): the counts follow the states.
    fn pfc_row(&mut self, toks: &[&'a str]) -> bool {
        let first = toks.first().copied().unwrap_or("");
        if first.eq_ignore_ascii_case("cos") || first.eq_ignore_ascii_case("pfc_cos") {
            return true; // header
        }
        let Some(cos) = count(first).filter(|c| *c < 8) else {
            return false;
        };
        let state =
            |s: &&str| s.eq_ignore_ascii_case("active") || s.eq_ignore_ascii_case("inactive");
        let mut idx = toks
            .iter()
            .enumerate()
            .filter(|(_, s)| state(s))
            .map(|(i, _)| i);
        let (Some(tx_i), Some(rx_i), Some(port)) = (idx.next(), idx.next(), &self.port) else {
            return false;
        };
        let cos = PRIORITIES.get(cos as usize).copied().unwrap_or("");
        for (i, name) in [(tx_i, SW_PFC_TX), (rx_i, SW_PFC_RX)] {
            let text = toks.get(i + 1).copied().unwrap_or("");
            if let Some(v) = count(text) {
                let l = [
                    ("port", port.as_str()),
                    ("priority", cos),
                    ("switch", self.sw),
                ];
                self.out.put(name, &l, Value::Counter(v), &[text]);
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
                    self.out.set(Sample::counter(SW_INGRESS_DROPPED, &l, v));
                }
                true
            }
            "pkts sent to the port" => {
                if let Some(v) = count(v) {
                    let l = self.labels(&port, &[("qos_group", qg.as_str())]);
                    self.out.set(Sample::counter(SW_QUEUE_TX_PACKETS, &l, v));
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
