use super::*;
use crate::collect::ssh::batch;
use crate::parse::keep::NicMemo;
use proptest::prelude::*;

const NONCE: &str = "0123456789abcdef";

/// A sysfs dump part (its RDMA bytes the port's words × 4; tests/hw.rs has more) and an
/// `ethtool -S` part with what makes
/// that parser's output depend on more than one line: PFC pause counters, 802.3x global pause
/// next to the MAC-control pause counters, counters the subset drops, the netdev named by the
/// echoed command, a header.
fn parts(v: &[u64; 8]) -> Vec<String> {
    let hw = format!(
        "/sys/class/infiniband/mlx5_0/ports/1/hw_counters/np_cnp_sent:{}\n/sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_data:{}\n",
        v[0], v[1]
    );
    let eth = format!(
        "ethtool -S ens1\nNIC statistics:\n     rx_bytes: {}\n     rx_dropped_weird: {}\n     rx_prio3_pause: {}\n     rx_prio3_pause_duration: {}\n     tx_global_pause: {}\n     tx_pause_ctrl_phy: {}\n     rx_pause_ctrl_phy: {}\n     tx_bytes: {}\n",
        v[2], v[3], v[4], v[5], v[6], v[7], v[0], v[1]
    );
    vec![hw, eth]
}

const KINDS: [ParseKind; 2] = [ParseKind::HwCounters, ParseKind::Ethtool];

/// The dump lines the batch prints for these outputs (batch.rs: output, `\n`, status line).
fn dump_lines(parts: &[String]) -> Vec<String> {
    let mut d = String::new();
    for (i, p) in parts.iter().enumerate() {
        d.push_str(&format!("{p}\n@@rocetop-{NONCE}-{i} 0\n"));
    }
    d.split_terminator('\n').map(str::to_string).collect()
}

/// Feed the frame that turns `prev` into `next` (only the changed lines, as the node's awk sends
/// them); the dump it completes.
fn frame(r: &mut Reassembler, seq: u64, prev: &[String], next: &[String]) -> String {
    let changed: Vec<usize> = (0..next.len())
        .filter(|&i| prev.get(i) != Some(&next[i]))
        .collect();
    r.push(&format!(
        "@@rocetop-stream {seq} {} {}",
        next.len(),
        changed.len()
    ))
    .expect("header");
    for &i in &changed {
        r.push(&format!("{}\t{}", i + 1, next[i])).expect("line");
    }
    r.push(&format!("@@rocetop-stream-end {seq}"))
        .expect("end")
        .expect("a dump")
}

/// Every dump through the memo and through a fresh full parse: the same samples, notes and
/// unknown lines each time. Returns how many `ethtool -S` outputs the memo answered.
fn check(dumps: &[Vec<String>]) -> u64 {
    let hits = check_kinds(&KINDS, dumps);
    hits.iter().filter(|&&k| k == ParseKind::Ethtool).count() as u64
}

/// [`check`] of outputs of `kinds`; the kinds of the outputs the memo answered.
fn check_kinds(kinds: &[ParseKind], dumps: &[Vec<String>]) -> Vec<ParseKind> {
    let ctx = Ctx::named("n1");
    let patterns = vec!["rx_bytes".to_string(), "tx_*".to_string()];
    let (memo_a, memo_b) = (NicMemo::default(), NicMemo::default());
    let mut r = Reassembler::new();
    let mut delta = Delta::default();
    let mut prev: Vec<String> = Vec::new();
    for (seq, parts) in dumps.iter().enumerate() {
        let lines = dump_lines(parts);
        let dump = frame(&mut r, seq as u64, &prev, &lines);
        delta.frame(&r, NONCE);
        for (i, res) in batch::split(&dump, NONCE, parts.len())
            .into_iter()
            .enumerate()
        {
            let text = res.expect("part");
            let mut ka = memo_a.keeper(&patterns);
            let mut opts = Options {
                format_regex: None,
                keeper: Some(&mut ka),
            };
            let got = delta.part(i, kinds[i], &text, &ctx, &mut opts, &r, NONCE);
            let mut kb = memo_b.keeper(&patterns);
            let mut opts = Options {
                format_regex: None,
                keeper: Some(&mut kb),
            };
            let want = parse::parse_with(kinds[i], &text, &ctx, &mut opts);
            assert_eq!(got, want, "dump {seq}, part {i}:\n{text}");
        }
        prev = lines;
    }
    delta.hits
}

mod hw;

#[test]
fn value_changes_are_set_into_the_last_parse() {
    let a = parts(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let b = parts(&[1, 20, 30, 4, 50, 60, 7, 80]);
    let c = parts(&[10, 20, 30, 40, 50, 60, 70, 80]);
    let hits = check(&[a.clone(), b.clone(), c, b, a]);
    assert_eq!(
        hits, 4,
        "every dump after the first answers ethtool from the memo"
    );
}

#[test]
fn other_changes_parse_again() {
    let base = parts(&[1, 2, 3, 4, 5, 6, 7, 8]);
    // A counter renamed (rx_dropped_weird → rx_dropped_other): the parse may differ.
    let renamed = {
        let mut p = base.clone();
        p[1] = p[1].replace("rx_dropped_weird: 4", "rx_dropped_other: 5");
        p
    };
    // tx_global_pause gone: tx_pause_ctrl_phy becomes the global pause series.
    let no_global = {
        let mut p = base.clone();
        p[1] = p[1].replace("     tx_global_pause: 7\n", "     tx_other: 7\n");
        p
    };
    // A value that is no count any more, and a line more in the first part (every line moves).
    let not_a_count = {
        let mut p = base.clone();
        p[1] = p[1].replace("rx_bytes: 3", "rx_bytes: n/a");
        p
    };
    let longer = {
        let mut p = base.clone();
        p[0].push_str("/sys/class/infiniband/mlx5_0/ports/1/hw_counters/rp_cnp_handled:9\n");
        p
    };
    for changed in [&renamed, &no_global, &not_a_count, &longer] {
        assert_ne!(changed, &base);
    }
    let dumps = [
        base.clone(),
        renamed,
        base.clone(),
        no_global,
        base.clone(),
        not_a_count,
        base.clone(),
        longer,
        base.clone(),
    ];
    // Each changed dump parses again, and so does the dump after it (its lines changed back).
    assert_eq!(check(&dumps), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn the_memo_answers_what_a_parse_answers(
        seq in prop::collection::vec((prop::array::uniform8(0u64..4), 0u8..8), 1..12)
    ) {
        // Values from a small range repeat (unchanged lines), and now and then a line is renamed.
        let dumps: Vec<Vec<String>> = seq
            .iter()
            .map(|(v, shape)| {
                let mut p = parts(v);
                if *shape == 0 {
                    p[1] = p[1].replace("rx_dropped_weird", "rx_dropped_other");
                }
                p
            })
            .collect();
        check(&dumps);
    }
}
