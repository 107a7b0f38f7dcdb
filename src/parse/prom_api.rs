//! Answers of a Prometheus HTTP API (`/api/v1/query`, instant vectors) mapped onto rocetop's
//! vocabulary. Pure: the collector (`collect::prometheus`) stores the server's raw
//! answers in one text, so a recording replays through this same mapping.
//!
//! The text holds one answer per query, each after a `# query NAME` line (`# error NAME why` for a
//! query that failed), after a header the collector writes: `# node_label LABEL` (the label naming
//! the node; its `:port` is stripped here) and `# at T step S` (the evaluation time and the step,
//! in ms). Each profile's query is a range selector over the last two steps, so every series comes
//! with its raw samples and their scrape times: the newest sample in `(T - S, T]` is the poll's
//! value. A series without one missed the newest scrape (its target is down, or it went stale
//! without a staleness marker, as backfilled or federated data does): it is left out with a note,
//! never given its old value again (which would read as a rate of 0). Older recordings hold
//! instant vectors with the node in [`NODE_LABEL`]; they map as before.
//!
//! After a `# range FIRST LAST step S` line come the collector's history answers (`query_range` of
//! `last_over_time`, the store's history window): [`parse`] leaves them out (they are not the
//! poll's present) and [`history`] maps them, with the same mapping, into one sample set per step.
//!
//! Profiles (exact names from the exporters' source): node_exporter's infiniband collector
//! (`node_infiniband_*_total{device,port}`) and ethtool collector (`node_ethtool_received_prio3_pause`
//! {device=netdev}, no `_total`), yuuki/rdma_exporter (`rdma_<hw_counter>_total{device,port}`,
//! `rdma_roce_pfc_pause_frames_total{device,port,netdev,direction,priority}`, durations in µs),
//! rocetop's own export (`rocetop_rdma_*`, `rocetop_nic_pfc_*`, labels already ours), and NVIDIA
//! dcgm-exporter (`DCGM_FI_DEV_GPU_UTIL{gpu,...}` and three more: gauges, kept as read, under the
//! node dump's GPU names).

use crate::metrics::names::{self, rdma_counter};
use crate::metrics::{History, LabelName, Parsed, Sample, SeriesKey, Value};
use json::{Item, Labels};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::hash::{BuildHasher, RandomState};

mod json;

/// The label the collector's `label_replace` fills with the node name (port stripped).
pub const NODE_LABEL: &str = "rocetop_node";

/// The exporters rocetop reads, in the order a duplicate series is kept (first wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Profile {
    Rocetop,
    NodeInfiniband,
    NodeEthtool,
    RdmaExporter,
    Dcgm,
}

impl Profile {
    pub const ALL: [Profile; 5] = [
        Profile::Rocetop,
        Profile::NodeInfiniband,
        Profile::NodeEthtool,
        Profile::RdmaExporter,
        Profile::Dcgm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Rocetop => "rocetop",
            Profile::NodeInfiniband => "node_exporter infiniband",
            Profile::NodeEthtool => "node_exporter ethtool",
            Profile::RdmaExporter => "rdma_exporter",
            Profile::Dcgm => "dcgm-exporter",
        }
    }

    /// The profile a metric name belongs to, if any.
    pub fn of(metric: &str) -> Option<Profile> {
        if metric.starts_with("rocetop_") {
            Some(Profile::Rocetop)
        } else if metric.starts_with("node_infiniband_") {
            Some(Profile::NodeInfiniband)
        } else if metric.starts_with("node_ethtool_") {
            Some(Profile::NodeEthtool)
        } else if metric.starts_with("rdma_") {
            Some(Profile::RdmaExporter)
        } else if metric.starts_with("DCGM_FI_") {
            Some(Profile::Dcgm)
        } else {
            None
        }
    }

    /// The series selector (metric names only) this profile's one query asks for.
    pub fn selector(self) -> &'static str {
        match self {
            Profile::Rocetop => r#"__name__=~"rocetop_(rdma_.+_total|nic_pfc_.+_total)""#,
            Profile::NodeInfiniband => {
                r#"__name__=~"node_infiniband_(np_ecn_marked_roce_packets_received|np_cnp_packets_sent|rp_cnp_packets_handled|rp_cnp_ignored_packets_received|out_of_sequence_packets_received|packet_sequence_errors|local_ack_timeout_errors|port_data_(received|transmitted)_bytes|port_(packets|discards|constraint_errors)_(received|transmitted)|port_transmit_wait|port_errors_received|link_downed|link_error_recovery|(unicast|multicast)_packets_(received|transmitted))_total""#
            }
            Profile::NodeEthtool => {
                r#"__name__=~"node_ethtool_(received|transmitted)_prio[0-7]_pause(_duration)?""#
            }
            Profile::RdmaExporter => {
                r#"__name__=~"rdma_(np_ecn_marked_roce_packets|np_cnp_sent|rp_cnp_handled|rp_cnp_ignored|out_of_sequence|packet_seq_err|local_ack_timeout_err|roce_pfc_pause_frames|roce_pfc_pause_duration)_total""#
            }
            Profile::Dcgm => {
                r#"__name__=~"DCGM_FI_DEV_(GPU_UTIL|POWER_USAGE|XID_ERRORS)|DCGM_FI_PROF_PIPE_TENSOR_ACTIVE""#
            }
        }
    }
}

