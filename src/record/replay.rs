//! The replay feed: a recording sent through the same parsers (`poll::parse_outputs`) as live
//! polls, with the recorded timestamps, paced by the recorded gaps divided by the speed, and
//! steered (pause, step, seek, speed) through a [`ReplayControl`].

use super::RecordError;
use super::format::{Header, Poll};
use super::inventory::{config_of, kind_of, source_of};
use super::reader::{Cut, Pos, Reader};
use crate::collect::logtail::follow::{self, batch::Batch};
use crate::collect::poll::{Collected, parse_outputs};
use crate::collect::source::Source;
use crate::collect::source::SourceKind;
use crate::config::Config;
use crate::metrics::store::SourceId;
use crate::metrics::{Store, Ts};
use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// What the feed sends, in order.
#[derive(Debug)]
pub enum Feed {
    /// Start over (a seek backwards): replace the store with [`Replay::new_store`]. The history up
    /// to the seek target (one retention's worth) follows at once, then pacing resumes.
    Reset { at: Ts },
    /// One poll, parsed again, with its recorded timestamp: `Collected::apply` it as a live one.
    Data(Collected),
    /// A seek delivered the history up to its target `at`: the state at the cursor is complete
    /// (the screen evaluates alerts again from here, not from the history's polls one by one).
    Seeked { at: Ts },
    /// No more records (a seek can still rewind). `cut` says why the file ended early, if it did.
    End { at: Ts, cut: Option<String> },
}

/// Where the replay stands; `at` is the recording's time, which the screen shows and uses as "now".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayClock {
    pub at: Ts,
    pub paused: bool,
    pub speed: f64,
    pub ended: bool,
    pub start: Ts,
    pub end: Ts,
}

#[derive(Debug)]
enum Ctl {
    Pause,
    Resume,
    Toggle,
    Step,
    Seek(Ts),
    Speed(f64),
    Stop,
}

#[derive(Debug)]
struct ClockState {
    wall: Instant,
    rec: Ts,
    paused: bool,
    speed: f64,
    ended: bool,
    start: Ts,
    end: Ts,
}

impl ClockState {
    fn at(&self, now: Instant) -> Ts {
        if self.paused || self.ended || !self.speed.is_finite() {
            return self.rec;
        }
        let gone = now.saturating_duration_since(self.wall).as_secs_f64() * 1000.0 * self.speed;
        (self.rec + gone as Ts).min(self.end.max(self.rec))
    }

    fn reanchor(&mut self, now: Instant) {
        self.rec = self.at(now);
        self.wall = now;
    }
}

/// Steers a running replay. Cloneable; dropping every clone lets the replay run to its end.
#[derive(Clone, Debug)]
pub struct ReplayControl {
    tx: std_mpsc::Sender<Ctl>,
    clock: Arc<Mutex<ClockState>>,
}

impl ReplayControl {
    pub fn pause(&self) {
        let _ = self.tx.send(Ctl::Pause);
    }
    pub fn resume(&self) {
        let _ = self.tx.send(Ctl::Resume);
    }
    pub fn toggle_pause(&self) {
        let _ = self.tx.send(Ctl::Toggle);
    }
    /// While paused: deliver the next poll.
    pub fn step(&self) {
        let _ = self.tx.send(Ctl::Step);
    }
    /// Jump to a recording time (clamped to the recording).
    pub fn seek(&self, at: Ts) {
        let _ = self.tx.send(Ctl::Seek(at));
    }
    /// Jump by a signed number of milliseconds from the current position.
    pub fn seek_by(&self, delta_ms: i64) {
        let at = self.clock().at;
        self.seek(at + delta_ms);
    }
    /// Recording seconds per wall second; `f64::INFINITY` (or ≤ 0): as fast as the reader goes.
    pub fn set_speed(&self, x: f64) {
        let _ = self.tx.send(Ctl::Speed(x));
    }
    pub fn stop(&self) {
        let _ = self.tx.send(Ctl::Stop);
    }
    pub fn clock(&self) -> ReplayClock {
        let c = self.clock.lock().unwrap_or_else(|p| p.into_inner());
        ReplayClock {
            at: c.at(Instant::now()),
            paused: c.paused,
            speed: c.speed,
            ended: c.ended,
            start: c.start,
            end: c.end,
        }
    }
}

