//! One authenticated russh connection (direct, or through a jump host) and its exec channels:
//! at most `max_channels` open at once, each drained by its own task so a slow reader never
//! stalls the connection (docs/architecture.md).

use super::hostkey::{Client, SharedRef};
use super::sizes::AnswerSizes;
use crate::collect::logtail::local::{MAX_LINE, linebuf::LineBuf};
use crate::collect::{CollectError, StreamEvent};
use russh::ChannelMsg;
use russh::client::{self, Handle};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

mod setup;
pub use setup::NODE_MAX_PACKET;
pub(crate) use setup::open;

/// Why an exec did not produce output.
#[derive(Debug)]
pub(crate) enum ExecFail {
    /// The connection is gone; the caller reconnects.
    Lost(String),
    Other(CollectError),
}

impl ExecFail {
    pub fn into_error(self) -> CollectError {
        match self {
            ExecFail::Lost(w) => CollectError::Connect(w),
            ExecFail::Other(e) => e,
        }
    }
}

pub(crate) struct Conn {
    handle: Handle<Client>,
    shared: SharedRef,
    slots: Arc<Semaphore>,
    open: Arc<OpenChannels>,
    /// Execs that completed on this connection.
    served: AtomicUsize,
    host_port: String,
    max_answer: usize,
    sizes: AnswerSizes,
    /// Keeps the jump connection (and so the tunnel) alive as long as this one.
    _jump: Option<Arc<Conn>>,
}

impl Conn {
    pub fn is_closed(&self) -> bool {
        self.handle.is_closed()
    }

    pub fn served(&self) -> usize {
        self.served.load(Ordering::Relaxed)
    }

    pub fn closed_reason(&self) -> String {
        self.shared
            .lock()
            .ok()
            .and_then(|s| s.closed.clone())
            .unwrap_or_else(|| format!("connection to {} lost", self.host_port))
    }

    fn lost(&self) -> ExecFail {
        ExecFail::Lost(self.closed_reason())
    }

    /// Open a session channel. A refusal while other channels of ours are open means the
    /// host allows fewer sessions than `max_channels` (OpenSSH MaxSessions, one-channel
    /// gear): wait for one of them to close and try again, for as long as the caller's
    /// timeout allows. A refusal with nothing else open is retried a few times, then reported.
    async fn open_channel(&self) -> Result<(russh::Channel<client::Msg>, Open), ExecFail> {
        let mut delay = Duration::from_millis(20);
        let mut alone = 0;
        loop {
            let freed = self.open.freed.notified();
            match self.handle.channel_open_session().await {
                Ok(ch) => return Ok((ch, Open::new(&self.open))),
                Err(russh::Error::ChannelOpenFailure(_))
                    if self.open.count.load(Ordering::Relaxed) > 0 =>
                {
                    // Bounded wait: a wakeup between the refusal and here is not lost for long.
                    let _ = tokio::time::timeout(Duration::from_millis(100), freed).await;
                }
                Err(russh::Error::ChannelOpenFailure(f)) => {
                    alone += 1;
                    if alone > 5 {
                        return Err(ExecFail::Other(CollectError::Io(format!(
                            "{} refused to open a channel ({f:?})",
                            self.host_port
                        ))));
                    }
                    tokio::time::sleep(delay).await;
                    delay = delay.saturating_mul(2);
                }
                Err(_) => return Err(self.lost()),
            }
        }
    }

    /// Run one command; stdout (decoded lossily), or the failure.
    pub async fn exec(&self, cmd: &str) -> Result<String, ExecFail> {
        let permit: OwnedSemaphorePermit = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| self.lost())?;
        let (ch, open) = self.open_channel().await?;
        if ch.exec(true, cmd).await.is_err() {
            return Err(self.lost());
        }
        let (tx, rx) = oneshot::channel();
        let room = self.sizes.room(cmd, self.max_answer);
        tokio::spawn(drain(ch, tx, self.max_answer, room, (permit, open)));
        let done = rx.await.map_err(|_| self.lost())?;
        match done {
            Drained::Done { out, err, status } => {
                self.served.fetch_add(1, Ordering::Relaxed);
                self.sizes.saw(cmd, out.len());
                // Valid UTF-8 (a device's output nearly always is) becomes the String as it is:
                // a switch answers 100s of KB a poll, and a lossy copy doubled that each time.
                let stdout = String::from_utf8(out)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
                match status {
                    Some(Exit::Code(0)) | None => Ok(stdout),
                    Some(s) => Err(ExecFail::Other(CollectError::Command {
                        status: s.to_string(),
                        stderr: tail_text(&err, stdout.as_bytes()),
                    })),
                }
            }
            Drained::Refused => Err(ExecFail::Other(CollectError::Io(format!(
                "{} refused to run the command",
                self.host_port
            )))),
            Drained::Cut => Err(self.lost()),
            Drained::TooBig => Err(ExecFail::Other(CollectError::Io(format!(
                "{} answered more than {} bytes (poll.max_answer_bytes): stopped reading",
                self.host_port, self.max_answer
            )))),
        }
    }

    /// Start a long-running command whose stdout lines go to the receiver; dropping the
    /// receiver closes the channel.
    pub async fn stream(&self, cmd: &str) -> Result<mpsc::Receiver<StreamEvent>, ExecFail> {
        let (ch, open) = self.open_channel().await?;
        if ch.exec(true, cmd).await.is_err() {
            return Err(self.lost());
        }
        let (tx, rx) = mpsc::channel(256);
        let hp = self.host_port.clone();
        tokio::spawn(follow(ch, tx, hp, open));
        Ok(rx)
    }
}

