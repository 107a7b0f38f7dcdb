//! The host's sysfs dump: `path:value` lines as `grep -rs . <paths>` prints them (or `path value`
//! as an `echo $f $(cat $f)` loop does) for
//! [`Request::SysfsDump`](crate::collect::transport::Request::SysfsDump) (and as
//! [`sysfs_dump`](crate::collect::local::sysfs_dump) prints them locally).
//!
//! - `.../infiniband/<dev>/ports/<n>/hw_counters/<name>` → `rocetop_rdma_<name>_total`
//!   {node,device,rdma_port}; `lifespan` is a setting (ms) and becomes a gauge.
//! - `.../ports/<n>/counters/<name>` (IB port counters) → `rocetop_rdma_<name>_total` too, and
//!   `port_xmit_data`/`port_rcv_data` × 4 (they count 4-byte words) → RDMA bytes of the port's netdev,
//!   unless the port has `*_vport_rdma_*_bytes` or `rdma_*_bytes` hw_counters, which count bytes.
//! - `.../ports/<n>/state` (`4: ACTIVE`) → gauge; `.../ports/<n>/gid_attrs/ndevs/<idx>` → the netdev.
//! - `.../net/<if>/statistics/<name>` → kernel bytes (rx_bytes, tx_bytes) or `rocetop_nic_<name>_total`.
//!
//! Paths may have any root prefix (containers, tests): the structure is matched from the right.

use crate::metrics::names::{self, NODE_KERNEL_BYTES, NODE_RDMA_BYTES};
use crate::metrics::{LabelName, Parsed, Sample};
use crate::parse::num;
use std::collections::BTreeMap;

/// The mlx5 "Q counters" (basic, out-of-sequence, retransmission, extended errors, RoCE
/// accessibility): the driver reads them from 32-bit firmware fields, so they wrap at 2^32
/// (drivers/infiniband/hw/mlx5/counters.c). Congestion and PPCNT counters are 64-bit.
const MLX5_Q_COUNTERS_32BIT: &[&str] = &[
    "rx_write_requests",
    "rx_read_requests",
    "rx_atomic_requests",
    "rx_dct_connect",
    "out_of_buffer",
    "out_of_sequence",
    "duplicate_request",
    "rnr_nak_retry_err",
    "packet_seq_err",
    "implied_nak_seq_err",
    "local_ack_timeout_err",
    "resp_local_length_error",
    "resp_cqe_error",
    "req_cqe_error",
    "req_remote_invalid_request",
    "req_remote_access_errors",
    "resp_remote_access_errors",
    "resp_cqe_flush_error",
    "req_cqe_flush_error",
    "req_rnr_retries_exceeded",
    "req_transport_retries_exceeded",
    "roce_adp_retrans",
    "roce_adp_retrans_to",
    "roce_slow_restart",
    "roce_slow_restart_cnps",
    "roce_slow_restart_trans",
];

/// Files of an RDMA device or port that the dump may contain but that hold no counter
/// (a hand-made `grep -r . /sys/class/infiniband/mlx5_0` prints them): understood, not sampled.
const DEVICE_ATTRS: &[&str] = &[
    "board_id",
    "fw_ver",
    "hca_type",
    "hw_rev",
    "node_guid",
    "node_type",
    "node_desc",
    "sys_image_guid",
];
const PORT_ATTRS: &[&str] = &[
    "link_layer",
    "phys_state",
    "rate",
    "lid",
    "sm_lid",
    "sm_sl",
    "lid_mask_count",
    "cap_mask",
    "has_smi",
    "gids",
    "pkeys",
    "gid_attrs",
];

/// One sample of an RDMA counter, 32-bit where the mlx5 driver reads a 32-bit field (and the
/// value fits, so that another driver's 64-bit counter of the same name is never taken as wrapping).
pub(crate) fn rdma_sample(name: &str, labels: &[(LabelName, &str)], v: u64) -> Sample {
    if MLX5_Q_COUNTERS_32BIT.contains(&name) && v <= u64::from(u32::MAX) {
        Sample::counter32(names::rdma_counter(name), labels, v)
    } else {
        Sample::counter(names::rdma_counter(name), labels, v)
    }
}

