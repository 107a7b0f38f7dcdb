//! Every number a person reads — the tabs, alerts, the Overview timeline, `snapshot --format
//! table`, the incident bundle's alert lines — is written by these functions, so one quantity always
//! reads the same way: a rate `203.4k/s`, a time `5.90 ms` / `21.0 µs` / `1.25 s`, a share of time
//! `12.3%`. Values come in the metric's own unit (seconds, events per second, fractions 0..1);
//! missing is `-`, never 0. Display names of counters live here too, one per counter.

/// Counter display names: one per counter, everywhere (column titles, timeline, charts, tables).
pub mod name {
    pub const ECN_MARKED: &str = "ECN marked/s";
    pub const CNP_SENT: &str = "CNP sent/s";
    pub const CNP_HANDLED: &str = "CNP handled/s";
    pub const CNP_IGNORED: &str = "CNP ignored/s";
    pub const NIC_PAUSE_RX: &str = "pause rx/s";
    pub const NIC_PAUSE_TX: &str = "pause tx/s";
    /// Share of the interval a NIC priority was paused (worst priority/netdev).
    pub const PAUSE_TIME: &str = "pause%";
    pub const PFC_RX: &str = "PFC rx/s";
    pub const PFC_TX: &str = "PFC tx/s";
    pub const PFC: &str = "PFC/s";
    pub const STEP: &str = "step";
    pub const ALLREDUCE: &str = "all-reduce";
    pub const DROPS: &str = "drops/s";
    /// The least busy GPU's utilization (the timeline line).
    pub const GPU_UTIL_MIN: &str = "GPU util (min)";
    /// A node's GPUs' mean and least utilization (the Overview columns).
    pub const GPU_UTIL: &str = "GPU%";
    pub const GPU_UTIL_LEAST: &str = "GPU min";
}

/// `HH:MM:SS` (UTC) of a timestamp (milliseconds): the one clock of the screen, the alerts and
/// the episode lines.
pub fn clock(t: crate::metrics::Ts) -> String {
    let s = t.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

/// A compact number: 0, 0.40, 9.00, 12, 950, 12.3k, 203.4k, 4.5M, 1.2G.
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
    } else {
        let (d, unit) = match a {
            a if a < 1e6 => (1e3, 'k'),
            a if a < 1e9 => (1e6, 'M'),
            _ => (1e9, 'G'),
        };
        format!("{:.1}{unit}", v / d)
    }
}

/// A rate with its unit, where no column title carries the `/s`: `203.4k/s`.
pub fn per_sec(v: Option<f64>) -> String {
    match v.filter(|v| v.is_finite()) {
        None => "-".into(),
        some => format!("{}/s", num(some)),
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

/// Three significant digits: 5.90, 21.0, 160.
fn sig3(x: f64) -> String {
    let prec = match x.abs() {
        a if a < 10.0 => 2,
        a if a < 100.0 => 1,
        _ => 0,
    };
    format!("{x:.prec$}")
}

/// A time in seconds (RTT, step, all-reduce), in the unit that keeps it readable: below 1 ms in
/// µs, below 1 s in ms, else s; three significant digits. `21.0 µs`, `5.90 ms`, `160 ms`, `1.25 s`.
pub fn duration(secs: Option<f64>) -> String {
    match secs.filter(|v| v.is_finite()) {
        None => "-".into(),
        Some(0.0) => "0 s".into(),
        Some(s) if s.abs() < 1e-3 => format!("{} µs", sig3(s * 1e6)),
        Some(s) if s.abs() < 1.0 => format!("{} ms", sig3(s * 1e3)),
        Some(s) => format!("{} s", sig3(s)),
    }
}

/// A fraction 0..1 as a percentage: `0%`, `0.07%`, `12.3%`.
pub fn percent(frac: Option<f64>) -> String {
    match frac.filter(|v| v.is_finite()) {
        None => "-".into(),
        Some(0.0) => "0%".into(),
        Some(f) => {
            let pct = f * 100.0;
            let prec = if pct.abs() < 1.0 { 2 } else { 1 };
            format!("{pct:.prec$}%")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_per_quantity() {
        assert_eq!(num(None), "-");
        assert_eq!(num(Some(f64::NAN)), "-");
        assert_eq!(num(Some(0.4)), "0.40");
        assert_eq!(num(Some(203_412.0)), "203.4k");
        assert_eq!(per_sec(Some(203_412.0)), "203.4k/s");
        assert_eq!(per_sec(Some(34_083.0)), "34.1k/s");
        assert_eq!(per_sec(None), "-");
        assert_eq!(duration(Some(5.902e-3)), "5.90 ms");
        assert_eq!(duration(Some(21e-6)), "21.0 µs");
        assert_eq!(duration(Some(0.1595)), "160 ms");
        assert_eq!(duration(Some(1.25)), "1.25 s");
        assert_eq!(duration(None), "-");
        assert_eq!(percent(Some(0.00074)), "0.07%");
        assert_eq!(percent(Some(0.123)), "12.3%");
        assert_eq!(percent(Some(0.0)), "0%");
        assert_eq!(count(Some(12)), "12");
        assert_eq!(count(Some(4_500_000)), "4.5M");
    }
}
