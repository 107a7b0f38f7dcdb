//! Every exported and displayed number agrees with what the demo simulation injected.
//!
//! Library path: the simulation's counters go through the real vendor-format renderers and the
//! real parsers into a store; its truth (µs paused, PFC frames, the step time it logged) is read
//! straight from the simulation. Binary path: `rocetop snapshot --demo --format prom` is checked
//! against what the demo injects by construction (each received pause frame pauses 180 µs ± 20%,
//! the RDMA RTT is ~14 µs at rest, a step takes 156–380 ms).
//! Both fail if pause time is exported in µs under a `_seconds` name.

use rocetop::collect::demo::{render, sim::Sim};
use rocetop::config::Config;
use rocetop::metrics::human;
use rocetop::metrics::names::*;
use rocetop::metrics::{Store, Ts};
use rocetop::output::{json, prom, table};
use rocetop::parse::{Ctx, ParseKind, parse};

const T0: Ts = 1_700_000_000_000;

/// Value of the prom line `name{labels...}` whose labels include every one of `want`.
fn prom_value(text: &str, name: &str, want: &[(&str, &str)]) -> Option<f64> {
    text.lines().find_map(|l| {
        let rest = l.strip_prefix(name)?;
        let (labels, value) = rest.rsplit_once(' ')?;
        if !(labels.is_empty() || labels.starts_with('{')) {
            return None;
        }
        want.iter()
            .all(|(k, v)| labels.contains(&format!("{k}=\"{v}\"")))
            .then(|| value.parse().ok())?
    })
}

fn close(got: f64, want: f64, rel: f64, what: &str) {
    assert!(
        (got - want).abs() <= rel * want.abs().max(1e-12),
        "{what}: got {got}, truth {want}"
    );
}

/// Poll every node's sysfs and ethtool, the switch's PFC counters and the training log at
/// simulated `ms`.
fn poll(sim: &mut Sim, store: &mut Store, ms: i64) {
    sim.advance_to(ms);
    let at = T0 + ms;
    for n in &sim.nodes {
        let src = store
            .source_by_name(&n.name)
            .map(|(id, _)| id)
            .unwrap_or_else(|| store.add_source(&n.name, 1000));
        let ctx = Ctx {
            name: n.name.clone(),
            log: String::new(),
        };
        let mut parsed = parse(ParseKind::HwCounters, &render::sysfs_dump(n, "/sys"), &ctx);
        for nd in &n.netdevs {
            let text = render::ethtool(n, &nd.name).expect("demo ethtool");
            parsed.merge(rocetop::parse::host::ethtool::parse(
                &text, &n.name, &nd.name,
            ));
        }
        store.ingest(src, at, &parsed);
    }
    for sw in &sim.switches {
        let src = store
            .source_by_name(&sw.name)
            .map(|(id, _)| id)
            .unwrap_or_else(|| store.add_source(&sw.name, 1000));
        let ctx = Ctx {
            name: sw.name.clone(),
            log: String::new(),
        };
        store.ingest(
            src,
            at,
            &parse(ParseKind::NxosPfc, &render::nxos_pfc(sw), &ctx),
        );
    }
    for log in &sim.logs {
        let name = format!("log {}", log.node);
        let src = store
            .source_by_name(&name)
            .map(|(id, _)| id)
            .unwrap_or_else(|| store.add_source(&name, 1000));
        let text: String = log.lines.iter().map(|l| format!("{l}\n")).collect();
        let ctx = Ctx {
            name: log.node.clone(),
            log: log.path.clone(),
        };
        store.ingest(src, at, &parse(ParseKind::TrainingLog, &text, &ctx));
    }
}

