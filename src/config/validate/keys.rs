//! The keys each config section knows (unknown ones are reported with a did-you-mean).

pub const TOP: &[&str] = &[
    "demo",
    "ssh",
    "poll",
    "switch",
    "link",
    "node",
    "log",
    "ping",
    "simulation",
    "ui",
    "alerts",
    "roce",
    "prometheus",
];
pub const SSH: &[&str] = &[
    "known_hosts",
    "host_key_policy",
    "connect_timeout",
    "command_timeout",
    "identity_file",
    "ssh_config",
    "keepalive",
    "max_concurrent_connects",
    "focus_hosts",
    "focus_host_key_policy",
];
pub const POLL: &[&str] = &[
    "interval",
    "retention",
    "switch_interval",
    "ping_interval",
    "topology_interval",
    "nic_counters",
    "max_answer_bytes",
    "mode",
];
pub const SWITCH: &[&str] = &[
    "name",
    "host",
    "port",
    "user",
    "os",
    "transport",
    "password_env",
    "password_command",
    "identity_file",
    "ports",
    "legacy_algorithms",
    "nxapi_port",
    "nxapi_ca_file",
    "nxapi_fingerprint",
];
pub const NODE: &[&str] = &[
    "name",
    "host",
    "hostfile",
    "port",
    "user",
    "devices",
    "netdevs",
    "switch_port",
    "sysfs_root",
    "identity_file",
    "local",
];
pub const LOG: &[&str] = &["node", "path", "format_regex", "lines"];
pub const PING: &[&str] = &[
    "peer",
    "address",
    "rate",
    "device",
    "ib_port",
    "gid_index",
    "traffic_class",
    "sl",
    "source",
    "qp_type",
];
pub const ROCE: &[&str] = &["dscp"];
pub const SIM: &[&str] = &["seed", "culprit_port", "congested_ports", "rate_scale"];
pub const UI: &[&str] = &["theme", "mouse", "ascii", "max_fps"];
pub const ALERTS: &[&str] = &[
    "pause_time_percent",
    "port_pfc_per_second",
    "rtt_p99_over_p50",
    "flowcontrol",
    "episode_step_ratio",
    "episode_rate_ratio",
    "episode_rtt_ratio",
    "episode_settle_seconds",
];
pub const LEGACY: &[&str] = &["dh-group14-sha1", "ecdh-nistp", "hmac-sha1", "ssh-rsa"];
pub const PROMETHEUS: &[&str] = &[
    "name",
    "url",
    "selector",
    "node_label",
    "bearer_token_env",
    "bearer_token_command",
    "basic_user",
    "basic_password_env",
    "basic_password_command",
    "ca_file",
    "step",
    "timeout",
];
pub const LINK: &[&str] = &["a", "b"];
