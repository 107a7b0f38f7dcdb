//! The observer's readings against what was put in the store.

use super::*;
use crate::app::pairing::Links;
use crate::config::Config;

#[test]
fn ports_pfc_rates_are_the_lossless_priority_rate_by_key_gives() {
    use crate::metrics::names::{SW_PFC_RX, SW_PFC_TX};
    use crate::metrics::{Parsed, Sample, Store, query};
    let mut store = Store::new(60_000, 100);
    let leaf = store.add_source("leaf", 1000);
    // Ports out of order, a port with two priorities (the lossless one is its rate), one port
    // only sent on.
    let poll = |n: u64| Parsed {
        samples: [
            (SW_PFC_RX, "Eth1/9", "3"),
            (SW_PFC_RX, "Eth1/10", "3"),
            (SW_PFC_RX, "Eth1/10", "4"),
            (SW_PFC_RX, "Eth1/2", "3"),
            (SW_PFC_TX, "Eth1/2", "3"),
            (SW_PFC_TX, "Eth1/30", "3"),
        ]
        .iter()
        .enumerate()
        .map(|(i, (name, port, prio))| {
            let labels = [("switch", "leaf"), ("port", *port), ("priority", *prio)];
            Sample::counter(*name, &labels, n * (i as u64 + 1))
        })
        .collect(),
        ..Default::default()
    };
    for s in 1..=3 {
        store.ingest(leaf, s * 1000, &poll(s as u64 * 10));
    }
    let ids = crate::app::alerts::EvalIdsCache::of(&store);
    let ports = port_pfc_in(&store, &ids);
    // Ascending by key, each port once, each direction as its own map of the lossless priority
    // gives it.
    assert!(ports.windows(2).all(|w| w[0].key < w[1].key), "{ports:?}");
    for (dir, name) in [0, 1].into_iter().zip([SW_PFC_RX, SW_PFC_TX]) {
        let lossless = [("priority", crate::app::alerts::ROCE_PRIORITY)];
        let want = query::rate_by_key(&store, name, &lossless, &["switch", "port"]);
        let got: Vec<_> = ports
            .iter()
            .filter_map(|p| Some((p.key.map(String::from), [p.rx, p.tx][dir]?.rate)))
            .collect();
        let want: Vec<_> = want
            .iter()
            .map(|(k, a)| ([k[0].to_string(), k[1].to_string()], a.rate))
            .collect();
        assert_eq!(got, want, "{name}");
    }
    assert_eq!(
        ports.len(),
        4,
        "Eth1/10, Eth1/2 (both), Eth1/30 (sent only), Eth1/9"
    );
    let o = observe(&store, 3000);
    let ports: Vec<_> = o.pfc.iter().map(|p| (&*p.port, p.rx, p.tx)).collect();
    // rx ports only, in order, each with its own sent rate where it has one (else 0).
    assert_eq!(
        ports,
        [
            ("Eth1/10", 20.0, 0.0),
            ("Eth1/2", 40.0, 50.0),
            ("Eth1/9", 10.0, 0.0)
        ]
    );
}

/// One PFC rate per port and direction, whatever shape the switch counts it in: the demo
/// simulator's own counters (the pauses it injects, edge and internal ports) rendered as each
/// switch OS prints them, parsed by the real parsers, must read back at the simulator's rates,
/// in the episode observer and in the alerts' per-port rule alike. NX-OS counts an edge port's
/// pauses per class and as the port total; summing both doubles them.
#[test]
fn one_pfc_rate_per_port_is_the_simulators_on_every_switch_os() {
    use crate::app::alerts::Alerts;
    use crate::collect::demo::{render, sim::Sim};
    use crate::metrics::Store;
    use crate::parse::{Ctx, ParseKind, parse};
    type Render = fn(&crate::collect::demo::sim::SwitchSim) -> String;
    let oses: [(&str, &[(ParseKind, Render)]); 3] = [
        (
            "nx-os (per class and total)",
            &[
                (ParseKind::NxosQueuing, render::nxos_queuing),
                (ParseKind::NxosPfc, render::nxos_pfc),
            ],
        ),
        (
            "sonic (per class)",
            &[(ParseKind::SonicPfc, render::sonic_pfc)],
        ),
        ("eos (total)", &[(ParseKind::EosPfc, render::eos_pfc)]),
    ];
    let mut cfg = Config::reference();
    cfg.alerts.port_pfc_per_second = 0.0;
    let links = Links::from_config(&cfg);
    for (os, kinds) in oses {
        let mut sim = Sim::new(&cfg);
        let mut store = Store::new(600_000, 100);
        let sw_name = sim.switches[0].name.clone();
        let src = store.add_source(&sw_name, 1000);
        let ctx = Ctx::named(&sw_name);
        // Into the first injected storm, so edge and internal ports both pause.
        let storm = sim.injected(60_000)[0].start_ms + 5000;
        let mut before = Vec::new();
        for t in [storm - 1000, storm] {
            sim.advance_to(t);
            let sw = &sim.switches[0];
            before.push(
                (sw.ports.iter())
                    .map(|p| (p.name.clone(), p.pfc_rx, p.pfc_tx))
                    .collect::<Vec<_>>(),
            );
            let mut parsed = crate::metrics::Parsed::default();
            for (kind, render) in kinds {
                let p = parse(*kind, &render(sw), &ctx);
                assert_eq!(p.unknown_lines, 0, "{os}: {:?}", p.unknown_examples);
                parsed.samples.extend(p.samples);
            }
            store.ingest(src, t, &parsed);
        }
        // The simulator's truth: counters over the last second.
        let truth: Vec<(String, f64, f64)> = before[0]
            .iter()
            .zip(&before[1])
            .map(|((n, rx0, tx0), (_, rx1, tx1))| {
                (n.clone(), (rx1 - rx0) as f64, (tx1 - tx0) as f64)
            })
            .collect();
        assert!(
            truth
                .iter()
                .any(|(n, rx, _)| !n.starts_with("ii") && *rx > 0.0)
                && truth
                    .iter()
                    .any(|(n, rx, _)| n.starts_with("ii") && *rx > 0.0),
            "{os}: edge and internal ports pause: {truth:?}"
        );
        let o = observe(&store, storm);
        let mut alerts = Alerts::default();
        alerts.evaluate(&store, &cfg, &links, storm);
        for (port, rx, tx) in &truth {
            let seen = o.pfc.iter().find(|p| p.port == port.as_str());
            let seen = seen.map(|p| (p.rx, p.tx));
            assert_eq!(seen, Some((*rx, *tx)), "{os} {port}: the observer's rates");
            let id = format!("pfc [\"{sw_name}\", \"{port}\"]");
            let alert = alerts.active().into_iter().find(|a| a.id == id);
            let value = alert.and_then(|a| a.value);
            if rx + tx > 0.0 {
                assert_eq!(value, Some(rx + tx), "{os} {port}: the alert's rate");
            }
        }
    }
}
