//! The binary as a user runs it (`CARGO_BIN_EXE_rocetop`): its commands and documents, recordings,
//! pings, signals, closed pipes and hostile input; and the scripts and real frameworks around it.

#[path = "../common/skip.rs"]
mod skip;
#[path = "../common/sshd.rs"]
mod sshd;

mod cli_docs;
mod cli_snapshot;
mod faults_signals;
mod frameworks_real;
mod hostile;
mod libclang_detect;
mod ping_fake_verbs;
mod ping_rdma_hw;
mod ping_tcp;
mod pipes;
mod record_replay;
