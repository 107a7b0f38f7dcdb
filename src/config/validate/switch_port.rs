//! Which switch a port name means. A node's `switch_port` may name its switch
//! (`leaf2:Ethernet1/1/2`); a bare port name means the one switch that lists it, and a bare name
//! two switches list is a problem, never a silent first match (leaves share port names).

use super::super::raw::{RawLink, RawSimulation};
use super::super::{Link, Node, Simulation, Switch, SwitchPort};
use super::Problems;
use crate::parse::switch::normalize_port;

/// `leaf2:Ethernet1/1/2` → (Some("leaf2"), "Ethernet1/1/2") when `leaf2` is a configured switch;
/// anything else is a bare port name (a port name may hold a colon itself).
pub(super) fn split(text: &str, switches: &[Switch]) -> (Option<String>, String) {
    match text.split_once(':') {
        Some((sw, port)) if switches.iter().any(|s| s.name == sw) => {
            (Some(sw.to_string()), normalize_port(port))
        }
        _ => (None, normalize_port(text)),
    }
}

/// The switch `port` is on: `named` if given (checked to list it), else the one switch listing it.
/// `Err` says why not, for the key at `path`.
fn resolve(switches: &[Switch], named: Option<&str>, port: &str) -> Result<Option<String>, String> {
    if let Some(sw) = named {
        let listed = switches
            .iter()
            .find(|s| s.name == sw)
            .is_none_or(|s| s.ports.is_empty() || s.ports.iter().any(|p| p == port));
        return if listed {
            Ok(Some(sw.to_string()))
        } else {
            Err(format!("\"{port}\" is not in {sw}'s ports"))
        };
    }
    let on: Vec<&str> = switches
        .iter()
        .filter(|s| s.ports.iter().any(|p| p == port))
        .map(|s| s.name.as_str())
        .collect();
    match on.as_slice() {
        [one] => Ok(Some(one.to_string())),
        [] if switches.iter().all(|s| s.ports.is_empty()) => {
            // Nothing lists ports: the only switch, if there is one.
            Ok(match switches {
                [only] => Some(only.name.clone()),
                _ => None,
            })
        }
        [] => Err(format!("\"{port}\" is not in any switch's ports")),
        many => Err(format!(
            "\"{port}\" is a port of {}: name the switch, as switch_port = \"{}:{port}\"",
            many.join(" and "),
            many[0]
        )),
    }
}

/// Give every node with a `switch_port` its switch, or a problem saying why it has none.
pub(super) fn nodes(p: &mut Problems, switches: &[Switch], nodes: &mut [Node]) {
    for n in nodes {
        let Some(port) = n.switch_port.clone() else {
            continue;
        };
        match resolve(switches, n.switch.as_deref(), &port) {
            Ok(sw) => n.switch = sw,
            Err(e) => p.add(&format!("node \"{}\".switch_port", n.name), e),
        }
    }
}

/// A `[simulation]` port (`culprit_port`, `congested_ports`): a port of a configured switch.
fn sim_port(p: &mut Problems, switches: &[Switch], key: &str, text: &str) -> Option<SwitchPort> {
    let (named, port) = split(text, switches);
    match resolve(switches, named.as_deref(), &port) {
        Ok(Some(switch)) => Some(SwitchPort { switch, port }),
        Ok(None) => {
            p.add(
                key,
                format!("\"{text}\" is not a port of a configured switch"),
            );
            None
        }
        Err(e) => {
            p.add(key, e);
            None
        }
    }
}

pub(super) fn simulation(p: &mut Problems, switches: &[Switch], raw: &RawSimulation) -> Simulation {
    let culprit_port = raw
        .culprit_port
        .as_deref()
        .and_then(|t| sim_port(p, switches, "simulation.culprit_port", t));
    let congested_ports = (raw.congested_ports.iter().flatten())
        .filter_map(|t| sim_port(p, switches, "simulation.congested_ports", t))
        .collect();
    let rate_scale = raw.rate_scale.unwrap_or(1.0);
    if !(rate_scale > 0.0 && rate_scale <= 1000.0) {
        p.add(
            "simulation.rate_scale",
            format!("{rate_scale} is not a share of the lab's rates (0 < scale ≤ 1000)"),
        );
    }
    Simulation {
        culprit_port,
        congested_ports,
        rate_scale,
        scenario: Default::default(),
    }
}

/// The `[[link]]` entries: each end `switch:port` of a configured switch (a link is between two
/// switches, so the switch is always named), the two ends different, and no port on two links.
pub(super) fn links(p: &mut Problems, switches: &[Switch], raw: &[(usize, RawLink)]) -> Vec<Link> {
    let mut out: Vec<Link> = Vec::new();
    for (i, r) in raw {
        let mut end = |k: &str, v: &Option<String>| -> Option<SwitchPort> {
            let key = format!("link[{i}].{k}");
            let Some(text) = v.as_deref() else {
                p.add(&key, "required: a switch port, as \"leaf1:Ethernet1/49\"");
                return None;
            };
            let (named, port) = split(text, switches);
            let Some(sw) = named else {
                p.add(
                    &key,
                    format!(
                        "\"{text}\" does not name a configured switch: write it as \"leaf1:{port}\""
                    ),
                );
                return None;
            };
            match resolve(switches, Some(&sw), &port) {
                Ok(_) => Some(SwitchPort { switch: sw, port }),
                Err(e) => {
                    p.add(&key, e);
                    None
                }
            }
        };
        let (a, b) = (end("a", &r.a), end("b", &r.b));
        let (Some(a), Some(b)) = (a, b) else { continue };
        if a.switch == b.switch {
            p.add(
                &format!("link[{i}]"),
                format!("both ends are on {}: a link joins two switches", a.switch),
            );
            continue;
        }
        let taken = |e: &SwitchPort| out.iter().any(|l| l.a == *e || l.b == *e);
        if let Some(e) = [&a, &b].into_iter().find(|e| taken(e)) {
            p.add(
                &format!("link[{i}]"),
                format!(
                    "{}:{} is already an end of another [[link]]",
                    e.switch, e.port
                ),
            );
            continue;
        }
        out.push(Link { a, b });
    }
    out
}
