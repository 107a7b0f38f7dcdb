//! `rocetop completions SHELL` and `rocetop man`: generated from the clap definitions in cli.rs, so
//! they can never disagree with the command line (a test checks the man page names every
//! subcommand and flag).

use crate::cli::{Cli, Shell};
use clap::CommandFactory;

/// The completion script for `shell`.
pub fn completions(shell: Shell) -> Vec<u8> {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    let gen_for = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    clap_complete::generate(gen_for, &mut cmd, "rocetop", &mut out);
    out
}

/// The man page: the top-level page with every subcommand's options folded in as sections.
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let cmd = Cli::command();
    let mut out = Vec::new();
    let man = clap_mangen::Man::new(cmd.clone());
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        let sub = sub.clone().bin_name(format!("rocetop {name}"));
        let mut buf = Vec::new();
        let m = clap_mangen::Man::new(sub.clone());
        m.render_synopsis_section(&mut buf)?;
        m.render_options_section(&mut buf)?;
        // Each subcommand is a section of the one page: what it does, its synopsis, its options.
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        let head = format!(
            ".SH \"ROCETOP {}\"\n{}\n.PP\n",
            name.to_uppercase(),
            roff_text(&about)
        );
        let text = String::from_utf8_lossy(&buf)
            .replace(".SH SYNOPSIS\n", &head)
            .replace(".SH OPTIONS", ".SS Options");
        out.extend_from_slice(text.as_bytes());
    }
    man.render_version_section(&mut out)?;
    out.extend_from_slice(FILES_SECTION.as_bytes());
    Ok(out)
}

/// A line of plain text for roff: a leading '.' or '\'' would be read as a request.
fn roff_text(s: &str) -> String {
    let s = s.replace('\\', "\\\\");
    match s.chars().next() {
        Some('.') | Some('\'') => format!("\\&{s}"),
        _ => s,
    }
}

const FILES_SECTION: &str = r#".SH FILES
.TP
\fI./config.toml\fR, \fI~/.config/rocetop/config.toml\fR
The configuration, looked up in this order after \fB\-\-config\fR. The commented reference is
\fI/usr/share/doc/rocetop/examples/config.toml\fR in the Debian package.
.TP
\fIrocetop\-export.service\fR
A systemd unit running \fBrocetop export\fR as a node agent (installed disabled).
.SH ENVIRONMENT
.TP
\fBNO_COLOR\fR
Forces the mono theme.
"#;
