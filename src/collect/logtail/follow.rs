//! The follower task of a log source: `tail -F` through the source's transport (the native
//! follower for local files, `tail -n N -F` over SSH, the simulation in the demo), every line fed to
//! the training-log parser, and one [`Collected`] every [`SEND_EVERY`] (or [`SEND_LINES`] lines)
//! with the raw lines, the records' samples and the highlight counters.
//!
//! A broken stream is a failed poll (`error`: the source shows down with the reason); the follower
//! reconnects after 0.5 s, doubling to 10 s, and resumes with the last [`resume::RESUME_LINES`]
//! lines, dropping the ones already delivered ([`resume`]). Lines that start with `tail: ` are
//! `tail`'s own notices (file missing, replaced, truncated), not log lines: they become notes, and
//! "the file is missing" stays a note until the file is back.

pub mod batch;
pub mod resume;

use crate::collect::collected::Collected;
use crate::collect::source::Source;
use crate::collect::transport::{Request, StreamEvent};
use crate::metrics::now_ms;
use crate::parse::training::{CustomFormat, LineParser};
use batch::Batch;
use resume::{RESUME_LINES, Resume};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How often gathered lines are sent.
pub const SEND_EVERY: Duration = Duration::from_millis(250);
/// Lines that make a send without waiting.
pub const SEND_LINES: usize = 500;
/// Quiet time after which the parser releases a record still waiting for its timer line.
pub const FLUSH_IDLE: Duration = Duration::from_secs(2);
/// How long the first repeated line after a reconnect is waited for (`tail` prints the last lines
/// at once; a quiet gap after them ends the repeat). An empty file repeats nothing.
const RESUME_WAIT: Duration = Duration::from_secs(5);
const BACKOFF_MIN: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(10);

/// The path and start lines of a log source (its first probe).
fn target(src: &Source) -> Option<(String, usize)> {
    match &src.probes.first()?.request {
        Request::Tail { path, lines } | Request::Follow { path, lines } => {
            Some((path.clone(), *lines))
        }
        _ => None,
    }
}

/// The parser with the source's custom format, or a note saying why it is not used.
/// The line parser of a log source (its custom format first), and a note if that format is bad.
pub fn parser(src: &Source) -> (LineParser, Option<String>) {
    match src.format_regex.as_deref() {
        None => (LineParser::new(Vec::new()), None),
        Some(re) => match CustomFormat::new("format_regex", re) {
            Ok(f) => (LineParser::new(vec![f]), None),
            Err(e) => (LineParser::new(Vec::new()), Some(e)),
        },
    }
}

/// Why a pump ended.
enum End {
    /// The receiver of `Collected` is gone: the app is shutting down.
    Closed,
    /// The stream broke; `delivered` when it had carried lines (the backoff starts over).
    Broke { reason: String, delivered: bool },
}

