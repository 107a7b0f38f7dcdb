//! The native `tail -F` for files on the machine rocetop runs on: no `tail` process, no inotify.
//!
//! [`FileFollower`] is a synchronous state machine polled every [`POLL_EVERY`]: it starts with the
//! last N lines (found by reading backwards from the end, never the whole file), then reads what was
//! appended. It follows the *name*, as `tail -F` does: when the path names another file (rotation)
//! the old one is read to its end first, then the new one from its start; a file that shrank
//! (truncation) is read again from its start; a missing file is retried every [`RETRY_EVERY`] and
//! said so once. Its notices are lines in GNU tail's own words (`tail: 'x' has been replaced;
//! following new file`), so the follower task reads the native follower and `tail -F` over SSH alike.
//! Memory is bounded: at most [`READ_BUDGET`] bytes per poll, and one partial line of at most
//! [`MAX_LINE`] bytes.

pub mod linebuf;

use super::super::transport::StreamEvent;
use linebuf::LineBuf;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How often the async wrapper looks at the file when it has nothing new.
pub const POLL_EVERY: Duration = Duration::from_millis(200);
/// How often a missing file is looked for again.
pub const RETRY_EVERY: Duration = Duration::from_millis(500);
/// A line longer than this is cut (the parser reads no more of a line either).
pub const MAX_LINE: usize = 64 * 1024;
/// Bytes read per poll at most: a 1 GB burst is read in slices, with backpressure in between.
pub const READ_BUDGET: usize = 256 * 1024;
/// The furthest back the start looks for the last N lines; beyond it the start is mid-file.
const MAX_BACKSCAN: u64 = 16 << 20;
const CHUNK: usize = 64 * 1024;

/// What one poll produced, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    Line(String),
    /// Something about the file, in GNU tail's words (`tail: ...`).
    Notice(String),
}

/// Identity of a file: a rotated log is another inode under the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId {
    device: u64,
    inode: u64,
}

#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> FileId {
    use std::os::unix::fs::MetadataExt;
    FileId {
        device: m.dev(),
        inode: m.ino(),
    }
}

#[cfg(not(unix))]
fn file_id(_m: &std::fs::Metadata) -> FileId {
    FileId {
        device: 0,
        inode: 0,
    }
}

struct Open {
    file: File,
    id: FileId,
    pos: u64,
}

/// `tail -n N -F path`, one poll at a time.
pub struct FileFollower {
    path: PathBuf,
    /// Lines to start with; used once, on the first file seen.
    start_lines: Option<usize>,
    open: Option<Open>,
    buf: LineBuf,
    /// The start landed mid-line (the last N lines reach further back than we look): skip to the
    /// first newline.
    skip_partial: bool,
    /// A missing file was reported and not yet found again.
    missing_said: bool,
    next_try: Option<Instant>,
    bytes_read: u64,
}

impl FileFollower {
    pub fn new(path: impl Into<PathBuf>, lines: usize) -> Self {
        Self {
            path: path.into(),
            start_lines: Some(lines),
            open: None,
            buf: LineBuf::new(MAX_LINE),
            skip_partial: false,
            missing_said: false,
            next_try: None,
            bytes_read: 0,
        }
    }

    /// Every byte read from disk so far (the start's backward scan included): proof that a big
    /// file is not read whole.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }

    /// Read what is new. Returns true when there is more to read right away (the read budget ran
    /// out), false when the caller may wait [`POLL_EVERY`].
    pub fn poll(&mut self, out: &mut Vec<Event>) -> bool {
        if self.open.is_none() && !self.try_open(out) {
            return false;
        }
        let more = self.read_some(out);
        if more {
            return true;
        }
        // A new file under the name is read at once.
        self.check_name(out)
    }

    /// Open the file (when it is time to try); true when it is open.
    fn try_open(&mut self, out: &mut Vec<Event>) -> bool {
        let now = Instant::now();
        if self.next_try.is_some_and(|t| now < t) {
            return false;
        }
        let opened = File::open(&self.path).and_then(|f| {
            let m = f.metadata()?;
            Ok((f, m))
        });
        match opened {
            Ok((file, meta)) => {
                let id = file_id(&meta);
                let pos = match self.start_lines.take() {
                    Some(n) => self.start_of_last_lines(&file, meta.len(), n),
                    None => 0,
                };
                if self.missing_said {
                    out.push(Event::Notice(format!(
                        "tail: '{}' has appeared;  following new file",
                        self.name()
                    )));
                    self.missing_said = false;
                }
                self.open = Some(Open { file, id, pos });
                self.next_try = None;
                true
            }
            Err(e) => {
                if !self.missing_said {
                    out.push(Event::Notice(format!(
                        "tail: cannot open '{}' for reading: {}",
                        self.name(),
                        io_reason(&e)
                    )));
                    self.missing_said = true;
                }
                // A file that appears later is read from its start, as `tail -F` does.
                self.start_lines = None;
                self.next_try = Some(now + RETRY_EVERY);
                false
            }
        }
    }

