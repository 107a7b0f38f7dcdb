//! Some switches hang up after each exec, so their commands go in one exec (` ; `-joined) and the
//! outputs come back glued together with nothing between them. This finds where each command's
//! output starts, by the header that output always has, so each parser gets only its own part.

use crate::parse::ParseKind;
use crate::parse::num::is_rule;

/// The line where an output of `kind` starts (its table header, or the rule drawn above it).
fn start_of(kind: ParseKind, lines: &[&str], from: usize) -> Option<usize> {
    let header = |l: &str| {
        let t = l.trim();
        match kind {
            ParseKind::NxosPfc => t.starts_with("Port") && t.contains("Mode") && t.contains("Oper"),
            ParseKind::NxosFlowcontrol => t.starts_with("Port") && t.contains("FlowControl"),
            ParseKind::NxosInterface | ParseKind::NxosMtu => {
                t.contains(" is up") || t.contains(" is down")
            }
            ParseKind::NxosQueuing => {
                t.starts_with("Egress Queuing for")
                    || t.starts_with("slot")
                    || t.ends_with("queuing information:")
            }
            ParseKind::SonicPfc => t.starts_with("Port Rx") || t.starts_with("Port Tx"),
            ParseKind::SonicQueue => t.contains("TxQ") && t.contains("Counter/pkts"),
            ParseKind::SonicWred => t.contains("TxQ") && t.contains("WredDrp"),
            ParseKind::LldpNeighbors => {
                t.starts_with("Capability codes") || t.starts_with("Last table change")
            }
            ParseKind::SonicPfcwd => t.starts_with("QUEUE") && t.contains("STORM"),
            ParseKind::NxosPfcwd => t.contains("Interface PFC watchdog:"),
            ParseKind::SonicQos => t == "{",
            ParseKind::EosQos => t.starts_with("! Command: show running-config"),
            ParseKind::NxosQos => {
                t.starts_with("!Command: show running-config")
                    || t.starts_with("class-map ")
                    || t.starts_with("policy-map ")
            }
            _ => false,
        }
    };
    let at = (from..lines.len()).find(|&i| lines.get(i).is_some_and(|l| header(l)))?;
    // Take the rules and blank lines drawn above the header with it. A block that starts with
    // its interface line has no rule above: a rule there closes the previous output (the PFC
    // watchdog's box).
    let ruled = !matches!(
        kind,
        ParseKind::NxosInterface | ParseKind::NxosMtu | ParseKind::NxosPfcwd
    );
    let mut s = at;
    while s > from
        && lines
            .get(s - 1)
            .is_some_and(|l| (ruled && is_rule(l)) || l.trim().is_empty())
    {
        s -= 1;
    }
    Some(s)
}

