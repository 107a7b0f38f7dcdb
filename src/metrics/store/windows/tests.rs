use super::*;
use crate::metrics::rate::Rate;
use crate::metrics::store::{SeriesId, Store, Ts};
use crate::metrics::{Parsed, Sample};

/// The walk from the last answer finds what a binary search finds, for windows moving on a
/// second at a time, jumping back and forth, and with intervals popped between the asks.
#[test]
fn walking_from_the_last_answer_finds_what_a_search_finds() {
    let mut e = Entry::default();
    for k in 0..200i64 {
        e.push(Iv {
            a: k * 1000,
            b: (k + 1) * 1000,
            inc: 1,
            cum: 0,
            rate: Rate::PerSec(1.0),
        });
    }
    let search = |e: &Entry, since: Ts, or_at: bool| {
        let after = |iv: &Iv| if or_at { iv.b >= since } else { iv.b > since };
        e.ivs.partition_point(|iv| !after(iv))
    };
    let mut sinces: Vec<Ts> = (0..120).map(|k| 60_000 + k * 1000).collect();
    sinces.extend([
        5_000, 150_000, 150_500, 20_000, 199_000, 250_000, -3, 61_000,
    ]);
    for (n, since) in sinces.into_iter().enumerate() {
        if n % 7 == 3 {
            e.pop_front();
        }
        for or_at in [false, true] {
            assert_eq!(
                e.from(since, or_at),
                search(&e, since, or_at),
                "{since} {or_at}"
            );
            // The other kind of window asked in between (the timeline's, "since start").
            let other = since - 30_000;
            assert_eq!(e.from(other, !or_at), search(&e, other, !or_at), "{other}");
        }
    }
}

/// Every answer from kept intervals is the store's own, through new polls, resets, a failed
/// poll (a gap), a repeated timestamp, a series that appears late and expiry.
#[test]
fn kept_intervals_answer_what_the_store_answers() {
    let mut st = Store::new(20_000, 12);
    let src = st.add_source("n1", 1000);
    // Keeping all (this retention) and keeping 3 s (older windows answered by the store).
    let mut ws = [WindowsCache::default(), WindowsCache::keeping(3_000)];
    let mut v = [0u64; 3];
    for step in 0..40i64 {
        let at = step * 1000;
        if step == 9 {
            st.fail(src, at, "timeout");
            continue;
        }
        v[0] += (step as u64 * 7) % 5;
        v[1] = if step == 15 { 3 } else { v[1] + 100 };
        v[2] += 1;
        let mut samples = vec![
            Sample::counter("c_total", &[("dev", "a")], v[0]),
            Sample::counter("c_total", &[("dev", "b")], v[1]),
            Sample::counter_micros("p_seconds_total", &[("dev", "a")], v[0] * 1000),
            // Quiet (one run, read off the clock), and quiet until it moves at step 20.
            Sample::counter("c_total", &[("dev", "quiet")], 5),
            Sample::counter("c_total", &[("dev", "wakes")], 7 + step.max(20) as u64 - 20),
        ];
        if step >= 20 {
            samples.push(Sample::counter("c_total", &[("dev", "late")], v[2]));
        }
        let poll = Parsed::from(samples);
        st.ingest(src, at, &poll);
        if step == 25 {
            // The same instant again: the newest value is replaced.
            v[0] += 50;
            let again = Parsed {
                samples: vec![Sample::counter("c_total", &[("dev", "a")], v[0])],
                ..Default::default()
            };
            st.ingest(src, at, &again);
        }
        if step == 30 {
            // Started late: decoded afresh from 3 s back, the older history never kept.
            ws[1] = WindowsCache::keeping(3_000);
        }
        let ids: Vec<SeriesId> = st.all().map(|(id, _)| id).collect();
        for w in ws.iter_mut() {
            for &id in &ids {
                for since in [at - 60_000, at - 5_000, at - 2_000, at - 1_000, at, 3_000] {
                    assert_eq!(
                        w.increase_since(&st, id, since),
                        st.increase_since(id, since),
                        "step {step}, {id:?}, since {since}"
                    );
                    let mut got = Vec::new();
                    w.rates_each(&st, id, since, |t, r| got.push((t, r)));
                    assert_eq!(
                        got,
                        st.rates(id, since),
                        "step {step}, {id:?}, since {since}"
                    );
                }
            }
        }
    }
    let late = st
        .select("c_total", &[("dev", "late")])
        .next()
        .map(|(id, _)| id);
    let w = &mut ws[0];
    assert!(
        late.and_then(|id| w.increase_since(&st, id, 0))
            .is_some_and(|n| n > 0),
        "the late series counts"
    );
    // Another store (a time-travel copy) is never answered from this one's intervals.
    let past = st.as_of(30_000);
    for (id, _) in past.all() {
        assert_eq!(w.increase_since(&past, id, 0), past.increase_since(id, 0));
    }
}

