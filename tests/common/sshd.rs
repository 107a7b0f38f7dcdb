//! Test harness: a real OpenSSH `sshd` on 127.0.0.1 at a free high port, with its own host key,
//! client key, authorized_keys and sshd_config in a temp dir; killed (with its per-connection
//! children) on Drop. Also an `ssh-agent` holding a key. Only loopback, only our own processes.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("spawn");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `ssh-keygen -t <kind>` without a passphrase (or with one).
pub fn keygen(path: &Path, kind: &str, passphrase: &str) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(path.with_extension("pub"));
    run(Command::new("ssh-keygen")
        .args([
            "-q",
            "-t",
            kind,
            "-N",
            passphrase,
            "-C",
            "rocetop-test",
            "-f",
        ])
        .arg(path));
}

pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub force_command: Option<String>,
    /// Extra sshd_config lines.
    pub extra: Vec<String>,
    /// Host key types (default: ed25519).
    pub host_keys: Vec<&'static str>,
    pub port: Option<u16>,
}

pub struct Sshd {
    pub port: u16,
    pub dir: tempfile::TempDir,
    /// The client key in authorized_keys.
    pub client_key: PathBuf,
    child: Option<Child>,
    opts: Options,
}

impl Sshd {
    pub fn start() -> Sshd {
        Sshd::with(Options::default())
    }

    pub fn with(mut opts: Options) -> Sshd {
        if opts.host_keys.is_empty() {
            opts.host_keys = vec!["ed25519"];
        }
        std::fs::create_dir_all("/run/sshd").expect("privsep dir");
        let dir = tempfile::tempdir().expect("tempdir");
        for k in &opts.host_keys {
            keygen(&dir.path().join(format!("hostkey_{k}")), k, "");
        }
        let client_key = dir.path().join("id_ed25519");
        keygen(&client_key, "ed25519", "");
        std::fs::copy(
            client_key.with_extension("pub"),
            dir.path().join("authorized_keys"),
        )
        .expect("authorized_keys");
        // sshd reads authorized_keys as the login user, which may not be the test's user.
        run(Command::new("chmod").arg("755").arg(dir.path()));
        run(Command::new("chmod")
            .arg("644")
            .arg(dir.path().join("authorized_keys")));
        let port = opts.port.unwrap_or_else(free_port);
        let mut s = Sshd {
            port,
            dir,
            client_key,
            child: None,
            opts,
        };
        s.write_config();
        s.spawn();
        s
    }

    fn write_config(&self) {
        let d = self.dir.path();
        // sshd keeps the first value of a keyword: the test's extra lines go first.
        let mut c: Vec<String> = self.opts.extra.clone();
        c.extend([
            format!("Port {}", self.port),
            "ListenAddress 127.0.0.1".into(),
            format!("AuthorizedKeysFile {}", d.join("authorized_keys").display()),
            format!("PidFile {}", d.join("sshd.pid").display()),
            "PasswordAuthentication no".into(),
            "KbdInteractiveAuthentication no".into(),
            "StrictModes no".into(),
            "UsePAM no".into(),
            "MaxStartups 600:30:1000".into(),
            "PermitRootLogin yes".into(),
            "LogLevel VERBOSE".into(),
            // Debian's bash sources ~/.bashrc for an sshd-started `bash -c` only at SHLVL < 2. The
            // login user's rc (pyenv's rehash with its lock, conda init, ...) is no part of what
            // these tests measure, and a lock left by a killed session stalled every later exec.
            "SetEnv SHLVL=1".into(),
        ]);
        for k in &self.opts.host_keys {
            c.push(format!(
                "HostKey {}",
                d.join(format!("hostkey_{k}")).display()
            ));
        }
        if let Some(f) = &self.opts.force_command {
            c.push(format!("ForceCommand {f}"));
        }
        std::fs::write(d.join("sshd_config"), c.join("\n") + "\n").expect("sshd_config");
    }

