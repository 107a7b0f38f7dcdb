//! The PFC watchdog, which shuts a queue that stays paused too long (a PFC storm) and restores it
//! later: SONiC `show pfcwd stats` (`Ethernet4:3  operational  2/2  0/56035 ...`) and NX-OS
//! `show queuing pfc-queue detail` (`QOS GROUP 3 [Shutdown] PFC [YES] PFC-COS [3]` boxes).
//! Storms detected and restored are counters; whether the queue is shut now is a gauge.

use super::common::is_prompt_or_echo;
use super::normalize_port;
use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::num::{count, is_rule};

/// SONiC `show pfcwd stats`.
pub fn parse_sonic(text: &str, switch: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut header = false;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || is_rule(t) || is_prompt_or_echo(t) {
            continue;
        }
        if t.starts_with("QUEUE") && t.contains("STORM DETECTED/RESTORED") {
            header = true;
            continue;
        }
        if !(header && sonic_row(&mut p, t, switch)) {
            p.unknown(t);
        }
    }
    if p.samples.is_empty() && p.unknown_lines == 0 {
        p.note("PFC watchdog: no queue is watched (pfcwd not started on this switch?)");
    }
    p
}

/// `Ethernet4:3  operational  2/2  0/56035  14053/371184  0/0  8634/316045`
fn sonic_row(p: &mut Parsed, t: &str, switch: &str) -> bool {
    let c: Vec<&str> = t.split_whitespace().collect();
    let (Some(q), Some(status), Some(storm)) = (c.first(), c.get(1), c.get(2)) else {
        return false;
    };
    let Some((port, prio)) = q.rsplit_once(':') else {
        return false;
    };
    let port = normalize_port(port);
    let l = [
        ("port", port.as_str()),
        ("priority", prio),
        ("switch", switch),
    ];
    let pair = |s: &str| s.split_once('/').map(|(a, b)| (count(a), count(b)));
    let Some((det, res)) = pair(storm) else {
        return false;
    };
    p.push(Sample::gauge(
        SW_PFC_WATCHDOG_QUEUE_SHUT,
        &l,
        if *status == "stormed" { 1.0 } else { 0.0 },
    ));
    if let Some(v) = det {
        p.push(Sample::counter(SW_PFC_WATCHDOG_STORMS, &l, v));
    }
    if let Some(v) = res {
        p.push(Sample::counter(SW_PFC_WATCHDOG_RESTORED, &l, v));
    }
    for (dir, cell) in [("tx", c.get(3)), ("rx", c.get(4))] {
        if let Some((_, Some(drop))) = cell.and_then(|s| pair(s)) {
            p.push(Sample::counter(
                SW_PFC_WATCHDOG_DROPPED,
                &[
                    ("direction", dir),
                    ("port", &port),
                    ("priority", prio),
                    ("switch", switch),
                ],
                drop,
            ));
        }
    }
    true
}

/// NX-OS `show queuing pfc-queue [detail]`: per interface, `Interface PFC watchdog: [Enabled]`
/// and one box per no-drop QoS group with `Shutdown` / `Restored` / `Total pkts dropped` rows.
pub fn parse_nxos(text: &str, switch: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut port: Option<String> = None;
    let mut prio: Option<String> = None;
    let mut disabled = Vec::new();
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || is_rule(t) || is_prompt_or_echo(t) {
            continue;
        }
        if let Some((intf, state)) = t.split_once(" Interface PFC watchdog:") {
            port = Some(normalize_port(intf));
            prio = None;
            if state.contains("Disabled") {
                disabled.push(normalize_port(intf));
            }
            continue;
        }
        let body = t.trim_matches('|').trim();
        if let Some(g) = body.strip_prefix("QOS GROUP ") {
            // `3 [Shutdown] PFC [YES] PFC-COS [3]`: the CoS is the PFC priority.
            let cos = g
                .split("PFC-COS [")
                .nth(1)
                .and_then(|s| s.split(']').next());
            prio = cos.map(str::to_string);
            if let (Some(port), Some(pr)) = (&port, &prio) {
                p.push(Sample::gauge(
                    SW_PFC_WATCHDOG_QUEUE_SHUT,
                    &[("port", port), ("priority", pr), ("switch", switch)],
                    if g.contains("[Shutdown]") { 1.0 } else { 0.0 },
                ));
            }
            continue;
        }
        let Some((k, v)) = body.split_once('|') else {
            if !known_nxos_line(body) {
                p.unknown(t);
            }
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        let name = match k {
            "Shutdown" => SW_PFC_WATCHDOG_STORMS,
            "Restored" => SW_PFC_WATCHDOG_RESTORED,
            "Total pkts dropped" => SW_PFC_WATCHDOG_DROPPED,
            _ => continue, // drained, aggregate and ingress rows: known, not kept
        };
        match (&port, &prio, count(v)) {
            (Some(port), Some(pr), Some(n)) => {
                let mut l = vec![
                    ("port", port.as_str()),
                    ("priority", pr),
                    ("switch", switch),
                ];
                if name == SW_PFC_WATCHDOG_DROPPED {
                    l.push(("direction", "tx"));
                }
                p.push(Sample::counter(name, &l, n));
            }
            _ => p.unknown(t),
        }
    }
    if !disabled.is_empty() {
        p.note(format!(
            "PFC watchdog disabled on {} (pfc-watchdog interval / priority-flow-control watch-dog-interval on)",
            disabled.join(", ")
        ));
    } else if p.samples.is_empty() && p.unknown_lines == 0 {
        p.note("PFC watchdog: no no-drop queue is watched");
    }
    p
}

fn known_nxos_line(t: &str) -> bool {
    t.starts_with("Disable-action")
        || t.starts_with("PFC watch-dog")
        || t.starts_with("Stats")
        || t.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stormed_queue_is_shut_and_na_is_missing() {
        let t = "      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP\n-----------  -----------  -------------------------  ------------  ------------  -----------------  -----------------\nEthernet0:3      stormed                        1/0       N/A/N/A       100/300              0/200              0/200\n";
        let p = parse_sonic(t, "s");
        assert_eq!(p.unknown_lines, 0, "{p:?}");
        let get = |n: &str| {
            p.samples
                .iter()
                .find(|s| s.key.name == n)
                .map(|s| s.value.as_f64())
        };
        assert_eq!(get(SW_PFC_WATCHDOG_QUEUE_SHUT), Some(1.0));
        assert_eq!(get(SW_PFC_WATCHDOG_STORMS), Some(1.0));
        let drops: Vec<_> = p
            .samples
            .iter()
            .filter(|s| s.key.name == SW_PFC_WATCHDOG_DROPPED)
            .collect();
        assert_eq!(drops.len(), 1, "tx N/A is missing, rx 300 is kept");
        assert_eq!(drops[0].key.label("direction"), Some("rx"));
    }

    #[test]
    fn watchdog_not_enabled_is_a_note() {
        let s = parse_sonic(
            "      QUEUE       STATUS    STORM DETECTED/RESTORED    TX OK/DROP    RX OK/DROP    TX LAST OK/DROP    RX LAST OK/DROP\n-----------  -----------  -------------------------  ------------  ------------  -----------------  -----------------\n",
            "s",
        );
        assert!(
            s.samples.is_empty() && s.notes[0].contains("not started"),
            "{s:?}"
        );
        let n = parse_nxos("Ethernet1/1 Interface PFC watchdog: [Disabled]\n", "n");
        assert!(n.notes[0].contains("disabled on Ethernet1/1"), "{n:?}");
    }
}
