//! Host parsers on real (and one synthetic) outputs: the sysfs dump of the prometheus/procfs
//! InfiniBand tree, `ethtool -S` of mlx5 ports, `rdma statistic show` in both layouts.

use proptest::prelude::*;
use rocetop::metrics::names::*;
use rocetop::metrics::{Parsed, Sample, Value};
use rocetop::parse::host::{ethtool, hw_counters, rdma_stat};
use rocetop::parse::{Ctx, ParseKind};
use std::collections::BTreeMap;
use std::path::Path;

const TTAR: &str = include_str!("../fixtures/linux/procfs-fixture_sys-class-infiniband.ttar");
const ETHTOOL: &str =
    include_str!("../fixtures/linux/ethtool-S_mlx5_cx4_ubuntu18.04_ethq-fixture.txt");
const ETHTOOL_PFC: &str = include_str!("../fixtures/linux/ethtool-S_mlx5_pfc-prio3_synthetic.txt");
const RDMA_STAT: &str =
    include_str!("../fixtures/linux/rdma-stat-show_iproute2-cover-letter-2019.txt");

/// Unpack a ttar archive (prometheus/procfs test format) under `dest`: `Directory: d`,
/// `Path: p` followed by `Lines: n` and n lines (a last line ending in `EOF` has no newline) or by
/// `SymlinkTo: t`; `Mode:` lines and `# ttar` separators carry nothing we need.
fn untar(text: &str, dest: &Path) {
    let mut lines = text.lines();
    let mut path: Option<&str> = None;
    while let Some(line) = lines.next() {
        if let Some(d) = line.strip_prefix("Directory: ") {
            std::fs::create_dir_all(dest.join(d)).expect("mkdir");
        } else if let Some(p) = line.strip_prefix("Path: ") {
            path = Some(p);
        } else if let Some(n) = line.strip_prefix("Lines: ") {
            let n: usize = n.trim().parse().expect("Lines: n");
            let mut body = String::new();
            for i in 0..n {
                let l = lines.next().expect("ttar body line");
                match l.strip_suffix("EOF") {
                    Some(last) if i + 1 == n => body.push_str(last),
                    _ => {
                        body.push_str(l);
                        body.push('\n');
                    }
                }
            }
            let f = dest.join(path.take().expect("Path before Lines"));
            std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
            std::fs::write(f, body).expect("write");
        } else if let Some(t) = line.strip_prefix("SymlinkTo: ") {
            let f = dest.join(path.take().expect("Path before SymlinkTo"));
            std::fs::create_dir_all(f.parent().expect("parent")).expect("mkdir");
            std::os::unix::fs::symlink(t, f).expect("symlink");
        } else if !(line.starts_with("Mode: ") || line.starts_with("# ttar") || line.is_empty()) {
            panic!("ttar: unexpected line {line:?}");
        }
    }
}

/// The file contents of the archive under `prefix`, by file name (for cross-checking every counter).
fn ttar_files(text: &str, prefix: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if let Some(p) = l
            .strip_prefix("Path: ")
            .and_then(|p| p.strip_prefix(prefix))
            && lines.next() == Some("Lines: 1")
        {
            out.insert(p.to_string(), lines.next().expect("value").to_string());
        }
    }
    out
}

fn unpacked() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    untar(TTAR, dir.path());
    let root = dir
        .path()
        .join("fixtures/sys")
        .to_string_lossy()
        .to_string();
    (dir, root)
}

fn mlx5(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut l = vec![("node", "n1"), ("device", "mlx5_0"), ("rdma_port", "1")];
    l.extend_from_slice(extra);
    l
}

