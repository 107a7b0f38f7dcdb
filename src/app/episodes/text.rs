//! An episode in words: the Overview's one line, the Episodes list's rows and the chain, the same
//! text in the incident bundle and `snapshot --format json`.

use super::{Dcqcn, Episode, Layer, Part, port_of, switch_of};
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

/// `HH:MM:SS` UTC.
pub fn clock(t: Ts) -> String {
    let s = t.div_euclid(1000).rem_euclid(86_400);
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

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

/// `mmu` → `MMU`, `queue wred` → `WRED`.
fn reason(key: &str) -> String {
    key.split(' ').next_back().unwrap_or("").to_uppercase()
}

/// The port dropping most by name with the nodes behind it; other drop ports counted.
fn drops(ep: &Episode, links: &Links) -> Vec<String> {
    let mut seen: Vec<((String, String, String), f64)> = Vec::new();
    for p in ep.parts(Layer::Drops) {
        let k = (
            reason(&p.key),
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
        .map(|(k, _)| k)
        .map(|(why, sw, port)| {
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

fn ecn(ep: &Episode) -> Option<String> {
    let peak = ep.chain.iter().find(|p| p.key == "ecn").map(|p| p.peak);
    let verdict = match ep.dcqcn {
        Dcqcn::Absorbing => "DCQCN absorbing",
        Dcqcn::NotAbsorbing => "DCQCN not absorbing",
        Dcqcn::Partly => "DCQCN absorbing part",
        Dcqcn::Quiet => return None,
    };
    Some(match peak {
        Some(v) => format!("ECN {}/s: {verdict}", si(v)),
        None => format!("ECN flat: {verdict}"),
    })
}

fn pause(ep: &Episode) -> Option<String> {
    let worst = ep
        .parts(Layer::HostPause)
        .max_by(|a, b| a.peak.total_cmp(&b.peak))?;
    let node = worst.key.trim_start_matches("pause ");
    Some(format!("host pause {:.0}% {node}", worst.peak * 100.0))
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

/// The pieces of the story, symptom first, then the chain.
pub fn pieces(ep: &Episode, links: &Links) -> Vec<String> {
    let mut v = Vec::new();
    v.extend(training(ep));
    v.extend(pfc(ep));
    v.extend(drops(ep, links));
    v.extend(ecn(ep));
    v.extend(pause(ep));
    v.extend(rtt(ep));
    v
}

/// The Overview's line: `05:32:24 Episode: step 160→364 ms (+128%) · PFC storm ... · ...`.
pub fn line(ep: &Episode, links: &Links, now: Ts) -> String {
    let status = match ep.end {
        None => format!("ongoing {}", secs(now - ep.start)),
        Some(e) => format!("lasted {}, ended {} ago", secs(e - ep.start), secs(now - e)),
    };
    format!(
        "{} Episode: {} · {status}",
        clock(ep.start),
        pieces(ep, links).join(" · ")
    )
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
                "PFC    {} rx {}/s tx {}/s (normal {}/s): {dir}",
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
            format!("drops  {port} {why} {}/s → {}", si(p.peak), nodes.join(","))
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
            o
        })
        .collect();
    v.into()
}
