//! NX-OS `show running-config ipqos`: how the switch classifies RoCE and marks its queue.
//! `class-map type qos` (`match dscp 26`, `match cos 3`) and `policy-map type qos` (`class X ;
//! set qos-group 3`) give each DSCP's qos-group; `policy-map type network-qos` (`class type
//! network-qos c-8q-nq3 ; pause pfc-cos 3`) carries a qos-group to the CoS PFC pauses; `policy-map
//! type queuing` (`class type queuing c-out-8q-q3 ; random-detect ... ecn`) says which queue
//! marks ECN; `system qos` and `interface` blocks say where each policy is attached
//! (`service-policy type qos input P`). Block keywords are read, not indentation: configs pasted
//! into notes often lose it.

use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::switch::common::is_prompt_or_echo;
use crate::parse::switch::normalize_port;
use std::collections::BTreeMap;

#[derive(Default)]
struct ClassMap {
    dscp: Vec<u8>,
    cos: bool,
}

#[derive(Default)]
struct QosClass {
    name: String,
    group: Option<u8>,
}

#[derive(Default)]
struct QueueClass {
    group: Option<u8>,
    ecn: bool,
    min_bytes: Option<f64>,
}

#[derive(Default)]
struct Binding {
    qos: Option<String>,
    queuing: Option<String>,
}

#[derive(Default)]
struct Config {
    class_maps: BTreeMap<String, ClassMap>,
    qos: BTreeMap<String, Vec<QosClass>>,
    /// network-qos class-map → the qos-group it matches.
    nq_classes: BTreeMap<String, u8>,
    /// network-qos policy → (class, pfc-cos).
    nq: BTreeMap<String, Vec<(String, u8)>>,
    queuing: BTreeMap<String, Vec<QueueClass>>,
    system_nq: Option<String>,
    /// `all` (system qos) or a port → its policies.
    bindings: BTreeMap<String, Binding>,
}

enum Block {
    None,
    ClassQos(String),
    ClassNq(String),
    PolicyQos(String),
    PolicyNq(String, Option<String>),
    PolicyQueuing(String),
    System,
    Interface(String),
    Other,
}

/// `26`, `24-31`, `af31`, `cs3`, `ef` in a `match dscp` list.
fn dscp_values(list: &str) -> Option<Vec<u8>> {
    let mut v = Vec::new();
    for w in list.split([',', ' ']).filter(|w| !w.is_empty()) {
        let w = w.to_ascii_lowercase();
        if let Some((a, b)) = w.split_once('-') {
            let (a, b) = (a.parse::<u8>().ok()?, b.parse::<u8>().ok()?);
            if a > b || b > 63 {
                return None;
            }
            v.extend(a..=b);
            continue;
        }
        let d = match w.as_str() {
            "ef" => 46,
            "default" => 0,
            _ if w.starts_with("cs") => w[2..].parse::<u8>().ok().filter(|c| *c < 8)? * 8,
            _ if w.starts_with("af") && w.len() == 4 => {
                let (c, d) = (w[2..3].parse::<u8>().ok()?, w[3..4].parse::<u8>().ok()?);
                if !(1..=4).contains(&c) || !(1..=3).contains(&d) {
                    return None;
                }
                c * 8 + d * 2
            }
            _ => w.parse::<u8>().ok().filter(|d| *d < 64)?,
        };
        v.push(d);
    }
    Some(v)
}

/// The qos-group a built-in class name stands for: `c-8q-nq3`, `c-nq3`, `c-out-8q-q3`,
/// `c-out-q3`, `c-in-q3` → 3; `...-default` → 0.
fn builtin_group(class: &str) -> Option<u8> {
    let tail = class.rsplit('-').next()?;
    if tail == "default" {
        return class.starts_with("c-").then_some(0);
    }
    let digits = tail.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    class
        .starts_with("c-")
        .then(|| digits.parse::<u8>().ok())
        .flatten()
        .filter(|g| *g < 8)
}

/// `random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes ... ecn`.
fn min_threshold(line: &str) -> Option<f64> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let at = w.iter().position(|x| *x == "minimum-threshold")?;
    let n = w.get(at + 1)?.parse::<f64>().ok()?;
    let unit = match w.get(at + 2).copied().unwrap_or("bytes") {
        "kbytes" => 1024.0,
        "mbytes" => 1024.0 * 1024.0,
        "bytes" => 1.0,
        _ => return None, // `packets`, `ms`, `us`: not bytes
    };
    Some(n * unit)
}