/// The detection query's selector: every family any profile could give.
pub const DETECT_SELECTOR: &str =
    r#"__name__=~"node_infiniband_.*|node_ethtool_.*|rdma_.*|rocetop_.*|DCGM_FI_.*""#;

/// What to enable when a server holds none of the profiles.
pub const NOTHING_TO_READ: &str = "this Prometheus holds no RDMA counters rocetop reads: enable node_exporter's \
infiniband collector (on by default since 1.11; mlx5 congestion counters) and `--collector.ethtool` with \
`--collector.ethtool.metrics-include='^(rx|tx)_prio[0-7]_pause.*'` for PFC, or run yuuki/rdma_exporter, \
or `rocetop export` on each node (contrib/debian/rocetop-export.service, contrib/prometheus.yml)";

/// What the collector's header says about the answers that follow.
#[derive(Default)]
struct Header<'a> {
    /// `None`: `instance` (an answer saved by hand, without the collector's header).
    node_label: Option<&'a str>,
    /// Evaluation time and step (ms): a range answer's value is its newest sample in (at - step, at].
    window: Option<(i64, i64)>,
    /// The first and last step (ms) the history answers were asked for: a point outside it has no
    /// place in time.
    range: Option<(i64, i64)>,
}

/// What a series' samples give the poll.
enum Sampled<'a> {
    Value(&'a str),
    /// No sample in the window: the series missed the newest scrape.
    Missed,
    /// Its newest sample is later than the time asked: the server's clock or data is ahead, and
    /// the sample has no place in this poll.
    Later,
}

impl Item<'_> {
    /// The sample this poll reads: an instant vector's, or a range vector's newest within the
    /// window.
    fn sample(&self, h: &Header) -> Sampled<'_> {
        if let Some((_, v)) = &self.value {
            return Sampled::Value(&v.0);
        }
        let Some((at, step)) = h.window else {
            return self
                .values
                .last()
                .map_or(Sampled::Missed, |(_, v)| Sampled::Value(&v.0));
        };
        let ms = |t: f64| (t * 1000.0).round() as i64;
        if self.values.last().is_some_and(|(t, _)| ms(*t) > at) {
            return Sampled::Later;
        }
        self.values
            .iter()
            .rev()
            .find(|(t, _)| ms(*t) > at - step)
            .map_or(Sampled::Missed, |(_, v)| Sampled::Value(&v.0))
    }
}

/// `host:9100` → `host`, as the anchored `(.+?)(:[0-9]+)?` of a `label_replace` would.
fn strip_port(v: &str) -> &str {
    match v.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            h
        }
        _ => v,
    }
}

/// The profiles a detection answer (`count by (__name__)(...)`) shows the server holds.
pub fn profiles(json: &str) -> Result<Vec<Profile>, String> {
    let mut v: Vec<Profile> = Vec::new();
    json::each_item(json, &mut |i| {
        v.extend(
            i.metric
                .get("__name__")
                .filter(|n| names::is_metric_name(n))
                .and_then(Profile::of),
        );
    })?;
    v.sort();
    v.dedup();
    Ok(v)
}

