//! Which RDMA device, port and GID a ping session uses, from the route toward the peer.
//!
//! The source address the kernel picks toward the peer (the control connection's local address) and
//! the netdev that holds it say which rail the pings must leave through. The GID equal to that
//! address (`::ffff:a.b.c.d` for IPv4, the address itself for IPv6) on that netdev (`gid_attrs/ndevs`)
//! names the device, the port and the GID index. The kernel lists such an address once per RoCE
//! version it can send (`gid_attrs/types/<idx>`: "IB/RoCE v1", "RoCE v2"); a ConnectX-3 without
//! RoCE v2 enabled, for one, has only v1 entries. Both ends must send the same version, so a session
//! offers every version it has ([`Versions`], in the handshake) and the two agree on one
//! ([`agree`]: v2 when both have it, else v1); without `gid_attrs/types` (old kernels) every GID is
//! v1, as rdma-core reads it. No GID of the address is an error, never a silent fallback to index 0
//! or another rail. Pure file reads, so it is tested on fake sysfs trees.

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

/// A RoCE version (InfiniBand ports count as v1: the kernel calls their GIDs "IB/RoCE v1").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Roce {
    V1,
    V2,
}

impl Roce {
    /// The version of a `gid_attrs/types` entry; `None` for a type this build does not know.
    pub fn of_type(ty: &str) -> Option<Roce> {
        match ty.trim() {
            t if t.eq_ignore_ascii_case("RoCE v2") => Some(Roce::V2),
            t if t.eq_ignore_ascii_case("IB/RoCE v1") || t.eq_ignore_ascii_case("RoCE v1") => {
                Some(Roce::V1)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Roce {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Roce::V1 => "RoCE v1",
            Roce::V2 => "RoCE v2",
        })
    }
}

/// The RoCE versions one end can send its GID as: what a pinger offers in its `Info`, and the one
/// version pingd agreed on in its answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Versions {
    pub v1: bool,
    pub v2: bool,
}

impl Versions {
    const V1: u8 = 1;
    const V2: u8 = 2;

    pub fn only(v: Roce) -> Self {
        Versions {
            v1: v == Roce::V1,
            v2: v == Roce::V2,
        }
    }

    /// The handshake's byte: bit 0 v1, bit 1 v2 (other bits are a later version's, ignored).
    pub fn bits(self) -> u8 {
        (if self.v1 { Self::V1 } else { 0 }) | (if self.v2 { Self::V2 } else { 0 })
    }

    pub fn from_bits(b: u8) -> Self {
        Versions {
            v1: b & Self::V1 != 0,
            v2: b & Self::V2 != 0,
        }
    }

    fn has(self, v: Roce) -> bool {
        match v {
            Roce::V1 => self.v1,
            Roce::V2 => self.v2,
        }
    }
}

impl fmt::Display for Versions {
    /// "RoCE v1 and v2", "RoCE v2 only", "no RoCE version"
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match (self.v1, self.v2) {
            (true, true) => "RoCE v1 and v2",
            (true, false) => "RoCE v1 only",
            (false, true) => "RoCE v2 only",
            (false, false) => "no RoCE version",
        })
    }
}

/// The version both ends send: v2 when both have it, else v1 when both have it. A mix (one end v1
/// only, the other v2 only) is refused with its reason: the packets would not parse at the other
/// end, and RC would retry each probe until RETRY_EXC with no word of why.
pub fn agree(mine: Versions, theirs: Versions) -> Result<Roce, String> {
    [Roce::V2, Roce::V1]
        .into_iter()
        .find(|&v| mine.has(v) && theirs.has(v))
        .ok_or_else(|| {
            let hint = if mine.v1 && !mine.v2 || theirs.v1 && !theirs.v2 {
                " (a ConnectX-3 has RoCE v2 GIDs only with the ROCE_V1_V2 firmware capability)"
            } else {
                ""
            };
            format!(
                "RoCE versions differ: this end has {mine}, the peer {theirs}; both ends must \
                 send the same{hint}"
            )
        })
}

/// One GID table index of the session's address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub index: u8,
    /// The type as sysfs prints it ("RoCE v2", "IB/RoCE v1").
    pub ty: String,
}

/// The device, port and GID a session uses: the address's index as each RoCE version the port has
/// it as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub device: String,
    pub port: u8,
    pub v1: Option<Entry>,
    pub v2: Option<Entry>,
    /// The GID as sysfs prints it.
    pub gid: String,
    pub netdev: Option<String>,
}

impl Choice {
    pub fn versions(&self) -> Versions {
        Versions {
            v1: self.v1.is_some(),
            v2: self.v2.is_some(),
        }
    }

