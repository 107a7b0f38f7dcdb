//! The follower task of a log source (`collect::logtail::follow::run`) over a real local file, the
//! demo cluster, and a transport whose stream breaks.

use async_trait::async_trait;
use rocetop::collect::local::LocalTransport;
use rocetop::collect::logtail::follow;
use rocetop::collect::source::{self, Probe, RemoteFactory};
use rocetop::collect::{
    CollectError, Collected, Request, Source, SourceKind, StreamEvent, Transport,
};
use rocetop::config::Config;
use rocetop::metrics::{Store, Value, names};
use rocetop::parse::{Ctx, ParseKind};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

pub(crate) fn log_source(
    transport: Arc<dyn Transport>,
    path: &str,
    lines: usize,
    re: Option<&str>,
) -> Source {
    let mut store = Store::new(60_000, 100);
    Source {
        id: store.add_source("log", 1000),
        name: "log".into(),
        kind: SourceKind::Log,
        interval: Duration::from_secs(1),
        timeout: Duration::from_secs(1),
        transport,
        probes: vec![Probe {
            kind: ParseKind::TrainingLog,
            request: Request::Tail {
                path: path.into(),
                lines,
            },
        }],
        ctx: Ctx {
            name: "n1".into(),
            log: path.into(),
        },
        ports: Vec::new(),
        discovery: None,
        format_regex: re.map(str::to_string),
        nic_counters: Vec::new(),
        nic_memo: Default::default(),
    }
}

/// Everything the follower sends until `done` holds of all of it, or the deadline.
pub(crate) async fn collect_until(
    src: Source,
    secs: u64,
    mut between: impl FnMut(&[Collected]),
    done: impl Fn(&[Collected]) -> bool,
) -> Vec<Collected> {
    let (tx, mut rx) = mpsc::channel(64);
    let task = tokio::spawn(follow::run(Arc::new(src), tx));
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while !done(&got) {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(c)) => {
                got.push(c);
                between(&got);
            }
            _ => break,
        }
    }
    task.abort();
    got
}

pub(crate) fn raw_lines(got: &[Collected]) -> Vec<String> {
    got.iter()
        .flat_map(|c| c.raw.iter().flatten())
        .flat_map(|(k, t)| {
            assert_eq!(*k, ParseKind::TrainingLog);
            // Every line ends with '\n'; an empty segment marks a parser flush, not a line.
            assert!(t.is_empty() || t.ends_with('\n'), "{t:?}");
            t.lines().map(str::to_string).collect::<Vec<_>>()
        })
        .collect()
}

pub(crate) fn gauges(got: &[Collected], name: &str) -> Vec<f64> {
    got.iter()
        .flat_map(|c| c.parsed.samples.iter())
        .filter(|s| s.key.name == name)
        .filter_map(|s| match s.value {
            Value::Gauge(v) => Some(v),
            _ => None,
        })
        .collect()
}

#[track_caller]
fn assert_near(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?} != {want:?}");
    for (a, b) in got.iter().zip(want) {
        assert!((a - b).abs() < 1e-9, "{got:?} != {want:?}");
    }
}

fn highlight_total(c: &Collected, class: &str) -> Option<u64> {
    c.parsed
        .find(names::TRAIN_LOG_HIGHLIGHTS, &[("class", class)])
        .and_then(|v| match v {
            Value::Counter(v) => Some(v),
            _ => None,
        })
}

