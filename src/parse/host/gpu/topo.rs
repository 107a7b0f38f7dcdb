//! `nvidia-smi topo -m`: the matrix of how each GPU reaches every other GPU and every NIC
//! (`X` self, `NV#` NVLink, `PIX`, `PXB`, `PHB`, `NODE`, `SYS`), with each GPU's CPU and NUMA
//! affinity. Drivers before ~470 head the NIC columns with their names (`mlx5_0`); later ones
//! with `NIC0`.. and a `NIC Legend` under the matrix (`NIC0: mlx5_0`). Only the GPU rows are read
//! (a NIC row repeats its column).
//!
//! Samples: `rocetop_gpu_nic_path_info{node,gpu,device,path} 1` per GPU and NIC, and
//! `rocetop_gpu_numa_node{node,gpu}` where the NUMA affinity is a number (`N/A` is missing).

use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use std::collections::HashMap;

/// How close a NIC is to a GPU, nearest first (the order of the matrix legend).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    /// At most one PCIe bridge between them.
    Pix,
    /// Several PCIe bridges, not through the host bridge.
    Pxb,
    /// Through a PCIe host bridge (the CPU).
    Phb,
    /// Between host bridges within one NUMA node.
    Node,
    /// Across the SMP interconnect between NUMA nodes (QPI/UPI): the other socket.
    Sys,
}

impl Path {
    pub fn from_cell(s: &str) -> Option<Path> {
        match s {
            "PIX" => Some(Path::Pix),
            "PXB" => Some(Path::Pxb),
            "PHB" => Some(Path::Phb),
            "NODE" => Some(Path::Node),
            "SYS" | "SOC" => Some(Path::Sys),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Path::Pix => "PIX",
            Path::Pxb => "PXB",
            Path::Phb => "PHB",
            Path::Node => "NODE",
            Path::Sys => "SYS",
        }
    }

    /// PIX or PXB: the NIC shares a PCIe switch with the GPU, so GPUDirect RDMA runs at full
    /// speed; anything farther crosses the CPU.
    pub fn is_near(self) -> bool {
        matches!(self, Path::Pix | Path::Pxb)
    }
}

/// The columns after the matrix, by their header words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tail {
    CpuAffinity,
    NumaAffinity,
    GpuNumaId,
}

fn tails(words: &[&str]) -> Vec<Tail> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match words.get(i..).unwrap_or(&[]) {
            ["CPU", "Affinity", ..] => {
                out.push(Tail::CpuAffinity);
                i += 2;
            }
            ["NUMA", "Affinity", ..] => {
                out.push(Tail::NumaAffinity);
                i += 2;
            }
            ["GPU", "NUMA", "ID", ..] => {
                out.push(Tail::GpuNumaId);
                i += 3;
            }
            _ => i += 1,
        }
    }
    out
}

