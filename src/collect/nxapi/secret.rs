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
        Secret::Command(cmd) => {
            let run = tokio::process::Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .stdin(std::process::Stdio::null())
                .kill_on_drop(true)
                .output();
            let out = tokio::time::timeout(COMMAND_LIMIT, run)
                .await
                .map_err(|_| format!("password command `{cmd}` took over 10 s"))?
                .map_err(|e| format!("password command `{cmd}`: {e}"))?;
            if !out.status.success() {
                return Err(format!("password command `{cmd}` failed ({})", out.status));
            }
            let text = String::from_utf8_lossy(&out.stdout);
            match text.lines().next().filter(|l| !l.is_empty()) {
                Some(l) => Ok(l.to_string()),
                None => Err(format!("password command `{cmd}` printed nothing")),
            }
        }
    }
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
}