#[test]
fn exports_and_cells_agree_with_the_simulations_truth() {
    let cfg = Config::reference();
    let mut sim = Sim::new(&cfg);
    let mut store = Store::new(600_000, 1000);
    // From 24 s to about 25 s: inside the first congestion episode, so pauses are heavy. The
    // second poll waits for an iteration the log prints (every 10th), so the step time the
    // simulation injected is the one its log line carries.
    poll(&mut sim, &mut store, 24_000);
    let before: Vec<(String, String, u64, u64)> = sim
        .nodes
        .iter()
        .flat_map(|n| {
            n.netdevs
                .iter()
                .map(|d| (n.name.clone(), d.name.clone(), d.rx_pause_us, d.rx_pause))
        })
        .collect();
    let pfc_before: Vec<u64> = sim.switches[0].ports.iter().map(|p| p.pfc_rx).collect();
    let mut t2 = 25_000;
    sim.advance_to(t2);
    while sim.iteration % 10 != 0 {
        t2 += 100;
        sim.advance_to(t2);
    }
    poll(&mut sim, &mut store, t2);
    let dt = (t2 - 24_000) as f64 / 1e3;

    let prom_text = prom::render(&store, true, false);
    let json_text: serde_json::Value =
        serde_json::from_str(&json::render(&store)).expect("snapshot json");
    let table_text = table::render(&store, table::Silent::NoAnswer);
    let mut checked = 0;
    for (node, netdev, us0, _) in &before {
        let nd = sim
            .nodes
            .iter()
            .find(|n| &n.name == node)
            .and_then(|n| n.netdevs.iter().find(|d| &d.name == netdev))
            .expect("netdev");
        let truth = (nd.rx_pause_us - us0) as f64 / 1e6 / dt; // seconds paused per second
        assert!(truth > 0.0 && truth < 1.0, "{node}: a fraction to check");
        let l = [
            ("node", node.as_str()),
            ("netdev", netdev.as_str()),
            ("priority", "3"),
        ];
        let rate = prom_value(
            &prom_text,
            "rocetop_nic_pfc_rx_pause_duration_seconds_per_second",
            &l,
        )
        .expect("pause rate exported");
        close(rate, truth, 1e-9, "prom pause fraction");
        let total = prom_value(
            &prom_text,
            "rocetop_nic_pfc_rx_pause_duration_seconds_total",
            &l,
        )
        .expect("pause total exported");
        close(
            total,
            nd.rx_pause_us as f64 / 1e6,
            1e-9,
            "prom pause seconds",
        );
        let js = json_text["series"]
            .as_array()
            .expect("series")
            .iter()
            .find(|s| {
                s["name"] == NIC_PFC_RX_PAUSE_DURATION
                    && s["labels"]["node"] == node.as_str()
                    && s["labels"]["netdev"] == netdev.as_str()
            })
            .expect("json series");
        close(
            js["rate_per_second"].as_f64().expect("rate"),
            truth,
            1e-9,
            "json pause fraction",
        );
        close(
            js["value"].as_f64().expect("value"),
            nd.rx_pause_us as f64 / 1e6,
            1e-9,
            "json seconds",
        );
        // The table's NODES row shows the node's worst netdev as a percentage, with the one rule.
        let worst = before
            .iter()
            .filter(|(n, ..)| n == node)
            .map(|(n, d, u, _)| {
                let x = sim
                    .nodes
                    .iter()
                    .find(|s| &s.name == n)
                    .and_then(|s| s.netdevs.iter().find(|z| &z.name == d))
                    .expect("nd");
                (x.rx_pause_us - u) as f64 / 1e6 / dt
            })
            .fold(0.0, f64::max);
        let rows: Vec<&str> = table_text
            .lines()
            .filter(|line| line.starts_with(&format!("{node:<14}")))
            .collect();
        assert!(!rows.is_empty(), "{node} has a NODES row:\n{table_text}");
        for row in rows {
            assert!(
                row.trim_end()
                    .ends_with(&format!(" {}", human::percent(Some(worst)))),
                "{row}: pause% truth {worst}"
            );
        }
        checked += 1;
    }
    assert_eq!(
        checked,
        before.len(),
        "every node's pause% cell:\n{table_text}"
    );

    // Switch PFC frames/s: exported and formatted.
    let sw = &sim.switches[0];
    for (p, rx0) in sw.ports.iter().zip(&pfc_before) {
        let truth = (p.pfc_rx - rx0) as f64 / dt;
        let l = [("switch", sw.name.as_str()), ("port", p.name.as_str())];
        let got = prom_value(&prom_text, "rocetop_switch_pfc_rx_frames_per_second", &l)
            .unwrap_or_else(|| panic!("PFC rate of {}", p.name));
        close(got, truth, 1e-9, "PFC rx frames/s");
        let row = table_text
            .lines()
            .find(|x| x.starts_with(&format!("{:<14} {:<16} ", sw.name, p.name)))
            .unwrap_or_else(|| panic!("no table row for {}:\n{table_text}", p.name));
        assert!(
            row.split_whitespace().nth(2) == Some(human::num(Some(truth)).as_str()),
            "{row} vs {truth}"
        );
    }

    // Step time: the simulation logged it (0.1 ms resolution); exported in seconds, shown in ms.
    let step_truth = sim.last_step_ms / 1e3;
    let step = prom_value(&prom_text, TRAIN_STEP_SECONDS, &[]).expect("step exported");
    close(step, step_truth, 1e-3, "step seconds");
    let shown = human::duration(Some(step));
    assert!(shown.ends_with(" ms"), "{shown}");
    assert!(
        table_text.contains(&format!("step {shown}")),
        "{shown} in\n{table_text}"
    );
}

#[test]
fn the_binary_exports_seconds_and_fractions() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["snapshot", "--demo", "--format", "prom", "--interval", "1s"])
        .output()
        .expect("run snapshot");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut frames_seen = 0;
    for n in 1..=8 {
        let node = format!("ubunturdma{n}");
        let l = [("node", node.as_str()), ("priority", "3")];
        let frac = prom_value(
            &text,
            "rocetop_nic_pfc_rx_pause_duration_seconds_per_second",
            &l,
        )
        .expect("pause fraction");
        assert!(
            (0.0..=1.0).contains(&frac),
            "{node}: paused fraction {frac}"
        );
        let frames = prom_value(&text, "rocetop_nic_pfc_rx_pause_frames_per_second", &l)
            .expect("pause frames/s");
        if frames > 0.0 {
            frames_seen += 1;
            // The demo pauses 180 µs × (0.8..1.2) per received frame.
            let per_frame = frac / frames;
            assert!(
                (144e-6..=216e-6).contains(&per_frame),
                "{node}: {per_frame} s paused per frame"
            );
        }
    }
    assert!(frames_seen > 0, "the demo sends pause frames every burst");
    let rtt = prom_value(
        &text,
        PING_RTT_SECONDS,
        &[("transport", "rdma"), ("quantile", "0.5")],
    )
    .expect("RDMA RTT p50");
    assert!(
        (10e-6..=20e-6).contains(&rtt),
        "RDMA RTT p50 {rtt} s (demo: ~14 µs at rest)"
    );
    let step = prom_value(&text, TRAIN_STEP_SECONDS, &[]).expect("step");
    assert!((0.15..=0.40).contains(&step), "step {step} s");
}
