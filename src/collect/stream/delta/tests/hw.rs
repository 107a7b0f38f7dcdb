//! The sysfs dump through the memo: equal to a full parse after any change to any line of every
//! sysfs capture the project has (values moved, a value that is no number, lines added, removed,
//! reordered, renamed, blanked), and answered from the memo when only values moved.

use super::*;

const HW: [ParseKind; 1] = [ParseKind::HwCounters];

/// A dump with what makes a sample depend on more than its line: vport byte counters summed
/// (they win over the port's word counters), a second device's port on the same netdev (its
/// words × 4 added in), a port listed twice, a 32-bit Q counter, `lifespan`, a state, a
/// device-wide counter, a CR line ending, kernel statistics the subset drops.
const DUMP: &str = "\
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:42
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/out_of_sequence:7
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/lifespan:12
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/rx_vport_rdma_unicast_bytes:1000
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/rx_vport_rdma_multicast_bytes:10
/sys/class/infiniband/mlx5_0/ports/1/hw_counters/tx_vport_rdma_unicast_bytes:2000
/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data:100
/sys/class/infiniband/mlx5_0/ports/1/counters/port_rcv_data:250
/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE
/sys/class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0:ens1
/sys/class/infiniband/mlx5_0/hw_counters/rp_cnp_handled:5
/sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data:300
/sys/class/infiniband/mlx5_1/ports/1/counters/port_rcv_data:400\r
/sys/class/infiniband/mlx5_1/ports/1/gid_attrs/ndevs/0:ens1
/sys/class/infiniband/mlx5_1/ports/2/counters/port_xmit_data:5
/sys/class/infiniband/mlx5_1/ports/2/counters/port_xmit_data:6
/sys/class/infiniband/mlx5_1/ports/2/rate:25 Gb/sec (1X EDR)

/sys/class/net/ens1/statistics/rx_bytes:5000
/sys/class/net/ens1/statistics/tx_bytes:1,234
/sys/class/net/ens1/statistics/rx_dropped:3
";

/// The prometheus/procfs sysfs tree as `grep -rs .` prints it (one `path:value` line a file).
fn ttar_dump() -> String {
    let ttar = include_str!(
        "../../../../../tests/fixtures/linux/procfs-fixture_sys-class-infiniband.ttar"
    );
    let mut out = String::new();
    let mut lines = ttar.lines();
    while let Some(l) = lines.next() {
        let Some(path) = l.strip_prefix("Path: ") else {
            continue;
        };
        let n: usize = lines
            .next()
            .and_then(|l| l.strip_prefix("Lines: "))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        for _ in 0..n {
            let v = lines.next().unwrap_or("");
            out.push_str(&format!("/{path}:{v}\n"));
        }
    }
    assert!(out.lines().count() > 100, "the ttar has its files");
    out
}

/// The pasted captures (relative lines under a `cd` or a `show_counters` heading).
const PASTED: [&str; 3] = [
    include_str!(
        "../../../../../tests/fixtures/linux/hw-counters_omnipath-hfi1_cd-then-for-printf_netdata-pr9091.txt"
    ),
    include_str!(
        "../../../../../tests/fixtures/linux/hw-counters_show-counters_mlx5-0_cx4-lx_ofed-5.0_notes.txt"
    ),
    include_str!(
        "../../../../../tests/fixtures/linux/hw-counters_show-counters_mlx5-bond-0_dcqcn-active_notes.txt"
    ),
];

/// `line` with its last number replaced by `to` (None: it has no number).
fn renumber(line: &str, to: &str) -> Option<String> {
    let end = line.rfind(|c: char| c.is_ascii_digit())? + 1;
    let start = line[..end]
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    Some(format!("{}{to}{}", &line[..start], &line[end..]))
}

/// Dumps that change line `i` of `base` every way, each value change followed by another (two
/// deltas in a row), the others by `base` again.
fn variants(base: &[String], i: usize) -> Vec<Vec<String>> {
    let with = |l: Option<String>| {
        l.map(|l| {
            let mut d = base.to_vec();
            d[i] = l;
            d
        })
    };
    let line = &base[i];
    let mut out = Vec::new();
    // Values: up, up again across 2^32 (a 32-bit Q counter becomes a 64-bit one), to 0, to
    // the top of u64 (the byte sums saturate), back.
    for to in ["1", "4294967296", "0", "18446744073709551615", "9"] {
        out.extend(with(renumber(line, to)));
    }
    out.push(base.to_vec());
    // Not a number, renamed, blanked; removed, doubled, swapped with the next line.
    for l in [
        line.rsplit_once(':').map(|(a, _)| format!("{a}:n/a")),
        line.rsplit_once('/').map(|(a, b)| format!("{a}/x{b}")),
        Some(String::new()),
    ] {
        out.extend(with(l));
        out.push(base.to_vec());
    }
    let mut removed = base.to_vec();
    removed.remove(i);
    let mut doubled = base.to_vec();
    doubled.insert(i, line.clone());
    out.extend([removed, base.to_vec(), doubled, base.to_vec()]);
    if i + 1 < base.len() {
        let mut swapped = base.to_vec();
        swapped.swap(i, i + 1);
        out.extend([swapped, base.to_vec()]);
    }
    out
}

