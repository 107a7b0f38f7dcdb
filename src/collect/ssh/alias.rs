//! `~/.ssh/config` host aliases, read as `ssh -G` reads them (the tests compare with it):
//! `Host` and `Match` blocks, `Include`, the first value of each option winning and every
//! `IdentityFile` adding up. Only the five options a connection here uses are kept (HostName,
//! Port, User, IdentityFile, ProxyJump). Read here rather than through a crate: ssh2-config
//! builds libgit2, libssh2 and OpenSSL for its build script and applies a `Match` block's lines
//! to the `Host` block above it; russh-config reads neither `Include` nor `Match` nor options
//! before the first `Host`.

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
    /// What in the file could not be used (a bad Port, a `Match` criterion not read here), when
    /// something could not.
    pub note: Option<String>,
}

/// OpenSSH stops following `Include` this deep.
const MAX_INCLUDE_DEPTH: usize = 16;

/// Look `host` up in an ssh config file. A missing file resolves to the name itself.
pub fn resolve_alias(host: &str, ssh_config: &Path) -> ResolvedHost {
    let mut reading = Reading {
        host,
        found: Found::default(),
        notes: Vec::new(),
    };
    if let Ok(text) = std::fs::read_to_string(ssh_config) {
        reading.file(ssh_config, &text, true, 0);
    }
    let Found {
        host_name,
        port,
        user,
        identity_files,
        proxy_jump,
    } = reading.found;
    ResolvedHost {
        // OpenSSH expands %h in HostName to the name given.
        host: host_name
            .filter(|h| !h.is_empty())
            .map_or_else(|| host.to_string(), |h| h.replace("%h", host)),
        port,
        user,
        identity_files,
        proxy_jump: proxy_jump.filter(|v| !v.eq_ignore_ascii_case("none")),
        note: (!reading.notes.is_empty()).then(|| reading.notes.join("; ")),
    }
}

/// The options found so far for the host: the first value of each is the one ssh uses.
#[derive(Default)]
struct Found {
    host_name: Option<String>,
    port: Option<u16>,
    user: Option<String>,
    identity_files: Vec<PathBuf>,
    proxy_jump: Option<String>,
}

struct Reading<'a> {
    /// The name asked for (ssh's "original host").
    host: &'a str,
    found: Found,
    notes: Vec<String>,
}