/// An opened recording with its feed running.
pub struct Replay {
    pub header: Header,
    /// The recorded config read back (connects to nothing); an empty inventory if it no longer
    /// validates, with the reason in `config_problem`.
    pub config: Config,
    pub config_problem: Option<String>,
    /// The recorded sources, ids in the order [`Replay::new_store`] declares them.
    pub sources: Vec<Arc<Source>>,
    pub start: Ts,
    pub end: Ts,
    pub polls: usize,
    /// Damage found at the end of the file (kill -9, truncation): everything before it replays.
    pub cut: Option<Cut>,
    /// The recorder stopped cleanly (an `end` record).
    pub closed: bool,
    pub rx: mpsc::Receiver<Feed>,
    pub control: ReplayControl,
}

impl Replay {
    /// A store with the recorded sources declared: the ids of the feed's `Collected` point into it.
    /// What the screen makes of a feed item, and the recording time it happened at: the one
    /// mapping the TUI and the tests share.
    pub fn event(&self, f: Feed) -> (crate::app::Event, Ts) {
        use crate::app::{Event, NewStore};
        match f {
            Feed::Data(c) => {
                let at = c.at;
                (Event::Collected(c), at)
            }
            Feed::Reset { at } => (
                Event::Rewind {
                    store: NewStore(self.new_store()),
                    at,
                },
                at,
            ),
            Feed::Seeked { at } => (Event::Seeked { at }, at),
            Feed::End { at, cut } => (Event::Ended { cut }, at),
        }
    }

    pub fn new_store(&self) -> Store {
        let retention = self.config.poll.retention.as_millis() as i64;
        let min_interval = self
            .sources
            .iter()
            .map(|s| s.interval.as_millis() as i64)
            .min()
            .unwrap_or(1000)
            .max(100);
        let mut store = Store::new(retention, (retention / min_interval + 2) as usize);
        for s in &self.sources {
            store.add_source(&s.name, s.interval.as_millis() as i64);
        }
        store
    }
}

fn speed_of(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x
    } else {
        f64::INFINITY
    }
}

/// Most polls one replay indexes (24 bytes each): four hours of a 512-node cluster polled every
/// second; a crafted file of tens of millions of tiny polls stops here, at ~200 MB of index.
pub const MAX_POLLS: usize = 8_000_000;

#[derive(Clone, Copy, Debug)]
struct Entry {
    pos: Pos,
    at: Ts,
}

/// Open a recording and start its feed (a thread reading the file), paced at `speed`.
/// The first poll is delivered at once; `ReplayControl` steers the rest.
pub fn replay_feed(path: &Path, speed: f64) -> Result<Replay, RecordError> {
    // Index pass: offsets and times of every readable poll, so seeks are cheap.
    let mut reader = Reader::open(path)?;
    let header = reader.header().clone();
    let mut index = Vec::new();
    let mut too_many = None;
    loop {
        let pos = reader.pos();
        match reader.next_poll() {
            Some(_) if index.len() >= MAX_POLLS => {
                too_many = Some(Cut {
                    offset: pos.member,
                    reason: format!("more than {MAX_POLLS} polls: the rest is not replayed"),
                });
                break;
            }
            Some(p) => index.push(Entry { pos, at: p.at }),
            None => break,
        }
    }
    let cut = reader.cut().cloned().or(too_many);
    let closed = reader.end().is_some();
    let (config, config_problem) = match config_of(&header.config_toml) {
        Ok(c) => (c, None),
        Err(e) => (
            config_of("").unwrap_or_else(|_| Config::reference()),
            Some(e),
        ),
    };
    let sources: Vec<Arc<Source>> = header
        .sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut src = source_of(s, SourceId(i as u32));
            // The same NIC counter subset as the live collectors kept.
            src.nic_counters.clone_from(&config.poll.nic_counters);
            Arc::new(src)
        })
        .collect();
    let by_id: HashMap<u32, usize> = header
        .sources
        .iter()
        .enumerate()
        .map(|(i, s)| (s.id, i))
        .collect();
    let start = index
        .iter()
        .map(|e| e.at)
        .min()
        .unwrap_or(header.created_ms);
    let end = index.iter().map(|e| e.at).max().unwrap_or(start);
    let speed = speed_of(speed);
    let clock = Arc::new(Mutex::new(ClockState {
        wall: Instant::now(),
        rec: start,
        paused: false,
        speed,
        ended: false,
        start,
        end,
    }));
    let (tx, rx) = mpsc::channel(256);
    let (ctl_tx, ctl_rx) = std_mpsc::channel();
    let feeder = Feeder {
        reader,
        index: index.clone(),
        sources: sources.clone(),
        by_id,
        tx,
        logs: HashMap::new(),
        clock: clock.clone(),
        retention: config.poll.retention.as_millis() as i64,
        cut: cut
            .as_ref()
            .map(|c| format!("{}, in the block at byte {}", c.reason, c.offset)),
    };
    std::thread::Builder::new()
        .name("rocetop-replay".into())
        .spawn(move || feeder.run(ctl_rx))
        .map_err(|e| RecordError::io(path, e))?;
    Ok(Replay {
        header,
        config,
        config_problem,
        sources,
        start,
        end,
        polls: index.len(),
        cut,
        closed,
        rx,
        control: ReplayControl { tx: ctl_tx, clock },
    })
}

