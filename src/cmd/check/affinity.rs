//! GPU ↔ NIC affinity, per node that reported `nvidia-smi topo -m`: which NIC is nearest each GPU,
//! which NICs the node's NCCL uses (its `NCCL_DEBUG=INFO` lines in a followed log), and the
//! findings: a GPU whose NCCL NIC is across the socket interconnect or the NUMA node's host
//! bridges (SYS, NODE) while a NIC shares its PCIe switch (PIX, PXB); NCCL over sockets where RDMA
//! NICs are there; NCCL over IB without GPUDirect RDMA where a GPU has a near NIC.

use crate::metrics::{Store, names};
use crate::parse::host::gpu::topo::Path;
use std::collections::{BTreeMap, BTreeSet};

/// What the check prints: one line per GPU, then the findings (each a problem).
#[derive(Debug, Default, PartialEq)]
pub struct Affinity {
    pub lines: Vec<String>,
    pub findings: Vec<String>,
}

/// A node's GPUs as topo -m saw them: per GPU number, each NIC and its path.
type Topo = BTreeMap<u32, Vec<(String, Path)>>;

/// What a node's NCCL said about its network.
#[derive(Debug, Default)]
struct Nccl {
    /// RDMA devices of `NET/IB : Using` (without their `:port`).
    ib: BTreeSet<String>,
    /// Interfaces of `NET/Socket : Using`.
    socket: BTreeSet<String>,
    /// Channels over NET/IB: with and without `/GDRDMA`.
    gdr: usize,
    no_gdr: usize,
}

fn topo_by_node(store: &Store) -> BTreeMap<String, Topo> {
    let mut out: BTreeMap<String, Topo> = BTreeMap::new();
    for (_, s) in store.select(names::GPU_NIC_PATH, &[]) {
        let k = &s.key;
        let (Some(node), Some(gpu), Some(dev), Some(path)) = (
            k.label("node"),
            k.label("gpu").and_then(|g| g.parse::<u32>().ok()),
            k.label("device"),
            k.label("path").and_then(Path::from_cell),
        ) else {
            continue;
        };
        out.entry(node.to_string())
            .or_default()
            .entry(gpu)
            .or_default()
            .push((dev.to_string(), path));
    }
    out
}

fn nccl_of(store: &Store, node: &str) -> Nccl {
    let mut n = Nccl::default();
    for (_, s) in store.select(names::NCCL_TRANSPORT_INFO, &[("node", node)]) {
        let (Some(t), Some(dev)) = (s.key.label("transport"), s.key.label("device")) else {
            continue;
        };
        match t {
            "socket" if !dev.starts_with("NET/") => {
                n.socket.insert(dev.to_string());
            }
            "ib" | "ib_roce" if dev.starts_with("NET/IB") => {
                if dev.ends_with("/GDRDMA") {
                    n.gdr += 1;
                } else {
                    n.no_gdr += 1;
                }
            }
            "ib" | "ib_roce" => {
                n.ib.insert(dev.split(':').next().unwrap_or(dev).to_string());
            }
            _ => {}
        }
    }
    n
}

/// The nearest of `nics` (ties: the first by name).
fn nearest<'a>(nics: impl Iterator<Item = &'a (String, Path)>) -> Option<&'a (String, Path)> {
    nics.min_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)))
}

