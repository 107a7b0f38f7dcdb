//! `rocetop check` proves the lossless path against real OpenSSH sshd processes on 127.0.0.1: an
//! NX-OS "switch" (a ForceCommand answering `show` commands) with PFC on priority 3, and three
//! Linux "nodes" (a real shell, with `mlnx_qos`, `lldpctl` and `ethtool` stand-ins on PATH and a
//! sysfs tree of their own): one consistent, one whose `mlnx_qos` (a real capture: PFC on
//! priority 5) disagrees with the switch and sits on a port left at MTU 1500, one whose LLDP puts
//! it on another port than the config. The switch's `show running-config ipqos` is a vendor
//! reference QoS config (the MOCK fixture, which classifies RDMA by CoS, pauses CoS 3 and marks ECN
//! on queue 3 switch-wide) with this test's own additions: a DSCP policy on the consistent port,
//! the CoS policy on node-badqos's, and a queuing policy without ECN on node-moved's. A SONiC
//! leaf answers with captures only; its CONFIG_DB maps DSCP 26 off the no-drop priority.

use crate::sshd;

use sshd::{Options, Sshd};
use std::path::{Path, PathBuf};
use std::process::Command;

const PFC: &str = "\n============================================================\nPort               Mode Oper(VL bmap)  RxPPP      TxPPP     \n============================================================\n\nEthernet1/1/1      Auto On  (8)        0          0         \nEthernet1/1/2      Auto On  (8)        0          0         \nEthernet1/1/3      Auto On  (8)        0          0         \nEthernet1/2/1      Auto On  (8)        0          0         \n";
const FLOWCONTROL: &str = "\n--------------------------------------------------------------------------------\nPort         Send FlowControl  Receive FlowControl  RxPause TxPause\n             admin    oper     admin    oper\n--------------------------------------------------------------------------------\nEth1/1/1     off      off      off      off         0       0      \nEth1/1/2     off      off      off      off         0       0      \nEth1/1/3     off      off      off      off         0       0      \nEth1/2/1     off      off      off      off         0       0      \n";
/// `show interface` of the edge ports, in the NX-OS 9.x block layout (as the ntc-templates capture
/// tests/fixtures/nxos/show-interface_n9k_ntc-templates_01.txt): Ethernet1/1/2 was left at 1500.
const INTERFACES: &str = "Ethernet1/1/1 is up\nadmin state is up, Dedicated Interface\n  Hardware: 10000 Ethernet, address: 00de.fb00.0001 (bia 00de.fb00.0001)\n  MTU 9216 bytes, BW 10000000 Kbit, DLY 10 usec\nEthernet1/1/2 is up\nadmin state is up, Dedicated Interface\n  MTU 1500 bytes, BW 10000000 Kbit, DLY 10 usec\nEthernet1/1/3 is up\nadmin state is up, Dedicated Interface\n  MTU 9216 bytes, BW 10000000 Kbit, DLY 10 usec\nEthernet1/2/1 is up\nadmin state is up, Dedicated Interface\n  MTU 9216 bytes, BW 10000000 Kbit, DLY 10 usec\n";
/// The switch's view: node-moved is on Ethernet1/1/3, whatever its config says.
const LLDP: &str = "Capability codes:\n  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device\n  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other\nDevice ID            Local Intf      Hold-time  Capability  Port ID\nnode-good            Eth1/1/1        120        S            ens224\nnode-badqos          Eth1/1/2        120        S            ens224\nnode-moved.lab.local\n                     Eth1/1/3        120        S            ens224\nTotal entries displayed: 3\n";
const GOOD_QOS: &str = "DCBX mode: OS controlled\nPriority trust state: dscp\ndscp2prio mapping:\n        prio:0 dscp:07,06,05,04,03,02,01,00,\n        prio:1 dscp:15,14,13,12,11,10,09,08,\n        prio:2 dscp:23,22,21,20,19,18,17,16,\n        prio:3 dscp:31,30,29,28,27,26,25,24,\n        prio:4 dscp:39,38,37,36,35,34,33,32,\n        prio:5 dscp:47,46,45,44,43,42,41,40,\n        prio:6 dscp:55,54,53,52,51,50,49,48,\n        prio:7 dscp:63,62,61,60,59,58,57,56,\ndefault priority:\nPFC configuration:\n        priority    0   1   2   3   4   5   6   7\n        enabled     0   0   0   1   0   0   0   0\n";