fn value(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<Value> {
    p.find(name, labels)
}

#[test]
fn sysfs_tree_every_mlx5_counter_with_its_exact_value() {
    let (_dir, root) = unpacked();
    let dump = rocetop::collect::local::sysfs_dump(&root, &[], &[]).expect("dump");
    let p = hw_counters::parse(&dump, "n1");
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let l = mlx5(&[]);

    // a few by hand, straight from the fixture
    let c = |name: &str| value(&p, &rdma_counter(name), &l);
    assert_eq!(c("duplicate_request"), Some(Value::Counter32(41)));
    assert_eq!(c("local_ack_timeout_err"), Some(Value::Counter32(131)));
    assert_eq!(c("out_of_sequence"), Some(Value::Counter32(1)));
    assert_eq!(c("req_cqe_error"), Some(Value::Counter32(3481)));
    assert_eq!(c("resp_cqe_flush_error"), Some(Value::Counter32(4708)));
    assert_eq!(c("rx_read_requests"), Some(Value::Counter32(175_528_982)));
    assert_eq!(c("rx_write_requests"), Some(Value::Counter32(742_114)));
    assert_eq!(c("port_xmit_data"), Some(Value::Counter(2_880_761_508_848)));
    assert_eq!(c("port_rcv_data"), Some(Value::Counter(18_126_345_378)));
    assert_eq!(c("port_xmit_packets"), Some(Value::Counter(10_907_922_116)));
    assert_eq!(c("lifespan"), None, "lifespan is a setting, not a counter");
    assert_eq!(
        value(&p, RDMA_HW_COUNTERS_LIFESPAN, &l),
        Some(Value::Gauge(0.01))
    );
    assert_eq!(value(&p, RDMA_PORT_STATE, &l), Some(Value::Gauge(4.0)));
    // no GID netdev in the tree: the device name stands in; data counters count 4-byte words
    let bytes = |dir: &'static str| {
        let l = [("node", "n1"), ("netdev", "mlx5_0"), ("direction", dir)];
        value(&p, NODE_RDMA_BYTES, &l)
    };
    assert_eq!(bytes("tx"), Some(Value::Counter(2_880_761_508_848 * 4)));
    assert_eq!(bytes("rx"), Some(Value::Counter(18_126_345_378 * 4)));

    // and every counter file of mlx5_0 in the archive, with its value
    let files = ttar_files(TTAR, "fixtures/sys/class/infiniband/mlx5_0/ports/1/");
    let mut checked = 0;
    for (file, v) in &files {
        let Some(name) = file
            .strip_prefix("hw_counters/")
            .or_else(|| file.strip_prefix("counters/"))
        else {
            continue;
        };
        if name == "lifespan" {
            continue;
        }
        let got = value(&p, &rdma_counter(name), &l).map(|v| v.as_f64());
        assert_eq!(got, Some(v.parse::<f64>().expect("number")), "{file}");
        checked += 1;
    }
    assert_eq!(checked, 24 + 21, "hw_counters + counters of mlx5_0");
    // mlx4_0 has two ports, hfi1_0 one; none of the three has DCQCN counters
    let state =
        |dev: &str, port: &str| value(&p, RDMA_PORT_STATE, &[("device", dev), ("rdma_port", port)]);
    assert!(state("mlx4_0", "2").is_some() && state("hfi1_0", "1").is_some());
    for dev in ["hfi1_0", "mlx4_0", "mlx5_0"] {
        let note = format!("{dev}: no DCQCN counters (np_cnp_sent...) in hw_counters");
        assert!(p.notes.contains(&note), "{:?}", p.notes);
    }
    let ports = hw_counters::ports(&dump);
    assert_eq!(ports.len(), 4, "{ports:?}");
}

/// The same tree through the command the SSH collector runs (`grep -rs .`), where sh and grep exist.
#[test]
fn sysfs_tree_through_grep_reads_the_same() {
    let (_dir, root) = unpacked();
    let req = rocetop::collect::transport::Request::SysfsDump {
        root: root.clone(),
        devices: vec![],
        netdevs: vec![],
    };
    // Every Linux host rocetop reads has a POSIX sh: its absence here is a broken machine.
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(req.shell())
        .output()
        .expect("sh");
    let grep = hw_counters::parse(&String::from_utf8_lossy(&out.stdout), "n1");
    let local = hw_counters::parse(
        &rocetop::collect::local::sysfs_dump(&root, &[], &[]).expect("dump"),
        "n1",
    );
    let sorted = |p: &Parsed| {
        let mut v: Vec<Sample> = p.samples.clone();
        v.sort_by(|a, b| a.key.cmp(&b.key));
        v
    };
    assert!(!grep.samples.is_empty(), "grep printed nothing");
    assert_eq!(grep.unknown_lines, 0, "{:?}", grep.unknown_examples);
    assert_eq!(sorted(&grep), sorted(&local));
}

