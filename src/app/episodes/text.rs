//! An episode in words: the Overview's one line, the Episodes list's rows and the chain, the same
//! text in the incident bundle and `snapshot --format json`.

use super::{CulpritBy, Dcqcn, Episode, Layer, Part, SwitchPort, port_of, switch_of};
use crate::app::pairing::Links;
use crate::app::ports::compress;
use crate::metrics::Ts;

/// `204k`, `5.1k`, `20`, `0.4`: rates short enough for one line.
pub fn si(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e5 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 10.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

pub use crate::metrics::human::clock;

fn secs(ms: i64) -> String {
    let s = ms / 1000;
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// `step 160→364 ms (+128%)`.
fn training(ep: &Episode) -> Option<String> {
    let p = ep.chain.iter().find(|p| p.key == "step")?;
    let pct = if p.base > 0.0 {
        format!(" (+{:.0}%)", (p.peak / p.base - 1.0) * 100.0)
    } else {
        String::new()
    };
    Some(format!(
        "step {:.0}→{:.0} ms{pct}",
        p.base * 1e3,
        p.peak * 1e3
    ))
}

/// `ii1/1/3` → `ii`: ports of one kind (internal fabric, edge) storm together.
fn family(port: &str) -> &str {
    port.trim_end_matches(|c: char| c.is_ascii_digit() || c == '/')
}

/// `PFC storm ii1/1/1-6 204k/s (+4 ports)`: the family of ports carrying most of the storm by
/// name, the rest counted; the rate is the peak over every storming port.
fn pfc(ep: &Episode) -> Option<String> {
    // Across switches, port names repeat from one to the next: the count says it.
    let switches: std::collections::BTreeSet<&str> =
        ep.parts(Layer::Pfc).map(|p| switch_of(&p.key)).collect();
    if switches.len() > 1 {
        return Some(format!(
            "PFC storm {} ports on {} switches {}/s",
            ep.parts(Layer::Pfc).count(),
            switches.len(),
            si(ep.pfc_total_peak)
        ));
    }
    let mut fams: std::collections::BTreeMap<&str, (f64, Vec<&str>)> = Default::default();
    for p in ep.parts(Layer::Pfc) {
        let port = port_of(&p.key);
        let e = fams.entry(family(port)).or_default();
        e.0 += p.peak;
        e.1.push(port);
    }
    let total: usize = fams.values().map(|f| f.1.len()).sum();
    let (_, ports) = fams.into_values().max_by(|a, b| a.0.total_cmp(&b.0))?;
    let rest = total - ports.len();
    let more = if rest > 0 {
        format!(" (+{rest} ports)")
    } else {
        String::new()
    };
    Some(format!(
        "PFC storm {} {}/s{more}",
        compress(&ports),
        si(ep.pfc_total_peak)
    ))
}

/// A drop key's reason as written (`queue wred` → `wred`; shown upper-cased: `WRED`).
fn reason_word(key: &str) -> &str {
    key.rsplit(' ').next().unwrap_or("")
}

/// The switch and port of a drop key: [`switch_of`] and [`port_of`] in one pass.
fn switch_port(key: &str) -> (&str, &str) {
    let mut w = key.split(' ').skip(1);
    (w.next().unwrap_or(""), w.next().unwrap_or(""))
}

/// Whether two reasons read the same once upper-cased; ASCII ones (all in practice, and ASCII
/// upper-cases as Unicode does) compared without allocating.
fn same_reason(a: &str, b: &str) -> bool {
    if a.is_ascii() && b.is_ascii() {
        a.eq_ignore_ascii_case(b)
    } else {
        a.to_uppercase() == b.to_uppercase()
    }
}

/// The port dropping most by name with the nodes behind it; other drop ports counted.
///
/// Parts are grouped by (reason, switch, port) borrowed from their keys, found through their
/// port: a fabric dropping on every port makes an episode of ~100 drop parts, and the Overview
/// tells it every frame, where a search of owned triples over all of them was a visible part of
/// the live screen's thread.
fn drops(ep: &Episode, links: &Links) -> Vec<String> {
    // (reason as written by the first part, switch, port, summed peak), in order of appearance
    let mut seen: Vec<(&str, &str, &str, f64)> = Vec::new();
    let mut by_port: rustc_hash::FxHashMap<(&str, &str), Vec<usize>> = Default::default();
    for p in ep.parts(Layer::Drops) {
        let (why, (sw, port)) = (reason_word(&p.key), switch_port(&p.key));
        let slots = by_port.entry((sw, port)).or_default();
        match slots.iter().find(|&&i| same_reason(seen[i].0, why)) {
            Some(&i) => seen[i].3 += p.peak,
            None => {
                slots.push(seen.len());
                seen.push((why, sw, port, p.peak));
            }
        }
    }
    // The first of the largest, as a stable sort by peak, largest first, puts first.
    let mut best: Option<&(&str, &str, &str, f64)> = None;
    for e in &seen {
        if best.is_none_or(|b| e.3.total_cmp(&b.3).is_gt()) {
            best = Some(e);
        }
    }
    let rest = seen.len().saturating_sub(1);
    if ep.culprit_by != Some(CulpritBy::Drops) {
        // No dropping port stands out: the ports that dropped, none of them named as the place.
        let ports: Vec<&str> = seen.iter().map(|e| e.2).collect();
        return best
            .map(|&(why, ..)| {
                let why = if seen.iter().all(|e| same_reason(e.0, why)) {
                    why.to_uppercase() + " "
                } else {
                    String::new()
                };
                format!("{why}drops {}", breakable(&compress(&ports)))
            })
            .into_iter()
            .collect();
    }
    best.map(|&(why, sw, port, _)| {
        let why = why.to_uppercase();
        let more = if rest > 0 {
            format!(" (+{rest} more)")
        } else {
            String::new()
        };
        let nodes = links.behind_names(sw, port);
        if nodes.is_empty() {
            format!("{why} drops {port}{more}")
        } else {
            format!("{why} drops {port} → {}{more}", nodes.join(","))
        }
    })
    .into_iter()
    .collect()
}

fn ecn(ep: &Episode) -> Option<String> {
    let peak = ep.chain.iter().find(|p| p.key == "ecn").map(|p| p.peak);
    let verdict = match ep.dcqcn {
        Dcqcn::Absorbing => "DCQCN absorbing",
        Dcqcn::NotAbsorbing => "DCQCN not absorbing",
        Dcqcn::Partly => "DCQCN absorbing part",
        Dcqcn::Quiet => return None,
        // Without PFC read there is no verdict: ECN is told as it is, or not at all.
        Dcqcn::Unseen => return peak.map(|v| format!("ECN {}/s", si(v))),
    };
    Some(match peak {
        Some(v) => format!("ECN {}/s: {verdict}", si(v)),
        None => format!("ECN flat: {verdict}"),
    })
}

/// `culprit Ethernet1/1/3 → ubunturdma3`: the culprit where the drops piece did not name it
/// (lossless: PFC held and nothing dropped; the edge port sending most pauses).
fn culprit(ep: &Episode, links: &Links) -> Option<String> {
    let (sw, port) = ep.culprit.as_ref()?;
    match ep.culprit_by? {
        CulpritBy::Drops if ep.parts(Layer::Drops).any(|p| port_of(&p.key) == port) => None,
        // The pause piece tells it, with the port.
        CulpritBy::HostPause => None,
        _ => {
            let nodes = links.behind(sw, port);
            Some(if nodes.is_empty() {
                format!("culprit {port}")
            } else {
                format!("culprit {port} → {}", nodes.join(","))
            })
        }
    }
}

/// What the pause tree says of the episode's place: its root and spread where they cross
/// switches. On one switch, only where no port stands out by the switch's own counts but the tree
/// names a root there: an incast whose senders share its leaf makes every host port pause alike,
/// and the egress toward the receiver is the root.
fn tree_root(ep: &Episode) -> Option<String> {
    use crate::app::fabric::pause_tree::{Cause, text::phrase};
    if ep.pause_root.is_some() || ep.culprit.is_some() {
        return ep.pause_root.clone();
    }
    let tree = &ep.peak_tree.as_ref()?.tree;
    let root = tree.roots.first()?;
    let unknown = root.cause.unknown_beyond() || root.cause == Cause::EgressUnknown;
    if unknown { None } else { phrase(tree) }
}

/// `no culprit stands out: spread over NX_AI_Leaf1 Ethernet1/1/1-2,1/2/1`: where the congestion
/// is when no port stands out ([`super::stand_out`]), the ports of each switch in turn.
fn spread(ep: &Episode) -> Option<String> {
    // The pause tree's root and spread say where it came from and went: that is the place.
    if tree_root(ep).is_some() {
        return None;
    }
    let mut by_switch: Vec<(&str, Vec<&str>)> = Vec::new();
    for SwitchPort { switch, port } in &ep.spread {
        match by_switch.iter_mut().find(|(sw, _)| sw == switch) {
            Some((_, ports)) => ports.push(port),
            None => by_switch.push((switch, vec![port])),
        }
    }
    if by_switch.is_empty() {
        return None;
    }
    let places: Vec<String> = by_switch
        .iter()
        .map(|(sw, ports)| format!("{sw} {}", breakable(&compress(ports))))
        .collect();
    Some(format!(
        "no culprit stands out: spread over {}",
        places.join(", ")
    ))
}

/// A compressed port list (`Ethernet1/1/1-2,Ethernet1/2/1`) with a space after each comma: a
/// narrow screen may break it between ports, never inside one.
fn breakable(ports: &str) -> String {
    ports.replace(',', ", ")
}

/// A layer rocetop could not see, said so (never told as calm).
fn unseen(ep: &Episode) -> Option<String> {
    (!ep.switch_read).then(|| "switch not read".to_string())
}

/// `host pause 12% ubunturdma6`; with no switch read, the port the map puts it on too
/// (`host pause 12% ubunturdma6 on Ethernet1/1/2`).
fn pause(ep: &Episode) -> Option<String> {
    // The culprit's own nodes where they paused: a node the culprit's storm reached but that is
    // another place's (behind another episode's culprit) is not this one's paused host.
    let most = |own: bool| {
        (ep.parts(Layer::HostPause))
            .filter(|p| {
                !own || ep
                    .culprit_nodes
                    .iter()
                    .any(|n| p.key.trim_start_matches("pause ") == n)
            })
            .max_by(|a, b| a.peak.total_cmp(&b.peak))
    };
    let worst = most(true).or_else(|| most(false))?;
    let node = worst.key.trim_start_matches("pause ");
    let on = match (&ep.culprit, ep.culprit_by) {
        (Some((_, port)), Some(CulpritBy::HostPause)) => format!(" on {port}"),
        _ => String::new(),
    };
    Some(format!("host pause {:.0}% {node}{on}", worst.peak * 100.0))
}

fn rtt(ep: &Episode) -> Option<String> {
    let w = ep
        .parts(Layer::Rtt)
        .max_by(|a, b| (a.peak / a.base.max(1e-12)).total_cmp(&(b.peak / b.base.max(1e-12))))?;
    Some(format!(
        "RTT p99 {:.0}→{:.0} us",
        w.base * 1e6,
        w.peak * 1e6
    ))
}

/// How much a piece of the sentence matters when the screen is too narrow for all of it: the
/// least (last here) goes first, the place to look (drops, culprit) last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Weight {
    /// Where to look: the dropping port, the culprit and the nodes behind it.
    Place,
    /// Whether it is still going on, and for how long.
    Status,
    /// A layer rocetop could not read (never to be read as calm by its absence).
    Unseen,
    Storm,
    Symptom,
    Ecn,
    Pause,
    Rtt,
    /// What the GPUs did meanwhile (their own throttle, where it is the cause, is a place).
    Gpu,
}

/// A story's pieces, each with its [`Weight`], in the sentence's order.
pub type Ranked = Vec<(Weight, String)>;

/// The pieces of the story, symptom first, then the chain, each with its [`Weight`].
pub fn ranked(ep: &Episode, links: &Links) -> Ranked {
    let mut v = Vec::new();
    let mut put = |w, p: Option<String>| v.extend(p.map(|p| (w, p)));
    put(Weight::Symptom, training(ep));
    // A throttled node is where to look when the network was calm; then the GPUs' idling.
    let throttle_is = if super::gpu::not_the_network(ep) {
        Weight::Place
    } else {
        Weight::Gpu
    };
    put(throttle_is, super::gpu::throttle_text(ep));
    put(Weight::Gpu, super::gpu::util_text(ep));
    put(Weight::Storm, pfc(ep));
    // Drops are the place only where they named the culprit.
    let drops_are = match ep.culprit_by {
        Some(CulpritBy::Drops) => Weight::Place,
        _ => Weight::Storm,
    };
    for d in drops(ep, links) {
        put(drops_are, Some(d));
    }
    put(Weight::Place, culprit(ep, links));
    put(Weight::Place, tree_root(ep));
    put(Weight::Place, spread(ep));
    put(Weight::Place, ep.rail.map(|r| format!("rail {r} only")));
    put(Weight::Unseen, unseen(ep));
    put(Weight::Ecn, ecn(ep));
    put(Weight::Pause, pause(ep));
    put(Weight::Rtt, rtt(ep));
    v
}

/// The pieces of the story, symptom first, then the chain.
pub fn pieces(ep: &Episode, links: &Links) -> Vec<String> {
    ranked(ep, links).into_iter().map(|(_, p)| p).collect()
}

/// The Overview's line: `05:32:24 Episode: step 160→364 ms (+128%) · PFC storm ... · ...`.
pub fn line(ep: &Episode, links: &Links, now: Ts) -> String {
    line_of(ep, &story(ep, links), now)
}

/// Where the lines after the first of [`lines`] start: under the sentence, past the time.
pub const INDENT: &str = "         ";

/// The sentence ([`line`]) in at most `max` lines of `width` columns: broken between pieces,
/// a piece longer than a line between its words, never inside a word. When it needs more, the
/// least important pieces ([`Weight`]) are left out until it fits; if even the place and the
/// status do not, the last line ends at a word with `…`.
pub fn lines(
    ep: &Episode,
    ranked: &[(Weight, String)],
    now: Ts,
    width: usize,
    max: usize,
) -> Vec<String> {
    let head = format!("{} Episode: ", clock(ep.start));
    let status = status(ep, now);
    let mut keep: Vec<&(Weight, String)> = ranked.iter().collect();
    loop {
        let mut pieces: Vec<&str> = keep.iter().map(|(_, p)| p.as_str()).collect();
        pieces.push(&status);
        let out = lay_out(&head, &pieces, width.max(1));
        if out.len() <= max.max(1) {
            return out;
        }
        // The least important piece goes (the last of them on a tie), if any may.
        let least = (keep.iter().enumerate())
            .filter(|(_, (w, _))| *w > Weight::Status)
            .max_by_key(|(i, (w, _))| (*w, *i))
            .map(|(i, _)| i);
        match least {
            Some(i) => {
                keep.remove(i);
            }
            None => return ellipsis(out, max.max(1), width.max(1)),
        }
    }
}

/// `pieces` after `head`, joined by ` · `, in lines of `width` columns: a piece goes whole on
/// the line it starts on or the next, and only one longer than a line is broken (between words).
fn lay_out(head: &str, pieces: &[&str], width: usize) -> Vec<String> {
    let len = |s: &str| s.chars().count();
    let mut out = Vec::new();
    let mut cur = head.to_string();
    // Nothing yet after the head or the indent.
    let mut empty = true;
    let next_line = |out: &mut Vec<String>, cur: &mut String| {
        out.push(
            std::mem::replace(cur, INDENT.to_string())
                .trim_end()
                .to_string(),
        );
    };
    for piece in pieces {
        let sep = if empty { "" } else { " · " };
        if len(&cur) + len(sep) + len(piece) <= width {
            cur.push_str(sep);
            cur.push_str(piece);
            empty = false;
            continue;
        }
        if !empty && len(INDENT) + len(piece) <= width {
            next_line(&mut out, &mut cur);
            cur.push_str(piece);
            continue;
        }
        for (i, word) in piece.split(' ').enumerate() {
            let sep = match (empty, i) {
                (true, _) => "",
                (false, 0) => " · ",
                (false, _) => " ",
            };
            if !empty && len(&cur) + len(sep) + len(word) > width {
                next_line(&mut out, &mut cur);
                empty = true;
            }
            if !empty {
                cur.push_str(sep);
            }
            cur.push_str(word);
            empty = false;
        }
    }
    out.push(cur.trim_end().to_string());
    out
}

/// The first `max` of `lines`, the last ending with `…` after its last word that leaves room.
fn ellipsis(mut lines: Vec<String>, max: usize, width: usize) -> Vec<String> {
    if lines.len() <= max {
        return lines;
    }
    lines.truncate(max);
    if let Some(last) = lines.last_mut() {
        while last.chars().count() + 2 > width {
            match last.rfind(' ') {
                Some(i) if i > 0 => last.truncate(i),
                _ => break,
            }
        }
        last.push_str(" …");
    }
    lines
}

/// The story part of [`line`]: the pieces joined, all but the status (which moves with `now`).
pub fn story(ep: &Episode, links: &Links) -> String {
    pieces(ep, links).join(" · ")
}

/// [`line`] from the episode's [`story`].
fn line_of(ep: &Episode, story: &str, now: Ts) -> String {
    format!("{} Episode: {story} · {}", clock(ep.start), status(ep, now))
}

/// `ongoing 12 s`, `lasted 15 s, ended 3 s ago`.
pub fn status(ep: &Episode, now: Ts) -> String {
    match ep.end {
        Some(e) if e <= now => {
            format!("lasted {}, ended {} ago", secs(e - ep.start), secs(now - e))
        }
        // Open, or seen from a time-travel cursor before it ended: as it was then.
        _ => format!("ongoing {}", secs(now - ep.start)),
    }
}

/// A row of the Episodes list: start, duration, cost, the story.
pub fn row(ep: &Episode, links: &Links, now: Ts) -> String {
    let dur = match ep.end {
        Some(e) => secs(e - ep.start),
        None => format!("{} (open)", secs(now - ep.start)),
    };
    format!(
        "{}  {dur:>11}  lost {:>5.1} s  {}",
        clock(ep.start),
        ep.lost_s,
        pieces(ep, links).join(" · ")
    )
}

/// One link of the chain: `+2 s  drops  Ethernet1/1/2 ingress mmu 60/s → ubunturdma6`.
pub fn link(p: &Part, ep: &Episode, links: &Links) -> String {
    let at = format!("+{:>3} s", (p.first - ep.start) / 1000);
    let what = match p.layer {
        Layer::Pfc => {
            let dir = if p.rx_peak >= p.tx_peak {
                "receives pauses (the neighbour is congested)"
            } else {
                "sends pauses (its ingress buffer fills)"
            };
            format!(
                "PFC    {} {} rx {}/s tx {}/s (normal {}/s): {dir}",
                switch_of(&p.key),
                port_of(&p.key),
                si(p.rx_peak),
                si(p.tx_peak),
                si(p.base)
            )
        }
        Layer::Drops => {
            let port = port_of(&p.key);
            let nodes = links.behind_names(switch_of(&p.key), port);
            let mut w = p.key.splitn(4, ' ');
            let why = w.nth(3).unwrap_or("");
            format!(
                "drops  {} {port} {why} {}/s → {}",
                switch_of(&p.key),
                si(p.peak),
                nodes.join(",")
            )
        }
        Layer::HostPause => format!(
            "pause  {} paused {:.1}% (normal {:.1}%)",
            p.key.trim_start_matches("pause "),
            p.peak * 100.0,
            p.base * 100.0
        ),
        Layer::Ecn => format!(
            "{:<6} {}/s (normal {}/s)",
            p.key.to_uppercase(),
            si(p.peak),
            si(p.base)
        ),
        Layer::Rtt => format!(
            "RTT    {} p99 {:.0} us (normal {:.0} us)",
            p.key.trim_start_matches("rtt "),
            p.peak * 1e6,
            p.base * 1e6
        ),
        Layer::Training => format!(
            "train  {} {:.0} ms (normal {:.0} ms)",
            p.key,
            p.peak * 1e3,
            p.base * 1e3
        ),
    };
    format!("{at}  {what}")
}

/// A run of more than this many links of one layer in a row is folded in the episodes list.
const RUN_SHOWN: usize = 3;

/// The chain in words for the episodes list: a run of links of one layer (32 hosts paused on a
/// fabric) shows its first few and how many more, so the other layers stay in sight.
pub fn chain(ep: &Episode, links: &Links) -> Vec<String> {
    let mut out = Vec::new();
    let parts = &ep.chain;
    let mut i = 0;
    while i < parts.len() {
        let layer = parts[i].layer;
        let run = parts[i..].iter().take_while(|p| p.layer == layer).count();
        let shown = if run > RUN_SHOWN + 1 { RUN_SHOWN } else { run };
        for p in &parts[i..i + shown] {
            out.push(link(p, ep, links));
        }
        if shown < run {
            out.push(format!("        … and {} more like these", run - shown));
        }
        i += run;
    }
    out
}

/// Episodes for `snapshot --format json` and the incident bundle: every field, plus the sentence
/// and the chain in words.
pub fn json(eps: &[&Episode], links: &Links, now: Ts) -> serde_json::Value {
    let v: Vec<serde_json::Value> = eps
        .iter()
        .map(|ep| {
            let mut o = serde_json::to_value(ep).unwrap_or_default();
            o["summary"] = line(ep, links, now).into();
            o["chain_text"] = ep
                .chain
                .iter()
                .map(|p| link(p, ep, links))
                .collect::<Vec<_>>()
                .into();
            o["duration_ms"] = ep.duration_ms(now).into();
            // The tree at the PFC peak, as `snapshot` writes the live one, and when it was made.
            if let Some(p) = &ep.peak_tree {
                let mut t = crate::app::fabric::pause_tree::json(&p.tree);
                t["at"] = p.at.into();
                o["peak_tree"] = t;
            }
            o
        })
        .collect();
    v.into()
}

/// The incident bundle's `pause-trees.txt`: the tree when it was written, then each episode's
/// at its PFC peak, for whoever reads it later.
pub fn trees(
    now_tree: &crate::app::fabric::pause_tree::PauseTree,
    now: Ts,
    eps: &[&Episode],
    links: &Links,
) -> String {
    use crate::app::fabric::pause_tree::text::indented;
    let mut out = format!(
        "PFC pause tree when the bundle was written ({})\n{}",
        crate::metrics::human::clock(now),
        indented(now_tree, 1)
    );
    for ep in eps {
        out.push_str(&format!("\nepisode {}: {}\n", ep.id, line(ep, links, now)));
        match &ep.peak_tree {
            Some(p) => {
                out.push_str(&format!(
                    "  pause tree at its PFC peak ({})\n",
                    crate::metrics::human::clock(p.at)
                ));
                out.push_str(&indented(&p.tree, 2));
            }
            None => out.push_str("  no pause tree: no PFC in this episode\n"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// What `drops` was before it grouped borrowed keys: owned triples searched one by one.
    fn drops_afresh(ep: &Episode, links: &Links) -> Vec<String> {
        let mut seen: Vec<((String, String, String), f64)> = Vec::new();
        for p in ep.parts(Layer::Drops) {
            let k = (
                reason_word(&p.key).to_uppercase(),
                switch_of(&p.key).to_string(),
                port_of(&p.key).to_string(),
            );
            match seen.iter_mut().find(|(s, _)| *s == k) {
                Some((_, v)) => *v += p.peak,
                None => seen.push((k, p.peak)),
            }
        }
        seen.sort_by(|a, b| b.1.total_cmp(&a.1));
        let rest = seen.len().saturating_sub(1);
        seen.into_iter()
            .take(1)
            .map(|((why, sw, port), _)| {
                let more = if rest > 0 {
                    format!(" (+{rest} more)")
                } else {
                    String::new()
                };
                let nodes = links.behind_names(&sw, &port);
                if nodes.is_empty() {
                    format!("{why} drops {port}{more}")
                } else {
                    format!("{why} drops {port} → {}{more}", nodes.join(","))
                }
            })
            .collect()
    }

    fn episode(parts: &[(&str, f64)]) -> Episode {
        let chain = parts
            .iter()
            .enumerate()
            .map(|(i, (key, peak))| Part {
                layer: if key.starts_with("drop ") {
                    Layer::Drops
                } else {
                    Layer::Pfc
                },
                key: (*key).to_string(),
                first: i as Ts,
                base: 0.0,
                peak: *peak,
                peak_at: 0,
                rx_peak: 0.0,
                tx_peak: 0.0,
                evals: 1,
            })
            .collect();
        Episode {
            id: 1,
            start: 0,
            end: None,
            last_abnormal: 0,
            peak_at: 0,
            peak_count: 0,
            chain,
            pfc_total_peak: 0.0,
            lost_s: 0.0,
            dcqcn: Dcqcn::Quiet,
            switch_read: true,
            culprit: None,
            culprit_nodes: Vec::new(),
            // As the drops named it: the piece names the port dropping most.
            culprit_by: Some(CulpritBy::Drops),
            spread: Vec::new(),
            gpu: Default::default(),
            pause_root: None,
            rail: None,
            peak_tree: None,
        }
    }

    /// A run of one layer longer than the few shown folds into "and N more"; a short run and
    /// the next layer's links are all there, and a PFC link names its switch.
    #[test]
    fn the_chain_folds_a_long_run_of_one_layer() {
        let links = Links::from_config(&Config::reference());
        let pfc: Vec<String> = (1..=6)
            .map(|i| format!("pfc leaf{i} Ethernet1/{i}"))
            .collect();
        let mut parts: Vec<(&str, f64)> = pfc.iter().map(|k| (k.as_str(), 1.0)).collect();
        parts.push(("drop leaf1 Ethernet1/1 ingress mmu", 5.0));
        let lines = chain(&episode(&parts), &links);
        assert_eq!(lines.len(), RUN_SHOWN + 2, "{lines:#?}");
        assert!(lines[0].contains("leaf1 Ethernet1/1 rx"), "{}", lines[0]);
        assert!(lines[RUN_SHOWN].ends_with("and 3 more like these"));
        assert!(
            lines[RUN_SHOWN + 1].starts_with("+  0 s  drops  leaf1 Ethernet1/1"),
            "{lines:#?}"
        );
        // One more than shown is shown whole: folding one line saves nothing.
        let four: Vec<(&str, f64)> = parts[..RUN_SHOWN + 1].to_vec();
        assert_eq!(chain(&episode(&four), &links).len(), RUN_SHOWN + 1);
    }

    /// Seen from a time-travel cursor inside it, an episode that ended later is ongoing as of
    /// the cursor, never "ended -12 s ago".
    #[test]
    fn status_as_of_a_cursor_before_the_end_is_ongoing() {
        let ep = Episode {
            start: 10_000,
            end: Some(40_000),
            ..episode(&[])
        };
        assert_eq!(status(&ep, 25_000), "ongoing 15 s");
        assert_eq!(status(&ep, 52_000), "lasted 30 s, ended 12 s ago");
    }

    #[test]
    fn drops_grouped_by_borrowed_keys_read_as_before() {
        let links = Links::from_config(&Config::reference());
        let sw = "drop NX_AI_Leaf1";
        let many: Vec<String> = (1..=96)
            .map(|i| format!("{sw} Ethernet1/1/{} ingress mmu", i % 40))
            .collect();
        let many: Vec<(&str, f64)> = many
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_str(), (i % 7) as f64))
            .collect();
        let port2 = format!("{sw} Ethernet1/1/2 ingress mmu");
        let table: Vec<Vec<(&str, f64)>> = vec![
            vec![],
            vec![("pfc NX_AI_Leaf1 ii1/1/1", 5.0)],
            // a node behind the port: named
            vec![(&port2, 40.0)],
            // one port, two reasons; a reason only in case apart merges (as upper-cased)
            vec![
                ("drop NX_AI_Leaf1 Ethernet1/1/2 ingress mmu", 10.0),
                ("drop NX_AI_Leaf1 Ethernet1/1/2 queue wred", 30.0),
                ("drop NX_AI_Leaf1 Ethernet1/1/2 ingress MMU", 25.0),
                ("drop NX_AI_Leaf1 Ethernet1/1/9 queue wred", 1.0),
            ],
            // the same port on two switches; a tie goes to the first seen
            vec![
                ("drop a Ethernet1/1/3 x", 7.0),
                ("drop b Ethernet1/1/3 x", 7.0),
                ("drop b Ethernet1/1/4 x", 7.0),
            ],
            // non-ASCII reasons that upper-case alike (ß → SS), and one that does not
            vec![
                ("drop s p1 straße", 1.0),
                ("drop s p1 STRASSE", 1.0),
                ("drop s p1 ſ", 4.0),
                ("drop s p1 S", 1.0),
            ],
            // NaN and infinite peaks order as total_cmp does
            vec![
                (&port2, f64::NAN),
                ("drop NX_AI_Leaf1 Ethernet1/1/5 queue wred", f64::INFINITY),
                ("drop NX_AI_Leaf1 Ethernet1/1/6 queue wred", -1.0),
            ],
            // short keys: missing words read as empty
            vec![("drop", 1.0), ("drop x", 2.0), ("drop x y", 3.0)],
            many,
        ];
        assert_eq!(
            drops(&episode(&table[2]), &links),
            ["MMU drops Ethernet1/1/2 → ubunturdma6"]
        );
        for parts in &table {
            let ep = episode(parts);
            assert_eq!(drops(&ep, &links), drops_afresh(&ep, &links), "{parts:?}");
        }
    }
}
