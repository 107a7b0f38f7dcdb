//! The command line (DESIGN.md §5).

use crate::output::Format;
use crate::parse::ParseKind;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "rocetop",
    version,
    about = "Live terminal monitor for RoCEv2/RDMA training fabrics: switch queues, PFC, ECN/CNP, latency and the training log on one screen"
)]
pub struct Cli {
    #[command(flatten)]
    pub source: SourceArgs,
    /// Colour theme: dark, light, mono, colorblind (NO_COLOR forces mono).
    #[arg(long, global = true)]
    pub theme: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Where the data comes from: a config file, or the built-in demo cluster.
#[derive(Debug, Args, Clone, Default)]
pub struct SourceArgs {
    /// Config file (default: ./config.toml, then ~/.config/rocetop/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Simulate the configured inventory (or the built-in lab) instead of connecting to it.
    #[arg(long, global = true)]
    pub demo: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Poll every source twice, print counters and rates, exit non-zero if a source failed.
    Snapshot {
        #[arg(long, value_enum, default_value_t = Format::Table)]
        format: Format,
        /// Time between the two polls.
        #[arg(long, default_value = "1s", value_parser = parse_duration)]
        interval: std::time::Duration,
    },
    /// Parse one captured output and print its samples ("does rocetop read my switch?").
    Parse {
        #[arg(value_enum)]
        kind: ParseKind,
        /// File to read, or - for standard input.
        #[arg(default_value = "-")]
        file: String,
        #[arg(long, value_enum, default_value_t = Format::Prom)]
        format: Format,
        /// Fills the switch or node label.
        #[arg(long, default_value = "parsed")]
        name: String,
    },
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    crate::config::duration::parse(s)
}