#[test]
fn ethtool_cx4_dump_exact_numbers_and_no_pfc_note() {
    let p = ethtool::parse(ETHTOOL, "n1", "ens1f0");
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    assert_eq!(p.samples.len(), 751, "one sample per counter line");
    let nic = [("node", "n1"), ("netdev", "ens1f0")];
    let c = |name: &str| value(&p, &nic_counter(name), &nic);
    assert_eq!(c("rx_bytes"), Some(Value::Counter(2_195_783_498_134)));
    assert_eq!(c("tx_packets"), Some(Value::Counter(896_117_891)));
    assert_eq!(c("rx_bytes_phy"), Some(Value::Counter(2_202_570_777_997)));
    assert_eq!(c("tx_pci_signal_integrity"), Some(Value::Counter(34)));
    assert_eq!(c("rx_discards_phy"), Some(Value::Counter(0)));
    assert_eq!(c("rx_prio0_packets"), Some(Value::Counter(845_715_962)));
    assert_eq!(c("tx15_xmit_more"), Some(Value::Counter(5530)));
    // global pause: the rx/tx_global_pause counters; the MAC-control ones keep their names
    let g = [("netdev", "ens1f0"), ("priority", "global")];
    assert_eq!(value(&p, NIC_PFC_RX_PAUSE, &g), Some(Value::Counter(0)));
    assert_eq!(
        value(&p, NIC_PFC_TX_PAUSE_DURATION, &g),
        Some(Value::CounterMicros(0))
    );
    assert_eq!(
        value(&p, NIC_PFC_RX_PAUSE_TRANSITION, &g),
        Some(Value::Counter(0))
    );
    assert_eq!(c("rx_pause_ctrl_phy"), Some(Value::Counter(0)));
    assert_eq!(c("rx_global_pause"), None);
    // no per-priority pause counter anywhere: PFC is off here, and the parser says so
    assert!(
        !p.samples
            .iter()
            .any(|s| s.key.label("priority").is_some_and(|v| v != "global"))
    );
    assert_eq!(
        p.notes,
        vec![
            "ens1f0: no rx_prio*_pause counters (PFC off on this port, or a VF: PFC counters live on the hypervisor)"
        ]
    );
}

fn check_pfc_sample(p: &Parsed, netdev: &str) {
    assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
    let l = [("node", "n1"), ("netdev", netdev), ("priority", "3")];
    assert_eq!(value(p, NIC_PFC_RX_PAUSE, &l), Some(Value::Counter(48213)));
    assert_eq!(
        value(p, NIC_PFC_RX_PAUSE_DURATION, &l),
        Some(Value::CounterMicros(9_120_450))
    );
    assert_eq!(
        value(p, NIC_PFC_RX_PAUSE_TRANSITION, &l),
        Some(Value::Counter(24099))
    );
    assert_eq!(value(p, NIC_PFC_TX_PAUSE, &l), Some(Value::Counter(1207)));
    assert_eq!(
        value(p, NIC_PFC_TX_PAUSE_DURATION, &l),
        Some(Value::CounterMicros(230_118))
    );
    // exactly five PFC series on priority 3, none on other priorities
    let pfc: Vec<&Sample> = p
        .samples
        .iter()
        .filter(|s| s.key.name.starts_with("rocetop_nic_pfc_"))
        .collect();
    assert_eq!(
        pfc.iter()
            .filter(|s| s.key.label("priority") == Some("3"))
            .count(),
        5
    );
    assert!(
        pfc.iter()
            .all(|s| matches!(s.key.label("priority"), Some("3" | "global")))
    );
    // no *_global_pause here, so the MAC-control pause counters are the global ones
    let g = [("netdev", netdev), ("priority", "global")];
    assert_eq!(value(p, NIC_PFC_RX_PAUSE, &g), Some(Value::Counter(0)));
    let nic = [("netdev", netdev)];
    assert_eq!(
        value(p, &nic_counter("tx_pause_storm_warning_events"), &nic),
        Some(Value::Counter(3))
    );
    assert_eq!(
        value(p, &nic_counter("rx_discards_phy"), &nic),
        Some(Value::Counter(2113))
    );
    assert_eq!(
        value(p, &nic_counter("rx_prio3_bytes"), &nic),
        Some(Value::Counter(7_340_098_891_211))
    );
    assert_eq!(value(p, &nic_counter("rx_prio3_pause"), &nic), None);
    assert!(p.notes.is_empty(), "{:?}", p.notes);
}