#[tokio::test]
async fn a_local_log_becomes_raw_lines_samples_and_highlight_counters() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("train.log");
    let old = "Iteration  990 | Loss: 1.5000 | AllReduce: 40.0ms | Total: 150.0ms\n";
    std::fs::write(&p, old).expect("write");
    let path = p.to_string_lossy().to_string();
    let src = log_source(Arc::new(LocalTransport), &path, 10, None);
    let mut wrote = false;
    let p2 = p.clone();
    let got = collect_until(
        src,
        10,
        |got| {
            if !wrote && !raw_lines(got).is_empty() {
                wrote = true;
                let more = "Iteration 1000 | Loss: 1.2127 | AllReduce: 45.5ms | Total: 160.0ms\n\
                            n1:2291:2310 [0] NCCL WARN NET/IB : Got completion from peer with error 12\n\
                            Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n\
                            RuntimeError: NCCL communicator was aborted\n";
                let mut f = std::fs::OpenOptions::new().append(true).open(&p2).expect("open");
                std::io::Write::write_all(&mut f, more.as_bytes()).expect("append");
            }
        },
        |got| got.last().and_then(|c| highlight_total(c, "traceback")) == Some(1),
    )
    .await;
    assert_eq!(
        raw_lines(&got),
        [
            "Iteration  990 | Loss: 1.5000 | AllReduce: 40.0ms | Total: 150.0ms",
            "Iteration 1000 | Loss: 1.2127 | AllReduce: 45.5ms | Total: 160.0ms",
            "n1:2291:2310 [0] NCCL WARN NET/IB : Got completion from peer with error 12",
            "Traceback (most recent call last):",
            "  File \"train.py\", line 3, in <module>",
            "RuntimeError: NCCL communicator was aborted",
        ]
    );
    assert_near(&gauges(&got, names::TRAIN_STEP_SECONDS), &[0.150, 0.160]);
    assert_near(
        &gauges(&got, names::TRAIN_ALLREDUCE_SECONDS),
        &[0.040, 0.0455],
    );
    let first = got.first().expect("a first send");
    assert_eq!(
        highlight_total(first, "nccl"),
        Some(0),
        "zeros from the start"
    );
    let last = got.last().expect("a last send");
    assert_eq!(highlight_total(last, "nccl"), Some(1));
    assert_eq!(
        highlight_total(last, "traceback"),
        Some(1),
        "one traceback, 3 lines"
    );
    assert!(got.iter().all(|c| c.error.is_none()));
    assert!(
        last.parsed
            .find(
                names::TRAIN_LOG_HIGHLIGHTS,
                &[("node", "n1"), ("log", &path), ("class", "nccl")]
            )
            .is_some()
    );
}

#[tokio::test]
async fn a_missing_local_log_is_a_standing_note_until_it_appears() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("later.log");
    let path = p.to_string_lossy().to_string();
    let src = log_source(
        Arc::new(LocalTransport),
        &path,
        10,
        Some(r"step (?P<iteration>\d+) took (?P<step_ms>[\d.]+) ms"),
    );
    let mut created = false;
    let got = collect_until(
        src,
        10,
        |got| {
            let waiting = got.last().is_some_and(|c| {
                c.parsed
                    .notes
                    .iter()
                    .any(|n| n.starts_with("waiting for the file"))
            });
            if waiting && !created {
                created = true;
                std::fs::write(&p, "step 7 took 250 ms\n").expect("write");
            }
        },
        |got| !gauges(got, names::TRAIN_STEP_SECONDS).is_empty(),
    )
    .await;
    assert!(created, "the missing file was said");
    assert_eq!(
        raw_lines(&got),
        ["step 7 took 250 ms"],
        "the custom format's line"
    );
    assert_near(&gauges(&got, names::TRAIN_STEP_SECONDS), &[0.25]);
    assert_eq!(gauges(&got, names::TRAIN_ITERATION), [7.0]);
    let last = got.last().expect("sent");
    assert!(
        !last.parsed.notes.iter().any(|n| n.starts_with("waiting")),
        "{:?}",
        last.parsed.notes
    );
    assert!(
        got.iter().all(|c| c.error.is_none()),
        "a missing file is not a dead stream"
    );
}