/// Every variant of every line of `text` through the memo (check_kinds compares each dump with
/// a full parse); the number of dumps answered from the memo.
fn every_change(text: &str) -> usize {
    let base: Vec<String> = text.lines().map(str::to_string).collect();
    let mut dumps = vec![vec![base.join("\n") + "\n"]];
    for i in 0..base.len() {
        for d in variants(&base, i) {
            dumps.push(vec![d.join("\n") + "\n"]);
        }
    }
    check_kinds(&HW, &dumps).len()
}

#[test]
fn every_change_to_a_full_path_dump_gives_a_full_parse() {
    let hits = every_change(DUMP);
    // The counter lines' value changes (not the state's, the rate's, the netdev's) come from
    // the memo: at least 4 a counter line of the 16.
    assert!(hits >= 16 * 4, "{hits} answered from the memo");
    let hits = every_change(&ttar_dump());
    assert!(hits > 100, "{hits} answered from the memo");
}

#[test]
fn pasted_captures_are_parsed_whole_and_still_equal() {
    for text in PASTED {
        // Lines read through a heading are not independent: no memo, every dump parsed.
        assert_eq!(every_change(text), 0);
    }
}

#[test]
fn moved_values_are_answered_from_the_memo() {
    let base: Vec<String> = DUMP.lines().map(str::to_string).collect();
    let counters: Vec<usize> = (0..base.len())
        .filter(|&i| crate::parse::host::hw_counters::value_line(&base[i]).is_some())
        .collect();
    assert_eq!(counters.len(), 16);
    // Every counter moves every dump, the byte counters and the words summed with them too.
    let dumps: Vec<Vec<String>> = (1..6u64)
        .map(|k| {
            let mut d = base.clone();
            for (n, &i) in counters.iter().enumerate() {
                d[i] = renumber(&d[i], &(k * 1000 + n as u64).to_string()).expect("a number");
            }
            vec![d.join("\n") + "\n"]
        })
        .collect();
    assert_eq!(check_kinds(&HW, &dumps).len(), dumps.len() - 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_values_give_a_full_parse(
        seq in prop::collection::vec(prop::collection::vec(
            prop_oneof![0u64..4, Just(u64::from(u32::MAX)), Just(u64::MAX / 3), Just(u64::MAX)],
            16,
        ), 1..10)
    ) {
        let base: Vec<String> = DUMP.lines().map(str::to_string).collect();
        let counters: Vec<usize> = (0..base.len())
            .filter(|&i| crate::parse::host::hw_counters::value_line(&base[i]).is_some())
            .collect();
        let dumps: Vec<Vec<String>> = seq
            .iter()
            .map(|vals| {
                let mut d = base.clone();
                for (&i, v) in counters.iter().zip(vals) {
                    d[i] = renumber(&d[i], &v.to_string()).expect("a number");
                }
                vec![d.join("\n") + "\n"]
            })
            .collect();
        check_kinds(&HW, &dumps);
    }
}

#[test]
fn known_value_is_value_line_on_counter_lines() {
    use crate::parse::host::hw_counters::{known_value, value_line};
    let odd = "\
/sys/devices/pci0000:00/0000:00:02.0/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent 42
/sys/devices/pci0000:00/0000:00:02.0/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled:7\r
/sys/class/net/eth0:1/statistics/rx_bytes 5
/sys/class/net/ens1/statistics/tx_bytes:  1,234
";
    let mut n = 0;
    for text in [DUMP, &ttar_dump(), odd] {
        for l in text.lines() {
            if let Some(want) = value_line(l) {
                assert_eq!(known_value(l), Some(want), "{l}");
                n += 1;
            }
        }
    }
    assert!(n > 100, "{n} counter lines");
    // The space form with a ':' in its path changing value: still equal to a full parse.
    let dumps: Vec<Vec<String>> = (0..4u64)
        .map(|v| vec![odd.replace("np_cnp_sent 42", &format!("np_cnp_sent {v}"))])
        .collect();
    assert_eq!(check_kinds(&HW, &dumps).len(), 3);
}
