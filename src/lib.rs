//! rocetop: a live terminal monitor for RoCEv2/RDMA training fabrics.

pub mod app;
pub mod bundle;
pub mod cli;
pub mod cmd;
pub mod collect;
pub mod config;
pub mod heap;
pub mod metrics;
pub mod output;
pub mod parse;
pub mod record;
pub mod safe;
pub mod theme;
pub mod tui;
pub mod ui;

use cli::{Cli, Command};
use config::Config;
use std::process::ExitCode;

/// The config (warnings printed) and an async runtime, or the exit code after saying why not.
pub fn setup(source: &cli::SourceArgs) -> Result<(Config, tokio::runtime::Runtime), ExitCode> {
    setup_on(source, |_| tokio::runtime::Runtime::new())
}

/// [`setup`] with the runtime that `runtime` builds for the config.
fn setup_on(
    source: &cli::SourceArgs,
    runtime: impl FnOnce(&Config) -> std::io::Result<tokio::runtime::Runtime>,
) -> Result<(Config, tokio::runtime::Runtime), ExitCode> {
    let cfg = load_config(source).map_err(|e| {
        safe::eprintln(&format!("rocetop: {e}"));
        ExitCode::from(2)
    })?;
    for w in &cfg.warnings {
        safe::eprintln(&format!("rocetop: warning: {w}"));
    }
    let rt = runtime(&cfg).map_err(|e| {
        safe::eprintln(&format!("rocetop: cannot start the async runtime: {e}"));
        ExitCode::from(1)
    })?;
    Ok((cfg, rt))
}

/// The config the command line names: `--demo fabric` is the built-in fabric (a config file
/// cannot describe its cabling, so naming one too is an error), else the file or the lab.
pub fn load_config(source: &cli::SourceArgs) -> Result<Config, config::ConfigError> {
    match (source.demo, &source.config) {
        (Some(cli::Demo::Fabric), None) => Ok(collect::demo::fabric::config(1)),
        (Some(cli::Demo::Fabric), Some(p)) => Err(config::ConfigError {
            file: p.display().to_string(),
            problems: vec![
                "--demo fabric plays its built-in inventory; drop --config, or use --demo with it"
                    .into(),
            ],
        }),
        (demo, file) => Config::load(file.as_deref(), demo.is_some()),
    }
}

/// `export`'s runtime: one thread for up to [`ONE_THREAD_MAX_HOSTS`] nodes and switches and no
/// pingers. Its tasks (SSH sessions, their channels, polls, the store) hand work to each other
/// all the time: on one thread that is a queue push, where tokio's workers wake and park each
/// other through futexes (N=8 + a switch: 3 → 1 threads, ~29 → ~17 context switches and
/// ~4.3 → ~3.8 ms CPU a second; docs/performance.md). A TCP pinger times an echo when its task
/// runs, so it keeps the worker threads (a switch's parse would count in its RTT).
fn export_runtime(cfg: &Config) -> std::io::Result<tokio::runtime::Runtime> {
    if cfg.pings.is_empty() && cfg.nodes.len() + cfg.switches.len() <= ONE_THREAD_MAX_HOSTS {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Runtime::new()
    }
}

/// Above this, startup's burst (every node's first full dump parsed, its topology read) wants
/// more than one core: at 512 nodes on one thread (a 2-core box also running the simulated
/// fabric) ~40 % of the first topology reads ran past their 5 s timeout, 3 % on the workers.
const ONE_THREAD_MAX_HOSTS: usize = 64;

/// Print a rendering: JSON keeps its value (escapes in JSON syntax), tables and Prometheus text
/// get visible escapes (Prometheus label values were already stripped of control characters).
fn print_as(format: output::Format, text: &str) -> Result<(), ExitCode> {
    let safe = match format {
        output::Format::Json => safe::json(text),
        output::Format::Table | output::Format::Prom => safe::text(text),
    };
    output::stdout::print(&safe)
}