/// `GPU3` → `3`.
fn gpu_number(w: &str) -> Option<&str> {
    w.strip_prefix("GPU")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Parse `nvidia-smi topo -m` from node `node`.
pub fn parse(text: &str, node: &str) -> Parsed {
    let mut p = Parsed::default();
    // The matrix's columns (GPU and NIC names as headed) and the tail columns after them.
    let mut cols: Vec<String> = Vec::new();
    let mut tail: Vec<Tail> = Vec::new();
    let mut legend: HashMap<String, String> = HashMap::new();
    // (gpu, column, path) until the legend has named the NIC columns.
    let mut cells: Vec<(String, String, Path)> = Vec::new();
    let mut in_legend = false;
    for raw in text.lines() {
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        // A node without GPUs answers this line: nothing to read, and nothing wrong.
        if t == super::NOT_INSTALLED {
            continue;
        }
        if t.starts_with(super::TIMED_OUT) {
            p.note(
                "nvidia-smi topo -m did not answer in time (a hung driver?): GPU-NIC paths unknown",
            );
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        let first = words.first().copied().unwrap_or("");
        if first.contains("nvidia-smi") || t.ends_with("nvidia-smi topo -m") {
            continue;
        }
        if t == "Legend:" || t == "NIC Legend:" {
            in_legend = true;
            continue;
        }
        if in_legend {
            // `X    = Self`, `SYS  = Connection traversing ...` (and its wrapped tail), `NIC0: mlx5_0`.
            if let [name, dev] = words.as_slice()
                && let Some(n) = name.strip_suffix(':')
                && n.starts_with("NIC")
            {
                legend.insert(n.to_string(), (*dev).to_string());
            }
            continue;
        }
        if t.contains("NICs found in the topology") {
            p.note(t.chars().take(160).collect::<String>());
            continue;
        }
        // The header: the matrix columns, then `CPU Affinity` and the others.
        if first == "GPU0" && !words.contains(&"X") {
            let end = words
                .iter()
                .position(|w| *w == "CPU" || *w == "NUMA")
                .unwrap_or(words.len());
            cols = words[..end].iter().map(|w| (*w).to_string()).collect();
            tail = tails(&words[end..]);
            continue;
        }
        if cols.is_empty() {
            p.unknown(raw);
            continue;
        }
        let Some(gpu) = gpu_number(first) else {
            // A NIC's row (`mlx5_0` or `NIC0`) repeats its column.
            if cols.iter().any(|c| c == first) {
                continue;
            }
            p.unknown(raw);
            continue;
        };
        let row = &words[1..];
        if row.len() < cols.len() {
            p.unknown(raw);
            continue;
        }
        for (col, cell) in cols.iter().zip(row) {
            if gpu_number(col).is_some() {
                continue;
            }
            match Path::from_cell(cell) {
                Some(path) => cells.push((gpu.to_string(), col.clone(), path)),
                None => p.unknown(&format!("GPU{gpu} {col}: {cell}")),
            }
        }
        for (what, cell) in tail.iter().zip(&row[cols.len()..]) {
            if *what == Tail::NumaAffinity {
                match cell.parse::<u32>() {
                    Ok(n) => p.push(Sample::gauge(
                        GPU_NUMA_NODE,
                        &[("gpu", gpu), ("node", node)],
                        f64::from(n),
                    )),
                    Err(_) => p.note(format!("GPU{gpu}: NUMA affinity {cell} (missing)")),
                }
            }
        }
    }
    for (gpu, col, path) in cells {
        let device = legend.get(&col).cloned().unwrap_or(col);
        p.push(Sample::gauge(
            GPU_NIC_PATH,
            &[
                ("device", &device),
                ("gpu", &gpu),
                ("node", node),
                ("path", path.name()),
            ],
            1.0,
        ));
    }
    p
}

/// The GPU ↔ NIC paths of a parse, as `(gpu, device, path)`.
pub fn paths(p: &Parsed) -> Vec<(String, String, Path)> {
    p.samples
        .iter()
        .filter(|s| s.key.name == GPU_NIC_PATH)
        .filter_map(|s| {
            Some((
                s.key.label("gpu")?.to_string(),
                s.key.label("device")?.to_string(),
                Path::from_cell(s.key.label("path")?)?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_columns_and_a_nic_legend() {
        let old = "        GPU0    GPU1    mlx5_0  mlx5_1  CPU Affinity\n\
GPU0     X      NV6     PIX     SYS     0-23,48-71\n\
GPU1    NV6      X      SYS     PIX     24-47\n\
mlx5_0  PIX     SYS      X      SYS\n";
        let p = parse(old, "n");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let got = paths(&p);
        assert!(got.contains(&("0".into(), "mlx5_0".into(), Path::Pix)));
        assert!(got.contains(&("1".into(), "mlx5_0".into(), Path::Sys)));
        assert_eq!(got.len(), 4);
        let new = "\tGPU0\tGPU1\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n\
GPU0\t X \tNV18\tPXB\tSYS\t0-55\t0\t\tN/A\n\
GPU1\tNV18\t X \tSYS\tPXB\t56-111\t1\t\tN/A\n\
\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect\n\
\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_3\n";
        let p = parse(new, "n");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        let got = paths(&p);
        assert!(got.contains(&("1".into(), "mlx5_3".into(), Path::Pxb)));
        assert_eq!(
            p.find(GPU_NUMA_NODE, &[("gpu", "1")]).map(|v| v.as_f64()),
            Some(1.0)
        );
    }

    #[test]
    fn a_node_without_nvidia_smi_answers_nothing_wrong() {
        let p = parse(&format!("{}\n", super::super::NOT_INSTALLED), "n");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        assert!(p.samples.is_empty() && p.notes.is_empty(), "{:?}", p.notes);
        let p = parse(&format!("{} after 5 s\n", super::super::TIMED_OUT), "n");
        assert_eq!(
            (p.unknown_lines, p.notes.len()),
            (0, 1),
            "a hung driver is a note"
        );
    }

    #[test]
    fn numa_na_is_missing_and_junk_is_counted() {
        let t = "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n\
GPU0\t X \tPHB\t0-63\tN/A\n\
GPU1\tPHB\t X \t0-63\tN/A\n";
        let p = parse(t, "n");
        assert!(p.find(GPU_NUMA_NODE, &[]).is_none());
        assert!(p.samples.is_empty(), "no NIC, no NUMA number");
        let p = parse("GPU0 X\nwhat\n", "n");
        assert_eq!(p.unknown_lines, 2);
    }
}
