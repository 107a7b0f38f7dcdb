//! Arista EOS `show running-config`, read for the lossless settings: the DSCP → traffic-class map
//! (`qos map dscp 26 to traffic-class 3` over EOS's default map), each port's trust (`qos trust
//! dscp|cos`; a routed port, `no switchport`, trusts DSCP by default, a switched one CoS), its PFC
//! (`priority-flow-control on`, `priority-flow-control priority 3 no-drop`) and ECN per transmit
//! queue (`tx-queue 3` / `uc-tx-queue 3` with `random-detect ecn minimum-threshold ...`), on the
//! interface or in the `qos profile` it names (`service-profile P`; the interface's own lines win).
//! The running-config omits defaults, so a port without PFC lines has PFC off. A port with a
//! `service-policy type qos input` is classified by that policy-map: said, not judged. A channel member
//! takes its port-channel's settings and is skipped. The traffic class is the PFC priority.

use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::switch::common::is_prompt_or_echo;
use crate::parse::switch::normalize_port;
use std::collections::BTreeMap;

/// EOS's default DSCP → traffic-class map (the same on its platform families): DSCP 0-7 → 1,
/// 8-15 → 0, then DSCP/8.
fn default_tc(dscp: u8) -> u8 {
    match dscp / 8 {
        0 => 1,
        1 => 0,
        n => n,
    }
}

#[derive(Default, Clone)]
struct Qos {
    trust_dscp: Option<bool>,
    pfc_on: Option<bool>,
    no_drop: Vec<u8>,
    /// tx-queue → (ECN marking, minimum threshold in bytes).
    queues: BTreeMap<u8, (bool, Option<f64>)>,
}

#[derive(Default)]
struct Intf {
    qos: Qos,
    routed: bool,
    member: bool,
    /// A `policy-map type quality-of-service` attached: it classifies, not the DSCP map.
    policy: Option<String>,
    profile: Option<String>,
}

enum Block {
    None,
    Profile(String),
    Interface(String),
    Other,
}

/// `random-detect ecn minimum-threshold 256 kbytes ...` (segments are cells, not bytes: unknown).
fn min_bytes(w: &[&str]) -> Option<f64> {
    let at = w.iter().position(|x| *x == "minimum-threshold")?;
    let n = w.get(at + 1)?.parse::<f64>().ok()?;
    match w.get(at + 2).copied()? {
        "bytes" => Some(n),
        "kbytes" => Some(n * 1024.0),
        "mbytes" => Some(n * 1024.0 * 1024.0),
        _ => None,
    }
}

/// A line of a port's or profile's QoS settings; false when it is not one.
fn qos_line(q: &mut Qos, queue: &mut Option<u8>, w: &[&str]) -> bool {
    match w {
        ["qos", "trust", "dscp"] => q.trust_dscp = Some(true),
        ["qos", "trust", "cos"] => q.trust_dscp = Some(false),
        ["no", "qos", "trust"] => q.trust_dscp = None,
        // A multicast queue's settings are not the RoCE (unicast) queue's.
        ["mc-tx-queue", _] => *queue = None,
        ["priority-flow-control", "priority", _, "drop"] => {}
        ["priority-flow-control", "on"] | ["priority-flow-control", "mode", "on"] => {
            q.pfc_on = Some(true)
        }
        ["no", "priority-flow-control", ..] => q.pfc_on = Some(false),
        ["priority-flow-control", "priority", p, "no-drop"] => match p.parse::<u8>() {
            Ok(p) if p < 8 => q.no_drop.push(p),
            _ => return false,
        },
        ["tx-queue" | "uc-tx-queue", n] => match n.parse::<u8>() {
            Ok(n) if n < 8 => {
                *queue = Some(n);
                q.queues.entry(n).or_insert((false, None));
            }
            _ => return false,
        },
        ["random-detect", "ecn", "minimum-threshold", ..] => {
            let Some(n) = *queue else { return false };
            q.queues.insert(n, (true, min_bytes(w)));
        }
        _ => return false,
    }
    true
}

