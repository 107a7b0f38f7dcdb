//! `--version`, shell completions and the man page, through the binary: they are generated from the
//! same clap definitions, and these tests prove the man page leaves nothing out.

use clap::CommandFactory;
use rocetop::cli::Cli;
use std::process::{Command, Stdio};

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run rocetop");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn version_says_release_commit_and_whether_verbs_is_in() {
    let (ok, out, err) = run(&["--version"]);
    assert!(ok, "{err}");
    let line = out.trim();
    assert!(
        line.starts_with(&format!("rocetop {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{line}"
    );
    // The commit is hex (optionally -dirty) or "unknown" outside git; never empty.
    let commit = line
        .split("(commit ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .expect("commit field");
    let hex = commit.trim_end_matches("-dirty");
    assert!(
        hex == "unknown" || (hex.len() >= 7 && hex.bytes().all(|b| b.is_ascii_hexdigit())),
        "{commit}"
    );
    let verbs = if cfg!(feature = "verbs") {
        "verbs pinger: yes"
    } else {
        "verbs pinger: no"
    };
    assert!(line.contains(verbs), "{line}");
}

#[test]
fn completions_name_every_subcommand() {
    let subs: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    assert!(subs.len() >= 9, "{subs:?}");
    for shell in ["bash", "zsh", "fish"] {
        let (ok, out, err) = run(&["completions", shell]);
        assert!(ok, "{shell}: {err}");
        for s in &subs {
            assert!(out.contains(s.as_str()), "{shell} completion lacks {s}");
        }
        let demo = if shell == "fish" { "-l demo" } else { "--demo" };
        assert!(out.contains(demo), "{shell}: global flags");
    }
    let (ok, _, err) = run(&["completions", "powershell"]);
    assert!(!ok && err.contains("invalid value"), "{err}");
}

#[test]
fn man_page_lists_every_subcommand_and_flag() {
    let (ok, page, err) = run(&["man"]);
    assert!(ok, "{err}");
    assert!(
        page.starts_with(".ie") || page.contains(".TH rocetop 1"),
        "roff"
    );
    let cmd = Cli::command();
    let mut missing = Vec::new();
    let roff_flag = |long: &str| format!("\\fB\\-\\-{}\\fR", long.replace('-', "\\-"));
    for a in cmd.get_arguments().filter_map(|a| a.get_long()) {
        if !page.contains(&roff_flag(a)) {
            missing.push(format!("--{a}"));
        }
    }
    for sub in cmd.get_subcommands() {
        let head = format!(".SH \"ROCETOP {}\"", sub.get_name().to_uppercase());
        let Some(at) = page.find(&head) else {
            missing.push(format!("section {}", sub.get_name()));
            continue;
        };
        let section = &page[at..];
        let section = &section[..section[4..].find(".SH ").map_or(section.len(), |e| e + 4)];
        for a in sub.get_arguments().filter_map(|a| a.get_long()) {
            if !section.contains(&roff_flag(a)) {
                missing.push(format!("{} --{a}", sub.get_name()));
            }
        }
    }
    assert!(missing.is_empty(), "the man page lacks {missing:?}");
}

#[test]
fn docs_end_quietly_on_a_closed_pipe() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["man"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    drop(child.stdout.take()); // the reader went away before the first byte
    let out = child.wait_with_output().expect("wait");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    // 141 is what a shell shows for SIGPIPE (output::stdout); 0 if the page fit the pipe buffer.
    assert!(
        matches!(out.status.code(), Some(0) | Some(141)),
        "{:?} {err}",
        out.status
    );
}
