//! The config file as written. Every section keeps the keys it does not know in `extra`, so that
//! validation can report them all at once (with their key paths) instead of stopping at the first.

use serde::Deserialize;
use std::collections::BTreeMap;

pub type Extra = BTreeMap<String, toml::Value>;

#[derive(Debug, Default, Deserialize)]
pub struct RawSsh {
    pub known_hosts: Option<String>,
    pub host_key_policy: Option<String>,
    pub connect_timeout: Option<String>,
    pub command_timeout: Option<String>,
    pub identity_file: Option<String>,
    pub ssh_config: Option<String>,
    pub keepalive: Option<String>,
    pub max_concurrent_connects: Option<u32>,
    pub focus_hosts: Option<Vec<String>>,
    pub focus_host_key_policy: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawPoll {
    pub interval: Option<String>,
    pub retention: Option<String>,
    pub switch_interval: Option<String>,
    pub ping_interval: Option<String>,
    pub topology_interval: Option<String>,
    pub nic_counters: Option<Vec<String>>,
    pub max_answer_bytes: Option<i64>,
    pub mode: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// `[[link]]`: a switch↔switch link named in the config (adds to LLDP, or overrides it).
#[derive(Debug, Default, Deserialize)]
pub struct RawLink {
    pub a: Option<String>,
    pub b: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawSwitch {
    pub name: Option<String>,
    pub host: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub os: Option<String>,
    pub transport: Option<String>,
    pub password_env: Option<String>,
    pub password_command: Option<String>,
    pub identity_file: Option<String>,
    pub ports: Option<Vec<String>>,
    /// Legacy algorithms this one device needs (never global): "dh-group14-sha1", "ecdh-nistp", "hmac-sha1".
    pub legacy_algorithms: Option<Vec<String>>,
    pub nxapi_port: Option<u16>,
    pub nxapi_ca_file: Option<String>,
    pub nxapi_fingerprint: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawNode {
    pub name: Option<String>,
    pub host: Option<String>,
    pub hostfile: Option<String>,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub devices: Option<Vec<String>>,
    pub netdevs: Option<Vec<String>>,
    pub switch_port: Option<String>,
    pub sysfs_root: Option<String>,
    pub identity_file: Option<String>,
    pub local: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawLog {
    pub node: Option<String>,
    pub path: Option<String>,
    /// Named custom format: a regex with named groups (iteration, loss, step_ms, allreduce_ms, ...).
    pub format_regex: Option<String>,
    pub lines: Option<usize>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawPing {
    pub peer: Option<String>,
    pub address: Option<String>,
    pub rate: Option<f64>,
    pub device: Option<String>,
    pub ib_port: Option<i64>,
    pub gid_index: Option<i64>,
    pub traffic_class: Option<i64>,
    pub sl: Option<i64>,
    pub source: Option<String>,
    pub qp_type: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawSimulation {
    pub seed: Option<u64>,
    pub culprit_port: Option<String>,
    pub congested_ports: Option<Vec<String>>,
    pub rate_scale: Option<f64>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawUi {
    pub theme: Option<String>,
    pub mouse: Option<bool>,
    pub ascii: Option<bool>,
    pub max_fps: Option<u32>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawRoce {
    pub dscp: Option<i64>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawAlerts {
    pub pause_time_percent: Option<f64>,
    pub port_pfc_per_second: Option<f64>,
    pub rtt_p99_over_p50: Option<f64>,
    pub flowcontrol: Option<String>,
    pub episode_step_ratio: Option<f64>,
    pub episode_rate_ratio: Option<f64>,
    pub episode_rtt_ratio: Option<f64>,
    pub episode_settle_seconds: Option<f64>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Default, Deserialize)]
pub struct RawPrometheus {
    pub name: Option<String>,
    pub url: Option<String>,
    pub selector: Option<String>,
    pub node_label: Option<String>,
    pub bearer_token_env: Option<String>,
    pub bearer_token_command: Option<String>,
    pub basic_user: Option<String>,
    pub basic_password_env: Option<String>,
    pub basic_password_command: Option<String>,
    pub ca_file: Option<String>,
    pub step: Option<String>,
    pub timeout: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}