pub fn parse(text: &str, switch: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut tc: [u8; 64] = std::array::from_fn(|d| default_tc(d as u8));
    let mut profiles: BTreeMap<String, Qos> = BTreeMap::new();
    let mut intfs: BTreeMap<String, Intf> = BTreeMap::new();
    let mut block = Block::None;
    let mut queue: Option<u8> = None;
    let mut seen = false;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('!') || is_prompt_or_echo(t) {
            continue;
        }
        if t.starts_with('%') {
            p.unknown(t);
            continue;
        }
        let w: Vec<&str> = t.split_whitespace().collect();
        if !raw.starts_with([' ', '\t']) {
            queue = None;
            block = match w.as_slice() {
                ["qos", "profile", name] => Block::Profile(name.to_string()),
                ["interface", name] => Block::Interface(normalize_port(name)),
                ["qos", "map", "dscp", rest @ ..] => {
                    seen = true;
                    let to = rest.iter().position(|x| *x == "to");
                    match (to, to.and_then(|i| rest.get(i + 2))) {
                        (Some(i), Some(v)) if rest.get(i + 1) == Some(&"traffic-class") => {
                            match v.parse::<u8>() {
                                Ok(v) => {
                                    for d in &rest[..i] {
                                        match d.parse::<usize>() {
                                            Ok(d) if d < 64 => tc[d] = v,
                                            _ => p.unknown(t),
                                        }
                                    }
                                }
                                Err(_) => p.unknown(t),
                            }
                        }
                        _ => {} // `qos map dscp ... to ...` of another kind
                    }
                    Block::Other
                }
                ["end"] => Block::Other,
                _ => Block::Other,
            };
            continue;
        }
        match &block {
            Block::Profile(name) => {
                seen = true;
                let q = profiles.entry(name.clone()).or_default();
                qos_line(q, &mut queue, &w);
            }
            Block::Interface(name) => {
                let i = intfs.entry(name.clone()).or_default();
                if qos_line(&mut i.qos, &mut queue, &w) {
                    seen = true;
                    continue;
                }
                match w.as_slice() {
                    ["no", "switchport"] => i.routed = true,
                    ["channel-group", ..] => i.member = true,
                    ["service-profile", name] => i.profile = Some(name.to_string()),
                    ["service-policy", "type", "qos", "input", name] => {
                        i.policy = Some(name.to_string())
                    }
                    _ => {}
                }
            }
            Block::None | Block::Other => {}
        }
    }
    if !seen && intfs.is_empty() {
        if let Some(l) = text.lines().map(str::trim).find(|l| !l.is_empty()) {
            p.unknown(l);
        }
        return p;
    }
    for (d, v) in tc.iter().enumerate() {
        p.push(Sample::gauge(
            SW_QOS_DSCP_PRIORITY,
            &[
                ("dscp", &d.to_string()),
                ("map", "global"),
                ("switch", switch),
            ],
            f64::from(*v),
        ));
    }
    for (port, i) in &intfs {
        let lossless_port = port.starts_with("Ethernet") || port.starts_with("port-channel");
        if i.member || !lossless_port {
            continue;
        }
        let prof = i.profile.as_ref().and_then(|n| profiles.get(n));
        if let (Some(n), None) = (&i.profile, prof) {
            p.note(format!(
                "{port}: service-profile {n} is not in this configuration"
            ));
        }
        let base = prof.cloned().unwrap_or_default();
        let trust = i.qos.trust_dscp.or(base.trust_dscp).unwrap_or(i.routed);
        let l = [("port", port.as_str()), ("switch", switch)];
        if let Some(pm) = &i.policy {
            // Its classes (ACLs, set traffic-class) decide the class: not proven either way.
            p.note(format!(
                "{port}: policy-map {pm} classifies its traffic (its DSCP classification is not read)"
            ));
        } else {
            p.push(Sample::gauge(
                SW_QOS_TRUST_DSCP,
                &l,
                if trust { 1.0 } else { 0.0 },
            ));
        }
        if trust && i.policy.is_none() {
            p.push(Sample::gauge(
                SW_QOS_DSCP_MAP,
                &[("map", "global"), ("port", port), ("switch", switch)],
                1.0,
            ));
        }
        let pfc_on = i.qos.pfc_on.or(base.pfc_on).unwrap_or(false);
        let no_drop = if i.qos.no_drop.is_empty() {
            &base.no_drop
        } else {
            &i.qos.no_drop
        };
        for prio in 0..8u8 {
            let on = pfc_on && no_drop.contains(&prio);
            p.push(Sample::gauge(
                SW_PFC_ENABLED,
                &[
                    ("port", port),
                    ("priority", &prio.to_string()),
                    ("switch", switch),
                ],
                if on { 1.0 } else { 0.0 },
            ));
        }
        // The interface's own queue lines win where they configure ECN; one that only turns on
        // its counters (`random-detect ecn count`) leaves the profile's marking as it is.
        let mut queues = base.queues.clone();
        for (k, v) in &i.qos.queues {
            if v.0 || !queues.contains_key(k) {
                queues.insert(*k, *v);
            }
        }
        for (q, (ecn, min)) in queues {
            let pr = q.to_string();
            let l = [
                ("port", port.as_str()),
                ("priority", &pr),
                ("switch", switch),
            ];
            p.push(Sample::gauge(
                SW_QOS_ECN_ENABLED,
                &l,
                if ecn { 1.0 } else { 0.0 },
            ));
            if let (true, Some(m)) = (ecn, min) {
                p.push(Sample::gauge(SW_QOS_ECN_MIN_BYTES, &l, m));
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        p.find(name, labels).map(|v| v.as_f64())
    }

    #[test]
    fn a_profile_gives_pfc_and_ecn_and_the_interface_its_trust() {
        let cfg = "qos map dscp 26 to traffic-class 3\n!\nqos profile ROCE\n   priority-flow-control on\n   priority-flow-control priority 3 no-drop\n   !\n   uc-tx-queue 3\n      random-detect ecn minimum-threshold 256 kbytes maximum-threshold 512 kbytes\n!\ninterface Ethernet1\n   no switchport\n   service-profile ROCE\n!\ninterface Ethernet2\n   switchport\n   service-profile ROCE\n!\ninterface Ethernet3\n   channel-group 3 mode active\n";
        let p = parse(cfg, "sw");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let sw = ("switch", "sw");
        assert_eq!(
            value(&p, SW_QOS_DSCP_PRIORITY, &[sw, ("dscp", "26")]),
            Some(3.0)
        );
        assert_eq!(
            value(&p, SW_QOS_DSCP_PRIORITY, &[sw, ("dscp", "0")]),
            Some(1.0)
        );
        assert_eq!(
            value(&p, SW_QOS_TRUST_DSCP, &[sw, ("port", "Ethernet1")]),
            Some(1.0)
        );
        assert_eq!(
            value(&p, SW_QOS_TRUST_DSCP, &[sw, ("port", "Ethernet2")]),
            Some(0.0)
        );
        let e1 = ("port", "Ethernet1");
        assert_eq!(
            value(&p, SW_PFC_ENABLED, &[sw, e1, ("priority", "3")]),
            Some(1.0)
        );
        assert_eq!(
            value(&p, SW_PFC_ENABLED, &[sw, e1, ("priority", "4")]),
            Some(0.0)
        );
        assert_eq!(
            value(&p, SW_QOS_ECN_ENABLED, &[sw, e1, ("priority", "3")]),
            Some(1.0)
        );
        assert_eq!(
            value(&p, SW_QOS_ECN_MIN_BYTES, &[sw, e1, ("priority", "3")]),
            Some(262144.0)
        );
        assert!(value(&p, SW_QOS_TRUST_DSCP, &[sw, ("port", "Ethernet3")]).is_none());
    }

    #[test]
    fn garbage_is_counted_never_a_panic() {
        for t in [
            "",
            "qos map dscp 99 to traffic-class 3",
            "interface\n   random-detect ecn minimum-threshold",
            "qos profile\n   tx-queue 9",
            "% Invalid input",
        ] {
            let _ = parse(t, "sw");
        }
        assert!(parse("% Invalid input", "sw").unknown_lines > 0);
    }
}