impl Conn {
    /// Start a long-running command whose stdout bytes go to the receiver as they come.
    /// The receiver holds at most a few SSH packets: a reader that falls behind leaves the
    /// channel window full and the command blocked on its write. Each tick writes a newline
    /// to the command's stdin.
    pub async fn stream_bytes(
        &self,
        cmd: &str,
    ) -> Result<crate::collect::transport::ShellStream, ExecFail> {
        let (ch, open) = self.open_channel().await?;
        if ch.exec(true, cmd).await.is_err() {
            return Err(self.lost());
        }
        let (tx, rx) = mpsc::channel(8);
        let (ticks, ticks_rx) = mpsc::channel(1);
        let hp = self.host_port.clone();
        tokio::spawn(follow_bytes(ch, tx, ticks_rx, hp, open));
        Ok(crate::collect::transport::ShellStream {
            rx,
            ticks,
            max_bytes: self.max_answer,
        })
    }
}

/// Forward a long-running command's stdout until it ends or the receiver is dropped; stderr is
/// kept (its end) for the message when the command ends.
async fn follow_bytes(
    mut ch: russh::Channel<client::Msg>,
    tx: mpsc::Sender<crate::collect::transport::ByteEvent>,
    mut ticks: mpsc::Receiver<()>,
    hp: String,
    _open: Open,
) {
    use crate::collect::transport::ByteEvent;
    let mut err: Vec<u8> = Vec::new();
    let mut status = None;
    // Dropping the tick sender only stops the ticks; dropping the receiver ends the stream.
    let mut ticking = true;
    loop {
        tokio::select! {
            _ = tx.closed() => {
                stop(&ch).await;
                return;
            }
            t = ticks.recv(), if ticking => match t {
                Some(()) => {
                    // Owned bytes: `data` copies through a fresh zeroed 8 KiB buffer each call.
                    if ch.data_bytes(&b"\n"[..]).await.is_err() {
                        break;
                    }
                }
                None => ticking = false,
            },
            msg = ch.wait() => match msg {
                Some(ChannelMsg::Data { data }) => {
                    if tx.send(ByteEvent::Data(data.to_vec())).await.is_err() {
                        stop(&ch).await;
                        return;
                    }
                }
                Some(ChannelMsg::ExtendedData { data, .. }) => {
                    err.extend_from_slice(&data);
                    let cut = err.len().saturating_sub(4096);
                    err.drain(..cut);
                }
                Some(ChannelMsg::ExitStatus { exit_status }) => status = Some(Exit::Code(exit_status)),
                Some(ChannelMsg::ExitSignal { signal_name, .. }) => {
                    status = Some(Exit::Signal(format!("{signal_name:?}")));
                }
                Some(ChannelMsg::Close) | None => break,
                Some(_) => {}
            }
        }
    }
    let mut why = format!("stream from {hp} ended");
    if let Some(s) = status {
        why.push_str(&format!(" ({s})"));
    }
    let e = tail_text(&err, b"");
    if !e.is_empty() {
        why.push_str(&format!(": {e}"));
    }
    let _ = tx.send(ByteEvent::End(CollectError::Io(why))).await;
}

/// Channels of a connection open now (execs and streams), and a wakeup when one closes.
#[derive(Default)]
struct OpenChannels {
    count: AtomicUsize,
    freed: Notify,
}

/// Counts one open channel until dropped (by the task that drains it).
struct Open(Arc<OpenChannels>);