/// Entries are kept only for the series asked about, whatever their ids and the order they
/// are first asked in, and each answers for its own series (not its neighbour's by index).
#[test]
fn only_series_asked_about_hold_entries() {
    let mut st = Store::new(60_000, 80);
    let src = st.add_source("n1", 1000);
    let mut w = WindowsCache::default();
    for step in 0..30i64 {
        let samples: Vec<Sample> = (0..40u64)
            .map(|d| Sample::counter("c_total", &[("dev", &d.to_string())], d * step as u64))
            .collect();
        let poll = Parsed::from(samples);
        st.ingest(src, step * 1000, &poll);
        let ids: Vec<SeriesId> = st.all().map(|(id, _)| id).collect();
        // The newest series first, then a few older ones; never most of them.
        for &id in [ids[39], ids[2], ids[17], ids[39], ids[5]].iter() {
            for since in [0, step * 1000 - 5_000] {
                assert_eq!(
                    w.increase_since(&st, id, since),
                    st.increase_since(id, since),
                    "step {step} {id:?}"
                );
                let mut got = Vec::new();
                w.rates_each(&st, id, since, |t, r| got.push((t, r)));
                assert_eq!(got, st.rates(id, since), "step {step} {id:?}");
            }
        }
        assert!(w.per.len() <= 4, "{} entries for 4 series", w.per.len());
    }
    assert_eq!(w.per.len(), 4, "each moving series asked about has one");
}

/// Windows reaching past the kept intervals (since start, since a mark inside the history,
/// inside a run, before the oldest point) are answered from the runs exactly as the store
/// answers them, through resets, a failed poll, a replaced newest point, expiry cutting into
/// a run, a memo started late (its older runs decoded once) and a series that appears late.
#[test]
fn runs_of_older_intervals_answer_what_the_store_answers() {
    // More points than a block (256) held, fewer than the retention (the point limit expires).
    let mut st = Store::new(320_000, 280);
    let src = st.add_source("n1", 1000);
    let mut ws = [
        WindowsCache::with_runs(3_000, 4),
        WindowsCache::with_runs(5_000, 1),
    ];
    let mut v = [0u64; 2];
    let mut far = 0;
    for step in 0..420i64 {
        let at = step * 1000;
        if step == 33 || step == 90 || step == 301 {
            st.fail(src, at, "timeout");
            continue;
        }
        v[0] += (step as u64 * 13) % 7;
        v[1] = if step % 45 == 44 { 2 } else { v[1] + 1000 };
        let mut samples = vec![
            Sample::counter("c_total", &[("dev", "a")], v[0]),
            Sample::counter("c_total", &[("dev", "b")], v[1]),
        ];
        if step >= 70 {
            samples.push(Sample::counter(
                "c_total",
                &[("dev", "late")],
                step as u64 * 3,
            ));
        }
        st.ingest(src, at, &Parsed::from(samples));
        if step == 120 {
            st.ingest(
                src,
                at,
                &Parsed {
                    samples: vec![Sample::counter("c_total", &[("dev", "a")], v[0] + 9)],
                    ..Default::default()
                },
            );
            v[0] += 9;
        }
        if step == 100 || step == 350 {
            // Started on a history: (past a block) the older runs are decoded when first asked.
            ws[1] = WindowsCache::with_runs(5_000, 3);
        }
        let ids: Vec<SeriesId> = st.all().map(|(id, _)| id).collect();
        for w in ws.iter_mut() {
            for &id in &ids {
                for since in [0, 141_500, 150_000, at - 200_000, at - 4_500, at - 1_000] {
                    let got = w.increase_since(&st, id, since);
                    assert_eq!(
                        got,
                        st.increase_since(id, since),
                        "step {step} {id:?} {since}"
                    );
                    far += usize::from(got.is_some_and(|n| n > 0) && since < at - 5_000);
                }
            }
        }
    }
    // Long windows with counts were asked, and runs were made and let go again.
    assert!(far > 3000, "{far}");
    assert!(ws.iter().all(|w| w.per.iter().any(|e| e.old.len() > 3)));
    // Runs go with the points the store lets go: no more than its 280 points hold.
    for w in &ws {
        let most = 280 / w.span as usize + 2;
        assert!(w.per.iter().all(|e| e.old.len() <= most), "{most}");
    }
}