/// The first words of lines inside the blocks read.
const INNER: [&str; 15] = [
    "match",
    "set",
    "class",
    "pause",
    "mtu",
    "random-detect",
    "bandwidth",
    "priority",
    "service-policy",
    "description",
    "shape",
    "queue-limit",
    "congestion-control",
    "police",
    "no",
];

pub fn parse(text: &str, switch: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut c = Config::default();
    let mut block = Block::None;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('!') || t.starts_with("```") || is_prompt_or_echo(t) {
            continue;
        }
        // `% Invalid command at '^' marker.`: the switch refused the command (no QoS read).
        if t.starts_with('%') {
            p.unknown(t);
            continue;
        }
        let w: Vec<&str> = t.split_whitespace().collect();
        let top = match w.as_slice() {
            ["class-map", "type", "qos", .., name] => Some(Block::ClassQos(name.to_string())),
            ["class-map", "type", "network-qos", .., name] => {
                Some(Block::ClassNq(name.to_string()))
            }
            ["class-map", ..] => Some(Block::Other),
            ["policy-map", "type", "qos", name] => Some(Block::PolicyQos(name.to_string())),
            ["policy-map", "type", "network-qos", name, ..] => {
                Some(Block::PolicyNq(name.to_string(), None))
            }
            ["policy-map", "type", "queuing", name, ..] => {
                Some(Block::PolicyQueuing(name.to_string()))
            }
            ["policy-map", ..] => Some(Block::Other),
            ["system", "qos"] => Some(Block::System),
            ["interface", name] => Some(Block::Interface(normalize_port(name))),
            ["version", ..] | ["hostname", ..] | ["feature", ..] => Some(Block::Other),
            ["hardware", ..] | ["qos", ..] | ["priority-flow-control", "watch-dog", ..] => {
                Some(Block::Other)
            }
            _ => None,
        };
        // Any other unindented line opens a section this read skips (`vlan 711`, `spanning-tree
        // mode mst` of a whole running-config); a policy line that lost its indentation does not.
        let top = top.or_else(|| {
            let inner = INNER.contains(&w.first().copied().unwrap_or(""));
            (!raw.starts_with([' ', '\t']) && !inner).then_some(Block::Other)
        });
        if let Some(b) = top {
            match &b {
                Block::ClassQos(n) => {
                    c.class_maps.entry(n.clone()).or_default();
                }
                Block::PolicyQos(n) => {
                    c.qos.entry(n.clone()).or_default();
                }
                Block::PolicyQueuing(n) => {
                    c.queuing.entry(n.clone()).or_default();
                }
                _ => {}
            }
            block = b;
            continue;
        }
        if !inner(&mut c, &mut block, &w, t) {
            p.unknown(t);
        }
    }
    emit(&mut p, &c, switch);
    p
}

