//! Every command's stdout goes through [`print`], so that a reader that stops early
//! (`rocetop snapshot --format prom | head -1`) ends the command quietly, as coreutils end: no
//! panic, no backtrace, the exit status a shell reports for SIGPIPE (128 + 13).
//!
//! `print!` panics on a closed pipe (Rust ignores SIGPIPE, so the write fails with EPIPE); writing
//! through a locked handle and looking at the error instead is the one mechanism every writer shares.

use std::io::{self, Write};
use std::process::ExitCode;

/// The status `sh` shows for a process killed by SIGPIPE; `set -o pipefail` scripts see what they
/// see of `yes | head -1`.
pub const BROKEN_PIPE_STATUS: u8 = 141;

/// Write `text` to stdout and flush. `Err` carries the exit code to end with: quietly
/// [`BROKEN_PIPE_STATUS`] when the reader went away, 1 after saying why for any other error
/// (a full disk is worth a sentence).
pub fn print(text: &str) -> Result<(), ExitCode> {
    write_to(&mut io::stdout().lock(), text)
}

/// What a command that streamed its output to [`io::stdout`] ends with: `res` (its writes) and
/// the final flush, judged as [`print`] judges them.
pub fn finish(res: io::Result<()>) -> Result<(), ExitCode> {
    status(res.and_then(|()| io::stdout().lock().flush()))
}

fn write_to(w: &mut dyn Write, text: &str) -> Result<(), ExitCode> {
    status(w.write_all(text.as_bytes()).and_then(|()| w.flush()))
}

fn status(res: io::Result<()>) -> Result<(), ExitCode> {
    match res {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(ExitCode::from(BROKEN_PIPE_STATUS)),
        Err(e) => {
            crate::safe::eprintln(&format!("rocetop: cannot write to stdout: {e}"));
            Err(ExitCode::from(1))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_is_a_quiet_141_and_success_is_ok() {
        assert_eq!(
            write_to(&mut Closed, "x"),
            Err(ExitCode::from(BROKEN_PIPE_STATUS))
        );
        let mut v = Vec::new();
        assert_eq!(write_to(&mut v, "abc"), Ok(()));
        assert_eq!(v, b"abc");
    }
}
