//! The streaming node collector (`[poll] mode = "stream"`): one long-lived exec channel per node
//! running a shell loop that sends, for each tick the client writes (once per interval), only the
//! dump lines that changed (frame.rs has the wire format). The full dump is rebuilt here and
//! parsed by the same code as an exec poll (`collected::collected`), so both modes give the same
//! samples; an output whose changed lines are only counter values takes its last parse with the
//! new values set in instead (delta.rs: exact, for the parsers that say which line each sample
//! came from). A stream that ends, breaks its framing or sends no frame within `timeout` of its tick
//! makes the source down for that poll; the next try reconnects through the transport, after a
//! pause that doubles with each stream in a row that broke young ([`Backoff`]): each new stream
//! costs the node a full first dump.
//!
//! Memory: a stream holds no more than an exec answer may (`poll.max_answer_bytes`, the
//! transport's cap): a line, a frame's changed text and the dump it builds are each refused past
//! it (frame.rs), so a node cannot grow rocetop by what it sends. The allocator's failure itself
//! is not caught (Rust aborts the process on it, without unwinding, and no guard runs); the caps
//! are what keep a hostile node from ever asking for that much.

mod delta;
pub mod frame;
pub mod ticks;

use super::collected::{self, Collected, KeepRaw};
use super::source::Source;
use super::ssh::batch;
use super::transport::{ByteEvent, Request, ShellStream};
use crate::metrics::now_ms;
use frame::Reassembler;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;
use ticks::Ticks;
use tokio::sync::mpsc;

/// The longest pause between a broken stream and the next.
const BACKOFF_MAX: Duration = Duration::from_secs(60);

/// How one stream ended.
enum Ended {
    /// The receiver of samples is gone: stop.
    Stop,
    /// The probes changed (discovery learned netdevs): start a new stream at once.
    Restart,
    /// The stream broke: report it, wait, reconnect.
    Broken(String),
}

/// Collect one node over streams until `tx` is dropped. The first dump is asked for as soon as
/// the channel opens, later ones every interval from there (`ticks`: above 64 nodes, on slots'
/// grids spread over the interval).
pub async fn run(src: Arc<Source>, tx: mpsc::Sender<Collected>, ticks: Ticks, keep: KeepRaw) {
    let mut backoff = Backoff::of(&src.name, src.interval);
    loop {
        let probes = src.probes_now();
        let reqs: Vec<Request> = probes.iter().map(|p| p.request.clone()).collect();
        let cmds: Vec<String> = reqs.iter().map(Request::shell).collect();
        let nonce = batch::nonce();
        let script = frame::node_script(&batch::join(&cmds, &nonce), &nonce);
        let started = tokio::time::Instant::now();
        let mut framed = false;
        let ended = match src.transport.stream_shell(&script).await {
            Ok(s) => {
                let to = (&tx, &keep);
                follow(&src, &probes, &reqs, &nonce, s, to, ticks, &mut framed).await
            }
            Err(e) => Ended::Broken(e.to_string()),
        };
        match ended {
            Ended::Stop => return,
            Ended::Restart => continue,
            Ended::Broken(why) => {
                let c = Collected {
                    source: src.id,
                    at: now_ms(),
                    parsed: Default::default(),
                    raw: Some(Vec::new()),
                    error: Some(why),
                    history: Default::default(),
                };
                if tx.send(c).await.is_err() {
                    return;
                }
                let lived = framed.then(|| started.elapsed());
                tokio::time::sleep(backoff.after(lived)).await;
            }
        }
    }
}

/// The pause before a node's next stream: an interval after a stream that gave frames for a
/// while, doubling (to [`BACKOFF_MAX`]) with each one in a row that broke before that; scaled by
/// the node's own 0.8-1.2 factor, so nodes that broke together do not reconnect together. A node
/// answering garbage, or a line or frame over the cap, had restarted every interval (14-25
/// first dumps on it in 15-30 s).
struct Backoff {
    interval: Duration,
    failures: u32,
    jitter: f64,
}

