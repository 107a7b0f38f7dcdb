//! Alerts (issue 3 item 2), evaluated from the store. Each names where its data is (a tab and a
//! row subject) and keeps the time it started; it ends once its condition has been absent for a
//! while, so a single quiet poll does not make it flap. Thresholds come from config `[alerts]`.

use super::Tab;
use super::pairing::Links;
use crate::config::Config;
use crate::metrics::names::*;
use crate::metrics::query::{increase_by, last_two, pause_fraction_by, rate_by};
use crate::metrics::{Store, Ts, human};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

mod rollup;
pub use rollup::Rolled;

/// RoCE rides PFC priority 3 in this fabric (DESIGN.md §6).
pub const ROCE_PRIORITY: &str = "3";
/// "Increasing" means: grew within this window.
pub const WINDOW_MS: i64 = 60_000;
/// An alert whose condition went away stays this long (state changes: [`CHANGE_HOLD_MS`]).
const HOLD_MS: i64 = 10_000;
const CHANGE_HOLD_MS: i64 = 60_000;
const HISTORY: usize = 50;
const RDMA_ERRORS: [&str; 4] = [
    "rp_cnp_ignored",
    "out_of_sequence",
    "packet_seq_err",
    "local_ack_timeout_err",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warn,
    Crit,
}

impl Severity {
    pub fn label(self) -> &'static str {
        match self {
            Severity::Warn => "WARN",
            Severity::Crit => "CRIT",
        }
    }
}

/// The row an alert belongs to, so tables can mark it where the data is.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Subject {
    Source(String),
    Node(String),
    Port { switch: String, port: String },
    Peer { peer: String, transport: String },
}