pub fn of(store: &Store) -> Affinity {
    let mut out = Affinity::default();
    for (node, gpus) in topo_by_node(store) {
        let nccl = nccl_of(store, &node);
        let known = !nccl.ib.is_empty() || !nccl.socket.is_empty();
        for (gpu, nics) in &gpus {
            let Some((near, near_path)) = nearest(nics.iter()) else {
                continue;
            };
            let used = nearest(nics.iter().filter(|(d, _)| nccl.ib.contains(d)));
            let uses = match (used, known) {
                (Some((d, p)), _) => format!("NCCL uses {d} ({})", p.name()),
                (None, true) if nccl.ib.is_empty() => "NCCL uses sockets".to_string(),
                (None, true) => format!(
                    "NCCL uses {} (not in topo -m)",
                    nccl.ib.iter().cloned().collect::<Vec<_>>().join(", ")
                ),
                (None, false) => {
                    "NCCL's NIC unknown (no NCCL_DEBUG=INFO lines from this node)".into()
                }
            };
            out.lines.push(format!(
                "{node} GPU{gpu}: nearest NIC {near} ({}); {uses}",
                near_path.name()
            ));
            if let Some((d, p)) = used
                && matches!(p, Path::Sys | Path::Node)
                && near_path.is_near()
            {
                out.findings.push(format!(
                    "{node} GPU{gpu}: NCCL's NIC {d} is {} from it ({}) while {near} is {}: list {near} in NCCL_IB_HCA",
                    p.name(),
                    if *p == Path::Sys { "the other socket" } else { "another host bridge" },
                    near_path.name()
                ));
            }
        }
        let has_near = gpus
            .values()
            .any(|nics| nics.iter().any(|(_, p)| p.is_near()));
        if nccl.ib.is_empty() && !nccl.socket.is_empty() {
            out.findings.push(format!(
                "{node}: NCCL runs over sockets ({}) although topo -m shows RDMA NICs: check NCCL_IB_DISABLE and NCCL_NET",
                nccl.socket.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        } else if nccl.no_gdr > 0 && nccl.gdr == 0 && has_near {
            out.findings.push(format!(
                "{node}: NCCL's channels go over NET/IB without GPUDirect RDMA (no /GDRDMA) although its GPUs have a PIX/PXB NIC: load nvidia-peermem (or check NCCL_NET_GDR_LEVEL)"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    fn path(gpu: &str, dev: &str, p: &str) -> Sample {
        Sample::gauge(
            names::GPU_NIC_PATH,
            &[("device", dev), ("gpu", gpu), ("node", "g1"), ("path", p)],
            1.0,
        )
    }

    fn nccl(t: &str, dev: &str) -> Sample {
        Sample::gauge(
            names::NCCL_TRANSPORT_INFO,
            &[
                ("device", dev),
                ("log", "l"),
                ("node", "g1"),
                ("rank", "0"),
                ("transport", t),
            ],
            1.0,
        )
    }

    fn store(samples: Vec<Sample>) -> Store {
        let mut st = Store::new(600_000, 10);
        let src = st.add_source("g1", 1000);
        st.ingest(src, 1000, &Parsed::from(samples));
        st
    }

    #[test]
    fn a_cross_socket_nccl_nic_and_a_missing_gdr_are_flagged() {
        let st = store(vec![
            path("0", "mlx5_0", "SYS"),
            path("0", "mlx5_1", "PIX"),
            path("1", "mlx5_0", "PIX"),
            path("1", "mlx5_1", "SYS"),
            nccl("ib_roce", "mlx5_0:1"),
            nccl("ib", "NET/IB/0"),
        ]);
        let a = of(&st);
        assert_eq!(
            a.lines,
            vec![
                "g1 GPU0: nearest NIC mlx5_1 (PIX); NCCL uses mlx5_0 (SYS)",
                "g1 GPU1: nearest NIC mlx5_0 (PIX); NCCL uses mlx5_0 (PIX)",
            ]
        );
        assert_eq!(a.findings.len(), 2, "{:?}", a.findings);
        assert!(a.findings[0].starts_with("g1 GPU0: NCCL's NIC mlx5_0 is SYS"));
        assert!(a.findings[1].contains("without GPUDirect RDMA"));
    }

    #[test]
    fn near_nics_with_gdr_are_fine_and_sockets_are_not() {
        let st = store(vec![
            path("0", "mlx5_0", "PIX"),
            nccl("ib_roce", "mlx5_0:1"),
            nccl("ib", "NET/IB/0/GDRDMA"),
        ]);
        assert!(of(&st).findings.is_empty());
        let st = store(vec![path("0", "mlx5_0", "PIX"), nccl("socket", "eth0")]);
        let a = of(&st);
        assert!(a.lines[0].ends_with("NCCL uses sockets"), "{:?}", a.lines);
        assert!(a.findings[0].contains("over sockets (eth0)"));
        let st = store(vec![path("0", "mlx5_0", "SYS")]);
        let a = of(&st);
        assert!(a.findings.is_empty() && a.lines[0].contains("unknown"));
    }
}
