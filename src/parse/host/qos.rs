//! A host NIC's lossless settings: `mlnx_qos -i <netdev>` (trust state, DSCP→priority map, PFC
//! per priority and its buffers, ETS classes), the DCQCN switches in sysfs
//! (`/sys/class/net/<if>/ecn/roce_np|roce_rp/enable/<prio>`, as `path:value` lines), the MTU, and
//! 802.3x pause from `ethtool -a`. All gauges: they are settings, not counters.

use super::prompt;
use crate::metrics::names::*;
use crate::metrics::{LabelName, Parsed, Sample};

/// The marker the host request prints where mlnx_qos is not installed (see transport.rs).
pub const NOT_INSTALLED: &str = "rocetop: mlnx_qos not installed";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    DscpMap,
    Pfc,
    Tc(u32),
}

/// Parse the host QoS request's output for node `node`; `netdev` labels what no echoed command names.
pub fn parse(text: &str, node: &str, netdev: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut dev = netdev.to_string();
    let mut section = Section::None;
    let mut pfc_prios: Vec<String> = Vec::new();
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(w) = prompt::command(t, "mlnx_qos").or_else(|| prompt::command(t, "ethtool")) {
            if let Some(i) = w.iter().position(|a| *a == "-i" || *a == "-a") {
                if let Some(d) = w.get(i + 1) {
                    dev = (*d).to_string();
                }
            }
            section = Section::None;
            continue;
        }
        if t == NOT_INSTALLED {
            p.note("mlnx_qos is not installed on this node (MLNX_OFED or mlnx-tools): host trust, DSCP map and PFC unknown");
            continue;
        }
        if let Some((path, val)) = sysfs_line(t) {
            knob(&mut p, path, val, node);
            continue;
        }
        if let Some(d) = t
            .strip_prefix("Pause parameters for ")
            .and_then(|s| s.strip_suffix(':'))
        {
            dev = d.to_string();
            continue;
        }
        if let Some((key, val)) = t.split_once(':') {
            let (key, val) = (key.trim(), val.trim());
            let on = match val {
                "on" => Some(1.0),
                "off" => Some(0.0),
                _ => None,
            };
            match (key, on) {
                ("RX", Some(v)) | ("TX", Some(v)) => {
                    let d = key.to_ascii_lowercase();
                    p.push(Sample::gauge(
                        NIC_FLOWCONTROL_ENABLED,
                        &labels(&dev, node, &[("direction", &d)]),
                        v,
                    ));
                    continue;
                }
                ("Autonegotiate", _) | ("RX negotiated", _) | ("TX negotiated", _) => continue,
                _ => {}
            }
            if key.contains("trust state") || key.contains("trust mode") {
                p.push(Sample::gauge(
                    NIC_QOS_TRUST_DSCP,
                    &labels(&dev, node, &[]),
                    if val == "dscp" { 1.0 } else { 0.0 },
                ));
                continue;
            }
        }
        if t.starts_with("dscp2prio mapping") {
            section = Section::DscpMap;
            continue;
        }
        if t.starts_with("PFC configuration") {
            section = Section::Pfc;
            continue;
        }
        if let Some(rest) = t.strip_prefix("Receive buffer size (bytes):") {
            buffers(&mut p, rest, &labels(&dev, node, &[]));
            continue;
        }
        if let Some(tc) = tc_line(t) {
            let tc_s = tc.0.to_string();
            match tc.1 {
                Some(bw) => p.push(Sample::gauge(
                    NIC_QOS_TC_BANDWIDTH_PERCENT,
                    &labels(&dev, node, &[("tc", &tc_s)]),
                    bw,
                )),
                None => p.push(Sample::gauge(
                    NIC_QOS_TC_STRICT,
                    &labels(&dev, node, &[("tc", &tc_s)]),
                    1.0,
                )),
            }
            section = Section::Tc(tc.0);
            continue;
        }
        if ["DCBX mode", "default priority", "Cable len"]
            .iter()
            .any(|k| t.starts_with(k))
        {
            continue;
        }
        let ok = match section {
            Section::DscpMap => dscp_line(&mut p, t, &labels(&dev, node, &[])),
            Section::Pfc => pfc_line(&mut p, t, &mut pfc_prios, &labels(&dev, node, &[])),
            Section::Tc(tc) => match t.strip_prefix("priority:") {
                Some(ps) => {
                    for pr in ps.split([',', ' ']).filter(|s| !s.is_empty()) {
                        p.push(Sample::gauge(
                            NIC_QOS_PRIORITY_TC,
                            &labels(&dev, node, &[("priority", pr)]),
                            f64::from(tc),
                        ));
                    }
                    true
                }
                None => false,
            },
            Section::None => false,
        };
        if !ok {
            p.unknown(t);
        }
    }
    p
}