/// Run the command line; errors a user can act on are printed without a backtrace.
pub fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Some(Command::Parse {
            kind,
            file,
            format,
            name,
        }) => match cmd::parse::run(kind, &file, format, &name, &mut std::io::stdout().lock()) {
            Ok(res) => match output::stdout::finish(res) {
                Ok(()) => ExitCode::SUCCESS,
                Err(code) => code,
            },
            Err(e) => {
                safe::eprintln(&format!("rocetop: {e}"));
                ExitCode::from(2)
            }
        },
        Some(Command::Check) => {
            let (cfg, rt) = match setup(&cli.source) {
                Ok(x) => x,
                Err(code) => return code,
            };
            let r = rt.block_on(cmd::check::run(&cfg));
            if let Err(code) = output::stdout::print(&safe::text(&r.text)) {
                return code;
            }
            if r.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Some(Command::Snapshot { format, interval }) => {
            let (cfg, rt) = match setup(&cli.source) {
                Ok(x) => x,
                Err(code) => return code,
            };
            let out = rt.block_on(cmd::snapshot::run(&cfg, format, interval));
            if let Err(code) = print_as(format, &out.text) {
                return code;
            }
            for f in &out.failed {
                safe::eprintln(&format!("rocetop: source failed: {f}"));
            }
            if out.failed.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Some(Command::Record { out, duration }) => {
            let (cfg, rt) = match setup(&cli.source) {
                Ok(x) => x,
                Err(code) => return code,
            };
            match rt.block_on(cmd::record::run(&cfg, &out, duration)) {
                Ok(s) => {
                    safe::eprintln(&format!("rocetop: {}", s.line(&out)));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    safe::eprintln(&format!("rocetop: {e}"));
                    ExitCode::from(1)
                }
            }
        }
        Some(Command::Replay {
            file,
            speed,
            format: None,
        }) => tui::run_replay(&file, speed, cli.theme.as_deref()),
        Some(Command::Replay {
            file,
            speed: _,
            format: Some(format),
        }) => {
            let Ok(rt) = tokio::runtime::Runtime::new() else {
                safe::eprintln("rocetop: cannot start the async runtime");
                return ExitCode::from(1);
            };
            match rt.block_on(cmd::record::replay_print(&file, format)) {
                Ok(out) => match print_as(format, &out) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(code) => code,
                },
                Err(e) => {
                    safe::eprintln(&format!("rocetop: {e}"));
                    ExitCode::from(2)
                }
            }
        }
        Some(Command::Export { listen }) => {
            let (cfg, rt) = match setup_on(&cli.source, export_runtime) {
                Ok(x) => x,
                Err(code) => return code,
            };
            match rt.block_on(cmd::export::run(&cfg, &listen)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    safe::eprintln(&format!("rocetop: {e}"));
                    ExitCode::from(1)
                }
            }
        }
        Some(Command::Pingd {
            listen,
            device,
            ib_port,
            gid_index,
            traffic_class,
            sl,
            spin,
        }) => cmd::pingd::run(cmd::pingd::Options {
            listen,
            verbs: collect::ping::VerbsOptions {
                device,
                port: ib_port,
                gid_index,
                traffic_class,
                sl,
                ..Default::default()
            },
            spin,
        }),
        Some(Command::Completions { shell }) => print_or_exit(&cmd::docs::completions(shell)),
        Some(Command::Man) => match cmd::docs::man_page() {
            Ok(page) => print_or_exit(&page),
            Err(e) => {
                safe::eprintln(&format!("rocetop: cannot render the man page: {e}"));
                ExitCode::from(1)
            }
        },
        None => match load_config(&cli.source) {
            Ok(cfg) => tui::run(cfg, cli.theme.as_deref()),
            Err(e) => {
                safe::eprintln(&format!("rocetop: {e}"));
                ExitCode::from(2)
            }
        },
    }
}

/// A whole document to stdout (generated text: UTF-8), ending quietly on a closed pipe.
fn print_or_exit(doc: &[u8]) -> ExitCode {
    match output::stdout::print(&String::from_utf8_lossy(doc)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
