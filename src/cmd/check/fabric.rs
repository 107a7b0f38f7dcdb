//! What the fabric graph says of the cabling and the config: LLDP neighbours no source polls,
//! switch ports two neighbours claim, `[[link]]`s the switches' LLDP contradicts, and nodes with
//! two NICs on one switch. Each finding is one sentence; the section heads them with the graph's
//! size.

use crate::app::fabric::{End, Fabric, Kind, Via};
use crate::config::Config;
use crate::metrics::Store;

pub struct Report {
    /// `Fabric graph: 72 links (8 switch-switch); consistent`.
    pub head: String,
    pub findings: Vec<String>,
}

fn end(e: &End) -> String {
    if e.port.is_empty() {
        e.device.name.clone()
    } else {
        format!("{} {}", e.device.name, e.port)
    }
}

pub fn of(cfg: &Config, store: &Store) -> Report {
    let links = crate::app::pairing::Links::of(cfg, store);
    let f = Fabric::of(cfg, store, &links);
    findings(&f, cfg.switches.len())
}

/// The findings of a graph (`switches`: how many the config polls).
pub fn findings(f: &Fabric, switches: usize) -> Report {
    let mut out = Vec::new();
    for l in f.links.iter().filter(|l| l.via == Via::Lldp) {
        let (near, far) = match (l.a.device.kind, l.b.device.kind) {
            (Kind::Unpolled, _) => (&l.b, &l.a),
            (_, Kind::Unpolled) => (&l.a, &l.b),
            _ => continue,
        };
        out.push(format!(
            "{}: LLDP names {} as its neighbour, which no [[switch]] or node of the config is: \
             its pause counters are not read, so a pause tree through it stops there",
            end(near),
            end(far)
        ));
    }
    for c in &f.conflicts {
        let by: Vec<String> = c.claims.iter().map(end).collect();
        out.push(format!(
            "{} is claimed by {}: the switches' LLDP answers disagree (a moved cable, or a stale \
             LLDP entry); its link is left out of the pause tree",
            end(&c.port),
            by.join(" and ")
        ));
    }
    for c in &f.contradicted {
        out.push(format!(
            "{}: [[link]] says {}, its LLDP says {}: the config is used; fix the cabling or the \
             [[link]]",
            end(&c.port),
            end(&c.config),
            end(&c.lldp)
        ));
    }
    for d in f.doubled() {
        out.push(format!(
            "{}: {} are all on {}: not rail-cabled, one switch failing takes every NIC of it",
            d.host,
            d.netdevs.join(" and "),
            d.switch
        ));
    }
    out.sort();
    out.dedup();
    let isl = f.switch_links().count();
    let verdict = match out.len() {
        0 => "consistent".to_string(),
        n => format!("{n} problem(s)"),
    };
    Report {
        head: format!(
            "Fabric graph: {} switch(es), {} links ({isl} switch-switch); {verdict}",
            switches,
            f.links.len()
        ),
        findings: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::fabric::{Device, Link};

    fn sw(name: &str, port: &str) -> End {
        End::new(Device::switch(name), port)
    }

    fn link(a: End, b: End, via: Via) -> Link {
        Link { a, b, via }
    }

    /// A node's NIC cabled to a switch port.
    fn nic(host: &str, netdev: &str, switch: &str, port: &str) -> Link {
        link(
            End::new(Device::host(host), netdev),
            sw(switch, port),
            Via::Pairing,
        )
    }

    /// Each kind of trouble gives one sentence naming the port and what is wrong; a clean graph
    /// gives none.
    #[test]
    fn each_trouble_is_one_sentence_and_a_clean_graph_none() {
        let clean = Fabric::from_links(vec![
            link(sw("leaf1", "E49"), sw("spine1", "E1"), Via::Lldp),
            nic("gpu1", "ens1", "leaf1", "E1"),
            nic("gpu1", "ens2", "leaf2", "E1"),
        ]);
        let r = findings(&clean, 3);
        assert_eq!(r.findings, Vec::<String>::new());
        assert!(r.head.ends_with("consistent"), "{}", r.head);
        assert!(r.head.contains("3 links (1 switch-switch)"), "{}", r.head);

        let unpolled = End::new(
            Device {
                kind: Kind::Unpolled,
                name: "core-x".into(),
            },
            "Et1",
        );
        let messy = Fabric::from_links(vec![
            link(sw("leaf1", "E52"), unpolled, Via::Lldp),
            nic("gpu1", "ens1", "leaf1", "E1"),
            nic("gpu1", "ens2", "leaf1", "E2"),
        ]);
        let r = findings(&messy, 1);
        assert_eq!(r.findings.len(), 2, "{:#?}", r.findings);
        assert!(r.head.ends_with("2 problem(s)"), "{}", r.head);
        assert!(
            r.findings
                .iter()
                .any(|f| f.starts_with("leaf1 E52: LLDP names core-x Et1")),
            "{:#?}",
            r.findings
        );
        assert!(
            r.findings
                .iter()
                .any(|f| f.starts_with("gpu1: ens1 and ens2 are all on leaf1")),
            "{:#?}",
            r.findings
        );
    }
}

/// `check` on the fabric demo: six switches, their LLDP and the pairing make a consistent graph;
/// a `[[link]]` that LLDP contradicts is named with both words and counted as a problem.
#[cfg(test)]
mod on_the_demo {
    use crate::collect::demo::fabric::Fabric as Demo;
    use crate::config::Config;

    #[tokio::test]
    async fn the_fabric_demo_checks_out_and_a_wrong_link_is_named() {
        let text = Demo::builtin().config_text(1);
        let parse = |t: &str| {
            let mut c = Config::from_str(t, "fabric", None).expect("valid");
            c.simulation.scenario = crate::config::Scenario::Fabric;
            c
        };
        let cfg = parse(&text);
        let r = crate::cmd::check::run(&cfg).await;
        assert!(
            r.text.contains("Fabric graph: 6 switch(es), ")
                && r.text.contains("(8 switch-switch); consistent"),
            "{}",
            r.text
        );
        let wrong =
            format!("{text}\n[[link]]\na = \"leaf1:Ethernet1/49\"\nb = \"spine2:Ethernet1\"\n");
        let cfg = parse(&wrong);
        let r = crate::cmd::check::run(&cfg).await;
        let line = (r.text.lines())
            .find(|l| l.contains("[[link]] says"))
            .unwrap_or_else(|| panic!("{}", r.text));
        assert!(
            line.contains(
                "leaf1 Ethernet1/49: [[link]] says spine2 Ethernet1, its LLDP says spine1 "
            ),
            "{line}"
        );
        assert!(r.problems >= 1);
    }
}
