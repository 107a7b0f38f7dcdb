//! Sparklines as text, one column per bucket, with an ASCII fallback (config `ui.ascii`, automatic on
//! TERM=linux/vt100). A bucket without data is a blank (a gap stays a gap); zero is the lowest bar.

const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const ASCII: [char; 8] = ['_', '.', ',', ':', '-', '=', '+', '#'];

/// The newest `width` buckets of `values` scaled to their own maximum.
pub fn line(values: &[Option<f64>], width: usize, ascii: bool) -> String {
    let set = if ascii { &ASCII } else { &BLOCKS };
    let from = values.len().saturating_sub(width);
    let vals = values.get(from..).unwrap_or(&[]);
    let max = vals
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(0.0_f64, f64::max);
    let mut s: String = " ".repeat(width.saturating_sub(vals.len()));
    for v in vals {
        s.push(match v.filter(|v| v.is_finite()) {
            None => ' ',
            Some(v) if max <= 0.0 || v <= 0.0 => set[0],
            Some(v) => {
                let i = ((v / max) * (set.len() - 1) as f64).round() as usize;
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
}
