//! Recordings end to end: the demo recorded in-process and by the real binary (killed with -9),
//! replayed through the same parsers into a store equal to the live one; cut files; pacing and
//! the replay controls.

use rocetop::collect::poll::{Collected, KeepRaw, spawn_all};
use rocetop::collect::source::{Source, build};
use rocetop::config::Config;
use rocetop::metrics::{Store, now_ms};
use rocetop::output::{json, prom};
use rocetop::record::{Feed, Reader, RecordError, Writer, replay_feed};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

fn remote() -> rocetop::collect::source::RemoteFactory<'static> {
    rocetop::cmd::remote()
}

/// Record the demo for `secs` in-process; returns what was collected live, in order.
async fn record_demo(path: &Path, secs: f64) -> (Vec<Collected>, Store) {
    let (live, store, _) = record_demo_with(path, secs, None).await;
    (live, store)
}

/// Also returns the file size after the header and after each poll (record ends), and can start
/// a new gzip member every `member_ms` of recorded time.
async fn record_demo_with(
    path: &Path,
    secs: f64,
    member_ms: Option<i64>,
) -> (Vec<Collected>, Store, Vec<u64>) {
    let cfg = Config::reference();
    let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 1000);
    let sources: Vec<Arc<Source>> = build(&cfg, &mut store, remote())
        .into_iter()
        .map(Arc::new)
        .collect();
    let mut w = Writer::create(path, &cfg, sources.iter().map(|s| &**s)).expect("create");
    if let Some(ms) = member_ms {
        w.set_member_limits(ms, u64::MAX);
    }
    let mut ends = vec![w.stats().bytes];
    let (tx, mut rx) = mpsc::channel(256);
    let tasks = spawn_all(sources, tx, KeepRaw::always());
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let mut live = Vec::new();
    while let Ok(Some(c)) = tokio::time::timeout_at(until.into(), rx.recv()).await {
        w.write(&c).expect("write");
        ends.push(w.stats().bytes);
        c.apply(&mut store);
        live.push(c);
    }
    drop(tasks);
    w.finish(now_ms()).expect("finish");
    (live, store, ends)
}

/// Everything a screen could read from a store, as comparable text.
fn dump(st: &Store) -> String {
    let mut out = json::render(st);
    out.push_str(&prom::render(st, true, true));
    let mut all: Vec<_> = st.all().collect();
    all.sort_by(|a, b| a.1.key.cmp(&b.1.key));
    for (_, s) in all {
        out.push_str(&format!(
            "{} {:?}\n",
            s.key,
            s.points(st).collect::<Vec<_>>()
        ));
    }
    for (_, h) in st.sources() {
        out.push_str(&format!(
            "{} up={:?} ok={} failed={} last={:?} unknown={} notes={:?}\n",
            h.name, h.up, h.polls_ok, h.polls_failed, h.last_success, h.unknown_lines, h.notes
        ));
    }
    out
}

/// Every Data of a feed until End, as fast as it goes.
async fn drain(path: &Path) -> (Vec<Collected>, Store, Option<String>) {
    let mut r = replay_feed(path, f64::INFINITY).expect("open");
    let mut store = r.new_store();
    let mut got = Vec::new();
    loop {
        match tokio::time::timeout(Duration::from_secs(20), r.rx.recv())
            .await
            .expect("feed stalls")
        {
            Some(Feed::Data(c)) => {
                c.apply(&mut store);
                got.push(c);
            }
            Some(Feed::Reset { .. } | Feed::Seeked { .. }) => panic!("no reset without a seek"),
            Some(Feed::End { cut, .. }) => return (got, store, cut),
            None => panic!("feed closed before End"),
        }
    }
}

