//! A history's points back as they were pushed, through runs, blocks, gaps and expiry.

use super::blocks::BLOCK;
use super::*;

/// A history with a slab of its own, polls timed at `seq` seconds: the calls the tests make.
#[derive(Default)]
struct H {
    h: Hist,
    m: Slab,
}

fn secs(q: i64) -> Option<Ts> {
    Some(q * 1000)
}

impl H {
    fn push(&mut self, p: At, t: Ts, time: impl Fn(i64) -> Option<Ts>) {
        assert_eq!(time(p.seq), Some(t));
        assert!(self.h.push(p, &mut self.m, time));
    }

    fn len(&self) -> usize {
        self.h.len(&self.m)
    }

    fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    fn bytes(&self) -> usize {
        self.m.bytes()
    }

    fn iter(&self) -> Iter<'_> {
        self.h.iter(&self.m)
    }

    fn iter_from(&self, since: Ts) -> Iter<'_> {
        self.h.iter_from(since, &self.m)
    }

    fn flat_from(&self, since: Ts) -> bool {
        self.h.flat_from(since, &self.m)
    }

    fn front_seq(&self) -> Option<i64> {
        self.h.front_seq(&self.m)
    }

    fn expire(&mut self, cutoff: i64) {
        self.h.expire(cutoff, &mut self.m);
    }

    fn pop_front(&mut self) {
        self.h.pop_front(&mut self.m);
    }

    fn replace_last(&mut self, raw: u64, time: impl Fn(i64) -> Option<Ts>) {
        self.h.replace_last(raw, &mut self.m, time);
    }

    fn last(&self) -> Option<(At, Ts)> {
        self.h.last().and_then(|p| Some((p, secs(p.seq)?)))
    }

    fn last_two(&self, time: impl Fn(i64) -> Option<Ts>) -> Option<((At, Ts), (At, Ts))> {
        let (a, b) = self.h.last_two(&self.m)?;
        Some(((a, time(a.seq)?), (b, time(b.seq)?)))
    }

    fn up_to(&self, last_seq: i64, time: impl Fn(i64) -> Option<Ts>) -> H {
        let mut m = Slab::default();
        let h = self.h.up_to(last_seq, &self.m, &mut m, time);
        H { h, m }
    }
}

fn pts(h: &H) -> Vec<(i64, u64)> {
    h.iter().map(|p| (p.seq, p.raw)).collect()
}

fn push(h: &mut H, seq: i64, raw: u64) {
    h.push(At { seq, raw }, seq * 1000, secs);
}

#[test]
fn round_trip_with_gaps_resets_runs_and_big_values() {
    let mut h = H::default();
    let mut want = Vec::new();
    let mut v = 0u64;
    let mut seq = 10i64;
    for i in 0..1000i64 {
        // Mostly one poll apart; now and then a gap of polls the series missed.
        seq += if i % 97 == 0 { 3 } else { 1 };
        v = match i {
            300 => 3,
            600 => u64::MAX - 5,
            601 => 2,
            // Runs of unchanged values between changes.
            _ if (i / 10) % 3 == 0 => v,
            _ => v.wrapping_add((i as u64 * 2654435761) % 100_000),
        };
        push(&mut h, seq, v);
        want.push((seq, v));
    }
    assert_eq!(h.len(), 1000);
    assert_eq!(pts(&h), want);
    assert!(h.bytes() < 1000 * 4, "{} bytes", h.bytes());
    let mut flat = H::default();
    for i in 0..1000i64 {
        push(&mut flat, i, 7);
    }
    assert!(
        flat.bytes() < 4 * 100,
        "unchanged values one poll apart: a run, {}",
        flat.bytes()
    );
    assert!(flat.iter().all(|p| p.raw == 7) && flat.iter().count() == 1000);
    let (a, b) = h.last_two(|q| Some(q * 1000)).expect("two");
    assert_eq!(
        ((a.0.seq, a.0.raw), (b.0.seq, b.0.raw)),
        (want[998], want[999])
    );
    assert_eq!((a.1, b.1), (want[998].0 * 1000, want[999].0 * 1000));
    let from: Vec<_> = h
        .iter_from(want[700].0 * 1000)
        .map(|p| (p.seq, p.raw))
        .collect();
    assert!(from.contains(&want[699]) && from.ends_with(&want[700..]));
    assert!(from.len() <= 300 + BLOCK as usize, "whole blocks skipped");
}