impl Reading<'_> {
    /// Read one file's lines. `applies`: whether the block that included it applies (lines of
    /// a file included from a block that does not apply never do, whatever their own blocks say).
    fn file(&mut self, path: &Path, text: &str, applies: bool, depth: usize) {
        // Lines before the first Host or Match apply to every host.
        let mut active = applies;
        for (n, line) in text.lines().enumerate() {
            let Some((keyword, args)) = split_line(line) else {
                continue;
            };
            let at = || format!("{} line {}", path.display(), n + 1);
            match keyword.to_ascii_lowercase().as_str() {
                "host" => active = applies && self.host_matches(&args),
                "match" => active = applies && self.match_matches(&args, &at),
                "include" if depth >= MAX_INCLUDE_DEPTH => {
                    self.notes
                        .push(format!("{}: Include nested too deep", at()));
                }
                "include" => {
                    for file in args.iter().flat_map(|a| include_files(a)) {
                        if let Ok(t) = std::fs::read_to_string(&file) {
                            self.file(&file, &t, active, depth + 1);
                        }
                    }
                }
                _ if !active => {}
                kw => self.option(kw, &args, &at),
            }
        }
    }

    fn option(&mut self, keyword: &str, args: &[String], at: &dyn Fn() -> String) {
        let Some(first) = args.first() else {
            return;
        };
        let f = &mut self.found;
        match keyword {
            "hostname" => {
                f.host_name.get_or_insert_with(|| first.clone());
            }
            "user" => {
                f.user.get_or_insert_with(|| first.clone());
            }
            "proxyjump" => {
                f.proxy_jump.get_or_insert_with(|| first.clone());
            }
            "port" if f.port.is_none() => match first.parse() {
                Ok(p) => f.port = Some(p),
                Err(_) => self
                    .notes
                    .push(format!("{}: Port {first:?} is not a port", at())),
            },
            "identityfile" => {
                let path = expand_home(first);
                if !first.eq_ignore_ascii_case("none") && !f.identity_files.contains(&path) {
                    f.identity_files.push(path);
                }
            }
            _ => {}
        }
    }

    /// `Host` patterns, matched against the name as given: one matches and no negated one does.
    fn host_matches(&self, patterns: &[String]) -> bool {
        let neg = patterns
            .iter()
            .filter_map(|p| p.strip_prefix('!'))
            .any(|p| glob(p, self.host));
        !neg && patterns
            .iter()
            .filter(|p| !p.starts_with('!'))
            .any(|p| glob(p, self.host))
    }

    /// `Match` criteria, every one of which must hold. `host` is matched against the HostName
    /// found so far (ssh's target host), `originalhost` against the name as given, `user`
    /// against the User found so far, else the local user ([`local_user`]). A criterion that needs more than
    /// the file (`exec`, `canonical`, `final`, `localnetwork`, ...) is not read here: its block
    /// is taken not to apply, and the note says so.
    fn match_matches(&mut self, args: &[String], at: &dyn Fn() -> String) -> bool {
        let mut words = args.iter();
        let mut all = true;
        while let Some(word) = words.next() {
            let (negated, criterion) = match word.strip_prefix('!') {
                Some(c) => (true, c.to_ascii_lowercase()),
                None => (false, word.to_ascii_lowercase()),
            };
            let holds = match criterion.as_str() {
                "all" => true,
                "host" | "originalhost" | "user" | "localuser" => {
                    let Some(list) = words.next() else {
                        self.notes
                            .push(format!("{}: Match {criterion} without patterns", at()));
                        return false;
                    };
                    let subject = match criterion.as_str() {
                        "host" => match &self.found.host_name {
                            Some(h) => h.replace("%h", self.host).to_ascii_lowercase(),
                            None => self.host.to_ascii_lowercase(),
                        },
                        "originalhost" => self.host.to_string(),
                        "user" => self.found.user.clone().unwrap_or_else(local_user),
                        _ => local_user(),
                    };
                    pattern_list(list, &subject, criterion == "host")
                }
                other => {
                    self.notes.push(format!(
                        "{}: Match {other} is not read by rocetop; the block is skipped",
                        at()
                    ));
                    return false;
                }
            };
            all &= holds != negated;
        }
        all
    }
}

/// The local user, as the rest of rocetop takes it for a login with no user given: `$USER`,
/// else root.
fn local_user() -> String {
    std::env::var("USER").unwrap_or_else(|_| "root".into())
}

/// A comma-separated pattern list (`Match host a*,!ab`): one pattern matches and no negated one.
fn pattern_list(list: &str, s: &str, fold: bool) -> bool {
    let fold = |p: &str| {
        if fold {
            p.to_ascii_lowercase()
        } else {
            p.to_string()
        }
    };
    let mut hit = false;
    for p in list.split(',').filter(|p| !p.is_empty()) {
        match p.strip_prefix('!') {
            Some(neg) if glob(&fold(neg), s) => return false,
            Some(_) => {}
            None => hit |= glob(&fold(p), s),
        }
    }
    hit
}

/// A line as keyword and arguments, as ssh splits it: the keyword ends at whitespace or one `=`,
/// arguments are words or "double-quoted" runs, and a word starting with `#` ends the line.
/// `None` for a blank or comment line.
fn split_line(line: &str) -> Option<(&str, Vec<String>)> {
    let line = line.trim_start();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let end = line
        .find(|c: char| c.is_whitespace() || c == '=')
        .unwrap_or(line.len());
    let (keyword, rest) = line.split_at(end);
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('=').unwrap_or(rest);
    let mut args = Vec::new();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&c) = chars.peek() else { break };
        if c == '#' {
            break;
        }
        let mut word = String::new();
        if c == '"' {
            chars.next();
            word.extend(chars.by_ref().take_while(|&c| c != '"'));
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                word.push(c);
            }
        }
        args.push(word);
    }
    Some((keyword, args))
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

fn expand_home(p: &str) -> PathBuf {
    match p.strip_prefix("~/") {
        Some(rest) => home().join(rest),
        None => PathBuf::from(p),
    }
}

