//! `rocetop record`: the collectors without a screen, every poll appended to a recording until
//! the duration ends or SIGINT/SIGTERM; and `rocetop replay --format`: a recording replayed
//! headless, printing the final state as `snapshot` does.

use crate::collect::poll::{KeepRaw, spawn_all};
use crate::config::Config;
use crate::metrics::{Store, now_ms};
use crate::output::{Format, json, prom, table};
use crate::record::{Feed, Writer, replay_feed};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What a recording run wrote.
#[derive(Debug)]
pub struct Summary {
    pub polls: u64,
    pub bytes: u64,
    pub raw_bytes: u64,
    pub sources: usize,
    pub elapsed: Duration,
}

impl Summary {
    pub fn line(&self, out: &Path) -> String {
        let secs = self.elapsed.as_secs_f64().max(0.001);
        format!(
            "recorded {} polls of {} sources in {:.1} s to {}: {} bytes ({:.0} B/s; {} bytes of raw output, {:.1}x compressed)",
            self.polls,
            self.sources,
            secs,
            out.display(),
            self.bytes,
            self.bytes as f64 / secs,
            self.raw_bytes,
            self.raw_bytes as f64 / self.bytes.max(1) as f64,
        )
    }
}

/// Resolves on SIGINT, SIGTERM or SIGHUP (or never, where signals cannot be installed). A hangup
/// (the terminal closed) stops cleanly too, except under `nohup`: a SIGHUP this process was
/// started ignoring stays ignored.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            let mut hup = if sighup_ignored() {
                None
            } else {
                signal(SignalKind::hangup()).ok()
            };
            let hangup = async {
                match &mut hup {
                    Some(h) => {
                        h.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
                _ = hangup => {}
            }
            return;
        }
    }
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Whether SIGHUP was ignored when this process started (`nohup`, `trap '' HUP`), read from the
/// `SigIgn` mask in /proc (no unsafe sigaction call). Elsewhere: not ignored.
pub fn sighup_ignored() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("SigIgn:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        })
        // Signal n is bit n-1; SIGHUP is 1.
        .is_some_and(|mask| mask & 1 != 0)
}

/// Record until `duration` passes or a signal arrives; the file is closed cleanly either way.
pub async fn run(cfg: &Config, out: &Path, duration: Option<Duration>) -> Result<Summary, String> {
    let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 16);
    let sources: Vec<Arc<_>> = super::build_sources(cfg, &mut store, super::remote())
        .into_iter()
        .map(Arc::new)
        .collect();
    let mut writer =
        Writer::create(out, cfg, sources.iter().map(|s| &**s)).map_err(|e| e.to_string())?;
    // Signals are caught from here on, so one during the connects still closes the file.
    let stop = shutdown_signal();
    tokio::pin!(stop);
    // Connections are opened before the first poll, as `snapshot` does.
    let mut stopped = tokio::select! {
        _ = super::warm_up(cfg, &sources) => false,
        _ = &mut stop => true,
    };
    let n_sources = sources.len();
    crate::safe::eprintln(&format!(
        "rocetop: recording {n_sources} sources to {}{}; Ctrl-C stops",
        out.display(),
        duration.map_or(String::new(), |d| format!(
            " for {}",
            crate::config::duration::format(d)
        )),
    ));
    let (tx, mut rx) = mpsc::channel(256);
    let t0 = Instant::now();
    let tasks = spawn_all(sources, tx, KeepRaw::always());
    let _heap = crate::heap::spawn_give_back();
    let deadline = async {
        match duration {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    let mut failure = None;
    while !stopped {
        tokio::select! {
            c = rx.recv() => match c {
                Some(c) => {
                    if let Err(e) = writer.write(&c) {
                        failure = Some(e.to_string());
                        break;
                    }
                }
                None => break,
            },
            _ = &mut deadline => break,
            _ = &mut stop => stopped = true,
        }
    }
    drop(tasks);
    let elapsed = t0.elapsed();
    if let Some(f) = failure {
        return Err(f);
    }
    let stats = writer.finish(now_ms()).map_err(|e| e.to_string())?;
    if stats.polls == 0 {
        // A file with nothing in it must not look like a successful recording.
        return Err(format!(
            "{}: no poll finished in {:.1} s ({}): the file holds no data",
            out.display(),
            elapsed.as_secs_f64(),
            if stopped {
                "stopped by a signal first"
            } else {
                "the duration ended before any source answered; raise --duration"
            }
        ));
    }
    Ok(Summary {
        polls: stats.polls,
        bytes: stats.bytes,
        raw_bytes: stats.raw_bytes,
        sources: n_sources,
        elapsed,
    })
}

/// What a headless replay leaves.
pub struct Replayed {
    pub store: Store,
    pub polls: usize,
    /// Why the file ended early, if it did.
    pub cut: Option<String>,
    /// What the episode detector found, the fabric graph and its pause tree at the end, as
    /// `snapshot --format json` writes them.
    pub episodes: serde_json::Value,
    pub fabric: serde_json::Value,
    pub pause_tree: serde_json::Value,
}

/// Replay a whole recording as fast as it reads, into a fresh store: every record through
/// `App::update` and a tick at each new instant, as the replay screen feeds them, so its
/// episodes are those the screen finds.
pub async fn replay_all(path: &Path) -> Result<Replayed, String> {
    use crate::app::{App, Event};
    let mut r = replay_feed(path, f64::INFINITY).map_err(|e| e.to_string())?;
    let theme = crate::theme::Theme::named("dark")?;
    let mut app = App::new(r.config.clone(), r.new_store(), theme, r.start);
    app.started = r.start;
    let mut polls = 0;
    let mut cut = None;
    let mut last = None;
    while let Some(f) = r.rx.recv().await {
        if let Feed::Data(_) = &f {
            polls += 1;
        }
        let (ev, at) = r.event(f);
        if let Some(prev) = last.filter(|&p| p != at) {
            app.update(Event::Tick, prev);
        }
        if let Event::Ended { cut: c } = ev {
            cut = c;
            break;
        }
        app.update(ev, at);
        last = Some(at);
    }
    r.control.stop();
    let now = last.unwrap_or(r.start);
    if last.is_some() {
        app.update(Event::Tick, now);
    }
    let episodes = crate::app::episodes::text::json(&app.episodes().all(), app.links(), now);
    let fabric = crate::app::fabric::json(app.fabric());
    let pause_tree = crate::app::fabric::pause_tree::json(app.pause_tree());
    Ok(Replayed {
        fabric,
        pause_tree,
        store: std::mem::replace(&mut app.store, Store::new(1, 1)),
        polls,
        cut,
        episodes,
    })
}

/// `rocetop replay FILE --format F`: the state after the last record, as `snapshot` prints it.
pub async fn replay_print(path: &Path, format: Format) -> Result<String, String> {
    let r = replay_all(path).await?;
    if r.polls == 0 {
        return Err(format!(
            "{}: no poll to replay{}",
            path.display(),
            r.cut
                .as_deref()
                .map_or(String::new(), |c| format!(" ({c})"))
        ));
    }
    if let Some(c) = &r.cut {
        crate::safe::eprintln(&format!(
            "rocetop: {}: replayed {} polls; the file ends early ({c})",
            path.display(),
            r.polls
        ));
    }
    Ok(match format {
        Format::Prom => prom::render(&r.store, true, true),
        Format::Json => json::document(
            &r.store,
            vec![
                ("episodes", r.episodes),
                ("fabric", r.fabric),
                ("pause_tree", r.pause_tree),
            ],
        ),
        Format::Table => table::render(&r.store, table::Silent::NotRecorded),
    })
}
