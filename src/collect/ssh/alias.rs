//! `~/.ssh/config` host aliases through ssh2-config (it matched `ssh -G` on realistic files;
//! docs/architecture.md). ssh2-config stores ProxyJump as an "unsupported" field, read from there.

use ssh2_config::{ParseRule, SshConfig};
use std::path::{Path, PathBuf};

/// What `~/.ssh/config` says about a host name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResolvedHost {
    /// HostName, or the name itself.
    pub host: String,
    pub port: Option<u16>,
    pub user: Option<String>,
    pub identity_files: Vec<PathBuf>,
    /// The raw ProxyJump value (`user@jump:2222` or a comma-separated chain), `none` dropped.
    pub proxy_jump: Option<String>,
    /// Why the file could not be used, when it exists but does not parse.
    pub note: Option<String>,
}

/// Look `host` up in an ssh config file. A missing file resolves to the name itself.
pub fn resolve_alias(host: &str, ssh_config: &Path) -> ResolvedHost {
    let mut r = ResolvedHost {
        host: host.to_string(),
        ..ResolvedHost::default()
    };
    let Ok(f) = std::fs::File::open(ssh_config) else {
        return r;
    };
    let mut reader = std::io::BufReader::new(f);
    let rules = ParseRule::ALLOW_UNKNOWN_FIELDS | ParseRule::ALLOW_UNSUPPORTED_FIELDS;
    let cfg = match SshConfig::default().parse(&mut reader, rules) {
        Ok(c) => c,
        Err(e) => {
            r.note = Some(format!("{}: {e}", ssh_config.display()));
            return r;
        }
    };
    let p = cfg.query(host);
    if let Some(h) = p.host_name.filter(|h| !h.is_empty()) {
        // OpenSSH expands %h in HostName to the name given.
        r.host = h.replace("%h", host);
    }
    r.port = p.port;
    r.user = p.user;
    r.identity_files = p.identity_file.unwrap_or_default();
    r.proxy_jump = p
        .unsupported_fields
        .get("proxyjump")
        .and_then(|v| v.first())
        .filter(|v| !v.eq_ignore_ascii_case("none"))
        .cloned();
    r
}

/// The `Host` lines of an ssh config file, each as its list of patterns (a missing or unreadable
/// file has none). Read once when the live screen starts: [`names_host`] then answers without I/O
/// whether a node of a fleet is one the user set up to reach (focus, issue #17).
pub fn host_lines(ssh_config: &Path) -> Vec<Vec<String>> {
    let Ok(text) = std::fs::read_to_string(ssh_config) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let (kw, rest) = l.split_once(|c: char| c.is_whitespace() || c == '=')?;
            kw.eq_ignore_ascii_case("host")
                .then(|| rest.split_whitespace().map(str::to_string).collect())
        })
        .collect()
}

/// Whether a `Host` line names `host` explicitly: one of its patterns matches and none of its
/// negated ones (`!pattern`) does. A pattern that is only wildcards (`Host *`: defaults for
/// every host) names nothing, so a catch-all block does not make every fleet node reachable.
pub fn names_host(lines: &[Vec<String>], host: &str) -> bool {
    lines.iter().any(|pats| {
        let neg = pats
            .iter()
            .filter_map(|p| p.strip_prefix('!'))
            .any(|p| glob(p, host));
        !neg && pats
            .iter()
            .filter(|p| !p.starts_with('!') && p.chars().any(|c| c != '*' && c != '?'))
            .any(|p| glob(p, host))
    })
}

