//! Training-log parsers on every fixture of tests/fixtures/training (exact numbers), and on the
//! shapes real logs take: glued lines, MPI / torchrun prefixes, interleaved ranks, CRLF, scientific
//! notation, custom formats, highlight classes; plus a no-panic proptest.

use proptest::prelude::*;
use rocetop::metrics::{Value, names};
use rocetop::parse::training::{CustomFormat, Highlight, LineParser, TrainRecord, parse_text};

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/training/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn records_with(p: &mut LineParser, text: &str) -> Vec<TrainRecord> {
    let mut out = Vec::new();
    for line in text.split_inclusive('\n') {
        out.extend(p.feed(line).records);
    }
    out.extend(p.flush());
    out
}

fn records(text: &str) -> Vec<TrainRecord> {
    records_with(&mut LineParser::new(Vec::new()), text)
}

fn near(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() <= 1e-9 * b.abs().max(1.0))
}

#[track_caller]
fn assert_near(a: Option<f64>, b: f64) {
    assert!(near(a, b), "{a:?} != {b}");
}

/// Records of a fixture, and the fixture parsed whole has no unknown lines and no note.
fn fixture_records(name: &str) -> Vec<TrainRecord> {
    let text = fixture(name);
    let parsed = parse_text(&text, "node1", "train.log");
    assert_eq!(parsed.unknown_lines, 0, "{name}");
    assert!(parsed.notes.is_empty(), "{name}: {:?}", parsed.notes);
    records(&text)
}

#[test]
fn seed_formats() {
    let r = fixture_records("synthetic-seed-formats.log");
    assert_eq!(r.len(), 12, "{r:#?}");
    // Iteration N | Loss | AllReduce | Total (= step time)
    assert_eq!(r[1].iteration, Some(10));
    assert_eq!(r[1].loss, Some(2.3045));
    assert_near(r[1].allreduce_seconds, 0.0452);
    assert_near(r[1].step_seconds, 0.1563);
    assert_eq!(r[2].iteration, Some(20));
    assert_near(r[2].allreduce_seconds, 0.0487);
    // Batch N, Loss, Speed: N samples/sec, Time
    assert_eq!((r[5].iteration, r[5].loss), (Some(20), Some(3.1234)));
    assert_eq!(r[5].samples_per_second, Some(412.0));
    assert_near(r[5].step_seconds, 0.078);
    assert_eq!(r[5].allreduce_seconds, None);
    // [Epoch 1] Average Loss (Epoch Time and Batches are not steps)
    assert_eq!(
        (r[6].epoch, r[6].loss, r[6].iteration),
        (Some(1.0), Some(2.9876), None)
    );
    assert_eq!(r[6].step_seconds, None);
    // Epoch a/b, Loss
    assert_eq!((r[9].epoch, r[9].loss), (Some(3.0), Some(2.741)));
    // Epoch a/b, Step n, Loss
    assert_eq!(
        (r[11].epoch, r[11].iteration, r[11].loss),
        (Some(1.0), Some(2), Some(3.0234))
    );
}

#[test]
fn seed_arrow_lines_are_understood() {
    let mut p = LineParser::new(Vec::new());
    let out = p.feed("  → All 8 servers exchanging ~150.5MB gradients");
    assert!(out.recognised && out.records.is_empty());
    assert_eq!(out.highlight, Highlight::None);
}

#[test]
fn megatron_lm_iteration_and_timer_lines() {
    let r = fixture_records("megatron-lm_bigscience_n16_tp4pp16_excerpt.log");
    assert_eq!(r.len(), 4);
    let want = [
        (1, 150.8917, 27.34 + 4236.02),
        (2, 123.8963, 27.33 + 4207.05),
        (3, 124.3622, 26.84 + 4213.17),
        (4, 122.2240, 18.09 + 4209.37),
    ];
    for (rec, (it, step, ar_ms)) in r.iter().zip(want) {
        assert_eq!(rec.iteration, Some(it));
        assert_near(rec.step_seconds, step);
        assert_near(rec.allreduce_seconds, ar_ms / 1e3);
        // skipped iterations print no loss: missing stays missing
        assert_eq!(rec.loss, None);
        assert_eq!(rec.samples_per_second, None);
    }
}

