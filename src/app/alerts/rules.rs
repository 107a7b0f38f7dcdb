//! The conditions behind each alert: what the store says now, against the `[alerts]` thresholds.

use super::{CHANGE_HOLD_MS, HOLD_MS, RDMA_ERRORS, ROCE_PRIORITY, Severity, Subject, WINDOW_MS};
use crate::app::Tab;
use crate::app::episodes::PortRates;
use crate::app::pairing::Links;
use crate::config::Config;
use crate::metrics::names::*;
// The series and their groups come resolved (`ids.rs`): finding them by label was most of an
// evaluation's cost; their keys are borrowed from there.
use super::ids::EvalIdsCache;
use crate::metrics::store::WindowsCache;
use crate::metrics::{Store, Ts, human};
use std::collections::BTreeMap;

pub(super) struct Found<'a> {
    pub(super) id: String,
    pub(super) value: Option<f64>,
    pub(super) severity: Severity,
    pub(super) tab: Tab,
    pub(super) subject: Who<'a>,
    pub(super) what: String,
    pub(super) since: Option<Ts>,
    pub(super) hold: i64,
}

/// An alert's row as found, its names borrowed from the keys it was found under: made a
/// [`Subject`] only for an alert not already active (a port's two names cost two allocations
/// per port alert per evaluation, hundreds a second with drops on every port).
pub(super) enum Who<'a> {
    Source(&'a str),
    Node(&'a str),
    Port(&'a str, &'a str),
    Peer(&'a str, &'a str),
    Owned(Subject),
}

impl Who<'_> {
    pub(super) fn owned(self) -> Subject {
        match self {
            Who::Source(s) => Subject::Source(s.to_string()),
            Who::Node(n) => Subject::Node(n.to_string()),
            Who::Port(switch, port) => Subject::Port {
                switch: switch.to_string(),
                port: port.to_string(),
            },
            Who::Peer(peer, transport) => Subject::Peer {
                peer: peer.to_string(),
                transport: transport.to_string(),
            },
            Who::Owned(s) => s,
        }
    }
}

/// The fabric graph and the pause tree of the same evaluation: a PFC alert on an inter-switch
/// port names the switch across, and a deadlock is an alert of its own.
#[derive(Clone, Copy)]
pub struct Graph<'g> {
    pub fabric: &'g crate::app::fabric::Fabric,
    pub tree: &'g crate::app::fabric::pause_tree::PauseTree,
}

