//! Fleet mode and export against the real Debian Prometheus, node_exporter and promtool, started by
//! the tests on 127.0.0.1 (tests/common/prom.rs), and a focused node over a real sshd.

#[path = "../common/prom.rs"]
mod prom;
#[path = "../common/prom_skip.rs"]
mod prom_skip;
#[path = "../common/skip.rs"]
mod skip;
#[path = "../common/sshd.rs"]
mod sshd;

mod export;
mod focus_ssh;
mod prometheus_dcgm;
mod prometheus_faults;
mod prometheus_fleet;
mod prometheus_live;
mod prometheus_node_exporter;
