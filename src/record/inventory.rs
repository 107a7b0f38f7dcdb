//! The config in a form safe to write down (secrets removed) and in a form that reads back
//! (`Config::from_str`), and the sources of a recording rebuilt for replay.

use super::format::SourceInfo;
use crate::collect::source::{Source, Unavailable};
use crate::config::{Config, SwitchOs, SwitchTransport};
use crate::metrics::store::SourceId;
use crate::parse::{Ctx, ParseKind};
use std::sync::Arc;
use std::time::Duration;
use toml::{Table, Value};

/// What stands where a secret was.
pub const REMOVED: &str = "(removed)";

/// `Config` as JSON with every secret reference removed. `Secret` holds only the name of an
/// environment variable or a command, never a password, but a command line can embed one.
pub fn redacted_json(cfg: &Config) -> serde_json::Value {
    let mut v = serde_json::to_value(cfg).unwrap_or(serde_json::Value::Null);
    if let Some(sws) = v.get_mut("switches").and_then(|s| s.as_array_mut()) {
        for sw in sws {
            if let Some(p) = sw.get_mut("password") {
                if !p.is_null() {
                    *p = serde_json::Value::from(REMOVED);
                }
            }
        }
    }
    v
}

fn ms(d: Duration) -> Value {
    Value::String(format!("{}ms", d.as_millis()))
}

fn strings(v: &[String]) -> Value {
    Value::Array(v.iter().cloned().map(Value::String).collect())
}

fn path(p: &std::path::Path) -> Value {
    Value::String(p.display().to_string())
}