/// The samples of one evaluation time, the first of each key kept (a duplicate series from a
/// second exporter loses to the first profile's).
#[derive(Default)]
struct Firsts {
    p: Parsed,
    /// Key hash → index of the first sample with it: a duplicate is found without a copy of its key.
    seen: HashMap<u64, usize>,
    hasher: RandomState,
}

impl Firsts {
    /// Keep `s` unless its key is kept already (then false).
    fn push(&mut self, s: Sample) -> bool {
        match self.seen.entry(self.hasher.hash_one(&s.key)) {
            Entry::Occupied(e) if self.p.samples[*e.get()].key == s.key => return false,
            // Two keys with one hash: both kept (never seen in practice).
            Entry::Occupied(_) => self.p.push(s),
            Entry::Vacant(e) => {
                e.insert(self.p.samples.len());
                self.p.push(s);
            }
        }
        true
    }
}

/// What a line of a poll's text is.
enum Line<'a> {
    /// A header or query line, taken into the state.
    Header,
    /// `# error NAME: why`.
    Error(&'a str),
    /// A query's JSON answer.
    Answer(&'a str),
}

/// The state a poll's text sets line by line (header, current query, history section).
#[derive(Default)]
struct Reader<'a> {
    h: Header<'a>,
    query: &'a str,
    /// After `# range`: the history answers.
    history: bool,
}

impl<'a> Reader<'a> {
    fn read(&mut self, line: &'a str) -> Line<'a> {
        if let Some(q) = line.strip_prefix("# query ") {
            self.query = q.trim();
        } else if let Some(e) = line.strip_prefix("# error ") {
            return Line::Error(e.trim());
        } else if let Some(l) = line.strip_prefix("# node_label ") {
            self.h.node_label = Some(l.trim()).filter(|l| names::is_label_name(l));
        } else if let Some(w) = line.strip_prefix("# at ") {
            self.h.window = window(w);
        } else if let Some(r) = line.strip_prefix("# range ") {
            self.h.range = range(r);
            self.history = true;
        } else if !line.starts_with('#') && !line.trim().is_empty() {
            return Line::Answer(line);
        }
        Line::Header
    }
}

/// Map every answer of a poll's text onto rocetop samples (its history section aside).
pub fn parse(text: &str) -> Parsed {
    let mut f = Firsts::default();
    let (mut refused, mut dups, mut unnamed, mut missed) = (0usize, 0usize, 0usize, 0usize);
    let (mut beyond, mut later) = (0usize, 0usize);
    let mut odd = OddNames::default();
    let mut r = Reader::default();
    for line in text.lines() {
        match r.read(line) {
            Line::Header => {}
            Line::Error(e) if r.history => f.p.note(format!("history query {e}")),
            Line::Error(e) => f.p.note(format!("query {e}")),
            Line::Answer(_) if r.history => {}
            Line::Answer(json) => {
                let (query, h) = (r.query, &r.h);
                // An answer counts whole or not at all (a cut-off one is a note, not half a fleet).
                let mut got = Vec::new();
                let mut seen = OddNames::default();
                let read = json::each_item(json, &mut |it| {
                    seen.count(&it.metric);
                    got.push(map(&it.metric, it.sample(h), h))
                });
                if read.is_ok() {
                    odd.add(&seen);
                }
                match read {
                    Err(e) => f.p.note(format!("query {query}: {e}")),
                    Ok(()) => {
                        for m in got {
                            match m {
                                Mapped::Sample(s) => {
                                    if !f.push(s) {
                                        dups += 1;
                                    }
                                }
                                Mapped::Refused(Refusal::NotACount) => refused += 1,
                                Mapped::Refused(Refusal::Beyond) => beyond += 1,
                                Mapped::NoNode => unnamed += 1,
                                Mapped::Missed => missed += 1,
                                Mapped::Later => later += 1,
                                // Counted by `odd`: the name itself is never shown.
                                Mapped::BadName => {}
                                Mapped::Unknown(n) => f.p.unknown(&n),
                            }
                        }
                    }
                }
            }
        }
    }
    let mut p = f.p;
    if refused > 0 {
        p.note(format!(
            "{refused} samples refused (NaN, ±Inf or negative counter)"
        ));
    }
    if dups > 0 {
        p.note(format!(
            "{dups} duplicate series (two exporters report the same counter): kept the first profile's"
        ));
    }
    if unnamed > 0 {
        p.note(format!("{unnamed} series without a node label: not shown"));
    }
    if missed > 0 {
        p.note(format!(
            "{missed} series missed the newest scrape (target down or series stale): not shown"
        ));
    }
    if beyond > 0 {
        p.note(format!("{beyond} samples refused ({BEYOND})"));
    }
    if later > 0 {
        let at =
            r.h.window
                .map_or(String::new(), |(at, _)| format!(" ({at} ms)"));
        p.note(format!(
            "{later} series have samples later than the time asked{at}: the server's clock or \
             data is ahead, so they cannot be placed in time: not shown"
        ));
    }
    odd.note(&mut p);
    p
}

/// Why a counter value is refused.
enum Refusal {
    /// NaN, ±Inf or negative.
    NotACount,
    /// At or beyond 2^64: no 64-bit counter holds it; a device that shows one has saturated, and
    /// clamping it to `u64::MAX` would read as a giant rate.
    Beyond,
}

const BEYOND: &str = "a counter at or beyond 2^64: saturated, no counter holds it";

/// Names outside the text exposition format's grammar, counted over the answers read. Such a
/// metric name refuses its series (it would break `rocetop export`: a Prometheus scraping it
/// drops the whole target, or reads the series it spells); such a label name is never read.
/// Neither is ever shown, only counted.
#[derive(Default)]
struct OddNames {
    series: usize,
    labels: usize,
}

impl OddNames {
    fn count(&mut self, m: &Labels) {
        if m.get("__name__").is_some_and(|n| !names::is_metric_name(n)) {
            self.series += 1;
        }
        self.labels += m.names().filter(|n| !names::is_label_name(n)).count();
    }