/// A memo started on a long history (more than a block of points) decodes only its last
/// seconds, and says so: a window reaching further back is the store's to answer.
#[test]
fn a_late_memo_answers_long_windows_from_the_store() {
    let mut st = Store::new(3_600_000, 2_000);
    let src = st.add_source("n1", 1000);
    for step in 0..600i64 {
        let poll = Parsed {
            samples: vec![Sample::counter("c_total", &[], (step * step) as u64)],
            ..Default::default()
        };
        st.ingest(src, step * 1000, &poll);
    }
    let id = st.all().next().map(|(id, _)| id).expect("a series");
    let mut w = WindowsCache::keeping(3_000);
    for since in [0, 100_000, 595_000, 597_000, 599_000] {
        assert_eq!(
            w.increase_since(&st, id, since),
            st.increase_since(id, since)
        );
        let mut got = Vec::new();
        w.rates_each(&st, id, since, |t, r| got.push((t, r)));
        assert_eq!(got, st.rates(id, since), "since {since}");
    }
}

/// The timeline's way of asking: once a poll, for the seconds from the previous newest point on
/// (so each ask finds one point arrived, the intervals read from the newest end), through a
/// failed poll (a gap), a counter reset, a replaced newest point and expiry of the store's
/// oldest points; every answer is the store's own, decoded from scratch.
#[test]
fn the_timelines_newest_seconds_are_the_stores_own() {
    // Retention 8 s: points expire from the front while intervals are kept (keep 180 s).
    let mut st = Store::new(8_000, 1000);
    let src = st.add_source("n1", 1000);
    let poll = |v: u64| Parsed::from(vec![Sample::counter("c_total", &[], v)]);
    let mut w = WindowsCache::default();
    let mut v = 0u64;
    let mut asked = 0;
    for step in 0..60i64 {
        let at = step * 1000;
        if step % 17 == 9 {
            st.fail(src, at, "timeout");
            continue;
        }
        v = if step == 31 {
            4
        } else {
            v + 10 + step as u64 % 3
        };
        st.ingest(src, at, &poll(v));
        // At step 40 the newest point is replaced after it was asked about (a second answer
        // stamped at the same time), and asked about again.
        for again in 0..=usize::from(step == 40) {
            if again == 1 {
                v += 7;
                st.ingest(src, at, &poll(v));
            }
            let id = st.all().next().map(|(id, _)| id).expect("a series");
            // The column of the previous poll, and the one a second before it.
            for since in [at - 1_000, at - 1_500] {
                let mut got = Vec::new();
                w.rates_each(&st, id, since, |t, r| got.push((t, r)));
                assert_eq!(got, st.rates(id, since), "step {step}, since {since}");
                asked += got.len();
            }
        }
    }
    // Every ask after the first had intervals to compare.
    assert!(asked > 150, "{asked}");
}