impl Backoff {
    fn of(name: &str, interval: Duration) -> Self {
        Backoff {
            interval: interval.max(Duration::from_millis(100)),
            failures: 0,
            jitter: super::spread::spread(name),
        }
    }

    /// After a stream that broke having given frames for `lived` (`None`: none at all).
    fn after(&mut self, lived: Option<Duration>) -> Duration {
        if lived.is_some_and(|l| l >= BACKOFF_MAX) {
            self.failures = 0;
        }
        let pause = (self.interval)
            .saturating_mul(1 << self.failures.min(16))
            .min(BACKOFF_MAX.max(self.interval));
        self.failures = self.failures.saturating_add(1);
        pause.mul_f64(self.jitter)
    }
}

/// Parse every frame of one stream into a poll's worth of samples; `framed` is set once one came.
#[allow(clippy::too_many_arguments)]
async fn follow(
    src: &Source,
    probes: &[super::source::Probe],
    reqs: &[Request],
    nonce: &str,
    stream: ShellStream,
    (tx, keep): (&mpsc::Sender<Collected>, &KeepRaw),
    grid: Ticks,
    framed: &mut bool,
) -> Ended {
    let ShellStream {
        mut rx,
        ticks,
        max_bytes,
    } = stream;
    let mut lines = Lines::new(max_bytes);
    let mut reasm = Reassembler::with_cap(max_bytes);
    let mut delta = delta::Delta::default();
    // The first frame also waits for the channel to open.
    let mut wait = src.timeout * 2;
    let mut next = tokio::time::Instant::now();
    loop {
        // One tick, one dump: polls keep the client's schedule (a late one goes at once, a
        // missed one is not made up), and a node never runs ahead of a reader that fell behind.
        tokio::time::sleep_until(next).await;
        next = grid.after(next, tokio::time::Instant::now());
        // From the tick to the parsed answer, as an exec poll is timed.
        let started = std::time::Instant::now();
        if ticks.send(()).await.is_err() {
            return Ended::Broken("stream: the channel closed".into());
        }
        match tokio::time::timeout(wait, next_dump(&mut rx, &mut lines, &mut reasm)).await {
            Ok(Ok(())) => {}
            Ok(Err(why)) => return Ended::Broken(why),
            Err(_) => {
                return Ended::Broken(format!(
                    "stream: no frame within {} s",
                    wait.as_secs_f64().ceil()
                ));
            }
        }
        *framed = true;
        // Samples keep the collector's receive time, as an exec poll does.
        let at = now_ms();
        // Outputs whose changed lines are only counter values are not parsed again.
        delta.frame(&reasm, nonce);
        let results = batch::split(reasm.dump(), nonce, reqs.len());
        let c = collected::collected_with(src, probes, results, at, &mut |i, kind, text, opts| {
            collected::of_ports(
                &src.ports,
                delta.part(i, kind, text, &src.ctx, opts, &reasm, nonce),
            )
        });
        collected::timing::POLLS.observe(started.elapsed());
        // Between frames (most of the stream's life) the dump is kept small (frame/pack.rs).
        reasm.pack();
        if tx.send(keep.apply(c)).await.is_err() {
            return Ended::Stop;
        }
        let now: Vec<Request> = src.probes_now().into_iter().map(|p| p.request).collect();
        if now != reqs {
            return Ended::Restart;
        }
        wait = src.timeout;
    }
}

/// Read until the reassembler completes a dump (then `reasm.dump()`).
async fn next_dump(
    rx: &mut mpsc::Receiver<ByteEvent>,
    lines: &mut Lines,
    reasm: &mut Reassembler,
) -> Result<(), String> {
    loop {
        while let Some(line) = lines.next_line()? {
            if reasm.push_line(&line).map_err(|e| format!("stream: {e}"))? {
                drop(line);
                lines.shrink();
                return Ok(());
            }
        }
        match rx.recv().await {
            Some(ByteEvent::Data(b)) => lines.feed(&b),
            Some(ByteEvent::End(e)) => return Err(e.to_string()),
            None => return Err("stream: the channel closed".into()),
        }
    }
}