/// The test's additions to the reference config: DSCP 26 → qos-group 3 (paused as CoS 3 by the
/// reference network-qos policy) on Ethernet1/1/1, the reference's CoS policy on Ethernet1/1/2,
/// and on Ethernet1/2/1 the DSCP policy with an output queuing policy that marks no ECN.
const IPQOS_ADDED: &str = "class-map type qos match-all ROCE\n  match dscp 26\npolicy-map type qos ROCE_DSCP\n  class ROCE\n    set qos-group 3\npolicy-map type queuing NO_ECN\n  class type queuing c-out-8q-q3\n    bandwidth remaining percent 50\ninterface Ethernet1/1/1\n  service-policy type qos input ROCE_DSCP\ninterface Ethernet1/1/2\n  service-policy type qos input AZLocal_SERVICES\ninterface Ethernet1/2/1\n  service-policy type qos input ROCE_DSCP\n  service-policy type queuing output NO_ECN\n";

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}")).expect("script");
    Command::new("chmod")
        .arg("+x")
        .arg(path)
        .status()
        .expect("chmod");
}

fn switch(dir: &Path) -> Sshd {
    let fix = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos/synthetic");
    for (f, t) in [
        ("pfc", PFC),
        ("fc", FLOWCONTROL),
        ("lldp", LLDP),
        ("intf", INTERFACES),
    ] {
        std::fs::write(dir.join(f), t).expect("write");
    }
    let reference = include_str!(
        "../fixtures/topology/show-running-config-ipqos_cos-classified_azure-local-reference-tor_MOCK.txt"
    );
    // Only the policies and `system qos`: the fixture's own interface is not one of this switch's.
    let policies = reference.split("interface ").next().unwrap_or(reference);
    std::fs::write(dir.join("ipqos"), format!("{policies}{IPQOS_ADDED}")).expect("write");
    let d = dir.display();
    let sh = dir.join("nxos.sh");
    script(
        &sh,
        &format!(
            r#"IFS=';'
for c in ${{SSH_ORIGINAL_COMMAND:-}}; do
  c=$(echo "$c" | sed 's/^ *//; s/ *$//')
  case "$c" in
    "show queuing interface"*) cat {fix}/demo-show-queuing-interface_nxos7_SYNTHETIC.txt ;;
    "show interface priority-flow-control") cat {d}/pfc ;;
    "show interface flowcontrol") cat {d}/fc ;;
    "show lldp neighbors") cat {d}/lldp ;;
    "show interface Ethernet"*) cat {d}/intf ;;
    "show queuing pfc-queue detail") echo "Ethernet1/1/1 Interface PFC watchdog: [Disabled]" ;;
    "show running-config ipqos") cat {d}/ipqos ;;
    "") ;;
    *) echo "% Invalid command at '^' marker." ;;
  esac
done
"#
        ),
    );
    Sshd::with(Options {
        force_command: Some(sh.display().to_string()),
        ..Options::default()
    })
}

/// A SONiC leaf answering with captures: counters from tests/fixtures/sonic, its LLDP table and
/// PFC watchdog, and as its CONFIG_DB the `sonic-cfggen` rendering of the Arista-7050 SKU's QoS
/// template (TOOL-GENERATED): PFC on 3 and 4, ECN on queues 3-4, and DSCP 26 → TC 1.
fn sonic_switch(dir: &Path) -> Sshd {
    let sonic = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sonic");
    let topo = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/topology");
    let sh = dir.join("sonic.sh");
    script(
        &sh,
        &format!(
            r#"IFS=';'
for c in ${{SSH_ORIGINAL_COMMAND:-}}; do
  c=$(echo "$c" | sed 's/^ *//; s/ *$//')
  case "$c" in
    "show pfc counters") cat {sonic}/show-pfc-counters.txt ;;
    "show queue counters") cat {sonic}/show-queue-counters.txt ;;
    "show queue wredcounters") cat {sonic}/show-queue-wredcounters.txt ;;
    "show lldp table") cat {topo}/show-lldp-table_real-gns3-lab.txt ;;
    "show pfcwd stats") cat {topo}/show-pfcwd-stats_real-z9332_issue9430.txt ;;
    "show runningconfiguration all") cat {topo}/config-db_qos-json_arista7050_sonic-cfggen-test_TOOL-GENERATED.json ;;
    "") ;;
    *) echo "Error: No such command \"$c\"." ;;
  esac
done
"#
        ),
    );
    Sshd::with(Options {
        force_command: Some(sh.display().to_string()),
        ..Options::default()
    })
}