/// A line inside the current block; false when it is not understood there.
fn inner(c: &mut Config, block: &mut Block, w: &[&str], t: &str) -> bool {
    match block {
        Block::ClassQos(name) => {
            let cm = c.class_maps.entry(name.clone()).or_default();
            match w {
                ["match", "dscp", ..] => match dscp_values(&w[2..].join(" ")) {
                    Some(v) => cm.dscp.extend(v),
                    None => return false,
                },
                ["match", "cos", ..] => cm.cos = true,
                ["match", ..] | ["description", ..] => {}
                _ => return false,
            }
        }
        Block::ClassNq(name) => match w {
            ["match", "qos-group", g] => match g.parse::<u8>() {
                Ok(g) => {
                    c.nq_classes.insert(name.clone(), g);
                }
                Err(_) => return false,
            },
            ["match", ..] | ["description", ..] => {}
            _ => return false,
        },
        Block::PolicyQos(name) => {
            let classes = c.qos.entry(name.clone()).or_default();
            match w {
                ["class", .., cls] => classes.push(QosClass {
                    name: cls.to_string(),
                    group: None,
                }),
                ["set", "qos-group", g] => match (classes.last_mut(), g.parse::<u8>()) {
                    (Some(cl), Ok(g)) => cl.group = Some(g),
                    _ => return false,
                },
                ["set", ..] | ["police", ..] | ["description", ..] => {}
                _ => return false,
            }
        }
        Block::PolicyNq(name, class) => match w {
            ["class", .., cls] => *class = Some(cls.to_string()),
            ["pause", "pfc-cos", cos, ..] => {
                let first = cos.split(',').next().and_then(|x| x.parse::<u8>().ok());
                match (class.as_ref(), first) {
                    (Some(cl), Some(cos)) => {
                        c.nq.entry(name.clone())
                            .or_default()
                            .push((cl.clone(), cos))
                    }
                    _ => return false,
                }
            }
            ["mtu", ..] | ["pause", ..] | ["set", ..] | ["congestion-control", ..] => {}
            _ => return false,
        },
        Block::PolicyQueuing(name) => {
            let classes = c.queuing.entry(name.clone()).or_default();
            match w {
                ["class", "type", "queuing", cls] => classes.push(QueueClass {
                    group: builtin_group(cls),
                    ..QueueClass::default()
                }),
                ["random-detect", ..] => {
                    let Some(cl) = classes.last_mut() else {
                        return false;
                    };
                    cl.ecn = w.contains(&"ecn");
                    cl.min_bytes = min_threshold(t);
                }
                ["bandwidth", ..]
                | ["priority", ..]
                | ["shape", ..]
                | ["queue-limit", ..]
                | ["pause", ..]
                | ["congestion-control", ..]
                | ["description", ..] => {}
                ["class", ..] => classes.push(QueueClass::default()),
                _ => return false,
            }
        }
        Block::System | Block::Interface(_) => {
            let key = match block {
                Block::Interface(port) => port.clone(),
                _ => "all".to_string(),
            };
            match w {
                ["service-policy", "type", "qos", "input", name, ..] => {
                    c.bindings.entry(key).or_default().qos = Some(name.to_string())
                }
                ["service-policy", "type", "queuing", "output", name, ..] => {
                    c.bindings.entry(key).or_default().queuing = Some(name.to_string())
                }
                ["service-policy", "type", "network-qos", name, ..] => {
                    c.system_nq = Some(name.to_string())
                }
                // The interface's other settings (PFC mode, MTU, description) are read elsewhere.
                _ if matches!(block, Block::Interface(_)) => {}
                ["service-policy", ..] => {}
                _ => return false,
            }
        }
        Block::Other => {}
        Block::None => return false,
    }
    true
}

/// qos-group → the CoS its network-qos class pauses (the system's network-qos policy, else the
/// only one configured); a group no class pauses keeps its number.
fn cos_of(c: &Config, group: u8) -> u8 {
    let policy = c
        .system_nq
        .as_ref()
        .and_then(|n| c.nq.get(n))
        .or_else(|| (c.nq.len() == 1).then(|| c.nq.values().next()).flatten());
    policy
        .into_iter()
        .flatten()
        .find(|(class, _)| {
            c.nq_classes
                .get(class)
                .copied()
                .or_else(|| builtin_group(class))
                == Some(group)
        })
        .map_or(group, |(_, cos)| *cos)
}