    /// The offset of the first of the last `n` lines, scanning backwards in chunks. A last line
    /// without its newline counts as a line, as in `tail -n`.
    fn start_of_last_lines(&mut self, file: &File, len: u64, n: usize) -> u64 {
        if n == 0 {
            return len;
        }
        let floor = len.saturating_sub(MAX_BACKSCAN);
        let mut end = len;
        let mut newlines = 0usize;
        let mut chunk = vec![0u8; CHUNK];
        let mut first = true;
        while end > floor {
            let start = end.saturating_sub(CHUNK as u64).max(floor);
            let want = (end - start) as usize;
            let Some(slice) = chunk.get_mut(..want) else {
                break;
            };
            if read_at(file, start, slice).is_err() {
                return start;
            }
            self.bytes_read += want as u64;
            let mut bytes: &[u8] = slice;
            if first {
                // The file's own final newline ends the last line; it does not start one.
                if let Some((b'\n', rest)) = bytes.split_last() {
                    bytes = rest;
                }
                first = false;
            }
            for (i, &b) in bytes.iter().enumerate().rev() {
                if b == b'\n' {
                    newlines += 1;
                    if newlines == n {
                        return start + i as u64 + 1;
                    }
                }
            }
            end = start;
        }
        if floor > 0 {
            self.skip_partial = true;
        }
        floor
    }

    /// Read up to the budget from the open file; true when the budget ran out before its end.
    fn read_some(&mut self, out: &mut Vec<Event>) -> bool {
        let Some(open) = self.open.as_mut() else {
            return false;
        };
        let len = open.file.metadata().map(|m| m.len()).unwrap_or(open.pos);
        if len < open.pos {
            out.push(Event::Notice(format!(
                "tail: {}: file truncated",
                self.path.display()
            )));
            open.pos = 0;
            self.buf.clear();
            self.skip_partial = false;
        }
        let mut chunk = vec![0u8; CHUNK];
        let mut budget = READ_BUDGET;
        while budget > 0 {
            let want = budget.min(CHUNK);
            let Some(slice) = chunk.get_mut(..want) else {
                break;
            };
            // A read error is retried at the next poll, like an end of file.
            let n = read_at(&open.file, open.pos, slice).unwrap_or_default();
            if n == 0 {
                return false;
            }
            open.pos += n as u64;
            self.bytes_read += n as u64;
            budget -= n;
            let mut bytes = slice.get(..n).unwrap_or_default();
            if self.skip_partial {
                match bytes.iter().position(|&b| b == b'\n') {
                    Some(i) => {
                        bytes = bytes.get(i + 1..).unwrap_or_default();
                        self.skip_partial = false;
                    }
                    None => continue,
                }
            }
            self.buf.push(bytes, &mut |l| out.push(Event::Line(l)));
        }
        true
    }

    /// After reading to the end: does the name still point at the file we have open? True when
    /// another file was opened in its place.
    fn check_name(&mut self, out: &mut Vec<Event>) -> bool {
        let Some(open) = self.open.as_ref() else {
            return false;
        };
        match std::fs::metadata(&self.path) {
            Ok(m) if file_id(&m) == open.id => false,
            Ok(_) => {
                // Rotated: the old file is read to its end (done), now the new one from its start.
                self.finish_file(out);
                out.push(Event::Notice(format!(
                    "tail: '{}' has been replaced;  following new file",
                    self.name()
                )));
                self.next_try = None;
                self.try_open(out)
            }
            Err(e) => {
                self.finish_file(out);
                out.push(Event::Notice(format!(
                    "tail: '{}' has become inaccessible: {}",
                    self.name(),
                    io_reason(&e)
                )));
                self.missing_said = true;
                self.next_try = Some(Instant::now() + RETRY_EVERY);
                false
            }
        }
    }

    /// Close the current file; its unterminated last line is a line now.
    fn finish_file(&mut self, out: &mut Vec<Event>) {
        self.open = None;
        self.skip_partial = false;
        if let Some(l) = self.buf.finish() {
            out.push(Event::Line(l));
        }
    }
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "Permission denied".into(),
        _ => e.to_string(),
    }
}

/// Read at an offset without moving a shared cursor.
fn read_at(mut file: &File, pos: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    file.seek(SeekFrom::Start(pos))?;
    let mut got = 0;
    while got < buf.len() {
        match file.read(buf.get_mut(got..).unwrap_or_default()) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Follow `path` on this machine as a stream (what [`crate::collect::local::LocalTransport`]
/// answers to `Request::Follow`). Notices arrive as lines starting `tail: `, as from `tail -F`.
/// The task ends when the receiver is dropped.
pub fn follow(path: &Path, lines: usize) -> mpsc::Receiver<StreamEvent> {
    let (tx, rx) = mpsc::channel(1024);
    let mut follower = FileFollower::new(path, lines);
    tokio::spawn(async move {
        loop {
            let polled = tokio::task::spawn_blocking(move || {
                let mut out = Vec::new();
                let more = follower.poll(&mut out);
                (follower, out, more)
            })
            .await;
            let Ok((f, events, more)) = polled else {
                let _ = tx
                    .send(StreamEvent::Error(
                        crate::collect::transport::CollectError::Io("file follower failed".into()),
                    ))
                    .await;
                return;
            };
            follower = f;
            for e in events {
                let line = match e {
                    Event::Line(l) | Event::Notice(l) => l,
                };
                if tx.send(StreamEvent::Line(line)).await.is_err() {
                    return;
                }
            }
            if tx.is_closed() {
                return;
            }
            if !more {
                tokio::time::sleep(POLL_EVERY).await;
            }
        }
    });
    rx
}