/// A node: its own sysfs tree (MTU, DCQCN on priority 3) and tools that print `qos` and `lldp`
/// (its neighbour: switch `lldp_switch`, port `lldp_port`).
fn node(dir: &Path, qos: &str, lldp_switch: &str, lldp_port: &str) -> (Sshd, PathBuf) {
    let bin = dir.join("bin");
    let sys = dir.join("sys");
    let net = sys.join("class/net/ens224");
    for point in ["roce_np", "roce_rp"] {
        let e = net.join("ecn").join(point).join("enable");
        std::fs::create_dir_all(&e).expect("mkdir");
        for p in 0..8 {
            std::fs::write(e.join(p.to_string()), if p == 3 { "1\n" } else { "0\n" }).expect("w");
        }
    }
    std::fs::write(net.join("mtu"), "9000\n").expect("mtu");
    // An RDMA device on ens224 with its DCQCN counters: check wants the data every tab needs.
    let port = sys.join("class/infiniband/mlx5_0/ports/1");
    std::fs::create_dir_all(port.join("hw_counters")).expect("hw_counters");
    std::fs::create_dir_all(port.join("gid_attrs/ndevs")).expect("ndevs");
    for c in [
        "np_cnp_sent",
        "np_ecn_marked_roce_packets",
        "rp_cnp_handled",
    ] {
        std::fs::write(port.join("hw_counters").join(c), "0\n").expect("counter");
    }
    std::fs::write(port.join("gid_attrs/ndevs/0"), "ens224\n").expect("ndev");
    std::fs::write(port.join("state"), "4: ACTIVE\n").expect("state");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::write(dir.join("qos.txt"), qos).expect("qos");
    script(
        &bin.join("mlnx_qos"),
        &format!("cat {}\n", dir.join("qos.txt").display()),
    );
    script(
        &bin.join("lldpctl"),
        &format!(
            "echo lldp.ens224.chassis.name={lldp_switch}.lab.local\necho lldp.ens224.port.ifname={lldp_port}\n"
        ),
    );
    script(
        &bin.join("ethtool"),
        "case \"$1\" in -a) printf 'Pause parameters for %s:\\nAutonegotiate:\\toff\\nRX:\\t\\toff\\nTX:\\t\\toff\\n' \"$2\" ;; *) echo 'NIC statistics:'; echo '     rx_prio3_pause: 0' ;; esac\n",
    );
    let sh = dir.join("node.sh");
    script(
        &sh,
        &format!(
            "PATH={}:$PATH; export PATH\nexec sh -c \"$SSH_ORIGINAL_COMMAND\"\n",
            bin.display()
        ),
    );
    let s = Sshd::with(Options {
        force_command: Some(sh.display().to_string()),
        ..Options::default()
    });
    (s, sys)
}

