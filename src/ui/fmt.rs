//! Number and time formatting shared by the tabs. Missing is "-", never 0.

use crate::metrics::Ts;
use crate::metrics::query::Agg;

/// A compact number: 0.42, 12.3, 950, 12.3k, 4.5M, 1.2G. `None` is "-".
pub fn num(v: Option<f64>) -> String {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return "-".into();
    };
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a < 10.0 {
        format!("{v:.2}")
    } else if a < 1000.0 {
        format!("{v:.0}")
    } else if a < 1e6 {
        format!("{:.1}k", v / 1e3)
    } else if a < 1e9 {
        format!("{:.1}M", v / 1e6)
    } else {
        format!("{:.1}G", v / 1e9)
    }
}

/// An integer count, compact above a million.
pub fn count(v: Option<u64>) -> String {
    match v {
        None => "-".into(),
        Some(n) if n < 1_000_000 => n.to_string(),
        Some(n) => num(Some(n as f64)),
    }
}

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

/// Seconds as µs or ms for RTTs and step times.
pub fn secs(v: Option<f64>) -> String {
    match v.filter(|v| v.is_finite()) {
        None => "-".into(),
        Some(s) if s < 1e-3 => format!("{:.1}us", s * 1e6),
        Some(s) if s < 1.0 => format!("{:.2}ms", s * 1e3),
        Some(s) => format!("{s:.2}s"),
    }
}

pub fn percent(v: Option<f64>) -> String {
    match v.filter(|v| v.is_finite()) {
        None => "-".into(),
        Some(f) => format!("{:.1}%", f * 100.0),
    }
}

/// `HH:MM:SS` (UTC) of a timestamp.
pub fn clock(t: Ts) -> String {
    let s = t.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// An age: "12s", "4m10s", "2h05m".
pub fn age(ms: i64) -> String {
    crate::app::table::age_text(ms)
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
        assert_eq!(secs(Some(45e-6)), "45.0us");
        assert_eq!(clock(1_700_000_000_000), "22:13:20");
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
