//! Sparklines as text, one column per bucket, with an ASCII fallback (config `ui.ascii`, automatic on
//! TERM=linux/vt100). A bucket without data is a blank (a gap stays a gap). Rates are drawn from
//! zero (zero means quiet); gauges (loss, step time, RTT) over the window's own min..max, with
//! that range printed beside them, so 1.21 → 1.12 is a visible fall, not a row of full blocks.

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const ASCII: [char; 8] = ['_', '.', ',', ':', '-', '=', '+', '#'];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// 0..max: the lowest bar is zero.
    Zero,
    /// min..max of the window.
    MinMax,
}

/// The range the newest `width` buckets are drawn over.
pub fn range(values: &[Option<f64>], width: usize, scale: Scale) -> Option<(f64, f64)> {
    let from = values.len().saturating_sub(width);
    let vals = values.get(from..).unwrap_or(&[]);
    let finite = vals.iter().flatten().copied().filter(|v| v.is_finite());
    let (lo, hi) = finite.fold(None, |acc: Option<(f64, f64)>, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })?;
    Some(match scale {
        Scale::Zero => (0.0_f64.min(lo), hi),
        Scale::MinMax => (lo, hi),
    })
}

/// The newest `width` buckets of `values` scaled to their own maximum (from zero).
pub fn line(values: &[Option<f64>], width: usize, ascii: bool) -> String {
    scaled(values, width, ascii, Scale::Zero)
}

/// The newest `width` buckets of `values`, scaled as `scale` says.
pub fn scaled(values: &[Option<f64>], width: usize, ascii: bool, scale: Scale) -> String {
    let set = if ascii { &ASCII } else { &BLOCKS };
    let from = values.len().saturating_sub(width);
    let vals = values.get(from..).unwrap_or(&[]);
    let (lo, hi) = range(values, width, scale).unwrap_or((0.0, 0.0));
    let top = (set.len() - 1) as f64;
    let mut s: String = " ".repeat(width.saturating_sub(vals.len()));
    for v in vals {
        s.push(match v.filter(|v| v.is_finite()) {
            None => ' ',
            // A flat gauge: a middle bar (its value is printed beside it).
            Some(_) if scale == Scale::MinMax && hi <= lo => set[3],
            Some(v) if hi <= lo || v <= lo => set[0],
            Some(v) => {
                let i = ((v - lo) / (hi - lo) * top).round() as usize;
                set[i.min(set.len() - 1)]
            }
        });
    }
    s
}

/// Newest and largest values of a timeline, for the label beside a sparkline.
pub fn last_and_max(values: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    let last = values.iter().rev().flatten().next().copied();
    let max = values.iter().flatten().copied().reduce(f64::max);
    (last, max)
}

/// Columns [`range_cell`] takes.
pub const RANGE_W: usize = 16;

/// " 1.12..1.21" right-aligned in [`RANGE_W`] columns: the range a sparkline is drawn over, each
/// end written by `show`, the formatter of the line's own quantity (so a step time in seconds
/// reads `157..364 ms`, never `0.16..0.36`). A unit both ends share is written once.
pub fn range_cell(r: Option<(f64, f64)>, show: fn(Option<f64>) -> String) -> String {
    let t = match r {
        Some((lo, hi)) => {
            let (lo, hi) = (show(Some(lo)), show(Some(hi)));
            // "157..364 ms", not "157 ms..364 ms".
            let lo = match (lo.rsplit_once(' '), hi.rsplit_once(' ')) {
                (Some((l, lu)), Some((_, hu))) if lu == hu => l,
                _ => &lo,
            };
            format!("{lo}..{hi}")
        }
        None => "-".to_string(),
    };
    format!(" {t:>w$}", w = RANGE_W - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_stay_blank_and_zero_is_lowest() {
        let v = [Some(0.0), None, Some(5.0), Some(10.0)];
        assert_eq!(line(&v, 4, false), "▁ ▅█");
        assert_eq!(line(&v, 4, true), "_ -#");
        assert_eq!(
            line(&v, 6, true),
            "  _ -#",
            "padded on the left: newest at the right edge"
        );
        assert_eq!(line(&v, 2, true), "-#", "only the newest fit");
        assert_eq!(line(&[], 3, true), "   ");
        assert_eq!(line(&[Some(f64::INFINITY)], 1, true), " ");
        assert_eq!(last_and_max(&v), (Some(10.0), Some(10.0)));
        assert_eq!(last_and_max(&[None]), (None, None));
    }

    #[test]
    fn a_gauge_is_drawn_over_its_own_range() {
        // A loss falling from 1.21 to 1.12: from zero it is all top bars.
        let loss = [Some(1.21), Some(1.18), Some(1.15), Some(1.12)];
        assert_eq!(
            line(&loss, 4, false),
            "███▇",
            "from zero a fall of 7 % hardly shows"
        );
        assert_eq!(scaled(&loss, 4, false, Scale::MinMax), "█▆▃▁");
        assert_eq!(range(&loss, 4, Scale::MinMax), Some((1.12, 1.21)));
        assert_eq!(range(&loss, 4, Scale::Zero), Some((0.0, 1.21)));
        assert_eq!(range(&loss, 1, Scale::MinMax), Some((1.12, 1.12)));
        assert_eq!(
            scaled(&[Some(2.0), None, Some(2.0)], 3, true, Scale::MinMax),
            ": :"
        );
        assert_eq!(range(&[None], 1, Scale::MinMax), None);
    }

    #[test]
    fn the_range_is_written_in_the_lines_own_unit() {
        use crate::metrics::human;
        // Found under tmux: a step time of 157 ms had "0.16..0.16" beside it, an RTT p99 of
        // 86 µs "0.00..0.00", a pause share of 0.20 % "0..0.00".
        let cell = |r, f| range_cell(Some(r), f).trim().to_string();
        assert_eq!(cell((0.157, 0.364), human::duration), "157..364 ms");
        assert_eq!(cell((14.3e-6, 86.1e-6), human::duration), "14.3..86.1 µs");
        assert_eq!(cell((0.0, 0.002), human::percent), "0%..0.20%");
        assert_eq!(cell((0.9e-3, 0.25), human::duration), "900 µs..250 ms");
        assert_eq!(cell((0.0, 84.0), human::num), "0..84");
        assert_eq!(range_cell(None, human::num).trim(), "-");
        assert_eq!(range_cell(None, human::num).chars().count(), RANGE_W);
    }
}
