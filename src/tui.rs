//! The terminal side of the live screen: the terminal's guard (`term.rs`: restored on every way
//! out: return, panic in any task, SIGTERM/SIGHUP), and the event loop that feeds `App::update`
//! and redraws only when something changed, at most `ui.max_fps` times a second, inside a
//! synchronized update so terminals that support it never show half a frame. New data alone
//! redraws once a second (see [`data_frame`]); keys never wait for that.

use crate::app::{Action, App, Event, ReplayAction, ReplayView};
use crate::collect::focus::{self, FocusFeed};
use crate::collect::poll::{self, Collected};
use crate::collect::source::Source;
use crate::config::Config;
use crate::metrics::{Store, now_ms};
use crate::record::Replay;
use crate::theme::{Theme, no_color_env};
use crate::{cmd, collect, ui};
use crossterm::event::{Event as TermEvent, KeyEventKind};
use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use crossterm::{execute, queue};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{self, BufWriter, Stdout};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// Set once a panic happened anywhere: nothing draws after it.
static PANICKED: AtomicBool = AtomicBool::new(false);

mod term;
pub use term::restore;
use term::{Guard, keep_heap_top, need_terminal};
/// The live screen over `cfg`'s sources, until `q`. Exit status 0 on `q`/Ctrl-C, 2 without a
/// terminal or with a bad theme, 101 after a panic, 128+N on signal N.
pub fn run(cfg: Config, theme: Option<&str>) -> ExitCode {
    if let Some(code) = need_terminal() {
        return code;
    }
    let theme = match Theme::pick(theme, &cfg.ui.theme, no_color_env()) {
        Ok(t) => t,
        Err(e) => {
            crate::safe::eprintln(&format!("rocetop: {e}"));
            return ExitCode::from(2);
        }
    };
    keep_heap_top();
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            crate::safe::eprintln(&format!("rocetop: cannot start the async runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    let code = rt.block_on(live(cfg, theme));
    // Collectors may sit in a slow request; do not wait for them.
    rt.shutdown_timeout(Duration::from_millis(300));
    code
}

fn install_panic_hook() -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        // First stop drawing and give the terminal back, then let the previous hook report.
        PANICKED.store(true, Ordering::SeqCst);
        restore();
        let _ = tx.send(true);
        prev(info);
    }));
    rx
}

type Term = Terminal<CrosstermBackend<BufWriter<Stdout>>>;

fn draw(term: &mut Term, app: &App) -> io::Result<()> {
    if PANICKED.load(Ordering::SeqCst) {
        return Ok(());
    }
    queue!(term.backend_mut(), BeginSynchronizedUpdate)?;
    // No cursor is set on the frame, so `draw` hides it.
    term.draw(|f| ui::draw(f, app))?;
    execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}

/// Where the screen's data comes from.
enum Feed {
    /// Collectors polling the sources (their raw outputs can be recorded with `r`).
    Live {
        rx: mpsc::Receiver<Collected>,
        sources: Vec<Arc<Source>>,
        _collectors: tokio::task::JoinSet<()>,
        /// On while recording: the collectors keep their polls' raw outputs.
        keep_raw: poll::KeepRaw,
        /// The config as written: a focus is built from it (the fleet polls `fleet_config`'s).
        cfg: Box<Config>,
    },
    /// A recording played back at its own times.
    Replay(Box<Replay>),
}

async fn live(cfg: Config, theme: Theme) -> ExitCode {
    // With a `[[prometheus]]` fleet, `[[node]]`s are polled only while focused (collect/focus.rs).
    let fleet = focus::fleet_config(&cfg);
    let mut store = screen_store(&fleet);
    let sources: Vec<Arc<_>> = collect::source::build(&fleet, &mut store, cmd::remote())
        .into_iter()
        .map(Arc::new)
        .collect();
    let (tx, rx) = mpsc::channel::<Collected>(1024);
    let keep_raw = poll::KeepRaw::default();
    let collectors = poll::spawn_all(sources.clone(), tx, keep_raw.clone());
    let _heap = crate::heap::spawn_give_back();
    let mut app = App::new(fleet, store, theme, now_ms());
    app.reach = focus::Reach::load(&cfg);
    screen(
        app,
        Feed::Live {
            rx,
            sources,
            _collectors: collectors,
            keep_raw,
            cfg: Box::new(cfg),
        },
    )
    .await
}