/// What one dump line is about.
#[derive(Debug, PartialEq)]
enum Line<'a> {
    /// `ports/<n>/hw_counters/<name>`, or the device-wide `<dev>/hw_counters/<name>` (port None).
    Hw {
        dev: &'a str,
        port: Option<&'a str>,
        name: &'a str,
    },
    /// `ports/<n>/counters/<name>` (IB PMA port counters).
    Ib {
        dev: &'a str,
        port: &'a str,
        name: &'a str,
    },
    State {
        dev: &'a str,
        port: &'a str,
    },
    Ndev {
        dev: &'a str,
        port: &'a str,
        idx: &'a str,
    },
    /// A file of the device that is not a counter.
    Attr {
        dev: &'a str,
    },
    NetStat {
        netdev: &'a str,
        name: &'a str,
    },
}

/// Split a `grep` line into its structure and value: at the first ':' whose left side is a path
/// this parser knows. Values may contain ':' (`4: ACTIVE`) and '/' (`25 Gb/sec`), and a root prefix
/// may contain ':' (`/sys/devices/pci0000:00/...`); sysfs file names never do.
fn split_line(line: &str) -> Option<(Line<'_>, &str)> {
    // `contains("infiniband/") || contains("net/")`, looking only at the '/'s.
    let b = line.as_bytes();
    let known_dir = memchr::memchr_iter(b'/', b).any(|i| {
        let before = &b[..i];
        before.ends_with(b"net") || before.ends_with(b"infiniband")
    });
    if !known_dir {
        return None;
    }
    // A real path has a handful of ':' at most (PCI addresses); bounding the tries keeps a junk
    // line of thousands of ':' linear.
    line.match_indices(':')
        .take(64)
        .find_map(|(i, _)| {
            let kind = classify(line.get(..i)?)?;
            Some((kind, line.get(i + 1..)?))
        })
        // `for f in /sys/class/infiniband/*/ports/1/hw_counters/*; do echo $f $(cat $f); done`:
        // the path, a space, the value (sysfs paths hold no space).
        .or_else(|| {
            let (path, value) = line.trim_start().split_once([' ', '\t'])?;
            Some((classify(path)?, value))
        })
}

/// Recognise the sysfs structure of a path, from the right, so any root prefix works.
fn classify(path: &str) -> Option<Line<'_>> {
    // The last components, right to left, without a vector for the usual short paths.
    const N: usize = 16;
    let mut last = [""; N];
    let mut n = 0;
    // Split at '/' right to left with a plain byte loop ('/' is ASCII, so every cut is a char
    // boundary); empty components are skipped as `split('/').filter(..)` does.
    let b = path.as_bytes();
    let mut end = b.len();
    for i in (0..=b.len()).rev() {
        if i > 0 && b[i - 1] != b'/' {
            continue;
        }
        if i < end {
            if n == N {
                return classify_long(path);
            }
            last[N - 1 - n] = path.get(i..end).unwrap_or("");
            n += 1;
        }
        end = i.saturating_sub(1);
    }
    let c = &last[N - n..];
    for i in (0..c.len()).rev() {
        // Every structure starts at an `infiniband` or `net` component: try only those.
        if !matches!(c.get(i), Some(&("infiniband" | "net"))) {
            continue;
        }
        if let Some(l) = classify_at(c.get(i..)?) {
            return Some(l);
        }
    }
    None
}

/// [`classify`] of a path with many components.
fn classify_long(path: &str) -> Option<Line<'_>> {
    let c: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    for i in (0..c.len()).rev() {
        if let Some(l) = classify_at(c.get(i..)?) {
            return Some(l);
        }
    }
    None
}

