//! `show interfaces counters queue [detail]` as EOS prints it (CLI text). Each section is a table
//! whose columns are found by their header names, and whose direction the section says:
//!
//! - `Aggregate VoQ Counters` (7280R/7500R, Jericho): `Egress Port  Traffic Class  Pkts  Octets
//!   DropPkts  DropOctets`, the packets each ingress chip holds for an egress port: drops there
//!   are ingress (VoQ) drops, kept apart from the egress queue's own;
//! - `Egress Queue Counters`: `Port  Traffic Class  DropPrec  DestType  OutEnqPkts  OutEnqOctets
//!   OutDropPkts  OutDropOctets`, one row per drop precedence and unicast/multicast, summed per
//!   traffic class;
//! - the Trident/Tomahawk table `Port  TxQ  Counter/pkts  Counter/bytes  Drop/pkts  Drop/bytes`
//!   (queues `UC3`/`MC3`, summed per traffic class).
//!
//! The samples are those of the eAPI JSON reading ([`super::queue`]): the same facts give the
//! same series. The header's second line (`Port  Class`) is a header; a row cut short, a section
//! this file does not know and its rows are not understood. Rows of the egress table passed
//! through `| include Et4/1/1` without their header are still unambiguous (`TC0 DP0-3 UC` plus
//! four counters) and are read in that column order, with a note.

use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::num::{count, is_rule, lines, trim};
use crate::parse::switch::common::{Acc, is_prompt_or_echo};
use crate::parse::switch::normalize_port;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Dir {
    Egress,
    Voq,
}

/// What a column holds.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Col {
    Port,
    Class,
    Packets,
    Bytes,
    Dropped,
    DroppedBytes,
    /// Printed but not a sample (`DropPrec`, `DestType`): summed over.
    Other,
}

fn col_of(name: &str) -> Option<Col> {
    Some(match name.to_ascii_lowercase().as_str() {
        "port" | "egress" | "interface" => Col::Port,
        "traffic" | "txq" | "class" | "tc" => Col::Class,
        "pkts" | "outenqpkts" | "counter/pkts" | "enqpkts" => Col::Packets,
        "octets" | "outenqoctets" | "counter/bytes" | "enqoctets" => Col::Bytes,
        "droppkts" | "outdroppkts" | "drop/pkts" => Col::Dropped,
        "dropoctets" | "outdropoctets" | "drop/bytes" => Col::DroppedBytes,
        "dropprec" | "desttype" => Col::Other,
        _ => return None,
    })
}

/// A table header: every word a known column, a port and a class column and one counter.
fn header(words: &[&str]) -> Option<Vec<Col>> {
    let cols: Vec<Col> = words.iter().map(|w| col_of(w)).collect::<Option<_>>()?;
    let has = |c: Col| cols.contains(&c);
    let counters = [Col::Packets, Col::Bytes, Col::Dropped, Col::DroppedBytes];
    (cols.first() == Some(&Col::Port) && has(Col::Class) && counters.iter().any(|c| has(*c)))
        .then_some(cols)
}

/// The second header line: `Port  Class` under `Egress  Traffic`, `Class` under `Traffic`.
fn is_header_tail(words: &[&str]) -> bool {
    !words.is_empty()
        && words
            .iter()
            .all(|w| matches!(w.to_ascii_lowercase().as_str(), "port" | "class"))
}

/// The section a title line opens (`Aggregate VoQ Counters`, `Egress Queue Counters`).
fn section(t: &str) -> Option<Dir> {
    let l = t.to_ascii_lowercase();
    if !l.ends_with("counters") {
        return None;
    }
    if l.contains("voq") {
        Some(Dir::Voq)
    } else if l.contains("egress queue") {
        Some(Dir::Egress)
    } else {
        None
    }
}

/// `TC3` → `TC3`; a Trident queue `UC3`/`MC3` → `TC3` (unicast and multicast summed, as the JSON
/// reading sums `ucastQueues` and `mcastQueues`).
fn traffic_class(s: &str) -> Option<String> {
    let n = ["TC", "UC", "MC"]
        .iter()
        .find_map(|p| s.strip_prefix(p))
        .or_else(|| s.strip_prefix("tc"))?;
    (!n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()))
        .then(|| format!("TC{n}"))
}

/// The egress detail row's shape without a header: port, class, `DPn[-m]`, `UC`/`MC`, 4 counts.
const EGRESS_DETAIL: [Col; 8] = [
    Col::Port,
    Col::Class,
    Col::Other,
    Col::Other,
    Col::Packets,
    Col::Bytes,
    Col::Dropped,
    Col::DroppedBytes,
];