impl Subject {
    pub fn describe(&self) -> String {
        match self {
            Subject::Source(s) | Subject::Node(s) => s.clone(),
            Subject::Port { switch, port } => format!("{switch} {port}"),
            Subject::Peer { peer, transport } => format!("{peer} ({transport})"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Alert {
    /// Stable key: kind + subject (ack and mute refer to it).
    pub id: String,
    /// The number the condition is about (frames/s, drops, pause share), for rolled-up totals.
    pub value: Option<f64>,
    pub severity: Severity,
    pub tab: Tab,
    pub subject: Subject,
    pub what: String,
    pub since: Ts,
    pub last_seen: Ts,
    /// Set when it ended (history only).
    pub ended: Option<Ts>,
    hold: i64,
}

#[derive(Debug, Default)]
pub struct Alerts {
    /// Keyed by a stable id (kind + subject), so an ongoing alert keeps its start time.
    active: BTreeMap<String, Alert>,
    /// Ended alerts, newest last.
    pub history: VecDeque<Alert>,
    /// Worst active severity per subject (rows look themselves up every frame).
    by_subject: HashMap<Subject, Severity>,
    /// Changes whenever the alerts may have (`crate::metrics::store::next_generation`).
    generation: u64,
    /// Acknowledged alert ids (dimmed, still counted); forgotten when the alert ends.
    pub acked: HashSet<String>,
    /// Muted rollup keys: hidden from the Overview until restart, still listed under `A`.
    pub muted: HashSet<String>,
}

struct Found {
    id: String,
    value: Option<f64>,
    severity: Severity,
    tab: Tab,
    subject: Subject,
    what: String,
    since: Option<Ts>,
    hold: i64,
}

impl Alerts {
    /// Active alerts, worst and oldest first.
    pub fn active(&self) -> Vec<&Alert> {
        let mut v: Vec<&Alert> = self.active.values().collect();
        v.sort_by(|a, b| b.severity.cmp(&a.severity).then(a.since.cmp(&b.since)));
        v
    }

    pub fn count(&self, sev: Severity) -> usize {
        self.active.values().filter(|a| a.severity == sev).count()
    }

    /// The worst active alert on a row, for marking it where the data is.
    pub fn worst_for(&self, subject: &Subject) -> Option<Severity> {
        self.by_subject.get(subject).copied()
    }

    /// Worst alert of a tab (for the tab bar).
    pub fn worst_in(&self, tab: Tab) -> Option<Severity> {
        self.active
            .values()
            .filter(|a| a.tab == tab)
            .map(|a| a.severity)
            .max()
    }

    /// Changes whenever the alerts may have (the tabs' kept views depend on it).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Re-evaluate every condition at `now`; returns whether the set of alerts changed.
    pub fn evaluate(&mut self, store: &Store, cfg: &Config, links: &Links, now: Ts) -> bool {
        self.generation = crate::metrics::store::next_generation();
        let found = find(store, cfg, links, now);
        let mut changed = false;
        let mut seen = HashMap::new();
        for f in found {
            seen.insert(f.id.clone(), ());
            match self.active.get_mut(&f.id) {
                Some(a) => {
                    changed |= a.severity != f.severity || a.what != f.what;
                    a.value = f.value;
                    a.severity = f.severity;
                    a.what = f.what;
                    a.last_seen = now;
                    a.hold = f.hold;
                }
                None => {
                    changed = true;
                    self.active.insert(
                        f.id.clone(),
                        Alert {
                            id: f.id,
                            value: f.value,
                            severity: f.severity,
                            tab: f.tab,
                            subject: f.subject,
                            what: f.what,
                            since: f.since.unwrap_or(now),
                            last_seen: now,
                            ended: None,
                            hold: f.hold,
                        },
                    );
                }
            }
        }
        let gone: Vec<String> = self
            .active
            .iter()
            .filter(|(id, a)| !seen.contains_key(*id) && now - a.last_seen >= a.hold)
            .map(|(id, _)| id.clone())
            .collect();
        for id in gone {
            if let Some(mut a) = self.active.remove(&id) {
                changed = true;
                self.acked.remove(&id);
                a.ended = Some(now);
                self.history.push_back(a);
                if self.history.len() > HISTORY {
                    self.history.pop_front();
                }
            }
        }
        self.by_subject.clear();
        for a in self.active.values() {
            let e = self
                .by_subject
                .entry(a.subject.clone())
                .or_insert(a.severity);
            *e = (*e).max(a.severity);
        }
        changed
    }
}

fn g(key: &[String], i: usize) -> String {
    key.get(i).cloned().unwrap_or_default()
}

fn find(store: &Store, cfg: &Config, links: &Links, now: Ts) -> Vec<Found> {
    let mut out = Vec::new();
    let since = now - WINDOW_MS;
    let a = &cfg.alerts;
    let port = |k: &[String]| Subject::Port {
        switch: g(k, 0),
        port: g(k, 1),
    };

    // Any drop is critical from the first one.
    for (k, n) in increase_by(
        store,
        SW_QUEUE_DROPPED,
        &[],
        &["switch", "port", "qos_group", "reason"],
        since,
    ) {
        if n > 0 {
            let why = [g(&k, 3), format!("qos {}", g(&k, 2))].join(", ");
            out.push(
                found(
                    format!("qdrop {k:?}"),
                    Severity::Crit,
                    Tab::Queues,
                    port(&k),
                    format!("queue drops: {n} in 60 s ({why})"),
                    HOLD_MS,
                )
                .val(n as f64),
            );
        }
    }
    for (k, n) in increase_by(
        store,
        SW_INGRESS_DROPPED,
        &[],
        &["switch", "port", "reason"],
        since,
    ) {
        if n > 0 {
            out.push(
                found(
                    format!("idrop {k:?}"),
                    Severity::Crit,
                    Tab::Queues,
                    port(&k),
                    format!("ingress {} drops: {n} in 60 s", g(&k, 2)),
                    HOLD_MS,
                )
                .val(n as f64),
            );
        }
    }

    // Host pause time as a share of the interval.
    for (name, dir) in [
        (NIC_PFC_RX_PAUSE_DURATION, "rx"),
        (NIC_PFC_TX_PAUSE_DURATION, "tx"),
    ] {
        for (k, f) in pause_fraction_by(store, name, &[], &["node"]) {
            if f * 100.0 > a.pause_time_percent {
                out.push(
                    found(
                        format!("pause {dir} {k:?}"),
                        Severity::Warn,
                        Tab::Pfc,
                        Subject::Node(g(&k, 0)),
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

    // A port's PFC frame rate.
    let mut pfc: BTreeMap<Vec<String>, f64> = BTreeMap::new();
    for name in [SW_PFC_RX, SW_PFC_TX] {
        for (k, agg) in rate_by(store, name, &[], &["switch", "port"]) {
            if let Some(r) = agg.rate {
                *pfc.entry(k).or_default() += r;
            }
        }
    }
    for (k, r) in pfc {
        if r > a.port_pfc_per_second {
            out.push(
                found(
                    format!("pfc {k:?}"),
                    Severity::Warn,
                    Tab::Pfc,
                    port(&k),
                    format!(
                        "{} {} (> {})",
                        human::name::PFC,
                        human::num(Some(r)),
                        human::num(Some(a.port_pfc_per_second))
                    ),
                    HOLD_MS,
                )
                .val(r),
            );
        }
    }

    // RDMA error counters growing.
    for c in RDMA_ERRORS {
        for (k, n) in increase_by(store, &rdma_counter(c), &[], &["node", "device"], since) {
            if n > 0 {
                out.push(
                    found(
                        format!("rdma {c} {k:?}"),
                        Severity::Warn,
                        Tab::Congestion,
                        Subject::Node(g(&k, 0)),
                        format!("{c} +{n} in 60 s on {}", g(&k, 1)),
                        HOLD_MS,
                    )
                    .val(n as f64),
                );
            }
        }
    }

    flow_states(store, cfg, links, &mut out);
    rtt(store, cfg, now, &mut out);
    training(store, &mut out);

    for (_, h) in store.sources() {
        let subject = Subject::Source(h.name.clone());
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
fn training(store: &Store, out: &mut Vec<Found>) {
    let label =
        |s: &crate::metrics::store::Series, k: &str| s.key.label(k).unwrap_or("").to_string();
    for (_, s) in store.select(TRAIN_LOSS, &[]) {
        let Some((_, v)) = s.latest() else { continue };
        let x = v.as_f64();
        if !x.is_finite() {
            let (node, log) = (label(s, "node"), label(s, "log"));
            out.push(found(
                format!("loss {node} {log} {}", label(s, "rank")),
                Severity::Crit,
                Tab::Log,
                Subject::Node(node),
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
            Subject::Node(node),
            format!(
                "NCCL uses sockets, not RDMA (rank {rank}, {}; {log})",
                label(s, "device")
            ),
            HOLD_MS,
        ));
    }
}

fn found(
    id: String,
    severity: Severity,
    tab: Tab,
    subject: Subject,
    what: String,
    hold: i64,
) -> Found {
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

impl Found {
    fn val(mut self, v: f64) -> Found {
        self.value = Some(v);
        self
    }
}

fn on_off(v: f64) -> &'static str {
    if v > 0.5 { "on" } else { "off" }
}

/// 802.3x and PFC oper state: a change, or a state that contradicts the config.
fn flow_states(store: &Store, cfg: &Config, links: &Links, out: &mut Vec<Found>) {
    let lab = |l: &[(String, String)], k: &str| {
        l.iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let expected = cfg
        .alerts
        .flowcontrol
        .as_deref()
        .map(|s| s.eq_ignore_ascii_case("on"));
    for (l, prev, cur) in last_two(store, SW_FLOWCONTROL_ENABLED, &[]) {
        let (sw, p, dir) = (lab(&l, "switch"), lab(&l, "port"), lab(&l, "direction"));
        let subject = Subject::Port {
            switch: sw.clone(),
            port: p.clone(),
        };
        if let Some(prev) = prev.filter(|pv| on_off(*pv) != on_off(cur)) {
            out.push(found(
                format!("fc change {sw} {p} {dir}"),
                Severity::Warn,
                Tab::Pfc,
                subject.clone(),
                format!(
                    "802.3x flowcontrol {dir} went {} -> {}",
                    on_off(prev),
                    on_off(cur)
                ),
                CHANGE_HOLD_MS,
            ));
        }
        let edge = !p.starts_with("ii");
        if let Some(want) = expected.filter(|w| edge && *w != (cur > 0.5)) {
            out.push(found(
                format!("fc config {sw} {p} {dir}"),
                Severity::Warn,
                Tab::Pfc,
                subject,
                format!(
                    "802.3x flowcontrol {dir} is {}, config expects {}",
                    on_off(cur),
                    on_off(f64::from(u8::from(want)))
                ),
                HOLD_MS,
            ));
        }
    }
    for (l, prev, cur) in last_two(store, SW_PFC_ENABLED, &[]) {
        let (sw, p, prio) = (lab(&l, "switch"), lab(&l, "port"), lab(&l, "priority"));
        let subject = Subject::Port {
            switch: sw.clone(),
            port: p.clone(),
        };
        if let Some(prev) = prev.filter(|pv| on_off(*pv) != on_off(cur)) {
            out.push(found(
                format!("pfc change {sw} {p} {prio}"),
                Severity::Warn,
                Tab::Pfc,
                subject.clone(),
                format!(
                    "PFC priority {prio} went {} -> {}",
                    on_off(prev),
                    on_off(cur)
                ),
                CHANGE_HOLD_MS,
            ));
        }
        // RoCE nodes cabled to a port need PFC on their priority.
        if prio == ROCE_PRIORITY && cur < 0.5 && !links.behind(&sw, &p).is_empty() {
            out.push(found(
                format!("pfc config {sw} {p}"),
                Severity::Warn,
                Tab::Pfc,
                subject,
                format!("PFC off on priority {prio} with RoCE nodes behind the port"),
                HOLD_MS,
            ));
        }
    }
}

/// RTT p99 above `rtt_p99_over_p50` times the median of its own p50 over the window.
fn rtt(store: &Store, cfg: &Config, now: Ts, out: &mut Vec<Found>) {
    let since = now - 5 * WINDOW_MS;
    let mut p50s: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for (_, s) in store.select(PING_RTT_SECONDS, &[("quantile", "0.5")]) {
        let key = (
            s.key.label("peer").unwrap_or("").to_string(),
            s.key.label("transport").unwrap_or("").to_string(),
        );
        p50s.entry(key).or_default().extend(
            s.points()
                .filter(|(t, _)| *t >= since)
                .map(|(_, v)| v.as_f64()),
        );
    }
    for (_, s) in store.select(PING_RTT_SECONDS, &[("quantile", "0.99")]) {
        let (peer, tr) = (
            s.key.label("peer").unwrap_or("").to_string(),
            s.key.label("transport").unwrap_or("").to_string(),
        );
        let Some((_, p99)) = s.latest() else { continue };
        let p99 = p99.as_f64();
        let Some(mut v) = p50s.get(&(peer.clone(), tr.clone())).cloned() else {
            continue;
        };
        v.sort_by(f64::total_cmp);
        let Some(&median) = v.get(v.len() / 2) else {
            continue;
        };
        let ratio = cfg.alerts.rtt_p99_over_p50;
        if median > 0.0 && p99 > ratio * median {
            out.push(found(
                format!("rtt {peer} {tr}"),
                Severity::Warn,
                Tab::Latency,
                Subject::Peer {
                    peer: peer.clone(),
                    transport: tr.clone(),
                },
                format!(
                    "RTT p99 {} > {ratio}x recent p50 {}",
                    human::duration(Some(p99)),
                    human::duration(Some(median))
                ),
                HOLD_MS,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    fn cfg() -> Config {
        Config::reference()
    }

    fn links() -> Links {
        Links::from_config(&cfg())
    }

    fn poll(samples: Vec<Sample>) -> Parsed {
        Parsed {
            samples,
            ..Default::default()
        }
    }

    #[test]
    fn first_drop_is_critical_and_keeps_its_start_time() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("NX_AI_Leaf1", 1000);
        let d = |v| {
            poll(vec![Sample::counter(
                SW_INGRESS_DROPPED,
                &[
                    ("switch", "NX_AI_Leaf1"),
                    ("port", "Ethernet1/1/2"),
                    ("reason", "mmu"),
                ],
                v,
            )])
        };
        let mut al = Alerts::default();
        st.ingest(src, 0, &d(5));
        st.ingest(src, 1000, &d(5));
        assert!(
            !al.evaluate(&st, &cfg(), &links(), 1000),
            "no growth, no alert"
        );
        st.ingest(src, 2000, &d(6));
        assert!(al.evaluate(&st, &cfg(), &links(), 2000));
        let act = al.active();
        assert_eq!(act.len(), 1);
        assert_eq!(act[0].severity, Severity::Crit);
        assert_eq!(act[0].since, 2000);
        assert_eq!(act[0].tab, Tab::Queues);
        assert!(
            act[0].what.contains("ingress mmu drops: 1"),
            "{}",
            act[0].what
        );
        let port = Subject::Port {
            switch: "NX_AI_Leaf1".into(),
            port: "Ethernet1/1/2".into(),
        };
        assert_eq!(al.worst_for(&port), Some(Severity::Crit));
        st.ingest(src, 3000, &d(9));
        al.evaluate(&st, &cfg(), &links(), 3000);
        assert_eq!(al.active()[0].since, 2000, "still the same alert");
        // A minute of quiet, then the hold: it ends and goes to history.
        for t in 4..75 {
            st.ingest(src, t * 1000, &d(9));
            al.evaluate(&st, &cfg(), &links(), t * 1000);
        }
        assert!(al.active().is_empty());
        assert_eq!(al.history.len(), 1);
    }

    #[test]
    fn flowcontrol_on_an_edge_port_disagrees_with_config_and_a_change_is_held() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("NX_AI_Leaf1", 1000);
        let fc = |v| {
            poll(vec![Sample::gauge(
                SW_FLOWCONTROL_ENABLED,
                &[
                    ("switch", "NX_AI_Leaf1"),
                    ("port", "Ethernet1/1/1"),
                    ("direction", "rx"),
                ],
                v,
            )])
        };
        let mut al = Alerts::default();
        st.ingest(src, 0, &fc(0.0));
        al.evaluate(&st, &cfg(), &links(), 0);
        assert!(al.active().is_empty());
        st.ingest(src, 1000, &fc(1.0));
        al.evaluate(&st, &cfg(), &links(), 1000);
        let whats: Vec<&str> = al.active().iter().map(|a| a.what.as_str()).collect();
        assert!(
            whats.iter().any(|w| w.contains("went off -> on")),
            "{whats:?}"
        );
        assert!(
            whats.iter().any(|w| w.contains("config expects off")),
            "{whats:?}"
        );
        st.ingest(src, 2000, &fc(0.0));
        al.evaluate(&st, &cfg(), &links(), 2000);
        assert_eq!(
            al.active().len(),
            2,
            "the on->off change, and the off->on one still held"
        );
    }

    #[test]
    fn pause_time_pfc_rate_rdma_errors_rtt_and_sources() {
        let mut st = Store::new(600_000, 1000);
        let n = st.add_source("ubunturdma6", 1000);
        let sw = st.add_source("NX_AI_Leaf1", 1000);
        let p = st.add_source("ping", 1000);
        let dead = st.add_source("ubunturdma2", 1000);
        let node = |us, oos| {
            poll(vec![
                Sample::counter_micros(
                    NIC_PFC_RX_PAUSE_DURATION,
                    &[
                        ("node", "ubunturdma6"),
                        ("netdev", "ens192"),
                        ("priority", "3"),
                    ],
                    us,
                ),
                Sample::counter(
                    rdma_counter("out_of_sequence"),
                    &[
                        ("node", "ubunturdma6"),
                        ("device", "rocep11s0"),
                        ("rdma_port", "1"),
                    ],
                    oos,
                ),
            ])
        };
        let pfc = |v| {
            poll(vec![Sample::counter(
                SW_PFC_RX,
                &[
                    ("switch", "NX_AI_Leaf1"),
                    ("port", "ii1/1/1"),
                    ("priority", "all"),
                ],
                v,
            )])
        };
        let ping = |p50: f64, p99: f64| {
            poll(vec![
                Sample::gauge(
                    PING_RTT_SECONDS,
                    &[
                        ("peer", "ubunturdma2"),
                        ("transport", "tcp"),
                        ("quantile", "0.5"),
                    ],
                    p50,
                ),
                Sample::gauge(
                    PING_RTT_SECONDS,
                    &[
                        ("peer", "ubunturdma2"),
                        ("transport", "tcp"),
                        ("quantile", "0.99"),
                    ],
                    p99,
                ),
            ])
        };
        st.ingest(n, 0, &node(0, 7));
        st.ingest(sw, 0, &pfc(0));
        st.ingest(p, 0, &ping(50e-6, 80e-6));
        st.ingest(dead, 0, &poll(vec![]));
        let mut al = Alerts::default();
        al.evaluate(&st, &cfg(), &links(), 0);
        assert!(al.active().is_empty());
        st.ingest(n, 1000, &node(200_000, 9));
        st.ingest(sw, 1000, &pfc(5000));
        st.ingest(p, 1000, &ping(50e-6, 400e-6));
        st.fail(dead, 1000, "connection refused");
        al.evaluate(&st, &cfg(), &links(), 1000);
        let got: Vec<String> = al
            .active()
            .iter()
            .map(|a| format!("{} {}", a.severity.label(), a.what))
            .collect();
        let has = |s: &str| got.iter().any(|g| g.contains(s));
        assert!(has("CRIT source down: connection refused"), "{got:?}");
        assert!(has("rx paused 20.0% of the interval"), "{got:?}");
        assert!(has("PFC/s 5.0k (> 1.0k)"), "{got:?}");
        assert!(has("out_of_sequence +2 in 60 s on rocep11s0"), "{got:?}");
        assert!(has("RTT p99 400 µs > 3x recent p50 50.0 µs"), "{got:?}");
        assert_eq!(al.active()[0].severity, Severity::Crit, "worst first");
        assert_eq!(al.worst_in(Tab::Pfc), Some(Severity::Warn));
        // Stale: the node stops answering.
        al.evaluate(&st, &cfg(), &links(), 10_000);
        assert!(
            al.active().iter().any(|a| a.what.starts_with("stale")
                && a.subject == Subject::Source("ubunturdma6".into()))
        );
    }

    #[test]
    fn a_nan_loss_and_nccl_on_sockets_are_critical() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("ubunturdma1", 1000);
        let text = "Iteration 7 | Loss: 2.5 | Total: 100ms\n\
                    n1:1:1 [0] NCCL INFO NET/IB : Using [0]rocep19s0:1/RoCE\n";
        let parsed = crate::parse::training::parse_text(text, "ubunturdma1", "t.log");
        st.ingest(src, 1_000, &parsed);
        let mut a = Alerts::default();
        a.evaluate(&st, &cfg(), &links(), 1_000);
        assert!(a.active().is_empty(), "{:?}", a.active());
        let text = "Iteration 8 | Loss: nan | Total: 100ms\n\
                    n2:2:2 [0] NCCL INFO NET/Socket : Using [0]ens224:10.0.0.2<0>\n";
        let parsed = crate::parse::training::parse_text(text, "ubunturdma1", "t.log");
        st.ingest(src, 2_000, &parsed);
        a.evaluate(&st, &cfg(), &links(), 2_000);
        let what: Vec<_> = a
            .active()
            .iter()
            .map(|x| (x.severity, x.what.clone()))
            .collect();
        assert!(
            what.contains(&(Severity::Crit, "training loss is NaN (t.log)".to_string())),
            "{what:?}"
        );
        assert!(
            what.iter().any(|(s, w)| *s == Severity::Crit
                && w.starts_with("NCCL uses sockets, not RDMA (rank n2:2, ens224")),
            "{what:?}"
        );
    }
}