#[test]
fn megatron_deepspeed_log_dist_timers_and_iteration() {
    let r = fixture_records("megatron-deepspeed_alcf-polaris_log-dist-timers_excerpt.log");
    assert_eq!(r.len(), 2, "{r:#?}");
    assert_eq!((r[0].iteration, r[0].rank), (Some(1), Some(0)));
    assert_near(r[0].step_seconds, 21.1338);
    assert_eq!(r[0].loss, Some(1.119983e1));
    assert_eq!(r[0].samples_per_second, Some(1.514));
    // the global `bwd_allreduce` (44.66), not the micro-step one (44.65)
    assert_near(r[0].allreduce_seconds, 0.04466);
    assert_eq!(r[1].iteration, Some(2));
    assert_near(r[1].step_seconds, 10.1543);
    assert_eq!(r[1].loss, Some(1.766422e1));
    assert_near(r[1].allreduce_seconds, 0.04271);
    assert_eq!(r[1].samples_per_second, Some(3.151));
}

#[test]
fn megatron_deepspeed_key_value_iteration_line() {
    let r = fixture_records("megatron-deepspeed_alcf-polaris_kv-iteration_excerpt.log");
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].iteration, r[0].loss, r[0].rank),
        (Some(1), Some(11.133188), Some(0))
    );
    assert_near(r[0].step_seconds, 108.8932);
    assert_near(r[0].allreduce_seconds, 1.95554);
    assert_eq!(r[0].samples_per_second, Some(7.053));
}

#[test]
fn hf_trainer_dicts() {
    let r = fixture_records("hf-trainer_llama-3.2-1b_ezpz-aurora_excerpt.log");
    // ten logging steps, printed by two ranks; `train_runtime` dicts and the metrics tables are not steps
    assert_eq!(r.len(), 20);
    let losses = [
        2.847, 2.9574, 3.1086, 2.9751, 3.0095, 2.9153, 2.8742, 3.2855, 2.9934, 2.8064,
    ];
    for (i, rec) in r.iter().enumerate() {
        assert_eq!(rec.loss, Some(losses[i % 10]), "record {i}");
        assert_near(rec.epoch, (i % 10 + 1) as f64 / 10.0);
        assert_eq!(
            (rec.iteration, rec.step_seconds, rec.samples_per_second),
            (None, None, None)
        );
    }
    let mut p = LineParser::new(Vec::new());
    let out = p.feed("{'train_runtime': 12.4474, 'train_samples_per_second': 154.249, 'train_loss': 2.977239990234375, 'epoch': 1.0}");
    assert!(out.recognised && out.records.is_empty());
}

#[test]
fn hf_trainer_with_deepspeed_log_dist() {
    let r = fixture_records("deepspeed_hf-trainer_fate-gpt2_log-dist-timer_excerpt.log");
    assert_eq!(r.len(), 11, "{r:#?}");
    assert_eq!((r[0].loss, r[0].epoch), (Some(2.075), Some(0.04)));
    // `[Rank 0] step=10` completed by its `timer.py` line
    assert_eq!((r[1].iteration, r[1].rank), (Some(10), Some(0)));
    assert_eq!(r[1].samples_per_second, Some(111.33670009091573));
    assert_eq!(r[1].loss, None);
    assert_eq!((r[2].loss, r[2].epoch), (Some(0.8091), Some(0.08)));
    assert_eq!(
        (r[10].iteration, r[10].samples_per_second),
        (Some(40), Some(109.53330286609649))
    );
}

