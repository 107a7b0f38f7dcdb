//! The subjects the open episode touches, for marking the alert lines that belong to it.

use crate::app::alerts::{Alert, Subject};
use crate::app::episodes::{Episode, Layer, port_of, switch_of};
use crate::app::pairing::Links;

/// The subjects an episode touches: its ports, the nodes behind them and those that paused.
/// Each sorted for binary search: looked up once an alert, where hashing every name cost more
/// than the comparisons.
#[derive(Debug, Default, PartialEq)]
pub struct Touched {
    ports: Vec<String>,
    nodes: Vec<String>,
    peers: Vec<String>,
}

/// `s` without every leading `prefix` (`str::trim_start_matches` without its searcher).
pub fn trim_prefixes<'a>(mut s: &'a str, prefix: &str) -> &'a str {
    while let Some(rest) = s.strip_prefix(prefix) {
        s = rest;
    }
    s
}

fn touched(ep: &Episode, links: &Links) -> Touched {
    let mut ports: Vec<&str> = Vec::new();
    let mut nodes: Vec<&str> = ep.culprit_nodes.iter().map(String::as_str).collect();
    let mut peers: Vec<&str> = Vec::new();
    for p in &ep.chain {
        match p.layer {
            Layer::Pfc | Layer::Drops => {
                let port = port_of(&p.key);
                nodes.extend(links.behind(switch_of(&p.key), port));
                ports.push(port);
            }
            Layer::HostPause => nodes.push(trim_prefixes(&p.key, "pause ")),
            Layer::Rtt => {
                let k = trim_prefixes(&p.key, "rtt ");
                peers.push(k.split(' ').next().unwrap_or(""));
            }
            _ => {}
        }
    }
    let owned = |mut v: Vec<&str>| {
        v.sort_unstable();
        v.dedup();
        v.into_iter().map(str::to_string).collect()
    };
    Touched {
        ports: owned(ports),
        nodes: owned(nodes),
        peers: owned(peers),
    }
}

pub fn belongs(a: &Alert, t: &Touched) -> bool {
    let has = |v: &[String], k: &str| v.binary_search_by(|x| x.as_str().cmp(k)).is_ok();
    match &a.subject {
        Subject::Port { port, .. } => has(&t.ports, port),
        Subject::Node(n) => has(&t.nodes, n),
        Subject::Peer { peer, .. } => has(&t.peers, peer),
        Subject::Source(_) => false,
    }
}

/// The open episode's [`Touched`] as last made, with what it was made from: a rollup (every
/// evaluation that moved a value) made it again from an episode of hundreds of parts whose
/// parts rarely change. A memo: made again whenever the episode's parts or the links differ.
#[derive(Debug, Default)]
pub struct KeptTouched {
    from: Option<MadeFrom>,
    touched: Touched,
    /// How many times it was made: lines marked from the same making stay marked alike.
    made: u64,
}

/// What a [`Touched`] was made from: the episode's id, the links' generation, its parts' layers
/// and keys, its culprit nodes.
type MadeFrom = (u32, u64, Vec<(Layer, String)>, Vec<String>);

impl KeptTouched {
    /// `ep`'s subjects through `links` (of generation `links_gen`), the kept ones if made from
    /// the same.
    pub fn of(&mut self, ep: &Episode, links: &Links, links_gen: u64) -> &Touched {
        let same = self.from.as_ref().is_some_and(|(id, lg, parts, culprits)| {
            *id == ep.id
                && *lg == links_gen
                && parts.len() == ep.chain.len()
                && parts
                    .iter()
                    .zip(&ep.chain)
                    .all(|((l, k), p)| *l == p.layer && *k == p.key)
                && *culprits == ep.culprit_nodes
        });
        if !same {
            self.touched = touched(ep, links);
            let parts = ep.chain.iter().map(|p| (p.layer, p.key.clone())).collect();
            self.from = Some((ep.id, links_gen, parts, ep.culprit_nodes.clone()));
            self.made += 1;
        }
        &self.touched
    }

    /// Counts the makings of the kept subjects ([`KeptTouched::of`]): the same count, the same
    /// subjects.
    pub fn made(&self) -> u64 {
        self.made
    }
}
