//! From text to a checked [`Config`]: every problem collected with its key path and bad value
//! (never a secret's value), names that reach a remote command line checked against strict patterns.

use super::raw::*;
use super::{
    Alerts, Config, HostKeyPolicy, Log, Node, Ping, Poll, Roce, Secret, Ssh, Switch, SwitchOs,
    SwitchTransport, Ui, duration, expand,
};
use crate::parse::switch::normalize_port;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod hosts;
mod keys;
mod prometheus;
mod sources;
mod switch_port;
use hosts::{build_nodes, build_ssh, build_switch, required};
use keys::*;
use sources::{build_log, build_ping};

/// A name that may appear in a remote command line: device, netdev, port, node, user.
pub fn is_safe_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '@'))
}

/// A path that may appear in a remote command line (it is quoted too, but we refuse odd ones).
pub fn is_safe_path(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 4096
        && !s.starts_with('-')
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '_' | '-' | '.' | '/' | '~' | '+' | '@' | ',' | '=')
        })
}

fn is_host(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | ':' | '[' | ']'))
}

struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, path: &str, msg: impl AsRef<str>) {
        self.0.push(format!("{path}: {}", msg.as_ref()));
    }

    fn extras(&mut self, path: &str, extra: &Extra, known: &[&str]) {
        for k in extra.keys() {
            let lk = k.to_ascii_lowercase();
            if lk.contains("pass") || lk.contains("secret") || lk.contains("token") {
                self.add(
                    &format!("{path}.{k}"),
                    "a password must never be written in the config file (it is not printed here); \
                     use password_env = \"VAR\" or password_command = \"pass show ...\", or an SSH key",
                );
                continue;
            }
            let hint = closest(k, known)
                .map(|c| format!(" (did you mean {c}?)"))
                .unwrap_or_default();
            self.add(
                &format!("{path}.{k}"),
                format!(
                    "unknown key \"{k}\"{hint}; known keys: {}",
                    known.join(", ")
                ),
            );
        }
    }

    fn duration(&mut self, path: &str, v: &Option<String>, default: Duration) -> Duration {
        match v {
            None => default,
            Some(s) => duration::parse(s).unwrap_or_else(|e| {
                self.add(path, e);
                default
            }),
        }
    }
}

/// The known key nearest to a misspelt one (edit distance ≤ 2).
fn closest<'a>(k: &str, known: &[&'a str]) -> Option<&'a str> {
    fn dist(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut prev = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let cur = row[j + 1];
                row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
                prev = cur;
            }
        }
        row[b.len()]
    }
    known
        .iter()
        .map(|c| (dist(k, c), *c))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, c)| c)
}

fn section<T: DeserializeOwned + Default>(
    p: &mut Problems,
    path: &str,
    v: Option<&toml::Value>,
) -> T {
    try_section(p, path, v).unwrap_or_default()
}

/// `None` when the section does not deserialize (the problem is recorded once, not followed by
/// "missing" complaints about the keys it did have).
fn try_section<T: DeserializeOwned + Default>(
    p: &mut Problems,
    path: &str,
    v: Option<&toml::Value>,
) -> Option<T> {
    match v {
        None => Some(T::default()),
        Some(v) => match v.clone().try_into() {
            Ok(t) => Some(t),
            Err(e) => {
                let e: toml::de::Error = e;
                p.add(path, e.message().trim());
                None
            }
        },
    }
}

