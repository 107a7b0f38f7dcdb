//! Parsers and the store on real captures, with no server, terminal or network: every capture
//! under tests/fixtures/ against its expected output (promtool checks the exposition), the
//! parsers' exact numbers and no-panic proptests, bad and resetting counters, a node's sysfs tree
//! read through the local transport, and the demo's numbers against what it injected.

#[path = "../common/skip.rs"]
mod skip;

mod inputs;

mod faults_counters;
mod faults_parse;
mod fixtures;
mod host_poll;
mod parse_host;
mod parse_switch;
mod parse_topology;
mod parse_training;
mod units_truth;
