//! [`Windows`] answers a series asked again before the store changed from what it kept
//! ([`Windows::rate`], the repeated [`Windows::increase_since`]): every such answer is held to
//! the store's own, computed from nothing, through all that changes a series between frames.

use super::*;
use crate::metrics::{Parsed, Sample};

fn poll(samples: Vec<Sample>) -> Parsed {
    Parsed {
        samples,
        ..Default::default()
    }
}

/// Asks every series what a frame asks (its rate before and after its windows, each window
/// twice) and holds each answer to the store's. Returns how many rates came from kept entries.
fn ask_all(w: &mut Windows, st: &Store, what: &str) -> usize {
    let ids: Vec<SeriesId> = st.all().map(|(id, _)| id).collect();
    let now = st
        .all()
        .filter_map(|(_, s)| s.last_seen())
        .max()
        .unwrap_or(0);
    let mut kept = 0;
    for &id in &ids {
        assert_eq!(w.rate(st, id), st.rate(id), "{what}: {id:?} first rate");
        for since in [now - 60_000, now - 3_000, now - 1_000, now, 2_500] {
            for _ in 0..2 {
                assert_eq!(
                    w.increase_since(st, id, since),
                    st.increase_since(id, since),
                    "{what}: {id:?} since {since}"
                );
            }
        }
        kept += usize::from(w.current(st, id).is_some());
        assert_eq!(w.rate(st, id), st.rate(id), "{what}: {id:?} rate");
    }
    kept
}

/// Two sources polled out of step, a reset, a failed poll (a gap), a series that appears late,
/// a gauge, a µs counter, a 32-bit counter wrapping, a replaced newest point, a series a whole
/// answer left out, expiry by retention and by the point limit, and a time-travel copy asked
/// in between: the kept answers are the store's at every step.
#[test]
fn rates_and_windows_read_again_are_the_stores() {
    let mut st = Store::new(20_000, 12);
    let a = st.add_source("a", 1000);
    let b = st.add_source("b", 1000);
    st.set_whole_answers(b);
    let mut w = Windows::default();
    let mut kept = 0;
    let mut v = 0u64;
    for step in 1..45i64 {
        let at = step * 1000;
        v += 3 + (step as u64 % 4);
        let mut sa = vec![
            Sample::counter("c_total", &[("src", "a")], v),
            Sample::counter(
                "r_total",
                &[("src", "a")],
                if step == 12 { 1 } else { v * 2 },
            ),
            Sample::counter_micros("p_seconds_total", &[("src", "a")], v * 1000),
            Sample::gauge("g", &[("src", "a")], v as f64),
        ];
        if step >= 20 {
            sa.push(Sample::counter("late_total", &[("src", "a")], v));
        }
        st.ingest(a, at, &poll(sa));
        kept += ask_all(&mut w, &st, &format!("step {step} a"));
        if step == 18 {
            // The same instant again: its newest values are replaced.
            v += 40;
            let again = poll(vec![Sample::counter("c_total", &[("src", "a")], v)]);
            st.ingest(a, at, &again);
            kept += ask_all(&mut w, &st, &format!("step {step} a again"));
        }
        // Source b half a second later, every third poll failing.
        let bt = at + 500;
        if step % 3 == 0 {
            st.fail(b, bt, "timeout");
        } else {
            let mut sb = vec![Sample::counter32(
                "w32_total",
                &[("src", "b")],
                (u64::from(u32::MAX) - 50 + v * 5) % (1 << 32),
            )];
            if step % 7 != 0 {
                // Left out of every seventh answer: gone until the next.
                sb.push(Sample::counter("d_total", &[("src", "b")], v * 3));
            }
            st.ingest(b, bt, &poll(sb));
        }
        kept += ask_all(&mut w, &st, &format!("step {step} b"));
        if step % 10 == 0 {
            // Time travel and back: the copy is another store, never answered from these.
            let past = st.as_of(at - 4_000);
            kept += ask_all(&mut w, &past, &format!("step {step} past"));
            kept += ask_all(&mut w, &st, &format!("step {step} back"));
        }
    }
    assert!(kept > 100, "the kept entries were read ({kept})");
}

/// Made stale on purpose: an entry brought up to date, then a poll that changes the rate. The
/// next ask reads the new poll (a memo that outlived the change would give the old rate).
#[test]
fn an_entry_read_before_a_poll_is_not_the_answer_after_it() {
    let mut st = Store::new(60_000, 100);
    let src = st.add_source("a", 1000);
    let mut w = Windows::default();
    for (step, v) in [(1i64, 0u64), (2, 10), (3, 20)] {
        st.ingest(
            src,
            step * 1000,
            &poll(vec![Sample::counter("c_total", &[], v)]),
        );
    }
    let id = st.all().next().map(|(id, _)| id).expect("a series");
    assert_eq!(w.increase_since(&st, id, 0), Some(20));
    assert!(w.current(&st, id).is_some(), "brought up to date");
    let before = w.rate(&st, id);
    assert_eq!(before, Some(Rate::PerSec(10.0)));
    st.ingest(src, 4000, &poll(vec![Sample::counter("c_total", &[], 50)]));
    assert!(w.current(&st, id).is_none(), "the poll made it old");
    assert_eq!(w.rate(&st, id), Some(Rate::PerSec(30.0)));
    assert_eq!(w.increase_since(&st, id, 0), Some(50));
    // The same instant again, the newest value replaced: read again, not kept.
    st.ingest(src, 4000, &poll(vec![Sample::counter("c_total", &[], 60)]));
    assert_eq!(w.increase_since(&st, id, 0), Some(60));
    assert_eq!(w.rate(&st, id), st.rate(id));
    assert_eq!(w.rate(&st, id), Some(Rate::PerSec(40.0)));
}