fn labels<'a>(
    dev: &'a str,
    node: &'a str,
    extra: &[(LabelName, &'a str)],
) -> Vec<(LabelName, &'a str)> {
    let mut v = vec![("netdev", dev), ("node", node)];
    v.extend_from_slice(extra);
    v
}

/// `…/class/net/ens224/mtu:9000` or `…/ecn/roce_np/enable/3:1`.
fn sysfs_line(t: &str) -> Option<(&str, &str)> {
    let (path, val) = t.rsplit_once(':')?;
    path.contains("/class/net/").then_some((path, val.trim()))
}

fn knob(p: &mut Parsed, path: &str, val: &str, node: &str) {
    let Some(rest) = path.split("/class/net/").nth(1) else {
        return;
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let Ok(v) = val.parse::<f64>() else {
        p.unknown(path);
        return;
    };
    match parts.as_slice() {
        [dev, "mtu"] => p.push(Sample::gauge(
            NIC_MTU_BYTES,
            &[("netdev", dev), ("node", node)],
            v,
        )),
        [dev, "ecn", point, "enable", prio] => {
            let name = match *point {
                "roce_np" => NIC_QOS_DCQCN_NP_ENABLED,
                "roce_rp" => NIC_QOS_DCQCN_RP_ENABLED,
                _ => return p.unknown(path),
            };
            p.push(Sample::gauge(
                name,
                &[("netdev", dev), ("node", node), ("priority", prio)],
                v,
            ));
        }
        _ => p.unknown(path),
    }
}

/// `prio:3 dscp:31,30,29,28,27,26,25,24,`
fn dscp_line(p: &mut Parsed, t: &str, l: &[(LabelName, &str)]) -> bool {
    let mut w = t.split_whitespace();
    let (Some(pr), Some(ds)) = (
        w.next().and_then(|s| s.strip_prefix("prio:")),
        w.next().and_then(|s| s.strip_prefix("dscp:")),
    ) else {
        return false;
    };
    let Ok(prio) = pr.parse::<u8>() else {
        return false;
    };
    for d in ds.split(',').filter(|s| !s.is_empty()) {
        let Ok(d) = d.parse::<u8>() else {
            return false;
        };
        let d = d.to_string();
        let mut labels = l.to_vec();
        labels.push(("dscp", &d));
        p.push(Sample::gauge(
            NIC_QOS_DSCP_PRIORITY,
            &labels,
            f64::from(prio),
        ));
    }
    true
}

/// `priority 0 1 … 7`, then `enabled 0 0 0 1 …` and `buffer …` rows under it.
fn pfc_line(p: &mut Parsed, t: &str, prios: &mut Vec<String>, l: &[(LabelName, &str)]) -> bool {
    let mut w = t.split_whitespace();
    let head = w.next().unwrap_or("");
    let vals: Vec<&str> = w.collect();
    let name = match head {
        "priority" => {
            *prios = vals.iter().map(|s| s.to_string()).collect();
            return true;
        }
        "enabled" => NIC_QOS_PFC_ENABLED,
        "buffer" => NIC_QOS_PRIORITY_BUFFER,
        _ => return false,
    };
    if vals.len() != prios.len() {
        return false;
    }
    for (pr, v) in prios.iter().zip(vals) {
        let Ok(v) = v.parse::<f64>() else {
            return false;
        };
        let mut labels = l.to_vec();
        labels.push(("priority", pr));
        p.push(Sample::gauge(name, &labels, v));
    }
    true
}

/// `tc: 2 ratelimit: unlimited, tsa: ets, bw: 80%` → (2, Some(80)); `tsa: strict` → (4, None).
fn tc_line(t: &str) -> Option<(u32, Option<f64>)> {
    let rest = t.strip_prefix("tc:")?;
    let tc = rest.split_whitespace().next()?.parse().ok()?;
    let bw = rest
        .split("bw:")
        .nth(1)
        .and_then(|s| s.trim().trim_end_matches('%').parse().ok());
    Some((tc, bw))
}

/// `19872,220896,0,…,max_buffer_size=4151520`
fn buffers(p: &mut Parsed, rest: &str, l: &[(LabelName, &str)]) {
    for (i, b) in rest.split(',').map(str::trim).enumerate() {
        if let Some(m) = b.strip_prefix("max_buffer_size=") {
            if let Ok(v) = m.parse::<f64>() {
                let mut labels = l.to_vec();
                labels.push(("buffer", "max"));
                p.push(Sample::gauge(NIC_QOS_RX_BUFFER_BYTES, &labels, v));
            }
        } else if let Ok(v) = b.parse::<f64>() {
            let i = i.to_string();
            let mut labels = l.to_vec();
            labels.push(("buffer", &i));
            p.push(Sample::gauge(NIC_QOS_RX_BUFFER_BYTES, &labels, v));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn val(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        p.samples
            .iter()
            .find(|s| s.key.name == name && labels.iter().all(|(k, v)| s.key.label(k) == Some(v)))
            .map(|s| s.value.as_f64())
    }

    #[test]
    fn sysfs_knobs_mtu_and_pause_parameters() {
        let text = "/sys/class/net/ens224/mtu:9000\n/sys/class/net/ens224/ecn/roce_np/enable/3:1\n/sys/class/net/ens224/ecn/roce_rp/enable/3:0\nethtool -a ens224\nPause parameters for ens224:\nAutonegotiate:\toff\nRX:\t\ton\nTX:\t\toff\n";
        let p = parse(text, "n1", "");
        assert_eq!(p.unknown_lines, 0, "{p:?}");
        assert_eq!(
            val(&p, NIC_MTU_BYTES, &[("netdev", "ens224")]),
            Some(9000.0)
        );
        assert_eq!(
            val(&p, NIC_QOS_DCQCN_NP_ENABLED, &[("priority", "3")]),
            Some(1.0)
        );
        assert_eq!(
            val(&p, NIC_QOS_DCQCN_RP_ENABLED, &[("priority", "3")]),
            Some(0.0)
        );
        assert_eq!(
            val(&p, NIC_FLOWCONTROL_ENABLED, &[("direction", "rx")]),
            Some(1.0)
        );
        assert_eq!(
            val(&p, NIC_FLOWCONTROL_ENABLED, &[("direction", "tx")]),
            Some(0.0)
        );
    }

    #[test]
    fn not_installed_is_a_note() {
        let p = parse(
            "mlnx_qos -i ens224\nrocetop: mlnx_qos not installed\n",
            "n1",
            "",
        );
        assert!(p.samples.is_empty());
        assert_eq!(p.unknown_lines, 0);
        assert!(p.notes[0].contains("not installed"));
    }

    #[test]
    fn pcp_trust_and_a_short_enabled_row() {
        let p = parse(
            "Priority trust state: pcp\nPFC configuration:\n\tpriority    0   1\n\tenabled     0\n",
            "n1",
            "eth2",
        );
        assert_eq!(
            val(&p, NIC_QOS_TRUST_DSCP, &[("netdev", "eth2")]),
            Some(0.0)
        );
        assert_eq!(
            p.unknown_lines, 1,
            "a row shorter than the header is not guessed"
        );
    }
}
