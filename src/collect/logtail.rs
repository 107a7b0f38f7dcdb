//! Training-log sources: followed like `tail -F`, parsed line by line.

pub mod follow;
pub mod local;
