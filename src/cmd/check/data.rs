//! "Does this source give its tabs what they need?": the series each kind of source must return,
//! and for each one missing, its cause (from the poll's notes) and the fix. A source that answers
//! but returns nothing useful is a failure: its tab would wait forever.

use super::advice;
use crate::collect::source::{Source, SourceKind};
use crate::collect::transport::Request;
use crate::metrics::{Store, names};
use crate::parse::ParseKind;

/// Data a source should have returned and did not.
#[derive(Debug)]
pub struct Missing {
    pub what: String,
    pub cause: String,
    pub fix: String,
}

/// Whether this source returned a series named `prefix…` whose labels include `labels`.
fn has(store: &Store, src: &Source, prefix: &str, labels: &[(&str, &str)]) -> bool {
    store.all().any(|(_, s)| {
        s.source == src.id && s.key.name.starts_with(prefix) && s.key.has_labels(labels)
    })
}

/// The poll's note about one request kind ("ethtool: command failed ...", "hw-counters: empty
/// output"), if any.
fn note<'a>(store: &'a Store, src: &Source, kind: ParseKind) -> Option<&'a str> {
    let prefix = format!("{}: ", kind.name());
    store
        .source(src.id)?
        .notes
        .iter()
        .find(|n| n.starts_with(&prefix))
        .map(String::as_str)
}

/// Every missing kind of data of a source that answered.
pub fn missing(src: &Source, store: &Store) -> Vec<Missing> {
    match src.kind {
        SourceKind::Node => node(src, store),
        SourceKind::Switch => switch(src, store),
        SourceKind::Log => log(src, store),
        SourceKind::Ping => ping(src, store),
        // LLDP, host QoS and the watchdog are judged by the lossless-path proof (app::lossless),
        // which says what it could not read.
        SourceKind::Topology => Vec::new(),
        SourceKind::Prometheus => fleet(src, store),
    }
}

fn fleet(src: &Source, store: &Store) -> Vec<Missing> {
    let mut out = Vec::new();
    for (prefix, what) in [
        ("rocetop_rdma_", "RDMA counters (ECN/CNP tab)"),
        ("rocetop_nic_pfc_", "host PFC pause counters (PFC tab)"),
    ] {
        if !has(store, src, prefix, &[]) {
            out.push(Missing {
                what: what.into(),
                cause: format!("{} holds no series of this kind", src.name),
                fix: crate::parse::prom_api::NOTHING_TO_READ.into(),
            });
        }
    }
    out
}

fn node(src: &Source, store: &Store) -> Vec<Missing> {
    let mut out = Vec::new();
    let (root, devices, configured) = match src.probes.first().map(|p| &p.request) {
        Some(Request::SysfsDump {
            root,
            devices,
            netdevs,
        }) => (root.as_str(), devices.clone(), netdevs.clone()),
        _ => ("/sys", Vec::new(), Vec::new()),
    };
    if !has(store, src, "rocetop_rdma_", &[]) {
        let devs = if devices.is_empty() {
            "*".to_string()
        } else {
            devices.join(",")
        };
        out.push(Missing {
            what: "RDMA counters (ECN/CNP tab)".into(),
            cause: format!(
                "no RDMA device: nothing readable under {root}/class/infiniband/{devs}/ports/*/hw_counters"
            ),
            fix: format!(
                "check sysfs_root (now \"{root}\") and devices; is the RDMA driver (mlx5_ib) loaded on {}?",
                src.name
            ),
        });
    }
    let netdevs = match &src.discovery {
        Some(d) => d.netdevs(),
        None => configured,
    };
    if netdevs.is_empty() {
        out.push(Missing {
            what: "NIC counters (PFC tab)".into(),
            cause: "no netdev configured and none found under the RDMA devices' gid_attrs/ndevs"
                .into(),
            fix: "set netdevs = [\"<interface>\"] for this node".into(),
        });
    }
    for nd in &netdevs {
        if has(store, src, "rocetop_nic_", &[("netdev", nd)]) {
            continue;
        }
        let why = note(store, src, ParseKind::Ethtool)
            .unwrap_or("ethtool -S printed no counters")
            .to_string();
        out.push(Missing {
            what: format!("NIC counters of {nd} (PFC tab)"),
            fix: advice::for_ethtool(&src.name, nd, &why),
            cause: why,
        });
    }
    out
}

fn switch(src: &Source, store: &Store) -> Vec<Missing> {
    let wants = [
        ("rocetop_switch_queue_", "queue counters (Queues tab)"),
        ("rocetop_switch_pfc_", "PFC counters (PFC tab)"),
    ];
    let mut out = Vec::new();
    for (prefix, what) in wants {
        if has(store, src, prefix, &[]) {
            continue;
        }
        let notes: Vec<&str> = store
            .source(src.id)
            .map(|h| h.notes.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let unknown = store.source(src.id).map_or(0, |h| h.unknown_lines);
        let mut cause = if notes.is_empty() {
            "the answers held none".to_string()
        } else {
            notes.join("; ")
        };
        if unknown > 0 {
            cause.push_str(&format!("; {unknown} lines not understood"));
        }
        let cmds: Vec<String> = src
            .probes
            .iter()
            .filter_map(|p| match &p.request {
                Request::Cli(c) => Some(format!("`{c}` (rocetop parse {})", p.kind.name())),
                _ => None,
            })
            .collect();
        out.push(Missing {
            what: what.into(),
            cause,
            fix: format!(
                "check `os` and `ports`; run these on the switch and feed the output to rocetop parse: {}",
                cmds.join(", ")
            ),
        });
    }
    out
}

fn log(src: &Source, store: &Store) -> Vec<Missing> {
    if has(store, src, "rocetop_train_", &[]) {
        return Vec::new();
    }
    let (path, lines) = match src.probes.first().map(|p| &p.request) {
        Some(Request::Tail { path, lines }) => (path.as_str(), *lines),
        _ => ("?", 0),
    };
    vec![Missing {
        what: "training progress (Log tab charts)".into(),
        cause: format!(
            "none of the last {lines} lines of {path} is a step/loss line rocetop reads"
        ),
        fix: "check the [[log]] path, or set format_regex for this log's line format".into(),
    }]
}

fn ping(src: &Source, store: &Store) -> Vec<Missing> {
    if has(store, src, names::PING_RTT_SECONDS, &[("transport", "tcp")]) {
        return Vec::new();
    }
    vec![Missing {
        what: "round-trip times (Latency tab)".into(),
        cause: "the peer accepted the connection but answered no probe".into(),
        fix: "is the peer's `rocetop pingd` the same version, and its machine not overloaded?"
            .into(),
    }]
}
