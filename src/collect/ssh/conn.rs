//! One authenticated russh connection (direct, or through a jump host) and its exec channels:
//! at most `max_channels` open at once, each drained by its own task so a slow reader never
//! stalls the connection (DESIGN.md §8).

use super::hostkey::{self, Client, SharedRef};
use super::sizes::AnswerSizes;
use super::{SshTarget, auth};
use crate::collect::logtail::local::{MAX_LINE, linebuf::LineBuf};
use crate::collect::{CollectError, StreamEvent};
use russh::client::{self, Handle};
use russh::{ChannelMsg, Preferred, cipher, kex, mac};
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

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
        Ok(crate::collect::transport::ShellStream { rx, ticks })
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

/// The ciphers offered, best first: russh's own list (all AEAD or CTR+MAC, nothing weaker), with
/// aes256-gcm ahead of chacha20-poly1305 where the CPU has AES and carry-less multiply
/// instructions. There GCM costs a fraction of ChaCha20-Poly1305 per byte on both ends (perf of
/// `rocetop export` at N=8: ~3 % of the client's CPU was ChaCha20 and Poly1305, decrypting a
/// switch's ~200 KB of `show queuing` a second); without them ChaCha20 stays first, as OpenSSH has it.
fn ciphers() -> Cow<'static, [cipher::Name]> {
    let default = Preferred::default().cipher;
    if !aes_in_hardware() {
        return default;
    }
    let mut c = default.to_vec();
    if let Some(i) = c.iter().position(|n| *n == cipher::AES_256_GCM) {
        let gcm = c.remove(i);
        c.insert(0, gcm);
    }
    Cow::Owned(c)
}

