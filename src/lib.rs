//! rocetop: a live terminal monitor for RoCEv2/RDMA training fabrics.

pub mod cli;
pub mod cmd;
pub mod collect;
pub mod config;
pub mod metrics;
pub mod output;
pub mod parse;
pub mod app;
pub mod theme;
pub mod tui;
pub mod ui;

use cli::{Cli, Command};
use config::Config;
use std::process::ExitCode;

/// Run the command line; errors a user can act on are printed without a backtrace.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Some(Command::Parse {
            kind,
            file,
            format,
            name,
        }) => match cmd::parse::run(kind, &file, format, &name) {
            Ok(out) => {
                print!("{out}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("rocetop: {e}");
                ExitCode::from(2)
            }
        },
        Some(Command::Snapshot { format, interval }) => {
            let cfg = match Config::load(cli.source.config.as_deref(), cli.source.demo) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("rocetop: {e}");
                    return ExitCode::from(2);
                }
            };
            for w in &cfg.warnings {
                eprintln!("rocetop: warning: {w}");
            }
            let rt = match tokio::runtime::Runtime::new() {
                Ok(rt) => rt,
                Err(e) => {
                    eprintln!("rocetop: cannot start the async runtime: {e}");
                    return ExitCode::from(1);
                }
            };
            let out = rt.block_on(cmd::snapshot::run(&cfg, format, interval));
            print!("{}", out.text);
            for f in &out.failed {
                eprintln!("rocetop: source failed: {f}");
            }
            if out.failed.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Some(Command::Pingd {
            listen,
            device,
            ib_port,
            gid_index,
            traffic_class,
            spin,
        }) => cmd::pingd::run(cmd::pingd::Options {
            listen,
            verbs: collect::ping::VerbsOptions {
                device,
                port: ib_port,
                gid_index,
                traffic_class,
                ..Default::default()
            },
            spin,
        }),
        None => match Config::load(cli.source.config.as_deref(), cli.source.demo) {
            Ok(cfg) => tui::run(cfg, cli.theme.as_deref()),
            Err(e) => {
                eprintln!("rocetop: {e}");
                ExitCode::from(2)
            }
        },
    }
}