/// Follow one log source until `tx` is closed.
pub async fn run(src: Arc<Source>, tx: mpsc::Sender<Collected>) {
    let mut st = State::new(&src);
    let Some((path, lines)) = target(&src) else {
        let _ = tx.send(st.failure("a log source without a path")).await;
        return;
    };
    let mut first = true;
    let mut backoff = BACKOFF_MIN;
    loop {
        let ask = if first { lines } else { RESUME_LINES };
        let req = Request::Follow {
            path: path.clone(),
            lines: ask,
        };
        let reason = match src.transport.stream(&req).await {
            Ok(rx) => {
                if !first {
                    st.resume.reconnected();
                }
                first = false;
                match st.pump(rx, &tx).await {
                    End::Closed => return,
                    End::Broke { reason, delivered } => {
                        if delivered {
                            backoff = BACKOFF_MIN;
                        }
                        reason
                    }
                }
            }
            Err(e) => e.to_string(),
        };
        if tx.send(st.failure(&reason)).await.is_err() {
            return;
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(BACKOFF_MAX);
    }
}

struct State {
    src: Arc<Source>,
    batch: Batch,
    resume: Resume,
    /// A standing condition (the file is missing, the custom format is unusable), in every send.
    status: Option<String>,
    config_note: Option<String>,
    /// One-off notices for the next send.
    notes: Vec<String>,
}

impl State {
    fn new(src: &Arc<Source>) -> Self {
        let (parser, config_note) = parser(src);
        Self {
            src: src.clone(),
            batch: Batch::new(parser, &src.ctx.name, &src.ctx.log),
            resume: Resume::new(RESUME_LINES),
            status: None,
            config_note,
            notes: Vec::new(),
        }
    }

    fn failure(&self, reason: &str) -> Collected {
        Collected {
            source: self.src.id,
            at: now_ms(),
            parsed: Default::default(),
            raw: Some(Vec::new()),
            error: Some(reason.to_string()),
            history: Default::default(),
        }
    }

    fn take(&mut self) -> Collected {
        let mut notes: Vec<String> = self.config_note.iter().cloned().collect();
        notes.extend(self.status.iter().cloned());
        notes.append(&mut self.notes);
        self.batch.take(self.src.id, now_ms(), notes)
    }

    /// A line from the stream: a `tail` notice, or a log line (maybe held back while resuming).
    fn line(&mut self, line: String) {
        if let Some(notice) = line.strip_prefix("tail: ") {
            if notice.contains("cannot open")
                || notice.contains("inaccessible")
                || notice.contains("No such file")
            {
                self.status = Some(format!("waiting for the file: {notice}"));
            } else {
                self.status = None;
                self.notes.push(notice.to_string());
            }
            return;
        }
        self.status = None;
        let (lines, note) = self.resume.line(line);
        self.deliver(lines, note);
    }

    fn deliver(&mut self, lines: Vec<String>, note: Option<String>) {
        self.notes.extend(note);
        for l in lines {
            self.batch.line(l);
        }
    }

    /// Read a stream until it breaks, sending what it carries.
    async fn pump(
        &mut self,
        mut rx: mpsc::Receiver<StreamEvent>,
        tx: &mpsc::Sender<Collected>,
    ) -> End {
        let mut tick = tokio::time::interval(SEND_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let opened = Instant::now();
        let mut last_line = Instant::now();
        let mut last_send = Instant::now();
        let mut delivered = false;
        // The stream is up: say so at once (a heartbeat), before any line.
        if tx.send(self.take()).await.is_err() {
            return End::Closed;
        }
        loop {
            let ended = tokio::select! {
                ev = rx.recv() => match ev {
                    Some(StreamEvent::Line(l)) => {
                        last_line = Instant::now();
                        delivered = true;
                        self.line(l);
                        None
                    }
                    Some(StreamEvent::Error(e)) => Some(e.to_string()),
                    None => Some("the log stream ended".to_string()),
                },
                _ = tick.tick() => {
                    let quiet = last_line.elapsed();
                    let repeated = self.resume.held() > 0 && quiet >= SEND_EVERY;
                    if self.resume.holding() && (repeated || opened.elapsed() >= RESUME_WAIT) {
                        let (lines, note) = self.resume.resolve();
                        self.deliver(lines, note);
                    }
                    if quiet >= FLUSH_IDLE {
                        self.batch.flush();
                    }
                    None
                }
            };
            if let Some(reason) = ended {
                // What was gathered is real data: send it before the failure.
                if self.resume.holding() {
                    let (lines, note) = self.resume.resolve();
                    self.deliver(lines, note);
                }
                self.batch.flush();
                if !self.batch.is_empty() && tx.send(self.take()).await.is_err() {
                    return End::Closed;
                }
                return End::Broke { reason, delivered };
            }
            let due = last_send.elapsed() >= SEND_EVERY && !self.batch.is_empty();
            let heartbeat = last_send.elapsed() >= self.src.interval;
            if due || heartbeat || self.batch.lines() >= SEND_LINES || !self.notes.is_empty() {
                if tx.send(self.take()).await.is_err() {
                    return End::Closed;
                }
                last_send = Instant::now();
            }
        }
    }
}
