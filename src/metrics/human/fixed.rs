//! `format!("{v:.N}")` for the few digits a screen shows, without the formatter's exact decimal
//! expansion of the float: the Overview's and the tables' numbers cost ~1,000-2,000 instructions
//! each through `format!` (~0.06 M a frame at N=8, issue #20). Where the value sits close to a
//! rounding tie (or is too large to tell), the formatter decides, so the text is always the
//! formatter's.

/// `v` with `prec` (at most [`MAX_PREC`]) digits after the point, pushed onto `out`, exactly as
/// `format!("{v:.prec$}")` writes it.
pub fn push_fixed(out: &mut String, v: f64, prec: usize) {
    const SCALE: [f64; MAX_PREC + 1] = [1.0, 10.0, 100.0];
    let p = prec.min(MAX_PREC);
    let x = v.abs() * SCALE[p];
    // `x` is `|v| × 10^p` within half an ulp (below 1e-7 under 1e9): a fraction farther than
    // TIE from one half rounds the same way for the exact value as for `x`.
    const TIE: f64 = 1e-6;
    let fl = x.floor();
    // NaN and infinities go to the formatter too.
    let in_range = x.is_finite() && x < 1e9;
    if prec > MAX_PREC || !in_range || ((x - fl) - 0.5).abs() <= TIE {
        use std::fmt::Write;
        let _ = write!(out, "{v:.prec$}");
        return;
    }
    let n = fl as u64 + u64::from(x - fl > 0.5);
    if v.is_sign_negative() {
        out.push('-');
    }
    let unit = [1u64, 10, 100][p];
    push_u64(out, n / unit);
    if p > 0 {
        out.push('.');
        let frac = n % unit;
        if p == 2 && frac < 10 {
            out.push('0');
        }
        push_u64(out, frac);
    }
}

/// Digits after the point [`push_fixed`] writes itself.
pub const MAX_PREC: usize = 2;

/// [`push_fixed`] into a new string.
pub fn fixed(v: f64, prec: usize) -> String {
    let mut s = String::with_capacity(12);
    push_fixed(&mut s, v, prec);
    s
}

/// `n.to_string()` without the formatter.
pub fn uint(n: u64) -> String {
    let mut s = String::with_capacity(20);
    push_u64(&mut s, n);
    s
}

fn push_u64(out: &mut String, n: u64) {
    out.push_str(digits(n, &mut [0u8; 20]));
}

/// `n` as `{n}` writes it, in `buf` (the alerts' counts join it into their texts).
pub fn digits(mut n: u64, buf: &mut [u8; 20]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&buf[i..]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn theirs(v: f64, p: usize) -> String {
        format!("{v:.p$}")
    }

    /// Ties and near-ties in binary (0.125, 2.675, x.5, x.005), negatives, zero signs, huge,
    /// tiny, non-finite: what the formatter writes.
    #[test]
    fn ties_and_edges_read_as_the_formatter_writes() {
        let vals = [
            0.0,
            -0.0,
            0.125,
            0.375,
            2.675,
            1.005,
            0.5,
            1.5,
            2.5,
            0.05,
            0.15,
            0.25,
            9.995,
            9.9949,
            999.5,
            1000.5,
            12.345,
            -0.001,
            -0.004,
            -0.005,
            -2.5,
            -12.345,
            1e-9,
            4.35e8,
            9.99e8,
            1e9,
            3.2e12,
            1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            123456.789,
            0.995,
            0.994999,
            0.005000001,
        ];
        let mut ours_own = 0;
        for v in vals {
            for p in 0..=3 {
                assert_eq!(fixed(v, p), theirs(v, p), "{v:e} .{p}");
                ours_own += usize::from(p <= MAX_PREC && v.abs() * 100.0 < 1e9);
            }
        }
        assert!(ours_own > 60, "{ours_own}");
    }

    #[test]
    fn integers_read_as_to_string() {
        for n in [0, 7, 10, 99, 100, 12_345, 999_999, 1_000_000, u64::MAX] {
            assert_eq!(uint(n), n.to_string());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Any float of the screen's ranges, and any bit pattern at all.
        #[test]
        fn any_value_reads_as_the_formatter_writes(
            small in -20.0f64..20.0,
            big in -2e6f64..2e6,
            hundredths in -200_000i64..200_000,
            bits in any::<u64>(),
            p in 0usize..=2,
        ) {
            // Decimal values a poll gives (k / 100, k / 1000): ties in decimal, not in binary.
            let dec = [hundredths as f64 / 100.0, hundredths as f64 / 1000.0, hundredths as f64 / 8.0];
            for v in [small, big, f64::from_bits(bits)].into_iter().chain(dec) {
                prop_assert_eq!(fixed(v, p), theirs(v, p), "{:e} .{}", v, p);
            }
        }
    }
}
