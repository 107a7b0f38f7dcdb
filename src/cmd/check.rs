//! `rocetop check`: for every source, connect, authenticate, run its first harmless read, and say
//! OK or exactly what failed and how to fix it; then check the RoCE settings agree across layers.

use crate::collect::poll::poll_once;
use crate::collect::source::{Source, SourceKind};
use crate::config::Config;
use crate::metrics::query::label_values;
use crate::metrics::{Store, names};
use std::fmt::Write as _;
use std::sync::Arc;

pub struct Report {
    pub text: String,
    pub failures: usize,
}

/// The fix that goes with an error, in the words of the error.
fn advice(err: &str) -> &'static str {
    let e = err.to_ascii_lowercase();
    if e.contains("unknown host") {
        "verify the fingerprint, then add the key as the message says (or host_key_policy = \"accept-new\")"
    } else if e.contains("host key changed") || e.contains("changed") && e.contains("host key") {
        "the host's key differs from known_hosts: find out why before removing the old line"
    } else if e.contains("auth") {
        "load the key into ssh-agent (ssh-add KEY) or set identity_file; switches: password_env/password_command"
    } else if e.contains("refused") {
        "nothing listens there: is sshd running, and is the port right?"
    } else if e.contains("timed out") {
        "the host or network is slow or down: check reachability, or raise ssh.command_timeout"
    } else if e.contains("no ssh transport") || e.contains("not available") {
        "this source cannot be reached from this build or config"
    } else if e.contains("no such file") {
        "the path does not exist on that host: check [[log]] path or sysfs_root"
    } else {
        "see the message; rocetop parse KIND can show what the output looks like"
    }
}

