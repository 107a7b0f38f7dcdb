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

pub fn touched(ep: &Episode, links: &Links) -> Touched {
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
            Layer::HostPause => nodes.push(p.key.trim_start_matches("pause ")),
            Layer::Rtt => {
                let k = p.key.trim_start_matches("rtt ");
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