    fn add(&mut self, o: &OddNames) {
        self.series += o.series;
        self.labels += o.labels;
    }

    fn note(&self, p: &mut Parsed) {
        if self.series > 0 {
            p.note(format!(
                "{} series refused: a metric name outside the exposition format \
                 ([a-zA-Z_:][a-zA-Z0-9_:]*)",
                self.series
            ));
        }
        if self.labels > 0 {
            p.note(format!(
                "{} labels ignored: a label name outside the exposition format ([a-zA-Z_][a-zA-Z0-9_]*)",
                self.labels
            ));
        }
    }
}

/// The history section of a poll's text: each series once, with its values per evaluation time
/// (ms, ascending), mapped as a poll's answers are (refused values, unnamed and unmapped series
/// left out; of a series two exporters give, the first profile's); and notes for answers that
/// could not be read.
pub fn history(text: &str) -> (History, Vec<String>) {
    let mut series: Vec<(SeriesKey, Vec<(i64, Value)>)> = Vec::new();
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
    let hasher = RandomState::new();
    let mut notes = Vec::new();
    let mut r = Reader::default();
    let (mut outside, mut refused, mut beyond) = (0usize, 0usize, 0usize);
    let mut odd = OddNames::default();
    for line in text.lines() {
        let Line::Answer(json) = r.read(line) else {
            continue;
        };
        if !r.history {
            continue;
        }
        let mut got: Vec<(SeriesKey, Vec<(i64, Value)>)> = Vec::new();
        let h = &r.h;
        let mut odd_here = OddNames::default();
        let (mut out, mut bad, mut big) = (0usize, 0usize, 0usize);
        let read = json::each_item(json, &mut |it| {
            odd_here.count(&it.metric);
            let Ok(k) = self::series(&it.metric, h) else {
                return;
            };
            let points = it
                .values
                .iter()
                .filter_map(|(t, v)| {
                    let t = (t * 1000.0).round() as i64;
                    // A point of a step not asked for (ten years ahead, say) would move the
                    // source's clock there, and every poll after it would be "earlier" and
                    // dropped: only the range asked has a place.
                    if h.range.is_none_or(|(first, last)| t < first || t > last) {
                        out += 1;
                        return None;
                    }
                    match k.value(&v.0) {
                        Ok(v) => Some((t, v)),
                        Err(Refusal::NotACount) => {
                            bad += 1;
                            None
                        }
                        Err(Refusal::Beyond) => {
                            big += 1;
                            None
                        }
                    }
                })
                .collect();
            got.push((k.key, points));
        });
        if let Err(e) = read {
            notes.push(format!("history query {}: {e}", r.query));
            continue;
        }
        odd.add(&odd_here);
        (outside, refused, beyond) = (outside + out, refused + bad, beyond + big);
        for (key, points) in got {
            let ids = seen.entry(hasher.hash_one(&key)).or_default();
            if ids.iter().any(|&i| series[i].0 == key) {
                continue;
            }
            ids.push(series.len());
            series.push((key, points));
        }
    }
    if outside > 0 {
        let asked =
            r.h.range
                .map_or("no range given".to_string(), |(first, last)| {
                    format!("{first}..={last} ms")
                });
        notes.push(format!(
            "{outside} history points outside the range asked ({asked}): the server's clock or \
             data is off, so they cannot be placed in time: refused"
        ));
    }
    if refused > 0 {
        notes.push(format!(
            "{refused} history points refused (NaN, ±Inf or negative counter)"
        ));
    }
    if beyond > 0 {
        notes.push(format!("{beyond} history points refused ({BEYOND})"));
    }
    let mut p = Parsed::default();
    odd.note(&mut p);
    notes.extend(p.notes.into_iter().map(|n| format!("history: {n}")));
    let mut times: Vec<i64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(t, _)| *t))
        .collect();
    times.sort_unstable();
    times.dedup();
    let series = series
        .into_iter()
        .map(|(key, points)| {
            let at = points
                .into_iter()
                .filter_map(|(t, v)| Some((u32::try_from(times.binary_search(&t).ok()?).ok()?, v)))
                .collect();
            (key, at)
        })
        .collect();
    (History { times, series }, notes)
}