/// The config as TOML that `Config::from_str` reads back to the same inventory: node lists expanded
/// (no hostfile to find later), no password keys (replay connects to nothing).
pub fn config_toml(cfg: &Config) -> String {
    let mut top = Table::new();
    top.insert("demo".into(), Value::Boolean(cfg.demo));
    let mut sim = Table::new();
    sim.insert("seed".into(), Value::Integer(cfg.seed as i64));
    let at = |p: &crate::config::SwitchPort| Value::String(format!("{}:{}", p.switch, p.port));
    if let Some(p) = &cfg.simulation.culprit_port {
        sim.insert("culprit_port".into(), at(p));
    }
    if !cfg.simulation.congested_ports.is_empty() {
        let v = cfg.simulation.congested_ports.iter().map(at).collect();
        sim.insert("congested_ports".into(), Value::Array(v));
    }
    if cfg.simulation.rate_scale != 1.0 {
        sim.insert("rate_scale".into(), Value::Float(cfg.simulation.rate_scale));
    }
    top.insert("simulation".into(), Value::Table(sim));

    let mut ssh = Table::new();
    ssh.insert("known_hosts".into(), path(&cfg.ssh.known_hosts));
    let policy = serde_json::to_value(cfg.ssh.host_key_policy)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "strict".into());
    ssh.insert("host_key_policy".into(), Value::String(policy));
    ssh.insert("connect_timeout".into(), ms(cfg.ssh.connect_timeout));
    ssh.insert("command_timeout".into(), ms(cfg.ssh.command_timeout));
    ssh.insert("keepalive".into(), ms(cfg.ssh.keepalive));
    ssh.insert("ssh_config".into(), path(&cfg.ssh.ssh_config));
    ssh.insert(
        "max_concurrent_connects".into(),
        Value::Integer(cfg.ssh.max_concurrent_connects as i64),
    );
    if let Some(f) = &cfg.ssh.identity_file {
        ssh.insert("identity_file".into(), path(f));
    }
    top.insert("ssh".into(), Value::Table(ssh));

    let mut poll = Table::new();
    poll.insert("interval".into(), ms(cfg.poll.interval));
    poll.insert("retention".into(), ms(cfg.poll.retention));
    poll.insert("switch_interval".into(), ms(cfg.poll.switch_interval));
    poll.insert("ping_interval".into(), ms(cfg.poll.ping_interval));
    poll.insert("nic_counters".into(), strings(&cfg.poll.nic_counters));
    top.insert("poll".into(), Value::Table(poll));

    let mut ui = Table::new();
    ui.insert("theme".into(), Value::String(cfg.ui.theme.clone()));
    ui.insert("mouse".into(), Value::Boolean(cfg.ui.mouse));
    if let Some(a) = cfg.ui.ascii {
        ui.insert("ascii".into(), Value::Boolean(a));
    }
    ui.insert("max_fps".into(), Value::Integer(i64::from(cfg.ui.max_fps)));
    top.insert("ui".into(), Value::Table(ui));

    let mut al = Table::new();
    al.insert(
        "pause_time_percent".into(),
        Value::Float(cfg.alerts.pause_time_percent),
    );
    al.insert(
        "port_pfc_per_second".into(),
        Value::Float(cfg.alerts.port_pfc_per_second),
    );
    al.insert(
        "rtt_p99_over_p50".into(),
        Value::Float(cfg.alerts.rtt_p99_over_p50),
    );
    if let Some(f) = &cfg.alerts.flowcontrol {
        al.insert("flowcontrol".into(), Value::String(f.clone()));
    }
    top.insert("alerts".into(), Value::Table(al));

    let switches = cfg.switches.iter().map(|s| {
        let mut t = Table::new();
        t.insert("name".into(), Value::String(s.name.clone()));
        t.insert("host".into(), Value::String(s.host.clone()));
        t.insert("port".into(), Value::Integer(i64::from(s.port)));
        t.insert("user".into(), Value::String(s.user.clone()));
        let os = match s.os {
            SwitchOs::Nxos => "nxos",
            SwitchOs::Sonic => "sonic",
            SwitchOs::Eos => "eos",
        };
        t.insert("os".into(), Value::String(os.into()));
        let tr = match s.transport {
            SwitchTransport::Ssh => "ssh",
            SwitchTransport::Nxapi => "nxapi",
        };
        t.insert("transport".into(), Value::String(tr.into()));
        if let Some(f) = &s.identity_file {
            t.insert("identity_file".into(), path(f));
        }
        t.insert("ports".into(), strings(&s.port_patterns));
        if !s.legacy_algorithms.is_empty() {
            t.insert("legacy_algorithms".into(), strings(&s.legacy_algorithms));
        }
        t.insert("nxapi_port".into(), Value::Integer(i64::from(s.nxapi_port)));
        if let Some(f) = &s.nxapi_ca_file {
            t.insert("nxapi_ca_file".into(), path(f));
        }
        if let Some(f) = &s.nxapi_fingerprint {
            t.insert("nxapi_fingerprint".into(), Value::String(f.clone()));
        }
        Value::Table(t)
    });
    top.insert("switch".into(), Value::Array(switches.collect()));

    let nodes = cfg.nodes.iter().map(|n| {
        let mut t = Table::new();
        t.insert("name".into(), Value::String(n.name.clone()));
        t.insert("host".into(), Value::String(n.host.clone()));
        t.insert("port".into(), Value::Integer(i64::from(n.port)));
        if let Some(u) = &n.user {
            t.insert("user".into(), Value::String(u.clone()));
        }
        t.insert("devices".into(), strings(&n.devices));
        t.insert("netdevs".into(), strings(&n.netdevs));
        if let Some(p) = &n.switch_port {
            // Named with its switch where a bare port name could mean another leaf.
            let said = match &n.switch {
                Some(sw) if cfg.switches.len() > 1 => format!("{sw}:{p}"),
                _ => p.clone(),
            };
            t.insert("switch_port".into(), Value::String(said));
        }
        t.insert("sysfs_root".into(), Value::String(n.sysfs_root.clone()));
        if let Some(f) = &n.identity_file {
            t.insert("identity_file".into(), path(f));
        }
        t.insert("local".into(), Value::Boolean(n.local));
        Value::Table(t)
    });
    top.insert("node".into(), Value::Array(nodes.collect()));

    let logs = cfg.logs.iter().map(|l| {
        let mut t = Table::new();
        t.insert("node".into(), Value::String(l.node.clone()));
        t.insert("path".into(), Value::String(l.path.clone()));
        if let Some(r) = &l.format_regex {
            t.insert("format_regex".into(), Value::String(r.clone()));
        }
        t.insert("lines".into(), Value::Integer(l.lines as i64));
        Value::Table(t)
    });
    top.insert("log".into(), Value::Array(logs.collect()));

    let pings = cfg.pings.iter().map(|p| {
        let mut t = Table::new();
        t.insert("peer".into(), Value::String(p.peer.clone()));
        t.insert("address".into(), Value::String(p.address.clone()));
        t.insert("rate".into(), Value::Float(p.rate));
        Value::Table(t)
    });
    top.insert("ping".into(), Value::Array(pings.collect()));

    toml::to_string(&top).unwrap_or_default()
}