fn same_polls(a: &[Collected], b: &[Collected]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!((x.source, x.at), (y.source, y.at));
        assert_eq!(x.raw, y.raw);
        assert_eq!(
            x.parsed, y.parsed,
            "poll of source {:?} at {}",
            x.source, x.at
        );
        assert_eq!(x.error, y.error);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_recorded_and_replayed_gives_the_same_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("demo.rec");
    let (live, live_store) = record_demo(&path, 3.0).await;
    assert!(
        live.len() >= 20,
        "10 sources at 1 s for 3 s: {} polls",
        live.len()
    );
    let bytes = std::fs::metadata(&path).expect("stat").len();
    eprintln!(
        "demo recording: {} polls, {bytes} bytes in 3 s ({:.0} B/s)",
        live.len(),
        bytes as f64 / 3.0
    );

    let stats = live_store.stats();
    eprintln!(
        "live store: {} series, {} points",
        stats.series, stats.points
    );
    assert!(
        stats.series > 100 && stats.points > 2 * stats.series,
        "{stats:?}"
    );
    let (replayed, store, cut) = drain(&path).await;
    assert_eq!(cut, None);
    same_polls(&live, &replayed);
    assert_eq!(dump(&store), dump(&live_store));

    let r = Reader::open(&path).expect("open");
    assert!(r.header().demo);
    assert_eq!(r.header().sources.len(), live_store.sources().count());
    let mut r = r;
    assert_eq!(r.by_ref().count(), live.len());
    assert!(r.end().is_some(), "a clean stop writes an end record");
    assert_eq!(r.cut(), None);
}