impl Graph<'_> {
    /// ` toward spine1 Ethernet1/3` for a port linked to another switch; empty otherwise.
    fn toward(&self, switch: &str, port: &str) -> String {
        (self.fabric.neighbours(switch, port).next()).map_or(String::new(), |far| {
            format!(" toward {} {}", far.device.name, far.port)
                .trim_end()
                .to_string()
        })
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn find<'a>(
    store: &'a Store,
    cfg: &Config,
    links: &Links,
    now: Ts,
    port_pfc: &'a PortRates,
    ids: &'a EvalIdsCache,
    mut windows: Option<&mut WindowsCache>,
    graph: Option<Graph<'_>>,
) -> Vec<Found<'a>> {
    let mut out = Vec::new();
    let since = now - WINDOW_MS;
    let a = &cfg.alerts;
    // The 60 s windows from the intervals kept between seconds where given (the store's
    // numbers, [`WindowsCache`]).
    let mut inc = |id| match windows.as_deref_mut() {
        Some(w) => w.increase_since(store, id, since),
        None => store.increase_since(id, since),
    };

    // Any drop is critical from the first one.
    for (k, n) in ids.queue_drops_qos.increase_with(store, &mut inc) {
        let [switch, port, qos_group, reason] = k;
        if n > 0 {
            out.push(
                found(
                    format!("qdrop {k:?}"),
                    Severity::Crit,
                    Tab::Queues,
                    Who::Port(switch, port),
                    format!("queue drops: {n} in 60 s ({reason}, qos {qos_group})"),
                    HOLD_MS,
                )
                .val(n as f64),
            );
        }
    }
    for (k, n) in ids.ingress_drops.increase_with(store, &mut inc) {
        let [switch, port, reason] = k;
        if n > 0 {
            out.push(
                found(
                    format!("idrop {k:?}"),
                    Severity::Crit,
                    Tab::Queues,
                    Who::Port(switch, port),
                    format!("ingress {reason} drops: {n} in 60 s"),
                    HOLD_MS,
                )
                .val(n as f64),
            );
        }
    }

    // Host pause time as a share of the interval.
    for (ids, dir) in [(&ids.pause[0], "rx"), (&ids.pause[1], "tx")] {
        for (k, f) in ids.pause_fraction_by(store) {
            let [node] = k;
            if f * 100.0 > a.pause_time_percent {
                out.push(
                    found(
                        format!("pause {dir} {k:?}"),
                        Severity::Warn,
                        Tab::Pfc,
                        Who::Node(node),
                        format!(
                            "{dir} paused {} of the interval (> {}%)",
                            human::percent(Some(f)),
                            a.pause_time_percent
                        ),
                        HOLD_MS,
                    )
                    .val(f * 100.0),
                );
            }
        }
    }

    // A port's PFC frame rate: received and sent, where either is known.
    for p in port_pfc {
        let k = p.key;
        let [switch, port] = k;
        let Some(r) = p.rate() else { continue };
        if r > a.port_pfc_per_second {
            out.push(
                found(
                    format!("pfc {k:?}"),
                    Severity::Warn,
                    Tab::Pfc,
                    Who::Port(switch, port),
                    format!(
                        "{} {} (> {}){}",
                        human::name::PFC,
                        human::num(Some(r)),
                        human::num(Some(a.port_pfc_per_second)),
                        graph.map_or(String::new(), |g| g.toward(switch, port))
                    ),
                    HOLD_MS,
                )
                .val(r),
            );
        }
    }

    // Devices pausing each other in a cycle: no queue of the cycle can drain until something
    // breaks it (the PFC watchdog, a link reset).
    for cycle in graph.iter().flat_map(|g| &g.tree.deadlocks) {
        let Some(first) = cycle.first() else { continue };
        let mut names = cycle.clone();
        names.push(first.clone());
        out.push(found(
            format!("deadlock {cycle:?}"),
            Severity::Crit,
            Tab::Pfc,
            Who::Owned(Subject::Source(first.clone())),
            format!(
                "PFC deadlock: {} pause each other; none can drain until the PFC watchdog or a \
                 link reset breaks the cycle",
                names.join(" -> ")
            ),
            HOLD_MS,
        ));
    }

    // RDMA error counters growing.
    for (c, ids) in RDMA_ERRORS.iter().zip(&ids.rdma) {
        for (k, n) in ids.increase_with(store, &mut inc) {
            let [node, device] = k;
            if n > 0 {
                out.push(
                    found(
                        format!("rdma {c} {k:?}"),
                        Severity::Warn,
                        Tab::Congestion,
                        Who::Node(node),
                        format!("{c} +{n} in 60 s on {device}"),
                        HOLD_MS,
                    )
                    .val(n as f64),
                );
            }
        }
    }

    flow_states(store, cfg, links, ids, &mut out);
    rtt(store, cfg, now, ids, &mut out);
    training(store, &mut out);
    gpu_xid(store, ids, &mut out);

    for (_, h) in store.sources() {
        let subject = Who::Source(&h.name);
        if h.up == Some(false) {
            let err = h.last_error.clone().unwrap_or_default();
            let mut f = found(
                format!("down {}", h.name),
                Severity::Crit,
                Tab::Overview,
                subject,
                format!("source down: {err}"),
                0,
            );
            f.since = h.down_since;
            out.push(f);
        } else if h.is_stale(now) {
            let age = h.age_ms(now).unwrap_or(0) / 1000;
            let mut f = found(
                format!("stale {}", h.name),
                Severity::Warn,
                Tab::Overview,
                subject,
                format!("stale: no answer for {age} s"),
                0,
            );
            f.since = h.last_success;
            out.push(f);
        }
    }
    out
}