fn summary(kind: SourceKind, store: &Store, src: &Source) -> String {
    let h = store.source(src.id);
    let series = store.all().filter(|(_, s)| s.source == src.id).count();
    let mut s = match kind {
        SourceKind::Node => {
            let devs = label_values(store, &names::rdma_counter("np_cnp_sent"), "device");
            let mine: Vec<&String> = devs
                .iter()
                .filter(|d| {
                    store
                        .select(
                            &names::rdma_counter("np_cnp_sent"),
                            &[("node", &src.name), ("device", d)],
                        )
                        .next()
                        .is_some()
                })
                .collect();
            format!(
                "{series} series; RDMA devices with DCQCN counters: {}",
                if mine.is_empty() {
                    "none".into()
                } else {
                    mine.iter()
                        .map(|d| d.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                }
            )
        }
        _ => format!("{series} series"),
    };
    if let Some(h) = h {
        if h.unknown_lines > 0 {
            let _ = write!(s, "; {} lines not understood", h.unknown_lines);
        }
        for n in &h.notes {
            let _ = write!(s, "; {n}");
        }
    }
    s
}

/// RoCE settings that must agree between switch and hosts.
fn consistency(cfg: &Config, store: &Store) -> Vec<String> {
    let mut out = Vec::new();
    // PFC priorities the switch has on, per port.
    for (_, s) in store.select(names::SW_PFC_ENABLED, &[]) {
        let (Some(port), Some(prio)) = (s.key.label("port"), s.key.label("priority")) else {
            continue;
        };
        let on = s.latest().is_some_and(|(_, v)| v.as_f64() > 0.5);
        if !on {
            continue;
        }
        for n in cfg.nodes_behind(port) {
            let seen = store
                .select(
                    names::NIC_PFC_RX_PAUSE,
                    &[("node", n.name.as_str()), ("priority", prio)],
                )
                .next()
                .is_some();
            if !seen
                && store
                    .source_by_name(&n.name)
                    .is_some_and(|(_, h)| h.up == Some(true))
            {
                out.push(format!(
                    "{port} has PFC on priority {prio}, but {} shows no rx_prio{prio}_pause counter (PFC off on the host NIC, or a VF)",
                    n.name
                ));
            }
        }
    }
    if let Some(want) = &cfg.alerts.flowcontrol {
        let want_on = want == "on";
        for (_, s) in store.select(names::SW_FLOWCONTROL_ENABLED, &[]) {
            let on = s.latest().is_some_and(|(_, v)| v.as_f64() > 0.5);
            if on != want_on {
                out.push(format!(
                    "{} {} 802.3x flowcontrol ({}) is {}, config expects {want}",
                    s.key.label("switch").unwrap_or("?"),
                    s.key.label("port").unwrap_or("?"),
                    s.key.label("direction").unwrap_or("?"),
                    if on { "on" } else { "off" }
                ));
            }
        }
    }
    for (_, s) in store.select(names::RDMA_HW_COUNTERS_LIFESPAN, &[]) {
        let lifespan = s.latest().map_or(0.0, |(_, v)| v.as_f64());
        if cfg.poll.interval.as_secs_f64() < lifespan {
            out.push(format!(
                "{} {}: poll.interval {:?} is shorter than the hw_counters lifespan {lifespan} s: rates would repeat",
                s.key.label("node").unwrap_or("?"),
                s.key.label("device").unwrap_or("?"),
                cfg.poll.interval
            ));
        }
    }
    out.sort();
    out.dedup();
    out
}

pub async fn run(cfg: &Config) -> Report {
    let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 8);
    let mut built = super::build_sources(cfg, &mut store, super::remote());
    // LLDP, host QoS and the PFC watchdog, for the lossless-path proof below.
    let topology = crate::collect::source::build_topology(cfg, &mut store, &built);
    built.extend(topology);
    let sources: Vec<Arc<Source>> = built.into_iter().map(Arc::new).collect();
    super::warm_up(cfg, &sources).await;
    let mut set = tokio::task::JoinSet::new();
    for s in &sources {
        let s = s.clone();
        set.spawn(async move { poll_once(&s).await });
    }
    while let Some(Ok(c)) = set.join_next().await {
        c.apply(&mut store);
    }
    let mut text = String::new();
    let mut failures = 0;
    let _ = writeln!(text, "{:<28} {:<7} {:<40} result", "source", "kind", "how");
    for s in &sources {
        let h = store.source(s.id);
        // A host that failed already says why; its topology reads failed the same way.
        let host_failed = |n: &str| {
            store
                .source_by_name(n)
                .is_some_and(|(_, h)| h.last_error.is_some())
        };
        if s.kind == SourceKind::Topology && host_failed(&s.ctx.name) {
            continue;
        }
        let kind = format!("{:?}", s.kind).to_lowercase();
        match h.and_then(|h| h.last_error.clone()) {
            None => {
                let _ = writeln!(
                    text,
                    "{:<28} {:<7} {:<40} OK: {}",
                    s.name,
                    kind,
                    s.transport.describe(),
                    summary(s.kind, &store, s)
                );
            }
            Some(e) => {
                failures += 1;
                let _ = writeln!(
                    text,
                    "{:<28} {:<7} {:<40} FAILED: {e}\n{:<77} fix: {}",
                    s.name,
                    kind,
                    s.transport.describe(),
                    "",
                    advice(&e)
                );
            }
        }
    }
    let issues = consistency(cfg, &store);
    let _ = writeln!(
        text,
        "\nRoCE settings: {}",
        if issues.is_empty() {
            "consistent".to_string()
        } else {
            format!("{} problem(s)", issues.len())
        }
    );
    for i in &issues {
        let _ = writeln!(text, "  - {i}");
    }
    // The lossless path, node netdev by switch port (app::lossless): a mismatch fails the check.
    let proof = crate::app::lossless::prove(cfg, &store, crate::app::lossless::DEFAULT_ROCE_DSCP);
    failures += proof.findings.len();
    text.push_str(&proof.render());
    for w in &cfg.warnings {
        let _ = writeln!(text, "warning: {w}");
    }
    Report { text, failures }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_matches_the_failure() {
        assert!(advice("connection refused by 127.0.0.1:22").contains("sshd running"));
        assert!(advice("auth failed: user versa (tried: agent)").contains("ssh-agent"));
        assert!(advice("timed out after 5 s").contains("command_timeout"));
        assert!(advice("host key: unknown host [127.0.0.1]:2222").contains("fingerprint"));
    }

    #[tokio::test]
    async fn the_demo_lab_checks_out_and_names_its_flowcontrol_glitch_only_when_it_happens() {
        let cfg = Config::reference();
        let r = run(&cfg).await;
        assert_eq!(r.failures, 0, "{}", r.text);
        assert!(r.text.contains("ubunturdma5"), "{}", r.text);
        assert!(r.text.contains("OK: "), "{}", r.text);
        assert!(r.text.contains("RoCE settings: consistent"), "{}", r.text);
    }
}