/// `T step S` (ms) of the header.
fn window(w: &str) -> Option<(i64, i64)> {
    let mut it = w.split_whitespace();
    let at = it.next()?.parse().ok()?;
    let step = it.nth(1)?.parse().ok()?;
    Some((at, step))
}

/// `FIRST LAST step S` (ms) of a range line: its first and last step.
fn range(r: &str) -> Option<(i64, i64)> {
    let mut it = r.split_whitespace();
    let first = it.next()?.parse().ok()?;
    let last = it.next()?.parse().ok()?;
    Some((first, last))
}

enum Mapped {
    Sample(Sample),
    Refused(Refusal),
    NoNode,
    Missed,
    Later,
    /// A metric name outside the exposition format.
    BadName,
    Unknown(String),
}

/// One series' value as a rocetop sample.
fn map(m: &Labels, sampled: Sampled, h: &Header) -> Mapped {
    let k = match series(m, h) {
        Ok(k) => k,
        Err(e) => return e,
    };
    let raw = match sampled {
        Sampled::Value(raw) => raw,
        Sampled::Missed => return Mapped::Missed,
        Sampled::Later => return Mapped::Later,
    };
    match k.value(raw) {
        Ok(value) => Mapped::Sample(Sample { key: k.key, value }),
        Err(why) => Mapped::Refused(why),
    }
}

/// A series as rocetop keeps it, and how its values read.
struct Mine {
    key: SeriesKey,
    scale: f64,
    micros: bool,
    /// A level (dcgm-exporter's GPU gauges), not a count: kept as read.
    gauge: bool,
}

impl Mine {
    /// A value of it, or why it is refused.
    fn value(&self, raw: &str) -> Result<Value, Refusal> {
        // 2^64: the first value no u64 holds (`as u64` would saturate it to u64::MAX).
        const BEYOND_U64: f64 = 18_446_744_073_709_551_616.0;
        if self.gauge {
            return match raw.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(Value::Gauge(v * self.scale)),
                _ => Err(Refusal::NotACount),
            };
        }
        let v = match raw.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => (v * self.scale).round(),
            _ => return Err(Refusal::NotACount),
        };
        if v >= BEYOND_U64 {
            return Err(Refusal::Beyond);
        }
        let n = v as u64;
        Ok(if self.micros {
            Value::CounterMicros(n)
        } else {
            Value::Counter(n)
        })
    }
}