#[test]
fn pytorch_ddp_ezpz() {
    let r = fixture_records("pytorch-ddp_ezpz-test_iter-loss-dtf-dtb_excerpt.log");
    assert_eq!(r.len(), 19);
    assert_eq!((r[0].iteration, r[0].loss), (Some(10), Some(1.156702)));
    // no explicit step time: dtf + dtb
    assert_near(r[0].step_seconds, 0.006740 + 0.002168);
    assert_eq!((r[18].iteration, r[18].loss), (Some(190), Some(0.143928)));
    assert_near(r[18].step_seconds, 0.008190 + 0.001721);
}

/// The Hugging Face Trainer of transformers 5.23 (captured by scripts/frameworks.sh): log dicts
/// with quoted `{v:.4g}` values and no step, each written over the tqdm bar that names its step
/// when it is redrawn right after.
#[test]
fn hf_trainer_5_dicts_take_their_step_from_the_bar_redrawn_after_them() {
    let r = fixture_records("hf-trainer_transformers-5.23_cpu-tqdm-bars_frameworks-sh.log");
    assert_eq!(r.len(), 32, "{r:#?}");
    for (k, pair) in r.chunks(2).enumerate() {
        let (dict, bar) = (pair[0], pair[1]);
        assert!(dict.loss.is_some() && dict.iteration.is_none(), "{dict:?}");
        assert_near(dict.epoch, (k + 1) as f64 / 16.0);
        assert_eq!(bar.iteration, Some(k as u64 + 1), "{bar:?}");
        assert!(!bar.has_progress());
    }
    assert_eq!((r[0].loss, r[30].loss), (Some(4.716), Some(4.096)));
    assert!(
        r.iter().all(|r| r.step_seconds.is_none()),
        "a tqdm rate is no step time"
    );
}

/// torchrun --tee 3 around a DDP script printing nanoGPT's line (scripts/frameworks.sh): each
/// rank's lines under torchrun's `[default<rank>]:` prefix.
#[test]
fn torchrun_tee_prefix_names_the_rank() {
    let r = fixture_records("torchrun-ddp-gloo_tee-default-prefix_nanogpt-line_frameworks-sh.log");
    assert_eq!(r.len(), 40);
    for (i, rec) in r.iter().enumerate() {
        assert_eq!(rec.rank, Some(i as u32 / 20), "{rec:?}");
        assert_eq!(rec.iteration, Some(i as u64 % 20 + 1));
    }
    assert_eq!(r[0].loss, Some(2.280957));
    assert_near(r[0].step_seconds, 0.015091);
    assert_eq!(r[39].loss, Some(2.324229));
    assert_near(r[39].step_seconds, 0.012196);
}

#[test]
fn nccl_tests_table() {
    let r = fixture_records("nccl-tests_all-reduce-perf_aws-efa-eks_mpi-tagged_excerpt.log");
    // one record per table: the out-of-place time of the largest size (4 GiB: 183834 µs)
    assert_eq!(r.len(), 1, "{r:#?}");
    assert_near(r[0].allreduce_seconds, 0.183834);
    assert_eq!(r[0].rank, Some(0));
    assert_eq!((r[0].iteration, r[0].samples_per_second), (None, None));
}

#[test]
fn samples_have_labels_and_only_printed_fields() {
    let text = fixture("megatron-lm_bigscience_n16_tp4pp16_excerpt.log");
    let p = parse_text(&text, "ubunturdma1", "~/training.log");
    let labels = [("node", "ubunturdma1"), ("log", "~/training.log")];
    assert_eq!(
        p.find(names::TRAIN_ITERATION, &labels),
        Some(Value::Gauge(1.0))
    );
    assert!(p.find(names::TRAIN_ALLREDUCE_SECONDS, &labels).is_some());
    assert_eq!(p.find(names::TRAIN_LOSS, &[]), None);
    assert_eq!(p.find(names::TRAIN_SAMPLES_PER_SECOND, &[]), None);
    assert_eq!(p.samples.len(), 4 * 3);

    let p = parse_text("[1,3]<stdout>:iter=5 loss=0.5", "n", "l");
    assert_eq!(
        p.find(names::TRAIN_LOSS, &[("rank", "3")]),
        Some(Value::Gauge(0.5))
    );
}