fn headless_egress(words: &[&str]) -> bool {
    words.len() == EGRESS_DETAIL.len()
        && words.get(2).is_some_and(|w| w.starts_with("DP"))
        && words
            .get(3)
            .is_some_and(|w| matches!(*w, "UC" | "MC" | "UCMC" | "ALL"))
}

/// One data row under `cols`; false when it is not one.
fn row(acc: &mut Acc, sw: &str, dir: Dir, cols: &[Col], words: &[&str]) -> bool {
    if words.len() != cols.len() {
        return false;
    }
    let (mut port, mut tc) = (None, None);
    let mut counts = Vec::with_capacity(4);
    for (c, w) in cols.iter().zip(words) {
        match c {
            Col::Port => {
                port = w
                    .chars()
                    .any(|c| c.is_ascii_digit())
                    .then(|| normalize_port(w))
            }
            Col::Class => tc = traffic_class(w),
            Col::Other => {}
            // `-`: not counted on this platform (no sample); any other word is no number.
            k if *w == "-" || *w == "N/A" => counts.push((*k, None)),
            k => match count(w) {
                Some(n) => counts.push((*k, Some(n))),
                None => return false,
            },
        }
    }
    let (Some(port), Some(tc)) = (port, tc) else {
        return false;
    };
    let l = [
        ("switch", sw),
        ("port", port.as_str()),
        ("queue", tc.as_str()),
    ];
    for (k, n) in counts {
        let Some(n) = n else { continue };
        let s = match (dir, k) {
            (Dir::Egress, Col::Packets) => Sample::counter(SW_QUEUE_TX_PACKETS, &l, n),
            (Dir::Egress, Col::Bytes) => Sample::counter(SW_QUEUE_TX_BYTES, &l, n),
            (Dir::Egress, Col::Dropped) => {
                Sample::counter(SW_QUEUE_DROPPED, &[l[0], l[1], l[2], ("reason", "drop")], n)
            }
            (Dir::Egress, Col::DroppedBytes) => Sample::counter(
                SW_QUEUE_DROPPED_BYTES,
                &[l[0], l[1], l[2], ("reason", "drop")],
                n,
            ),
            (Dir::Voq, Col::Dropped) => Sample::counter(
                SW_INGRESS_DROPPED,
                &[l[0], l[1], l[2], ("reason", "voq")],
                n,
            ),
            (Dir::Voq, Col::DroppedBytes) => Sample::counter(
                SW_INGRESS_DROPPED_BYTES,
                &[l[0], l[1], l[2], ("reason", "voq")],
                n,
            ),
            // What the VoQ holds for a port is not what it sent (the JSON reading skips it too).
            _ => continue,
        };
        // Drop precedences and unicast/multicast rows add up to the traffic class.
        acc.add(s);
    }
    true
}