#[test]
fn check_proves_the_lossless_path_and_names_the_wrong_side() {
    let root = tempfile::tempdir().expect("tempdir");
    let sub = |n: &str| {
        let p = root.path().join(n);
        std::fs::create_dir_all(&p).expect("mkdir");
        p
    };
    let sw = switch(&sub("switch"));
    // The real capture's own prompt line would rename the netdev: mlnx_qos prints no prompt.
    let capture =
        include_str!("../fixtures/topology/mlnx_qos_dscp-trust_pfc-prio5_ets-buffers.txt");
    let bad_qos: String = capture.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let (good, good_sys) = node(&sub("good"), GOOD_QOS, "leaf", "Eth1/1/1");
    let (bad, bad_sys) = node(&sub("bad"), &bad_qos, "leaf", "Eth1/1/2");
    let (moved, moved_sys) = node(&sub("moved"), GOOD_QOS, "leaf", "Eth1/1/3");
    let sonic = sonic_switch(&sub("sonic"));
    // Its LLDP names the SONiC leaf: the same port name on the NX-OS leaf would be a move.
    let (behind_sonic, behind_sonic_sys) =
        node(&sub("behind-sonic"), GOOD_QOS, "sonic-leaf", "Ethernet4");
    let kh = root.path().join("known_hosts");
    for s in [&sw, &good, &bad, &moved, &sonic, &behind_sonic] {
        s.trust(&kh, "ed25519");
    }
    let node_cfg = |name: &str, s: &Sshd, sys: &Path, port: &str| {
        format!(
            "[[node]]\nname = \"{name}\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nidentity_file = \"{}\"\nsysfs_root = \"{}\"\nnetdevs = [\"ens224\"]\nswitch_port = \"{port}\"\n",
            s.port,
            sshd::current_user(),
            s.client_key.display(),
            sys.display()
        )
    };
    let cfg = format!(
        "[ssh]\nknown_hosts = \"{}\"\nconnect_timeout = \"3s\"\ncommand_timeout = \"3s\"\nssh_config = \"/nonexistent\"\n[[switch]]\nname = \"leaf\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nos = \"nxos\"\nidentity_file = \"{}\"\nports = [\"Ethernet1/1/1-3\", \"Ethernet1/2/1\"]\n[[switch]]\nname = \"sonic-leaf\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nos = \"sonic\"\nidentity_file = \"{}\"\nports = [\"Ethernet4\"]\n{}{}{}{}",
        kh.display(),
        sw.port,
        sshd::current_user(),
        sw.client_key.display(),
        sonic.port,
        sshd::current_user(),
        sonic.client_key.display(),
        node_cfg("node-good", &good, &good_sys, "Ethernet1/1/1"),
        node_cfg("node-badqos", &bad, &bad_sys, "Ethernet1/1/2"),
        node_cfg("node-moved", &moved, &moved_sys, "Ethernet1/2/1"),
        node_cfg("node-sonic", &behind_sonic, &behind_sonic_sys, "Ethernet4"),
    );
    let path = root.path().join("rocetop.toml");
    std::fs::write(&path, cfg).expect("config");
    let out = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["check", "--config"])
        .arg(&path)
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(!text.contains("FAILED"), "every source answers: {text}");
    let mismatches: Vec<&str> = text.lines().filter(|l| l.contains("MISMATCH")).collect();
    assert_eq!(mismatches.len(), 7, "{text}");
    // The SONiC leaf's CONFIG_DB (Azure's template: lossless DSCP 3/4) sends DSCP 26 to TC 1.
    assert!(
        text.contains("MISMATCH node-sonic ens224 ↔ sonic-leaf Ethernet4: the switch maps DSCP 26 to priority 1 (AZURE), the no-drop priority is 3 [switch side]\n    fix: sonic-db-cli CONFIG_DB hset 'DSCP_TO_TC_MAP|AZURE' 26 3"),
        "{text}"
    );
    // Its no-drop priorities come from the same CONFIG_DB (`pfc_enable 3,4`).
    assert!(
        text.contains("MISMATCH node-sonic ens224 ↔ sonic-leaf Ethernet4: PFC on priorities 3 on the host, the switch port's no-drop priority is 3,4 [host side]"),
        "{text}"
    );
    // The switch side: the CoS-classifying port, and the no-drop queue that marks no ECN.
    assert!(
        text.contains("MISMATCH node-badqos ens224 ↔ leaf Ethernet1/1/2: the switch port does not classify by DSCP (its policy AZLocal_SERVICES matches CoS) (RoCE is marked DSCP 26) [switch side]\n    fix: class-map type qos match-all ROCE ; match dscp 26 ; policy-map type qos AZLocal_SERVICES ; class ROCE ; set qos-group 3 ; interface Ethernet1/1/2 ; service-policy type qos input AZLocal_SERVICES"),
        "{text}"
    );
    assert!(
        text.contains("MISMATCH node-moved ens224 ↔ leaf Ethernet1/2/1: the switch's no-drop queue 3 does not mark ECN"),
        "{text}"
    );
    assert!(
        text.contains("fix: policy-map type queuing <output policy> ; class type queuing c-out-8q-q3 ; random-detect"),
        "{text}"
    );
    // Host 9000 over the switch port's 1500: the switch port is below its jumbo maximum.
    assert!(
        text.contains("MISMATCH node-badqos ens224 ↔ leaf Ethernet1/1/2: MTU 9000 on the host is above the switch port's 1500 (frames would be dropped) [switch side]\n    fix: interface Ethernet1/1/2 ; mtu 9216"),
        "{text}"
    );
    assert!(
        !text.contains("MTU not proven on leaf"),
        "both MTUs were read: {text}"
    );
    // Every switch fact was read: nothing about the switch's QoS is left as a note.
    assert!(!text.contains("not proven on leaf"), "{text}");
    // The host is the wrong side, and the fix enables exactly the switch's priority 3.
    assert!(
        text.contains("MISMATCH node-badqos ens224 ↔ leaf Ethernet1/1/2: PFC on priorities 5 on the host, the switch port's no-drop priority is 3 [host side]\n    fix: mlnx_qos -i ens224 --pfc 0,0,0,1,0,0,0,0"),
        "{text}"
    );
    assert!(
        // Two switches: the config's port and the fix name the leaf.
        text.contains("MISMATCH node-moved: config says switch_port = \"leaf:Ethernet1/2/1\", LLDP says ens224 ↔ leaf Ethernet1/1/3 [config side]\n    fix: set switch_port = \"leaf:Ethernet1/1/3\""),
        "{text}"
    );
    assert!(
        !mismatches.iter().any(|l| l.contains("node-good")),
        "{text}"
    );
    assert!(
        text.contains("node-good ens224 ↔ leaf Ethernet1/1/1 (config)"),
        "{text}"
    );
    assert!(
        text.contains("PFC watchdog disabled on Ethernet1/1/1"),
        "{text}"
    );
}
