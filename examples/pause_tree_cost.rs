//! CPU of one pause-tree evaluation at 64 switches x 64 ports and 1024 nodes (two NICs each, on
//! two leaves: rails): 8 spines, 56 leaves, every port counted, an incast at one leaf spreading
//! through every spine to every leaf and host (the worst case: every link pauses). Prints the
//! figures against the 5 ms budget and asserts nothing.
//!
//!   cargo run --release --example pause_tree_cost

use rocetop::app::fabric::pause_tree::{HostPause, Input, PauseTree, PortPause, text};
use rocetop::app::fabric::{Device, End, Fabric, Link, PortKey, Via};
use std::collections::HashMap;
use std::time::Instant;

const SPINES: usize = 8;
const LEAVES: usize = 56;
const PORTS: usize = 64;
const NODES: usize = 1024;

fn end(d: Device, port: &str) -> End {
    End::new(d, port)
}

fn main() {
    let mut links = Vec::new();
    let mut ports: HashMap<PortKey, PortPause> = HashMap::new();
    let quiet = PortPause {
        rx: Some(0.0),
        tx: Some(0.0),
        load: Some(0.0),
    };
    let leaf = |l: usize| format!("leaf{l}");
    let spine = |s: usize| format!("spine{s}");
    for l in 0..LEAVES {
        for s in 0..SPINES {
            let (lp, sp) = (format!("U{s}"), format!("D{l}"));
            links.push(Link {
                a: end(Device::switch(&leaf(l)), &lp),
                b: end(Device::switch(&spine(s)), &sp),
                via: Via::Lldp,
            });
            // leaf0 pauses every spine; every spine pauses every other leaf.
            let (leaf_tx, spine_tx) = if l == 0 { (900.0, 0.0) } else { (0.0, 400.0) };
            ports.insert(
                PortKey::new(&leaf(l), &lp),
                PortPause {
                    rx: Some(spine_tx),
                    tx: Some(leaf_tx),
                    load: Some(1.0),
                },
            );
            ports.insert(
                PortKey::new(&spine(s), &sp),
                PortPause {
                    rx: Some(leaf_tx),
                    tx: Some(spine_tx),
                    load: Some(1.0),
                },
            );
        }
        for p in SPINES..PORTS {
            ports.insert(PortKey::new(&leaf(l), &format!("E{p}")), quiet);
        }
    }
    for s in 0..SPINES {
        for p in LEAVES..PORTS {
            ports.insert(PortKey::new(&spine(s), &format!("D{p}")), quiet);
        }
    }
    let mut hosts: HashMap<String, HostPause> = HashMap::new();
    for n in 0..NODES {
        for rail in 0..2 {
            let i = n * 2 + rail;
            let (l, p) = (i % LEAVES, SPINES + (i / LEAVES) % (PORTS - SPINES));
            links.push(Link {
                a: end(Device::host(&format!("gpu{n}")), &format!("ens{rail}")),
                b: end(Device::switch(&leaf(l)), &format!("E{p}")),
                via: Via::Pairing,
            });
            // Every leaf pauses its hosts; leaf0's first port is the incast.
            let e = ports
                .entry(PortKey::new(&leaf(l), &format!("E{p}")))
                .or_default();
            e.tx = Some(if l == 0 { 0.0 } else { 300.0 });
        }
        hosts.insert(
            format!("gpu{n}"),
            HostPause {
                rx: Some(0.2),
                tx: Some(0.0),
            },
        );
    }
    if let Some(e) = ports.get_mut(&PortKey::new(&leaf(0), &format!("E{SPINES}"))) {
        e.load = Some(500.0);
    }
    let t0 = Instant::now();
    let fabric = Fabric::from_links(links);
    let build = t0.elapsed();
    let input = Input {
        fabric: &fabric,
        ports: &ports,
        hosts: &hosts,
        nics: &HashMap::new(),
    };
    let mut tree = PauseTree::of(&input);
    let runs = 50;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        tree = PauseTree::of(&input);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let t = Instant::now();
    let lines = text::lines(&tree);
    let view = t.elapsed();
    println!(
        "{} switches x {PORTS} ports, {NODES} nodes x 2 NICs: {} links, {} ports counted, {} edges, {} roots, {} hosts paused",
        SPINES + LEAVES,
        fabric.links.len(),
        ports.len(),
        tree.edges.len(),
        tree.roots.len(),
        tree.paused_hosts.len()
    );
    println!(
        "pause tree: median {:.2} ms, max {:.2} ms over {runs} evaluations (budget 5 ms); fabric build {:.2} ms; view lines {} in {:.2} ms",
        times[runs / 2],
        times[runs - 1],
        build.as_secs_f64() * 1e3,
        lines.len(),
        view.as_secs_f64() * 1e3
    );
    if let Some(p) = text::phrase(&tree) {
        println!("{p}");
    }
}
