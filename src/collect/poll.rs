//! The collector loop: one task per source, polling at its interval with a timeout around every
//! poll. Errors become data (`Collected::error`), never a crash; a slow source delays only itself.

use super::collected::{collected, collected_with};
use super::source::{Source, SourceKind};
use super::stream::ticks::Ticks;
use super::transport::{Answers, CollectError};
use crate::metrics::now_ms;
use crate::parse::ParseKind;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

mod memo;
mod retry;

use memo::Memo;
use retry::Retry;

// Where the rest of the crate has always found them; the collectors import them from
// `collected` (the streaming and log collectors are started from here).
pub use super::collected::{Collected, KeepRaw, history_of, parse_outputs, timing};

/// A switch that hangs up after each exec gets its commands in one exec (the transport says
/// which: `Answers::joined`): their outputs come back glued in the first of those slots. Give each
/// command its own part back, by the headers the outputs start with.
fn unglue(probes: &[super::source::Probe], answers: Answers) -> Vec<Result<String, CollectError>> {
    let Answers { mut each, joined } = answers;
    let (Some(&first), true) = (joined.first(), joined.len() > 1) else {
        return each;
    };
    let Some(Ok(text)) = each.get_mut(first).map(|r| r.as_mut().map(std::mem::take)) else {
        return each;
    };
    let kinds: Vec<ParseKind> = joined
        .iter()
        .filter_map(|&i| probes.get(i).map(|p| p.kind))
        .collect();
    for (&i, part) in joined
        .iter()
        .zip(crate::parse::switch::split::split(&kinds, &text))
    {
        if let Some(slot) = each.get_mut(i) {
            *slot = Ok(part);
        }
    }
    each
}

/// Poll a source once: every probe, parsed. Never fails; failure is in `error`.
pub async fn poll_once(src: &Source) -> Collected {
    poll_once_memo(src, None).await
}

/// [`poll_once`], a switch's queuing answer parsed from the last poll's where `memo` is given
/// (the poll loop keeps one per source).
async fn poll_once_memo(src: &Source, memo: Option<&mut Memo>) -> Collected {
    let started = std::time::Instant::now();
    let t0 = now_ms();
    let probes = src.probes_now();
    let reqs: Vec<_> = probes.iter().map(|p| p.request.clone()).collect();
    // The transport bounds each request; this bounds the whole poll in case one does not.
    let budget = src.timeout * (reqs.len() as u32 + 1);
    let answers =
        match tokio::time::timeout(budget, src.transport.run_poll(&reqs, src.timeout)).await {
            Ok(a) => a,
            Err(_) => Answers {
                each: vec![Err(CollectError::Timeout(src.timeout)); reqs.len()],
                joined: Vec::new(),
            },
        };
    let results = unglue(&probes, answers);
    let t1 = now_ms();
    // A fleet source's answers are as of the query time it asked for, not when they arrived.
    let at = src.transport.answers_at().unwrap_or(t0 + (t1 - t0) / 2);
    let c = match memo {
        Some(m) => collected_with(src, &probes, results, at, &mut |i, kind, text, opts| {
            m.part(i, kind, text, &src.ctx, opts)
        }),
        None => collected(src, &probes, results, at),
    };
    timing::POLLS.observe(started.elapsed());
    c
}

