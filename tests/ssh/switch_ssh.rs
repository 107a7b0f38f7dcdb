//! An NX-OS "switch" behind real OpenSSH (a ForceCommand answering `show` commands from the
//! repo's fixtures) that hangs up after every exec, polled by `rocetop snapshot` as configured:
//! the commands go in one exec and each parser still gets its own output back, the rare topology
//! read's (LLDP, PFC watchdog, MTU) too.

use crate::sshd;

use sshd::{Options, Sshd};
use std::process::Command;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos/synthetic");
const NXOS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos");
const TOPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/topology");

fn script() -> String {
    format!(
        r#"#!/bin/bash
IFS=';' read -ra parts <<<"${{SSH_ORIGINAL_COMMAND:-}}"
for c in "${{parts[@]}}"; do
  c=$(echo "$c" | sed 's/^ *//; s/ *$//')
  case "$c" in
    "show queuing interface"*) cat {FIX}/demo-show-queuing-interface_nxos7_SYNTHETIC.txt ;;
    "show interface priority-flow-control") cat {FIX}/demo-show-interface-priority-flow-control_SYNTHETIC.txt ;;
    "show interface flowcontrol") cat {FIX}/demo-show-interface-flowcontrol_SYNTHETIC.txt ;;
    "show lldp neighbors") cat {TOPO}/show-lldp-neighbors_multiline-device-id_ntc-templates.txt ;;
    "show queuing pfc-queue detail") cat {TOPO}/show-queuing-pfc-queue-detail_SYNTHETIC-otel-test.txt ;;
    "show interface Ethernet"*) cat {NXOS}/show-interface_n9k_ntc-templates_01.txt ;;
    "show running-config ipqos") cat {TOPO}/show-running-config-ipqos_cos-classified_azure-local-reference-tor_MOCK.txt ;;
    "") ;;
    *) echo "% Invalid command at '^' marker." ;;
  esac
done
# Hang up the whole connection once the output is out, as some NX-OS versions do.
(sleep 0.05; kill "$PPID") >/dev/null 2>&1 &
"#
    )
}

/// A switch "leaf" behind a loopback sshd whose ForceCommand is `script`, and a config that polls
/// its `ports` (a TOML list): the temp dir, the sshd (both kept alive) and the config's path.
fn switch(script: &str, ports: &str) -> (tempfile::TempDir, Sshd, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sh = dir.path().join("nxos.sh");
    std::fs::write(&sh, script).expect("script");
    Command::new("chmod")
        .arg("+x")
        .arg(&sh)
        .status()
        .expect("chmod");
    let s = Sshd::with(Options {
        force_command: Some(sh.display().to_string()),
        ..Options::default()
    });
    let kh = s.path("known_hosts");
    s.trust(&kh, "ed25519");
    let cfg = format!(
        "[ssh]\nknown_hosts = \"{}\"\nssh_config = \"/nonexistent\"\n[[switch]]\nname = \"leaf\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nos = \"nxos\"\nidentity_file = \"{}\"\nports = {ports}\n",
        kh.display(),
        s.port,
        sshd::current_user(),
        s.client_key.display()
    );
    let path = dir.path().join("rocetop.toml");
    std::fs::write(&path, cfg).expect("config");
    (dir, s, path)
}

#[test]
fn a_switch_that_hangs_up_after_each_exec_feeds_every_parser() {
    let (_dir, _sshd, path) = switch(
        &script(),
        r#"["Ethernet1/1/1-2", "Ethernet1/2/1", "ii1/1/1"]"#,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args([
            "snapshot",
            "--format",
            "prom",
            "--interval",
            "500ms",
            "--config",
        ])
        .arg(&path)
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}\n{text}");
    // Each command's output reached its own parser: queuing, PFC and 802.3x all present.
    for want in [
        "rocetop_switch_ingress_dropped_packets_total{port=\"Ethernet1/1/2\",reason=\"mmu\",switch=\"leaf\"} 2213",
        "rocetop_switch_pfc_rx_frames_total{port=\"ii1/1/1\",priority=\"all\",switch=\"leaf\"} 88412911",
        "rocetop_switch_flowcontrol_enabled{direction=\"rx\",port=\"Ethernet1/2/1\",switch=\"leaf\"} 1",
        // The rare topology read, glued the same way: LLDP, and the MTU alone of `show interface`.
        "rocetop_link_neighbor_info{netdev=\"Te1/1/1\",node=\"dx1.org.local\",port=\"Ethernet1/3\",side=\"switch\",switch=\"leaf\"} 1",
        "rocetop_switch_port_mtu_bytes{port=\"Ethernet2/1\",switch=\"leaf\"} 9100",
        // ... and the QoS configuration after it.
        "rocetop_switch_qos_ecn_enabled{port=\"all\",priority=\"3\",switch=\"leaf\"} 1",
    ] {
        assert!(text.contains(want), "missing {want}\n{text}");
    }
    assert!(!text.contains("rocetop_source_unparsed"), "{text}");
    assert!(
        !text.contains("rocetop_switch_port_rx_bytes_total"),
        "the MTU read keeps no counter: {text}"
    );
    let table = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["snapshot", "--interval", "300ms", "--config"])
        .arg(&path)
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("run");
    let t = String::from_utf8_lossy(&table.stdout);
    assert!(!t.contains("lines not understood"), "{t}");
}

/// A switch that keeps its connection runs each command in its own exec, so an empty answer is
/// that command's own and the next answer is not searched for a header. The old guess took
/// "one output empty, another not" for glued outputs and handed the PFC command's error text
/// to the queuing parser, blaming the wrong command.
#[test]
fn an_empty_answer_from_its_own_exec_is_not_taken_for_glued_outputs() {
    let (_dir, _sshd, path) = switch(
        "#!/bin/bash\ncase \"${SSH_ORIGINAL_COMMAND:-}\" in\n  \"show queuing interface\"*) ;;\n  \"show interface priority-flow-control\") echo '% Permission denied for the role' ;;\n  *) ;;\nesac\n",
        r#"["Ethernet1/1/1"]"#,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["snapshot", "--interval", "300ms", "--config"])
        .arg(&path)
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("run");
    let t = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    let all = format!("{t}\n{err}");
    assert!(all.contains("nxos-queuing: empty output"), "{all}");
    assert!(!all.contains("nxos-pfc: empty output"), "{all}");
    assert!(
        all.contains("nxos-pfc: % Permission denied for the role"),
        "the error text is the PFC command's: {all}"
    );
}