/// `rocetop replay FILE`: the same screen over a recording, on the recording's clock.
pub fn run_replay(path: &std::path::Path, speed: f64, theme: Option<&str>) -> ExitCode {
    keep_heap_top();
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            crate::safe::eprintln(&format!("rocetop: cannot start the async runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    let code = rt.block_on(async {
        let replay = match crate::record::replay_feed(path, speed) {
            Ok(r) => r,
            Err(e) => {
                crate::safe::eprintln(&format!("rocetop: {e}"));
                return ExitCode::from(2);
            }
        };
        // The file is checked first, so a bad recording is named even without a terminal.
        if let Some(code) = need_terminal() {
            return code;
        }
        let theme = match Theme::pick(theme, &replay.config.ui.theme, no_color_env()) {
            Ok(t) => t,
            Err(e) => {
                crate::safe::eprintln(&format!("rocetop: {e}"));
                return ExitCode::from(2);
            }
        };
        let store = replay.new_store();
        let mut app = App::new(replay.config.clone(), store, theme, replay.start);
        app.started = replay.start;
        if let Some(p) = &replay.config_problem {
            app.say(format!("recorded config no longer validates: {p}"));
        }
        screen(app, Feed::Replay(Box::new(replay))).await
    });
    rt.shutdown_timeout(Duration::from_millis(300));
    code
}

fn screen_store(cfg: &Config) -> Store {
    focus::screen_store(cfg)
}

