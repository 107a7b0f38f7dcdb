//! `rocetop check` through the binary against real OpenSSH sshd processes on 127.0.0.1.
//!
//! Each "host" is its own sshd whose ForceCommand runs the request with a PATH of our choosing
//! (so a host can lack `ethtool`) and answers NX-OS `show` commands from the repo's fixtures (so
//! one can be the switch). Checked: a source that answers but gives its tabs nothing is a
//! failure with its cause and fix; every RoCE consistency check both reports its problem and
//! passes; "consistent" is never said over missing data; check runs once (no "retrying").

use crate::sshd;

use sshd::{Options, Sshd};
use std::path::{Path, PathBuf};
use std::process::Command;

const NXOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos/synthetic");
const ETHTOOL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/linux/ethtool-S_mlx5_pfc-prio3_synthetic.txt"
);

fn write_exec(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
    let ok = Command::new("chmod")
        .arg("755")
        .arg(path)
        .status()
        .expect("chmod");
    assert!(ok.success());
}

/// What a host's shell finds on its PATH.
#[derive(Clone, Copy, PartialEq)]
enum Tools {
    /// grep, tail, cat and an `ethtool` printing an mlx5 NIC with PFC on priority 3.
    EthtoolPfc3,
    /// The same NIC with PFC off everywhere (mlx5 then prints no `rx_prioN_pause`).
    EthtoolNoPfc,
    /// No ethtool at all.
    NoEthtool,
}

/// A temp dir with the hosts, their sysfs trees and one known_hosts trusting them all.
struct Lab {
    dir: tempfile::TempDir,
    known_hosts: PathBuf,
    hosts: Vec<Sshd>,
}

impl Lab {
    fn new() -> Lab {
        let dir = tempfile::tempdir().expect("tempdir");
        let known_hosts = dir.path().join("known_hosts");
        Lab {
            dir,
            known_hosts,
            hosts: Vec::new(),
        }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// A sysfs tree with one mlx5 port whose hw_counters cache for `lifespan_ms`.
    fn sysfs(&self, name: &str, lifespan_ms: u32) -> PathBuf {
        let root = self.path(name);
        let hc = root.join("class/infiniband/mlx5_0/ports/1/hw_counters");
        std::fs::create_dir_all(&hc).expect("mkdir");
        for (f, v) in [
            ("np_cnp_sent", 7),
            ("np_ecn_marked_roce_packets", 9),
            ("rp_cnp_handled", 5),
            ("lifespan", lifespan_ms),
        ] {
            std::fs::write(hc.join(f), format!("{v}\n")).expect("write");
        }
        root
    }

    /// A bin dir holding `tools`.
    fn bin(&self, tools: Tools) -> PathBuf {
        let name = match tools {
            Tools::EthtoolPfc3 => "bin-pfc3",
            Tools::EthtoolNoPfc => "bin-nopfc",
            Tools::NoEthtool => "bin-noethtool",
        };
        let bin = self.path(name);
        if bin.exists() {
            return bin;
        }
        std::fs::create_dir_all(&bin).expect("mkdir");
        for t in ["grep", "tail", "cat"] {
            let found = ["/usr/bin", "/bin"]
                .iter()
                .map(|d| Path::new(d).join(t))
                .find(|p| p.exists())
                .expect("coreutils");
            std::os::unix::fs::symlink(found, bin.join(t)).expect("symlink");
        }
        let ethtool = match tools {
            Tools::EthtoolPfc3 => format!("#!/bin/sh\n/bin/cat {ETHTOOL}\n"),
            Tools::EthtoolNoPfc => format!("#!/bin/sh\n/bin/grep -v _prio {ETHTOOL}\n"),
            Tools::NoEthtool => return bin,
        };
        write_exec(&bin.join("ethtool"), &ethtool);
        bin
    }

    /// Start a host: NX-OS `show` commands come from the fixtures, anything else runs in bash
    /// with PATH = `bin` only. Returns its port.
    fn host(&mut self, bin: &Path) -> u16 {
        let n = self.hosts.len();
        let sh = self.path(&format!("host{n}.sh"));
        write_exec(
            &sh,
            &format!(
                r#"#!/bin/bash
c="${{SSH_ORIGINAL_COMMAND:-}}"
case "$c" in
  "show queuing interface"*) exec /bin/cat {NXOS}/demo-show-queuing-interface_nxos7_SYNTHETIC.txt ;;
  "show interface priority-flow-control") exec /bin/cat {NXOS}/demo-show-interface-priority-flow-control_SYNTHETIC.txt ;;
  "show interface flowcontrol") exec /bin/cat {NXOS}/demo-show-interface-flowcontrol_SYNTHETIC.txt ;;
esac
PATH={} exec /bin/bash -c "$c"
"#,
                bin.display()
            ),
        );
        let s = Sshd::with(Options {
            force_command: Some(sh.display().to_string()),
            ..Options::default()
        });
        s.trust(&self.known_hosts, "ed25519");
        // Every host takes the first host's client key, as a lab's nodes take one user's key.
        if let Some(first) = self.hosts.first() {
            let key = std::fs::read_to_string(first.client_key.with_extension("pub")).expect("pub");
            let mut ak = std::fs::read_to_string(s.path("authorized_keys")).expect("ak");
            ak.push_str(&key);
            std::fs::write(s.path("authorized_keys"), ak).expect("ak");
        }
        let port = s.port;
        self.hosts.push(s);
        port
    }

    fn key(&self) -> PathBuf {
        self.hosts.first().expect("a host").client_key.clone()
    }

    /// `[ssh]` plus `body`, written as a config; `rocetop check` run on it: (exit code, stdout).
    fn check(&self, body: &str) -> (Option<i32>, String) {
        let cfg = format!(
            "[ssh]\nknown_hosts = \"{}\"\nconnect_timeout = \"3s\"\ncommand_timeout = \"3s\"\nssh_config = \"/nonexistent\"\n{body}",
            self.known_hosts.display(),
        );
        let path = self.path("rocetop.toml");
        std::fs::write(&path, cfg).expect("config");
        let out = Command::new(env!("CARGO_BIN_EXE_rocetop"))
            .args(["check", "--config"])
            .arg(&path)
            .env_remove("SSH_AUTH_SOCK")
            .output()
            .expect("run");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr);
        (out.status.code(), format!("{text}\n--- stderr:\n{err}"))
    }
}