/// A job whose loss went NaN/inf (the step that most needs a human), and NCCL that fell back to
/// sockets (the job runs, but not over RoCE).
fn training(store: &Store, out: &mut Vec<Found<'_>>) {
    let label =
        |s: &crate::metrics::store::Series, k: &str| s.key.label(k).unwrap_or("").to_string();
    for (_, s) in store.select(TRAIN_LOSS, &[]) {
        let Some((_, v)) = s.latest(store) else {
            continue;
        };
        let x = v.as_f64();
        if !x.is_finite() {
            let (node, log) = (label(s, "node"), label(s, "log"));
            out.push(found(
                format!("loss {node} {log} {}", label(s, "rank")),
                Severity::Crit,
                Tab::Log,
                Who::Owned(Subject::Node(node)),
                format!("training loss is {x} ({log})"),
                HOLD_MS,
            ));
        }
    }
    for (_, s) in store.select(NCCL_TRANSPORT_INFO, &[("transport", "socket")]) {
        let (node, log, rank) = (label(s, "node"), label(s, "log"), label(s, "rank"));
        out.push(found(
            format!("nccl socket {node} {log}"),
            Severity::Crit,
            Tab::Log,
            Who::Owned(Subject::Node(node)),
            format!(
                "NCCL uses sockets, not RDMA (rank {rank}, {}; {log})",
                label(s, "device")
            ),
            HOLD_MS,
        ));
    }
}

/// A GPU's new XID error (its last XID changed to a code, or is one when first read): critical
/// where the GPU is out of service until reset, held a minute as a change is.
fn gpu_xid<'a>(store: &'a Store, ids: &'a EvalIdsCache, out: &mut Vec<Found<'a>>) {
    use crate::parse::host::gpu::xid;
    for (prev, cur, [node, gpu]) in ids.gpu_xid.last_two(store) {
        let Some(code) = xid::code(cur) else { continue };
        if prev.and_then(xid::code) == Some(code) {
            continue;
        }
        let severity = if xid::severe(code) {
            Severity::Crit
        } else {
            Severity::Warn
        };
        out.push(
            found(
                format!("xid {node} {gpu}"),
                severity,
                Tab::Overview,
                Who::Node(node),
                xid::describe(code, gpu),
                CHANGE_HOLD_MS,
            )
            .val(f64::from(code)),
        );
    }
}

fn found(
    id: String,
    severity: Severity,
    tab: Tab,
    subject: Who<'_>,
    what: String,
    hold: i64,
) -> Found<'_> {
    Found {
        id,
        value: None,
        severity,
        tab,
        subject,
        what,
        since: None,
        hold,
    }
}

impl<'a> Found<'a> {
    fn val(mut self, v: f64) -> Found<'a> {
        self.value = Some(v);
        self
    }
}

fn on_off(v: f64) -> &'static str {
    if v > 0.5 { "on" } else { "off" }
}