/// The files an `Include` argument names: `~` expanded, a relative path taken from `~/.ssh`,
/// `*` and `?` in any part of it matched against the directories (sorted, as glob(3) sorts).
fn include_files(arg: &str) -> Vec<PathBuf> {
    let path = expand_home(arg);
    let path = if path.is_absolute() {
        path
    } else {
        home().join(".ssh").join(path)
    };
    let mut found = vec![PathBuf::from("/")];
    for part in path.iter().skip(1) {
        let part = part.to_string_lossy();
        if !part.contains(['*', '?']) {
            found = found.into_iter().map(|d| d.join(&*part)).collect();
            continue;
        }
        let mut next = Vec::new();
        for dir in found {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut names: Vec<String> = entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                // As glob(3): a leading dot is matched only by a pattern that starts with one.
                .filter(|n| !n.starts_with('.') || part.starts_with('.'))
                .filter(|n| glob(&part, n))
                .collect();
            names.sort();
            next.extend(names.into_iter().map(|n| dir.join(n)));
        }
        found = next;
    }
    found.retain(|f| f.is_file());
    found
}

/// The `Host` lines of an ssh config file, each as its list of patterns (a missing or unreadable
/// file has none). Read once when the live screen starts: [`names_host`] then answers without I/O
/// whether a node of a fleet is one the user set up to reach (so that focus can use SSH for it).
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
    // Folded: a fleet's node names come from labels, whose case says nothing about the host.
    let host = host.to_ascii_lowercase();
    let glob = |p: &str, s: &str| glob(&p.to_ascii_lowercase(), s);
    lines.iter().any(|pats| {
        let neg = pats
            .iter()
            .filter_map(|p| p.strip_prefix('!'))
            .any(|p| glob(p, &host));
        !neg && pats
            .iter()
            .filter(|p| !p.starts_with('!') && p.chars().any(|c| c != '*' && c != '?'))
            .any(|p| glob(p, &host))
    })
}