#[test]
fn free_text_gets_a_note_not_unknown_lines() {
    let p = parse_text("hello\nSaving checkpoint at step 5\n\n", "n", "l");
    assert!(p.samples.is_empty());
    assert_eq!(p.unknown_lines, 0);
    assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
    let n = &p.notes[0];
    assert!(
        n.starts_with("no training step recognised in 2 lines"),
        "{n}"
    );
    // The line most like progress, and a format_regex that reads it.
    assert!(
        n.contains("a line of it: Saving checkpoint at step 5"),
        "{n}"
    );
    assert!(
        n.contains(r"format_regex = 'step\s*(?P<iteration>\d+)'"),
        "{n}"
    );
}

#[test]
fn glued_lines() {
    let r = records(
        "Iteration   10 | Loss: 2.3045 | AllReduce: 45.2ms | Total: 156.3msIteration   20 | Loss: 2.2891 | AllReduce: 48.7ms | Total: 158.1ms\n",
    );
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].iteration, r[1].iteration), (Some(10), Some(20)));
    assert_near(r[1].step_seconds, 0.1581);

    let r = records("[1,0]<stdout>:iter=10 loss=1.5 dt=0.2[1,3]<stdout>:iter=10 loss=1.7 dt=0.3\n");
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].rank, r[0].loss), (Some(0), Some(1.5)));
    assert_eq!((r[1].rank, r[1].loss), (Some(3), Some(1.7)));

    let r = records("{'loss': 2.847, 'epoch': 0.1}{'loss': 2.9574, 'epoch': 0.2}");
    assert_eq!(
        r.iter().map(|r| r.loss).collect::<Vec<_>>(),
        vec![Some(2.847), Some(2.9574)]
    );
}

#[test]
fn mpi_torchrun_and_srun_prefixes_with_interleaved_ranks() {
    let text = "\
[1,3]<stdout>:steps: 10 loss: 2.1 iter time (s): 0.5 samples/sec: 100
[rank1]:[2025-01-01 00:00:00][I][train:10] iter=10 loss=2.2 dtf=0.1 dtb=0.2
[1,3]<stdout>:steps: 20 loss: 2.0 iter time (s): 0.4 samples/sec: 125
[rank1]:[2025-01-01 00:00:01][I][train:10] iter=20 loss=2.05 dtf=0.1 dtb=0.1
0:  iteration       25/73242187 | consumed samples:           50 | elapsed time per iteration (ms): 87.0 | lm loss: 1.086954E+01 |
";
    let r = records(text);
    assert_eq!(r.len(), 5, "{r:#?}");
    let ranks: Vec<_> = r.iter().map(|r| (r.rank, r.iteration)).collect();
    assert_eq!(
        ranks,
        vec![
            (Some(3), Some(10)),
            (Some(1), Some(10)),
            (Some(3), Some(20)),
            (Some(1), Some(20)),
            (Some(0), Some(25))
        ]
    );
    assert_eq!(r[0].samples_per_second, Some(100.0));
    assert_near(r[0].step_seconds, 0.5);
    assert_near(r[1].step_seconds, 0.3);
    assert_eq!(r[4].loss, Some(10.86954));
    assert_near(r[4].step_seconds, 0.087);
}

#[test]
fn crlf_and_ansi_colour_read_the_same() {
    let text = fixture("synthetic-seed-formats.log");
    let crlf = text.replace('\n', "\r\n");
    assert_eq!(records(&crlf), records(&text));
    let r = records(
        "\x1b[32m[20251202 06:56:28]\x1b[0m[\x1b[36mrank-7/8\x1b[0m] iteration 4408/ 5000 | elapsed time per iteration (ms): 13100.0/13240.9 | lm loss: 4.142716E-03 |\r\n",
    );
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].iteration, r[0].rank, r[0].loss),
        (Some(4408), Some(7), Some(4.142716e-3))
    );
    assert_near(r[0].step_seconds, 13.1);
}