struct NodeCfg<'a> {
    name: &'a str,
    port: u16,
    user: String,
    key: &'a Path,
    sysfs: &'a Path,
    switch_port: &'a str,
}

fn node(n: NodeCfg<'_>) -> String {
    format!(
        "[[node]]\nname = \"{}\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nidentity_file = \"{}\"\nsysfs_root = \"{}\"\nnetdevs = [\"ens1f0\"]\nswitch_port = \"{}\"\n",
        n.name,
        n.port,
        n.user,
        n.key.display(),
        n.sysfs.display(),
        n.switch_port,
    )
}

fn switch(port: u16, key: &Path, ports: &str) -> String {
    format!(
        "[[switch]]\nname = \"leaf\"\nhost = \"127.0.0.1\"\nport = {port}\nuser = \"{}\"\nos = \"nxos\"\nidentity_file = \"{}\"\nports = [{ports}]\n",
        sshd::current_user(),
        key.display()
    )
}

/// The line of `text` that starts with `name` and the lines after it up to the next source.
fn block(text: &str, name: &str) -> String {
    let mut out = Vec::new();
    let mut inside = false;
    for l in text.lines() {
        if l.starts_with(name) {
            inside = true;
        } else if inside && !l.starts_with(' ') {
            break;
        }
        if inside {
            out.push(l);
        }
    }
    out.join("\n")
}

#[test]
fn every_consistency_check_passes_on_an_agreeing_lab() {
    let mut lab = Lab::new();
    let p = lab.host(&lab.bin(Tools::EthtoolPfc3));
    let sys = lab.sysfs("sys-ok", 10);
    let key = lab.key();
    // Ethernet1/1/2: PFC on priority 3, 802.3x off both ways; the node counts priority-3 pauses;
    // hw_counters cache for 10 ms, polled every second.
    let cfg = format!(
        "[alerts]\nflowcontrol = \"off\"\n{}{}",
        switch(p, &key, "\"Ethernet1/1/2\""),
        node(NodeCfg {
            name: "node-ok",
            port: p,
            user: sshd::current_user(),
            key: &key,
            sysfs: &sys,
            switch_port: "Ethernet1/1/2",
        })
    );
    let (code, text) = lab.check(&cfg);
    assert_eq!(code, Some(0), "{text}");
    assert!(block(&text, "leaf ").contains("OK: "), "{text}");
    assert!(block(&text, "node-ok ").contains("mlx5_0"), "{text}");
    assert!(text.contains("RoCE settings: consistent"), "{text}");
    assert!(
        !text.contains("FAILED") && !text.contains("fix: "),
        "{text}"
    );
}