/// OpenSSH's pattern match: `*` any run, `?` one character, the rest literal (ASCII case
/// folded, as ssh folds host names).
fn glob(pat: &str, s: &str) -> bool {
    let (p, s): (Vec<char>, Vec<char>) = (
        pat.to_ascii_lowercase().chars().collect(),
        s.to_ascii_lowercase().chars().collect(),
    );
    // Iterative match with one backtrack point (the last `*`).
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < s.len() {
        if i < p.len() && (p[i] == '?' || p[i] == s[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(st) = star {
            i = st + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// `user@host:port`, `host:port`, `[v6]:port`, `ssh://user@host:port` → parts.
pub fn parse_jump(spec: &str) -> (Option<String>, String, Option<u16>) {
    let s = spec.trim().trim_start_matches("ssh://");
    let (user, rest) = match s.rsplit_once('@') {
        Some((u, r)) => (Some(u.to_string()), r),
        None => (None, s),
    };
    if let Some(v6) = rest.strip_prefix('[')
        && let Some((h, p)) = v6.split_once(']')
    {
        let port = p.strip_prefix(':').and_then(|p| p.parse().ok());
        return (user, h.to_string(), port);
    }
    match rest.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') => (user, h.to_string(), p.parse().ok()),
        _ => (user, rest.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "\
# options before the first Host (russh-config fails on these)
ServerAliveInterval 5
Host ubunturdma1
    HostName 192.0.2.152
    User versa
    IdentityFile ~/.ssh/id_lab
    ProxyJump jump@bastion:2200
Host bastion
    HostName 127.0.0.1
    Port 2200
Host *
    User fallback
";

    #[test]
    fn alias_gives_hostname_user_port_identity_and_jump() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("config");
        std::fs::write(&p, CONFIG).expect("write");
        let r = resolve_alias("ubunturdma1", &p);
        assert_eq!(r.host, "192.0.2.152");
        assert_eq!(r.user.as_deref(), Some("versa"));
        assert_eq!(r.port, None);
        assert_eq!(r.identity_files.len(), 1);
        assert!(r.identity_files[0].ends_with(".ssh/id_lab"));
        assert_eq!(r.proxy_jump.as_deref(), Some("jump@bastion:2200"));
        let b = resolve_alias("bastion", &p);
        assert_eq!(
            (b.host.as_str(), b.port, b.user.as_deref()),
            ("127.0.0.1", Some(2200), Some("fallback"))
        );
        let none = resolve_alias("other", &dir.path().join("missing"));
        assert_eq!(none.host, "other");
        assert_eq!(none.user, None);
    }

    #[test]
    fn jump_specs() {
        assert_eq!(
            parse_jump("a@b:22"),
            (Some("a".into()), "b".into(), Some(22))
        );
        assert_eq!(parse_jump("b"), (None, "b".into(), None));
        assert_eq!(parse_jump("[::1]:2222"), (None, "::1".into(), Some(2222)));
        assert_eq!(
            parse_jump("ssh://u@h:7"),
            (Some("u".into()), "h".into(), Some(7))
        );
    }

    #[test]
    fn ssh_config_builds_the_jump_chain() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("config");
        std::fs::write(&p, CONFIG).expect("write");
        let mut t = super::super::SshTarget::new("n1", "ubunturdma1", 22, "me");
        t.apply_ssh_config(&p);
        assert_eq!(
            (t.host.as_str(), t.user.as_str(), t.port),
            ("192.0.2.152", "versa", 22)
        );
        let j = t.proxy_jump.as_ref().expect("jump");
        assert_eq!(
            (j.host.as_str(), j.user.as_str(), j.port),
            ("127.0.0.1", "jump", 2200)
        );
        assert!(j.proxy_jump.is_none());
    }

    #[test]
    fn explicit_host_lines_name_a_host_and_catch_alls_do_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("config");
        std::fs::write(
            &p,
            format!("{CONFIG}Host gpu1? !gpu13\n    User x\nhost=rack7-*\n"),
        )
        .expect("write");
        let l = host_lines(&p);
        assert_eq!(l.len(), 5, "{l:?}");
        assert!(names_host(&l, "ubunturdma1"));
        assert!(names_host(&l, "UbuntuRDMA1"), "host names fold case");
        assert!(names_host(&l, "gpu17"));
        assert!(!names_host(&l, "gpu13"), "negated");
        assert!(!names_host(&l, "gpu170"), "? is one character");
        assert!(names_host(&l, "rack7-n3"));
        assert!(!names_host(&l, "other"), "Host * names nothing");
        assert!(host_lines(&dir.path().join("missing")).is_empty());
    }
}
