use clap::Parser;

fn main() -> std::process::ExitCode {
    // Backtraces are for bugs; configuration and connection problems are printed as plain sentences.
    let _ = color_eyre::install();
    rocetop::run(rocetop::cli::Cli::parse())
}
