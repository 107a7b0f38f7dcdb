//! The terminal's state for the live screen: raw mode and the alternate screen entered by a guard
//! that restores them on every way out, the TTY check, and the heap setting the screen runs with.

use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{
    EndSynchronizedUpdate, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode,
    enable_raw_mode,
};
use crossterm::{cursor, execute};
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

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
pub(super) struct Guard;

impl Guard {
    pub(super) fn enter(mouse: bool) -> io::Result<Guard> {
        on_abort::arm();
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

/// The way out no guard sees: an allocation that fails aborts the process (Rust's default
/// allocation-error handler calls `abort`), and so does a panic while panicking. No destructor
/// runs, so a SIGABRT handler restores the terminal itself, with what a signal handler may call:
/// `write` of the fixed bytes that leave the alternate screen, and `tcsetattr` with the terminal
/// settings saved before raw mode. Then the default action goes on (the process still aborts, and
/// a core dump is still made where one would be).
#[cfg(unix)]
#[allow(unsafe_code)]
mod on_abort {
    use std::sync::OnceLock;

    /// Mouse off, end of a synchronized update, main screen, cursor shown.
    const LEAVE: &[u8] =
        b"\x1b[?1006l\x1b[?1015l\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?2026l\x1b[?1049l\x1b[?25h";

    /// The terminal settings before raw mode, read once.
    static COOKED: OnceLock<libc::termios> = OnceLock::new();

    extern "C" fn restore(sig: libc::c_int) {
        // SAFETY: only async-signal-safe calls (write, tcsetattr, signal, raise), on memory set
        // before the handler was installed and never changed after.
        unsafe {
            let _ = libc::write(1, LEAVE.as_ptr().cast(), LEAVE.len());
            if let Some(t) = COOKED.get() {
                let _ = libc::tcsetattr(0, libc::TCSANOW, t);
            }
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }

    /// Save the settings and install the handler (before raw mode: what is saved is cooked).
    pub(super) fn arm() {
        // SAFETY: tcgetattr writes the struct it is given; an all-zero termios is a valid value.
        let mut t: libc::termios = unsafe { std::mem::zeroed() };
        if unsafe { libc::tcgetattr(0, &mut t) } != 0 || COOKED.set(t).is_err() {
            return;
        }
        // SAFETY: the handler only makes async-signal-safe calls.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = restore as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = libc::SA_RESETHAND;
            libc::sigaction(libc::SIGABRT, &sa, std::ptr::null_mut());
        }
    }
}

#[cfg(not(unix))]
mod on_abort {
    pub(super) fn arm() {}
}

/// Without a terminal the screen cannot run: say so (the exit code to return).
pub(super) fn need_terminal() -> Option<ExitCode> {
    if io::stdout().is_terminal() && io::stdin().is_terminal() {
        return None;
    }
    crate::safe::eprintln(
        "rocetop: the live screen needs a terminal, and stdin or stdout is not one.\n  \
         Run it in a terminal (or tmux), or use `rocetop snapshot` for a one-shot table.",
    );
    Some(ExitCode::from(2))
}

/// Free heap the screen keeps instead of giving back to the system at once (glibc's malloc).
///
/// The screen's polls are allocated on tokio's workers and freed on the screen's thread, which
/// also allocates and frees each frame's buffers: once a second the free room at the heap's top
/// went over glibc's trim threshold (it follows the largest block freed, ~0.4 MB here), so the
/// screen's thread gave it back (`brk`) and the workers took it again (`brk`, then a page fault
/// for every page touched). `strace -f` of the live screen, N=8 streaming: 1.3 `brk` a second on
/// the workers, 0.5 on the screen's thread, 76 page faults a second on the workers; `rocetop
/// export` (polls freed on the workers) 0 and 3. Fixed thresholds: 8 MiB of free top kept (peak
/// RSS is not raised by what is kept, only what is given back is no longer taken again), and
/// blocks from 4 MiB mapped on their own, about where glibc's moving threshold ends up (setting
/// the trim threshold stops it moving, so both are set).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub(super) fn keep_heap_top() {
    // SAFETY: mallopt only sets malloc parameters (it takes malloc's own lock to do so).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 8 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(super) fn keep_heap_top() {}
