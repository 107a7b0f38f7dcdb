use super::*;
use crate::collect::source::{switch_probes, switch_topology_probes};
use crate::metrics::names::*;
use crate::parse::{Ctx, parse};

/// One leaf of each OS, sharing port names, a node on each.
pub(crate) const THREE_LEAVES: &str = r#"
demo = true
[[switch]]
name = "nx1"
host = "127.0.0.1"
os = "nxos"
ports = ["Ethernet1/1/1-2", "ii1/1/1-2"]
[[switch]]
name = "sonic1"
host = "127.0.0.1"
os = "sonic"
ports = ["Ethernet1/1/1-2", "Ethernet8"]
[[switch]]
name = "eos1"
host = "127.0.0.1"
os = "eos"
ports = ["Ethernet1/1/1-2"]
[[node]]
name = "a"
host = "127.0.0.1"
devices = ["mlx5_0"]
netdevs = ["ens1"]
switch_port = "nx1:Ethernet1/1/1"
[[node]]
name = "b"
host = "127.0.0.1"
devices = ["mlx5_0"]
netdevs = ["ens1"]
switch_port = "sonic1:Ethernet1/1/1"
[[node]]
name = "c"
host = "127.0.0.1"
devices = ["mlx5_0"]
netdevs = ["ens1"]
switch_port = "eos1:Ethernet1/1/2"
"#;

/// Every command a switch of each OS is sent, answered in that OS's format and read by its real
/// parser with no line left over; a command the demo does not simulate is a failed request, never
/// an answer that counts the switch up with nothing read.
#[test]
fn every_switch_os_is_answered_in_its_own_format() {
    let cfg = Config::from_str(THREE_LEAVES, "t.toml", None).expect("config");
    let mut sim = Sim::new(&cfg);
    // Into the first episode's peak, so drops and PFC are counted too.
    sim.advance_to(30_000);
    for sw in &cfg.switches {
        let mut answered = Vec::new();
        let mut samples = Vec::new();
        for p in switch_probes(sw)
            .into_iter()
            .chain(switch_topology_probes(sw))
        {
            let Request::Cli(cmd) = &p.request else {
                continue;
            };
            let who = Who::Switch(sw.name.clone());
            match answer(&sim, &who, &p.request) {
                Ok(text) => {
                    let parsed = parse(p.kind, &text, &Ctx::named(&sw.name));
                    assert_eq!(
                        parsed.unknown_lines, 0,
                        "{} {cmd}: {:?}\n{text}",
                        sw.name, parsed.unknown_examples
                    );
                    assert!(
                        !parsed.samples.is_empty(),
                        "{} {cmd}: nothing read",
                        sw.name
                    );
                    samples.extend(parsed.samples);
                    answered.push(p.kind);
                }
                Err(e) => panic!("{} {cmd}: {e}", sw.name),
            }
        }
        // The poll's first request (what counts the switch up) is always answered.
        assert_eq!(
            answered.first().copied(),
            switch_probes(sw).first().map(|p| p.kind)
        );
        let has = |name: &str| samples.iter().any(|s| s.key.name.as_str() == name);
        for m in [
            SW_PFC_RX,
            SW_PFC_TX,
            SW_QUEUE_TX_PACKETS,
            LINK_NEIGHBOR_INFO,
        ] {
            assert!(has(m), "{}: no {m}", sw.name);
        }
        let neighbour = samples
            .iter()
            .filter(|s| s.key.name.as_str() == LINK_NEIGHBOR_INFO)
            .map(|s| s.key.label("node").unwrap_or_default().to_string())
            .collect::<Vec<_>>();
        let want = match sw.name.as_str() {
            "nx1" => "a",
            "sonic1" => "b",
            _ => "c",
        };
        assert_eq!(neighbour, [want], "{}: its own node only", sw.name);
    }
    let nx = sim.switches.iter().find(|s| s.name == "nx1").expect("nx1");
    assert!(switch_answer(&sim, nx, "show version").is_none());
}
