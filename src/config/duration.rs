//! Durations as people write them in config: "1s", "500ms", "15m", "2h", "1m30s".

use std::time::Duration;

pub fn parse(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty duration".into());
    }
    let mut total = 0f64;
    let mut rest = t;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| {
                format!("\"{t}\" has a number without a unit (use e.g. \"1s\", \"500ms\", \"2m\")")
            })?;
        let v: f64 = rest[..n].parse().map_err(|_| {
            format!("\"{t}\" is not a duration (use e.g. \"1s\", \"500ms\", \"2m\")")
        })?;
        let after = &rest[n..];
        let u = after
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(after.len());
        let mul = match after[..u].trim() {
            "ms" => 1e-3,
            "s" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "us" | "µs" => 1e-6,
            _ => {
                return Err(format!(
                    "\"{t}\" is not a duration (use e.g. \"1s\", \"500ms\", \"2m\")"
                ));
            }
        };
        total += v * mul;
        rest = &after[u..];
    }
    if !total.is_finite() || total > 1e9 {
        return Err(format!("\"{t}\" is too long"));
    }
    Ok(Duration::from_secs_f64(total))
}

/// The shortest form that reads back the same: 1500 ms → "1.5s".
pub fn format(d: Duration) -> String {
    let ms = d.as_millis();
    if ms % 60_000 == 0 && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else if ms >= 1000 {
        format!("{}s", d.as_secs_f64())
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_table() {
        let ok: &[(&str, u64)] = &[
            ("1s", 1000),
            ("500ms", 500),
            ("15m", 900_000),
            ("2h", 7_200_000),
            ("1m30s", 90_000),
            ("0.5s", 500),
        ];
        for (s, ms) in ok {
            assert_eq!(parse(s).map(|d| d.as_millis() as u64), Ok(*ms), "{s}");
        }
        for bad in ["one second", "", "5", "5 parsecs", "s"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(format(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format(Duration::from_secs(900)), "15m");
    }
}
