//! `rocetop check`: for every source, connect, authenticate, run its reads once, and say OK only
//! when it returned the data its tabs need (`data`); otherwise what failed, why, and the fix
//! (`advice`). Then the RoCE settings across layers (`roce`), called consistent only when every
//! source gave its data. Exit status non-zero on any failure.

mod advice;
pub mod affinity;
mod data;
mod fabric;
pub mod roce;

use crate::collect::poll::poll_all;
use crate::collect::source::{Source, SourceKind};
use crate::config::Config;
use crate::metrics::query::label_values;
use crate::metrics::store::SourceId;
use crate::metrics::{Store, names};
use crate::safe::line as cell;
use futures::StreamExt;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

pub struct Report {
    pub text: String,
    /// Sources that failed or returned less than their tabs need.
    pub failures: usize,
    /// RoCE settings that disagree between layers.
    pub problems: usize,
}

impl Report {
    /// Every source gave its data and the layers agree: the exit status says so.
    pub fn ok(&self) -> bool {
        self.failures == 0 && self.problems == 0
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
                    mine.iter().map(|d| cell(d)).collect::<Vec<_>>().join(", ")
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
            let _ = write!(s, "; {}", cell(n));
        }
    }
    s
}

pub async fn run(cfg: &Config) -> Report {
    let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 8);
    // With LLDP, host QoS and the PFC watchdog (topology sources), for the lossless-path proof.
    let built = super::build_sources(cfg, &mut store, super::remote());
    let sources: Vec<Arc<Source>> = built.into_iter().map(Arc::new).collect();
    // check runs once: a connection that failed is reported as it failed, not re-tried within
    // a backoff window (which would add "retrying in N s" to a command that never retries).
    let refused = connect_all(cfg, &sources).await;
    let polled: Vec<Arc<Source>> = sources
        .iter()
        .filter(|s| !refused.contains_key(&s.id))
        .cloned()
        .collect();
    for c in poll_all(&polled).await {
        c.apply(&mut store);
    }
    // A node learns its netdevs from its first dump and a pinger needs a moment for its first
    // answers: poll once more what came back incomplete.
    let again: Vec<Arc<Source>> = polled
        .iter()
        .filter(|s| error_of(&store, s).is_none() && !data::missing(s, &store).is_empty())
        .cloned()
        .collect();
    if !again.is_empty() {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        for c in poll_all(&again).await {
            c.apply(&mut store);
        }
    }
    render(cfg, &sources, &store, &refused)
}

/// Connect every distinct transport once, `max_concurrent_connects` at a time; the sources
/// whose connection failed, with the error.
async fn connect_all(cfg: &Config, sources: &[Arc<Source>]) -> HashMap<SourceId, String> {
    let mut distinct: Vec<Arc<Source>> = Vec::new();
    for s in sources {
        if !distinct
            .iter()
            .any(|d| Arc::ptr_eq(&d.transport, &s.transport))
        {
            distinct.push(s.clone());
        }
    }
    let failed: Vec<(Arc<Source>, String)> = futures::stream::iter(distinct)
        .map(|s| async move {
            let r = s.transport.warm_up().await;
            r.err().map(|e| (s, e.to_string()))
        })
        .buffer_unordered(cfg.ssh.max_concurrent_connects.max(1))
        .filter_map(|x| async move { x })
        .collect()
        .await;
    let mut out = HashMap::new();
    for s in sources {
        if let Some((_, e)) = failed
            .iter()
            .find(|(f, _)| Arc::ptr_eq(&f.transport, &s.transport))
        {
            out.insert(s.id, e.clone());
        }
    }
    out
}

/// A message on one line, so each source's report stays under its name (a tab or control
/// character left in it shown escaped: a remote text cannot start a row of its own).
fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(cell)
        .collect::<Vec<_>>()
        .join(" | ")
}

fn error_of(store: &Store, s: &Source) -> Option<String> {
    store.source(s.id).and_then(|h| h.last_error.clone())
}

