//! An episode's verdicts from its chain: whether DCQCN took the congestion, the culprit port (the
//! one dropping most, else sending most pauses, else where the host paused most is cabled) when
//! it stands out from the rest, the nodes behind it, and the rail it stays on.

use super::*;

/// A culprit's share of its evidence (drops, or pauses sent, summed over the episode's ports) at
/// least this...
pub const STAND_SHARE: f64 = 0.5;
/// ...and this many times the next port's: otherwise the congestion is spread, and said so.
pub const STAND_RATIO: f64 = 2.0;

/// The largest of `sizes` when it stands out from the rest: at least [`STAND_SHARE`] of their
/// sum and [`STAND_RATIO`] times the next (so a tie never does). `Err`: all of them, largest
/// first, equal ones in the order given (the place the congestion is spread over).
pub fn stand_out<T>(mut sizes: Vec<(T, f64)>) -> Result<T, Vec<T>> {
    sort_largest_first(&mut sizes);
    let sum: f64 = sizes.iter().map(|s| s.1).filter(|v| v.is_finite()).sum();
    let stands = match sizes.as_slice() {
        [] => false,
        [(_, top), rest @ ..] => {
            let next = rest.first().map_or(0.0, |s| s.1);
            *top > 0.0 && *top >= STAND_SHARE * sum && *top >= STAND_RATIO * next
        }
    };
    let mut all = sizes.into_iter().map(|s| s.0);
    match all.next() {
        Some(top) if stands => Ok(top),
        top => Err(top.into_iter().chain(all).collect()),
    }
}

/// Stable: ties keep the order given.
fn sort_largest_first<T>(sizes: &mut [(T, f64)]) {
    sizes.sort_by(|a, b| b.1.total_cmp(&a.1));
}

/// The things of `sizes`, largest first.
fn largest_first<T>(mut sizes: Vec<(T, f64)>) -> Vec<T> {
    sort_largest_first(&mut sizes);
    sizes.into_iter().map(|s| s.0).collect()
}

/// A switch port borrowed from a part's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Port<'a> {
    switch: &'a str,
    port: &'a str,
}

/// One port's drops in an episode: its first, its peaks summed over its reasons, the most
/// evaluations one reason dropped in.
struct PortDropped<'a> {
    at: Port<'a>,
    first: Ts,
    peak: f64,
    evals: u32,
}

/// The rail of every switch of `chain` that is on one (PFC and drop links name switches), where
/// there is at least one and they agree.
pub(super) fn one_rail(
    chain: &[Part],
    rails: &std::collections::BTreeMap<String, u32>,
) -> Option<u32> {
    if rails.is_empty() {
        return None;
    }
    let mut on = chain
        .iter()
        .filter(|p| matches!(p.layer, Layer::Pfc | Layer::Drops))
        .filter_map(|p| rails.get(switch_of(&p.key)));
    let first = *on.next()?;
    on.all(|r| *r == first).then_some(first)
}

