//! The terminal side of the live screen: a TTY check, a guard that restores the terminal on every
//! way out (return, panic in any task, SIGTERM/SIGHUP), and the event loop that feeds `App::update`
//! and redraws only when something changed, at most `ui.max_fps` times a second, inside a
//! synchronized update so terminals that support it never show half a frame.

use crate::app::{App, Event};
use crate::collect::poll::{self, Collected};
use crate::config::Config;
use crate::metrics::{Store, now_ms};
use crate::theme::{Theme, no_color_env};
use crate::{cmd, collect, ui};
use crossterm::event::{
    DisableMouseCapture, EnableMouseCapture, Event as TermEvent, EventStream, KeyEventKind,
};
use crossterm::terminal::{
    BeginSynchronizedUpdate, EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen,
    disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute, queue};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// Set once a panic happened anywhere: nothing draws after it.
static PANICKED: AtomicBool = AtomicBool::new(false);
static MOUSE: AtomicBool = AtomicBool::new(false);

/// Leave raw mode and the alternate screen. Safe to call more than once.
pub fn restore() {
    let mut out = io::stdout();
    if MOUSE.load(Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(
        out,
        EndSynchronizedUpdate,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal when dropped, whatever the way out.
struct Guard;

impl Guard {
    fn enter(mouse: bool) -> io::Result<Guard> {
        enable_raw_mode()?;
        // From here on the guard exists, so a failure below still restores.
        let g = Guard;
        execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)?;
        if mouse {
            MOUSE.store(true, Ordering::SeqCst);
            execute!(io::stdout(), EnableMouseCapture)?;
        }
        Ok(g)
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// The live screen over `cfg`'s sources, until `q`. Exit status 0 on `q`/Ctrl-C, 2 without a
/// terminal or with a bad theme, 101 after a panic, 128+N on signal N.
pub fn run(cfg: Config, theme: Option<&str>) -> ExitCode {
    if !io::stdout().is_terminal() || !io::stdin().is_terminal() {
        eprintln!(
            "rocetop: the live screen needs a terminal, and stdin or stdout is not one.\n  \
             Run it in a terminal (or tmux), or use `rocetop snapshot` for a one-shot table."
        );
        return ExitCode::from(2);
    }
    let theme = match Theme::pick(theme, &cfg.ui.theme, no_color_env()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("rocetop: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("rocetop: cannot start the async runtime: {e}");
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
    term.draw(|f| ui::draw(f, app))?;
    execute!(term.backend_mut(), EndSynchronizedUpdate)?;
    Ok(())
}

async fn live(cfg: Config, theme: Theme) -> ExitCode {
    let mut panicked = install_panic_hook();
    let retention = cfg.poll.retention.as_millis() as i64;
    let min_interval = cfg
        .poll
        .interval
        .min(cfg.poll.switch_interval)
        .as_millis()
        .max(100) as i64;
    let mut store = Store::new(
        retention,
        (retention / min_interval + 16).clamp(64, 8192) as usize,
    );
    let sources: Vec<Arc<_>> = collect::source::build(&cfg, &mut store, cmd::remote())
        .into_iter()
        .map(Arc::new)
        .collect();
    let max_fps = cfg.ui.max_fps.clamp(1, 60);
    let mouse = cfg.ui.mouse;
    let mut app = App::new(cfg, store, theme, now_ms());

    let guard = match Guard::enter(mouse) {
        Ok(g) => g,
        Err(e) => {
            restore();
            eprintln!("rocetop: cannot set up the terminal: {e}");
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
            eprintln!("rocetop: cannot set up the terminal: {e}");
            return ExitCode::from(1);
        }
    };
    if let Ok(s) = term.size() {
        app.size = (s.width, s.height);
    }

    let (tx, mut rx) = mpsc::channel::<Collected>(1024);
    let _collectors = poll::spawn_all(sources, tx);
    // Test hook (tests/tui_tmux.rs): a background task that panics, to prove the way out.
    if let Some(ms) = std::env::var("ROCETOP_TEST_PANIC_AFTER_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            panic!("test panic in a background task (ROCETOP_TEST_PANIC_AFTER_MS)");
        });
    }
    let mut events = EventStream::new();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut term_sig = signal(tokio::signal::unix::SignalKind::terminate());
    let mut hup_sig = signal(tokio::signal::unix::SignalKind::hangup());

    let min_frame = Duration::from_millis(1000 / u64::from(max_fps));
    let mut last_draw: Option<Instant> = None;
    let mut dirty = true;
    let mut code = ExitCode::SUCCESS;
    loop {
        if dirty && last_draw.is_none_or(|t| t.elapsed() >= min_frame) {
            if draw(&mut term, &app).is_err() {
                // The terminal went away (hangup): nothing left to show.
                break;
            }
            dirty = false;
            last_draw = Some(Instant::now());
        }
        let wait = last_draw.map_or(Duration::ZERO, |t| min_frame.saturating_sub(t.elapsed()));
        tokio::select! {
            biased;
            _ = panicked.changed() => {
                code = ExitCode::from(101);
                break;
            }
            _ = recv(&mut term_sig) => {
                app.update(Event::Shutdown, now_ms());
                code = ExitCode::from(143);
            }
            _ = recv(&mut hup_sig) => {
                app.update(Event::Shutdown, now_ms());
                code = ExitCode::from(129);
            }
            ev = events.next() => match ev {
                Some(Ok(ev)) => dirty |= on_terminal_event(&mut app, ev),
                // No more input: the terminal is gone.
                Some(Err(_)) | None => break,
            },
            Some(c) = rx.recv() => {
                dirty |= app.update(Event::Collected(c), now_ms());
                // Take everything already waiting, so a burst of polls costs one frame.
                while let Ok(c) = rx.try_recv() {
                    dirty |= app.update(Event::Collected(c), now_ms());
                }
            }
            _ = tick.tick() => dirty |= app.update(Event::Tick, now_ms()),
            _ = tokio::time::sleep(wait), if dirty => {}
        }
        if app.quit {
            break;
        }
    }
    drop(term);
    drop(guard);
    code
}

fn on_terminal_event(app: &mut App, ev: TermEvent) -> bool {
    let now = now_ms();
    match ev {
        TermEvent::Key(k) if k.kind != KeyEventKind::Release => app.update(Event::Key(k), now),
        TermEvent::Resize(w, h) => app.update(Event::Resize(w, h), now),
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