    pub fn entry(&self, v: Roce) -> Option<&Entry> {
        match v {
            Roce::V1 => self.v1.as_ref(),
            Roce::V2 => self.v2.as_ref(),
        }
    }

    /// The version used until the peer says otherwise: v2 if the port has it.
    pub fn preferred(&self) -> Roce {
        if self.v2.is_some() {
            Roce::V2
        } else {
            Roce::V1
        }
    }

    /// The GID index of the preferred version.
    pub fn gid_index(&self) -> u8 {
        self.entry(self.preferred()).map_or(0, |e| e.index)
    }

    /// "rocep19s0 port 1 GID 3 (RoCE v2 ::ffff:192.168.250.201 on ens224)" for version `v`.
    pub fn path(&self, v: Roce) -> String {
        let addr = self
            .gid
            .parse::<Ipv6Addr>()
            .map_or(self.gid.clone(), |a| a.to_string());
        let (index, ty) = self
            .entry(v)
            .map_or((String::from("?"), v.to_string()), |e| {
                (e.index.to_string(), e.ty.clone())
            });
        let on = self
            .netdev
            .as_ref()
            .map_or(String::new(), |n| format!(" on {n}"));
        format!(
            "{} port {} GID {index} ({ty} {addr}{on})",
            self.device, self.port
        )
    }
}

impl fmt::Display for Choice {
    /// The path of the preferred version.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path(self.preferred()))
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
#[derive(Clone)]
struct Gid {
    index: u8,
    addr: Ipv6Addr,
    text: String,
    ty: String,
    ndev: Option<String>,
}

/// Without `gid_attrs/types` (kernels before 4.9) every GID is what rdma-core then takes it for.
const TYPE_UNKNOWN: &str = "IB/RoCE v1";

/// The entry at `index`, if set. Reading the type of an unused index fails (EINVAL): unset.
fn gid_at(dir: &Path, index: u8) -> Option<Gid> {
    let text = read(&dir.join(format!("gids/{index}")))?.to_ascii_lowercase();
    let addr: Ipv6Addr = text.parse().ok()?;
    if addr.is_unspecified() {
        return None;
    }
    let ty = if dir.join("gid_attrs/types").is_dir() {
        read(&dir.join(format!("gid_attrs/types/{index}")))?
    } else {
        TYPE_UNKNOWN.to_string()
    };
    let ndev = read(&dir.join(format!("gid_attrs/ndevs/{index}"))).filter(|n| !n.is_empty());
    Some(Gid {
        index,
        addr,
        text,
        ty,
        ndev,
    })
}

/// The set GIDs of a port, index order.
fn gids(dir: &Path) -> Vec<Gid> {
    let mut idx: Vec<u8> = entries(&dir.join("gids"))
        .iter()
        .filter_map(|i| i.parse().ok())
        .collect();
    idx.sort();
    idx.into_iter().filter_map(|i| gid_at(dir, i)).collect()
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
                return choice(dev, port, std::slice::from_ref(g));
            }
            let ib = read(&dir.join("link_layer")).is_some_and(|l| l == "InfiniBand");
            if ib && pin.device.is_some() {
                // InfiniBand routes by LID; GID 0 (subnet prefix + GUID) is the port's own.
                if let Some(g) = table.iter().find(|g| g.index == 0) {
                    return choice(dev, port, std::slice::from_ref(g));
                }
            }
            let hits: Vec<Gid> = table
                .iter()
                .filter(|g| {
                    Roce::of_type(&g.ty).is_some()
                        && g.addr == want
                        && !link_local(&g.addr)
                        && match (&route.netdev, &g.ndev) {
                            // A GID of another netdev (another VLAN over the port) is another path.
                            (Some(want_dev), Some(have_dev)) => want_dev == have_dev,
                            _ => true,
                        }
                })
                .cloned()
                .collect();
            if !hits.is_empty() {
                return choice(dev, port, &hits);
            }
        }
    }
    let on = route
        .netdev
        .as_ref()
        .map_or(String::new(), |n| format!(" on {n}"));
    let mut why =
        format!("no active port has a RoCE GID {want}{on} (the source address toward the peer)");
    if link_local(&want) {
        why.push_str("; that address is link-local, which RoCE v2 does not route");
    }
    if !skipped.is_empty() {
        why.push_str(&format!("; {}", skipped.join(", ")));
    }
    Err(why)
}

/// One rail of this node for `device = "all"`: an RDMA port, and the local address its pings
/// leave from (the control connection is bound to it, so the session's route, device and GID are
/// that rail's), or why the port cannot be pinged over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rail {
    pub device: String,
    pub port: u8,
    pub source: Result<IpAddr, String>,
}

