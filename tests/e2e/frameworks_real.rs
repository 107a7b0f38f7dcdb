//! Real frameworks as real clients. `scripts/frameworks.sh run` trains a few CPU
//! steps with the real Hugging Face `Trainer` and with real `torch.distributed` DDP over Gloo (2
//! processes under torchrun), while rocetop follows both logs the way the app does: a config with
//! a local node and two `[[log]]`s, `source::build`, and the follower task
//! (`collect::logtail::follow::run` over the local transport), started before the logs exist and
//! reading them as they grow. What it reads must equal what the frameworks say they did:
//! - HF: each `log_history` entry of `trainer_state.json` with a loss gives one loss (as the
//!   Trainer prints it, `{v:.4g}`) and one iteration (its step), in order. The Trainer prints no
//!   per-step time, so rocetop must report none.
//! - DDP: each rank's own record (`ddp_truth_rank{r}.json`) gives, under that rank's label, the
//!   iterations exactly, the losses as printed (the record says how many decimals), and the step
//!   times within the printed precision.
//!
//! The frameworks are optional heavy parts (~2.4 GB from PyPI on the first run, then cached):
//! `ROCETOP_FRAMEWORKS=0`, a Python older than 3.11 or no PyPI is a counted skip; under CI a
//! missing python3-venv (which scripts/test.sh installs) fails.

use crate::skip;

use rocetop::collect::logtail::follow;
use rocetop::collect::logtail::local::{MAX_LINE, linebuf::LineBuf};
use rocetop::collect::source::{self, RemoteFactory};
use rocetop::collect::{CollectError, Collected, SourceKind};
use rocetop::config::Config;
use rocetop::metrics::{Store, Value, names};
use rocetop::parse::training::{LineParser, TrainRecord};
use serde_json::Value as Json;
use skip::{Lack, skip};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

const TEST: &str = "frameworks_real";

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/frameworks.sh")
}

/// The pinned venv, installed or found; None (a counted skip) where it cannot be had.
fn install() -> Option<()> {
    if std::env::var("ROCETOP_FRAMEWORKS").as_deref() == Ok("0") {
        skip(TEST, Lack::Machine, "ROCETOP_FRAMEWORKS=0");
        return None;
    }
    // scripts/test.sh installed it before the tests, or says how that failed.
    let (code, why) = match std::env::var("ROCETOP_FRAMEWORKS_INSTALL_EXIT") {
        Ok(code) => (
            code.parse().ok(),
            format!("scripts/frameworks.sh install exited {code} in scripts/test.sh"),
        ),
        Err(_) => {
            let out = Command::new("bash")
                .arg(script())
                .arg("install")
                .output()
                .expect("bash runs");
            let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
            (out.status.code(), why)
        }
    };
    match code {
        Some(0) => Some(()),
        Some(3) => {
            skip(TEST, Lack::Installed("python3-venv"), &why);
            None
        }
        Some(4) => {
            skip(
                TEST,
                Lack::Machine,
                &format!("the pinned frameworks cannot be installed here: {why}"),
            );
            None
        }
        other => panic!("scripts/frameworks.sh install exited {other:?}: {why}"),
    }
}

/// One sample as the follower sent it: its rank label and value.
#[derive(Clone, Debug)]
struct Got {
    rank: Option<String>,
    value: f64,
}

/// What a follower gathered: every send, in order.
type Sends = Arc<Mutex<Vec<Collected>>>;

fn gauges(sends: &Sends, name: &str) -> Vec<Got> {
    let sends = sends.lock().expect("lock");
    sends
        .iter()
        .flat_map(|c| c.parsed.samples.iter())
        .filter(|s| s.key.name == name)
        .filter_map(|s| match s.value {
            Value::Gauge(v) => Some(Got {
                rank: s.key.label("rank").map(str::to_string),
                value: v,
            }),
            _ => None,
        })
        .collect()
}

