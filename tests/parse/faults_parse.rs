//! Fault suite: bad outputs of every parse kind, and counters that
//! reset, wrap or arrive twice, through `poll::parse_outputs` and the `Store` as a live poll puts
//! them there. No panic; lines not understood are counted; a bad poll never writes zeros over
//! the last good values; rates stay within what the counters really grew.

use crate::inputs;

use inputs::{good_outputs, poll, source, store_with};
use rocetop::collect::poll::parse_outputs;
use rocetop::metrics::store::SourceId;
use rocetop::metrics::{Parsed, SeriesKey, Store, Value};
use rocetop::parse::ParseKind;
use std::collections::HashMap;

fn latest_values(st: &Store) -> HashMap<SeriesKey, Value> {
    st.all()
        .filter_map(|(_, s)| s.latest(st).map(|(_, v)| (s.key.clone(), v)))
        .collect()
}

/// Deterministic junk bytes (xorshift), as a broken pipe or a binary file would send.
fn junk(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// The bad outputs every kind is fed, by name. Each has non-blank lines except "empty" and "blank".
fn bad_outputs() -> Vec<(&'static str, String)> {
    vec![
        ("empty", String::new()),
        ("blank", "\n  \r\n\t\n".into()),
        (
            "garbage text",
            "%% Invalid command at '^' marker.\nlorem ipsum 12 34 dolor\n@@@ ### ~~~\n".into(),
        ),
        (
            "binary",
            String::from_utf8_lossy(&junk(64 << 10, 7)).into_owned(),
        ),
        ("NULs", "\0\0\0\n\0 12 \0\n".into()),
        (
            "json garbage",
            r#"{"jsonrpc": "2.0", "result": [{"unexpected": [1, 2, {"deep": null}]}]}"#.into(),
        ),
        (
            "cut json",
            r#"{"result": [{"interfaceCounters": {"Eth"#.into(),
        ),
    ]
}

/// Kinds whose input is free text by nature: lines they do not understand are notes, not unknown.
fn free_text(kind: ParseKind) -> bool {
    kind == ParseKind::TrainingLog
}

#[tokio::test]
async fn garbage_after_a_good_poll_keeps_the_good_values_and_counts_the_lines() {
    let good = good_outputs().await;
    assert_eq!(good.len(), 16, "one good output per kind");
    for (kind, text) in &good {
        for (what, bad) in bad_outputs() {
            let mut st = store_with(*kind);
            poll(*kind, text, 1_000).apply(&mut st);
            let before = latest_values(&st);
            assert!(!before.is_empty(), "{kind:?}: the good output gave samples");
            let c = poll(*kind, &bad, 2_000);
            c.apply(&mut st);
            let after = latest_values(&st);
            assert_eq!(
                before, after,
                "{kind:?} {what}: a bad output changed or added series: {:?}",
                c.parsed.samples
            );
            for (_, s) in st.all() {
                assert_eq!(s.len(&st), 1, "{kind:?} {what}: {} got a point", s.key);
            }
            let h = st.source(SourceId(0)).expect("source");
            let has_lines = bad.lines().any(|l| !l.trim().is_empty());
            if has_lines && !free_text(*kind) {
                assert!(
                    h.unknown_lines > 0,
                    "{kind:?} {what}: nothing counted as not understood"
                );
            }
            if !has_lines && !free_text(*kind) {
                assert!(
                    h.notes.iter().any(|n| n.contains("empty output")),
                    "{kind:?} {what}: an empty answer is said: {:?}",
                    h.notes
                );
            }
        }
    }
}

/// Truncated outputs (a connection cut mid-answer): at a line boundary the lines that arrived
/// read exactly as in the whole output; cut mid-line, no counter reads 0 where it was not, and
/// nothing panics.
#[tokio::test]
async fn truncated_outputs_give_a_subset_never_zeros() {
    for (kind, text) in good_outputs().await {
        let whole = parse_outputs(&source(kind), &[(kind, text.clone())]);
        let want: HashMap<SeriesKey, Value> = whole
            .samples
            .iter()
            .map(|s| (s.key.clone(), s.value))
            .collect();
        let bounds: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
        // Every line boundary for short outputs, about 40 of them for long ones.
        let step = (bounds.len() / 40).max(1);
        for &cut in bounds.iter().step_by(step) {
            let p = parse_outputs(&source(kind), &[(kind, text[..cut].to_string())]);
            if kind.name().starts_with("eos-") && !text[..cut].trim_end().ends_with('}') {
                continue; // cut JSON is one document that does not parse (checked below)
            }
            for s in &p.samples {
                let w = want.get(&s.key);
                // Training logs and ping reports carry a line's own value; a cut before a later
                // line of the same series leaves the earlier value, which is right.
                if free_text(kind) || kind == ParseKind::Ping {
                    continue;
                }
                // (A key the whole output does not have is a fallback label, e.g. a node's
                // RDMA bytes named by device when the cut lost the netdev line.)
                let Some(w) = w else { continue };
                assert_eq!(
                    w, &s.value,
                    "{kind:?} cut at byte {cut}: {} differs from the whole output",
                    s.key
                );
            }
        }
        let chars: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        let step = (chars.len() / 60).max(1);
        for &cut in chars.iter().step_by(step) {
            let p = parse_outputs(&source(kind), &[(kind, text[..cut].to_string())]);
            for s in &p.samples {
                if let (Some(Value::Counter(w) | Value::Counter32(w)), Value::Counter(0)) =
                    (want.get(&s.key), s.value)
                {
                    assert_eq!(*w, 0, "{kind:?} cut at {cut}: {} read as 0", s.key);
                }
            }
        }
    }
}

/// Enormous answers (a runaway command, `cat` of a core file): 50 MB for one text table, one
/// JSON and the sysfs dump; 4 MB for every kind (the debug build parses slowly). No
/// panic, counted, bounded examples, the good values kept.
#[tokio::test]
async fn enormous_outputs_are_read_without_panic() {
    const MB: usize = 1 << 20;
    let blob = |n: usize| String::from_utf8_lossy(&junk(n, 99)).into_owned();
    let lines = |n: usize| "Ethernet1/1/1 xx 12 yy 34 zz\n".repeat(n / 29);
    // (The training log's line parser reads a 50 MB log in ~150 s in a debug build under load;
    // the follower reads logs in increments, so 4 MB is what one poll could bring.)
    let fifty = [
        ParseKind::NxosQueuing,
        ParseKind::EosPfc,
        ParseKind::HwCounters,
    ];
    let good = good_outputs().await;
    for (kind, text) in &good {
        let n = if fifty.contains(kind) {
            50 * MB
        } else {
            4 * MB
        };
        for (what, big) in [("binary", &blob(n)), ("lines", &lines(n))] {
            let t0 = std::time::Instant::now();
            let mut st = store_with(*kind);
            poll(*kind, text, 1_000).apply(&mut st);
            let before = latest_values(&st);
            poll(*kind, big, 2_000).apply(&mut st);
            assert_eq!(before, latest_values(&st), "{kind:?} {what}");
            let h = st.source(SourceId(0)).expect("source");
            if !free_text(*kind) {
                assert!(h.unknown_lines > 0, "{kind:?} {what}");
                assert!(h.unknown_examples.len() <= Parsed::MAX_EXAMPLES);
                assert!(
                    h.unknown_examples.iter().all(|e| e.len() <= 1024),
                    "{kind:?} {what}: examples are bounded in size"
                );
            }
            // A figure, not a bound (timings are for benchmarks): linear cost shows here.
            eprintln!(
                "{kind:?} {what}: {} MB in {:?}",
                big.len() >> 20,
                t0.elapsed()
            );
        }
    }
}

/// Writes the good outputs as fuzz seeds (fuzz/seeds/parse_<kind>/good): run by hand with
/// `cargo test --test parse -- --ignored write_fuzz_seeds` when a parser learns a layout.
#[tokio::test]
#[ignore = "a tool, not a test: writes fuzz seeds when run by hand"]
async fn write_fuzz_seeds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    for (kind, text) in good_outputs().await {
        let dir = root.join(format!("parse_{}", kind.name().replace('-', "_")));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("good"), text).expect("write");
    }
}

