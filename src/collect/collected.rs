//! What a collector sends: one poll of one source, parsed, with its raw outputs for recordings.
//! Every collector (exec polls, streams, log followers) and replay build it here, so none of
//! them imports another's loop.

use super::source::{Probe, Source};
use super::transport::CollectError;
use crate::metrics::store::SourceId;
use crate::metrics::{History, Parsed, Sample, Store, Ts};
use crate::parse::{self, ParseKind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub mod timing;

/// What one poll of one source produced.
#[derive(Clone, Debug)]
pub struct Collected {
    pub source: SourceId,
    /// When the answers were taken (midpoint of the poll), from the collector's clock.
    pub at: Ts,
    pub parsed: Parsed,
    /// Raw outputs, for recordings (replay parses them again) and the Log tab (a log
    /// follower's lines); `None` where its collector dropped them ([`KeepRaw`] off).
    pub raw: Option<Vec<(ParseKind, String)>>,
    /// Set when the source's main request failed: the source is down for this poll.
    pub error: Option<String>,
    /// Points before `at` that this poll brought (a fleet source's backfill from `query_range`),
    /// oldest first: the store takes them before the poll's own.
    pub history: History,
}

impl Collected {
    /// Put this poll into the store: samples, or a failure that leaves a gap.
    pub fn apply(&self, store: &mut Store) {
        match &self.error {
            None => {
                store.backfill(self.source, &self.history);
                store.ingest(self.source, self.at, &self.parsed)
            }
            Some(e) => store.fail(self.source, self.at, e),
        }
    }
}

/// Whether a set of collectors keeps its polls' raw outputs, shared with whoever records them.
/// Off, a poll's text is dropped in its collector once parsed: at 512 nodes a queue of first
/// polls carried ~33 KB of text each beside its parse. Log followers always keep theirs (their
/// raw outputs are the Log tab's lines).
#[derive(Clone, Debug, Default)]
pub struct KeepRaw(Arc<AtomicBool>);

impl KeepRaw {
    /// Every poll keeps its raw outputs (`rocetop record`).
    pub fn always() -> Self {
        let k = Self::default();
        k.set(true);
        k
    }

    /// Keep them from the next poll that finishes on (a recording starts), or stop keeping them.
    pub fn set(&self, keep: bool) {
        self.0.store(keep, Ordering::Relaxed);
    }

    pub fn is_on(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `c` as its collector sends it: without its raw outputs unless they are kept. (A poll that
    /// read the flag off before a recording started is not recorded: see `record::Writer::write`.)
    pub fn apply(&self, mut c: Collected) -> Collected {
        if !self.is_on() {
            c.raw = None;
        }
        c
    }
}

/// Parse raw outputs of a source as a poll would: used by polls and by replay.
pub fn parse_outputs(src: &Source, outputs: &[(ParseKind, String)]) -> Parsed {
    parse_outputs_with(src, outputs, &mut |_, kind, text, opts| {
        of_ports(&src.ports, parse::parse_with(kind, text, &src.ctx, opts))
    })
}

/// One output's parse: its index in the outputs, its kind and text, the source's options. It
/// must answer what `parse::parse_with` would, restricted by [`of_ports`] to the source's ports
/// (the streaming collector answers from its last parse where only counter values changed:
/// stream/delta.rs; a switch's memo keeps which of its samples the ports keep: poll/memo.rs).
pub(crate) type PartParser<'p> =
    dyn FnMut(usize, ParseKind, &str, &mut parse::Options) -> Parsed + 'p;

/// [`parse_outputs`], each output parsed by `part`.
pub(crate) fn parse_outputs_with(
    src: &Source,
    outputs: &[(ParseKind, String)],
    part: &mut PartParser<'_>,
) -> Parsed {
    let mut parsed = Parsed::default();
    let mut keeper = src.nic_memo.keeper(&src.nic_counters);
    for (i, (kind, text)) in outputs.iter().enumerate() {
        // A command that answered nothing is not "all zeros" and not "all fine" either: say so, so
        // the health bar explains why this source's numbers stopped moving. (A log with no new
        // lines is normal.)
        if text.trim().is_empty() && *kind != ParseKind::TrainingLog {
            parsed.note(format!("{}: empty output", kind.name()));
        }
        let mut opts = parse::Options {
            format_regex: src.format_regex.as_deref(),
            keeper: Some(&mut keeper),
        };
        let mut p = part(i, *kind, text, &mut opts);
        // A source's outputs share one count of lines not understood: its examples say whose.
        for e in &mut p.unknown_examples {
            e.insert_str(0, &format!("{}: ", kind.name()));
        }
        parsed.merge(p);
    }
    parsed
}

/// `parsed` with only the samples of the ports the user asked for (a `show interface ...` lists
/// every port of the switch); samples without a port, and every sample when `ports` is empty,
/// are kept.
pub(crate) fn of_ports(ports: &[String], mut parsed: Parsed) -> Parsed {
    if !ports.is_empty() {
        let keep = ports_keep(ports, &parsed.samples);
        let mut k = keep.iter();
        // `retain` visits each sample once, in order.
        parsed.samples.retain(|_| k.next().copied().unwrap_or(true));
    }
    parsed
}

/// Per sample, whether [`of_ports`] keeps it.
pub(crate) fn ports_keep(ports: &[String], samples: &[Sample]) -> Vec<bool> {
    // Samples come port by port: the last port's verdict answers most of them.
    let (mut last, mut last_keep) = (None::<&str>, false);
    samples
        .iter()
        .map(|s| {
            let Some(p) = s.key.label("port") else {
                return true;
            };
            if last != Some(p) {
                last_keep = ports.iter().any(|x| x == p);
                last = Some(p);
            }
            last_keep
        })
        .collect()
}

/// The history some raw outputs bring (a fleet source's backfill: `parse::prom_api::history`),
/// oldest first, with notes for what could not be read: used by polls and by replay.
pub fn history_of(raw: &[(ParseKind, String)]) -> (History, Vec<String>) {
    // A fleet source's poll is one text.
    match raw.iter().find(|(k, _)| *k == ParseKind::PromApi) {
        Some((_, text)) => parse::prom_api::history(text),
        None => (History::default(), Vec::new()),
    }
}

/// One poll's answers, parsed: what a poll (exec or stream) sends on. The first probe's failure
/// is the source's; the others' are notes.
pub(crate) fn collected(
    src: &Source,
    probes: &[Probe],
    results: Vec<Result<String, CollectError>>,
    at: Ts,
) -> Collected {
    collected_with(src, probes, results, at, &mut |_, kind, text, opts| {
        of_ports(&src.ports, parse::parse_with(kind, text, &src.ctx, opts))
    })
}

/// [`collected`], each answer parsed by `part`, which is given the index of its probe.
pub(crate) fn collected_with(
    src: &Source,
    probes: &[Probe],
    results: Vec<Result<String, CollectError>>,
    at: Ts,
    part: &mut PartParser<'_>,
) -> Collected {
    let mut raw = Vec::new();
    // The probe each raw output answers (a failed probe has none).
    let mut probe_of = Vec::new();
    let mut error = None;
    let mut side_errors = Vec::new();
    for (i, (probe, res)) in probes.iter().zip(results).enumerate() {
        match res {
            Ok(text) => {
                raw.push((probe.kind, text));
                probe_of.push(i);
            }
            Err(e) if i == 0 => error = Some(e.to_string()),
            Err(e) => side_errors.push(format!("{}: {e}", probe.kind.name())),
        }
    }
    if let (Some(d), Some((ParseKind::HwCounters, dump))) = (&src.discovery, raw.first()) {
        d.learn(dump);
    }
    let mut parsed = parse_outputs_with(src, &raw, &mut |i, kind, text, opts| {
        part(
            probe_of.get(i).copied().unwrap_or(usize::MAX),
            kind,
            text,
            opts,
        )
    });
    for e in side_errors {
        parsed.note(e);
    }
    let (history, notes) = history_of(&raw);
    for n in notes {
        parsed.note(n);
    }
    Collected {
        source: src.id,
        at,
        parsed,
        raw: Some(raw),
        error,
        history,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{SeriesKey, Value};

    #[test]
    fn only_the_ports_asked_for_and_samples_without_a_port_are_kept() {
        let s = |port: Option<&str>| Sample {
            key: match port {
                Some(p) => SeriesKey::new("sw_pfc_rx", &[("port", p), ("switch", "sw")]),
                None => SeriesKey::new("sw_up", &[("switch", "sw")]),
            },
            value: Value::Counter(1),
        };
        let parsed = Parsed {
            samples: vec![
                s(Some("e1")),
                s(Some("e1")),
                s(None),
                s(Some("e2")),
                s(Some("e1")),
            ],
            ..Parsed::default()
        };
        let ports = |p: &[&str]| p.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let of = |p: &[&str]| of_ports(&ports(p), parsed.clone()).samples;
        assert_eq!(of(&[]), parsed.samples);
        assert_eq!(
            of(&["e1"]),
            vec![s(Some("e1")), s(Some("e1")), s(None), s(Some("e1"))]
        );
        assert_eq!(of(&["e2", "x"]), vec![s(None), s(Some("e2"))]);
    }
}