/// Bytes in, lines out (decoded lossily, as an exec's output is); a line longer than `max` (an
/// exec answer's cap: a line exec reads, the stream reads too) is refused.
struct Lines {
    buf: Vec<u8>,
    at: usize,
    max: usize,
}

impl Lines {
    fn new(max: usize) -> Self {
        Lines {
            buf: Vec::new(),
            at: 0,
            max,
        }
    }

    fn feed(&mut self, b: &[u8]) {
        if self.at > 0 {
            self.buf.drain(..self.at);
            self.at = 0;
        }
        self.buf.extend_from_slice(b);
    }

    /// Give back what the last burst grew the buffer to: a node's first frame comes in packets
    /// of up to 16 KiB and later frames in ~1 KB, and 512 streams each keeping their largest
    /// packet's room is megabytes held for nothing.
    fn shrink(&mut self) {
        self.buf.drain(..self.at);
        self.at = 0;
        if self.buf.capacity() > (4 << 10).max(2 * self.buf.len()) {
            self.buf.shrink_to(self.buf.len().max(1 << 10));
        }
    }

    /// The next whole line, borrowed from the buffer (the reassembler copies what it keeps).
    fn next_line(&mut self) -> Result<Option<Cow<'_, str>>, String> {
        let rest = &self.buf[self.at..];
        match memchr::memchr(b'\n', rest) {
            Some(i) => {
                let start = self.at;
                self.at += i + 1;
                Ok(Some(String::from_utf8_lossy(&self.buf[start..start + i])))
            }
            None if rest.len() > self.max => Err(format!(
                "stream: a line over {} bytes (poll.max_answer_bytes); refused",
                self.max
            )),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_and_decode_lossily() {
        let mut l = Lines::new(1 << 20);
        l.feed(b"ab");
        assert_eq!(l.next_line(), Ok(None));
        l.feed(b"c\nd\xff\n\ne");
        assert_eq!(l.next_line(), Ok(Some("abc".into())));
        assert_eq!(l.next_line(), Ok(Some("d\u{fffd}".into())));
        assert_eq!(l.next_line(), Ok(Some("".into())));
        assert_eq!(l.next_line(), Ok(None));
        l.feed(b"\n");
        assert_eq!(l.next_line(), Ok(Some("e".into())));
        l.feed(&vec![b'x'; 1 << 20]);
        assert_eq!(l.next_line(), Ok(None), "a line of the cap is waited for");
        l.feed(b"x");
        let e = l.next_line().expect_err("over the cap");
        assert!(e.contains("poll.max_answer_bytes"), "{e}");
    }

    #[test]
    fn broken_streams_back_off_and_a_long_healthy_one_starts_over() {
        let s = Duration::from_secs;
        let mut b = Backoff::of("n1", s(1));
        let j = b.jitter;
        let unit = move |k: u64| s(k).mul_f64(j);
        let got: Vec<Duration> = (0..9).map(|_| b.after(None)).collect();
        let want: Vec<Duration> = [1u64, 2, 4, 8, 16, 32, 60, 60, 60].map(unit).to_vec();
        assert_eq!(got, want);
        // Frames for a while: the next break waits an interval again.
        assert_eq!(b.after(Some(s(59))), unit(60), "young: still backing off");
        assert_eq!(b.after(Some(s(61))), unit(1));
        assert_eq!(b.after(Some(s(1))), unit(2));
        // An interval over the cap is the pause.
        let mut slow = Backoff::of("n1", s(120));
        assert_eq!(slow.after(None), s(120).mul_f64(slow.jitter));
        assert_eq!(slow.after(None), s(120).mul_f64(slow.jitter));
    }
}
