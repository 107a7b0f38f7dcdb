//! The store as it was at an earlier instant: live time travel (`[` `]` `{` `}` on the live screen)
//! draws every tab from such a copy while collection goes on into the live store. Replay seeks the
//! other way (it rebuilds a store by feeding the recording up to the target); both end in "a store
//! whose newest point is the cursor", so the tabs, queries and views need no notion of time travel.

use super::{Clock, Series, SourceHealth, Store, hist, next_generation};
use crate::metrics::Ts;

impl Store {
    /// A copy holding only what had arrived by `t`: points after it are left out, each source's
    /// health is what it was then (up or down, its last success, its failures).
    pub fn as_of(&self, t: Ts) -> Store {
        let clocks: Vec<Clock> = self
            .clocks
            .iter()
            .map(|c| Clock {
                first: c.first,
                times: c.times.iter().copied().take_while(|&x| x <= t).collect(),
                // The copy holds some of the original's points: none older.
                kept_from: c.kept_from,
            })
            .collect();
        let mut slab = hist::Slab::default();
        let none = Clock::default();
        let series = self
            .series
            .iter()
            .map(|s| {
                let c = clocks.get(s.source.0 as usize).unwrap_or(&none);
                let last_seq = c.first + c.times.len() as i64 - 1;
                Series {
                    key: s.key.clone(),
                    source: s.source,
                    points: s
                        .points
                        .up_to(last_seq, &self.slab, &mut slab, |seq| c.time(seq)),
                }
            })
            .collect();
        Store {
            retention_ms: self.retention_ms,
            max_points: self.max_points,
            index: self.index.clone(),
            by_name: self.by_name.clone(),
            series,
            sources: self
                .sources
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    let newest = clocks.get(i).and_then(|c| c.times.back().copied());
                    health_at(h, t, newest)
                })
                .collect(),
            dropped_out_of_order: self.dropped_out_of_order,
            last_expire: None,
            expire_all: self.expire_all,
            recent: Vec::new(),
            clocks,
            slab,
            generation: next_generation(),
            shape_generation: next_generation(),
            uid: next_generation(),
        }
    }
}

/// A source's health as it stood at `t`, from its newest success and its failures up to then.
/// `newest_poll` is the source's newest poll time at or before `t` (its clock holds successes only).
fn health_at(h: &SourceHealth, t: Ts, newest_poll: Option<Ts>) -> SourceHealth {
    let mut h = h.clone();
    h.failures.retain(|&f| f <= t);
    h.last_success = h.last_success.filter(|&s| s <= t).or(newest_poll);
    let failed_after = h
        .failures
        .iter()
        .copied()
        .filter(|&f| h.last_success.is_none_or(|s| f > s))
        .min();
    match failed_after {
        Some(f) => {
            h.up = Some(false);
            h.down_since = Some(f);
        }
        None => {
            h.up = h.last_success.map(|_| true);
            h.down_since = None;
            h.last_error = None;
        }
    }
    h.last_attempt = h.last_attempt.map(|a| a.min(t));
    h
}

#[cfg(test)]
mod tests {
    use crate::metrics::query::rate_sum;
    use crate::metrics::{Parsed, Sample, Store};

    fn c(v: u64) -> Parsed {
        Parsed {
            samples: vec![Sample::counter("m_total", &[("node", "n")], v)],
            ..Default::default()
        }
    }

    #[test]
    fn a_copy_at_t_has_the_rates_of_t_and_the_live_store_goes_on() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("n", 1000);
        for (i, v) in [0u64, 10, 30, 60, 100].into_iter().enumerate() {
            st.ingest(src, i as i64 * 1000, &c(v));
        }
        let past = st.as_of(2500);
        assert_eq!(
            rate_sum(&past, "m_total", &[]),
            Some(20.0),
            "30-10 over 1 s"
        );
        assert_eq!(rate_sum(&st, "m_total", &[]), Some(40.0));
        assert_eq!(past.source(src).and_then(|h| h.last_success), Some(2000));
        st.fail(src, 5000, "gone");
        st.ingest(src, 6000, &c(120));
        let before_fail = st.as_of(4500);
        assert_eq!(before_fail.source(src).and_then(|h| h.up), Some(true));
        let during = st.as_of(5500);
        assert_eq!(during.source(src).and_then(|h| h.up), Some(false));
        let empty = st.as_of(-1);
        assert_eq!(
            empty
                .get(crate::metrics::store::SeriesId(0))
                .map(|s| s.len(&empty)),
            Some(0)
        );
        assert_ne!(past.generation(), st.generation());
    }
}

#[cfg(test)]
mod long {
    use crate::metrics::{Parsed, Sample, Store};

    /// Over several compressed blocks (256 points each), with expiry trimming the oldest: the
    /// copy at every cut holds exactly the points up to it, values and times intact.
    #[test]
    fn copies_across_blocks_equal_the_points_up_to_the_cut() {
        let mut st = Store::new(700_000, 100_000);
        let src = st.add_source("n", 1000);
        for i in 0..1000i64 {
            // Runs of equal values and changes, as counters do.
            let v = (i / 3) as u64 * 7;
            let p = Parsed {
                samples: vec![Sample::counter("m_total", &[("node", "n")], v)],
                ..Default::default()
            };
            st.ingest(src, i * 1000, &p);
        }
        let id = crate::metrics::store::SeriesId(0);
        let all: Vec<_> = st
            .get(id)
            .map(|s| s.points(&st).collect())
            .unwrap_or_default();
        assert_eq!(
            all.first().map(|p| p.0),
            Some(299_000),
            "expired to retention"
        );
        for cut in [
            299_000, 300_500, 555_000, 556_000, 811_999, 812_000, 998_000, 999_000,
        ] {
            let past = st.as_of(cut);
            let got: Vec<_> = past
                .get(id)
                .map(|s| s.points(&past).collect())
                .unwrap_or_default();
            let want: Vec<_> = all.iter().copied().filter(|p| p.0 <= cut).collect();
            assert_eq!(got, want, "cut at {cut}");
            assert_eq!(
                past.get(id).map(|s| s.len(&past)),
                Some(want.len()),
                "len at {cut}"
            );
            assert_eq!(
                past.get(id)
                    .and_then(|s| s.last_two(&past))
                    .map(|(a, b)| (a.0, b.0)),
                want.len()
                    .checked_sub(2)
                    .map(|i| (want[i].0, want[i + 1].0)),
                "the newest two at {cut}"
            );
        }
    }
}
