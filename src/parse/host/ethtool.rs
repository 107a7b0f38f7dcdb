//! `ethtool -S <netdev>`: `name: value` lines, with or without the `NIC statistics:` header,
//! indented or not. PFC counters are recognised by the exact structure of their names
//! (`rx_prio3_pause` is never `rx_prio3_pause_duration`); every other counter keeps its own name as
//! `rocetop_nic_<name>_total`.
//!
//! The netdev label is the `netdev` argument; when that is empty (`rocetop parse ethtool`), it is
//! taken from an echoed `ethtool -S <netdev>` command line in the text, else it is
//! [`UNNAMED_NETDEV`] (`-`), so that every series still has the same label set.

use super::prompt;
use crate::metrics::names::{self, *};
use crate::metrics::{Parsed, Sample};
use crate::parse::num;

/// The netdev label when neither the caller nor the text names the interface.
pub const UNNAMED_NETDEV: &str = "-";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dir {
    Rx,
    Tx,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Pause frames.
    Pause,
    /// Time paused, in microseconds.
    Duration,
    /// XOFF → XON transitions.
    Transition,
}

/// Which priority a pause counter is for: one PFC priority, or 802.3x global pause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prio {
    P(u8),
    Global,
}

/// What a pause counter counts.
type Pause = (Dir, Prio, Kind);

/// The structure of an mlx5 pause counter name, matched exactly:
/// `<rx|tx>_prio<p>_pause[_duration|_transition]` and `<rx|tx>_global_pause[_duration|_transition]`.
fn pause_name(name: &str) -> Option<Pause> {
    let (dir, rest) = if let Some(r) = name.strip_prefix("rx_") {
        (Dir::Rx, r)
    } else {
        (Dir::Tx, name.strip_prefix("tx_")?)
    };
    let (prio, rest) = if let Some(r) = rest.strip_prefix("prio") {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 2 {
            return None;
        }
        let p: u8 = r.get(..digits)?.parse().ok()?;
        (Prio::P(p), r.get(digits..)?)
    } else {
        (Prio::Global, rest.strip_prefix("global")?)
    };
    let kind = match rest {
        "_pause" => Kind::Pause,
        "_pause_duration" => Kind::Duration,
        "_pause_transition" => Kind::Transition,
        _ => return None,
    };
    Some((dir, prio, kind))
}

fn metric(dir: Dir, kind: Kind) -> &'static str {
    match (dir, kind) {
        (Dir::Rx, Kind::Pause) => NIC_PFC_RX_PAUSE,
        (Dir::Tx, Kind::Pause) => NIC_PFC_TX_PAUSE,
        (Dir::Rx, Kind::Duration) => NIC_PFC_RX_PAUSE_DURATION,
        (Dir::Tx, Kind::Duration) => NIC_PFC_TX_PAUSE_DURATION,
        (Dir::Rx, Kind::Transition) => NIC_PFC_RX_PAUSE_TRANSITION,
        (Dir::Tx, Kind::Transition) => NIC_PFC_TX_PAUSE_TRANSITION,
    }
}

/// The MAC-control pause counters (`rx_pause_ctrl_phy`): 802.3x pause frames, counted as global
/// pause only where the port has no `*_global_pause` counter (both count the same frames; one
/// series per direction, the other stays visible under its own name).
fn ctrl_pause_name(name: &str) -> Option<Dir> {
    match name {
        "rx_pause_ctrl_phy" => Some(Dir::Rx),
        "tx_pause_ctrl_phy" => Some(Dir::Tx),
        _ => None,
    }
}

/// The netdev an echoed `ethtool -S <netdev>` (or `--statistics`) names.
fn netdev_of_command(line: &str) -> Option<&str> {
    let args = prompt::command(line, "ethtool")?;
    let i = args
        .iter()
        .position(|a| *a == "-S" || *a == "--statistics")?;
    args.get(i + 1).copied().filter(|n| !n.starts_with('-'))
}

/// A counter name as drivers print them (`rx_prio3_pause`, `port.rx_bytes`, `[0]: rx_ucast_packets`,
/// `ch0_arm`): printable ASCII, with a letter. Anything else is garbage that happens to hold a
/// colon and a number, and must not become a series of its own.
fn plausible_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && name.bytes().any(|b| b.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.:[]/() ".contains(&b))
}

/// Parse `ethtool -S` of one netdev.
pub fn parse(text: &str, node: &str, netdev: &str) -> Parsed {
    parse_keeping(text, node, netdev, &mut |_| true)
}

