//! Number and time formatting shared by the tabs. Missing is "-", never 0.

use crate::metrics::query::Agg;

// Numbers follow the one rule of `metrics::human` (shared with alerts, snapshot and bundle).
pub use crate::metrics::human::{clock, count, duration as secs, num, percent};

/// A rate from an aggregate, with the reset mark when a counter of the group reset.
pub fn rate(a: Option<&Agg>, ascii: bool) -> String {
    let mark = if ascii { "R" } else { "↺" };
    match a {
        None => "-".into(),
        Some(Agg {
            rate: None,
            reset: true,
        }) => format!("{mark}reset"),
        Some(Agg { rate, reset: false }) => num(*rate),
        Some(Agg { rate, reset: true }) => format!("{}{mark}", num(*rate)),
    }
}

/// Sparse counters: the rate and how many happened in the last minute ("0.40 (23)").
pub fn sparse(a: Option<&Agg>, last_min: Option<u64>, ascii: bool) -> String {
    let r = rate(a, ascii);
    match last_min {
        Some(n) if r != "-" => format!("{r} ({})", count(Some(n))),
        _ => r,
    }
}

/// An age: "12s", "4m10s", "2h05m".
pub fn age(ms: i64) -> String {
    crate::app::source::age_text(ms)
}

pub use crate::app::table::{natural_cmp, short_names};

/// Cut a string to at most `w` characters.
pub fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        return s.to_string();
    }
    let mut out: String = s.chars().take(w.saturating_sub(1)).collect();
    if w > 0 {
        out.push('~');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_is_a_dash_and_numbers_are_compact() {
        assert_eq!(num(None), "-");
        assert_eq!(num(Some(f64::NAN)), "-");
        assert_eq!(num(Some(0.0)), "0");
        assert_eq!(num(Some(0.4)), "0.40");
        assert_eq!(num(Some(950.2)), "950");
        assert_eq!(num(Some(12_345.0)), "12.3k");
        assert_eq!(num(Some(4.5e9)), "4.5G");
        assert_eq!(
            rate(
                Some(&Agg {
                    rate: None,
                    reset: true
                }),
                true
            ),
            "Rreset"
        );
        assert_eq!(
            sparse(
                Some(&Agg {
                    rate: Some(0.4),
                    reset: false
                }),
                Some(23),
                false
            ),
            "0.40 (23)"
        );
        assert_eq!(sparse(None, Some(23), false), "-");
        assert_eq!(secs(Some(45e-6)), "45.0 µs");
        assert_eq!(clock(1_700_000_000_000), "22:13:20");
        assert_eq!(clock(-1), "23:59:59");
        assert_eq!(clock(3_723_000), "01:02:03");
        assert_eq!(age(250_000), "4m10s");
    }

    #[test]
    fn names_are_shortened_and_sorted_naturally() {
        assert_eq!(
            short_names(&["ubunturdma5", "ubunturdma7", "ubunturdma8"]),
            "ubunturdma5,7,8"
        );
        assert_eq!(short_names(&["ubunturdma6"]), "ubunturdma6");
        assert_eq!(short_names(&["a1", "b2"]), "a1,b2");
        assert_eq!(short_names(&[]), "-");
        let mut v = vec!["n10", "n2", "n1"];
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["n1", "n2", "n10"]);
        assert_eq!(fit("abcdef", 4), "abc~");
        assert_eq!(fit("ab", 4), "ab");
    }
}
