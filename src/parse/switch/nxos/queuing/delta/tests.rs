use super::super::parse;
use super::*;
use crate::parse::switch::rows::line_edits;

/// The 7.x boxed layout as bench/perf/fabric.py writes it (the layout a poll reads most), for
/// `ports` ports at tick `t`: every counter moves with `t`.
fn fabric(ports: usize, t: u64) -> String {
    let rule = "+-------------------------------------------------------------------+\n";
    let qbox = |title: &str, v: [u64; 4]| {
        let mut s = format!(
            "{rule}|{title:^67}|\n{rule}|                |  Unicast       | OOBFC Unicast  |  Multicast     |\n{rule}"
        );
        for (label, v) in ["Tx Pkts ", "Tx Byts ", "Dropped Pkts ", "Dropped Byts "]
            .into_iter()
            .zip(v)
        {
            s.push_str(&format!("|{label:>16}|{v:>16}|{:>16}|{:>16}|\n", 0, 0));
        }
        s
    };
    let mut q = String::from("\nslot  1\n=======\n\n");
    for k in 0..ports {
        let tx = 1_000_000 + t * (70_000 + k as u64);
        q.push_str(&format!(
            "\nEgress Queuing for Ethernet1/{} [System]\n{}\nQoS-Group# Bandwidth% PrioLevel                Shape                   QLimit\n                                   Min          Max        Units   \n{}\n",
            k + 1,
            "-".repeat(78),
            "-".repeat(78)
        ));
        for (g, bw) in [(3, 50), (2, 0), (1, 0), (0, 50)] {
            q.push_str(&format!("      {g}            {bw:>2}         -           -            -     -            9(D)\n"));
        }
        for g in 0..4u64 {
            let m = if g == 3 { tx } else { tx / 100 };
            let d = if g == 3 { t } else { 0 };
            q.push_str(&qbox(&format!("QOS GROUP {g}"), [m, m * 4000, d, d * 4000]));
        }
        q.push_str(&qbox("CONTROL QOS GROUP", [10 * t, 1000 * t, 0, 0]));
        q.push_str(&qbox("SPAN QOS GROUP", [0, 0, 0, 0]));
        q.push_str(&format!(
            "{rule}\n\nPort Egress Statistics\n{}\nPause Flush Drop Pkts                    0\nWRED Drop Pkts                  {:>10}\nWRED Non ECN Drop Pkts                   0\n\n\n",
            "-".repeat(56),
            t * 3
        ));
        q.push_str(&format!(
            "Port Ingress Statistics\n{}\nIngress MMU Drop Pkts           {t:>10}\nIngress MMU Drop Bytes          {:>10}\n\n\n",
            "-".repeat(56),
            t * 4000
        ));
        q.push_str(&format!(
            "PFC Statistics\n{}\nTxPPP:            {:>10}, RxPPP:            {:>10}\n{}\n COS QOS Group        PG   TxPause   TxCount         RxPause         RxCount\n",
            "-".repeat(78),
            t * 90,
            t * 120,
            "-".repeat(78)
        ));
        for cos in 0..8u64 {
            let (qg, pg, tx, rx, st) = if cos == 3 {
                ("3", "3", t * 90, t * 120, "Active")
            } else {
                ("0", "-", 0, 0, "Inactive")
            };
            q.push_str(&format!(
                "     {cos}         {qg}         {pg}  {st:>8} {tx:>9}        {st:>8} {rx:>15}\n"
            ));
        }
    }
    q
}

/// Every NX-OS capture of the fixtures (queuing and others: the parser must not care).
fn captures() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/nxos");
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("fixtures")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    assert!(v.len() > 3, "the NX-OS fixtures are read");
    v.push(fabric(3, 5));
    v
}

/// `update` from `old` to `new`: None when it declined, else what it made, which must be the full
/// parse of `new`.
fn updated(old: &str, new: &str) -> Option<Parsed> {
    let (mut p, mut tr) = parse_traced(old, "sw");
    if !update(&mut tr, old, new, "sw", &mut p) {
        return None;
    }
    assert_eq!(p, parse(new, "sw"), "update from\n{old}\nto\n{new}");
    Some(p)
}

#[test]
fn a_traced_parse_is_the_parse() {
    for t in captures() {
        assert_eq!(parse_traced(&t, "sw").0, parse(&t, "sw"));
    }
}

#[test]
fn moving_counters_are_read_from_the_changed_lines_only() {
    // Poll after poll on one trace, as the collector does.
    let mut old = fabric(4, 1);
    let (mut p, mut tr) = parse_traced(&old, "sw");
    assert!(p.samples.len() > 100);
    for t in 2..6 {
        let new = fabric(4, t);
        assert!(
            update(&mut tr, &old, &new, "sw", &mut p),
            "tick {t} taken as values"
        );
        assert_eq!(p, parse(&new, "sw"), "tick {t}");
        old = new;
    }
    // The moved lines (4 ticks, 4 ports, 17 a port) from their numbers, but for those whose
    // number grew a digit into its padding (read by the parser).
    assert!(tr.numbers_only >= 4 * 4 * 15, "{}", tr.numbers_only);
    assert!(update(&mut tr, &old, &old.clone(), "sw", &mut p));
}

