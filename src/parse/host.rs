//! Host collectors and their pure parsers: mlx5 hw_counters (sysfs dump), `rdma statistic`,
//! `ethtool -S`, kernel netdev statistics, and the node's GPUs (`nvidia-smi`).

pub mod ethtool;
pub mod gpu;
pub mod hw_counters;
pub(crate) mod prompt;
pub mod qos;
pub mod rdma_stat;