/// [`parse`], making samples only of the non-pause counters `keep` accepts (the live collectors'
/// `nic_counters` subset: a mlx5 port prints ~750 counters, and most would be made to be dropped).
/// `keep` is asked about each non-pause counter once, in the order of the output.
pub fn parse_keeping(
    text: &str,
    node: &str,
    netdev: &str,
    keep: &mut dyn FnMut(&str) -> bool,
) -> Parsed {
    parse_keeping_lines(text, node, netdev, keep).0
}

/// A `name: value` counter line as the parsers read it: the name and the value. Values are plain
/// numbers, so the last ':' ends the name (a name may contain ':').
pub fn counter_line(raw: &str) -> Option<(&str, u64)> {
    let line = num::trim(raw.trim_end_matches('\r'));
    let (name, value) = line.rsplit_once(':')?;
    let name = num::trim(name);
    if !plausible_name(name) {
        return None;
    }
    Some((name, num::count(value)?))
}

/// [`parse_keeping`], with the line each sample's value was read from (its index in
/// `num::lines(text)`), one per sample: every sample of this parser is one counter line's value
/// and nothing else, so a caller that sees only counter values change (a counter line becoming
/// another of the same name, see [`counter_line`]) may set them into the samples of the last
/// parse instead of parsing again (the streaming collector: ~20 of a mlx5 port's ~760 lines
/// change in a second).
pub fn parse_keeping_lines(
    text: &str,
    node: &str,
    netdev: &str,
    keep: &mut dyn FnMut(&str) -> bool,
) -> (Parsed, Vec<u32>) {
    let mut p = Parsed::default();
    let mut named: Option<&str> = None;
    let mut stats: Vec<(&str, u64, Option<Pause>, u32)> = Vec::new();
    let mut lines_of = Vec::new();
    let mut global = [false, false];
    for (at, raw) in num::lines(text).enumerate() {
        if let Some((name, v)) = counter_line(raw) {
            let pause = pause_name(name);
            if let Some((d, Prio::Global, Kind::Pause)) = pause {
                global[usize::from(d == Dir::Tx)] = true;
            }
            stats.push((name, v, pause, at as u32));
            continue;
        }
        let line = num::trim(raw.trim_end_matches('\r'));
        if line.is_empty() {
            continue;
        }
        let split = line
            .rsplit_once(':')
            .map(|(n, v)| (num::trim(n), num::trim(v)));
        if let Some(n) = netdev_of_command(line) {
            named.get_or_insert(n);
            continue;
        }
        if prompt::command(line, "ethtool").is_some() || prompt::after_prompt(line).is_some() {
            continue;
        }
        match split {
            // `NIC statistics:`, `Standard stats for ens1:`: a section header.
            Some((name, "")) if name.to_ascii_lowercase().contains("stat") => {}
            // What ethtool prints for a device without statistics; noted below.
            None if line.eq_ignore_ascii_case("no stats available") => {}
            _ => p.unknown(line),
        }
    }
    let netdev = if netdev.is_empty() {
        named.unwrap_or(UNNAMED_NETDEV)
    } else {
        netdev
    };
    let mut per_priority = false;
    for (name, v, pause, at) in stats {
        let pause = pause.or_else(|| {
            ctrl_pause_name(name)
                .filter(|d| !global[usize::from(*d == Dir::Tx)])
                .map(|d| (d, Prio::Global, Kind::Pause))
        });
        let Some((dir, prio, kind)) = pause else {
            if !keep(name) {
                continue;
            }
            let labels = [("netdev", netdev), ("node", node)];
            p.push(Sample::counter(names::nic_counter(name), &labels, v));
            lines_of.push(at);
            continue;
        };
        const PRIORITIES: [&str; 16] = [
            "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
        ];
        let owned;
        let prio_label = match prio {
            Prio::P(n) => {
                per_priority |= kind == Kind::Pause;
                match PRIORITIES.get(usize::from(n)) {
                    Some(s) => *s,
                    None => {
                        owned = n.to_string();
                        owned.as_str()
                    }
                }
            }
            Prio::Global => "global",
        };
        let labels = [("netdev", netdev), ("node", node), ("priority", prio_label)];
        // The unit is decided here: the NIC counts pause time in µs, the metric is in seconds.
        p.push(if kind == Kind::Duration {
            Sample::counter_micros(metric(dir, kind), &labels, v)
        } else {
            Sample::counter(metric(dir, kind), &labels, v)
        });
        lines_of.push(at);
    }
    if p.samples.is_empty() {
        p.note(format!("{netdev}: ethtool -S printed no counters"));
    } else if !per_priority {
        p.note(format!(
            "{netdev}: no rx_prio*_pause counters (PFC off on this port, or a VF: PFC counters live on the hypervisor)"
        ));
    }
    (p, lines_of)
}

#[cfg(test)]
mod tests;