fn classify_at<'a>(c: &[&'a str]) -> Option<Line<'a>> {
    match c {
        ["infiniband", dev, "ports", port, "hw_counters", name] => Some(Line::Hw {
            dev,
            port: Some(port),
            name,
        }),
        ["infiniband", dev, "hw_counters", name] => Some(Line::Hw {
            dev,
            port: None,
            name,
        }),
        ["infiniband", dev, "ports", port, "counters", name] => Some(Line::Ib { dev, port, name }),
        ["infiniband", dev, "ports", port, "state"] => Some(Line::State { dev, port }),
        ["infiniband", dev, "ports", port, "gid_attrs", "ndevs", idx] => {
            Some(Line::Ndev { dev, port, idx })
        }
        ["infiniband", dev, "ports", _, attr, ..] if PORT_ATTRS.contains(attr) => {
            Some(Line::Attr { dev })
        }
        ["infiniband", dev, attr] if DEVICE_ATTRS.contains(attr) => Some(Line::Attr { dev }),
        ["net", netdev, "statistics", name] => Some(Line::NetStat { netdev, name }),
        _ => None,
    }
}

/// What the dump says about one RDMA port beyond its counters.
#[derive(Default)]
struct PortBytes {
    /// `port_xmit_data`, `port_rcv_data` (4-byte words).
    words: [Option<u64>; 2],
    /// Byte counters of hw_counters (`tx_vport_rdma_unicast_bytes`, `rdma_tx_bytes`, ...), summed.
    bytes: [Option<u64>; 2],
    /// GID index → netdev; the lowest index names the port's netdev.
    ndevs: BTreeMap<(u64, String), String>,
    /// The lines `words` and `bytes` add, per direction (for [`trace`]).
    word_lines: [Vec<u32>; 2],
    byte_lines: [Vec<u32>; 2],
}

const TX: usize = 0;
const RX: usize = 1;
const DIRECTIONS: [&str; 2] = ["tx", "rx"];

/// The direction of an hw_counters byte counter (`tx_vport_rdma_unicast_bytes`, `rdma_rx_bytes`).
fn byte_counter_direction(name: &str) -> Option<usize> {
    let dir = |s: &str| match s {
        "tx" => Some(TX),
        "rx" => Some(RX),
        _ => None,
    };
    if let Some(rest) = name.strip_prefix("rdma_") {
        return dir(rest.strip_suffix("_bytes")?);
    }
    let (d, rest) = name.split_once('_')?;
    let kind = rest.strip_prefix("vport_rdma_")?.strip_suffix("_bytes")?;
    matches!(kind, "unicast" | "multicast").then_some(())?;
    dir(d)
}

/// GID indices sort numerically (`2` before `10`); a non-numeric index sorts last.
fn gid_order(idx: &str) -> (u64, String) {
    (num::count(idx).unwrap_or(u64::MAX), idx.to_string())
}

fn add(slot: &mut Option<u64>, v: u64) {
    *slot = Some(slot.unwrap_or(0).saturating_add(v));
}

/// Note a device (and whether it has congestion counters) without allocating for one seen before.
fn see(devices: &mut BTreeMap<String, bool>, dev: &str, dcqcn: bool) {
    match devices.get_mut(dev) {
        Some(d) => *d |= dcqcn,
        None => {
            devices.insert(dev.to_string(), dcqcn);
        }
    }
}

/// Parse a sysfs dump of one node.
pub fn parse(text: &str, node: &str) -> Parsed {
    parse_into(text, node, None)
}

/// [`parse`], and how each sample follows from the lines (see [`trace`]); None for a dump
/// whose lines are read through earlier ones (relative counter lines under a heading).
pub fn parse_traced(text: &str, node: &str) -> (Parsed, Option<Trace>) {
    let mut t = Trace::default();
    let p = parse_into(text, node, Some(&mut t));
    let relative = t.relative;
    (p, (!relative).then_some(t))
}