/// The TUI's `r`: collectors that dropped their raw outputs start keeping them mid-run. Polls
/// that finished before are left out of the file; from each source's first kept poll on, the
/// recording replays to exactly what those polls gave live.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_started_mid_run_replays_to_the_live_polls_from_its_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("mid.rec");
    let cfg = Config::reference();
    // The live store from the recording's start: only the recorded polls go in.
    let mut recorded_store = Store::new(cfg.poll.retention.as_millis() as i64, 1000);
    let sources: Vec<Arc<Source>> = build(&cfg, &mut recorded_store, remote())
        .into_iter()
        .map(Arc::new)
        .collect();
    let keep = KeepRaw::default();
    let (tx, mut rx) = mpsc::channel(256);
    let tasks = spawn_all(sources.clone(), tx, keep.clone());
    let mut w = Writer::create(&path, &cfg, sources.iter().map(|s| &**s)).expect("create");
    let (mut before, mut recorded) = (Vec::new(), Vec::new());
    let (start, end) = (
        Instant::now() + Duration::from_millis(1500),
        Instant::now() + Duration::from_millis(4000),
    );
    while let Ok(Some(c)) = tokio::time::timeout_at(end.into(), rx.recv()).await {
        if !keep.is_on() && Instant::now() >= start {
            keep.set(true);
        }
        w.write(&c).expect("write");
        match c.raw {
            Some(_) => {
                c.apply(&mut recorded_store);
                recorded.push(c);
            }
            None => {
                // Once a source's polls are kept, every later one is.
                assert!(recorded.iter().all(|r| r.source != c.source));
                before.push(c);
            }
        }
    }
    drop(tasks);
    let stats = w.finish(now_ms()).expect("finish");
    assert!(before.len() >= 10, "{} polls without raw", before.len());
    assert!(recorded.len() >= 10, "{} polls with raw", recorded.len());
    assert!(
        before.iter().all(|c| c.error.is_none()),
        "the demo answers every poll"
    );
    assert_eq!(stats.polls as usize, recorded.len());

    let (replayed, store, cut) = drain(&path).await;
    assert_eq!(cut, None);
    same_polls(&recorded, &replayed);
    assert_eq!(dump(&store), dump(&recorded_store));

    // Sources whose polls all came before `r` are not down in the replay's table: the recording
    // just holds none of their polls.
    let unrecorded: Vec<&str> = store
        .sources()
        .filter(|(_, h)| h.up.is_none())
        .map(|(_, h)| h.name.as_str())
        .collect();
    let table = rocetop::cmd::record::replay_print(&path, rocetop::output::Format::Table)
        .await
        .expect("table");
    let line = table
        .lines()
        .find(|l| l.starts_with("Sources:"))
        .expect("sources line");
    assert!(!line.contains("no answer"), "{line}");
    assert_eq!(
        line.contains("not polled in the recording"),
        !unrecorded.is_empty(),
        "{line} ({unrecorded:?})"
    );
    for name in unrecorded {
        assert!(line.contains(name), "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_file_replays_up_to_the_cut() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("full.rec");
    // A gzip member per ~second of recording, so cuts fall inside and between members.
    let (live, _, ends) = record_demo_with(&path, 3.2, Some(900)).await;
    let full = std::fs::read(&path).expect("read");
    assert!(live.len() >= 20);
    let header_end = ends[0] as usize;
    // Inside the header: not a recording, said plainly.
    for cut in [0, 1, 10, header_end / 2] {
        let p = dir.path().join(format!("h{cut}.rec"));
        std::fs::write(&p, &full[..cut]).expect("write");
        match Reader::open(&p) {
            Err(RecordError::NotARecording { .. }) => {}
            Err(e) => panic!("cut at {cut}: {e}"),
            Ok(_) => panic!("cut at {cut} inside the header opened"),
        }
    }
    // Any other cut: the complete records before it, in order, then End.
    let mut cuts: Vec<usize> = (0..=16)
        .map(|i| header_end + (full.len() - header_end) * i / 16)
        .collect();
    let mid = |k: usize| ((ends[k - 1] + ends[k]) / 2) as usize;
    cuts.extend([
        ends[3] as usize,
        ends[3] as usize + 1,
        mid(5),
        mid(11),
        ends[12] as usize - 1,
    ]);
    for cut in cuts {
        let p = dir.path().join(format!("c{cut}.rec"));
        std::fs::write(&p, &full[..cut]).expect("write");
        let at_least = ends[1..].iter().filter(|&&e| e as usize <= cut).count();
        // The sync-flush marker (a few bytes) may be missing while the record itself is whole.
        let at_most = ends[1..].iter().filter(|&&e| e as usize <= cut + 8).count();
        let (got, _, why) = drain(&p).await;
        assert!(
            (at_least..=at_most).contains(&got.len()),
            "cut at {cut}: {} polls, expected {at_least}..={at_most}",
            got.len()
        );
        for (c, l) in got.iter().zip(&live) {
            assert_eq!((c.at, c.source, &c.raw), (l.at, l.source, &l.raw));
        }
        if ends.contains(&(cut as u64)) {
            assert_eq!(why, None, "cut at {cut} on a record boundary loses nothing");
        }
    }
    for k in [5, 11] {
        let p = dir.path().join(format!("c{}.rec", mid(k)));
        let (got, _, why) = drain(&p).await;
        assert_eq!(got.len(), k - 1);
        assert!(why.is_some_and(|w| w.contains("cut short")));
    }
    // A flipped byte in the last member: CRC or deflate catches it; the members before replay.
    let mut bad = full.clone();
    let flip = mid(live.len() - 2);
    bad[flip] ^= 0x55;
    let p = dir.path().join("flipped.rec");
    std::fs::write(&p, &bad).expect("write");
    let (got, _, why) = drain(&p).await;
    assert!(
        !got.is_empty() && got.len() < live.len() - 2,
        "{} of {}",
        got.len(),
        live.len()
    );
    for (c, l) in got.iter().zip(&live) {
        assert_eq!(c.raw, l.raw);
    }
    assert!(why.is_some());
}

/// kill -9 mid-recording: the recorder is first frozen (SIGSTOP), so the file is exactly what the
/// kill leaves. Each record is sync-flushed as it is written, so whenever the recorder is between
/// two writes the file ends with deflate's sync-flush marker (00 00 FF FF) and holds every record
/// written so far; a buffered writer ends mid-block and holds records back in memory. Frozen at
/// twenty moments, the file must end at a marker at nearly all of them (a stop can land inside a
/// write, which takes microseconds of each poll interval). Then the kill loses nothing readable.
#[test]
fn kill_9_loses_at_most_the_last_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("killed.rec");
    /// Kills the recorder when the test ends, failed asserts included (no orphan holding pipes).
    struct Reaped(std::process::Child);
    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Reaped(
        std::process::Command::new(env!("CARGO_BIN_EXE_rocetop"))
            .args(["record", "--demo", "--out"])
            .arg(&out)
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn rocetop record"),
    );
    // Wait for some polls to be on disk (the header alone is a few kB).
    let t0 = Instant::now();
    let mut polls = 0;
    while polls < 15 {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "recorder wrote {polls} polls"
        );
        std::thread::sleep(Duration::from_millis(100));
        polls = Reader::open(&out).map(|r| r.count()).unwrap_or(0);
    }
    let pid = child.0.id().to_string();
    let signal = |sig: &str| {
        let ok = std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "kill {sig} {pid}");
    };
    let ends_at_sync_marker = || {
        let bytes = std::fs::read(&out).expect("read recording");
        bytes.ends_with(&[0, 0, 0xff, 0xff])
    };
    let mut at_marker = 0;
    for i in 0..20u64 {
        signal("-STOP");
        at_marker += usize::from(ends_at_sync_marker());
        signal("-CONT");
        // Stops spread over the poll interval, not locked to its phase.
        std::thread::sleep(Duration::from_millis(53 + 17 * (i % 5)));
    }
    assert!(
        at_marker >= 17,
        "the file ended at a sync-flush marker at {at_marker} of 20 stops: records are held back"
    );
    signal("-STOP");
    let stopped_at = rocetop::metrics::now_ms();
    let at_stop: Vec<i64> = Reader::open(&out).expect("open").map(|p| p.at).collect();
    signal("-KILL");
    let _ = child.0.wait();
    let mut r = Reader::open(&out).expect("open");
    let n = r.by_ref().count();
    assert_eq!(n, at_stop.len(), "the kill lost nothing that was readable");
    assert!(r.end().is_none(), "killed: no end record");
    let newest = at_stop.iter().copied().max().expect("polls");
    // A figure, not a bound: how far the file's newest poll lies before the stop.
    eprintln!(
        "kill -9: newest record {} ms before the stop, {} records, {at_marker}/20 stops at a marker",
        stopped_at - newest,
        at_stop.len()
    );
    let rt = tokio::runtime::Runtime::new().expect("rt");
    let (got, store, _) = rt.block_on(drain(&out));
    assert_eq!(got.len(), n);
    // Topology reads start within 1 s (staggered like every source), so they may not have
    // answered yet; none failed, and every counter source answered.
    assert!(
        store
            .sources()
            .all(|(_, h)| h.up != Some(false)
                && (h.up == Some(true) || h.name.ends_with(" topology"))),
        "every demo source answered"
    );
}