/// Parse a recorded poll again, as it was parsed live: `poll_once` for polled sources; for a log,
/// the follower's own batch (`log`), which keeps the line parser's state between polls.
pub fn collected_of(p: Poll, src: &Source, log: Option<&mut Batch>) -> Collected {
    let mut raw = Vec::with_capacity(p.outputs.len());
    let mut skipped = Vec::new();
    for o in p.outputs {
        match kind_of(&o.kind) {
            Some(k) => raw.push((k, o.text)),
            None => skipped.push(o.kind),
        }
    }
    let mut parsed = match log {
        Some(batch) if src.kind == SourceKind::Log => {
            batch.replay(&raw);
            batch.take_parsed(Vec::new())
        }
        _ => parse_outputs(src, &raw),
    };
    // Side errors of the poll were notes; parser notes come back by themselves (`note` dedups).
    for n in p.notes {
        parsed.note(n);
    }
    for k in skipped {
        parsed.note(format!("{k}: output kind unknown to this rocetop, skipped"));
    }
    let (history, _) = crate::collect::poll::history_of(&raw);
    Collected {
        source: src.id,
        at: p.at,
        parsed,
        raw: Some(raw),
        error: p.error,
        history,
    }
}

struct Feeder {
    reader: Reader,
    index: Vec<Entry>,
    sources: Vec<Arc<Source>>,
    by_id: HashMap<u32, usize>,
    tx: mpsc::Sender<Feed>,
    /// Line-parser state per log source, as the live follower had it.
    logs: HashMap<u32, Batch>,
    clock: Arc<Mutex<ClockState>>,
    retention: Ts,
    cut: Option<String>,
}

/// The receiver is gone: the feed ends.
struct Gone;

impl Feeder {
    fn state(&self) -> std::sync::MutexGuard<'_, ClockState> {
        self.clock.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn send(&self, f: Feed) -> Result<(), Gone> {
        self.tx.blocking_send(f).map_err(|_| Gone)
    }

    /// Deliver poll `i` of the index.
    fn deliver(&mut self, i: usize) -> Result<(), Gone> {
        let Some(e) = self.index.get(i).copied() else {
            return Ok(());
        };
        if self.reader.pos() != e.pos && self.reader.seek(e.pos).is_err() {
            return Ok(());
        }
        let Some(p) = self.reader.next_poll() else {
            return Ok(());
        };
        let slot = self
            .by_id
            .get(&p.source)
            .copied()
            .or_else(|| self.sources.iter().position(|s| s.name == p.name));
        let Some(src) = slot.and_then(|i| self.sources.get(i)) else {
            return Ok(());
        };
        let batch = (src.kind == SourceKind::Log).then(|| {
            self.logs
                .entry(src.id.0)
                .or_insert_with(|| Batch::new(follow::parser(src).0, &src.ctx.name, &src.ctx.log))
        });
        let c = collected_of(p, src, batch);
        self.send(Feed::Data(c))
    }

    fn run(mut self, ctl: std_mpsc::Receiver<Ctl>) {
        let _ = self.run_inner(ctl);
    }

