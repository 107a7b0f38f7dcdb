//! User formats: a named regex from the config whose named groups say what each number is.

use super::TrainRecord;
use regex::Regex;

/// A custom training-log format: a regex with named groups `iteration`, `epoch`, `loss`, `step_ms`,
/// `step_s`, `allreduce_ms`, `allreduce_s`, `samples_per_second`, `rank` (any subset, at least one).
/// Custom formats are tried before the built-in ones; every match in a line is a record.
#[derive(Clone, Debug)]
pub struct CustomFormat {
    pub name: String,
    pub regex: Regex,
}

impl CustomFormat {
    /// The named groups a pattern may use.
    pub const GROUPS: [&'static str; 9] = [
        "iteration",
        "epoch",
        "loss",
        "step_ms",
        "step_s",
        "allreduce_ms",
        "allreduce_s",
        "samples_per_second",
        "rank",
    ];

    /// Compile `pattern`; refuse it when it does not compile or names none of [`Self::GROUPS`]
    /// (it could never produce a number).
    pub fn new(name: &str, pattern: &str) -> Result<Self, String> {
        let regex = Regex::new(pattern).map_err(|e| format!("log format {name:?}: {e}"))?;
        let known = regex
            .capture_names()
            .flatten()
            .any(|n| Self::GROUPS.contains(&n));
        if !known {
            return Err(format!(
                "log format {name:?}: the pattern has none of the named groups {}",
                Self::GROUPS.map(|g| format!("(?P<{g}>...)")).join(", ")
            ));
        }
        Ok(Self {
            name: name.to_string(),
            regex,
        })
    }

    /// The records of every match in `text`; `rank` fills the rank when the pattern has none.
    fn records(&self, text: &str, rank: Option<u32>) -> Vec<TrainRecord> {
        let mut out = Vec::new();
        for caps in self.regex.captures_iter(text) {
            let num = |g: &str| -> Option<f64> {
                let v: f64 = caps
                    .name(g)?
                    .as_str()
                    .trim()
                    .replace(',', "")
                    .parse()
                    .ok()?;
                v.is_finite().then_some(v)
            };
            let secs = |s: &str, ms: &str| -> Option<f64> {
                num(s)
                    .or_else(|| num(ms).map(|v| v / 1e3))
                    .filter(|v| *v >= 0.0)
            };
            let whole = |g: &str| num(g).filter(|v| *v >= 0.0 && v.fract() == 0.0 && *v < 9.0e15);
            let rec = TrainRecord {
                iteration: whole("iteration").map(|v| v as u64),
                epoch: num("epoch"),
                loss: num("loss"),
                step_seconds: secs("step_s", "step_ms"),
                allreduce_seconds: secs("allreduce_s", "allreduce_ms"),
                samples_per_second: num("samples_per_second").filter(|v| *v >= 0.0),
                rank: whole("rank")
                    .and_then(|v| u32::try_from(v as u64).ok())
                    .or(rank),
            };
            if rec.has_progress() || rec.iteration.is_some() {
                out.push(rec);
            }
        }
        out
    }
}

/// The first custom format that reads a record from the line (with its prefix, then without).
pub(super) fn records(
    formats: &[CustomFormat],
    raw: &str,
    body: &str,
    rank: Option<u32>,
) -> Vec<TrainRecord> {
    for f in formats {
        let mut recs = f.records(raw, rank);
        if recs.is_empty() && body.len() != raw.len() {
            recs = f.records(body, rank);
        }
        if !recs.is_empty() {
            return recs;
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_patterns_without_known_groups() {
        assert!(CustomFormat::new("x", r"loss (\d+)").is_err());
        assert!(CustomFormat::new("x", r"(?P<los>\d+)").is_err());
        assert!(CustomFormat::new("x", r"(?P<loss>\d+").is_err());
        assert!(CustomFormat::new("x", r"L=(?P<loss>[\d.]+)").is_ok());
    }

    #[test]
    fn reads_every_match_with_units() {
        let f = CustomFormat::new(
            "mine",
            r"#(?P<iteration>\d+) L=(?P<loss>[\d.eE+-]+) T=(?P<step_ms>[\d.,]+)",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let recs = f.records("#7 L=1.5e-1 T=250 #8 L=0.1 T=1,000", Some(2));
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].iteration, Some(7));
        assert_eq!(recs[0].loss, Some(0.15));
        assert_eq!(recs[0].step_seconds, Some(0.25));
        assert_eq!(recs[0].rank, Some(2));
        assert_eq!(recs[1].step_seconds, Some(1.0));
    }
}