#[test]
fn the_binary_records_and_replays_headless() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("cli.rec");
    let bin = env!("CARGO_BIN_EXE_rocetop");
    let rec = std::process::Command::new(bin)
        .args(["record", "--demo", "--duration", "2s", "--out"])
        .arg(&out)
        .output()
        .expect("run record");
    assert!(
        rec.status.success(),
        "{}",
        String::from_utf8_lossy(&rec.stderr)
    );
    assert!(String::from_utf8_lossy(&rec.stderr).contains("B/s"));
    let rep = std::process::Command::new(bin)
        .args(["replay", "--format", "prom"])
        .arg(&out)
        .output()
        .expect("run replay");
    assert!(
        rep.status.success(),
        "{}",
        String::from_utf8_lossy(&rep.stderr)
    );
    let text = String::from_utf8_lossy(&rep.stdout);
    for n in 1..=8 {
        assert!(
            text.contains(&format!("rocetop_source_up{{source=\"ubunturdma{n}\"}} 1")),
            "{text}"
        );
    }
    // JSON carries what `snapshot --format json` does: episodes, the fabric and its pause tree.
    let rep = std::process::Command::new(bin)
        .args(["replay", "--format", "json"])
        .arg(&out)
        .output()
        .expect("run replay");
    let doc: serde_json::Value = serde_json::from_slice(&rep.stdout).expect("JSON");
    assert!(doc["episodes"].is_array(), "{doc}");
    assert!(doc["fabric"]["links"].is_array(), "{}", doc["fabric"]);
    assert!(doc["pause_tree"].is_object(), "{}", doc["pause_tree"]);
    let junk = dir.path().join("junk");
    std::fs::write(&junk, b"not a recording").expect("write");
    let bad = std::process::Command::new(bin)
        .args(["replay"])
        .arg(&junk)
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a rocetop recording"));
}

