//! Dumps that print a file's name on one line and its value on the next:
//!
//! - `head` / `tail -n +1` of several files: `==> /sys/.../hw_counters/out_of_buffer <==`;
//! - a loop that echoes a banner: `=== ./port_rcv_data ===` (and `cat "$file"`);
//! - `for f in ...; do echo $f; cat $f; done` and `find ... -print -exec cat {} \;`: the bare path;
//! - `cat /sys/.../hw_counters/rx_bytes` with one file, the command echoed after a prompt.
//!
//! A banner names the file; the next non-blank line that is no banner, command or `path:value`
//! line is its value, read as `path:value`. A banner with no value after it (an empty file, a
//! `cat:` error) names nothing.

use super::{classify, split_line};
use crate::parse::host::prompt;

/// The file a banner line names, if it is one.
pub(super) fn path(line: &str) -> Option<&str> {
    let t = line.trim();
    if let Some(inner) = t
        .strip_prefix("==> ")
        .and_then(|r| r.strip_suffix(" <=="))
        .or_else(|| t.strip_prefix("=== ").and_then(|r| r.strip_suffix(" ===")))
    {
        let inner = inner.trim();
        return file(inner).then_some(inner);
    }
    // `cat FILE`, `head FILE`, after a prompt or not: one file, so no banner of its own.
    let words = prompt::after_prompt(t).unwrap_or_else(|| t.split_whitespace().collect());
    let start = usize::from(words.first() == Some(&"sudo"));
    match words.get(start..).unwrap_or_default() {
        [prog, one] if matches!(*prog, "cat" | "head" | "tail") && file(one) => return Some(one),
        _ => {}
    }
    (!t.contains(char::is_whitespace) && file(t)).then_some(t)
}

/// A counter file's path: a sysfs path the dump parser knows, or `./name` (relative to where a
/// prompt or `cd` said the listing is).
fn file(p: &str) -> bool {
    let name = p.rsplit('/').next().unwrap_or(p);
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return false;
    }
    match p.strip_prefix("./") {
        Some(rest) => rest == name,
        None => classify(p).is_some(),
    }
}

/// Whether `line` can be the value of the file a banner named: no banner itself, no prompt or
/// command, no `path:value` line.
pub(super) fn is_value(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty()
        && !t.starts_with('#')
        && path(t).is_none()
        && prompt::after_prompt(t).is_none()
        && !t
            .split_whitespace()
            .next()
            .is_some_and(super::relative::is_command)
        && split_line(t).is_none()
        && !t.contains("infiniband/")
}

/// A tool's error about a file (`cat: /sys/.../port_rcv_data: Invalid argument`): the file could
/// not be read, which is no counter and no value.
pub(super) fn is_tool_error(line: &str) -> bool {
    ["cat: ", "head: ", "tail: ", "grep: ", "find: "]
        .iter()
        .any(|p| line.trim_start().starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn banners_name_files() {
        let p = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_buffer";
        assert_eq!(path(&format!("==> {p} <==")), Some(p));
        assert_eq!(path("=== ./port_rcv_data ==="), Some("./port_rcv_data"));
        assert_eq!(path(p), Some(p));
        assert_eq!(path(&format!("# cat {p}")), Some(p));
        assert_eq!(path(&format!("root@n1:~# head {p}")), Some(p));
        // a value, a grep line, a directory, prose: no banners
        for l in [
            "240037171331",
            &format!("{p}:7"),
            "/sys/class/infiniband/mlx5_0/ports/1/hw_counters",
            "=== done ===",
            "cat a b",
        ] {
            assert_eq!(path(l), None, "{l}");
        }
        assert!(is_value("240037171331"));
        assert!(is_value("N/A (no PMA)"));
        assert!(!is_value(&format!("{p}:7")));
        assert!(!is_value("done"));
        assert!(is_tool_error(&format!("cat: {p}: Invalid argument")));
    }
}