/// OpenSSH's pattern match: `*` any run, `?` one character, the rest literal (case kept: ssh
/// matches `Host` lines against the name as typed).
fn glob(pat: &str, s: &str) -> bool {
    let (p, s): (Vec<char>, Vec<char>) = (pat.chars().collect(), s.chars().collect());
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
    fn match_blocks_include_and_key_value_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (inc, inc2) = (dir.path().join("conf.d"), dir.path().join("more"));
        std::fs::create_dir(&inc).expect("mkdir");
        std::fs::create_dir(&inc2).expect("mkdir");
        std::fs::write(inc.join("10-rack"), "Host rack*\n  Port 2201\n").expect("write");
        std::fs::write(inc.join("20-rack"), "Host rack*\n  Port 2299\n  User r\n").expect("write");
        std::fs::write(inc.join(".hidden"), "Host *\n  User hidden\n").expect("write");
        std::fs::write(inc2.join("extra"), "Port 2202\nHost nomatch\n  User n2\n").expect("write");
        let p = dir.path().join("config");
        std::fs::write(
            &p,
            format!(
                "Include {inc}/*\nHost=alias\n  HostName = Real.Example\n\
                 Match host real.example !originalhost other\n  User matched\n  \
                 IdentityFile \"/keys/a key\" # comment\nMatch exec \"true\"\n  User never\n\
                 Host nomatch\n  Include {inc2}/ext?a\nHost alias rack1\n  IdentityFile /keys/b\n  \
                 Port nope\n",
                inc = inc.display(),
                inc2 = inc2.display()
            ),
        )
        .expect("write");
        let a = resolve_alias("alias", &p);
        assert_eq!(a.host, "Real.Example");
        assert_eq!(
            a.user.as_deref(),
            Some("matched"),
            "Match host sees the HostName"
        );
        assert_eq!(
            a.identity_files,
            vec![PathBuf::from("/keys/a key"), PathBuf::from("/keys/b")]
        );
        assert_eq!(a.port, None, "a bad Port is no port");
        let note = a.note.expect("notes");
        assert!(note.contains("Match exec is not read"), "{note}");
        assert!(note.contains("Port \"nope\""), "{note}");
        let r = resolve_alias("rack1", &p);
        assert_eq!(
            (r.port, r.user.as_deref()),
            (Some(2201), Some("r")),
            "included in order, the first value wins, dot files left out"
        );
        assert_eq!(r.identity_files, vec![PathBuf::from("/keys/b")]);
        let n = resolve_alias("nomatch", &p);
        assert_eq!(
            (n.port, n.user.as_deref()),
            (Some(2202), Some("n2")),
            "a file included in a block applies to that block's hosts: {n:?}"
        );
        let o = resolve_alias("other", &p);
        assert_eq!((o.port, o.user.as_deref()), (None, None), "{o:?}");
    }

    #[test]
    fn an_include_loop_ends() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("config");
        std::fs::write(&p, format!("Include {}\nUser u\n", p.display())).expect("write");
        let r = resolve_alias("h", &p);
        assert_eq!(r.user.as_deref(), Some("u"));
        assert!(r.note.expect("note").contains("too deep"));
    }

    /// Configs compared with what the real `ssh -G` makes of them (scripts/test.sh installs
    /// openssh-client; a missing ssh fails here rather than passing without a comparison).
    #[test]
    fn resolves_as_ssh_g_does() {
        std::process::Command::new("ssh")
            .arg("-V")
            .output()
            .expect("ssh -V: this test compares with the real ssh -G");
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path().display();
        std::fs::write(
            dir.path().join("inc"),
            "Host gpu*\n  User fromfile\n  ProxyJump jump@bastion:2200\nHost *\n  IdentityFile ~/.ssh/inc\n",
        )
        .expect("write");
        let configs = [
            CONFIG.to_string(),
            "Host FOO\n  User upper\nHost foo\n  User lower\n".into(),
            "Host a\n  HostName real\nMatch host real\n  User m\nMatch originalhost a\n  Port 2\n\
             Host *\n  IdentityFile ~/.ssh/x\n  IdentityFile ~/.ssh/x\n  IdentityFile /k/y\n"
                .into(),
            format!("Port 7\nHost gpu1? !gpu13\n  HostName %h.lab\nInclude {d}/inc\nHost *\n  ProxyJump none\n"),
            "Match !host b*,c all\n  User notb\nHost=b1\n  Port=99\nMatch user root,nobody\n  HostName viauser\n"
                .into(),
            "Host x\n  User \"quoted user\"\n  IdentityFile \"/k/with space\"\n".into(),
        ];
        let hosts = [
            "ubunturdma1",
            "bastion",
            "foo",
            "FOO",
            "a",
            "gpu12",
            "gpu13",
            "b1",
            "c",
            "x",
            "other",
        ];
        let home = home();
        // `Match user` needs the local user as ssh knows it.
        let id = std::process::Command::new("id").arg("-un").output();
        let local_known =
            id.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == local_user());
        for (i, text) in configs.iter().enumerate() {
            if text.contains("Match user") && !local_known {
                continue;
            }
            let p = dir.path().join(format!("config{i}"));
            std::fs::write(&p, text).expect("write");
            for host in hosts {
                let out = std::process::Command::new("ssh")
                    .arg("-G")
                    .arg("-F")
                    .arg(&p)
                    .arg(host)
                    .output()
                    .expect("ssh -G");
                assert!(
                    out.status.success(),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let text = String::from_utf8_lossy(&out.stdout);
                let field = |k: &str| -> Vec<String> {
                    text.lines()
                        .filter_map(|l| l.strip_prefix(k)?.strip_prefix(' '))
                        .map(str::to_string)
                        .collect()
                };
                let ours = resolve_alias(host, &p);
                let what = format!("config{i} {host}: {ours:?}\n{text}");
                assert_eq!(
                    ours.host.to_ascii_lowercase(),
                    field("hostname")[0],
                    "{what}"
                );
                assert_eq!(
                    ours.port.unwrap_or(22).to_string(),
                    field("port")[0],
                    "{what}"
                );
                if let Some(u) = &ours.user {
                    assert_eq!(&field("user")[0], u, "{what}");
                }
                assert_eq!(
                    ours.proxy_jump,
                    field("proxyjump").first().cloned(),
                    "{what}"
                );
                if !ours.identity_files.is_empty() {
                    let theirs: Vec<PathBuf> = field("identityfile")
                        .iter()
                        .map(|f| match f.strip_prefix("~/") {
                            Some(rest) => home.join(rest),
                            None => PathBuf::from(f),
                        })
                        .collect();
                    assert_eq!(ours.identity_files, theirs, "{what}");
                }
            }
        }
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