/// 802.3x and PFC oper state: a change, or a state that contradicts the config. Read straight
/// from the resolved series (labels borrowed): every port x priority is looked at on every
/// evaluation and almost none raises anything.
fn flow_states<'a>(
    store: &'a Store,
    cfg: &Config,
    links: &Links,
    ids: &'a EvalIdsCache,
    out: &mut Vec<Found<'a>>,
) {
    let expected = cfg
        .alerts
        .flowcontrol
        .as_deref()
        .map(|s| s.eq_ignore_ascii_case("on"));
    for (prev, cur, [sw, p, dir]) in ids.flowcontrol.last_two(store) {
        let changed = prev.filter(|pv| on_off(*pv) != on_off(cur));
        let edge = !p.starts_with("ii");
        let wrong = expected.filter(|w| edge && *w != (cur > 0.5));
        if changed.is_none() && wrong.is_none() {
            continue;
        }
        if let Some(prev) = changed {
            out.push(found(
                format!("fc change {sw} {p} {dir}"),
                Severity::Warn,
                Tab::Pfc,
                Who::Port(sw, p),
                format!(
                    "802.3x flowcontrol {dir} went {} -> {}",
                    on_off(prev),
                    on_off(cur)
                ),
                CHANGE_HOLD_MS,
            ));
        }
        if let Some(want) = wrong {
            out.push(found(
                format!("fc config {sw} {p} {dir}"),
                Severity::Warn,
                Tab::Pfc,
                Who::Port(sw, p),
                format!(
                    "802.3x flowcontrol {dir} is {}, config expects {}",
                    on_off(cur),
                    on_off(f64::from(u8::from(want)))
                ),
                HOLD_MS,
            ));
        }
    }
    for (prev, cur, [sw, p, prio]) in ids.pfc_enabled.last_two(store) {
        let changed = prev.filter(|pv| on_off(*pv) != on_off(cur));
        // RoCE nodes cabled to a port need PFC on their priority.
        let off = prio == ROCE_PRIORITY && cur < 0.5 && !links.behind(sw, p).is_empty();
        if changed.is_none() && !off {
            continue;
        }
        if let Some(prev) = changed {
            out.push(found(
                format!("pfc change {sw} {p} {prio}"),
                Severity::Warn,
                Tab::Pfc,
                Who::Port(sw, p),
                format!(
                    "PFC priority {prio} went {} -> {}",
                    on_off(prev),
                    on_off(cur)
                ),
                CHANGE_HOLD_MS,
            ));
        }
        if off {
            out.push(found(
                format!("pfc config {sw} {p}"),
                Severity::Warn,
                Tab::Pfc,
                Who::Port(sw, p),
                format!("PFC off on priority {prio} with RoCE nodes behind the port"),
                HOLD_MS,
            ));
        }
    }
}

/// RTT p99 above `rtt_p99_over_p50` times the median of its own p50 over the window.
fn rtt<'a>(
    store: &'a Store,
    cfg: &Config,
    now: Ts,
    ids: &'a EvalIdsCache,
    out: &mut Vec<Found<'a>>,
) {
    let since = now - 5 * WINDOW_MS;
    let mut p50s: BTreeMap<[&str; 3], Vec<f64>> = BTreeMap::new();
    for (id, key) in ids.rtt_p50.iter(store) {
        let Some(s) = store.get(id) else {
            continue;
        };
        // From the last point before `since`: the window's points without decoding the rest.
        p50s.entry(key).or_default().extend(
            s.points_since(store, since)
                .filter(|(t, _)| *t >= since)
                .map(|(_, v)| v.as_f64()),
        );
    }
    for ((_, p99), [peer, tr, dev]) in ids.rtt_p99.list().latest(store) {
        let p99 = p99.as_f64();
        let Some(mut v) = p50s.get(&[peer, tr, dev]).cloned() else {
            continue;
        };
        v.sort_by(f64::total_cmp);
        let Some(&median) = v.get(v.len() / 2) else {
            continue;
        };
        let ratio = cfg.alerts.rtt_p99_over_p50;
        if median > 0.0 && p99 > ratio * median {
            out.push(found(
                if dev.is_empty() {
                    format!("rtt {peer} {tr}")
                } else {
                    format!("rtt {peer} {tr} {dev}")
                },
                Severity::Warn,
                Tab::Latency,
                Who::Peer(peer, tr),
                format!(
                    "RTT p99{} {} > {ratio}x recent p50 {}",
                    if dev.is_empty() {
                        String::new()
                    } else {
                        format!(" over {dev}")
                    },
                    human::duration(Some(p99)),
                    human::duration(Some(median))
                ),
                HOLD_MS,
            ));
        }
    }
}