pub fn parse(text: &str, sw: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    // The section's direction, and the header of the table under way.
    let mut dir: Option<Dir> = None;
    let mut cols: Option<Vec<Col>> = None;
    let mut headless = 0usize;
    let mut foreign = false;
    for raw in lines(text) {
        let t = trim(raw);
        if t.is_empty() || is_rule(t) || is_prompt_or_echo(t) {
            continue;
        }
        if let Some(d) = section(t) {
            (dir, cols, foreign) = (Some(d), None, false);
            continue;
        }
        // A section this parser does not know: its title and its rows are not understood.
        if t.ends_with("Counters") && !t.contains(|c: char| c.is_ascii_digit()) {
            (dir, cols, foreign) = (None, None, true);
            p.unknown(t);
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if let Some(h) = header(&words) {
            // A header says its direction where no title did: `Egress Port` heads the VoQ
            // table, `OutEnqPkts`/`DropPrec` the egress one, `TxQ` a Trident egress queue.
            if dir.is_none()
                || words
                    .first()
                    .is_some_and(|w| w.eq_ignore_ascii_case("egress"))
            {
                dir = Some(match words.first() {
                    Some(w) if w.eq_ignore_ascii_case("egress") => Dir::Voq,
                    _ => Dir::Egress,
                });
            }
            cols = Some(h);
            continue;
        }
        if cols.is_some() && is_header_tail(&words) {
            continue;
        }
        let ok = match (&cols, dir) {
            (Some(c), Some(d)) => row(&mut acc, sw, d, c, &words),
            (None, _) if !foreign && headless_egress(&words) => {
                headless += 1;
                row(&mut acc, sw, Dir::Egress, &EGRESS_DETAIL, &words)
            }
            _ => false,
        };
        if !ok {
            p.unknown(t);
        }
    }
    if headless > 0 {
        p.note(format!(
            "{headless} egress queue rows without a header read in EOS's column order: Port Class DropPrec DestType OutEnqPkts OutEnqOctets OutDropPkts OutDropOctets"
        ));
    }
    acc.into_parsed(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Value as V;

    fn c(p: &Parsed, name: &str, l: &[(&str, &str)]) -> Option<u64> {
        match p.find(name, l) {
            Some(V::Counter(n)) => Some(n),
            _ => None,
        }
    }

    #[test]
    fn voq_and_egress_sections_stay_apart() {
        let text = "Aggregate VoQ Counters\n\
            Egress      Traffic   Pkts   Octets   DropPkts   DropOctets\n\
            Port        Class\n\
            Et3/1/1     TC1       10     1000     7          700\n\
            Egress Queue Counters\n\
            Port   Traffic DropPrec DestType OutEnqPkts OutEnqOctets OutDropPkts OutDropOctets\n\
            \x20      Class\n\
            Et3/1/1  TC1  DP0  UC  5  500  2  200\n\
            Et3/1/1  TC1  DP1  UC  1  100  1  100\n\
            Et3/1/1  TC1  DP0  MC  4  400  -  -\n";
        let p = parse(text, "a");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let q = [("port", "Ethernet3/1/1"), ("queue", "TC1")];
        assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &q), Some(10));
        assert_eq!(c(&p, SW_QUEUE_TX_BYTES, &q), Some(1000));
        assert_eq!(c(&p, SW_QUEUE_DROPPED, &q), Some(3));
        assert_eq!(c(&p, SW_INGRESS_DROPPED, &q), Some(7));
        assert_eq!(c(&p, SW_INGRESS_DROPPED_BYTES, &q), Some(700));
    }

    #[test]
    fn trident_table_headless_rows_and_cut_rows() {
        let p = parse(
            "Port  TxQ  Counter/pkts  Counter/bytes  Drop/pkts  Drop/bytes\nEt1  UC3  5  50  1  10\nEt1  MC3  2  20  0  0\nEt1  UC4  9\n",
            "a",
        );
        let q = [("port", "Ethernet1"), ("queue", "TC3")];
        assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &q), Some(7));
        assert_eq!(c(&p, SW_QUEUE_DROPPED_BYTES, &q), Some(10));
        assert_eq!(p.unknown_lines, 1, "the cut-off row");
        // `| include Et4/1/1` of the detail: no header, still one meaning.
        let p = parse("Et4/1/1  TC0  DP0-3  UC  3  30  1  10\n", "a");
        assert_eq!(
            c(&p, SW_QUEUE_TX_PACKETS, &[("port", "Ethernet4/1/1")]),
            Some(3)
        );
        assert_eq!(p.notes.len(), 1);
        // A 6-column row with neither header nor section could be VoQ or egress: not guessed.
        let p = parse("Et3/1/1  TC0  1  2  3  4\n", "a");
        assert!(p.samples.is_empty());
        assert_eq!(p.unknown_lines, 1);
        // An unknown section's rows are not read as the previous table's.
        let p = parse(
            "Port  TxQ  Counter/pkts  Counter/bytes  Drop/pkts  Drop/bytes\nEt1  UC3  5  50  1  10\nIngress Thing Counters\nEt1  UC3  6  60  1  10\nEt4/1/1  TC0  DP0-3  UC  3  30  1  10\n",
            "a",
        );
        assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &[("queue", "TC3")]), Some(5));
        assert_eq!(p.unknown_lines, 3);
    }

    proptest::proptest! {
        /// Whatever the split over drop precedences and unicast/multicast, a traffic class gets
        /// the sum of its rows; and any text never panics.
        #[test]
        fn egress_rows_add_up(rows in proptest::collection::vec((0u8..4, proptest::bool::ANY, 0u64..1u64 << 40), 1..12),
                              junk in "\\PC{0,80}") {
            let mut text = String::from("Egress Queue Counters\nPort Traffic DropPrec DestType OutEnqPkts OutEnqOctets OutDropPkts OutDropOctets\n Class\n");
            for (dp, uc, n) in &rows {
                let dest = if *uc { "UC" } else { "MC" };
                text.push_str(&format!("Et7/1  TC3  DP{dp}  {dest}  {n}  0  0  0\n"));
            }
            let p = parse(&text, "a");
            let want: u64 = rows.iter().map(|r| r.2).sum();
            proptest::prop_assert_eq!(c(&p, SW_QUEUE_TX_PACKETS, &[("queue", "TC3")]), Some(want));
            proptest::prop_assert_eq!(p.unknown_lines, 0);
            let p = parse(&junk, "a");
            proptest::prop_assert!(p.unknown_examples.len() <= Parsed::MAX_EXAMPLES);
        }
    }
}
