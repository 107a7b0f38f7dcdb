//! rocetop: a live terminal monitor for RoCEv2/RDMA training fabrics.

pub mod collect;
pub mod config;
pub mod metrics;
pub mod parse;
