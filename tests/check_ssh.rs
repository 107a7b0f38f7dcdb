//! `rocetop check` against real OpenSSH sshd processes on 127.0.0.1: a healthy node, a node whose
//! host key nobody trusted, and a node where nothing listens — each named with the fix.

#[path = "common/sshd.rs"]
mod sshd;

use sshd::Sshd;
use std::process::Command;

fn user() -> String {
    let out = Command::new("id").arg("-un").output().expect("id");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn check_names_every_failure_with_its_fix() {
    let good = Sshd::start();
    let unknown = Sshd::start();
    let kh = good.path("known_hosts");
    good.trust(&kh, "ed25519");
    let sys = good.path("sys");
    let hc = sys.join("class/infiniband/mlx5_0/ports/1/hw_counters");
    std::fs::create_dir_all(&hc).expect("mkdir");
    std::fs::write(hc.join("np_cnp_sent"), "7\n").expect("write");
    let dead_port = sshd::free_port();
    let node = |name: &str, port: u16, key: &std::path::Path| {
        format!(
            "[[node]]\nname = \"{name}\"\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"{}\"\nidentity_file = \"{}\"\nsysfs_root = \"{}\"\n",
            user(),
            key.display(),
            sys.display()
        )
    };
    let cfg = format!(
        "[ssh]\nknown_hosts = \"{}\"\nconnect_timeout = \"3s\"\ncommand_timeout = \"3s\"\nssh_config = \"/nonexistent\"\n{}{}{}",
        kh.display(),
        node("node-ok", good.port, &good.client_key),
        node("node-unknown", unknown.port, &unknown.client_key),
        node("node-dead", dead_port, &good.client_key),
    );
    let path = good.path("rocetop.toml");
    std::fs::write(&path, cfg).expect("config");
    let out = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["check", "--config", path.to_str().expect("path")])
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("node-ok ").contains("OK: "), "{text}");
    assert!(line("node-ok ").contains("mlx5_0"), "{text}");
    let u = line("node-unknown");
    assert!(
        u.contains("FAILED") && u.contains("unknown host") && u.contains("SHA256:"),
        "{text}"
    );
    let d = line("node-dead");
    assert!(d.contains("FAILED") && d.contains("refused"), "{text}");
    assert_eq!(text.matches("fix: ").count(), 2, "{text}");
    assert!(text.contains("sshd running"), "{text}");
}
