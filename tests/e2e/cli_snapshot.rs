//! The binary as a user runs it: `snapshot --demo` in every format (Prometheus output checked by
//! promtool), broken configs reported whole, `parse` on a captured output.

use crate::skip;

use std::io::Write;
use std::process::{Command, Stdio};

fn rocetop(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("run rocetop");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Whether promtool runs here; if not, `test` is a counted skip (a failure under CI, where
/// scripts/test.sh installs it).
fn promtool_available(test: &str) -> bool {
    let ok = skip::have("promtool");
    if !ok {
        let why = "promtool is not installed (Debian package `prometheus`)";
        skip::skip(test, skip::Lack::Installed("promtool"), why);
    }
    ok
}

#[test]
fn snapshot_demo_prom_has_the_vocabulary_and_passes_promtool() {
    let (code, out, err) = rocetop(&[
        "snapshot",
        "--demo",
        "--format",
        "prom",
        "--interval",
        "300ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let cnp: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("rocetop_rdma_np_cnp_sent_total{"))
        .collect();
    assert_eq!(cnp.len(), 10, "one per device of the 8 nodes");
    for m in [
        "rocetop_rdma_np_ecn_marked_roce_packets_total{",
        "rocetop_rdma_rp_cnp_handled_total{",
        "rocetop_rdma_np_cnp_sent_per_second{",
        "rocetop_switch_pfc_rx_frames_total{port=\"ii1/1/1\",priority=\"all\",switch=\"NX_AI_Leaf1\"}",
        "rocetop_switch_pfc_rx_frames_total{port=\"Ethernet1/1/1\",priority=\"all\",switch=\"NX_AI_Leaf1\"}",
        "rocetop_switch_ingress_dropped_packets_total{port=\"Ethernet1/1/2\"",
        "rocetop_train_loss{",
        "rocetop_train_step_seconds{",
        "rocetop_source_up{source=\"ubunturdma8\"} 1",
    ] {
        assert!(out.contains(m), "missing {m}");
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with("rocetop_switch_queue_tx_packets_total{")
                && l.contains("qos_group=\"3\""))
    );
    if promtool_available("cli_snapshot::snapshot_demo_prom_has_the_vocabulary_and_passes_promtool")
    {
        let mut child = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(out.as_bytes())
            .expect("write");
        let o = child.wait_with_output().expect("promtool output");
        assert!(
            o.status.success(),
            "promtool: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn snapshot_table_leads_with_the_worst_offenders() {
    let (code, out, _) = rocetop(&["snapshot", "--demo", "--interval", "300ms"]);
    assert_eq!(code, 0);
    let first: Vec<&str> = out.lines().take(3).collect();
    assert!(first[0].starts_with("Most CNPs sent:"), "{first:?}");
    assert!(first[1].starts_with("Most PFC frames:"), "{first:?}");
    // 11 polled sources and the 9 hosts' topology reads (LLDP, host QoS, PFC watchdog).
    assert!(first[2].contains("20 of 20 up"), "{first:?}");
}

#[test]
fn snapshot_json_lists_sources_and_series() {
    let (code, out, _) = rocetop(&[
        "snapshot",
        "--demo",
        "--format",
        "json",
        "--interval",
        "300ms",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v["sources"].as_array().map(Vec::len),
        Some(20),
        "8 nodes, 1 switch, 1 log, 1 ping peer, and a topology read of each of the 9 hosts"
    );
    let topo = v["sources"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["name"] == "NX_AI_Leaf1 topology");
    assert!(
        topo.is_some_and(|s| s["up"] == true),
        "the switch's LLDP and watchdog were read: {topo:?}"
    );
    assert!(v["series"].as_array().is_some_and(|s| s.len() > 500));
    // Two polls are too few for a baseline: no episode, and the note says why.
    assert_eq!(v["episodes"].as_array().map(Vec::len), Some(0));
    assert!(
        v["episodes_note"]
            .as_str()
            .is_some_and(|n| n.contains("polls twice"))
    );
    // The fabric graph (the lab's host links) and the pause tree made on the second poll's rates.
    assert!(
        v["fabric"]["links"]
            .as_array()
            .is_some_and(|l| l.len() >= 8),
        "{}",
        v["fabric"]
    );
    assert!(v["pause_tree"]["roots"].is_array(), "{}", v["pause_tree"]);
    assert!(v["pause_tree"]["edges"].is_array(), "{}", v["pause_tree"]);
}

#[test]
fn a_broken_config_reports_every_problem_at_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "demo = true\n[poll]\ninterval = \"one second\"\n[[switch]]\nname = \"s1\"\nhost = \"127.0.0.1\"\nos = \"junos\"\n[[node]]\nname = \"n1\"\nhost = \"127.0.0.1\"\ndevicez = [\"x\"]\n").expect("write");
    let (code, out, err) = rocetop(&["snapshot", "--config", p.to_str().expect("path")]);
    assert_ne!(code, 0);
    assert!(out.is_empty());
    for w in [
        "poll.interval",
        "switch[0].os",
        "node[0].devicez",
        "3 problems",
    ] {
        assert!(err.contains(w), "{w} not in {err}");
    }
    assert!(
        !err.contains("panicked") && !err.contains("Backtrace"),
        "{err}"
    );
}

#[test]
fn a_missing_config_is_one_clear_sentence() {
    let (code, _, err) = rocetop(&["snapshot", "--config", "/nonexistent/rocetop.toml"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("/nonexistent/rocetop.toml") && err.contains("cannot read"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 2, "{err}");
}

#[test]
fn parse_reads_a_captured_pfc_table() {
    let f = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/nxos/show-interface-priority-flow-control_n5k_fcoe.txt"
    );
    let (code, out, err) = rocetop(&["parse", "nxos-pfc", f, "--name", "5K-A"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rocetop_switch_pfc_tx_frames_total{port=\"Ethernet1/47\",priority=\"all\",switch=\"5K-A\"} 762946"), "{out}");
}

#[test]
fn parse_counts_what_it_does_not_understand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("junk.txt");
    std::fs::write(&p, "this is not\na switch output\n").expect("write");
    let (code, out, err) = rocetop(&["parse", "nxos-queuing", p.to_str().expect("path")]);
    // Nothing read is no success: exit 2, the layout it expected and what came first.
    assert_eq!(code, 2, "{out}");
    assert!(!out.contains("rocetop_switch"), "no zeros invented: {out}");
    assert!(
        err.contains("expected NX-OS `show queuing interface`"),
        "{err}"
    );
    assert!(err.contains("first line: \"this is not\""), "{err}");
    assert!(err.contains("2 lines not understood"), "{err}");
}

/// A log in a format rocetop does not know: `parse training-log` says no step was read, shows the
/// line most like progress (escaped: a BEL in it arrives as `\x07`) and a `format_regex` built
/// from it, which, set in the config, reads that line's step.
#[test]
fn parse_training_log_hints_a_format_regex_for_a_log_it_cannot_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("train.log");
    std::fs::write(
        &p,
        "booting trainer\n[trn] it#41 lossval=2.5000 t=150ms \u{7}\n[trn] it#42 lossval=2.4900 t=151ms \u{7}\nbye\n",
    )
    .expect("write");
    let (code, out, err) = rocetop(&["parse", "training-log", p.to_str().expect("path")]);
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("no training step recognised in 4 lines"),
        "{err}"
    );
    assert!(
        err.contains(r"a line of it: [trn] it#41 lossval=2.5000 t=150ms \x07"),
        "{err}"
    );
    assert!(!err.contains('\u{7}'), "no raw control byte: {err:?}");
    let re = err
        .split("format_regex = '")
        .nth(1)
        .and_then(|r| r.split('\'').next())
        .unwrap_or_else(|| panic!("a format_regex example: {err}"));
    let f = rocetop::parse::training::CustomFormat::new("format_regex", re)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut parser = rocetop::parse::training::LineParser::new(vec![f]);
    let recs = parser.feed("[trn] it#43 lossval=2.4800 t=152ms").records;
    assert_eq!(recs.len(), 1, "{re}");
    assert_eq!(recs[0].iteration, Some(43));
    assert_eq!(recs[0].loss, Some(2.48));
    assert_eq!(recs[0].step_seconds, Some(0.152));
}

/// `--demo fabric` as a user runs it: the six switches, 32 nodes and their topology reads all up
/// with nothing left unparsed, and the leaves' LLDP naming both spines; `--demo` alone is the lab.
#[test]
fn snapshot_and_check_of_the_fabric_demo() {
    let (code, out, err) = rocetop(&[
        "snapshot",
        "--demo",
        "fabric",
        "--format",
        "json",
        "--interval",
        "300ms",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let sources = v["sources"].as_array().cloned().unwrap_or_default();
    // 6 switches, 32 nodes, the training log, and a topology read of each of the 38 hosts.
    assert_eq!(sources.len(), 77, "{sources:?}");
    for s in &sources {
        assert_eq!(s["up"], true, "{s}");
        assert_eq!(s["unparsed_lines"], 0, "{s}");
    }
    for sw in ["spine1", "spine2", "leaf1", "leaf2", "leaf3", "leaf4"] {
        assert!(sources.iter().any(|s| s["name"] == sw), "no {sw}");
    }
    let series = v["series"].as_array().cloned().unwrap_or_default();
    let sees = |leaf: &str, spine: &str| {
        series.iter().any(|s| {
            let t = s.to_string();
            t.contains("rocetop_link_neighbor_info")
                && t.contains(&format!("\"switch\":\"{leaf}\""))
                && t.contains(&format!("\"node\":\"{spine}\""))
        })
    };
    for leaf in ["leaf1", "leaf2", "leaf3", "leaf4"] {
        assert!(
            sees(leaf, "spine1") && sees(leaf, "spine2"),
            "{leaf}'s LLDP"
        );
    }
    let (code, out, err) = rocetop(&["check", "--demo", "fabric"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("RoCE settings: consistent"), "{out}");
    let (code, _, err) = rocetop(&["--demo", "fabric", "--config", "config.toml", "snapshot"]);
    assert_eq!(code, 2, "a config file is not the fabric: {err}");
}
