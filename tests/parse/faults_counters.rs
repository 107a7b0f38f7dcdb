//! Fault suite: counter resets (driver reload, `clear counters`), 32-bit
//! wraps, duplicate timestamps and hosts whose clocks are off, through the real parsers and the
//! store (rate.rs has the unit tests; these prove the path from device text to a rate on screen).

use crate::inputs;

use async_trait::async_trait;
use inputs::{good_outputs, source, store_with};
use rocetop::collect::poll::poll_once;
use rocetop::collect::source::Probe;
use rocetop::collect::transport::{CollectError, Request, Transport};
use rocetop::metrics::rate::Rate;
use rocetop::metrics::store::{Kind, SourceId};
use rocetop::metrics::{Store, now_ms};
use rocetop::parse::ParseKind;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A device output with every counter-sized number (≥ `min`, standing alone: not part of a
/// port name; `1,234` grouped or not) replaced by a function of itself, so one capture plays
/// several polls.
struct Template {
    parts: Vec<String>,
    values: Vec<u64>,
    grouped: Vec<bool>,
}

const BIG: u64 = 10_000;

/// `1234567` as `1,234,567`.
fn group(v: u64) -> String {
    let d = v.to_string();
    let mut out = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Template {
    fn new(text: &str) -> Template {
        Template::with_min(text, BIG)
    }

    fn with_min(text: &str, min: u64) -> Template {
        let b = text.as_bytes();
        let (mut parts, mut values, mut grouped) = (vec![String::new()], Vec::new(), Vec::new());
        let mut i = 0;
        while i < b.len() {
            let boundary_before =
                i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b':' | b'"' | b'|');
            if b[i].is_ascii_digit() && boundary_before {
                let mut j = i + b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
                // Thousands groups: `,ddd` not followed by another digit.
                while j + 4 <= b.len()
                    && b[j] == b','
                    && b[j + 1..j + 4].iter().all(u8::is_ascii_digit)
                    && b.get(j + 4).is_none_or(|c| !c.is_ascii_digit())
                {
                    j += 4;
                }
                let after_ok = j == b.len()
                    || matches!(
                        b[j],
                        b' ' | b'\t' | b'\r' | b'\n' | b'"' | b',' | b'}' | b'|'
                    );
                let v: Option<u64> = text[i..j].replace(',', "").parse().ok();
                if let (true, Some(v)) = (after_ok, v.filter(|v| *v >= min)) {
                    values.push(v);
                    grouped.push(text[i..j].contains(','));
                    parts.push(String::new());
                    i = j;
                    continue;
                }
                parts.last_mut().expect("part").push_str(&text[i..j]);
                i = j;
                continue;
            }
            let ch = text[i..].chars().next().expect("char");
            parts.last_mut().expect("part").push(ch);
            i += ch.len_utf8();
        }
        Template {
            parts,
            values,
            grouped,
        }
    }

    fn render(&self, f: impl Fn(u64) -> u64) -> String {
        let mut s = self.parts[0].clone();
        for ((v, g), p) in self.values.iter().zip(&self.grouped).zip(&self.parts[1..]) {
            s.push_str(&if *g { group(f(*v)) } else { f(*v).to_string() });
            s.push_str(p);
        }
        s
    }
}

fn apply(st: &mut Store, kind: ParseKind, text: String, at: i64) {
    inputs::poll(kind, &text, at).apply(st);
}

/// Rates of every counter over the newest interval.
fn rates(st: &Store) -> Vec<(String, Option<Rate>)> {
    st.all()
        .filter(|(_, s)| matches!(s.kind(), Kind::Counter(_)))
        .map(|(id, s)| (s.key.to_string(), st.rate(id)))
        .collect()
}

/// The real growth per second of a templated counter is 500; a parser may sum or scale a few
/// of them (4 × port_xmit_data words, DP0 + DP1), so a rate is k × 500 for a small k.
fn assert_real_growth(kind: ParseKind, phase: &str, r: &[(String, Option<Rate>)]) -> usize {
    let mut moving = 0;
    for (key, rate) in r {
        let v = match rate {
            Some(Rate::PerSec(v)) => *v,
            other => panic!("{kind:?} {phase}: {key} has {other:?}, not a rate"),
        };
        // Pause time is counted in µs and read in seconds (a fraction of each second): back to
        // the counter's own growth for the comparison.
        let v = if key.contains("_pause_duration_seconds_total") {
            (v * 1e6).round()
        } else {
            v
        };
        let k = v / 500.0;
        assert!(
            v >= 0.0 && (k - k.round()).abs() < 1e-9 && k <= 16.0,
            "{kind:?} {phase}: {key} = {v}/s is not the counters' real growth"
        );
        moving += usize::from(v > 0.0);
    }
    moving
}

/// Kinds that count, with the smallest number of their capture that is a counter (smaller ones
/// may be labels: qos-group 3, priority 3).
const COUNTING: [(ParseKind, u64); 12] = [
    (ParseKind::NxosQueuing, BIG),
    (ParseKind::NxosPfc, BIG),
    (ParseKind::NxosInterface, BIG),
    (ParseKind::SonicPfc, 100),
    (ParseKind::SonicQueue, 10),
    (ParseKind::SonicWred, 10),
    (ParseKind::EosPfc, 1),
    (ParseKind::EosQueue, BIG),
    (ParseKind::EosInterface, BIG),
    (ParseKind::HwCounters, BIG),
    (ParseKind::Ethtool, BIG),
    (ParseKind::RdmaStatistic, BIG),
];

#[tokio::test]
async fn clear_counters_is_a_reset_mark_then_rates_resume() {
    let good = good_outputs().await;
    for (kind, min) in COUNTING {
        let text = &good.iter().find(|(k, _)| *k == kind).expect("good").1;
        let text = if kind == ParseKind::RdmaStatistic {
            // The capture's counters are all 0: give them values (both layouts).
            text.replace(" 0\n", " 123456\n")
                .replace(" 0 ", " 123456 ")
                .replace("\n0 ", "\n123456 ")
        } else {
            text.clone()
        };
        let t = Template::with_min(&text, min);
        assert!(!t.values.is_empty(), "{kind:?}: capture has big counters");
        let mut st = store_with(kind);
        apply(&mut st, kind, t.render(|v| v), 1_000);
        apply(&mut st, kind, t.render(|v| v + 500), 2_000);
        let moving = assert_real_growth(kind, "before", &rates(&st));
        assert!(moving > 0, "{kind:?}: some counter moved");
        // `clear counters` / driver reload: every big counter restarts near zero.
        apply(&mut st, kind, t.render(|v| (v + 500) / 1000), 3_000);
        let after = rates(&st);
        let resets = after
            .iter()
            .filter(|(_, r)| *r == Some(Rate::Reset))
            .count();
        assert!(
            resets >= moving,
            "{kind:?}: {resets} resets marked, {moving} moved"
        );
        for (key, r) in &after {
            match r {
                Some(Rate::Reset) => {}
                Some(Rate::PerSec(v)) => assert!(*v == 0.0, "{kind:?}: {key} {v}/s across a reset"),
                other => panic!("{kind:?}: {key} {other:?}"),
            }
        }
        // The next interval counts again from the cleared values.
        apply(&mut st, kind, t.render(|v| (v + 500) / 1000 + 500), 4_000);
        assert_real_growth(kind, "after", &rates(&st));
    }
}

#[tokio::test]
async fn mlx5_32bit_counters_wrap_into_a_small_rate() {
    let good = good_outputs().await;
    let dump = &good
        .iter()
        .find(|(k, _)| *k == ParseKind::HwCounters)
        .expect("dump")
        .1;
    // The demo's out_of_sequence (a 32-bit q counter) near 2^32, then past it.
    let line = dump
        .lines()
        .find(|l| l.contains("hw_counters/out_of_sequence:"))
        .expect("out_of_sequence line");
    let path = line.rsplit_once(':').expect("path:value").0;
    let near = u64::from(u32::MAX) - 199;
    let with = |v: u64| format!("{dump}\n{path}:{v}\n").replace(line, "");
    let mut st = store_with(ParseKind::HwCounters);
    apply(&mut st, ParseKind::HwCounters, with(near), 1_000);
    apply(&mut st, ParseKind::HwCounters, with(300), 3_000);
    let (id, s) = st
        .all()
        .find(|(_, s)| s.key.name.ends_with("out_of_sequence_total") && s.len(&st) == 2)
        .expect("series");
    assert_eq!(s.kind(), Kind::Counter(rocetop::metrics::rate::Width::W32));
    // 200 to the wrap, 300 after it, over 2 s.
    assert_eq!(st.rate(id), Some(Rate::PerSec(250.0)));
}

#[tokio::test]
async fn duplicate_timestamps_never_give_infinite_or_doubled_rates() {
    let good = good_outputs().await;
    let kind = ParseKind::NxosPfc;
    let t = Template::new(&good.iter().find(|(k, _)| *k == kind).expect("pfc").1);
    // The truth: each poll delivered once.
    let once = |second: u64| {
        let mut st = store_with(kind);
        apply(&mut st, kind, t.render(|v| v), 1_000);
        apply(&mut st, kind, t.render(|v| v + second), 2_000);
        rates(&st)
    };
    let mut st = store_with(kind);
    apply(&mut st, kind, t.render(|v| v), 1_000);
    // The same poll delivered twice (a replay of a doubled record, two answers in one ms).
    apply(&mut st, kind, t.render(|v| v + 500), 2_000);
    apply(&mut st, kind, t.render(|v| v + 500), 2_000);
    let dup = rates(&st);
    assert_real_growth(kind, "dup", &dup);
    assert_eq!(dup, once(500), "a doubled poll changes no rate");
    assert!(
        dup.iter().any(|(_, r)| *r == Some(Rate::PerSec(500.0))),
        "the moving counters read exactly 500/s: {dup:?}"
    );
    // Same timestamp, newer value: the newer one stands, still no zero-length interval.
    apply(&mut st, kind, t.render(|v| v + 1000), 2_000);
    let newer = rates(&st);
    assert_eq!(newer, once(1000), "the newer answer of that instant stands");
    // An answer stamped earlier than the last (collector clock stepped back): dropped, counted.
    apply(&mut st, kind, t.render(|v| v + 9_000_000), 1_500);
    assert!(st.stats().dropped_out_of_order > 0);
    assert_eq!(rates(&st), newer, "the stepped-back answer changed nothing");
}

/// A host whose clock is 5 minutes ahead prints its own time in what it answers; rocetop stamps
/// samples with the collector's clock, so rates and staleness are right regardless.
#[derive(Debug)]
struct SkewedHost {
    polls: AtomicU64,
}

#[async_trait]
impl Transport for SkewedHost {
    async fn run(&self, req: &Request, _timeout: Duration) -> Result<String, CollectError> {
        let n = self.polls.fetch_add(1, Ordering::SeqCst);
        let host_ms = now_ms() + 5 * 60_000;
        let Request::Cli(_) = req else {
            return Err(CollectError::Unavailable("cli only".into()));
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        Ok(format!(
            "Time: {host_ms}\n\n\
             ============================================================\n\
             Port               Mode Oper(VL bmap)  RxPPP      TxPPP\n\
             ============================================================\n\n\
             Ethernet1/1/1      On   On     (8)      {}   {}\n",
            1_000_000 + 1000 * n,
            2_000_000 + 3000 * n
        ))
    }
    fn describe(&self) -> String {
        "skewed".into()
    }
}

#[tokio::test]
async fn a_host_clock_five_minutes_off_does_not_bend_rates() {
    let mut src = source(ParseKind::NxosPfc);
    src.transport = Arc::new(SkewedHost {
        polls: AtomicU64::new(0),
    });
    src.probes = vec![Probe {
        kind: ParseKind::NxosPfc,
        request: Request::Cli("show interface priority-flow-control".into()),
    }];
    let mut st = store_with(ParseKind::NxosPfc);
    let mut ats = Vec::new();
    for _ in 0..3 {
        let before = now_ms();
        let c = poll_once(&src).await;
        let after = now_ms();
        assert_eq!(c.error, None);
        assert!((before..=after).contains(&c.at), "stamped by the collector");
        ats.push(c.at);
        c.apply(&mut st);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (id, s) = st
        .all()
        .find(|(_, s)| s.key.name == rocetop::metrics::names::SW_PFC_RX)
        .expect("rx series");
    assert_eq!(s.len(&st), 3);
    let want = 1000.0 * 1000.0 / (ats[2] - ats[1]) as f64;
    let got = st.rate(id).and_then(Rate::value).expect("rate");
    assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    let h = st.source(SourceId(0)).expect("health");
    assert!(!h.is_stale(now_ms()), "not stale (nor 5 minutes old)");
    assert!(h.age_ms(now_ms()).is_some_and(|a| (0..5_000).contains(&a)));
}