impl Rail {
    /// The `device` label of the rail's rows: the device, with its port where it has several.
    pub fn label(&self, ports_of_device: usize) -> String {
        if ports_of_device > 1 {
            format!("{}/{}", self.device, self.port)
        } else {
            self.device.clone()
        }
    }
}

/// Every port of every RDMA device, each with the address to ping from over it: the first RoCE
/// GID (index order) of its own IP family (`v4`: the peer's) that is not link-local, as the
/// kernel lists its netdev's addresses. A port that is not active, InfiniBand, or without such a
/// GID (its netdev has no address of that family) is a rail with the reason, never left out.
pub fn rails(root: &str, v4: bool) -> Result<Vec<Rail>, String> {
    let have = entries(&Path::new(root).join("class/infiniband"));
    if have.is_empty() {
        return Err("RDMA unavailable on this host: no devices".into());
    }
    let family = if v4 { "IPv4" } else { "IPv6" };
    let mut out = Vec::new();
    for dev in &have {
        let mut ports: Vec<u8> =
            entries(&Path::new(root).join(format!("class/infiniband/{dev}/ports")))
                .iter()
                .filter_map(|p| p.parse().ok())
                .collect();
        ports.sort();
        if ports.is_empty() {
            out.push(Rail {
                device: dev.clone(),
                port: 1,
                source: Err(format!("{dev} has no ports in sysfs")),
            });
        }
        for port in ports {
            let dir = port_dir(root, dev, port);
            let state = read(&dir.join("state")).unwrap_or_else(|| "missing".into());
            let source = if !state.ends_with("ACTIVE") {
                Err(format!("{dev} port {port} is {state}"))
            } else if read(&dir.join("link_layer")).is_some_and(|l| l == "InfiniBand") {
                Err(format!(
                    "{dev} port {port} is InfiniBand: it has no IP address to bind (pin it with device)"
                ))
            } else {
                gids(&dir)
                    .iter()
                    .filter(|g| Roce::of_type(&g.ty).is_some() && !link_local(&g.addr))
                    .find_map(|g| match g.addr.to_ipv4_mapped() {
                        Some(a) if v4 => Some(IpAddr::V4(a)),
                        None if !v4 => Some(IpAddr::V6(g.addr)),
                        _ => None,
                    })
                    .ok_or_else(|| {
                        format!(
                            "{dev} port {port} has no RoCE GID of an {family} address (its netdev \
                             has none, or only link-local ones)"
                        )
                    })
            };
            out.push(Rail {
                device: dev.clone(),
                port,
                source,
            });
        }
    }
    Ok(out)
}

/// The choice of `found`, entries of one address on one port: the first of each version.
fn choice(dev: &str, port: u8, found: &[Gid]) -> Result<Choice, String> {
    let first = found
        .first()
        .ok_or_else(|| format!("{dev} port {port}: no GID"))?;
    let of = |v: Roce| {
        found
            .iter()
            .find(|g| Roce::of_type(&g.ty) == Some(v))
            .map(|g| Entry {
                index: g.index,
                ty: g.ty.clone(),
            })
    };
    let (v1, v2) = (of(Roce::V1), of(Roce::V2));
    if v1.is_none() && v2.is_none() {
        return Err(format!(
            "{dev} port {port} GID {} is of type \"{}\", not RoCE v1 or v2",
            first.index, first.ty
        ));
    }
    Ok(Choice {
        device: dev.to_string(),
        port,
        v1,
        v2,
        gid: first.text.clone(),
        netdev: first.ndev.clone(),
    })
}

/// Whether index `index` of the chosen port still holds the session's GID, as version `v`, on its
/// netdev: a GID table change (an IPv6 privacy address, an alias, a VLAN or a pod's interface
/// coming or going) rewrites other entries far more often than ours. Ok when ours is intact, else
/// what it holds now.
pub fn still_holds(root: &str, c: &Choice, index: u8, v: Roce) -> Result<(), String> {
    let dir = port_dir(root, &c.device, c.port);
    let want: Option<Ipv6Addr> = c.gid.parse().ok();
    let now = gid_at(&dir, index);
    let same = now.as_ref().is_some_and(|g| {
        Some(g.addr) == want && Roce::of_type(&g.ty) == Some(v) && g.ndev == c.netdev
    });
    if same {
        return Ok(());
    }
    Err(match now {
        None => format!("GID {index} is gone"),
        Some(g) => {
            let on = g.ndev.map_or(String::new(), |n| format!(" on {n}"));
            format!("GID {index} is now {} {}{on}", g.ty, g.addr)
        }
    })
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