fn render(
    cfg: &Config,
    sources: &[Arc<Source>],
    store: &Store,
    refused: &HashMap<SourceId, String>,
) -> Report {
    let mut text = String::new();
    let mut failures = 0;
    let _ = writeln!(text, "{:<28} {:<7} {:<40} result", "source", "kind", "how");
    let fix_indent = "";
    // A host that failed already says why; its topology reads failed the same way.
    let host_failed = |n: &str| {
        store
            .source_by_name(n)
            .is_some_and(|(_, h)| h.last_error.is_some())
    };
    for s in sources {
        if s.kind == SourceKind::Topology
            && (host_failed(&s.ctx.name) || refused.contains_key(&s.id))
        {
            continue;
        }
        let kind = format!("{:?}", s.kind).to_lowercase();
        let head = format!(
            "{:<28} {:<7} {:<40}",
            cell(&s.name),
            kind,
            cell(&s.transport.describe())
        );
        let error = refused.get(&s.id).cloned().or_else(|| error_of(store, s));
        if s.kind == SourceKind::Topology {
            // No tab needs these rare reads: what they could not read, the lossless-path proof
            // below reports as not proven.
            if let Some(e) = error.as_deref().map(one_line) {
                let _ = writeln!(text, "{head} not read: {e}");
            } else {
                let _ = writeln!(text, "{head} OK: {}", summary(s.kind, store, s));
            }
            continue;
        }
        if let Some(e) = error.as_deref().map(one_line) {
            failures += 1;
            let fix = advice::for_error(s.kind, &e);
            let _ = writeln!(
                text,
                "{head} FAILED: {e}\n{fix_indent:<77} fix: {}",
                one_line(&fix)
            );
            continue;
        }
        let missing = data::missing(s, store);
        if missing.is_empty() {
            let _ = writeln!(text, "{head} OK: {}", summary(s.kind, store, s));
            continue;
        }
        failures += 1;
        for (i, m) in missing.iter().enumerate() {
            let lead = if i == 0 { head.as_str() } else { "" };
            let _ = writeln!(
                text,
                "{lead:<77} FAILED: no {}: {}\n{fix_indent:<77} fix: {}",
                cell(&m.what),
                one_line(&m.cause),
                one_line(&m.fix)
            );
        }
    }
    let issues = roce::findings(cfg, store);
    let verdict = match (failures, issues.len()) {
        (0, 0) => "consistent".to_string(),
        (0, n) => format!("{n} problem(s)"),
        (f, 0) => format!("not verified: {f} source(s) gave no data or only part of it"),
        (f, n) => format!(
            "{n} problem(s) in the data that came; the rest not verified: {f} source(s) gave no data or only part of it"
        ),
    };
    let _ = writeln!(text, "\nRoCE settings: {verdict}");
    for i in &issues {
        let _ = writeln!(text, "  - {}", cell(i));
    }
    // GPU ↔ NIC affinity where nodes answered nvidia-smi topo -m: each finding is a problem.
    let aff = affinity::of(store);
    if !aff.lines.is_empty() {
        let verdict = match aff.findings.len() {
            0 => "each GPU's NCCL NIC is near it, or NCCL's choice is unknown".to_string(),
            n => format!("{n} problem(s)"),
        };
        let _ = writeln!(text, "\nGPU <-> NIC affinity: {verdict}");
        for l in &aff.lines {
            let _ = writeln!(text, "  {}", cell(l));
        }
        for f in &aff.findings {
            let _ = writeln!(text, "  - {}", cell(f));
        }
    }
    // The fabric graph: what LLDP and the config say of the cabling.
    let graph = fabric::of(cfg, store);
    if !cfg.switches.is_empty() {
        let _ = writeln!(text, "\n{}", graph.head);
        for f in &graph.findings {
            let _ = writeln!(text, "  - {}", cell(f));
        }
    }
    // The lossless path, node netdev by switch port (app::lossless): a mismatch fails the check.
    let proof = crate::app::lossless::prove(cfg, store);
    failures += proof.findings.len();
    text.push_str(&proof.render());
    for w in &cfg.warnings {
        let _ = writeln!(text, "warning: {}", one_line(w));
    }
    Report {
        text,
        failures,
        problems: issues.len() + aff.findings.len() + graph.findings.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_demo_lab_checks_out_and_names_its_flowcontrol_glitch_only_when_it_happens() {
        let cfg = Config::reference();
        let r = run(&cfg).await;
        assert_eq!(r.failures, 0, "{}", r.text);
        assert!(r.text.contains("ubunturdma5"), "{}", r.text);
        assert!(r.text.contains("OK: "), "{}", r.text);
        assert!(r.text.contains("RoCE settings: consistent"), "{}", r.text);
    }

    /// The demo's wrong-socket node: its log's NCCL_DEBUG=INFO lines name the NIC NCCL uses,
    /// topo -m puts it across the socket from GPUs 0-1 while mlx5_1 is beside them, and check
    /// says so for those GPUs and no other node (whose NICs are near, or whose choice is unknown).
    #[tokio::test]
    async fn the_demo_flags_its_wrong_socket_nccl_nic() {
        let cfg = Config::reference();
        let sim = crate::collect::demo::sim::Sim::new(&cfg);
        let node = crate::collect::demo::gpu::wrong_socket_node(&sim)
            .expect("a node")
            .to_string();
        let r = run(&cfg).await;
        let found: Vec<&str> = (r.text.lines())
            .filter(|l| l.contains("NCCL's NIC") && l.contains("is SYS"))
            .collect();
        assert_eq!(found.len(), 2, "{}", r.text);
        for (l, gpu) in found.iter().zip(["GPU0", "GPU1"]) {
            assert!(l.contains(&format!("{node} {gpu}:")), "{l}");
            assert!(l.contains("list mlx5_1 in NCCL_IB_HCA"), "{l}");
        }
        assert!(r.problems >= 2, "{}", r.text);
    }
}