/// Every parse kind, for the proptest.
const KINDS: [ParseKind; 28] = [
    ParseKind::NxosQueuing,
    ParseKind::NxosPfc,
    ParseKind::NxosFlowcontrol,
    ParseKind::NxosInterface,
    ParseKind::SonicPfc,
    ParseKind::SonicQueue,
    ParseKind::SonicWred,
    ParseKind::EosPfc,
    ParseKind::EosQueue,
    ParseKind::EosEcn,
    ParseKind::EosInterface,
    ParseKind::RdmaStatistic,
    ParseKind::HwCounters,
    ParseKind::Ethtool,
    ParseKind::TrainingLog,
    ParseKind::Ping,
    ParseKind::LldpNeighbors,
    ParseKind::Lldpctl,
    ParseKind::HostQos,
    ParseKind::SonicPfcwd,
    ParseKind::NxosPfcwd,
    ParseKind::NxosMtu,
    ParseKind::SonicQos,
    ParseKind::NxosQos,
    ParseKind::EosQos,
    ParseKind::PromApi,
    ParseKind::GpuQuery,
    ParseKind::GpuTopo,
];

#[test]
fn kinds_list_is_complete() {
    use clap::ValueEnum;
    assert_eq!(ParseKind::value_variants(), &KINDS[..]);
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config::with_cases(256))]

    /// Arbitrary bytes and structured-looking text through `parse::parse` for every kind, then
    /// into a store twice: no panic, bounded examples, finite gauges, no rate between equal polls.
    #[test]
    fn every_kind_survives_arbitrary_input(
        k in 0..KINDS.len(),
        bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2000),
        text in "([A-Za-z0-9_/:.,|{}\\[\\]\" -]{0,40}\n){0,30}",
    ) {
        for input in [String::from_utf8_lossy(&bytes).into_owned(), text] {
            let kind = KINDS[k];
            let p = rocetop::parse::parse(kind, &input, &rocetop::parse::Ctx::named("p"));
            proptest::prop_assert!(p.unknown_examples.len() <= Parsed::MAX_EXAMPLES);
            for s in &p.samples {
                if let Value::Gauge(v) = s.value {
                    proptest::prop_assert!(v.is_finite(), "{} = {}", s.key, v);
                }
            }
            let mut st = store_with(kind);
            for at in [1_000, 2_000] {
                st.ingest(SourceId(0), at, &p);
            }
            let ids: Vec<_> = st.all().map(|(id, _)| id).collect();
            for id in ids {
                if let Some(r) = st.rate(id).and_then(|r| r.value()) {
                    proptest::prop_assert!(r == 0.0, "rate {} between equal polls", r);
                }
            }
        }
    }
}