fn parse_into(text: &str, node: &str, mut trace: Option<&mut Trace>) -> Parsed {
    let mut p = Parsed::default();
    // Each sample's `How`, pushed beside it (a no-op without a trace).
    let mut how = |h: How| {
        if let Some(t) = trace.as_deref_mut() {
            t.how.push(h);
        }
    };
    // device → whether it has any np_/rp_ congestion counter
    let mut devices: BTreeMap<String, bool> = BTreeMap::new();
    let mut ports: BTreeMap<(String, String), PortBytes> = BTreeMap::new();
    let mut ctx = relative::Context::default();
    let (mut framing, mut unnamed) = (0usize, 0usize);
    let (mut unreadable, mut no_pma) = (0usize, 0usize);
    let mut relative = false;
    // The file the last banner line named, waiting for its value (see `banner`).
    let mut named: Option<String> = None;
    for (at, raw) in num::lines(text).enumerate() {
        let at = at as u32;
        let raw = raw.trim_end_matches('\r');
        if num::trim(raw).is_empty() {
            continue;
        }
        let joined: String;
        let (line, is_joined) = match named.take() {
            Some(path) if banner::is_value(raw) => {
                joined = format!("{path}:{}", raw.trim());
                // read through an earlier line: no one-line trace
                relative = true;
                (joined.as_str(), true)
            }
            _ => (raw, false),
        };
        if !is_joined {
            if banner::is_tool_error(line) {
                unreadable += 1;
                continue;
            }
            if let Some(path) = banner::path(line) {
                named = Some(path.to_string());
                framing += 1;
                // `cat /sys/.../hw_counters/x` after a prompt says where the listing is, too
                let _ = ctx.heading(line);
                continue;
            }
        }
        let (kind, value) = match split_line(line) {
            Some(kv) => kv,
            None if ctx.heading(line) => {
                framing += 1;
                relative = true;
                continue;
            }
            None => match ctx.counter(line) {
                Some(r) => {
                    unnamed += usize::from(ctx.dev.is_none());
                    relative = true;
                    (relative_line(&ctx, &r), r.value)
                }
                None => {
                    p.unknown(line);
                    continue;
                }
            },
        };
        let value = num::trim(value);
        match kind {
            Line::Attr { dev } => {
                see(&mut devices, dev, false);
            }
            Line::Hw { dev, port, name } => {
                let dcqcn = name.starts_with("np_") || name.starts_with("rp_");
                see(&mut devices, dev, dcqcn);
                let Some(v) = num::count(value) else {
                    if is_no_pma(value) {
                        no_pma += 1;
                    } else {
                        p.unknown(line);
                    }
                    continue;
                };
                let all = [
                    ("device", dev),
                    ("node", node),
                    ("rdma_port", port.unwrap_or("")),
                ];
                let labels = &all[..if port.is_some() { 3 } else { 2 }];
                if name == "lifespan" {
                    p.push(Sample::gauge(
                        names::RDMA_HW_COUNTERS_LIFESPAN,
                        labels,
                        v as f64 / 1000.0,
                    ));
                    how(How::Millis(at));
                    continue;
                }
                p.push(rdma_sample(name, labels, v));
                how(How::rdma(at, name));
                if let (Some(port), Some(d)) = (port, byte_counter_direction(name)) {
                    let e = ports
                        .entry((dev.to_string(), port.to_string()))
                        .or_default();
                    add(&mut e.bytes[d], v);
                    e.byte_lines[d].push(at);
                }
            }
            Line::Ib { dev, port, name } => {
                see(&mut devices, dev, false);
                let Some(v) = num::count(value) else {
                    if is_no_pma(value) {
                        no_pma += 1;
                    } else {
                        p.unknown(line);
                    }
                    continue;
                };
                let labels = [("device", dev), ("node", node), ("rdma_port", port)];
                p.push(rdma_sample(name, &labels, v));
                how(How::rdma(at, name));
                let d = match name {
                    "port_xmit_data" => TX,
                    "port_rcv_data" => RX,
                    _ => continue,
                };
                let e = ports
                    .entry((dev.to_string(), port.to_string()))
                    .or_default();
                add(&mut e.words[d], v);
                e.word_lines[d].push(at);
            }
            Line::State { dev, port } => {
                see(&mut devices, dev, false);
                // `4: ACTIVE`: the number is the state; the word is for people.
                let n = value.split(':').next().and_then(num::count);
                let Some(n) = n else {
                    p.unknown(line);
                    continue;
                };
                let labels = [("device", dev), ("node", node), ("rdma_port", port)];
                p.push(Sample::gauge(names::RDMA_PORT_STATE, &labels, n as f64));
                how(How::Fixed);
            }
            Line::Ndev { dev, port, idx } => {
                see(&mut devices, dev, false);
                if value.is_empty() {
                    p.unknown(line);
                    continue;
                }
                let order = gid_order(idx);
                let e = ports
                    .entry((dev.to_string(), port.to_string()))
                    .or_default();
                e.ndevs.insert(order, value.to_string());
            }
            Line::NetStat { netdev, name } => {
                let Some(v) = num::count(value) else {
                    p.unknown(line);
                    continue;
                };
                let labels = [("node", node), ("netdev", netdev)];
                match name {
                    "tx_bytes" | "rx_bytes" => {
                        let dir = if name == "tx_bytes" { "tx" } else { "rx" };
                        let labels = [("node", node), ("netdev", netdev), ("direction", dir)];
                        p.push(Sample::counter(NODE_KERNEL_BYTES, &labels, v));
                    }
                    // Kernel statistics get their own family: ethtool -S has counters of the same names
                    // (rx_packets) with different values, and one series must not get both.
                    _ => p.push(Sample::counter(names::kernel_counter(name), &labels, v)),
                }
                how(How::Counter(at));
            }
        }
    }
    for h in push_rdma_bytes(&mut p, node, &ports) {
        how(h);
    }
    if let Some(t) = trace {
        t.relative = relative;
    }
    if framing > 0 {
        p.note(format!(
            "{framing} command/heading lines read for the device and port of relative counter lines"
        ));
    }
    if unnamed > 0 {
        p.note(format!(
            "{unnamed} counter lines name no device (no /sys path, `cd` or `show_counters <dev>` before them): device=\"{UNKNOWN}\""
        ));
    }
    if no_pma > 0 {
        p.note(format!(
            "{no_pma} counters read `N/A (no PMA)`: the driver has no port counters (iWARP, some RoCE drivers); they are missing, not 0"
        ));
    }
    if unreadable > 0 {
        p.note(format!(
            "files the capture could not read (the tool's error is in it): {unreadable}"
        ));
    }
    if devices.is_empty() {
        p.note("no RDMA device");
    }
    for (dev, has_dcqcn) in &devices {
        if !has_dcqcn {
            p.note(format!(
                "{dev}: no DCQCN counters (np_cnp_sent...) in hw_counters"
            ));
        }
    }
    p
}