async fn next(r: &mut rocetop::record::Replay, ms: u64) -> Option<Feed> {
    tokio::time::timeout(Duration::from_millis(ms), r.rx.recv())
        .await
        .ok()
        .flatten()
}

fn recording(dir: &Path, secs: f64) -> PathBuf {
    let path = dir.join("paced.rec");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("rt");
    rt.block_on(record_demo(&path, secs));
    path
}

#[test]
fn pacing_pause_step_seek_and_speed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = recording(dir.path(), 3.2);
    let rt = tokio::runtime::Runtime::new().expect("rt");
    rt.block_on(async {
        let mut r = replay_feed(&path, 1.0).expect("open");
        let (start, end) = (r.start, r.end);
        assert!(end - start >= 2000, "{start}..{end}");
        // At 1x, the first poll comes at once and a poll 2 s later does not within 0.5 s.
        let Some(Feed::Data(first)) = next(&mut r, 1000).await else {
            panic!("no first poll")
        };
        // Polls of different sources taken in the same instant are written in the order they
        // finished, so the first one read may be a few ms after the earliest stamp.
        assert!(
            (0..1000).contains(&(first.at - start)),
            "first poll at {} vs start {start}",
            first.at
        );
        let t0 = Instant::now();
        let mut latest = start;
        while t0.elapsed() < Duration::from_millis(500) {
            if let Some(Feed::Data(c)) = next(&mut r, 50).await {
                latest = latest.max(c.at);
            }
        }
        assert!(latest - start < 1200, "paced: {}", latest - start);
        // Paused: nothing flows, the clock stands; a step delivers exactly one poll.
        r.control.pause();
        tokio::time::sleep(Duration::from_millis(50)).await;
        while next(&mut r, 50).await.is_some() {}
        let c0 = r.control.clock();
        assert!(c0.paused);
        assert!(next(&mut r, 1500).await.is_none(), "paused feed delivered");
        assert_eq!(r.control.clock().at, c0.at);
        r.control.step();
        assert!(matches!(next(&mut r, 1000).await, Some(Feed::Data(_))));
        assert!(next(&mut r, 300).await.is_none());
        // Seek back to the start: Reset, then the feed starts over from the first poll.
        r.control.seek(start);
        assert!(matches!(next(&mut r, 1000).await, Some(Feed::Reset { at }) if at == start));
        assert!(matches!(next(&mut r, 1000).await, Some(Feed::Seeked { at }) if at == start));
        r.control.step();
        let Some(Feed::Data(again)) = next(&mut r, 1000).await else {
            panic!("no poll after seek")
        };
        // The same first poll as at the start (file order: not always the earliest stamp, above).
        assert_eq!(
            (again.at, &again.source),
            (first.at, &first.source),
            "start {start}"
        );
        // Seek forward while paused: the history before the target arrives at once, in order.
        r.control.seek(end - 500);
        let mut ats = Vec::new();
        while let Some(f) = next(&mut r, 300).await {
            if let Feed::Data(c) = f {
                ats.push(c.at);
            }
        }
        assert!(
            !ats.is_empty() && ats.iter().all(|&a| a < end - 500),
            "{ats:?}"
        );
        assert_eq!(r.control.clock().at, end - 500);
        // Fast: the rest arrives, then End.
        r.control.set_speed(100.0);
        r.control.resume();
        let mut ended = false;
        while let Some(f) = next(&mut r, 2000).await {
            if let Feed::End { at, cut } = f {
                assert_eq!(cut, None);
                assert!(at >= end);
                ended = true;
                break;
            }
        }
        assert!(ended);
        assert!(r.control.clock().ended);
    });
}