fn aes_in_hardware() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("aes")
            && std::arch::is_x86_feature_detected!("pclmulqdq")
    }
    #[cfg(target_arch = "aarch64")]
    {
        std::arch::is_aarch64_feature_detected!("aes")
            && std::arch::is_aarch64_feature_detected!("pmull")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// The most data one SSH packet to a node may carry (russh: 32 KiB). The session keeps a read
/// buffer as large as the largest packet it has read, for as long as it lives (russh 0.65.1
/// client/mod.rs:1403 one per session, cipher/mod.rs:334 grown to the packet, start_reading
/// only clears it): a node's first stream frame (~30 KB) left 32-64 KiB per connection. Under
/// 8 KiB with room for the packet's header, padding and MAC, the whole packet fits in 8 KiB:
/// glibc's in-use heap at N=64 (stream, 60 s) 18.55 MB at 16 KiB, 17.74 at 8, 17.68 at 4
/// (~12.7 KB less a node at 8, nothing measurable more at 4); export's instructions at N=8
/// 7.00-7.44 M a second at 16, 6.91 at 8, 7.36 at 4 (callgrind). Switches keep russh's size:
/// their ~200 KB answers every poll came in half again as many TCP segments with 16 KiB and
/// took ~1 ms more client CPU a poll (N=8). (The channel window stays russh's 2 MiB: russh
/// opens it again as data arrives, not as it is read, so it bounds nothing in memory; the
/// 100-message queue per channel does.)
pub const NODE_MAX_PACKET: u32 = (8 << 10) - 256;

/// Read buffers of a direct connection (held as long as it lives: 512 nodes hold 2 MiB).
const NODE_READ_BUFFER: usize = 4 << 10;
const SWITCH_READ_BUFFER: usize = 32 << 10;

/// The client configuration for `t`: keepalive, nodelay, host-key algorithms limited to those
/// recorded in known_hosts, the legacy algorithms this device is allowed, and the ciphers of
/// [`ciphers`].
fn client_config(t: &SshTarget) -> client::Config {
    let mut preferred = Preferred {
        cipher: ciphers(),
        ..Preferred::default()
    };
    if let Some(algs) = hostkey::preferred_key_algorithms(&t.host, t.port, &t.known_hosts) {
        preferred.key = Cow::Owned(algs);
    }
    if let Some(l) = t.extra_algorithms {
        let mut k = preferred.kex.to_vec();
        if l.dh_group14_sha1 {
            k.push(kex::DH_G14_SHA1);
        }
        if l.ecdh_nistp {
            k.extend([
                kex::ECDH_SHA2_NISTP256,
                kex::ECDH_SHA2_NISTP384,
                kex::ECDH_SHA2_NISTP521,
            ]);
        }
        preferred.kex = Cow::Owned(k);
        if l.hmac_sha1 {
            let mut m = preferred.mac.to_vec();
            m.extend([mac::HMAC_SHA1_ETM, mac::HMAC_SHA1]);
            preferred.mac = Cow::Owned(m);
        }
    }
    client::Config {
        preferred,
        maximum_packet_size: if t.switch_mode {
            client::Config::default().maximum_packet_size
        } else {
            NODE_MAX_PACKET
        },
        nodelay: true,
        keepalive_interval: Some(t.keepalive_interval),
        keepalive_max: t.keepalive_max,
        inactivity_timeout: None,
        ..Default::default()
    }
}

type OpenFuture<'a> = Pin<Box<dyn Future<Output = Result<Conn, CollectError>> + Send + 'a>>;

/// Connect (through the jump host if any), check the host key, authenticate.
pub(crate) fn open(t: &SshTarget) -> OpenFuture<'_> {
    Box::pin(async move {
        let config = Arc::new(client_config(t));
        let handler = Client::new(t);
        let shared = handler.shared.clone();
        let hp = t.host_port();
        let (res, jump) = match &t.proxy_jump {
            None => {
                let tcp = tokio::net::TcpStream::connect((t.host.as_str(), t.port))
                    .await
                    .map_err(|e| tcp_error(&e, &t.host, t.port))?;
                let _ = tcp.set_nodelay(true);
                // russh reads each packet's first block, then the rest, each a read of the socket
                // (strace of export at N=8: ~90 recvfrom a second, 40 packets). A small buffer
                // takes a packet and what follows it in one: a node's frame or a keepalive fits in
                // NODE_READ_BUFFER; a switch's answers come in packets of several KB.
                let cap = if t.switch_mode {
                    SWITCH_READ_BUFFER
                } else {
                    NODE_READ_BUFFER
                };
                let tcp = tokio::io::BufReader::with_capacity(cap, tcp);
                (client::connect_stream(config, tcp, handler).await, None)
            }
            Some(j) => {
                let jc = open(j).await.map_err(|e| via(&e, j))?;
                let ch = jc
                    .handle
                    .channel_open_direct_tcpip(t.host.clone(), u32::from(t.port), "127.0.0.1", 0)
                    .await
                    .map_err(|e| {
                        CollectError::Connect(format!(
                            "jump host {} could not reach {hp}: {e}",
                            j.host_port()
                        ))
                    })?;
                let r = client::connect_stream(config, ch.into_stream(), handler).await;
                (r, Some(Arc::new(jc)))
            }
        };
        let mut handle = res.map_err(|e| handshake_error(&e, &shared, t))?;
        auth::authenticate(&mut handle, t).await?;
        Ok(Conn {
            handle,
            shared,
            slots: Arc::new(Semaphore::new(t.max_channels.max(1))),
            open: Arc::new(OpenChannels::default()),
            served: AtomicUsize::new(0),
            host_port: hp,
            max_answer: t.max_answer_bytes,
            sizes: AnswerSizes::default(),
            _jump: jump,
        })
    })
}

fn via(e: &CollectError, j: &SshTarget) -> CollectError {
    CollectError::Connect(format!("jump host {}: {e}", j.host_port()))
}

fn tcp_error(e: &std::io::Error, host: &str, port: u16) -> CollectError {
    use std::io::ErrorKind as K;
    match e.kind() {
        K::ConnectionRefused => CollectError::Refused(format!(" by {host}:{port}")),
        K::TimedOut => CollectError::Connect(format!("{host}:{port}: TCP connect timed out")),
        _ => CollectError::Connect(format!("{host}:{port}: {e}")),
    }
}

fn handshake_error(e: &russh::Error, shared: &SharedRef, t: &SshTarget) -> CollectError {
    if let Some(v) = shared.lock().ok().and_then(|mut s| s.verdict.take()) {
        return v;
    }
    CollectError::Connect(hostkey::describe_error(e, &t.host, t.port))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same ciphers as russh offers, none added or dropped; GCM first where AES is in
    /// hardware, else russh's (and OpenSSH's) order.
    #[test]
    fn ciphers_are_russh_s_with_gcm_first_on_aes_hardware() {
        let default = Preferred::default().cipher;
        let ours = ciphers();
        let mut a = default.to_vec();
        let mut b = ours.to_vec();
        a.sort_by_key(|n| n.as_ref().to_string());
        b.sort_by_key(|n| n.as_ref().to_string());
        assert_eq!(a, b);
        if aes_in_hardware() {
            assert_eq!(ours[0], cipher::AES_256_GCM);
        } else {
            assert_eq!(ours[..], default[..]);
        }
    }
}