impl Open {
    fn new(o: &Arc<OpenChannels>) -> Self {
        o.count.fetch_add(1, Ordering::Relaxed);
        Open(o.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.count.fetch_sub(1, Ordering::Relaxed);
        self.0.freed.notify_waiters();
    }
}

enum Exit {
    Code(u32),
    Signal(String),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

enum Drained {
    Done {
        out: Vec<u8>,
        err: Vec<u8>,
        status: Option<Exit>,
    },
    /// The server answered the exec request with a failure.
    Refused,
    /// The connection went away before the channel closed.
    Cut,
    /// Stdout passed the answer cap; the command was stopped.
    TooBig,
}

/// Stderr kept from one command: the message shows its last 500 characters anyway.
const MAX_STDERR: usize = 64 << 10;

/// Read a channel to its end; give up (and close it) when the caller stops waiting.
async fn drain(
    mut ch: russh::Channel<client::Msg>,
    mut tx: oneshot::Sender<Drained>,
    max: usize,
    room: usize,
    _held: (OwnedSemaphorePermit, Open),
) {
    let (mut out, mut err, mut status) = (Vec::with_capacity(room), Vec::new(), None);
    let mut closed = false;
    loop {
        tokio::select! {
            _ = tx.closed() => {
                stop(&ch).await;
                return;
            }
            msg = ch.wait() => match msg {
                Some(ChannelMsg::Data { data }) => {
                    if out.len() + data.len() > max {
                        stop(&ch).await;
                        let _ = tx.send(Drained::TooBig);
                        return;
                    }
                    out.extend_from_slice(&data);
                }
                Some(ChannelMsg::ExtendedData { data, .. }) => {
                    let room = MAX_STDERR.saturating_sub(err.len());
                    err.extend_from_slice(&data[..data.len().min(room)]);
                }
                Some(ChannelMsg::ExitStatus { exit_status }) => status = Some(Exit::Code(exit_status)),
                Some(ChannelMsg::ExitSignal { signal_name, .. }) => {
                    status = Some(Exit::Signal(format!("{signal_name:?}")));
                }
                Some(ChannelMsg::Failure) => {
                    let _ = tx.send(Drained::Refused);
                    let _ = ch.close().await;
                    return;
                }
                Some(ChannelMsg::Close) => { closed = true; break; }
                Some(_) => {}
                None => break,
            }
        }
    }
    // A channel that ends without Close or exit status was cut by the connection dying.
    let r = if closed || status.is_some() {
        Drained::Done { out, err, status }
    } else {
        Drained::Cut
    };
    let _ = tx.send(r);
}

/// End a command nobody waits for: without a pty sshd leaves it running when the channel
/// closes (`tail -F` would live until it next writes), so signal it first.
async fn stop(ch: &russh::Channel<client::Msg>) {
    let _ = ch.signal(russh::Sig::TERM).await;
    let _ = ch.close().await;
}

/// Forward lines of a long-running command until it ends or the receiver is dropped.
async fn follow(
    mut ch: russh::Channel<client::Msg>,
    tx: mpsc::Sender<StreamEvent>,
    hp: String,
    _open: Open,
) {
    // The local follower's splitter: linear, lines capped, `\r` progress bars as a terminal shows them.
    let mut buf = LineBuf::new(MAX_LINE);
    let mut lines = Vec::new();
    loop {
        tokio::select! {
            _ = tx.closed() => {
                stop(&ch).await;
                return;
            }
            msg = ch.wait() => match msg {
                Some(ChannelMsg::Data { data }) => {
                    buf.push(&data, &mut |l| lines.push(l));
                    for text in lines.drain(..) {
                        if tx.send(StreamEvent::Line(text)).await.is_err() {
                            stop(&ch).await;
                            return;
                        }
                    }
                }
                Some(ChannelMsg::ExitStatus { exit_status }) => {
                    let _ = tx
                        .send(StreamEvent::Error(CollectError::Io(format!(
                            "stream from {hp} ended (exit {exit_status})"
                        ))))
                        .await;
                    return;
                }
                Some(ChannelMsg::Close) | None => {
                    let _ = tx
                        .send(StreamEvent::Error(CollectError::Io(format!(
                            "stream from {hp} ended"
                        ))))
                        .await;
                    return;
                }
                Some(_) => {}
            }
        }
    }
}

/// The last lines of stderr (or stdout when stderr is empty), trimmed to a readable size.
pub(super) fn tail_text(err: &[u8], out: &[u8]) -> String {
    let src = if err.iter().any(|b| !b.is_ascii_whitespace()) {
        err
    } else {
        out
    };
    let s = String::from_utf8_lossy(src);
    let s = s.trim();
    match s.char_indices().rev().nth(499) {
        Some((i, _)) => format!("…{}", &s[i..]),
        None => s.to_string(),
    }
}
