//! Switch collectors and their pure parsers (NX-OS, SONiC, Arista EOS).

pub(crate) mod common;
pub mod eos;
pub mod eos_qos;
pub(crate) mod nxapi;
pub mod nxos;
pub mod nxos_qos;
pub mod pfcwd;
pub mod rows;
pub mod sonic;
pub mod sonic_qos;
pub mod split;

/// Normalise a port name as switches abbreviate it: `Eth1/1/1`, `ethernet1/1/1`, `Et1/1` →
/// `Ethernet1/1/1`; `Po12` → `port-channel12`; internal fabric ports (`ii1/1/1`) stay as they are.
pub fn normalize_port(raw: &str) -> String {
    let s = raw.trim();
    let split = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
    let (prefix, rest) = s.split_at(split);
    // `eth0` without a slot is a Linux/SONiC management interface, not `Ethernet0`.
    if prefix == "eth" && !rest.contains('/') {
        return s.to_string();
    }
    let full = match prefix.to_ascii_lowercase().as_str() {
        "eth" | "ethernet" | "et" | "e" => "Ethernet",
        "po" | "port-channel" | "portchannel" => "port-channel",
        "veth" | "vethernet" => "Vethernet",
        "ii" => "ii",
        "mgmt" => "mgmt",
        _ => return s.to_string(),
    };
    format!("{full}{rest}")
}

/// Edge ports face hosts; internal ports (`ii…`) are the switch's own fabric links.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum PortClass {
    Edge,
    Internal,
}

pub fn port_class(port: &str) -> PortClass {
    if port.starts_with("ii") {
        PortClass::Internal
    } else {
        PortClass::Edge
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_are_normalised() {
        for (raw, want) in [
            ("Eth1/1/1", "Ethernet1/1/1"),
            ("ethernet1/1/1", "Ethernet1/1/1"),
            ("Ethernet2/1", "Ethernet2/1"),
            ("Et3/1/1", "Ethernet3/1/1"),
            ("Po12", "port-channel12"),
            ("ii1/1/6", "ii1/1/6"),
            ("Gi1/1", "Gi1/1"),
            ("eth0", "eth0"),
            ("Ethernet0", "Ethernet0"),
        ] {
            assert_eq!(normalize_port(raw), want);
        }
        assert_eq!(port_class("ii1/1/1"), PortClass::Internal);
        assert_eq!(port_class("Ethernet1/1/1"), PortClass::Edge);
    }
}