/// The next item of an optional receiver; never, when there is none.
async fn next_of<T>(rx: Option<&mut mpsc::Receiver<T>>) -> Option<T> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn screen(mut app: App, mut feed: Feed) -> ExitCode {
    let mut panicked = install_panic_hook();
    let max_fps = app.cfg().ui.max_fps.clamp(1, 60);
    let mouse = app.cfg().ui.mouse;
    let guard = match Guard::enter(mouse) {
        Ok(g) => g,
        Err(e) => {
            restore();
            crate::safe::eprintln(&format!("rocetop: cannot set up the terminal: {e}"));
            return ExitCode::from(1);
        }
    };
    let mut term = match Terminal::new(CrosstermBackend::new(BufWriter::with_capacity(
        1 << 16,
        io::stdout(),
    ))) {
        Ok(t) => t,
        Err(e) => {
            drop(guard);
            crate::safe::eprintln(&format!("rocetop: cannot set up the terminal: {e}"));
            return ExitCode::from(1);
        }
    };
    if let Ok(s) = term.size() {
        app.size = (s.width, s.height);
    }
    // Test hook (tests/tui/tui_tmux.rs): an allocation that fails, the way out no guard sees.
    if let Some(ms) = std::env::var("ROCETOP_TEST_ALLOC_FAIL_AFTER_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<[u8; 1 << 20]>());
        });
    }
    // Test hook (tests/tui/tui_tmux.rs): a background task that panics, to prove the way out.
    if let Some(ms) = std::env::var("ROCETOP_TEST_PANIC_AFTER_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            panic!("test panic in a background task (ROCETOP_TEST_PANIC_AFTER_MS)");
        });
    }
    let mut events = match terminal_events() {
        Ok(rx) => rx,
        Err(e) => {
            drop(term);
            drop(guard);
            crate::safe::eprintln(&format!("rocetop: cannot read the terminal: {e}"));
            return ExitCode::from(1);
        }
    };
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut term_sig = signal(tokio::signal::unix::SignalKind::terminate());
    let mut hup_sig = signal(tokio::signal::unix::SignalKind::hangup());
    let mut recorder: Option<crate::record::Writer> = None;
    // The focused node's collectors (Enter on a fleet node), until Esc.
    let mut focused: Option<FocusFeed> = None;

    let min_frame = Duration::from_millis(1000 / u64::from(max_fps));
    let mut last_draw: Option<Instant> = None;
    // `dirty`: the user did something (key, resize, action): redraw within `min_frame`.
    // `data_dirty`: only new polls or the clock: redraw within `data_frame`.
    let mut dirty = true;
    let mut data_dirty = false;
    let mut code = ExitCode::SUCCESS;
    loop {
        let now = feed_now(&feed);
        if let Feed::Replay(r) = &feed {
            let c = r.control.clock();
            app.replay = Some(ReplayView {
                at: c.at,
                start: c.start,
                end: c.end,
                paused: c.paused,
                speed: c.speed,
                ended: c.ended,
            });
        }
        let frame = if dirty {
            min_frame
        } else {
            data_frame(min_frame)
        };
        if (dirty || data_dirty) && last_draw.is_none_or(|t| t.elapsed() >= frame) {
            // The polls held back while this frame was pending (`hold_polls`) go in first.
            take_waiting(&mut feed, &mut recorder, &mut app);
            app.update(Event::Frame, now);
            if draw(&mut term, &app).is_err() {
                break;
            }
            dirty = false;
            data_dirty = false;
            last_draw = Some(Instant::now());
        }
        let wait = last_draw.map_or(Duration::ZERO, |t| frame.saturating_sub(t.elapsed()));
        let pending = dirty || data_dirty;
        let (live_rx, replay_rx) = match &mut feed {
            Feed::Live { rx, sources, .. } => {
                let hold = hold_polls(pending, sources.len());
                ((!hold).then_some(rx), None)
            }
            Feed::Replay(r) => (None, Some(&mut r.rx)),
        };
        tokio::select! {
            biased;
            _ = panicked.changed() => {
                code = ExitCode::from(101);
                break;
            }
            _ = recv(&mut term_sig) => {
                app.update(Event::Shutdown, now);
                code = ExitCode::from(143);
            }
            _ = recv(&mut hup_sig) => {
                app.update(Event::Shutdown, now);
                code = ExitCode::from(129);
            }
            ev = events.recv() => match ev {
                Some(Ok(ev)) => dirty |= on_terminal_event(&mut app, ev, now),
                // No more input: the terminal is gone.
                Some(Err(_)) | None => break,
            },
            Some(c) = next_of(live_rx) => {
                record(&mut recorder, &mut app, &c);
                data_dirty |= app.update(Event::Collected(c), now_ms());
                // Take everything already waiting, so a burst of polls costs one frame.
                data_dirty |= take_waiting(&mut feed, &mut recorder, &mut app);
            }
            Some(c) = next_of(focused.as_mut().map(|f| &mut f.rx)) => {
                data_dirty |= app.update(Event::FocusCollected(c), now_ms());
            }
            Some(f) = next_of(replay_rx) => {
                dirty = true;
                if let Feed::Replay(r) = &feed {
                    let (ev, at) = r.event(f);
                    app.update(ev, at.max(now));
                }
            }
            _ = tick.tick() => data_dirty |= app.update(Event::Tick, now),
            _ = tokio::time::sleep(wait), if pending => {}
        }
        if !app.actions.is_empty() {
            dirty = true;
            for a in std::mem::take(&mut app.actions) {
                act(a, &mut app, &feed, &mut recorder, &mut focused);
            }
        }
        if let Feed::Live { keep_raw, .. } = &feed {
            // The collectors keep raw outputs exactly while a recording is open (started or
            // stopped by a key, or stopped by a write error); polls already on their way without
            // them are not recorded.
            keep_raw.set(recorder.is_some());
        }
        if app.quit() {
            break;
        }
    }
    if let Some(w) = recorder.take() {
        // SIGTERM/SIGHUP/q: the recording is closed cleanly, nothing half-written.
        let _ = w.finish(now_ms());
    }
    drop(term);
    drop(guard);
    code
}

/// The terminal's events (keys, mouse, resizes), read by a thread of its own and handed over a
/// channel until the terminal fails (its error is the last item).
///
/// crossterm's `EventStream` did this work on the screen's loop: each time the loop waited (on
/// every poll that arrived, ~20 times a second at 8 nodes) it tried the event reader's lock with
/// a zero timeout while its own waiting thread held it, which `parking_lot` spins out in
/// `sched_yield` calls: ~2 % of the live screen's CPU in `perf record` (bench/perf.sh, N=8).
/// A channel's receiver costs nothing to wait on.
fn terminal_events() -> io::Result<mpsc::Receiver<io::Result<TermEvent>>> {
    let (tx, rx) = mpsc::channel(64);
    std::thread::Builder::new()
        .name("rocetop-input".into())
        .spawn(move || {
            loop {
                let ev = crossterm::event::read();
                let failed = ev.is_err();
                // The screen is gone (receiver dropped), or the terminal: stop reading.
                if tx.blocking_send(ev).is_err() || failed {
                    break;
                }
            }
        })?;
    Ok(rx)
}