/// Seeking back in a replay rebuilds the state at the cursor from the recording, through the same
/// feed → event mapping as the TUI (`Replay::event` into `App::update`): no source turns stale, no
/// alert is raised by the seek, the clock is the cursor's, and "end of recording" is not shown.
#[test]
fn seeking_back_rebuilds_the_cursor_and_raises_nothing() {
    use rocetop::app::{App, Event};
    use rocetop::metrics::query;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = recording(dir.path(), 7.5);
    let rt = tokio::runtime::Runtime::new().expect("rt");
    rt.block_on(async {
        let mut r = replay_feed(&path, f64::INFINITY).expect("open");
        let theme = rocetop::theme::Theme::named("dark").expect("theme");
        let mut app = App::new(r.config.clone(), r.new_store(), theme, r.start);
        app.started = r.start;
        // Play to the end, as fast as it reads.
        loop {
            let f = next(&mut r, 20_000).await.expect("feed stalls");
            let end = matches!(f, Feed::End { .. });
            let (ev, at) = r.event(f);
            app.update(ev, at);
            if end {
                break;
            }
        }
        assert!(
            app.message()
                .as_ref()
                .is_some_and(|(_, m)| m.contains("end of recording"))
        );
        let active_at_end = app.alerts().active().len();
        // Back to 2 s after the start, paused there.
        r.control.pause();
        let cursor = r.start + 2000;
        r.control.seek(cursor);
        let mut rewound = false;
        loop {
            let f = next(&mut r, 20_000).await.expect("no Seeked after a seek");
            rewound |= matches!(f, Feed::Reset { .. });
            let done = matches!(f, Feed::Seeked { .. });
            let (ev, at) = r.event(f);
            app.update(ev, at);
            if done {
                break;
            }
        }
        assert!(rewound, "a seek backwards starts over");
        app.update(Event::Tick, r.control.clock().at);
        assert_eq!(app.view_now(), cursor, "the screen's clock is the cursor's");
        let stale: Vec<_> = app
            .alerts()
            .active()
            .iter()
            .map(|a| format!("{} {}", a.subject.describe(), a.what))
            .filter(|a| a.contains("stale") || a.contains("down"))
            .collect();
        assert!(stale.is_empty(), "the seek raised {stale:?}");
        for (_, h) in app.store.sources() {
            if h.up.is_some() {
                assert!(!h.is_stale(cursor), "{} stale at the cursor", h.name);
            }
        }
        assert!(
            app.alerts().active().len() <= active_at_end,
            "no alert is raised by seeking"
        );
        let msg = app.message().as_ref().map(|(_, m)| m.clone());
        assert!(msg.is_none(), "{msg:?} still shown at the cursor");
        // The state is the recording's up to the cursor: nothing from after it.
        let newest = query::latest(&app.store, SW_PFC_RX_NAME, &[]).map(|(t, _)| t);
        assert!(
            newest.is_some_and(|t| t <= cursor && t > r.start),
            "{newest:?} vs cursor {cursor}"
        );
        r.control.stop();
    });
}

const SW_PFC_RX_NAME: &str = rocetop::metrics::names::SW_PFC_RX;