fn raw_lines(sends: &Sends) -> Vec<String> {
    let sends = sends.lock().expect("lock");
    sends
        .iter()
        .flat_map(|c| c.raw.iter().flatten())
        .flat_map(|(_, t)| t.lines().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Whether the follower's lines are the file's, line by line, as a terminal shows them (a `\r`
/// redraws the line: its last state), each maybe preceded by an earlier state of the same line
/// (a line written over a cleared progress bar keeps the bar's first state, linebuf.rs).
fn read_whole(raw: &[String], file: &str) -> Result<(), String> {
    let mut raw = raw.iter();
    for line in file.lines() {
        let states: Vec<&str> = line.split('\r').collect();
        let last = states.last().copied().unwrap_or("");
        loop {
            match raw.next() {
                Some(r) if r == last => break,
                Some(r) if states.contains(&r.as_str()) => continue,
                Some(r) => return Err(format!("read {r:?} where the file has {line:?}")),
                None => return Err(format!("not read: {line:?}")),
            }
        }
    }
    match raw.next() {
        Some(r) => Err(format!("read {r:?}, which the file does not have")),
        None => Ok(()),
    }
}

fn json(p: &Path) -> Json {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn num(v: &Json, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// `v` as Python's `f"{v:.4g}"` prints it (what the Trainer's progress callback does to every
/// float), read back: four significant digits.
fn four_significant(v: f64) -> f64 {
    format!("{v:.3e}").parse().expect("a number")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hf_trainer_and_ddp_logs_read_live_equal_the_frameworks_own_record() {
    if install().is_none() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path();
    let hf_log = out.join("hf_trainer.log");
    let ddp_log = out.join("ddp.log");
    let cfg = Config::from_str(
        &format!(
            "[[node]]\nname = \"cpu1\"\nlocal = true\n\n\
             [[log]]\nnode = \"cpu1\"\npath = {:?}\nlines = 1000\n\n\
             [[log]]\nnode = \"cpu1\"\npath = {:?}\nlines = 1000\n",
            hf_log.display().to_string(),
            ddp_log.display().to_string()
        ),
        "frameworks_real",
        None,
    )
    .expect("config");
    let mut store = Store::new(60_000, 100);
    let none: RemoteFactory<'_> = &|_, _| Err(CollectError::Unavailable("local only".into()));
    let logs: Vec<_> = source::build(&cfg, &mut store, none)
        .into_iter()
        .filter(|s| s.kind == SourceKind::Log)
        .collect();
    assert_eq!(logs.len(), 2);

    // The followers start first: neither log exists yet.
    let mut tasks = Vec::new();
    let mut sends: BTreeMap<String, Sends> = BTreeMap::new();
    for src in logs {
        let got: Sends = Arc::default();
        sends.insert(src.ctx.log.clone(), got.clone());
        let (tx, mut rx) = mpsc::channel(64);
        tasks.push(tokio::spawn(follow::run(Arc::new(src), tx)));
        tasks.push(tokio::spawn(async move {
            while let Some(c) = rx.recv().await {
                got.lock().expect("lock").push(c);
            }
        }));
    }
    let hf = sends[&hf_log.display().to_string()].clone();
    let ddp = sends[&ddp_log.display().to_string()].clone();
    // The frameworks start once both followers have said they wait for their file: what they
    // read afterwards, they read while the file grows.
    let waiting = |s: &Sends| {
        s.lock().expect("lock").iter().any(|c| {
            c.parsed
                .notes
                .iter()
                .any(|n| n.starts_with("waiting for the file"))
        })
    };
    let give_up = std::time::Instant::now() + Duration::from_secs(30);
    while !(waiting(&hf) && waiting(&ddp)) && std::time::Instant::now() < give_up {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        waiting(&hf) && waiting(&ddp),
        "the followers wait for the logs"
    );

    let started = std::time::Instant::now();
    // A give-up, not a timing: the run takes under a minute, a hung rendezvous forever.
    let run = tokio::process::Command::new("bash")
        .arg(script())
        .arg("run")
        .arg(out)
        .kill_on_drop(true)
        .output();
    let script_out = tokio::time::timeout(Duration::from_secs(600), run)
        .await
        .expect("scripts/frameworks.sh run ended within 10 minutes")
        .expect("bash runs");
    let ran = started.elapsed();
    assert!(
        script_out.status.success(),
        "scripts/frameworks.sh run failed:\n{}\n{}",
        String::from_utf8_lossy(&script_out.stderr),
        std::fs::read_to_string(&ddp_log).unwrap_or_default()
    );

    // The truth: the frameworks' own records.
    let state = json(&out.join("trainer_state.json"));
    let hf_truth: Vec<(f64, f64)> = state["log_history"]
        .as_array()
        .expect("log_history")
        .iter()
        .filter(|h| h.get("loss").is_some())
        .map(|h| (num(h, "step"), num(h, "loss")))
        .collect();
    let ranks: Vec<Json> = (0..2)
        .map(|r| json(&out.join(format!("ddp_truth_rank{r}.json"))))
        .collect();
    let ddp_steps: usize = ranks
        .iter()
        .map(|r| r["steps"].as_array().expect("steps").len())
        .sum();
    assert!(hf_truth.len() >= 10 && ddp_steps >= 20, "a few steps each");

    // Let the followers read to the end of both files (they poll; nothing is timed here but the
    // give-up that turns a hang into a failure).
    let hf_file = std::fs::read_to_string(&hf_log).expect("hf log");
    let ddp_file = std::fs::read_to_string(&ddp_log).expect("ddp log");
    let give_up = std::time::Instant::now() + Duration::from_secs(60);
    while (read_whole(&raw_lines(&hf), &hf_file).is_err()
        || read_whole(&raw_lines(&ddp), &ddp_file).is_err()
        || gauges(&hf, names::TRAIN_ITERATION).len() < hf_truth.len())
        && std::time::Instant::now() < give_up
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for t in &tasks {
        t.abort();
    }
    read_whole(&raw_lines(&hf), &hf_file).expect("the follower read the HF log whole");
    read_whole(&raw_lines(&ddp), &ddp_file).expect("the follower read the DDP log whole");

    for (name, log) in [("hf", &hf), ("ddp", &ddp)] {
        let sends = log.lock().expect("lock");
        let carrying: Vec<usize> = sends
            .iter()
            .map(|c| c.raw.iter().flatten().map(|(_, t)| t.lines().count()).sum())
            .filter(|&n| n > 0)
            .collect();
        eprintln!(
            "{name}: {} lines read in {} sends",
            carrying.iter().sum::<usize>(),
            carrying.len()
        );
    }
    eprintln!(
        "frameworks_real: scripts/frameworks.sh run took {:.1} s",
        ran.as_secs_f64()
    );

    // Hugging Face Trainer.
    let values = |g: Vec<Got>| g.into_iter().map(|g| g.value).collect::<Vec<_>>();
    let want_steps: Vec<f64> = hf_truth.iter().map(|(s, _)| *s).collect();
    let want_losses: Vec<f64> = hf_truth.iter().map(|(_, l)| four_significant(*l)).collect();
    assert_eq!(values(gauges(&hf, names::TRAIN_ITERATION)), want_steps);
    assert_eq!(values(gauges(&hf, names::TRAIN_LOSS)), want_losses);
    assert!(
        gauges(&hf, names::TRAIN_STEP_SECONDS).is_empty(),
        "the Trainer prints no step time; a tqdm rate is none"
    );

    // DDP, rank by rank (torchrun's `[default<r>]:` prefix).
    for truth in &ranks {
        let rank = (num(truth, "rank") as u64).to_string();
        let of_rank = |name| {
            gauges(&ddp, name)
                .into_iter()
                .filter(|g| g.rank.as_deref() == Some(rank.as_str()))
                .map(|g| g.value)
                .collect::<Vec<_>>()
        };
        let steps = truth["steps"].as_array().expect("steps");
        let loss_decimals = num(truth, "loss_decimals") as usize;
        let ms_decimals = num(truth, "ms_decimals") as i32;
        let its: Vec<f64> = steps.iter().map(|s| num(s, "iteration")).collect();
        let losses: Vec<f64> = steps
            .iter()
            .map(|s| {
                format!("{:.*}", loss_decimals, num(s, "loss"))
                    .parse()
                    .expect("a number")
            })
            .collect();
        assert_eq!(of_rank(names::TRAIN_ITERATION), its, "rank {rank}");
        assert_eq!(of_rank(names::TRAIN_LOSS), losses, "rank {rank}");
        let times = of_rank(names::TRAIN_STEP_SECONDS);
        assert_eq!(times.len(), steps.len(), "rank {rank}");
        // Printed in ms with `ms_decimals` decimals: within half the last printed digit.
        let half_digit_ms = 0.5 * 10f64.powi(-ms_decimals) + 1e-9;
        for (got, s) in times.iter().zip(steps) {
            let truth_ms = num(s, "step_seconds") * 1000.0;
            assert!(
                (got * 1000.0 - truth_ms).abs() <= half_digit_ms,
                "rank {rank}: step time {got} s read, {truth_ms} ms measured"
            );
        }
    }
    assert!(
        gauges(&ddp, names::TRAIN_LOSS)
            .iter()
            .all(|g| g.rank.is_some()),
        "every DDP line is labelled with its rank"
    );
}

/// The logs this script captured (tests/fixtures/training, `*_frameworks-sh.log`) read the same
/// through the follower's line buffer, fed in small pieces as a growing file is, as by
/// `rocetop parse` reading the file whole: the records do not depend on how the log was read.
/// Runs without the frameworks.
#[test]
fn captured_logs_read_alike_live_and_whole() {
    fn records(lines: impl IntoIterator<Item = String>) -> Vec<TrainRecord> {
        let mut p = LineParser::new(Vec::new());
        let mut out = Vec::new();
        for l in lines {
            out.extend(p.feed(&l).records);
        }
        out.extend(p.flush());
        out
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/training");
    for name in [
        "hf-trainer_transformers-5.23_cpu-tqdm-bars_frameworks-sh.log",
        "torchrun-ddp-gloo_tee-default-prefix_nanogpt-line_frameworks-sh.log",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).expect("fixture");
        let whole = records(text.lines().map(str::to_string));
        let mut buf = LineBuf::new(MAX_LINE);
        let mut lines = Vec::new();
        for piece in text.as_bytes().chunks(37) {
            buf.push(piece, &mut |l| lines.push(l));
        }
        lines.extend(buf.finish());
        let live = records(lines);
        assert!(live.iter().any(|r| r.iteration.is_some()), "{name}");
        assert_eq!(live, whole, "{name}");
    }
}