/// The entries of an array of tables, each with its index in the file (for key paths).
fn array<T: DeserializeOwned + Default>(
    p: &mut Problems,
    key: &str,
    v: Option<&toml::Value>,
) -> Vec<(usize, T)> {
    match v {
        None => Vec::new(),
        Some(toml::Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter_map(|(i, it)| try_section(p, &format!("{key}[{i}]"), Some(it)).map(|t| (i, t)))
            .collect(),
        Some(other) => {
            p.add(
                key,
                format!("expected [[{key}]] tables, found {}", other.type_str()),
            );
            Vec::new()
        }
    }
}

fn path_of(s: &str, base: Option<&Path>) -> PathBuf {
    let expanded = super::expand::expand_home(s);
    match base {
        Some(b) if expanded.is_relative() => b.join(expanded),
        _ => expanded,
    }
}

pub(super) fn build(text: &str, base: Option<&Path>) -> Result<Config, Vec<String>> {
    let table: toml::Table =
        toml::from_str(text).map_err(|e| vec![e.to_string().trim().to_string()])?;
    let mut p = Problems(Vec::new());
    for k in table.keys() {
        if !TOP.contains(&k.as_str()) {
            let hint = closest(k, TOP)
                .map(|c| format!(" (did you mean {c}?)"))
                .unwrap_or_default();
            p.add(
                k,
                format!(
                    "unknown key \"{k}\"{hint}; known top-level keys: {}",
                    TOP.join(", ")
                ),
            );
        }
    }
    let demo = match table.get("demo") {
        None => false,
        Some(toml::Value::Boolean(b)) => *b,
        Some(v) => {
            p.add("demo", format!("expected true or false, found {v}"));
            false
        }
    };

    let raw_ssh: RawSsh = section(&mut p, "ssh", table.get("ssh"));
    p.extras("ssh", &raw_ssh.extra, SSH);
    let ssh = build_ssh(&mut p, raw_ssh, base);

    let raw_poll: RawPoll = section(&mut p, "poll", table.get("poll"));
    p.extras("poll", &raw_poll.extra, POLL);
    let interval = p.duration("poll.interval", &raw_poll.interval, Duration::from_secs(1));
    if interval < Duration::from_millis(100) {
        p.add(
            "poll.interval",
            format!(
                "\"{}\" is below the 100ms minimum",
                duration::format(interval)
            ),
        );
    }
    let mode = match raw_poll.mode.as_deref() {
        Some("exec") => super::PollMode::Exec,
        None | Some("stream") => super::PollMode::Stream,
        Some(other) => {
            p.add(
                "poll.mode",
                format!("expected \"stream\" or \"exec\", found \"{other}\""),
            );
            super::PollMode::Stream
        }
    };
    let poll = Poll {
        mode,
        interval,
        retention: p.duration(
            "poll.retention",
            &raw_poll.retention,
            Duration::from_secs(900),
        ),
        switch_interval: p.duration("poll.switch_interval", &raw_poll.switch_interval, interval),
        ping_interval: p.duration("poll.ping_interval", &raw_poll.ping_interval, interval),
        topology_interval: topology_interval(&mut p, &raw_poll.topology_interval),
        nic_counters: raw_poll
            .nic_counters
            .unwrap_or_else(|| vec!["default".to_string()])
            .iter()
            .flat_map(|pat| match pat.as_str() {
                "default" => super::DEFAULT_NIC_COUNTERS
                    .iter()
                    .map(|s| (*s).to_string())
                    .collect(),
                _ => vec![pat.clone()],
            })
            .collect(),
        max_answer_bytes: answer_cap(&mut p, raw_poll.max_answer_bytes),
    };

    let raw_sim: RawSimulation = section(&mut p, "simulation", table.get("simulation"));
    p.extras("simulation", &raw_sim.extra, SIM);

    let switches: Vec<Switch> = array::<RawSwitch>(&mut p, "switch", table.get("switch"))
        .into_iter()
        .filter_map(|(i, r)| build_switch(&mut p, &format!("switch[{i}]"), r, base))
        .collect();
    let raw_links: Vec<(usize, RawLink)> = array::<RawLink>(&mut p, "link", table.get("link"));
    for (i, r) in &raw_links {
        p.extras(&format!("link[{i}]"), &r.extra, LINK);
    }
    let links = switch_port::links(&mut p, &switches, &raw_links);
    let mut nodes: Vec<Node> = Vec::new();
    for (i, r) in array::<RawNode>(&mut p, "node", table.get("node")) {
        nodes.extend(build_nodes(
            &mut p,
            &format!("node[{i}]"),
            r,
            base,
            &switches,
        ));
    }
    let logs: Vec<Log> = array::<RawLog>(&mut p, "log", table.get("log"))
        .into_iter()
        .filter_map(|(i, r)| build_log(&mut p, &format!("log[{i}]"), r))
        .collect();
    let pings: Vec<Ping> = array::<RawPing>(&mut p, "ping", table.get("ping"))
        .into_iter()
        .filter_map(|(i, r)| build_ping(&mut p, &format!("ping[{i}]"), r))
        .collect();

    let raw_ui: RawUi = section(&mut p, "ui", table.get("ui"));
    p.extras("ui", &raw_ui.extra, UI);
    let ui = Ui {
        theme: raw_ui.theme.unwrap_or_else(|| "dark".into()),
        mouse: raw_ui.mouse.unwrap_or(false),
        ascii: raw_ui.ascii,
        max_fps: raw_ui.max_fps.unwrap_or(10).clamp(1, 30),
    };
    let raw_alerts: RawAlerts = section(&mut p, "alerts", table.get("alerts"));
    p.extras("alerts", &raw_alerts.extra, ALERTS);
    let alerts = Alerts {
        pause_time_percent: raw_alerts.pause_time_percent.unwrap_or(10.0),
        port_pfc_per_second: raw_alerts.port_pfc_per_second.unwrap_or(1000.0),
        rtt_p99_over_p50: raw_alerts.rtt_p99_over_p50.unwrap_or(3.0),
        flowcontrol: raw_alerts.flowcontrol,
        episode_step_ratio: raw_alerts.episode_step_ratio.unwrap_or(1.25),
        episode_rate_ratio: raw_alerts.episode_rate_ratio.unwrap_or(4.0),
        episode_rtt_ratio: raw_alerts.episode_rtt_ratio.unwrap_or(2.0),
        episode_settle_ms: (raw_alerts.episode_settle_seconds.unwrap_or(10.0) * 1000.0) as i64,
    };
    for (k, v) in [
        ("episode_step_ratio", alerts.episode_step_ratio),
        ("episode_rate_ratio", alerts.episode_rate_ratio),
        ("episode_rtt_ratio", alerts.episode_rtt_ratio),
    ] {
        if !(v > 1.0 && v.is_finite()) {
            p.add(
                &format!("alerts.{k}"),
                format!("{v} must be a number above 1"),
            );
        }
    }
    if alerts.episode_settle_ms < 1000 {
        p.add("alerts.episode_settle_seconds", "must be at least 1");
    }
    if let Some(f) = &alerts.flowcontrol {
        if !matches!(f.as_str(), "on" | "off") {
            p.add(
                "alerts.flowcontrol",
                format!("\"{f}\" is not one of on, off"),
            );
        }
    }

    let raw_roce: RawRoce = section(&mut p, "roce", table.get("roce"));
    p.extras("roce", &raw_roce.extra, ROCE);
    let roce = Roce {
        dscp: match raw_roce.dscp {
            None => super::DEFAULT_ROCE_DSCP,
            Some(d @ 0..=63) => d as u8,
            Some(d) => {
                p.add("roce.dscp", format!("{d} is not a DSCP (0 to 63)"));
                super::DEFAULT_ROCE_DSCP
            }
        },
    };

    let prometheus = array::<RawPrometheus>(&mut p, "prometheus", table.get("prometheus"))
        .into_iter()
        .filter_map(|(i, r)| prometheus::build(&mut p, &format!("prometheus[{i}]"), r, base))
        .map(|mut pr| {
            pr.max_answer_bytes = poll.max_answer_bytes;
            pr
        })
        .collect();

    cross_checks(&mut p, &switches, &mut nodes, &logs, &pings);
    let simulation = switch_port::simulation(&mut p, &switches, &raw_sim);
    if !p.0.is_empty() {
        return Err(p.0);
    }
    let mut cfg = Config {
        demo,
        seed: raw_sim.seed.unwrap_or(1),
        simulation,
        ssh,
        poll,
        switches,
        links,
        nodes,
        logs,
        pings,
        prometheus,
        ui,
        alerts,
        roce,
        path: None,
        warnings: Vec::new(),
    };
    cfg.warnings = identity_warnings(&cfg);
    Ok(cfg)
}

/// OpenSSH refuses private keys others can read; we use them, but say so.
fn identity_warnings(cfg: &Config) -> Vec<String> {
    use std::os::unix::fs::PermissionsExt;
    let mut w = Vec::new();
    for f in cfg.identity_files() {
        match std::fs::metadata(f) {
            Ok(m) if m.permissions().mode() & 0o077 != 0 => w.push(format!(
                "identity file {} is accessible by others (mode {:o}): run chmod 600 {}",
                f.display(),
                m.permissions().mode() & 0o777,
                f.display()
            )),
            Ok(_) => {}
            Err(e) if !cfg.demo => w.push(format!("identity file {}: {e}", f.display())),
            Err(_) => {}
        }
    }
    w
}

/// `poll.topology_interval`: LLDP and QoS settings change rarely; below 10 s the reads (a
/// switch's LLDP table, `mlnx_qos` per netdev) would cost more than they tell.
fn topology_interval(p: &mut Problems, v: &Option<String>) -> Duration {
    let d = p.duration(
        "poll.topology_interval",
        v,
        super::DEFAULT_TOPOLOGY_INTERVAL,
    );
    if d < Duration::from_secs(10) {
        p.add(
            "poll.topology_interval",
            format!("\"{}\" is below the 10s minimum", duration::format(d)),
        );
    }
    d
}

/// `poll.max_answer_bytes`: 64 KiB (a small switch's answer) to 1 GiB.
fn answer_cap(p: &mut Problems, v: Option<i64>) -> usize {
    const RANGE: std::ops::RangeInclusive<i64> = (64 << 10)..=(1 << 30);
    match v {
        None => super::DEFAULT_MAX_ANSWER_BYTES,
        Some(n) if RANGE.contains(&n) => n as usize,
        Some(n) => {
            p.add(
                "poll.max_answer_bytes",
                format!("{n} is outside 65536..=1073741824 (bytes)"),
            );
            super::DEFAULT_MAX_ANSWER_BYTES
        }
    }
}

fn cross_checks(
    p: &mut Problems,
    switches: &[Switch],
    nodes: &mut [Node],
    logs: &[Log],
    pings: &[Ping],
) {
    let mut seen = std::collections::HashSet::new();
    for n in nodes.iter() {
        if !seen.insert(n.name.as_str()) {
            p.add("node", format!("\"{}\" is listed twice", n.name));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for s in switches {
        if !seen.insert(s.name.as_str()) {
            p.add("switch", format!("\"{}\" is listed twice", s.name));
        }
    }
    for (i, l) in logs.iter().enumerate() {
        if !l.node.is_empty() && !nodes.iter().any(|n| n.name == l.node) {
            p.add(
                &format!("log[{i}].node"),
                format!("\"{}\" is not a configured node", l.node),
            );
        }
    }
    for (i, g) in pings.iter().enumerate() {
        if !g.peer.is_empty() && !nodes.iter().any(|n| n.name == g.peer) {
            p.add(
                &format!("ping[{i}].peer"),
                format!("\"{}\" is not a configured node", g.peer),
            );
        }
    }
    switch_port::nodes(p, switches, nodes);
}

#[cfg(test)]
mod tests;
