//! An episode in words: the Overview's one line, the Episodes list's rows and the chain, the same
//! text in the incident bundle and `snapshot --format json`.

use super::{Dcqcn, Episode, Layer, Part, port_of};
use crate::app::ports::compress;
use crate::config::Config;
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

fn pfc(ep: &Episode) -> Option<String> {
    let ports: Vec<&str> = ep.parts(Layer::Pfc).map(|p| port_of(&p.key)).collect();
    if ports.is_empty() {
        return None;
    }
    Some(format!(
        "PFC storm {} {}/s",
        compress(&ports),
        si(ep.pfc_total_peak)
    ))
}

/// `mmu` → `MMU`, `queue wred` → `WRED`.
fn reason(key: &str) -> String {
    key.split(' ').next_back().unwrap_or("").to_uppercase()
}

fn drops(ep: &Episode, cfg: &Config) -> Vec<String> {
    let mut seen: Vec<(String, String)> = Vec::new();
    for p in ep.parts(Layer::Drops) {
        let k = (reason(&p.key), port_of(&p.key).to_string());
        if !seen.contains(&k) {
            seen.push(k);
        }
    }
    seen.into_iter()
        .map(|(why, port)| {
            let nodes: Vec<String> = cfg
                .nodes_behind(&port)
                .iter()
                .map(|n| n.name.clone())
                .collect();
            if nodes.is_empty() {
                format!("{why} drops {port}")
            } else {
                format!("{why} drops {port} → {}", nodes.join(","))
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
pub fn pieces(ep: &Episode, cfg: &Config) -> Vec<String> {
    let mut v = Vec::new();
    v.extend(training(ep));
    v.extend(pfc(ep));
    v.extend(drops(ep, cfg));
    v.extend(ecn(ep));
    v.extend(pause(ep));
    v.extend(rtt(ep));
    v
}

/// The Overview's line: `05:32:24 Episode: step 160→364 ms (+128%) · PFC storm ... · ...`.
pub fn line(ep: &Episode, cfg: &Config, now: Ts) -> String {
    let head = match ep.end {
        None => format!(
            "{} Episode ({}, ongoing)",
            clock(ep.start),
            secs(now - ep.start)
        ),
        Some(e) => format!(
            "{} Episode ({}, ended {} ago)",
            clock(ep.start),
            secs(e - ep.start),
            secs(now - e)
        ),
    };
    format!("{head}: {}", pieces(ep, cfg).join(" · "))
}

/// A row of the Episodes list: start, duration, cost, the story.
pub fn row(ep: &Episode, cfg: &Config, now: Ts) -> String {
    let dur = match ep.end {
        Some(e) => secs(e - ep.start),
        None => format!("{} (open)", secs(now - ep.start)),
    };
    format!(
        "{}  {dur:>11}  lost {:>5.1} s  {}",
        clock(ep.start),
        ep.lost_s,
        pieces(ep, cfg).join(" · ")
    )
}

/// One link of the chain: `+2 s  drops  Ethernet1/1/2 ingress mmu 60/s → ubunturdma6`.
pub fn link(p: &Part, ep: &Episode, cfg: &Config) -> String {
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
            let nodes: Vec<String> = cfg
                .nodes_behind(port)
                .iter()
                .map(|n| n.name.clone())
                .collect();
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