/// How long new data alone waits for a redraw: a second, the shortest poll interval, so every
/// poll is shown and the screen's figures (per-second rates) move once a second. Sources poll
/// staggered over the interval: a frame every 250 ms, as before, drew 4 frames a second of one- or
/// two-row changes, each recomputing the tab's view (the store changed), which was most of what
/// the live screen cost beyond `rocetop export` (bench/perf.sh). Longer only when
/// `max_fps` asks for it. Keys and resizes do not wait for this.
fn data_frame(min_frame: Duration) -> Duration {
    min_frame.max(Duration::from_secs(1))
}

/// Sources up to which polls arriving while a frame is pending wait in the channel for that
/// frame: at most a second of their polls (~20 KB each at most for a node) is held.
const HOLD_SOURCES: usize = 64;

/// Whether the loop leaves new polls in the channel until the pending frame (which takes them
/// in before drawing), rather than waking for each.
///
/// Each poll that arrived woke the screen's thread (a futex wake from the worker that sent it, a
/// switch to the screen's thread): ~12 wake-ups a second at N=8, where one frame a second shows
/// them all. A poll arriving with no frame pending still wakes the loop (it makes the frame), and
/// the pending frame waits no longer for it (`data_frame`). Past [`HOLD_SOURCES`] sources, the
/// polls are taken as they come (a second of them would be megabytes held, and the loop is busy
/// enough that they queue up while it works anyway).
fn hold_polls(pending: bool, sources: usize) -> bool {
    pending && sources <= HOLD_SOURCES
}

/// "Now" for the screen: the wall clock live, the recording's clock in a replay.
fn feed_now(feed: &Feed) -> i64 {
    match feed {
        Feed::Live { .. } => now_ms(),
        Feed::Replay(r) => r.control.clock().at,
    }
}

/// Every poll already waiting in the live feed's channel, recorded and handed to the app;
/// whether any of them changed what the screen shows.
fn take_waiting(
    feed: &mut Feed,
    recorder: &mut Option<crate::record::Writer>,
    app: &mut App,
) -> bool {
    let mut changed = false;
    if let Feed::Live { rx, .. } = feed {
        while let Ok(c) = rx.try_recv() {
            record(recorder, app, &c);
            changed |= app.update(Event::Collected(c), now_ms());
        }
    }
    changed
}

fn record(recorder: &mut Option<crate::record::Writer>, app: &mut App, c: &Collected) {
    if let Some(w) = recorder {
        if let Err(e) = w.write(c) {
            app.say(format!("recording stopped: {e}"));
            app.recording = None;
            *recorder = None;
        }
    }
}