/// The rocetop series of an exporter's series, or why none.
fn series(m: &Labels, h: &Header) -> Result<Mine, Mapped> {
    let Some(name) = m.get("__name__") else {
        return Err(Mapped::Unknown("series without __name__".into()));
    };
    if !names::is_metric_name(name) {
        return Err(Mapped::BadName);
    }
    // Rocetop's own export already says `node`; an exporter's `node` label (rare) loses to the
    // configured node label.
    let ours = (Profile::of(name) == Some(Profile::Rocetop))
        .then(|| m.get("node"))
        .flatten();
    // The label the config names (the collector's header says it); `rocetop_node` only in a
    // text without that header (recordings from before it, when a `label_replace` filled it):
    // otherwise any exporter could name its series' node, and so a host to focus, by that label.
    let configured = || match h.node_label {
        Some(l) => m.get(l).map(strip_port),
        None => m
            .get(NODE_LABEL)
            .or_else(|| m.get("instance").map(strip_port)),
    };
    let Some(node) = ours
        .or_else(configured)
        .or_else(|| m.get("node"))
        .filter(|n| !n.is_empty())
    else {
        return Err(Mapped::NoNode);
    };
    let Some((metric, labels, scale)) = target(name, m) else {
        return Err(Mapped::Unknown(format!("{name}: not mapped")));
    };
    let mut l: Vec<(LabelName, &str)> = Vec::with_capacity(labels.len() + 1);
    l.push(("node", node));
    l.extend(labels);
    Ok(Mine {
        micros: is_pause_duration(&metric),
        gauge: metric.starts_with("rocetop_gpu_"),
        key: SeriesKey::new(metric, &l),
        scale,
    })
}

type Target<'a> = (String, Vec<(LabelName, &'a str)>, f64);

/// Pause time: kept in µs like the NIC's own counter, read back in seconds (metrics::Scale).
fn is_pause_duration(metric: &str) -> bool {
    metric == names::NIC_PFC_RX_PAUSE_DURATION || metric == names::NIC_PFC_TX_PAUSE_DURATION
}

/// The rocetop name, labels (besides `node`) and unit factor of one exporter series.
fn target<'a>(name: &'a str, m: &'a Labels) -> Option<Target<'a>> {
    let get = |k: &str| m.get(k);
    let rdma = |hw: &str| -> Option<Target<'a>> {
        Some((
            rdma_counter(hw),
            vec![("device", get("device")?), ("rdma_port", get("port")?)],
            1.0,
        ))
    };
    // dcgm-exporter: one series per GPU, `gpu` its index as nvidia-smi numbers it (the same
    // label the node dump gives), so the Overview's GPU columns read both alike.
    if name.starts_with("DCGM_FI_") {
        let metric = match name {
            "DCGM_FI_DEV_GPU_UTIL" => names::GPU_UTILIZATION_PERCENT,
            "DCGM_FI_DEV_POWER_USAGE" => names::GPU_POWER_WATTS,
            "DCGM_FI_DEV_XID_ERRORS" => names::GPU_LAST_XID,
            "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" => names::GPU_TENSOR_ACTIVE_RATIO,
            _ => return None,
        };
        return Some((metric.to_string(), vec![("gpu", get("gpu")?)], 1.0));
    }
    if let Some(rest) = name.strip_prefix("node_infiniband_") {
        let hw = match rest {
            "np_ecn_marked_roce_packets_received_total" => "np_ecn_marked_roce_packets",
            "np_cnp_packets_sent_total" => "np_cnp_sent",
            "rp_cnp_packets_handled_total" => "rp_cnp_handled",
            "rp_cnp_ignored_packets_received_total" => "rp_cnp_ignored",
            "out_of_sequence_packets_received_total" => "out_of_sequence",
            "packet_sequence_errors_total" => "packet_seq_err",
            "local_ack_timeout_errors_total" => "local_ack_timeout_err",
            _ => {
                let (hw, scale) = ib_port_counter(rest)?;
                let mut t = rdma(hw)?;
                t.2 = scale;
                return Some(t);
            }
        };
        return rdma(hw);
    }
    if let Some(rest) = name.strip_prefix("node_ethtool_") {
        let (dir, rest) = rest
            .strip_prefix("received_prio")
            .map(|r| ("rx", r))
            .or_else(|| rest.strip_prefix("transmitted_prio").map(|r| ("tx", r)))?;
        let (prio, kind) = rest.split_once('_')?;
        return pause(dir, kind, prio, get("device")?, 1.0);
    }
    if let Some(kind) = name
        .strip_prefix("rdma_roce_pfc_")
        .and_then(|r| r.strip_suffix("_total"))
    {
        let kind = if kind == "pause_frames" {
            "pause"
        } else {
            kind
        };
        return pause(
            get("direction")?,
            kind,
            get("priority")?,
            get("netdev")?,
            1.0,
        );
    }
    if let Some(hw) = name
        .strip_prefix("rdma_")
        .and_then(|r| r.strip_suffix("_total"))
    {
        return rdma(hw);
    }
    if names::rdma_counter_of(name).is_some() {
        return Some((
            name.to_string(),
            vec![("device", get("device")?), ("rdma_port", get("rdma_port")?)],
            1.0,
        ));
    }
    if name.starts_with("rocetop_nic_pfc_") {
        // rocetop's export says seconds; the store keeps pause time as the NIC counts it (µs).
        let scale = if is_pause_duration(name) { 1e6 } else { 1.0 };
        return Some((
            name.to_string(),
            vec![("netdev", get("netdev")?), ("priority", get("priority")?)],
            scale,
        ));
    }
    None
}