#[test]
fn progress_bar_redraws_are_lines() {
    let r = records(
        "Epoch 1:  50%|#####     | 250/500 [00:15<00:15, 16.5it/s, loss=0.5, v_num=0]\rEpoch 1: 100%|##########| 500/500 [00:30<00:00, 16.5it/s, loss=0.123, v_num=0]\n",
    );
    let got: Vec<_> = r.iter().map(|r| (r.epoch, r.loss)).collect();
    assert_eq!(got, vec![(Some(1.0), Some(0.5)), (Some(1.0), Some(0.123))]);
}

#[test]
fn scientific_notation() {
    let r = records("step=3 loss=1.5e-05 step_time=2.5E-1 samples_per_second=1.2e+03\n");
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].loss, Some(1.5e-5));
    assert_near(r[0].step_seconds, 0.25);
    assert_eq!(r[0].samples_per_second, Some(1200.0));
}

#[test]
fn custom_regex_is_tried_first() {
    let f = CustomFormat::new(
        "lab-v2",
        r"it#(?P<iteration>\d+) ce=(?P<loss>[\d.]+) took (?P<step_ms>[\d.]+)ms ar (?P<allreduce_ms>[\d.]+)ms",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut p = LineParser::new(vec![f]);
    let r = records_with(
        &mut p,
        "[1,2]<stdout>:[trainer] it#42 ce=0.53 took 812ms ar 95.5ms loss=9\n",
    );
    assert_eq!(r.len(), 1);
    // the custom format wins over the built-in `loss=9`
    assert_eq!(
        (r[0].iteration, r[0].loss, r[0].rank),
        (Some(42), Some(0.53), Some(2))
    );
    assert_near(r[0].step_seconds, 0.812);
    assert_near(r[0].allreduce_seconds, 0.0955);
    // lines the custom format does not match still go to the built-in formats
    let r = records_with(&mut p, "iter=1 loss=0.25\n");
    assert_eq!(r[0].loss, Some(0.25));

    let err = CustomFormat::new("bad", r"loss (\d+)")
        .err()
        .unwrap_or_default();
    assert!(err.contains("none of the named groups"), "{err}");
}

#[test]
fn highlight_classes() {
    let mut p = LineParser::new(Vec::new());
    let cases = [
        (
            "[rank0]:[E1012 16:46:40.372633 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=8, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600088 milliseconds before timing out.",
            Highlight::Timeout,
        ),
        (
            "gpu1:12:34 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1234> with error 12, opcode 0, len 0, vendor err 129",
            Highlight::Nccl,
        ),
        (
            "[1,5]<stdout>:node5:99:99 [5] NCCL ERROR unhandled system error",
            Highlight::Nccl,
        ),
        (
            "[rank1]: Traceback (most recent call last):",
            Highlight::Traceback,
        ),
        (
            "[rank1]:   File \"/opt/train.py\", line 87, in <module>",
            Highlight::Traceback,
        ),
        (
            "[rank1]: torch.distributed.DistBackendError: NCCL communicator was aborted",
            Highlight::Traceback,
        ),
        (
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            Highlight::Error,
        ),
        (
            "slurmstepd: error: *** JOB 1999618 ON r6i4n5 CANCELLED AT 2021-05-27T21:52:36 DUE TO TIME LIMIT ***",
            Highlight::Error,
        ),
        (
            " [WARNING]  using untested triton version (2.2.0), only 1.0.0 is known to be compatible",
            Highlight::Warn,
        ),
        (
            "r7i4n4:5810:6248 [3] NCCL INFO comm 0x1511d4005e60 rank 31 nranks 64 cudaDev 3 busId 8a000 - Init COMPLETE",
            Highlight::None,
        ),
        (
            "Iteration   10 | Loss: 2.3045 | AllReduce: 45.2ms | Total: 156.3ms",
            Highlight::None,
        ),
    ];
    for (line, want) in cases {
        assert_eq!(p.feed(line).highlight, want, "{line}");
    }
    let text = fixture("megatron-lm_bigscience_n16_tp4pp16_excerpt.log");
    let mut p = LineParser::new(Vec::new());
    let errors = text
        .lines()
        .filter(|l| p.feed(l).highlight == Highlight::Error)
        .count();
    assert_eq!(errors, 2, "the two slurmstepd CANCELLED lines");
}

fn all_fixtures() -> String {
    [
        "synthetic-seed-formats.log",
        "megatron-lm_bigscience_n16_tp4pp16_excerpt.log",
        "megatron-deepspeed_alcf-polaris_log-dist-timers_excerpt.log",
        "megatron-deepspeed_alcf-polaris_kv-iteration_excerpt.log",
        "hf-trainer_llama-3.2-1b_ezpz-aurora_excerpt.log",
        "deepspeed_hf-trainer_fate-gpt2_log-dist-timer_excerpt.log",
        "pytorch-ddp_ezpz-test_iter-loss-dtf-dtb_excerpt.log",
        "nccl-tests_all-reduce-perf_aws-efa-eks_mpi-tagged_excerpt.log",
        "hf-trainer_transformers-5.23_cpu-tqdm-bars_frameworks-sh.log",
        "torchrun-ddp-gloo_tee-default-prefix_nanogpt-line_frameworks-sh.log",
    ]
    .map(fixture)
    .join("\n")
}

fn sane(r: &TrainRecord) -> bool {
    let non_neg = |v: Option<f64>| v.is_none_or(|v| v.is_finite() && v >= 0.0);
    non_neg(r.step_seconds)
        && non_neg(r.allreduce_seconds)
        && non_neg(r.samples_per_second)
        && non_neg(r.epoch)
        && r.loss.is_none_or(f64::is_finite)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_text_never_panics(s in "\\PC{0,300}") {
        for r in records(&s) {
            prop_assert!(sane(&r));
        }
        let _ = parse_text(&s, "n", "l");
    }

    #[test]
    fn mutated_fixtures_never_panic(
        start in 0usize..20_000,
        len in 0usize..3_000,
        cut in proptest::collection::vec((0usize..3_000, any::<char>()), 0..12),
    ) {
        let all = all_fixtures();
        let mut chars: Vec<char> = all.chars().skip(start % all.len().max(1)).take(len).collect();
        for (at, c) in cut {
            if !chars.is_empty() {
                let i = at % chars.len();
                chars[i] = c;
            }
        }
        let text: String = chars.into_iter().collect();
        for r in records(&text) {
            prop_assert!(sane(&r));
        }
    }
}

/// Launcher prefixes and the rank each names.
const LAUNCHERS: &[(&str, Option<u32>)] = &[
    ("", None),
    ("0: ", Some(0)),
    ("3: ", Some(3)),
    ("[rank1]:", Some(1)),
    ("[default2]:", Some(2)),
    ("[1,5]<stdout>:", Some(5)),
    ("trainer0:", Some(0)),
    ("trainer/0 [4]:", Some(4)),
    ("[trainer0|6]:", Some(6)),
];

/// One training record in one of the shapes the reader knows; `i` distinct per record.
fn training_line(shape: usize, i: u32, loss: f64, ms: f64) -> String {
    match shape % 6 {
        0 => format!(
            "step: {i} | loss: {loss:.4} | time(ms): {ms:.1} | samples/s: {:.2}",
            ms / 3.0
        ),
        1 => format!(
            "{{'loss': {loss:.4}, 'learning_rate': 0.0001, 'global_step': {i}, 'epoch': 0.5}}"
        ),
        2 => format!(
            "04/21 21:03:53 - mmengine - INFO - Epoch(train) [1][{i}/900]  lr: 1.000e-02  time: {:.3}  data_time: 0.001  memory: 0  loss: {loss:.4}",
            ms / 1000.0
        ),
        3 => format!(
            "| epoch 001 | loss {loss:.3} | nll_loss 1.2 | num_updates {i} | lr 0.0005 | wall 100"
        ),
        4 => format!("Step {i} | loss:{loss:.6} lr:2e-05 tokens_per_second_per_gpu:412.5"),
        _ => format!("iter {i}: loss {loss:.4}, time {ms:.2}ms, mfu 31.20%"),
    }
}

/// An evaluation line: its loss (90 or more) and its update count (10000 or more) are no step's.
/// The proptest draws all three shapes after two records in five: wrapped at any column, an
/// mmengine `Epoch(val)` line cut after `eta: 0:`, a nanoGPT estimate cut before `val loss`, a
/// fairseq valid line next to a wrapped record are never read as steps.
fn evaluation_line(shape: usize, i: u32, loss: f64) -> String {
    match shape % 3 {
        0 => format!(
            "| epoch 001 | valid on 'valid' subset | valid_loss {loss:.3} | num_updates {} | best 6.4",
            10_000 + i
        ),
        1 => format!(
            "step {}: train loss {loss:.4}, val loss {:.4}",
            10_000 + i,
            loss + 1.0
        ),
        _ => format!(
            "04/21 21:03:54 - mmengine - INFO - Epoch(val) [1][{}/50]  eta: 0:00:02  time: 0.01  loss: {loss:.4}",
            10_000 + i
        ),
    }
}

/// A text read whole, as `rocetop parse` reads it (the wrap column learnt first).
fn read_whole(text: &str) -> Vec<TrainRecord> {
    let mut p = LineParser::new(Vec::new());
    p.prescan(text);
    records_with(&mut p, text)
}

/// Every line cut into pieces of `width` characters, each piece with the launcher's prefix.
fn wrapped(lines: &[String], width: usize, prefix: &str) -> String {
    let mut out = String::new();
    for l in lines {
        let chars: Vec<char> = l.chars().collect();
        for piece in chars.chunks(width) {
            out.push_str(prefix);
            out.extend(piece);
            out.push('\n');
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    /// A log hard-wrapped at any column narrower than its records, every piece re-prefixed by a
    /// launcher (the shapes of the launchers' prefixes in LAUNCHERS), reads the same
    /// records as the log itself (with the launcher's rank), and its evaluation lines are never
    /// steps.
    #[test]
    fn wrapped_and_prefixed_records_read_the_same(
        recs in proptest::collection::vec(
            (0usize..6, 0.5f64..9.5, 1.0f64..900.0, proptest::option::weighted(0.4, 0usize..3)),
            3..9,
        ),
        // narrower than every record (the shortest, shape 5, has 46 characters), so that the
        // column can be learnt: a log with one wrapped line gives no column to learn
        width in 24usize..45,
        launcher in 0usize..LAUNCHERS.len(),
    ) {
        let mut lines = Vec::new();
        for (n, (shape, loss, ms, eval)) in recs.iter().enumerate() {
            let i = 10 + n as u32 * 7;
            lines.push(training_line(*shape, i, *loss, *ms));
            if let Some(e) = eval {
                lines.push(evaluation_line(*e, i, 90.0 + loss));
            }
        }
        let clean = read_whole(&(lines.join("\n") + "\n"));
        prop_assert_eq!(clean.len(), recs.len(), "{:#?}", clean);
        let (prefix, rank) = LAUNCHERS[launcher];
        let text = wrapped(&lines, width, prefix);
        let mut got = read_whole(&text);
        for r in &mut got {
            prop_assert_eq!(r.rank, rank, "{}", text);
            r.rank = None;
        }
        prop_assert_eq!(&got, &clean, "width {} prefix {:?}:\n{}", width, prefix, text);
        for r in &got {
            prop_assert!(r.loss.is_none_or(|l| l < 90.0), "an evaluation's loss: {:?}", r);
            prop_assert!(r.iteration.is_none_or(|i| i < 10_000), "an evaluation's step: {:?}", r);
        }
    }
}
