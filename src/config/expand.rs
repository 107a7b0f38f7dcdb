//! Ranges and host lists as people write them: `Ethernet1/1/1-4`, `ubunturdma[1-8]`, `gpu[01-16]`,
//! `n[1,3,5-7]`, and MPI hostfiles (`host slots=4`, `host:4`, `# comments`).

use std::path::{Path, PathBuf};

/// Largest expansion accepted from one pattern, so a typo cannot allocate millions of names.
pub const MAX_EXPANSION: u64 = 10_000;

/// Expand one pattern into names. Plain names come back unchanged.
pub fn expand(pattern: &str) -> Result<Vec<String>, String> {
    let p = pattern.trim();
    if let Some(open) = p.find('[') {
        let close = p[open..]
            .find(']')
            .map(|c| open + c)
            .ok_or_else(|| format!("\"{p}\": '[' without ']'"))?;
        let (head, body, tail) = (&p[..open], &p[open + 1..close], &p[close + 1..]);
        let mut out = Vec::new();
        for part in body.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let width = if a.starts_with('0') && a.len() > 1 {
                a.len()
            } else {
                0
            };
            let (lo, hi) = (num(a, p)?, num(b, p)?);
            check_range(lo, hi, p)?;
            for i in lo..=hi {
                for rest in expand(tail)? {
                    out.push(format!("{head}{i:0width$}{rest}"));
                }
            }
            if out.len() as u64 > MAX_EXPANSION {
                return Err(format!(
                    "\"{p}\" expands to more than {MAX_EXPANSION} names"
                ));
            }
        }
        return Ok(out);
    }
    // `Ethernet1/1/1-4`: a range on the last number only.
    if let Some((left, hi)) = p.rsplit_once('-') {
        let digits = left.len() - left.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let all_digits = !hi.is_empty() && hi.bytes().all(|b| b.is_ascii_digit());
        if digits > 0 && all_digits && digits < left.len() {
            let (head, lo) = left.split_at(left.len() - digits);
            if head.ends_with(|c: char| c.is_ascii_alphabetic() || c == '/' || c == '.') {
                let (lo, hi) = (num(lo, p)?, num(hi, p)?);
                check_range(lo, hi, p)?;
                return Ok((lo..=hi).map(|i| format!("{head}{i}")).collect());
            }
        }
    }
    Ok(vec![p.to_string()])
}

fn num(s: &str, p: &str) -> Result<u64, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("\"{p}\": \"{s}\" is not a number in a range"))
}

fn check_range(lo: u64, hi: u64, p: &str) -> Result<(), String> {
    if lo > hi {
        return Err(format!("\"{p}\": range {lo}-{hi} runs backwards"));
    }
    if hi - lo >= MAX_EXPANSION {
        return Err(format!(
            "\"{p}\" expands to more than {MAX_EXPANSION} names"
        ));
    }
    Ok(())
}

/// Expand every pattern of a list, in order.
pub fn expand_all(patterns: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for p in patterns {
        out.extend(expand(p)?);
    }
    Ok(out)
}

/// Host names of an MPI hostfile (Open MPI `host slots=N`, MPICH `host:N`), in order, without
/// duplicates (a set, so 80k lines cost 80k lookups, not 80k²); at most [`MAX_EXPANSION`] names,
/// like a range.
pub fn parse_hostfile(text: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let Some(first) = line.split_whitespace().next() else {
            continue;
        };
        let host = first.split(':').next().unwrap_or(first);
        if !host.is_empty() && seen.insert(host) {
            if out.len() as u64 >= MAX_EXPANSION {
                return Err(format!("more than {MAX_EXPANSION} hosts"));
            }
            out.push(host.to_string());
        }
    }
    Ok(out)
}

/// `~/x` → `$HOME/x`.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_table() {
        let cases: &[(&str, &[&str])] = &[
            (
                "Ethernet1/1/1-4",
                &[
                    "Ethernet1/1/1",
                    "Ethernet1/1/2",
                    "Ethernet1/1/3",
                    "Ethernet1/1/4",
                ],
            ),
            ("ii1/1/1-2", &["ii1/1/1", "ii1/1/2"]),
            (
                "ubunturdma[1-3]",
                &["ubunturdma1", "ubunturdma2", "ubunturdma3"],
            ),
            ("gpu[08-10]", &["gpu08", "gpu09", "gpu10"]),
            ("n[1,3,5-6]", &["n1", "n3", "n5", "n6"]),
            ("r[1-2]c[1-2]", &["r1c1", "r1c2", "r2c1", "r2c2"]),
            ("Ethernet1/5", &["Ethernet1/5"]),
            ("host-1", &["host-1"]),
            ("192.0.2.10", &["192.0.2.10"]),
        ];
        for (p, want) in cases {
            assert_eq!(
                expand(p).as_deref(),
                Ok(*want)
                    .map(|w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                    .as_deref(),
                "{p}"
            );
        }
    }

    #[test]
    fn bad_ranges_are_errors() {
        assert!(expand("n[3-1]").is_err());
        assert!(expand("n[1-").is_err());
        assert!(expand("n[a-b]").is_err());
        assert!(expand("n[1-99999999]").is_err());
        assert!(expand("Ethernet1/1/4-1").is_err());
    }

    #[test]
    fn hostfiles_open_mpi_and_mpich() {
        let text = "# cluster\nubunturdma1 slots=4\nubunturdma2:2\n\nubunturdma1 slots=4\nubunturdma3 # spare\n";
        assert_eq!(
            parse_hostfile(text).expect("ok"),
            vec!["ubunturdma1", "ubunturdma2", "ubunturdma3"]
        );
        let big: String = (0..=MAX_EXPANSION)
            .map(|i| format!("h{i} slots=8\n"))
            .collect();
        assert!(
            parse_hostfile(&big)
                .expect_err("an error")
                .contains("more than 10000")
        );
        let dup: String = (0..50_000)
            .map(|i| format!("h{} slots=8\n", i % 100))
            .collect();
        assert_eq!(parse_hostfile(&dup).expect("ok").len(), 100);
    }
}