fn emit(p: &mut Parsed, c: &Config, switch: &str) {
    // Each qos policy that classifies by DSCP: every DSCP's priority (first matching class wins;
    // the rest falls to class-default, qos-group 0 unless it sets one).
    let mut by_dscp: BTreeMap<&str, bool> = BTreeMap::new();
    for (name, classes) in &c.qos {
        let classify = |d: u8| {
            classes.iter().find(|cl| {
                c.class_maps
                    .get(&cl.name)
                    .is_some_and(|m| m.dscp.contains(&d))
            })
        };
        let dscp = (0..64).any(|d| classify(d).is_some());
        by_dscp.insert(name, dscp);
        if !dscp {
            continue;
        }
        let default = classes
            .iter()
            .find(|cl| cl.name == "class-default")
            .and_then(|cl| cl.group)
            .unwrap_or(0);
        for d in 0..64u8 {
            let group = classify(d).map_or(default, |cl| cl.group.unwrap_or(0));
            p.push(Sample::gauge(
                SW_QOS_DSCP_PRIORITY,
                &[("dscp", &d.to_string()), ("map", name), ("switch", switch)],
                f64::from(cos_of(c, group)),
            ));
        }
    }
    for (port, b) in &c.bindings {
        if let Some(q) = &b.qos {
            match by_dscp.get(q.as_str()) {
                Some(dscp) => {
                    p.push(Sample::gauge(
                        SW_QOS_DSCP_MAP,
                        &[("map", q), ("port", port), ("switch", switch)],
                        1.0,
                    ));
                    p.push(Sample::gauge(
                        SW_QOS_TRUST_DSCP,
                        &[("port", port), ("switch", switch)],
                        if *dscp { 1.0 } else { 0.0 },
                    ));
                }
                None => p.note(format!(
                    "{port}: qos policy {q} is not in this configuration"
                )),
            }
        }
        if let Some(q) = &b.queuing {
            let Some(classes) = c.queuing.get(q) else {
                p.note(format!(
                    "{port}: queuing policy {q} is not in this configuration"
                ));
                continue;
            };
            for cl in classes {
                let Some(g) = cl.group else { continue };
                let prio = cos_of(c, g).to_string();
                let l = [
                    ("port", port.as_str()),
                    ("priority", &prio),
                    ("switch", switch),
                ];
                p.push(Sample::gauge(
                    SW_QOS_ECN_ENABLED,
                    &l,
                    if cl.ecn { 1.0 } else { 0.0 },
                ));
                if let (true, Some(m)) = (cl.ecn, cl.min_bytes) {
                    p.push(Sample::gauge(SW_QOS_ECN_MIN_BYTES, &l, m));
                }
            }
        }
    }
    if c.bindings.is_empty() && !(c.qos.is_empty() && c.queuing.is_empty()) {
        p.note(
            "no qos or queuing policy is attached (no `system qos` or interface `service-policy`)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        p.find(name, labels).map(|v| v.as_f64())
    }

    #[test]
    fn dscp_names_and_ranges() {
        assert_eq!(dscp_values("af31"), Some(vec![26]));
        assert_eq!(dscp_values("cs3 ef 24-25"), Some(vec![24, 46, 24, 25]));
        assert_eq!(dscp_values("af51"), None);
        assert_eq!(dscp_values("64"), None);
        assert_eq!(builtin_group("c-out-8q-q3"), Some(3));
        assert_eq!(builtin_group("c-8q-nq-default"), Some(0));
        assert_eq!(builtin_group("ROCE"), None);
    }

    #[test]
    fn a_qos_group_is_carried_to_the_cos_its_class_pauses() {
        let cfg = "class-map type qos match-all ROCE\n match dscp 26\npolicy-map type qos IN\n class ROCE\n  set qos-group 2\nclass-map type network-qos NQ2\n match qos-group 2\npolicy-map type network-qos NQ\n class type network-qos NQ2\n  pause pfc-cos 3\npolicy-map type queuing OUT\n class type queuing c-out-8q-q2\n  random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn\nsystem qos\n service-policy type network-qos NQ\n service-policy type queuing output OUT\ninterface Ethernet1/5\n service-policy type qos input IN\n";
        let p = parse(cfg, "sw");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let sw = ("switch", "sw");
        assert_eq!(
            value(
                &p,
                SW_QOS_DSCP_PRIORITY,
                &[sw, ("map", "IN"), ("dscp", "26")]
            ),
            Some(3.0)
        );
        assert_eq!(
            value(
                &p,
                SW_QOS_DSCP_PRIORITY,
                &[sw, ("map", "IN"), ("dscp", "46")]
            ),
            Some(0.0)
        );
        assert_eq!(
            value(&p, SW_QOS_TRUST_DSCP, &[sw, ("port", "Ethernet1/5")]),
            Some(1.0)
        );
        assert_eq!(
            value(
                &p,
                SW_QOS_ECN_ENABLED,
                &[sw, ("port", "all"), ("priority", "3")]
            ),
            Some(1.0)
        );
        assert_eq!(
            value(
                &p,
                SW_QOS_ECN_MIN_BYTES,
                &[sw, ("port", "all"), ("priority", "3")]
            ),
            Some(150.0 * 1024.0)
        );
    }

    #[test]
    fn garbage_is_counted_never_a_panic() {
        for t in [
            "",
            "class-map type qos\n match dscp zz",
            "policy-map type qos P\n set qos-group 3",
            "policy-map type queuing Q\n random-detect ecn",
            "interface\n",
            "system qos\n bogus",
        ] {
            let _ = parse(t, "sw");
        }
        assert!(parse("system qos\n bogus line", "sw").unknown_lines > 0);
    }
}