#[tokio::test]
async fn the_demo_log_gives_step_times_and_raw_lines() {
    let cfg = Config::reference();
    let mut store = Store::new(60_000, 100);
    let none: RemoteFactory<'_> = &|_, _| Err(CollectError::Unavailable("x".into()));
    let src = source::build(&cfg, &mut store, none)
        .into_iter()
        .find(|s| s.kind == SourceKind::Log)
        .expect("the lab's log");
    let got = collect_until(
        src,
        10,
        |_| {},
        |got| !gauges(got, names::TRAIN_STEP_SECONDS).is_empty(),
    )
    .await;
    let steps = gauges(&got, names::TRAIN_STEP_SECONDS);
    assert!(!steps.is_empty());
    assert!(steps.iter().all(|s| (0.1..2.0).contains(s)), "{steps:?}");
    let raw = raw_lines(&got);
    assert!(raw.iter().any(|l| l.starts_with("Iteration")), "{raw:?}");
    let s = got
        .iter()
        .flat_map(|c| c.parsed.samples.iter())
        .find(|s| s.key.name == names::TRAIN_STEP_SECONDS)
        .expect("a step sample");
    assert_eq!(s.key.label("node"), Some("ubunturdma1"));
    assert_eq!(s.key.label("log"), Some("~/training.log"));
}

/// A "remote tail -F" over a file kept in memory: the first stream gives the last lines and then
/// breaks; lines are written while it is down; the next stream gives its last lines again.
#[derive(Debug, Default)]
struct Flaky {
    file: Mutex<Vec<String>>,
    asked: Mutex<Vec<usize>>,
}

#[async_trait]
impl Transport for Flaky {
    async fn run(&self, _req: &Request, _timeout: Duration) -> Result<String, CollectError> {
        Err(CollectError::Unavailable("stream only".into()))
    }

    async fn stream(&self, req: &Request) -> Result<mpsc::Receiver<StreamEvent>, CollectError> {
        let Request::Follow { lines, .. } = req else {
            return Err(CollectError::Unavailable("follow only".into()));
        };
        let connection = {
            let mut asked = self.asked.lock().expect("lock");
            asked.push(*lines);
            asked.len()
        };
        let mut file = self.file.lock().expect("lock");
        if connection == 2 {
            file.extend(["f", "g"].map(String::from));
        }
        let from = file.len().saturating_sub(*lines);
        let mut events: Vec<StreamEvent> = file[from..]
            .iter()
            .cloned()
            .map(StreamEvent::Line)
            .collect();
        if connection == 1 {
            events.push(StreamEvent::Error(CollectError::Io(
                "connection reset".into(),
            )));
        }
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(async move {
            if connection == 2 {
                // A slow reconnect: the repeated lines come well after the stream opened.
                tokio::time::sleep(Duration::from_millis(800)).await;
            }
            for e in events {
                if tx.send(e).await.is_err() {
                    return;
                }
            }
            // Stay open, as a quiet `tail -F` does.
            tx.closed().await;
        });
        Ok(rx)
    }

    fn describe(&self) -> String {
        "flaky".into()
    }
}

#[tokio::test]
async fn a_broken_stream_is_down_then_resumes_without_duplicates_or_losses() {
    let flaky = Arc::new(Flaky::default());
    flaky
        .file
        .lock()
        .expect("lock")
        .extend(["a", "b", "c", "d", "e"].map(String::from));
    let src = log_source(flaky.clone(), "/var/log/train.log", 3, None);
    let got = collect_until(
        src,
        10,
        |_| {},
        |got| raw_lines(got).last().map(String::as_str) == Some("g"),
    )
    .await;
    assert_eq!(raw_lines(&got), ["c", "d", "e", "f", "g"]);
    let errors: Vec<&str> = got.iter().filter_map(|c| c.error.as_deref()).collect();
    assert_eq!(errors, ["connection reset"], "the source is down once");
    let asked = flaky.asked.lock().expect("lock").clone();
    assert_eq!(asked, [3, follow::resume::RESUME_LINES]);
}