#[test]
fn expiry_and_pop_keep_exact_counts() {
    let mut h = H::default();
    for i in 0..600i64 {
        push(&mut h, i, (i / 50) as u64);
    }
    h.expire(300);
    assert_eq!(h.len(), 300);
    assert_eq!(h.front_seq(), Some(300));
    assert_eq!(pts(&h).len(), 300);
    assert_eq!(pts(&h).first(), Some(&(300, 6)));
    for _ in 0..299 {
        h.pop_front();
    }
    assert_eq!(pts(&h), vec![(599, 11)]);
    h.pop_front();
    assert_eq!(h.len(), 0);
    assert!(pts(&h).is_empty());
    push(&mut h, 700, 1);
    push(&mut h, 701, 2);
    assert_eq!(pts(&h), vec![(700, 1), (701, 2)]);
}

/// `flat_from` agrees with the decoded points, whichever block the start falls in.
#[test]
fn flat_from_matches_the_points() {
    let mut h = H::default();
    // 300 points: 7 until seq 400, then moving to 450, then 9 to the end (blocks of 256).
    for seq in 100..700i64 {
        let raw = match seq {
            ..400 => 7,
            400..450 => seq as u64,
            _ => 9,
        };
        push(&mut h, seq, raw);
    }
    for since in [
        0, 150, 380, 399, 400, 420, 449, 450, 451, 500, 699, 700, 5000,
    ] {
        let since = since * 1000;
        let vals: Vec<u64> = h.iter_from(since).map(|p| p.raw).collect();
        let flat = vals.windows(2).all(|w| w[0] == w[1]);
        assert_eq!(h.flat_from(since), flat, "since {since}: {vals:?}");
    }
    // Blocks of 256 from seq 100: the last one starts at 612, after the values moved.
    assert!(
        h.flat_from(620_000),
        "from the last block on, every point is 9"
    );
    assert!(!h.flat_from(0));
}

/// A series that has not changed is a count, no allocation; when it changes, its run goes
/// into blocks with each point's own time, and reads see the same points either way.
#[test]
fn an_inline_run_spills_into_blocks_with_its_times() {
    let time = |q: i64| Some(q * 1000);
    let mut h = H::default();
    for seq in 0..600i64 {
        push(&mut h, seq, 5);
    }
    assert_eq!(h.bytes(), 0, "unchanged one poll apart: held inline");
    assert_eq!(h.len(), 600);
    assert!(h.flat_from(0));
    let two = h.last_two(time).map(|(a, b)| (a.0.seq, a.1, b.0.seq, b.1));
    assert_eq!(two, Some((598, 598_000, 599, 599_000)));
    h.expire(50);
    assert_eq!((h.len(), h.front_seq()), (550, Some(50)));
    push(&mut h, 600, 6);
    assert!(h.bytes() > 0, "changed: encoded");
    let want: Vec<(i64, u64)> = (50..600).map(|s| (s, 5)).chain([(600, 6)]).collect();
    assert_eq!(pts(&h), want);
    let two = h.last_two(time).map(|(a, b)| (a.0.seq, a.1, b.0.seq));
    assert_eq!(two, Some((599, 599_000, 600)));
    // Blocks of 256 from seq 50: the first ends at 305, at its own time, so reading from
    // 400 s skips it and starts with its last point.
    let from: Vec<i64> = h.iter_from(400_000).map(|p| p.seq).collect();
    assert_eq!(from.first(), Some(&305));
    assert_eq!(from.last(), Some(&600));
    assert!(!h.flat_from(0));
    // A repeated timestamp with a new value: the run keeps its value.
    let mut r = H::default();
    for seq in 0..10i64 {
        push(&mut r, seq, 5);
    }
    r.replace_last(7, time);
    let want: Vec<(i64, u64)> = (0..9).map(|s| (s, 5)).chain([(9, 7)]).collect();
    assert_eq!(pts(&r), want);
    r.expire(1000);
    assert!(r.is_empty() && pts(&r).is_empty() && r.front_seq().is_none());
    // A copy up to a poll inside a run is the run up to it.
    let mut c = H::default();
    for seq in 0..20i64 {
        push(&mut c, seq, 3);
    }
    let up = c.up_to(11, time);
    assert_eq!(pts(&up), (0..12).map(|s| (s, 3)).collect::<Vec<_>>());
    assert_eq!(up.last().map(|(p, t)| (p.seq, t)), Some((11, 11_000)));
}