/// Carry out what a key asked for.
fn act(
    a: Action,
    app: &mut App,
    feed: &Feed,
    recorder: &mut Option<crate::record::Writer>,
    focused: &mut Option<FocusFeed>,
) {
    match (a, feed) {
        (Action::Focus(node), Feed::Live { cfg, .. }) => {
            // One focus at a time: a previous one's collectors stop first.
            if let Some(f) = focused.take() {
                tokio::spawn(f.stop());
            }
            let now = now_ms();
            match focus::start(cfg, &node, &focus::Reach::load(cfg), cmd::remote()) {
                Ok((feed, fcfg, store)) => {
                    *focused = Some(feed);
                    app.update(
                        Event::Focused {
                            node,
                            cfg: Box::new(fcfg),
                            store: crate::app::NewStore(store),
                        },
                        now,
                    );
                }
                Err(why) => {
                    app.update(Event::FocusRefused { node, why }, now);
                }
            }
        }
        (Action::Unfocus, _) => {
            // Aborted and awaited off the loop: their transports drop, the connection closes.
            if let Some(f) = focused.take() {
                tokio::spawn(f.stop());
            }
        }
        (Action::ToggleRecord, Feed::Live { sources, .. }) => match recorder.take() {
            Some(w) => {
                let path = w.path().display().to_string();
                match w.finish(now_ms()) {
                    Ok(s) => app.say(format!("recorded {} polls to {path}", s.polls)),
                    Err(e) => app.say(format!("recording {path}: {e}")),
                }
                app.recording = None;
            }
            None => {
                let name = format!(
                    "rocetop-{}.rec",
                    crate::bundle::bundle_name(now_ms()).trim_start_matches("rocetop-incident-")
                );
                let path = std::path::PathBuf::from(name);
                // A new file, another name where one exists (never through a planted link).
                let w = crate::record::Writer::create_unique(
                    &path,
                    app.cfg(),
                    sources.iter().map(|s| &**s),
                );
                match w {
                    Ok(w) => {
                        let path = w.path().display().to_string();
                        app.say(format!("recording to {path} (r stops)"));
                        app.recording = Some(path);
                        *recorder = Some(w);
                    }
                    Err(e) => app.say(format!("cannot record to {}: {e}", path.display())),
                }
            }
        },
        (Action::Bundle, _) => {
            let lines: Vec<String> = app
                .log()
                .lines
                .iter()
                .rev()
                .take(1000)
                .rev()
                .cloned()
                .collect();
            let alerts = crate::bundle::alert_lines(&app.live_alerts().active());
            let at = feed_now(feed);
            let episodes =
                crate::app::episodes::text::json(&app.episodes().all(), app.links(), app.now());
            match crate::bundle::write_bundle_at(
                std::path::Path::new("."),
                app.cfg(),
                &app.store,
                &lines,
                &alerts,
                &crate::bundle::Found {
                    episodes: &episodes,
                    fabric: &crate::app::fabric::json_with_tree(app.fabric(), app.pause_tree()),
                    trees: &crate::app::episodes::text::trees(
                        app.pause_tree(),
                        app.now(),
                        &app.episodes().all(),
                        app.links(),
                    ),
                },
                at,
            ) {
                Ok(p) => app.say(format!("incident bundle written to {}", p.display())),
                Err(e) => app.say(format!("bundle failed: {e}")),
            }
        }
        (Action::Replay(ra), Feed::Replay(r)) => {
            let ctl = &r.control;
            match ra {
                ReplayAction::TogglePause => ctl.toggle_pause(),
                ReplayAction::Step => ctl.step(),
                ReplayAction::SeekBy(ms) => ctl.seek_by(ms),
                ReplayAction::Speed(x) => {
                    let s = ctl.clock().speed;
                    let s = if s.is_finite() && s > 0.0 { s } else { 1.0 };
                    ctl.set_speed((s * x).clamp(0.125, 256.0));
                }
            }
        }
        _ => {}
    }
}

fn on_terminal_event(app: &mut App, ev: TermEvent, now: i64) -> bool {
    match ev {
        TermEvent::Key(k) if k.kind != KeyEventKind::Release => app.update(Event::Key(k), now),
        TermEvent::Resize(w, h) => app.update(Event::Resize(w, h), now),
        TermEvent::Mouse(m) => app.update(Event::Mouse(m), now),
        _ => false,
    }
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Option<tokio::signal::unix::Signal> {
    tokio::signal::unix::signal(kind).ok()
}

/// Wait for a signal; a signal that could not be installed never fires.
async fn recv(s: &mut Option<tokio::signal::unix::Signal>) {
    match s {
        Some(s) => {
            s.recv().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::{HOLD_SOURCES, data_frame, hold_polls};
    use std::time::Duration;

    #[test]
    fn polls_wait_for_a_pending_frame_only() {
        // Nothing pending: a poll must wake the loop, or no frame would ever show it.
        assert!(!hold_polls(false, 9));
        assert!(!hold_polls(false, 0));
        // A frame pending: its polls wait for it, with few sources.
        assert!(hold_polls(true, 9));
        assert!(hold_polls(true, HOLD_SOURCES));
        // Many sources: taken as they come (a second of them is too much to hold).
        assert!(!hold_polls(true, HOLD_SOURCES + 1));
    }

    #[test]
    fn new_data_is_drawn_once_a_second() {
        let ms = Duration::from_millis;
        // 10 fps for keys: new data alone still waits a second (every 1 s poll is shown).
        assert_eq!(data_frame(ms(100)), ms(1000));
        // max_fps below 1: never faster than asked.
        assert_eq!(data_frame(ms(2000)), ms(2000));
    }
}
