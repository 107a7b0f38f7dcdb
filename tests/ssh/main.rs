//! The transports against real servers on 127.0.0.1: OpenSSH sshd processes of the tests' own
//! (tests/common/sshd.rs) for the SSH transport, the streaming collector, switches, `check` and the
//! log follower, and a loopback HTTPS server for NX-API.

#[path = "../common/skip.rs"]
mod skip;
#[path = "../common/sshd.rs"]
mod sshd;

mod check_lossless;
mod check_ssh;
mod faults_secrets;
mod faults_ssh;
mod gpu_ssh;
mod logtail;
mod nxapi;
mod ssh_transport;
mod stream_ssh;
mod switch_ssh;
