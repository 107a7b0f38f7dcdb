//! Fault suite: secrets never printed; `export` binds loopback by default;
//! identity files others can read are warned about. (Host keys, plaintext passwords and shell
//! metacharacters are proven in tests/ssh/ssh_transport.rs and src/config/validate/tests.rs.)
//!
//! The switches below really fetch their passwords (from an environment variable and from a
//! command) and really offer them to an sshd on 127.0.0.1 that refuses them, so every path a
//! password takes is exercised; its value must then appear in no output, file or message.

use crate::sshd;

use rocetop::collect::poll::poll_all;
use rocetop::collect::source::build;
use rocetop::config::Config;
use rocetop::metrics::Store;
use sshd::{Options, Sshd};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_rocetop");
const ENV_SECRET: &str = "env-secret-Qx7vT2pL9";
const CMD_SECRET: &str = "cmd-secret-Hh4mW8zR1";
const VAR: &str = "ROCETOP_FAULTS_SWITCH_PW";

struct Setup {
    _sshd: Sshd,
    dir: tempfile::TempDir,
    config: PathBuf,
}

fn setup() -> Setup {
    let s = Sshd::with(Options {
        extra: vec![
            "PasswordAuthentication yes".into(),
            "KbdInteractiveAuthentication yes".into(),
        ],
        ..Default::default()
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let kh = dir.path().join("known_hosts");
    s.trust(&kh, "ed25519");
    let pw_file = dir.path().join("pw");
    std::fs::write(&pw_file, CMD_SECRET).expect("pw");
    let key = dir.path().join("id_loose");
    sshd::keygen(&key, "ed25519", "");
    // An identity file anyone may read: warned about, still used.
    Command::new("chmod")
        .arg("644")
        .arg(&key)
        .status()
        .expect("chmod");
    let text = format!(
        "[ssh]\nknown_hosts = \"{kh}\"\nssh_config = \"{none}\"\nconnect_timeout = \"3s\"\n\
         command_timeout = \"3s\"\nidentity_file = \"{key}\"\n\
         [poll]\ninterval = \"1s\"\n\
         [[switch]]\nname = \"sw_env\"\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"nosuchuser\"\n\
         os = \"nxos\"\npassword_env = \"{VAR}\"\nports = [\"Ethernet1/1/1\"]\n\
         [[switch]]\nname = \"sw_cmd\"\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"nosuchuser\"\n\
         os = \"nxos\"\npassword_command = \"cat {pw}\"\nports = [\"Ethernet1/1/1\"]\n",
        kh = kh.display(),
        none = dir.path().join("no_ssh_config").display(),
        key = key.display(),
        port = s.port,
        pw = pw_file.display(),
    );
    let config = dir.path().join("config.toml");
    std::fs::write(&config, text).expect("config");
    Setup {
        _sshd: s,
        dir,
        config,
    }
}

fn rocetop(s: &Setup, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--config")
        .arg(&s.config)
        .env(VAR, ENV_SECRET)
        .env_remove("SSH_AUTH_SOCK")
        .current_dir(s.dir.path())
        .stdin(Stdio::null())
        .output()
        .expect("run rocetop")
}

fn assert_clean(what: &str, bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for secret in [ENV_SECRET, CMD_SECRET] {
        assert!(!text.contains(secret), "{what} holds a password:\n{text}");
    }
}

/// Every file under `p`, gzip members decompressed, as bytes.
fn contents(p: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    if p.is_dir() {
        for e in std::fs::read_dir(p).expect("dir").flatten() {
            out.extend(contents(&e.path()));
        }
        return out;
    }
    let raw = std::fs::read(p).expect("read");
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut d = flate2::read::MultiGzDecoder::new(&raw[..]);
        let _ = d.read_to_end(&mut out);
    }
    out.extend(raw);
    out
}

#[test]
fn passwords_appear_in_no_snapshot_check_recording_or_message() {
    let s = setup();
    let snap = rocetop(&s, &["snapshot", "--format", "json"]);
    assert!(!snap.status.success(), "the switches refuse: a failure");
    let err = String::from_utf8_lossy(&snap.stderr);
    assert!(err.contains("auth"), "the password was tried: {err}");
    assert_clean("snapshot stdout", &snap.stdout);
    assert_clean("snapshot stderr", &snap.stderr);
    let table = rocetop(&s, &["snapshot", "--format", "prom"]);
    assert_clean("snapshot prom", &table.stdout);
    assert_clean("snapshot prom stderr", &table.stderr);

    let check = rocetop(&s, &["check"]);
    assert_clean("check stdout", &check.stdout);
    assert_clean("check stderr", &check.stderr);
    assert!(
        String::from_utf8_lossy(&check.stdout).contains("sw_env"),
        "check names the switch: {}",
        String::from_utf8_lossy(&check.stdout)
    );

    let rec = s.dir.path().join("s.rec");
    let r = rocetop(
        &s,
        &[
            "record",
            "--duration",
            "2s",
            "--out",
            rec.to_str().expect("utf8"),
        ],
    );
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_clean("record stderr", &r.stderr);
    assert_clean("recording", &contents(&rec));
    let rep = Command::new(BIN)
        .args(["replay", "--format", "json"])
        .arg(&rec)
        .output()
        .expect("replay");
    assert_clean("replay", &rep.stdout);
}

#[tokio::test]
async fn an_incident_bundle_holds_no_password() {
    let s = setup();
    // In-process the env variable is not set (set_var is unsafe, and unsafe is denied): sw_cmd's
    // command still fetches its password and offers it.
    let cfg = Config::load(Some(&s.config), false).expect("config");
    let mut store = Store::new(60_000, 100);
    let sources: Vec<Arc<_>> = build(&cfg, &mut store, rocetop::cmd::remote())
        .into_iter()
        .map(Arc::new)
        .collect();
    for c in poll_all(&sources).await {
        assert!(c.error.is_some(), "refused");
        assert_clean("poll error", format!("{:?}", c.error).as_bytes());
        c.apply(&mut store);
    }
    let out = tempfile::tempdir().expect("out");
    let alerts = vec!["CRIT sw_env source down".to_string()];
    let bundle =
        rocetop::bundle::write_bundle(out.path(), &cfg, &store, &[], &alerts).expect("bundle");
    let bytes = contents(&bundle);
    assert!(!bytes.is_empty());
    assert_clean("bundle", &bytes);
}

#[test]
fn loose_identity_files_are_warned_about() {
    let s = setup();
    for args in [&["check"][..], &["snapshot", "--format", "json"][..]] {
        let o = rocetop(&s, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("id_loose") && err.contains("chmod 600"),
            "{args:?}: no warning about the loose key:\n{err}"
        );
    }
}

/// The default address is loopback (read from the binary's own help, not from a constant of this
/// test), and a host name given to --listen stays on loopback too. No fixed port is bound: the
/// default's port is shared with any exporter on this machine, so the listening run uses port 0.
#[test]
fn export_listens_on_loopback_by_default() {
    let help = Command::new(BIN)
        .args(["export", "--help"])
        .output()
        .expect("help");
    let help = String::from_utf8_lossy(&help.stdout);
    let default = help
        .split("--listen")
        .nth(1)
        .and_then(|r| r.split("[default: ").nth(1))
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no default in {help}"));
    let addr = rocetop::cmd::export::parse_listen(default).expect("default parses");
    assert!(addr.ip().is_loopback(), "default {default} is not loopback");
    let s = setup();
    let mut child = Command::new(BIN)
        .args(["export", "--demo", "--listen", "localhost:0"])
        .current_dir(s.dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("export");
    let pid = child.id();
    let until = Instant::now() + Duration::from_secs(20);
    let listening = loop {
        let ss = Command::new("ss").args(["-ltnpH"]).output().expect("ss");
        let text = String::from_utf8_lossy(&ss.stdout).to_string();
        let mine: Vec<String> = text
            .lines()
            .filter(|l| l.contains(&format!("pid={pid},")))
            .map(str::to_string)
            .collect();
        if !mine.is_empty() {
            break mine;
        }
        assert!(Instant::now() < until, "export never listened:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let _ = child.wait();
    for l in &listening {
        let local = l.split_whitespace().nth(3).unwrap_or("");
        assert!(
            local.starts_with("127.0.0.1:") || local.starts_with("[::1]:"),
            "export listens beyond loopback: {l}"
        );
    }
}
