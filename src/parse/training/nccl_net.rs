//! NCCL_DEBUG=INFO lines that say which network each process's NCCL chose, so "is training really
//! on RoCE?" is answered from the job's own words:
//!
//! ```text
//! nid000012:86554:86554 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB nmn0:10.252.1.69<0>
//! nid000012:86066:86066 [0] NCCL INFO NET/Socket : Using [0]nmn0:10.252.1.69<0> [1]hsn0:10.253.6.188<0>
//! node1:123:456 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA
//! ```
//!
//! `NET/IB : Using` lists devices with their link layer (`/RoCE` → `ib_roce`, `/IB` → `ib`);
//! `NET/Socket : Using` lists the interfaces NCCL falls back to (`socket`). A channel line `via
//! NET/IB/0[/GDRDMA]` or `via NET/Socket/0` names the path of one channel (device: that path);
//! `via P2P`/`SHM` channels stay inside the node and say nothing about the fabric.

/// One network NCCL uses in one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NcclTransport {
    /// The MPI/torchrun rank where the line carries one, else the process as NCCL names it
    /// (`host:pid`).
    pub rank: String,
    /// `ib_roce`, `ib` or `socket`.
    pub transport: &'static str,
    pub device: String,
}

/// The transports a line reports (empty for every other line).
pub fn read(body: &str, rank: Option<u32>) -> Vec<NcclTransport> {
    let Some(at) = body.find("NCCL INFO ") else {
        return Vec::new();
    };
    let msg = body[at + "NCCL INFO ".len()..].trim();
    let who = rank
        .map(|r| r.to_string())
        .unwrap_or_else(|| process(&body[..at]));
    let one = |transport, device: &str| NcclTransport {
        rank: who.clone(),
        transport,
        device: device.to_string(),
    };
    if let Some(list) = msg
        .strip_prefix("NET/IB : Using ")
        .or_else(|| msg.strip_prefix("NET/IB: Using "))
    {
        return devices(list)
            .map(|d| match d.rsplit_once('/') {
                Some((dev, layer)) if layer.eq_ignore_ascii_case("RoCE") => one("ib_roce", dev),
                Some((dev, _)) => one("ib", dev),
                None => one("ib", d),
            })
            .collect();
    }
    if let Some(list) = msg
        .strip_prefix("NET/Socket : Using ")
        .or_else(|| msg.strip_prefix("NET/Socket: Using "))
    {
        return devices(list)
            .map(|d| one("socket", d.split(':').next().unwrap_or(d)))
            .collect();
    }
    if msg.starts_with("Channel ")
        && let Some(path) = msg.split(" via ").nth(1)
    {
        let path = path.split_whitespace().next().unwrap_or("");
        if path.starts_with("NET/IB") {
            return vec![one("ib", path)];
        }
        if path.starts_with("NET/Socket") {
            return vec![one("socket", path)];
        }
    }
    Vec::new()
}

/// `[0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE ; OOB ...` → `mlx5_0:1/RoCE`, `mlx5_1:1/RoCE`.
fn devices(list: &str) -> impl Iterator<Item = &str> {
    list.split(';')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|w| w.strip_prefix('[').and_then(|w| w.split_once(']')))
        .map(|(_, d)| d.split('<').next().unwrap_or(d))
        .filter(|d| !d.is_empty())
}

/// `nid000012:86554:86554 [0] ` → `nid000012:86554` (host and pid; the thread id changes per line).
fn process(before: &str) -> String {
    let first = before.split_whitespace().next().unwrap_or("");
    let mut parts = first.split(':');
    match (parts.next(), parts.next()) {
        (Some(h), Some(p)) if !h.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{h}:{p}")
        }
        _ => first.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn using_lines_and_channels() {
        let r = read(
            "nid000012:86554:86554 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/IB ; OOB nmn0:10.252.1.69<0>",
            None,
        );
        let got: Vec<_> = r
            .iter()
            .map(|t| (t.rank.as_str(), t.transport, t.device.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("nid000012:86554", "ib_roce", "mlx5_0:1"),
                ("nid000012:86554", "ib", "mlx5_1:1")
            ]
        );
        let s = read(
            "nid000012:86066:86066 [0] NCCL INFO NET/Socket : Using [0]nmn0:10.252.1.69<0> [1]hsn0:10.253.6.188<0>",
            Some(3),
        );
        assert_eq!(s.len(), 2);
        assert!(s.iter().all(|t| t.transport == "socket" && t.rank == "3"));
        assert_eq!(s[1].device, "hsn0");
        let c = read(
            "n1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA",
            None,
        );
        assert_eq!(c[0].transport, "ib");
        assert_eq!(c[0].device, "NET/IB/0/GDRDMA");
        assert!(
            read(
                "n1:1:2 [0] NCCL INFO Channel 05 : 12[901c0] -> 11[201d0] via P2P/IPC/read",
                None
            )
            .is_empty()
        );
        assert!(
            read("NET/IB : Using [0]mlx5_0:1/RoCE", None).is_empty(),
            "not an NCCL INFO line"
        );
    }
}
