//! A node's requests of one poll (sysfs dump, `ethtool -S` of each netdev, a log tail) in ONE exec:
//! one channel and one shell a poll instead of one per request, on both ends. Each part's output
//! is followed by a marker line carrying a per-poll nonce (so no output can forge one) and the
//! part's exit status; `split` gives every request back its own output or its own error.

use crate::collect::transport::CollectError;

/// A nonce that differs between polls and processes (hashed clock + a random std hasher seed).
pub fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", h.finish())
}

fn marker(nonce: &str, i: usize) -> String {
    format!("@@rocetop-{nonce}-{i}")
}

/// One shell command running `cmds` in order. Each part's stderr joins its stdout, so a failing
/// part's message stays with it; its status is printed on the marker line after it.
pub fn join(cmds: &[String], nonce: &str) -> String {
    let mut s = String::new();
    for (i, c) in cmds.iter().enumerate() {
        // A newline before `}` ends the part's command list whatever it ends with.
        s.push_str(&format!(
            "{{ {c}\n}} 2>&1; printf '\\n%s %s\\n' '{}' \"$?\"; ",
            marker(nonce, i)
        ));
    }
    s.push_str("true");
    s
}

/// The outputs of `n` parts from the batch's output: a part that exited non-zero is a
/// `Command` error with the end of what it printed; a part with no marker (the batch was cut
/// short) is an error saying so.
pub fn split(out: &str, nonce: &str, n: usize) -> Vec<Result<String, CollectError>> {
    let mut res = Vec::with_capacity(n);
    let mut rest = out;
    for i in 0..n {
        let m = format!("\n{} ", marker(nonce, i));
        // memmem's vectorised search: `str::find` of a string pattern (Two-Way) over a node's
        // ~70 KB dump a second was ~3% of `rocetop export`'s CPU (perf, bench/perf.sh N=8).
        // The match starts at an ASCII '\n', so `at` is a char boundary.
        let Some(at) = memchr::memmem::find(rest.as_bytes(), m.as_bytes()) else {
            res.push(Err(CollectError::Io(
                "the batched command ended before this part answered".into(),
            )));
            // Later parts cannot have answered either.
            rest = "";
            continue;
        };
        let text = &rest[..at];
        let after = &rest[at + m.len()..];
        let (status, next) = after.split_once('\n').unwrap_or((after, ""));
        let status = status.trim();
        res.push(if status == "0" {
            Ok(text.to_string())
        } else {
            Err(CollectError::Command {
                status: format!("exit {status}"),
                // The same message an unbatched command would give.
                stderr: super::conn::tail_text(b"", text.as_bytes()),
            })
        });
        rest = next;
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn sh(cmd: &str) -> String {
        let out = Command::new("sh").arg("-c").arg(cmd).output().expect("sh");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    #[test]
    fn each_part_gets_its_own_output_and_status() {
        let cmds = vec![
            "printf 'a:1\\nb:2\\n'; true".to_string(),
            "echo no newline at the end | tr -d '\\n'".to_string(),
            "echo 'cannot read x' >&2; (exit 3)".to_string(),
            "printf ''".to_string(),
        ];
        let n = nonce();
        let parts = split(&sh(&join(&cmds, &n)), &n, cmds.len());
        assert_eq!(
            parts[0].as_ref().ok().map(String::as_str),
            Some("a:1\nb:2\n")
        );
        assert_eq!(
            parts[1].as_ref().ok().map(String::as_str),
            Some("no newline at the end")
        );
        match &parts[2] {
            Err(CollectError::Command { status, stderr }) => {
                assert_eq!(status, "exit 3");
                assert_eq!(stderr, "cannot read x");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(parts[3].as_ref().ok().map(String::as_str), Some(""));
    }

    #[test]
    fn output_cannot_forge_a_marker_and_a_cut_batch_says_so() {
        let n = nonce();
        // A part printing a marker of another nonce is just output.
        let cmds = vec!["echo; echo '@@rocetop-0000000000000000-1 0'".to_string()];
        let parts = split(&sh(&join(&cmds, &n)), &n, 1);
        assert_eq!(
            parts[0].as_ref().ok().map(String::as_str),
            Some("\n@@rocetop-0000000000000000-1 0\n")
        );
        // Output cut after the first part: the second is an error, not empty data.
        let cut = format!("x\n\n@@rocetop-{n}-0 0\npartial");
        let parts = split(&cut, &n, 2);
        assert_eq!(parts[0].as_ref().ok().map(String::as_str), Some("x\n"));
        assert!(matches!(parts[1], Err(CollectError::Io(_))));
        assert_ne!(nonce(), nonce());
    }
}