    fn run_inner(&mut self, ctl: std_mpsc::Receiver<Ctl>) -> Result<(), Gone> {
        let mut i = 0usize;
        let mut ctl_alive = true;
        let mut end_sent = false;
        loop {
            if i >= self.index.len() && !end_sent {
                let at = {
                    let mut st = self.state();
                    st.rec = st.at(Instant::now()).max(st.end);
                    st.ended = true;
                    st.rec
                };
                self.send(Feed::End {
                    at,
                    cut: self.cut.clone(),
                })?;
                end_sent = true;
            }
            // How long until the next poll is due; None: wait for a command only.
            let wait = if i >= self.index.len() {
                None
            } else {
                let st = self.state();
                if st.paused {
                    None
                } else if !st.speed.is_finite() {
                    Some(Duration::ZERO)
                } else {
                    let due_ms = (self.index[i].at - st.rec).max(0) as f64 / st.speed;
                    let due = st.wall + Duration::from_secs_f64(due_ms / 1000.0);
                    Some(due.saturating_duration_since(Instant::now()))
                }
            };
            let cmd = if !ctl_alive {
                match wait {
                    None => return Ok(()),
                    Some(d) => {
                        std::thread::sleep(d);
                        None
                    }
                }
            } else {
                match wait {
                    None => match ctl.recv() {
                        Ok(c) => Some(c),
                        Err(_) => {
                            ctl_alive = false;
                            continue;
                        }
                    },
                    Some(d) if d.is_zero() => match ctl.try_recv() {
                        Ok(c) => Some(c),
                        Err(std_mpsc::TryRecvError::Empty) => None,
                        Err(std_mpsc::TryRecvError::Disconnected) => {
                            ctl_alive = false;
                            None
                        }
                    },
                    Some(d) => match ctl.recv_timeout(d) {
                        Ok(c) => Some(c),
                        Err(std_mpsc::RecvTimeoutError::Timeout) => None,
                        Err(std_mpsc::RecvTimeoutError::Disconnected) => {
                            ctl_alive = false;
                            None
                        }
                    },
                }
            };
            let Some(cmd) = cmd else {
                // Due: deliver it, and keep the clock from running behind a late poll.
                let at = self.index[i].at;
                self.deliver(i)?;
                i += 1;
                let mut st = self.state();
                if !st.speed.is_finite() {
                    st.rec = st.rec.max(at);
                }
                continue;
            };
            let now = Instant::now();
            match cmd {
                Ctl::Stop => return Ok(()),
                Ctl::Pause => {
                    let mut st = self.state();
                    st.reanchor(now);
                    st.paused = true;
                }
                Ctl::Resume => {
                    let mut st = self.state();
                    st.wall = now;
                    st.paused = false;
                }
                Ctl::Toggle => {
                    let mut st = self.state();
                    st.reanchor(now);
                    st.paused = !st.paused;
                }
                Ctl::Speed(x) => {
                    let mut st = self.state();
                    st.reanchor(now);
                    st.speed = speed_of(x);
                }
                Ctl::Step => {
                    if i < self.index.len() {
                        let at = self.index[i].at;
                        self.deliver(i)?;
                        i += 1;
                        let mut st = self.state();
                        st.rec = st.rec.max(at);
                        st.wall = Instant::now();
                    }
                }
                Ctl::Seek(target) => {
                    i = self.seek(i, target)?;
                    end_sent = false;
                }
            }
        }
    }

    /// Jump to `target`: rewind (with a Reset) or fast-forward, delivering one retention of
    /// history before it at once so charts are full. Returns the next index to deliver.
    fn seek(&mut self, mut i: usize, target: Ts) -> Result<usize, Gone> {
        let (start, end, current) = {
            let st = self.state();
            (st.start, st.end, st.at(Instant::now()))
        };
        let target = target.clamp(start, end.max(start));
        let warm_from = self
            .index
            .iter()
            .position(|e| e.at >= target - self.retention)
            .unwrap_or(self.index.len());
        if target < current || warm_from > i {
            self.logs.clear();
            self.send(Feed::Reset { at: target })?;
            i = warm_from;
        }
        while i < self.index.len() && self.index[i].at < target {
            self.deliver(i)?;
            i += 1;
        }
        {
            let mut st = self.state();
            st.rec = target;
            st.wall = Instant::now();
            st.ended = false;
        }
        self.send(Feed::Seeked { at: target })?;
        Ok(i)
    }
}