/// node_exporter's names of the IB port counters (`ports/<n>/counters/<file>`, every version
/// since 0.x: procfs `parseInfiniBandCounters`), as the sysfs file names rocetop's own sysfs reader
/// keeps (`rocetop_rdma_<file>_total`), with the factor back to the file's unit: procfs multiplies
/// `port_rcv_data`/`port_xmit_data` (4-byte words) by 4.
fn ib_port_counter(name: &str) -> Option<(&'static str, f64)> {
    Some(match name {
        "port_data_received_bytes_total" => ("port_rcv_data", 0.25),
        "port_data_transmitted_bytes_total" => ("port_xmit_data", 0.25),
        "port_packets_received_total" => ("port_rcv_packets", 1.0),
        "port_packets_transmitted_total" => ("port_xmit_packets", 1.0),
        "port_transmit_wait_total" => ("port_xmit_wait", 1.0),
        "port_errors_received_total" => ("port_rcv_errors", 1.0),
        "port_discards_received_total" => ("port_rcv_discards", 1.0),
        "port_discards_transmitted_total" => ("port_xmit_discards", 1.0),
        "port_constraint_errors_received_total" => ("port_rcv_constraint_errors", 1.0),
        "port_constraint_errors_transmitted_total" => ("port_xmit_constraint_errors", 1.0),
        "link_downed_total" => ("link_downed", 1.0),
        "link_error_recovery_total" => ("link_error_recovery", 1.0),
        "unicast_packets_received_total" => ("unicast_rcv_packets", 1.0),
        "unicast_packets_transmitted_total" => ("unicast_xmit_packets", 1.0),
        "multicast_packets_received_total" => ("multicast_rcv_packets", 1.0),
        "multicast_packets_transmitted_total" => ("multicast_xmit_packets", 1.0),
        _ => return None,
    })
}

/// A per-priority pause counter: frames, or duration in µs (what the store keeps).
fn pause<'a>(
    dir: &str,
    kind: &str,
    prio: &'a str,
    netdev: &'a str,
    scale: f64,
) -> Option<Target<'a>> {
    if prio.len() != 1 || !prio.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let metric = match (dir, kind) {
        ("rx", "pause") => names::NIC_PFC_RX_PAUSE,
        ("tx", "pause") => names::NIC_PFC_TX_PAUSE,
        ("rx", "pause_duration") => names::NIC_PFC_RX_PAUSE_DURATION,
        ("tx", "pause_duration") => names::NIC_PFC_TX_PAUSE_DURATION,
        _ => return None,
    };
    Some((
        metric.to_string(),
        vec![("netdev", netdev), ("priority", prio)],
        scale,
    ))
}

#[cfg(test)]
mod tests;