#[test]
fn ethtool_with_pfc_on_priority_3() {
    check_pfc_sample(&ethtool::parse(ETHTOOL_PFC, "n1", "ens192"), "ens192");
    // CRLF, trailing spaces, tabs instead of spaces, a prompt with the command: same numbers, and the
    // netdev comes from the command when the caller does not know it
    let mangled: String = std::iter::once("root@n1:~# ethtool -S ens224\r\n".to_string())
        .chain(
            ETHTOOL_PFC
                .lines()
                .map(|l| format!("{}  \r\n", l.replace("     ", "\t"))),
        )
        .collect();
    check_pfc_sample(&ethtool::parse(&mangled, "n1", ""), "ens224");
    // through the dispatch `rocetop parse ethtool` uses: no netdev, no command line
    let p = rocetop::parse::parse(ParseKind::Ethtool, ETHTOOL_PFC, &Ctx::named("n1"));
    check_pfc_sample(&p, ethtool::UNNAMED_NETDEV);
}

#[test]
fn rx_prio3_pause_never_picks_up_duration_or_transition() {
    for order in [
        "rx_prio3_pause_duration: 77\nrx_prio3_pause_transition: 66\nrx_prio3_pause: 5\n",
        "rx_prio3_pause: 5\nrx_prio3_pause_transition: 66\nrx_prio3_pause_duration: 77\n",
    ] {
        let p = ethtool::parse(order, "n", "e");
        let l = [("priority", "3")];
        assert_eq!(value(&p, NIC_PFC_RX_PAUSE, &l), Some(Value::Counter(5)));
        assert_eq!(
            value(&p, NIC_PFC_RX_PAUSE_DURATION, &l),
            Some(Value::CounterMicros(77))
        );
        assert_eq!(
            value(&p, NIC_PFC_RX_PAUSE_TRANSITION, &l),
            Some(Value::Counter(66))
        );
        assert_eq!(p.samples.len(), 3);
    }
    // a duration without its frame counter is not a frame counter, and the note still fires
    let p = ethtool::parse("rx_prio3_pause_duration: 77\n", "n", "e");
    assert_eq!(value(&p, NIC_PFC_RX_PAUSE, &[]), None);
    assert_eq!(p.notes.len(), 1);
}

const RDMA_NAMES: [&str; 21] = [
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "out_of_buffer",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "rp_cnp_ignored",
    "rp_cnp_handled",
    "np_ecn_marked_roce_packets",
    "np_cnp_sent",
];

