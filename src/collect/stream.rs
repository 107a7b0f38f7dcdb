//! The streaming node collector (`[poll] mode = "stream"`): one long-lived exec channel per node
//! running a shell loop that sends, for each tick the client writes (once per interval), only the
//! dump lines that changed (frame.rs has the wire format). The full dump is rebuilt here and
//! parsed by the same code as an exec poll (`collected::collected`), so both modes give the same
//! samples; an output whose changed lines are only counter values takes its last parse with the
//! new values set in instead (delta.rs: exact, for the parsers that say which line each sample
//! came from). A stream that ends, breaks its framing or sends no frame within `timeout` of its tick
//! makes the source down for that poll; the next try reconnects through the transport (with its
//! backoff).

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
use ticks::Ticks;
use tokio::sync::mpsc;

/// A line longer than this is not a sysfs or ethtool line: the stream is refused (memory bound).
const MAX_LINE: usize = 1 << 20;

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
    loop {
        let probes = src.probes_now();
        let reqs: Vec<Request> = probes.iter().map(|p| p.request.clone()).collect();
        let cmds: Vec<String> = reqs.iter().map(Request::shell).collect();
        let nonce = batch::nonce();
        let script = frame::node_script(&batch::join(&cmds, &nonce), &nonce);
        let ended = match src.transport.stream_shell(&script).await {
            Ok(s) => follow(&src, &probes, &reqs, &nonce, s, (&tx, &keep), ticks).await,
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
                tokio::time::sleep(src.interval).await;
            }
        }
    }
}

/// Parse every frame of one stream into a poll's worth of samples.
async fn follow(
    src: &Source,
    probes: &[super::source::Probe],
    reqs: &[Request],
    nonce: &str,
    stream: ShellStream,
    (tx, keep): (&mpsc::Sender<Collected>, &KeepRaw),
    grid: Ticks,
) -> Ended {
    let ShellStream { mut rx, ticks } = stream;
    let mut lines = Lines::default();
    let mut reasm = Reassembler::new();
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

/// Bytes in, lines out (decoded lossily, as an exec's output is).
#[derive(Default)]
struct Lines {
    buf: Vec<u8>,
    at: usize,
}

impl Lines {
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
            None if rest.len() > MAX_LINE => Err(format!("stream: a line over {MAX_LINE} bytes")),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_and_decode_lossily() {
        let mut l = Lines::default();
        l.feed(b"ab");
        assert_eq!(l.next_line(), Ok(None));
        l.feed(b"c\nd\xff\n\ne");
        assert_eq!(l.next_line(), Ok(Some("abc".into())));
        assert_eq!(l.next_line(), Ok(Some("d\u{fffd}".into())));
        assert_eq!(l.next_line(), Ok(Some("".into())));
        assert_eq!(l.next_line(), Ok(None));
        l.feed(b"\n");
        assert_eq!(l.next_line(), Ok(Some("e".into())));
        l.feed(&vec![b'x'; MAX_LINE + 1]);
        assert!(l.next_line().is_err());
    }
}
