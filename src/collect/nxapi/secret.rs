//! The NX-API password: from an environment variable or the first line a command prints, never
//! from config text (the same sources as the SSH transport's password).

use crate::config::Secret;
use std::time::Duration;

/// A password command that takes longer than this is stuck (waiting for a PIN, a dead agent).
const COMMAND_LIMIT: Duration = Duration::from_secs(10);

pub async fn resolve(src: &Secret) -> Result<String, String> {
    match src {
        Secret::Env(var) => match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok(v),
            _ => Err(format!("password variable ${var} is not set")),
        },
        Secret::Command(cmd) => command_first_line(cmd, COMMAND_LIMIT).await,
    }
}

/// A bearer token, from where a password comes. It goes into a request header as it is (a
/// password goes base64-encoded), so one holding a CR or LF would end the `Authorization` header
/// and start one of its own choosing: such a token, or one with any other control character, is
/// refused here, where it is read, whichever HTTP client sends it. The message names where the
/// token came from, never the token.
pub async fn resolve_token(src: &Secret) -> Result<String, String> {
    let token = resolve(src).await?;
    let from = || match src {
        Secret::Env(var) => format!("${var}"),
        Secret::Command(cmd) => format!("command `{cmd}`"),
    };
    if token.contains(['\r', '\n']) {
        return Err(format!(
            "the bearer token from {} holds a line break (CR or LF): refused, as it would add \
             request headers of its own",
            from()
        ));
    }
    if token.chars().any(char::is_control) {
        return Err(format!(
            "the bearer token from {} holds a control character: refused, no HTTP header may carry it",
            from()
        ));
    }
    Ok(token)
}

/// Most bytes read from a password command: a password is a line, `yes` is not.
const MAX_COMMAND_OUTPUT: u64 = 64 << 10;

/// The first line a password command prints (SSH and NX-API alike). The command runs in its own
/// process group; when it overruns `limit` or prints more than [`MAX_COMMAND_OUTPUT`] bytes the
/// whole group is killed (a `sh -c` whose child hangs would otherwise be orphaned), and the
/// message names the command and what it did.
pub async fn command_first_line(cmd: &str, limit: Duration) -> Result<String, String> {
    use tokio::io::AsyncReadExt as _;
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("password command `{cmd}`: {e}"))?;
    let pgid = child.id();
    let mut stdout = child.stdout.take();
    let run = async {
        let mut out = Vec::new();
        if let Some(s) = stdout.as_mut() {
            s.take(MAX_COMMAND_OUTPUT + 1).read_to_end(&mut out).await?;
        }
        if out.len() as u64 > MAX_COMMAND_OUTPUT {
            return Ok((out, None));
        }
        child.wait().await.map(|st| (out, Some(st)))
    };
    let res = tokio::time::timeout(limit, run).await;
    let done = matches!(&res, Ok(Ok((_, Some(_)))));
    if !done && let Some(pg) = pgid {
        kill_group(pg).await;
    }
    let (out, status) = res
        .map_err(|_| {
            format!(
                "password command `{cmd}` took over {} s (it and its children were killed)",
                limit.as_secs_f64()
            )
        })?
        .map_err(|e| format!("password command `{cmd}`: {e}"))?;
    let Some(status) = status else {
        return Err(format!(
            "password command `{cmd}` printed more than {MAX_COMMAND_OUTPUT} bytes (killed)"
        ));
    };
    if !status.success() {
        return Err(format!("password command `{cmd}` failed ({status})"));
    }
    let text = String::from_utf8_lossy(&out);
    match text.lines().next().filter(|l| !l.is_empty()) {
        Some(l) => Ok(l.to_string()),
        None => Err(format!("password command `{cmd}` printed nothing")),
    }
}

/// SIGKILL to a whole process group, through kill(1): the crate has no unsafe code for libc::kill.
async fn kill_group(pgid: u32) {
    let _ = tokio::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn command_first_line_and_failures() {
        let ok = resolve(&Secret::Command("printf 'pw one\\nsecond\\n'".into())).await;
        assert_eq!(ok.as_deref(), Ok("pw one"));
        let e = resolve(&Secret::Command("exit 3".into()))
            .await
            .expect_err("an error");
        assert!(e.contains("failed"), "{e}");
        let e = resolve(&Secret::Command("true".into()))
            .await
            .expect_err("an error");
        assert!(e.contains("printed nothing"), "{e}");
        let e = resolve(&Secret::Env("ROCETOP_NXAPI_SURELY_UNSET".into()))
            .await
            .expect_err("an error");
        assert!(e.contains("$ROCETOP_NXAPI_SURELY_UNSET is not set"), "{e}");
    }

    /// A token that would end its header (CR, LF) or holds another control character is
    /// refused with where it came from (the command, as configured).
    #[tokio::test]
    async fn a_token_with_a_line_break_or_control_is_refused_where_it_is_read() {
        let ok = resolve_token(&Secret::Command("printf 'abc.DEF-123_~+/='".into())).await;
        assert_eq!(ok.as_deref(), Ok("abc.DEF-123_~+/="));
        // A lone CR survives `lines()`: the first line of the command's output holds it.
        let cmd = "printf 'tok3n\\rX-Injected: 1'";
        let e = resolve_token(&Secret::Command(cmd.into()))
            .await
            .expect_err("refused");
        assert_eq!(
            e,
            format!(
                "the bearer token from command `{cmd}` holds a line break (CR or LF): refused, \
                 as it would add request headers of its own"
            )
        );
        let e = resolve_token(&Secret::Command("printf 'tok3n\\001'".into()))
            .await
            .expect_err("refused");
        assert!(e.contains("holds a control character"), "{e}");
        // A password is base64-encoded into its header: the same bytes are still a password.
        let pw = resolve(&Secret::Command("printf 'pw\\rx'".into())).await;
        assert_eq!(pw.as_deref(), Ok("pw\rx"));
    }

    #[tokio::test]
    async fn endless_output_is_capped_and_named() {
        let e = command_first_line("yes", COMMAND_LIMIT)
            .await
            .expect_err("capped");
        assert!(e.contains("`yes` printed more than 65536 bytes"), "{e}");
    }

    /// A hanging command's grandchild (the `sleep` under `sh -c`) dies with it: nothing is orphaned.
    #[tokio::test]
    async fn a_hanging_command_and_its_children_are_killed() {
        let dir = tempfile::tempdir().expect("tmp");
        let pidfile = dir.path().join("pid");
        let cmd = format!("sleep 300 & echo $! > {}; wait", pidfile.display());
        let e = command_first_line(&cmd, Duration::from_millis(500))
            .await
            .expect_err("timed out");
        assert!(
            e.contains("took over 0.5 s") && e.contains("sleep 300"),
            "{e}"
        );
        let pid = std::fs::read_to_string(&pidfile)
            .expect("pid")
            .trim()
            .to_string();
        // Killed by the group kill; `kill -0` fails once it is gone (reaped by init, maybe later).
        let mut gone = false;
        for _ in 0..100 {
            let alive = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| !s.contains(") Z "));
            if !alive {
                gone = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(gone, "sleep {pid} outlived its password command");
    }
}