fn counters_of(p: &Parsed) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> = p
        .samples
        .iter()
        .map(|s| {
            assert_eq!(s.key.label("device"), Some("mlx5_0"));
            assert_eq!(s.key.label("rdma_port"), Some("1"));
            (s.key.name.to_string(), s.value.as_f64())
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn rdma_statistic_both_layouts_give_the_same_21_counters() {
    let split = RDMA_STAT
        .find("[leonro@server ~]$ rdma stat show -p")
        .expect("second prompt");
    let (default, pretty) = RDMA_STAT.split_at(split);
    let d = rdma_stat::parse(default, "n1");
    let pp = rdma_stat::parse(pretty, "n1");
    for p in [&d, &pp] {
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        assert_eq!(p.samples.len(), 21);
    }
    let mut want: Vec<(String, f64)> = RDMA_NAMES.iter().map(|n| (rdma_counter(n), 0.0)).collect();
    want.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(counters_of(&d), want);
    assert_eq!(counters_of(&pp), want);
    // the whole capture at once, with CRLF line ends
    let whole = rdma_stat::parse(&RDMA_STAT.replace('\n', "\r\n"), "n1");
    assert_eq!(whole.unknown_lines, 0);
    assert_eq!(whole.samples.len(), 42);
    let lab = [("node", "n1"), ("device", "mlx5_0"), ("rdma_port", "1")];
    assert_eq!(
        value(&whole, &rdma_counter("np_cnp_sent"), &lab),
        Some(Value::Counter(0))
    );
    // the same numbers as the sysfs path would give them: 32-bit Q counters stay 32-bit
    assert_eq!(
        value(&whole, &rdma_counter("packet_seq_err"), &lab),
        Some(Value::Counter32(0))
    );
}

#[test]
fn rdma_statistic_nonzero_values_land_on_their_names() {
    // the fixture is all zeros: renumber it so a name/value mix-up would show
    let mut i = 0u64;
    let text: String = RDMA_STAT
        .split_inclusive(|c: char| c.is_whitespace())
        .map(|w| {
            if w.trim() == "0" {
                i += 1;
                w.replacen('0', &(1000 + i).to_string(), 1)
            } else {
                w.to_string()
            }
        })
        .collect();
    let p = rdma_stat::parse(&text, "n1");
    assert_eq!(p.unknown_lines, 0);
    // default layout: values 1001..=1021 in name order; -p layout: 1022..=1042
    for (k, name) in RDMA_NAMES.iter().enumerate() {
        let got: Vec<f64> = p
            .samples
            .iter()
            .filter(|s| s.key.name == rdma_counter(name))
            .map(|s| s.value.as_f64())
            .collect();
        assert_eq!(got, vec![1001.0 + k as f64, 1022.0 + k as f64], "{name}");
    }
}

/// Random edits of a fixture: truncations, deleted or duplicated spans, inserted junk.
fn mutated(base: &'static str) -> impl Strategy<Value = String> {
    (0..=base.len(), 0..=base.len(), any::<u8>(), ".{0,12}").prop_map(move |(a, b, op, junk)| {
        let (a, b) = (a.min(b), a.max(b));
        let fix = |i: usize| {
            (0..=i)
                .rev()
                .find(|&j| base.is_char_boundary(j))
                .unwrap_or(0)
        };
        let (a, b) = (fix(a), fix(b));
        match op % 4 {
            0 => base[..b].to_string(),
            1 => format!("{}{}", &base[..a], &base[b..]),
            2 => format!("{}{}{}", &base[..b], &base[a..b], &base[b..]),
            _ => format!("{}{junk}{}", &base[..a], &base[a..]),
        }
    })
}

proptest! {
    #[test]
    fn hw_counters_never_panics(s in prop_oneof![
        ".{0,300}".boxed(),
        mutated("/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n/x/infiniband/d/ports/1/hw_counters/np_cnp_sent:5\n/x/net/e/statistics/rx_bytes:1\n/x/infiniband/d/ports/1/gid_attrs/ndevs/0:ens1\n").boxed(),
    ]) {
        let _ = hw_counters::parse(&s, "n");
        let _ = hw_counters::ports(&s);
    }

    #[test]
    fn ethtool_never_panics(s in prop_oneof![".{0,300}".boxed(), mutated(ETHTOOL_PFC).boxed(), mutated(ETHTOOL).boxed()]) {
        let _ = ethtool::parse(&s, "n", "");
    }

    #[test]
    fn rdma_stat_never_panics(s in prop_oneof![
        ".{0,300}".boxed(),
        mutated(RDMA_STAT).boxed(),
        mutated(r#"[{"ifname":"mlx5_0","port":1,"np_cnp_sent":3}]"#).boxed(),
    ]) {
        let _ = rdma_stat::parse(&s, "n");
    }
}