#[test]
fn every_consistency_check_reports_its_problem() {
    let mut lab = Lab::new();
    let p = lab.host(&lab.bin(Tools::EthtoolNoPfc));
    // hw_counters cache for 2 s, polled every second: rates would repeat.
    let sys = lab.sysfs("sys-slow", 2000);
    let key = lab.key();
    // Ethernet1/1/1 has PFC on priority 3 and receives 802.3x pause; the node behind it has PFC off.
    let cfg = format!(
        "[alerts]\nflowcontrol = \"off\"\n{}{}",
        switch(p, &key, "\"Ethernet1/1/1-2\""),
        node(NodeCfg {
            name: "node-nopfc",
            port: p,
            user: sshd::current_user(),
            key: &key,
            sysfs: &sys,
            switch_port: "Ethernet1/1/1",
        })
    );
    let (code, text) = lab.check(&cfg);
    assert_eq!(code, Some(1), "a disagreement fails check: {text}");
    assert!(
        block(&text, "leaf ").contains("OK: ") && block(&text, "node-nopfc ").contains("OK: "),
        "every source gave its data: {text}"
    );
    assert!(text.contains("RoCE settings: 3 problem(s)"), "{text}");
    assert!(
        text.contains(
            "Ethernet1/1/1 has PFC on priority 3, but node-nopfc shows no rx_prio3_pause counter"
        ),
        "PFC priority check: {text}"
    );
    assert!(
        text.contains("leaf Ethernet1/1/1 802.3x flowcontrol (rx) is on, config expects off"),
        "802.3x check: {text}"
    );
    assert!(
        text.contains(
            "node-nopfc mlx5_0: poll.interval 1s is shorter than the hw_counters lifespan 2 s"
        ),
        "lifespan check: {text}"
    );
}

#[test]
fn check_fails_unless_every_source_returns_its_data_and_names_the_real_cause() {
    let mut lab = Lab::new();
    let good = lab.host(&lab.bin(Tools::EthtoolPfc3));
    let bare = lab.host(&lab.bin(Tools::NoEthtool));
    let unknown = Sshd::start(); // its host key is in nobody's known_hosts
    let sys = lab.sysfs("sys", 10);
    let key = lab.key();
    let dead_port = sshd::free_port();
    let pingd_port = sshd::free_port();
    let n = |name, port, user: String, sysfs: &Path| {
        node(NodeCfg {
            name,
            port,
            user,
            key: &key,
            sysfs,
            switch_port: "Ethernet1/1/2",
        })
    };
    let cfg = [
        n("node-ok", good, sshd::current_user(), &sys),
        n(
            "node-wrongroot",
            good,
            sshd::current_user(),
            Path::new("/nonexistent/sys"),
        ),
        n("node-noethtool", bare, sshd::current_user(), &sys),
        n("node-wronguser", good, "rocetop-no-such-user".into(), &sys),
        n("node-unknown", unknown.port, sshd::current_user(), &sys),
        n("node-dead", dead_port, sshd::current_user(), &sys),
        format!("[[ping]]\npeer = \"node-ok\"\naddress = \"127.0.0.1:{pingd_port}\"\n"),
    ]
    .concat();
    let (code, text) = lab.check(&cfg);
    assert_eq!(code, Some(1), "{text}");
    assert!(block(&text, "node-ok ").contains("OK: "), "{text}");

    let root = block(&text, "node-wrongroot ");
    assert!(
        root.contains("FAILED: no RDMA counters")
            && root.contains("no RDMA device")
            && root.contains("check sysfs_root (now \"/nonexistent/sys\")"),
        "wrong sysfs_root: {text}"
    );
    let eth = block(&text, "node-noethtool ");
    assert!(
        eth.contains("FAILED: no NIC counters of ens1f0 (PFC tab)")
            && eth.contains("ethtool")
            && eth.contains("install ethtool on node-noethtool"),
        "missing ethtool: {text}"
    );
    assert!(!eth.contains("RDMA counters"), "its sysfs is fine: {text}");
    let wu = block(&text, "node-wronguser ");
    assert!(
        wu.contains("FAILED: auth failed: user rocetop-no-such-user")
            && wu.contains("refused every key offered for user `rocetop-no-such-user`")
            && !wu.contains("ssh-agent"),
        "wrong user: {text}"
    );
    let u = block(&text, "node-unknown ");
    assert!(
        u.contains("FAILED") && u.contains("unknown host") && u.contains("SHA256:"),
        "{text}"
    );
    let d = block(&text, "node-dead ");
    assert!(
        d.contains("FAILED") && d.contains("refused") && d.contains("sshd running"),
        "{text}"
    );
    let ping = block(&text, "ping node-ok ");
    assert!(
        ping.contains("FAILED")
            && ping.contains("refused")
            && ping.contains("start `rocetop pingd` on the peer")
            && !ping.contains("sshd"),
        "refused pingd port: {text}"
    );
    assert_eq!(
        text.matches("fix: ").count(),
        6,
        "one fix per failure: {text}"
    );
    assert!(!text.contains("retrying in"), "check runs once: {text}");
    assert!(
        text.contains("RoCE settings: not verified: 6 source(s)") && !text.contains("consistent"),
        "{text}"
    );
}