    fn spawn(&mut self) {
        let d = self.dir.path();
        let child = Command::new("/usr/sbin/sshd")
            .arg("-D")
            .arg("-f")
            .arg(d.join("sshd_config"))
            .arg("-E")
            .arg(d.join("log"))
            .stdin(Stdio::null())
            .spawn()
            .expect("sshd");
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < until, "sshd did not start: {}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kill sshd and every connection it serves (its child processes), as a crash would.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let pid = c.id();
            for kid in descendants(pid) {
                let _ = Command::new("kill").arg("-9").arg(kid.to_string()).status();
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Freeze (SIGSTOP) or thaw (SIGCONT) every connection this sshd serves, not the listener: a
    /// peer whose TCP stays open while nothing answers, as a hung host or a dead link looks.
    pub fn signal_connections(&self, sig: &str) {
        if let Some(c) = &self.child {
            for kid in descendants(c.id()) {
                let _ = Command::new("kill").arg(sig).arg(kid.to_string()).status();
            }
        }
    }

    /// Start again on the same port with the same keys.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// A new host key (as a reinstalled host would have), then restart.
    pub fn change_host_key(&mut self) {
        for k in self.opts.host_keys.clone() {
            keygen(&self.dir.path().join(format!("hostkey_{k}")), k, "");
        }
        self.restart();
    }

    pub fn host_pub(&self, kind: &str) -> String {
        let p = self.dir.path().join(format!("hostkey_{kind}.pub"));
        let s = std::fs::read_to_string(p).expect("host pub");
        s.split_whitespace().take(2).collect::<Vec<_>>().join(" ")
    }

    /// `[127.0.0.1]:port ssh-ed25519 AAAA...`
    pub fn known_hosts_line(&self, kind: &str) -> String {
        format!("[127.0.0.1]:{} {}", self.port, self.host_pub(kind))
    }

    /// Append this sshd's host key (of `kind`) to a known_hosts file.
    pub fn trust(&self, known_hosts: &Path, kind: &str) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(known_hosts)
            .expect("known_hosts");
        writeln!(f, "{}", self.known_hosts_line(kind)).expect("write");
    }

    /// Connections being served now: sshd's child processes (one per connection, before auth
    /// too), not counting their shells.
    pub fn connections(&self) -> usize {
        self.child.as_ref().map_or(0, |c| children(c.id()).len())
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("log")).unwrap_or_default()
    }

    /// Connections that authenticated with a key.
    pub fn accepted(&self) -> usize {
        self.log().matches("Accepted publickey").count()
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Every process below `pid` (connections, their shells and commands).
fn descendants(pid: u32) -> Vec<u32> {
    let mut out = children(pid);
    let mut i = 0;
    while let Some(&p) = out.get(i) {
        out.extend(children(p));
        i += 1;
    }
    out
}

/// Child pids of `pid`, from /proc.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in rd.flatten() {
        let Some(p) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: comm may hold spaces, so read after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(p);
        }
    }
    out
}

/// An `ssh-agent` on a socket in its own temp dir, holding the given keys.
pub struct Agent {
    pub socket: PathBuf,
    _dir: tempfile::TempDir,
    child: Child,
}

impl Agent {
    pub fn start(keys: &[&Path]) -> Agent {
        let dir = tempfile::tempdir().expect("tempdir");
        let socket = dir.path().join("agent.sock");
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&socket)
            .stdout(Stdio::null())
            .stdin(Stdio::null())
            .spawn()
            .expect("ssh-agent");
        let until = Instant::now() + Duration::from_secs(5);
        while !socket.exists() {
            assert!(Instant::now() < until, "ssh-agent did not start");
            std::thread::sleep(Duration::from_millis(10));
        }
        for k in keys {
            run(Command::new("ssh-add")
                .arg("-q")
                .arg(k)
                .env("SSH_AUTH_SOCK", &socket));
        }
        Agent {
            socket,
            _dir: dir,
            child,
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The login the tests run as (`id -un`): the user the harness's sshd lets in with its key.
pub fn current_user() -> String {
    let o = Command::new("id").arg("-un").output().expect("id");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A non-root login for tests that need one (sshd signals sessions only with privilege
/// separation, which OpenSSH skips for root; password auth). Created when the tests run as
/// root (the issue allows a throwaway user); otherwise the current user, without a password.
/// Returns the name and whether it has the password `TEST_PASSWORD`.
pub fn unprivileged_user() -> (String, bool) {
    static USER: std::sync::OnceLock<(String, bool)> = std::sync::OnceLock::new();
    USER.get_or_init(|| {
        let id = |arg: &str| {
            let o = Command::new("id").arg(arg).output().expect("id");
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        };
        if id("-u") != "0" {
            return (id("-un"), false);
        }
        let name = "rocetoptest";
        let exists = Command::new("id")
            .arg(name)
            .output()
            .is_ok_and(|o| o.status.success());
        if !exists {
            run(Command::new("useradd").args(["-M", "-s", "/bin/sh", name]));
        }
        let mut c = Command::new("chpasswd")
            .stdin(Stdio::piped())
            .spawn()
            .expect("chpasswd");
        if let Some(mut i) = c.stdin.take() {
            use std::io::Write;
            writeln!(i, "{name}:{TEST_PASSWORD}").expect("chpasswd input");
        }
        let ok = c.wait().is_ok_and(|s| s.success());
        (name.to_string(), ok)
    })
    .clone()
}

pub const TEST_PASSWORD: &str = "rocetop-test-pw-31";
