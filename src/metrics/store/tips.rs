//! The newest intervals of a fixed list of counters, told from their last few points as seen
//! frame after frame, without bringing a [`Windows`] entry up to date.
//!
//! The Overview timeline recomputes only its newest second or two each frame (`app/vm/timeline`),
//! so of every series it reads only the intervals ending there: one new point a poll. Reading
//! them through [`Windows::rates_each`] synced the series' kept intervals every frame (trim,
//! runs of old ones, the newest pushed: ~350 instructions a series, ~260 series at N=8, issue
//! #20). Here a frame reads the two newest points it reads anyway and, when exactly the points
//! it remembers plus at most one new one are there, hands the same intervals. Anything else (a
//! first frame, a late one, a value replaced, a window reaching further back) is answered by the
//! [`Windows`] as before, and remembered for the next frame.

use super::{Kind, SeriesId, Store, Ts, Windows};
use crate::metrics::rate::Rate;

/// Per series of one list (by its index in the list), its [`KEPT`] newest points (time, raw
/// value), oldest first, as of the last frame: the older ones unknown after a frame answered
/// otherwise, known again as points arrive.
#[derive(Debug, Default)]
pub struct Tips(Vec<[Option<(Ts, u64)>; KEPT]>);

/// Points remembered a series: the timeline recomputes from the newest poll of the sources
/// that polled once since the last frame, so the intervals it asks end within a poll or two.
const KEPT: usize = 4;

impl Tips {
    /// [`Windows::rates_each`] of `id`, the series at index `slot` of the list these tips are
    /// for: the rates of its intervals ending at or after `since`, oldest first, to `f`. Whether
    /// the tips told them (else `w` did).
    pub fn rates_each(
        &mut self,
        w: &mut Windows,
        st: &Store,
        slot: usize,
        id: SeriesId,
        since: Ts,
        mut f: impl FnMut(Ts, Rate),
    ) -> bool {
        if self.0.len() <= slot {
            self.0.resize(slot + 1, [None; KEPT]);
        }
        let Some(s) = st.get(id) else { return true };
        let Kind::Counter(width) = s.kind() else {
            return true;
        };
        let two = s
            .two(st)
            .map(|((a, ta), (b, tb))| [(ta, a.raw), (tb, b.raw)]);
        let known = &mut self.0[slot];
        let [.., y, z] = *known;
        match two {
            // Nothing arrived since.
            Some(now) if [y, z] == now.map(Some) => {}
            // One point: the newest of the last frame is the one before the newest now.
            Some([x, new]) if z == Some(x) => {
                // Not `rotate_left`: ~90 instructions for these few.
                known.copy_within(1.., 0);
                known[KEPT - 1] = Some(new);
            }
            // More, none, or a value replaced at its time: only the two newest are known.
            _ => {
                *known = [None; KEPT];
                known[KEPT - 2] = two.map(|t| t[0]);
                known[KEPT - 1] = two.map(|t| t[1]);
            }
        }
        // Every interval ending at or after `since` must be between two known points: the one
        // ending at the oldest known point is not.
        let oldest = known.iter().flatten().next();
        if oldest.is_none_or(|&(t, _)| t >= since) {
            w.rates_each(st, id, since, f);
            return false;
        }
        for pair in known.windows(2) {
            let (Some((ta, araw)), Some((tb, braw))) = (pair[0], pair[1]) else {
                continue;
            };
            if tb < since {
                continue;
            }
            f(tb, st.interval_rate(s, width, (ta, araw), (tb, braw)));
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    /// Frame after frame, the tips hand exactly what the kept windows hand, for windows starting
    /// from before the oldest point to past the newest: through one point a frame, two (a late
    /// frame), none, a value replaced at its timestamp, a reset, a failed poll, a 32-bit wrap, a
    /// counter in microseconds, a quiet run and a series that starts late.
    #[test]
    fn tips_hand_what_the_windows_hand() {
        let mut st = Store::new(600_000, 1000);
        let src = st.add_source("n1", 1000);
        let names = [
            "a_total",
            "r_total",
            "w32",
            "us_total",
            "q_total",
            "late_total",
        ];
        let mut tips = Tips::default();
        let mut checked = 0;
        let mut fast = 0;
        let mut t = 0i64;
        for frame in 0..40i64 {
            // Points since the last frame: usually one, sometimes none or two.
            let polls = match frame % 9 {
                4 => 0,
                7 => 2,
                _ => 1,
            };
            for _ in 0..polls {
                t += 1000;
                let k = t / 1000;
                if k == 17 {
                    st.fail(src, t, "timeout");
                    continue;
                }
                let mut s = vec![
                    Sample::counter("a_total", &[], (k * k) as u64),
                    Sample::counter("r_total", &[], if k == 22 { 3 } else { (k * 50) as u64 }),
                    Sample::counter32(
                        "w32",
                        &[],
                        (u32::MAX as u64 - 5000 + k as u64 * 900) % (1 << 32),
                    ),
                    Sample::counter_micros("us_total", &[], (k * 2500) as u64),
                    Sample::counter("q_total", &[], 7),
                ];
                if k > 12 {
                    s.push(Sample::counter("late_total", &[], (k * 3) as u64));
                }
                st.ingest(src, t, &Parsed::from(s));
            }
            if frame == 30 {
                // The newest point's value replaced at its own timestamp.
                let s = vec![Sample::counter(
                    "a_total",
                    &[],
                    (t / 1000 * t / 1000 + 1) as u64,
                )];
                st.ingest(src, t, &Parsed::from(s));
            }
            for since in [0, t - 4500, t - 3000, t - 1500, t - 1000, t - 999, t, t + 1] {
                for (slot, name) in names.iter().enumerate() {
                    let Some((id, _)) = st.select(name, &[]).next() else {
                        continue;
                    };
                    let mut got = Vec::new();
                    let told =
                        tips.rates_each(&mut Windows::default(), &st, slot, id, since, |t, r| {
                            got.push((t, r))
                        });
                    let mut want = Vec::new();
                    Windows::default().rates_each(&st, id, since, |t, r| want.push((t, r)));
                    assert_eq!(got, want, "{name} frame {frame} since {since}");
                    checked += 1;
                    fast += usize::from(told);
                }
            }
        }
        assert!(checked > 1000, "{checked}");
        // Most answers came from the tips, not the windows.
        assert!(fast * 2 > checked, "{fast} of {checked}");
    }
}
