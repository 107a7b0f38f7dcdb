//! The command line (docs/user-guide.md, "Commands").

use crate::output::Format;
use crate::parse::ParseKind;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// `rocetop --version`: the release, the commit it was built from, and whether the RDMA verbs
/// pinger is in (a build without it pings over TCP only).
#[cfg(feature = "verbs")]
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ROCETOP_GIT_COMMIT"),
    ", verbs pinger: yes)"
);
#[cfg(not(feature = "verbs"))]
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("ROCETOP_GIT_COMMIT"),
    ", verbs pinger: no, TCP pings only)"
);

#[derive(Debug, Parser)]
#[command(
    // `--demo` takes an optional value: `rocetop --demo snapshot` is the lab and a subcommand.
    subcommand_precedence_over_arg = true,
    name = "rocetop",
    version = VERSION,
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
    /// Simulate instead of connecting: `--demo` (or `--demo lab`) the configured inventory, else
    /// the built-in lab; `--demo fabric` the built-in fabric (2 spines, 4 leaves, 32 nodes on
    /// two rails).
    #[arg(
        long,
        global = true,
        value_enum,
        num_args = 0..=1,
        default_missing_value = "lab",
        value_name = "lab|fabric"
    )]
    pub demo: Option<Demo>,
}

/// Which simulation `--demo` plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Demo {
    /// The configured inventory, else the built-in lab (one leaf, eight nodes).
    #[default]
    Lab,
    /// The built-in fabric: PFC pauses hop by hop, injected episodes with known roots.
    Fabric,
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
    /// Connect to every source, authenticate, read once, and check the RoCE settings agree.
    Check,
    /// Record the raw outputs of every source to one file (until --duration or Ctrl-C).
    Record {
        /// The recording to write (replaced if it exists).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// Stop after this long (default: until SIGINT/SIGTERM).
        #[arg(long, value_parser = parse_duration)]
        duration: Option<std::time::Duration>,
    },
    /// Replay a recording through the same parsers; with --format, print the state at its end.
    Replay {
        file: PathBuf,
        /// Recording seconds per second.
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
        /// Print the final state instead of showing it on screen.
        #[arg(long, value_enum)]
        format: Option<Format>,
    },
    /// Serve Prometheus /metrics of every source.
    Export {
        /// Address to listen on; a non-loopback address is allowed, with a warning.
        #[arg(long, default_value = crate::config::DEFAULT_EXPORT_LISTEN, value_name = "ADDR")]
        listen: String,
    },
    /// The responder that latency pings talk to (TCP; RDMA too when built with --features verbs).
    Pingd {
        /// Address to listen on (the peer's address on the RDMA network, for real use).
        #[arg(long, default_value = "127.0.0.1:18515")]
        listen: String,
        /// RDMA device (default: per session, the one whose RoCE v2 GID is the address the
        /// pinger connected to).
        #[arg(long)]
        device: Option<String>,
        /// RDMA port of a pinned device (verbs count ports from 1).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..))]
        ib_port: u8,
        /// GID index of a pinned device (default: its RoCE v2 GID equal to that address).
        #[arg(long)]
        gid_index: Option<u8>,
        /// IP traffic class of the RDMA replies (106 = DSCP 26 with ECT(0), the lossless class).
        #[arg(long, default_value_t = 106)]
        traffic_class: u8,
        /// Service level of the RDMA replies.
        #[arg(long, default_value_t = 0)]
        sl: u8,
        /// RDMA: pingd sleeps until just before each probe is due (pingers say their period) and
        /// spins around it; a pinger faster than one probe per 2 ms is busy-polled 1.25 periods
        /// after each probe, at most this long; 0 polls every 50 µs.
        #[arg(long, default_value = "1s", value_parser = parse_duration)]
        spin: std::time::Duration,
    },
    /// Print a shell completion script (bash: save as ~/.local/share/bash-completion/completions/rocetop).
    Completions {
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the man page (roff), generated from this command line: `rocetop man | man -l -`.
    Man,
}

/// Shells `rocetop completions` writes a script for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    crate::config::duration::parse(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pingd_refuses_port_zero() {
        let e = Cli::try_parse_from(["rocetop", "pingd", "--ib-port", "0"]).err();
        assert!(
            e.as_ref()
                .is_some_and(|e| e.to_string().contains("--ib-port")),
            "{e:?}"
        );
        assert!(Cli::try_parse_from(["rocetop", "pingd", "--ib-port", "2"]).is_ok());
    }

    /// `--demo` alone stays the lab wherever it stood before; `fabric` is its one value.
    #[test]
    fn demo_alone_is_the_lab_and_fabric_is_asked_for() {
        struct Case {
            args: &'static [&'static str],
            demo: Option<Demo>,
            /// The subcommand, as its Debug form starts.
            sub: &'static str,
        }
        let case = |args, demo, sub| Case { args, demo, sub };
        let (lab, fabric) = (Some(Demo::Lab), Some(Demo::Fabric));
        for c in [
            case(&["rocetop"], None, ""),
            case(&["rocetop", "--demo"], lab, ""),
            case(&["rocetop", "--demo", "fabric"], fabric, ""),
            case(&["rocetop", "--demo", "lab"], lab, ""),
            case(&["rocetop", "--demo", "check"], lab, "Check"),
            case(&["rocetop", "--demo", "fabric", "check"], fabric, "Check"),
            case(
                &["rocetop", "snapshot", "--demo", "--format", "json"],
                lab,
                "Snapshot",
            ),
            case(
                &[
                    "rocetop", "snapshot", "--demo", "fabric", "--format", "json",
                ],
                fabric,
                "Snapshot",
            ),
            case(
                &["rocetop", "export", "--demo", "--listen", "127.0.0.1:0"],
                lab,
                "Export",
            ),
        ] {
            let cli = Cli::try_parse_from(c.args).unwrap_or_else(|e| panic!("{:?}: {e}", c.args));
            assert_eq!(cli.source.demo, c.demo, "{:?}", c.args);
            let sub = cli.command.map(|s| format!("{s:?}")).unwrap_or_default();
            let want = |s: &str| {
                if c.sub.is_empty() {
                    s.is_empty()
                } else {
                    s.starts_with(c.sub)
                }
            };
            assert!(want(&sub), "{:?}: {sub}", c.args);
        }
        assert!(Cli::try_parse_from(["rocetop", "--demo", "moon"]).is_err());
    }
}