/// What a driver without performance-management counters prints in their files.
fn is_no_pma(value: &str) -> bool {
    value.starts_with("N/A (no PMA)")
}

/// The label of a device or port the capture does not name.
const UNKNOWN: &str = "unknown";

/// A relative counter line as the line its full path would have given.
fn relative_line<'a>(ctx: &'a relative::Context, r: &relative::Relative<'a>) -> Line<'a> {
    let dev = ctx.dev.as_deref().unwrap_or(UNKNOWN);
    // A directory without a port (`cd .../mlx5_0/hw_counters`) holds device-wide counters; with no
    // directory named at all the port is unknown, not device-wide.
    let port = r
        .port
        .or(ctx.port.as_deref())
        .or_else(|| (ctx.dev.is_none() || ctx.dir.is_none()).then_some(UNKNOWN));
    match (r.dir, port) {
        (relative::Dir::Hw, port) => Line::Hw {
            dev,
            port,
            name: r.name,
        },
        (relative::Dir::Ib, port) => Line::Ib {
            dev,
            port: port.unwrap_or(UNKNOWN),
            name: r.name,
        },
    }
}

/// RDMA bytes per netdev and direction: byte counters of hw_counters where the port has them,
/// else the IB data counters × 4. Ports sharing a netdev are summed. Returns each sample's
/// [`How`].
fn push_rdma_bytes(
    p: &mut Parsed,
    node: &str,
    ports: &BTreeMap<(String, String), PortBytes>,
) -> Vec<How> {
    // (netdev, direction) → the sum and its terms (line, factor).
    type Sum = (u64, Vec<(u32, u64)>);
    let mut per_netdev: BTreeMap<(&str, usize), Sum> = BTreeMap::new();
    for ((dev, _port), b) in ports {
        let netdev = b.ndevs.values().next().map_or(dev.as_str(), String::as_str);
        for d in [TX, RX] {
            let (bytes, lines, factor) = match b.bytes[d] {
                Some(v) => (Some(v), &b.byte_lines[d], 1),
                None => (b.words[d].map(|w| w.saturating_mul(4)), &b.word_lines[d], 4),
            };
            if let Some(v) = bytes {
                let (sum, terms) = per_netdev.entry((netdev, d)).or_default();
                *sum = sum.saturating_add(v);
                terms.extend(lines.iter().map(|&l| (l, factor)));
            }
        }
    }
    let mut hows = Vec::with_capacity(per_netdev.len());
    for ((netdev, d), (v, terms)) in per_netdev {
        hows.push(How::Sum(terms));
        let labels = [
            ("node", node),
            ("netdev", netdev),
            ("direction", DIRECTIONS[d]),
        ];
        p.push(Sample::counter(NODE_RDMA_BYTES, &labels, v));
    }
    hows
}