/// The episode's verdicts: DCQCN, the culprit port and the nodes behind it.
pub(super) fn conclude(ep: &mut Episode, links: &Links) {
    let pfc = ep.pfc_total_peak;
    let ecn = ep
        .chain
        .iter()
        .find(|p| p.key == "ecn")
        .map_or(0.0, |p| p.peak);
    ep.dcqcn = match (pfc > 0.0, ecn > 0.0) {
        _ if !ep.switch_read => Dcqcn::Unseen,
        (false, false) => Dcqcn::Quiet,
        (false, true) => Dcqcn::Absorbing,
        (true, _) if pfc > 10.0 * ecn => Dcqcn::NotAbsorbing,
        (true, _) => Dcqcn::Partly,
    };
    // Drops name the congestion point; without drops, the port that sends the most pauses;
    // with no switch read, the port the map puts the node paused most on. A switch's evidence
    // only when it stands out from the rest: a stray drop elsewhere is not the congestion
    // point, and congestion over many ports has none.
    // Ports borrowed from the parts' keys: only the culprit's are copied.
    // The parts sorted stably by port, then summed per port in chain order (as a map by port
    // summed them; a map's entry for each of ~100 parts a second was most of this).
    let mut parts: Vec<PortDropped<'_>> = ep
        .parts(Layer::Drops)
        .filter_map(|p| {
            Some(PortDropped {
                at: switch_port(&p.key)?,
                first: p.first,
                peak: p.peak,
                evals: p.evals,
            })
        })
        .collect();
    parts.sort_by(|a, b| a.at.cmp(&b.at));
    let mut drops: Vec<PortDropped<'_>> = Vec::new();
    for part in parts {
        match drops.last_mut() {
            Some(d) if d.at == part.at => {
                d.first = d.first.min(part.first);
                d.peak += part.peak;
                d.evals = d.evals.max(part.evals);
            }
            _ => drops.push(PortDropped {
                peak: 0.0 + part.peak,
                ..part
            }),
        }
    }
    // On a tie, the port that dropped first.
    drops.sort_by_key(|d| d.first);
    let drop_sizes: Vec<(Port<'_>, f64)> = drops.iter().map(|d| (d.at, d.peak)).collect();
    let by_drops = stand_out(drop_sizes.clone()).ok().filter(|top| {
        // A port that dropped in one evaluation only is a stray, however alone it is.
        drops.iter().any(|d| d.at == *top && d.evals >= 2)
    });
    let edge: Vec<(Port<'_>, f64)> = ep
        .parts(Layer::Pfc)
        .filter(|p| !links.behind(switch_of(&p.key), port_of(&p.key)).is_empty())
        .map(|p| {
            let at = Port {
                switch: switch_of(&p.key),
                port: port_of(&p.key),
            };
            (at, p.tx_peak)
        })
        .collect();
    let by_pauses = stand_out(edge.clone()).ok();
    // Without a switch read, the hosts' own evidence: the node paused most, where the map puts it.
    let paused: Vec<(&str, f64)> = ep
        .parts(Layer::HostPause)
        .map(|p| (p.key.trim_start_matches("pause "), p.peak))
        .collect();
    let on_map = |node: &str| links.pairs.iter().find(|p| p.node == node);
    // Not held to standing out: backpressure pauses every sender, the ones nearest the
    // congestion most, so the hosts' pauses are always shared; told as the hosts' evidence
    // (`host pause 10% ubunturdma6 on Ethernet1/1/2`), not as a culprit the switch showed.
    let paused_most = (paused.iter())
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|p| p.0)
        .filter(|_| !ep.switch_read);
    let by_host = paused_most.and_then(on_map).map(|p| Port {
        switch: p.switch.as_str(),
        port: p.port.as_str(),
    });
    let (by, culprit) = match (by_drops, by_pauses, by_host) {
        (Some(c), ..) => (Some(CulpritBy::Drops), Some(c)),
        (None, Some(c), _) => (Some(CulpritBy::Pauses), Some(c)),
        (None, None, Some(c)) => (Some(CulpritBy::HostPause), Some(c)),
        _ => (None, None),
    };
    let nodes = match culprit {
        Some(at) => links.behind_names(at.switch, at.port),
        // A node paused most that the map does not place is still named.
        None => paused_most.map(str::to_string).into_iter().collect(),
    };
    let mut spread: Vec<SwitchPort> = Vec::new();
    if culprit.is_none() && paused_most.is_none() {
        for at in [drop_sizes, edge].into_iter().flat_map(largest_first) {
            let spot = SwitchPort {
                switch: at.switch.to_string(),
                port: at.port.to_string(),
            };
            if !spread.contains(&spot) {
                spread.push(spot);
            }
        }
    }
    let culprit = culprit.map(|at| (at.switch.to_string(), at.port.to_string()));
    ep.culprit_by = by;
    ep.culprit_nodes = nodes;
    ep.culprit = culprit;
    ep.spread = spread;
}

/// The second and third words of a key (`drop <switch> <port> <reason>`), as
/// `key.split(' ').skip(1)` gives them.
fn switch_port(key: &str) -> Option<Port<'_>> {
    let (_, rest) = key.split_once(' ')?;
    let (switch, rest) = rest.split_once(' ')?;
    Some(Port {
        switch,
        port: rest.split_once(' ').map_or(rest, |(port, _)| port),
    })
}

/// The switch of a `pfc <switch> <port>` / `drop <switch> <port> <reason>` key.
pub fn switch_of(key: &str) -> &str {
    key.split(' ').nth(1).unwrap_or("")
}

/// The port of a `pfc <switch> <port>` / `drop <switch> <port> <reason>` key.
pub fn port_of(key: &str) -> &str {
    key.split(' ').nth(2).unwrap_or("")
}

#[cfg(test)]
mod tests;