/// The older of the two newest points is read from the history itself while it is one poll
/// before the newest and near it in value, else from the blocks: the same points either way,
/// through big changes, resets, a missed poll and a replaced newest value; the owner's tag bits
/// are kept through all of it.
#[test]
fn the_two_newest_points_read_alike_inline_or_from_blocks() {
    let mut h = H {
        h: Hist::tagged(5),
        ..H::default()
    };
    let near = (LIMIT - 1) as u64;
    // (value, a poll missed before it, whether the older of the two is then held inline)
    let steps: [(u64, bool, bool); 11] = [
        (10, false, false),
        (15, false, true),
        (15, false, true),
        (1 << 40, false, false),
        (7, false, false),
        (7 + near, false, true),
        (7, false, true),
        (u64::MAX, false, true),
        (3, false, true),
        (4, true, false),
        (4 + near + 1, false, false),
    ];
    let mut want = Vec::new();
    let mut seq = 100i64;
    for (i, &(v, missed, inline)) in steps.iter().enumerate() {
        seq += if missed { 2 } else { 1 };
        push(&mut h, seq, v);
        want.push((seq, v));
        let n = want.len();
        let two = h
            .last_two(secs)
            .map(|(a, b)| ((a.0.seq, a.0.raw), (b.0.seq, b.0.raw)));
        assert_eq!(
            two,
            (n >= 2).then(|| (want[n - 2], want[n - 1])),
            "step {i}"
        );
        if i > 0 {
            assert_eq!(h.h.tag & PREV != 0, inline, "step {i}");
        }
    }
    h.replace_last(4 + near + 5, secs);
    let n = want.len();
    want[n - 1].1 = 4 + near + 5;
    assert_eq!(
        h.last_two(secs)
            .map(|(a, b)| ((a.0.seq, a.0.raw), (b.0.seq, b.0.raw))),
        Some((want[n - 2], want[n - 1]))
    );
    push(&mut h, seq + 1, 4 + near + 6);
    want.push((seq + 1, 4 + near + 6));
    assert!(h.h.tag & PREV != 0);
    assert_eq!(pts(&h), want);
    assert_eq!(h.h.tag(), 5);
    // Expired down to the newest point: inline again, nothing in the slab.
    h.expire(seq + 1);
    assert_eq!((h.len(), h.h.tag()), (1, 5));
    assert_eq!(h.last_two(secs), None);
    assert!(h.m.free.len() == 1, "its slot handed back");
}

/// The front of a history is a cursor kept between pushes: when it lies inside the newest run (of
/// no change) and that run grows, reads still give every point, as the points are popped and
/// pushed one at a time (a history at its point limit). Before, such a front ended its run early
/// and, once the run's count took a second byte, read that byte as a token: a point went missing.
#[test]
fn a_front_inside_a_growing_run_reads_every_point() {
    // (the step a poll, the poll missed, the poll the counter resets at)
    for (step, missed, reset) in [(100u64, 9i64, 15i64), (0, 9, 15), (100, 3, 30), (0, 40, 5)] {
        let mut h = H::default();
        let mut want = std::collections::VecDeque::new();
        let mut v = 0u64;
        for seq in 0..60i64 {
            if seq == missed {
                continue;
            }
            v = if seq == reset { 3 } else { v + step };
            push(&mut h, seq, v);
            want.push_back((seq, v));
            while want.len() > 12 {
                want.pop_front();
                h.pop_front();
            }
            let w: Vec<_> = want.iter().copied().collect();
            assert_eq!(pts(&h), w, "step {step}: poll {seq}");
        }
    }
}