/// Start one polling task per source; results flow into `tx` (bounded: backpressure, not memory),
/// with their raw outputs where `keep` says so. Log sources are followed, not polled
/// (`logtail::follow`). Tasks end when the receiver is dropped or the set is dropped.
pub fn spawn_all(
    sources: Vec<Arc<Source>>,
    tx: mpsc::Sender<Collected>,
    keep: KeepRaw,
) -> JoinSet<()> {
    let mut set = JoinSet::new();
    let n = sources.len().max(1) as u64;
    let streamed = |s: &Source| s.kind == SourceKind::Node && s.transport.streams_polls();
    let n_streamed = sources.iter().filter(|s| streamed(s)).count() as u64;
    let (origin, mut i_streamed) = (tokio::time::Instant::now(), 0);
    for (i, src) in sources.into_iter().enumerate() {
        let tx = tx.clone();
        if src.kind == SourceKind::Log {
            set.spawn(crate::collect::logtail::follow::run(src, tx));
            continue;
        }
        if streamed(&src) {
            let ticks = Ticks::of(origin, src.interval, i_streamed, n_streamed);
            i_streamed += 1;
            set.spawn(crate::collect::stream::run(src, tx, ticks, keep.clone()));
            continue;
        }
        let phase = first_poll_after(src.kind, src.interval, i as u64, n);
        let keep = keep.clone();
        set.spawn(async move {
            tokio::time::sleep(phase).await;
            let mut tick = tokio::time::interval(src.interval);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut memo = (src.kind == SourceKind::Switch).then(|| Memo::of_ports(&src.ports));
            let mut retry = Retry::of(&src.name);
            loop {
                tick.tick().await;
                let c = keep.apply(poll_once_memo(&src, memo.as_mut()).await);
                let failed = c.error.is_some();
                if tx.send(c).await.is_err() {
                    return;
                }
                if let Some(after) = retry.after(failed, src.interval) {
                    tick.reset_after(after);
                }
            }
        });
    }
    set
}

/// Sources (64 hosts: their counters and topology reads) whose topology reads all come first
/// within a second.
const SMALL_SET: u64 = 128;

/// When the `i`-th of `n` sources polls first: staggered over the interval (5 s at most) so
/// hundreds of connects, and then their polls, do not land at once. A topology read rides the
/// connection its host's counters open and is rare: in a set of up to [`SMALL_SET`] sources it
/// comes within a second, since the tabs wait on it for "which node is behind which port". In a
/// larger one, hundreds of first reads within a second land while their hosts' connections are
/// still opening and run past their timeout (512 nodes: ~460 of 512 reads down for their whole
/// interval), so they are spread over 5 s like the rest.
fn first_poll_after(kind: SourceKind, interval: Duration, i: u64, n: u64) -> Duration {
    let cap = match kind {
        SourceKind::Topology if n <= SMALL_SET => Duration::from_secs(1),
        _ => Duration::from_secs(5),
    };
    let spread = interval.min(cap).as_millis() as u64;
    Duration::from_millis(spread * i / n.max(1))
}

/// Poll every source once, concurrently (for `snapshot`, `check`).
pub async fn poll_all(sources: &[Arc<Source>]) -> Vec<Collected> {
    let mut set = JoinSet::new();
    for s in sources {
        let s = s.clone();
        set.spawn(async move { poll_once(&s).await });
    }
    let mut out = Vec::with_capacity(sources.len());
    while let Some(r) = set.join_next().await {
        if let Ok(c) = r {
            out.push(c);
        }
    }
    out.sort_by_key(|c| c.source);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_polls_spread_over_the_interval_and_topology_within_a_second_in_a_small_set() {
        let s = Duration::from_secs;
        let ms = Duration::from_millis;
        // (kind, interval, i, n, first poll after)
        let cases = [
            (SourceKind::Switch, s(1), 500, 1000, ms(500)),
            (SourceKind::Switch, s(10), 999, 1000, ms(4995)),
            (SourceKind::Node, s(2), 0, 1000, ms(0)),
            (SourceKind::Topology, s(300), 999, 1000, ms(4995)),
            (SourceKind::Topology, s(300), 127, 128, ms(992)),
            (SourceKind::Topology, s(300), 128, 129, ms(4961)),
            (SourceKind::Topology, s(300), 16, 17, ms(941)),
            (
                SourceKind::Topology,
                Duration::from_millis(500),
                8,
                16,
                ms(250),
            ),
        ];
        for (kind, interval, i, n, want) in cases {
            assert_eq!(
                first_poll_after(kind, interval, i, n),
                want,
                "{kind:?} every {interval:?}, {i} of {n}"
            );
        }
    }
}