/// The config of a recording, read back; `None` when it no longer validates (a newer rocetop
/// wrote it, or this one is stricter), with the problems.
pub fn config_of(toml_text: &str) -> Result<Config, String> {
    // A recording stores expanded node lists; a `hostfile` in it was written by hand, and reading
    // it would open a file the recording's author chose on the replaying machine.
    let raw: toml::Value =
        toml::from_str(toml_text).map_err(|e| format!("recorded config: {e}"))?;
    let names_a_file = raw
        .get("node")
        .and_then(toml::Value::as_array)
        .is_some_and(|nodes| nodes.iter().any(|n| n.get("hostfile").is_some()));
    if names_a_file {
        return Err("recorded config names a hostfile: a recording never reads files on the replaying machine (rocetop record stores expanded node lists)".into());
    }
    Config::from_str(toml_text, "recorded config", None).map_err(|e| e.to_string())
}

/// A recorded source as a `Source` that parses like the original and connects to nothing.
pub fn source_of(info: &SourceInfo, id: SourceId) -> Source {
    Source {
        id,
        name: info.name.clone(),
        kind: info.source_kind(),
        interval: Duration::from_millis(info.interval_ms),
        timeout: Duration::from_millis(info.timeout_ms),
        transport: Arc::new(Unavailable(format!(
            "{}: replayed from a recording",
            info.name
        ))),
        probes: Vec::new(),
        ctx: Ctx {
            name: info.ctx_name.clone(),
            log: info.ctx_log.clone(),
        },
        ports: info.ports.clone(),
        // Discovery picks the next poll's requests; a replay makes none.
        discovery: None,
        format_regex: info.format_regex.clone(),
        nic_counters: Vec::new(),
        nic_memo: Default::default(),
    }
}

/// Parse kind by recorded name; unknown names (a newer rocetop) are skipped by the caller.
pub fn kind_of(name: &str) -> Option<ParseKind> {
    ParseKind::from_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Secret;

    fn without_path(cfg: &Config) -> serde_json::Value {
        let mut v = redacted_json(cfg);
        v["path"] = serde_json::Value::Null;
        // Replay connects to nothing: the config read back has no password reference at all.
        for sw in v["switches"].as_array_mut().into_iter().flatten() {
            sw["password"] = serde_json::Value::Null;
        }
        v
    }

    #[test]
    fn the_reference_config_reads_back_the_same() {
        let cfg = Config::reference();
        let text = config_toml(&cfg);
        let back = config_of(&text).expect("reads back");
        assert_eq!(without_path(&back), without_path(&cfg), "{text}");
    }

    #[test]
    fn secrets_are_removed() {
        let mut cfg = Config::reference();
        cfg.switches[0].password = Some(Secret::Command("echo hunter2".into()));
        let json = redacted_json(&cfg).to_string();
        assert!(!json.contains("hunter2"), "{json}");
        assert!(json.contains(REMOVED));
        let text = config_toml(&cfg);
        assert!(
            !text.contains("hunter2") && !text.contains("password"),
            "{text}"
        );
    }
}