/// Split the glued output of commands of `kinds` (in the order they were sent) into one text per
/// command. A part whose header never appears is empty (missing, not zero).
pub fn split(kinds: &[ParseKind], text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut starts: Vec<Option<usize>> = Vec::with_capacity(kinds.len());
    let mut from = 0;
    for (i, k) in kinds.iter().enumerate() {
        // The first output starts at the top, whatever it begins with; the second's header may
        // stand on the very first line, when the first command printed nothing (a switch with
        // no queuing on those ports): then the first output is empty, not the second's.
        let s = match i {
            0 => Some(0),
            1 => start_of(*k, &lines, 0),
            _ => start_of(*k, &lines, from),
        };
        if i == 1 && s == Some(0) {
            starts[0] = None;
        }
        if let Some(s) = s {
            from = s + 1;
        }
        starts.push(s);
    }
    (0..kinds.len())
        .map(|i| {
            let Some(Some(s)) = starts.get(i) else {
                return String::new();
            };
            let end = starts
                .iter()
                .skip(i + 1)
                .flatten()
                .next()
                .copied()
                .unwrap_or(lines.len());
            let mut part = lines.get(*s..end).unwrap_or_default().join("\n");
            part.push('\n');
            part
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{Ctx, parse};

    const Q: &str = "\nEgress Queuing for Ethernet2/1 [System]\n+---+\n|  QOS GROUP 0  |\n+---+\n|  Tx Pkts |   12|\n+---+\n";
    const PFC: &str = "\n============================================================\nPort               Mode Oper(VL bmap)  RxPPP      TxPPP\n============================================================\n\nEthernet2/1        Auto On  (8)        5          7\n";
    const FC: &str = "\n--------------------------------------------------------------------------------\nPort         Send FlowControl  Receive FlowControl  RxPause TxPause\n             admin    oper     admin    oper\n--------------------------------------------------------------------------------\nEth2/1       off      off      on       on          3       4\n";

    #[test]
    fn glued_nxos_outputs_come_apart_and_parse_alone() {
        let kinds = [
            ParseKind::NxosQueuing,
            ParseKind::NxosPfc,
            ParseKind::NxosFlowcontrol,
        ];
        let glued = format!("{Q}{PFC}{FC}");
        let parts = split(&kinds, &glued);
        assert_eq!(parts.len(), 3);
        let ctx = Ctx::named("sw");
        let pfc = parse(ParseKind::NxosPfc, &parts[1], &ctx);
        assert_eq!(pfc.unknown_lines, 0, "{:?}", pfc.unknown_examples);
        assert!(
            pfc.samples
                .iter()
                .any(|s| s.key.name == crate::metrics::names::SW_PFC_TX)
        );
        let fc = parse(ParseKind::NxosFlowcontrol, &parts[2], &ctx);
        assert_eq!(fc.unknown_lines, 0, "{:?}", fc.unknown_examples);
        assert!(!fc.samples.is_empty());
        let q = parse(ParseKind::NxosQueuing, &parts[0], &ctx);
        assert_eq!(q.unknown_lines, 0, "{:?}", q.unknown_examples);
        assert!(!parts[0].contains("RxPPP") && !parts[1].contains("FlowControl"));
    }

    #[test]
    fn a_missing_part_is_empty_not_borrowed() {
        let kinds = [
            ParseKind::NxosQueuing,
            ParseKind::NxosPfc,
            ParseKind::NxosFlowcontrol,
        ];
        let parts = split(&kinds, &format!("{Q}{FC}"));
        assert!(parts[1].is_empty());
        assert!(parts[2].contains("Eth2/1"));
        assert!(split(&kinds, "").iter().skip(1).all(String::is_empty));
    }

    /// The first command printed nothing and the second's header is the first line (no rule
    /// above it): the second output is its own, not the first's.
    #[test]
    fn an_empty_first_output_leaves_the_second_its_header_line() {
        let kinds = [
            ParseKind::NxosQueuing,
            ParseKind::NxosPfc,
            ParseKind::NxosFlowcontrol,
        ];
        let pfc = "Port                 Mode Oper(VL bmap)  RxPPP      TxPPP\n============================================================\n\nEthernet1/1/1        Auto On (8)        5          7\n";
        let ctx = Ctx::named("sw");
        for glued in [
            format!("{pfc}{FC}"),
            format!("\n{pfc}{FC}"),
            format!("{Q}{pfc}{FC}"),
        ] {
            let parts = split(&kinds, &glued);
            let p = parse(ParseKind::NxosPfc, &parts[1], &ctx);
            assert_eq!(p.unknown_lines, 0, "{glued:?}: {:?}", p.unknown_examples);
            let rx = p.samples.iter().find(|s| {
                s.key.name == crate::metrics::names::SW_PFC_RX
                    && s.key.label("port") == Some("Ethernet1/1/1")
            });
            assert!(rx.is_some(), "the port's RxPPP: {glued:?}");
            assert!(!parts[0].contains("RxPPP"), "{glued:?}");
            let fc = parse(ParseKind::NxosFlowcontrol, &parts[2], &ctx);
            assert_eq!(fc.unknown_lines, 0, "{:?}", fc.unknown_examples);
        }
        // Every part empty but the first when nothing else is recognised.
        let parts = split(&kinds, "garbage\nmore\n");
        assert!(parts[1].is_empty() && parts[2].is_empty());
        assert!(parts[0].contains("garbage"));
    }
}