/// One RDMA port as the dump shows it: for discovery (which netdev carries which device).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortInfo {
    pub device: String,
    pub rdma_port: String,
    /// The netdev of the lowest GID index, if the dump lists any.
    pub netdev: Option<String>,
}

/// The RDMA ports a dump mentions (with counters, a state or a GID netdev), sorted.
pub fn ports(text: &str) -> Vec<PortInfo> {
    let mut out: BTreeMap<(String, String), BTreeMap<(u64, String), String>> = BTreeMap::new();
    for line in text.lines().map(|l| l.trim_end_matches('\r')) {
        let Some((kind, value)) = split_line(line) else {
            continue;
        };
        let (dev, port, ndev) = match kind {
            Line::Hw {
                dev,
                port: Some(port),
                ..
            }
            | Line::Ib { dev, port, .. }
            | Line::State { dev, port } => (dev, port, None),
            Line::Ndev { dev, port, idx } => (dev, port, Some(idx)),
            _ => continue,
        };
        let e = out.entry((dev.to_string(), port.to_string())).or_default();
        if let Some(idx) = ndev
            && !value.trim().is_empty()
        {
            e.insert(gid_order(idx), value.trim().to_string());
        }
    }
    out.into_iter()
        .map(|((device, rdma_port), nd)| PortInfo {
            device,
            rdma_port,
            netdev: nd.into_values().next(),
        })
        .collect()
}

mod banner;
mod relative;
pub mod trace;
pub use trace::{How, Trace, known_value, value_line};

#[cfg(test)]
mod tests;

#[cfg(test)]
mod split_tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn classify_agrees_with_the_plain_split(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    "", "infiniband", "net", "mlx5_0", "ports", "1", "hw_counters", "counters",
                    "state", "gid_attrs", "ndevs", "0", "statistics", "rx_bytes", "np_cnp_sent",
                    "rate", "fw_ver", "sys", "é",
                ]),
                0..20,
            ),
            lead in proptest::bool::ANY,
        ) {
            let path = format!("{}{}", if lead { "/" } else { "" }, parts.join("/"));
            proptest::prop_assert_eq!(classify(&path), classify_long(&path), "{}", path);
        }
    }
}