/// Each line changed in a few ways, one at a time: every update taken must be the full parse,
/// and value changes are taken.
#[test]
fn any_one_changed_line_gives_the_full_parse() {
    let mut taken = 0;
    for text in captures() {
        let lines: Vec<&str> = crate::parse::num::lines(&text).collect();
        let with = |i: usize, l: Option<&str>| line_edits::with_line(&lines, i, l);
        for (i, line) in lines.iter().enumerate() {
            let bumped = line_edits::bump_digits(line);
            let variants = [
                bumped,
                line.replace("Pkts", "Byts"),
                line.replace("Tx", "Rx"),
                line.replace('|', " "),
                format!("{line} 7"),
                String::new(),
                "garbage line 12".to_string(),
                "Egress Queuing for Ethernet1/9".to_string(),
            ];
            for v in &variants {
                if v == line {
                    continue;
                }
                taken += usize::from(updated(&text, &with(i, Some(v))).is_some());
            }
            // Another number of lines is never taken.
            assert!(updated(&text, &with(i, None)).is_none());
        }
    }
    assert!(taken > 50, "value changes are taken ({taken})");
}

#[test]
fn a_series_set_twice_keeps_the_later_value() {
    // The same box twice for one port and group: a full parse keeps the second value.
    let one = "Egress Queuing for Eth1/1 [System]\n|  QOS GROUP 1 |\n|  Tx Pkts | 5 |\n";
    let old = format!("{one}|  Tx Pkts | 6 |\n");
    for new in [
        format!("{one}|  Tx Pkts | 7 |\n"),
        "Egress Queuing for Eth1/1 [System]\n|  QOS GROUP 1 |\n|  Tx Pkts | 9 |\n|  Tx Pkts | 6 |\n"
            .to_string(),
    ] {
        let p = updated(&old, &new).expect("values only");
        assert_eq!(p.samples.len(), 1);
    }
}

#[test]
fn a_changed_key_or_state_is_not_taken() {
    let old = fabric(2, 1);
    for (from, to) in [
        ("QOS GROUP 2", "QOS GROUP 7"),
        (
            "Egress Queuing for Ethernet1/2",
            "Egress Queuing for Ethernet1/5",
        ),
        ("Port Egress Statistics", "Port Ingress Statistics"),
        ("Dropped Pkts", "Dropped Bytes"),
    ] {
        let new = old.replacen(from, to, 1);
        assert_ne!(new, old);
        assert!(updated(&old, &new).is_none(), "{from} -> {to}");
    }
}

/// Poll after poll on one trace, lines whose digits move in the ways a switch's do: every
/// update is the full parse of its text, and the lines set from their numbers alone are those
/// whose only change is in value digits (a line read by the parser has its runs recorded again,
/// so the next change of its numbers is taken from them).
#[test]
fn lines_whose_numbers_moved_are_set_from_them_alone() {
    let text = |tx: &str, depth: &str, ppp: &str, cos: &str| {
        format!(
            "Egress Queuing for Eth1/1 [System]\n|  QOS GROUP 3 |\n|  Tx Pkts |{tx}| 0 |\n| Q Depth Byts |{depth}|\nPort Egress Statistics\nWRED Drop Pkts   {ppp}\nPFC Statistics\nTxPPP:  {ppp}, RxPPP:  {ppp}\n {cos}  3  3  Active  {ppp}  Active  {ppp}\n"
        )
    };
    let max = u64::MAX.to_string();
    // (tx cells, depth cell, ppp, cos digit), lines set from their numbers; None: not taken.
    let steps: Vec<(String, &str, &str, &str, Option<u64>)> = vec![
        (" 10 | 20".into(), " 5", "90", "3", None),
        (" 11 | 20".into(), " 6", "91", "3", Some(5)),
        // A number one digit wider takes a space of its padding: the parser reads it ...
        (" 11 | 20".into(), "60", "92", "3", Some(3)),
        // ... and the next move is taken from the runs recorded then.
        (" 11 | 20".into(), "61", "92", "3", Some(1)),
        // A missing column that gets a number, then moves.
        (" - | 20".into(), "61", "92", "3", Some(0)),
        (" 7 | 20".into(), "61", "92", "3", Some(0)),
        (" 8 | 21".into(), "61", "92", "3", Some(1)),
        // Sums saturate as the parser adds them.
        (format!(" {max} | 21"), "61", "92", "3", Some(1)),
        (format!(" {max} | 22"), "61", "92", "3", Some(1)),
        // Grouped digits are read by the parser.
        (" 1,234 | 22".into(), "61", "92", "3", Some(0)),
        (" 1,235 | 22".into(), "61", "92", "3", Some(0)),
        // Digits of a key (the COS) moved: another series, not taken; a number past u64 is
        // not a number (the cell is read as a label).
        (" 1,235 | 22".into(), "61", "92", "4", None),
        (" 1,235 | 22".into(), "61", "93", "4", Some(3)),
        // (and a line not understood is not read again: the answer is parsed in full).
        (" 99999999999999999999 | 22".into(), "61", "93", "4", None),
        (" 9 | 22".into(), "61", "93", "4", None),
        (" 10 | 22".into(), "61", "94", "4", Some(4)),
    ];
    let first = &steps[0];
    let mut old = text(&first.0, first.1, first.2, first.3);
    let (mut p, mut tr) = parse_traced(&old, "sw");
    for (tx, depth, ppp, cos, want) in &steps[1..] {
        let new = text(tx, depth, ppp, cos);
        let before = tr.numbers_only;
        let taken = update(&mut tr, &old, &new, "sw", &mut p);
        assert_eq!(taken, want.is_some(), "{new}");
        match want {
            Some(n) => {
                assert_eq!(p, parse(&new, "sw"), "{new}");
                assert_eq!(tr.numbers_only - before, *n, "{new}");
            }
            // Parsed in full, as the memo does.
            None => (p, tr) = parse_traced(&new, "sw"),
        }
        old = new;
    }
}
