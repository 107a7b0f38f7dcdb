//! Which RDMA device, port and GID a ping session uses, from the route toward the peer.
//!
//! The source address the kernel picks toward the peer (the control connection's local address) and
//! the netdev that holds it say which rail the pings must leave through. The RoCE v2 GID equal to that
//! address (`::ffff:a.b.c.d` for IPv4, the address itself for IPv6) on that netdev (`gid_attrs/ndevs`)
//! names the device, the port and the GID index. Verbs do not expose a GID's type, the kernel does:
//! `/sys/class/infiniband/<dev>/ports/<n>/gid_attrs/types/<idx>` reads "RoCE v2". No such GID is an
//! error, never a silent fallback to index 0 (RoCE v1, or another rail). Pure file reads, so it is
//! tested on fake sysfs trees.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};
use std::path::{Path, PathBuf};

/// Where the pings leave from: the source address toward the peer, and its netdev when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub src: IpAddr,
    pub netdev: Option<String>,
}

/// What the user pinned (`[[ping]]` keys or pingd flags); the rest is chosen from the route.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pin {
    pub device: Option<String>,
    pub port: Option<u8>,
    pub gid_index: Option<u8>,
}

/// The device, port and GID a session uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub device: String,
    pub port: u8,
    pub gid_index: u8,
    /// The GID as sysfs prints it.
    pub gid: String,
    /// "RoCE v2", "IB/RoCE v1", ...
    pub gid_type: String,
    pub netdev: Option<String>,
}

impl fmt::Display for Choice {
    /// "rocep19s0 port 1 GID 3 (RoCE v2 ::ffff:192.168.250.201 on ens224)"
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let addr = self
            .gid
            .parse::<Ipv6Addr>()
            .map_or(self.gid.clone(), |a| a.to_string());
        write!(
            f,
            "{} port {} GID {} ({} {addr}",
            self.device, self.port, self.gid_index, self.gid_type
        )?;
        match &self.netdev {
            Some(n) => write!(f, " on {n})"),
            None => write!(f, ")"),
        }
    }
}

/// The GID a RoCE v2 packet from `src` carries.
pub fn gid_of(src: IpAddr) -> Ipv6Addr {
    match src {
        IpAddr::V4(v4) => v4.to_ipv6_mapped(),
        IpAddr::V6(v6) => v6,
    }
}

/// Link-local GIDs (IPv4 169.254/16, IPv6 fe80::/10) do not route: never a RoCE v2 path to a peer.
fn link_local(g: &Ipv6Addr) -> bool {
    match g.to_ipv4_mapped() {
        Some(v4) => v4.is_link_local(),
        None => (g.segments()[0] & 0xffc0) == 0xfe80,
    }
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p)
        .ok()
        .map(|s| s.trim().to_string())
}

fn entries(p: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn port_dir(root: &str, dev: &str, port: u8) -> PathBuf {
    Path::new(root).join(format!("class/infiniband/{dev}/ports/{port}"))
}

/// One port's GID table entry as sysfs shows it.
struct Gid {
    index: u8,
    addr: Ipv6Addr,
    text: String,
    ty: String,
    ndev: Option<String>,
}

/// The set GIDs of a port, index order. Reading the type of an unused index fails (EINVAL): skipped.
fn gids(dir: &Path) -> Vec<Gid> {
    let mut v: Vec<Gid> = entries(&dir.join("gid_attrs/types"))
        .iter()
        .filter_map(|i| {
            let index: u8 = i.parse().ok()?;
            let ty = read(&dir.join(format!("gid_attrs/types/{i}")))?;
            let text = read(&dir.join(format!("gids/{i}")))?.to_ascii_lowercase();
            let addr: Ipv6Addr = text.parse().ok()?;
            let ndev = read(&dir.join(format!("gid_attrs/ndevs/{i}")));
            (!addr.is_unspecified()).then_some(Gid {
                index,
                addr,
                text,
                ty,
                ndev,
            })
        })
        .collect();
    v.sort_by_key(|g| g.index);
    v
}

/// Pick the device, port and GID for pings that leave along `route`.
pub fn select(root: &str, route: &Route, pin: &Pin) -> Result<Choice, String> {
    let have = entries(&Path::new(root).join("class/infiniband"));
    if have.is_empty() {
        return Err("RDMA unavailable on this host: no devices".into());
    }
    if pin.gid_index.is_some() && pin.device.is_none() {
        return Err("a pinned GID index needs its device pinned too".into());
    }
    let devs: Vec<&String> = match &pin.device {
        Some(d) if have.contains(d) => vec![d],
        Some(d) => return Err(format!("no RDMA device {d} (have {})", have.join(", "))),
        None => have.iter().collect(),
    };
    let want = gid_of(route.src);
    let mut skipped = Vec::new();
    for dev in devs {
        let ports: Vec<u8> = match pin.port {
            Some(p) => vec![p],
            None => {
                let mut v: Vec<u8> =
                    entries(&Path::new(root).join(format!("class/infiniband/{dev}/ports")))
                        .iter()
                        .filter_map(|p| p.parse().ok())
                        .collect();
                v.sort();
                v
            }
        };
        for port in ports {
            let dir = port_dir(root, dev, port);
            let state = read(&dir.join("state")).unwrap_or_else(|| "missing".into());
            if !state.ends_with("ACTIVE") {
                skipped.push(format!("{dev} port {port} is {state}"));
                continue;
            }
            let table = gids(&dir);
            if let Some(i) = pin.gid_index {
                let g = table
                    .iter()
                    .find(|g| g.index == i)
                    .ok_or_else(|| format!("{dev} port {port} has no GID at index {i}"))?;
                return Ok(choice(dev, port, g));
            }
            let ib = read(&dir.join("link_layer")).is_some_and(|l| l == "InfiniBand");
            if ib && pin.device.is_some() {
                // InfiniBand routes by LID; GID 0 (subnet prefix + GUID) is the port's own.
                if let Some(g) = table.iter().find(|g| g.index == 0) {
                    return Ok(choice(dev, port, g));
                }
            }
            let hit = table.iter().find(|g| {
                g.ty.eq_ignore_ascii_case("RoCE v2")
                    && g.addr == want
                    && !link_local(&g.addr)
                    && match (&route.netdev, &g.ndev) {
                        // A GID of another netdev (another VLAN over the same port) is another path.
                        (Some(want_dev), Some(have_dev)) => want_dev == have_dev,
                        _ => true,
                    }
            });
            if let Some(g) = hit {
                return Ok(choice(dev, port, g));
            }
        }
    }
    let on = route
        .netdev
        .as_ref()
        .map_or(String::new(), |n| format!(" on {n}"));
    let mut why =
        format!("no active port has a RoCE v2 GID {want}{on} (the source address toward the peer)");
    if link_local(&want) {
        why.push_str("; that address is link-local, which RoCE v2 does not route");
    }
    if !skipped.is_empty() {
        why.push_str(&format!("; {}", skipped.join(", ")));
    }
    Err(why)
}

fn choice(dev: &str, port: u8, g: &Gid) -> Choice {
    Choice {
        device: dev.to_string(),
        port,
        gid_index: g.index,
        gid: g.text.clone(),
        gid_type: g.ty.clone(),
        netdev: g.ndev.clone(),
    }
}

/// The netdev holding `src` among `(netdev, address)` pairs (from getifaddrs).
pub fn netdev_of(src: IpAddr, addrs: &[(String, IpAddr)]) -> Option<String> {
    addrs
        .iter()
        .find(|(_, a)| *a == src)
        .map(|(n, _)| n.clone())
}

#[cfg(test)]
mod tests;
