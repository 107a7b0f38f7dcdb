//! Fleet mode against the real Debian Prometheus: a TSDB backfilled by promtool with
//! counters growing at known rates in node_exporter's and rdma_exporter's names; rocetop's rates,
//! read through `[[prometheus]]` and the store's rate.rs, must equal them.

use crate::prom;
use crate::prom_skip;

use prom::{Fleet, STEP_S};
use prom_skip::prometheus;
use rocetop::collect::poll::poll_once;
use rocetop::collect::prometheus::PromTransport;
use rocetop::collect::source::fleet_source;
use rocetop::config::Config;
use rocetop::metrics::names;
use rocetop::metrics::query::{label_values, rate_sum};
use rocetop::metrics::{SeriesKey, Store};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

const NODES: usize = 200;

fn config(port: u16, extra: &str) -> Config {
    Config::from_str(
        &format!("[[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:{port}\"\n{extra}"),
        "test",
        None,
    )
    .expect("valid config")
}

/// A clock that starts at `t0` (ms) and moves one step per poll.
fn stepping_clock(t0: i64) -> (Arc<AtomicI64>, rocetop::collect::prometheus::Clock) {
    let now = Arc::new(AtomicI64::new(t0));
    let n = now.clone();
    (now, Arc::new(move || n.load(Ordering::SeqCst)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rates_from_a_backfilled_prometheus_equal_the_known_rates() {
    let Some(bins) = prometheus("prometheus_fleet::rates") else {
        return;
    };
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let start = (now_s - 3 * 3600) / STEP_S * STEP_S;
    let fleet = Fleet {
        nodes: NODES,
        start,
        faults: false,
    };
    let server = prom::start(&bins, &fleet);

    let cfg = config(server.port, "");
    let p = &cfg.prometheus[0];
    // Polls from minute 15 to past the reset at minute 20, 2 s after each step boundary.
    let t0 = (start + 15 * 60) * 1000 + 7_000;
    let (now, clock) = stepping_clock(t0);
    let transport = Arc::new(PromTransport::new(p, clock).expect("transport"));
    let mut store = Store::new(24 * 3600 * 1000, 4096);
    let src = fleet_source(p, &mut store, transport.clone());
    let mut ats = Vec::new();
    for k in 0..30 {
        now.store(t0 + k * STEP_S * 1000, Ordering::SeqCst);
        let c = poll_once(&src).await;
        assert_eq!(c.error, None, "poll {k}");
        ats.push(c.at);
        c.apply(&mut store);
        if k == 0 {
            assert!(
                c.parsed.notes.iter().any(|n| n.contains("refused")),
                "NaN refused: {:?}",
                c.parsed.notes
            );
            assert!(
                c.parsed.notes.iter().any(|n| n.contains("duplicate")),
                "{:?}",
                c.parsed.notes
            );
        }
    }
    // Evaluation times are step multiples, one step apart: each poll reads one new scrape.
    assert!(
        ats.windows(2).all(|w| w[1] - w[0] == STEP_S * 1000),
        "{ats:?}"
    );
    assert_eq!(ats[0] % (STEP_S * 1000), 0);

    // Every node appears, from labels alone, with the port stripped.
    let nodes = label_values(&store, &names::rdma_counter("np_cnp_sent"), "node");
    assert_eq!(nodes.len(), NODES, "{:?}", &nodes[..5.min(nodes.len())]);
    assert!(nodes.contains(&Fleet::node(7)));

    let cnp = names::rdma_counter("np_cnp_sent");
    for i in [4usize, 7, 57, 199] {
        for (d, dev) in ["mlx5_0", "mlx5_1"].iter().enumerate() {
            let node = Fleet::node(i);
            let r = rate_sum(&store, &cnp, &[("node", &node), ("device", dev)]);
            assert_eq!(
                r,
                Some(Fleet::cnp_rate(i, d) as f64),
                "CNP/s of {node} {dev}"
            );
        }
        let node = Fleet::node(i);
        let pause = rate_sum(
            &store,
            names::NIC_PFC_RX_PAUSE,
            &[("node", &node), ("priority", "3")],
        );
        assert_eq!(
            pause,
            Some(2.0 * Fleet::pause_rate(i) as f64),
            "rx pause/s of {node}, two netdevs"
        );
    }
    let ecn = rate_sum(
        &store,
        &names::rdma_counter("np_ecn_marked_roce_packets"),
        &[("node", "gpu0004"), ("device", "mlx5_1")],
    );
    assert_eq!(ecn, Some(Fleet::ecn_rate(4, 1) as f64));
    // Seconds of pause per second (the store keeps the NIC's µs and reads seconds).
    let frac = rate_sum(
        &store,
        names::NIC_PFC_RX_PAUSE_DURATION,
        &[("node", "gpu0004"), ("netdev", "ens1f0")],
    );
    assert_eq!(
        frac.map(|s| (s * 1e6).round()),
        Some(Fleet::pause_us_rate(4) as f64)
    );

    // NaN samples are refused: node 2's CNP-handled is missing, never 0.
    let handled = names::rdma_counter("rp_cnp_handled");
    assert_eq!(rate_sum(&store, &handled, &[("node", "gpu0002")]), None);
    assert!(rate_sum(&store, &handled, &[("node", "gpu0004")]).is_some());

    // The reset of node 0 / mlx5_0 gives no rate for its interval, and the right rate after.
    let key = SeriesKey::new(
        &cnp,
        &[
            ("device", "mlx5_0"),
            ("node", "gpu0000"),
            ("rdma_port", "1"),
        ],
    );
    let id = store.id(&key).expect("series of node 0");
    let reset_ms = fleet.reset_at() * 1000;
    let rates = store.rates(id, 0);
    let at_reset = rates
        .iter()
        .find(|(t, _)| *t >= reset_ms)
        .expect("an interval over the reset");
    assert_eq!(
        at_reset.1.value(),
        None,
        "no rate across a reset: {at_reset:?}"
    );
    let after: Vec<f64> = rates
        .iter()
        .filter(|(t, _)| *t > at_reset.0)
        .filter_map(|(_, r)| r.value())
        .collect();
    assert!(
        !after.is_empty() && after.iter().all(|r| *r == Fleet::cnp_rate(0, 0) as f64),
        "{after:?}"
    );

    // One detection query every 20 polls, then one query per profile (3 here) per poll.
    let q = transport.queries().await;
    assert_eq!(q, 2 + 30 * 3, "queries for 30 polls");

    // The tabs make one row per node the labels name (no node list in the config).
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let last = *ats.last().expect("polls");
    let app = rocetop::app::App::new(cfg.clone(), store, theme, last);
    let rows = rocetop::app::vm::overview::view(&app.ctx(rocetop::app::Tab::Overview)).rows;
    assert_eq!(rows.len(), NODES);
    assert!(rows.iter().any(|r| r.name == "gpu0199"));
    let ecn = rocetop::app::vm::congestion::view(&app.ctx(rocetop::app::Tab::Congestion)).rows;
    assert_eq!(ecn.len(), NODES * 2, "one row per node and device");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_profiles_says_what_to_enable_and_a_dead_one_says_so() {
    let Some(bins) = prometheus("prometheus_fleet::no_profiles") else {
        return;
    };
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let start = (now_s - 3 * 3600) / STEP_S * STEP_S;
    let server = prom::start(
        &bins,
        &Fleet {
            nodes: 2,
            start,
            faults: false,
        },
    );
    let cfg = config(server.port, "selector = '{job=\"none\"}'\n");
    let p = &cfg.prometheus[0];
    let (_now, clock) = stepping_clock((start + 600) * 1000);
    let mut store = Store::new(3_600_000, 100);
    let src = fleet_source(
        p,
        &mut store,
        Arc::new(PromTransport::new(p, clock).expect("t")),
    );
    let c = poll_once(&src).await;
    let e = c.error.expect("no profile is an error");
    assert!(
        e.contains("--collector.ethtool") && e.contains("rdma_exporter"),
        "{e}"
    );
    assert!(c.parsed.samples.is_empty());

    let port = server.port;
    drop(server);
    let cfg = config(port, "");
    let p = &cfg.prometheus[0];
    let (_now, clock) = stepping_clock((start + 600) * 1000);
    let src = fleet_source(
        p,
        &mut store,
        Arc::new(PromTransport::new(p, clock).expect("t")),
    );
    let c = poll_once(&src).await;
    let e = c.error.expect("down is an error");
    assert!(e.contains("refused"), "{e}");
}

/// History: the first poll brings the store's history window from `query_range` (one
/// query per profile), and a poll after a gap brings the steps it missed; the store's rates over
/// that history are the injected ones (a reset gives no rate), as if it had polled all along.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_poll_backfills_the_history_window_with_the_known_rates() {
    let Some(bins) = prometheus("prometheus_fleet::backfill") else {
        return;
    };
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let start = (now_s - 3 * 3600) / STEP_S * STEP_S;
    let fleet = Fleet {
        nodes: 20,
        start,
        faults: false,
    };
    let server = prom::start(&bins, &fleet);
    let cfg = config(server.port, "");
    let p = &cfg.prometheus[0];
    // The first poll at minute 25 (evaluated at its step boundary): 10 minutes of history reach
    // back over the reset at minute 20.
    const WINDOW_S: i64 = 600;
    let t0 = (start + 25 * 60) * 1000 + 7_000;
    let (now, clock) = stepping_clock(t0);
    let transport = Arc::new(
        PromTransport::new(p, clock)
            .expect("transport")
            .with_history(std::time::Duration::from_secs(WINDOW_S as u64)),
    );
    let mut store = Store::new(2 * WINDOW_S * 1000, 4096);
    let src = fleet_source(p, &mut store, transport.clone());
    let c = poll_once(&src).await;
    assert_eq!(c.error, None);
    let steps = (WINDOW_S / STEP_S) as usize;
    let times = &c.history.times;
    assert_eq!(times.len(), steps, "one step each before the poll's");
    assert!(
        times.windows(2).all(|w| w[1] - w[0] == STEP_S * 1000)
            && times.last() == Some(&(c.at - STEP_S * 1000)),
        "steps up to the poll's: {times:?}"
    );
    // Every node's two CNP series once, from whichever exporter (node 1's duplicate kept once).
    let cnp_series = c
        .history
        .series
        .iter()
        .filter(|(k, _)| k.name == names::rdma_counter("np_cnp_sent"))
        .count();
    assert_eq!(cnp_series, fleet.nodes * 2);
    c.apply(&mut store);
    // Detection, then one instant and one range query per profile (3 here).
    assert_eq!(transport.queries().await, 1 + 3 + 3);

    let cnp = names::rdma_counter("np_cnp_sent");
    let series = |store: &Store, node: &str, dev: &str| {
        let key = SeriesKey::new(&cnp, &[("device", dev), ("node", node), ("rdma_port", "1")]);
        store.id(&key).expect("series")
    };
    let reset_ms = fleet.reset_at() * 1000;
    for i in [0usize, 1, 7, 12, 19] {
        for (d, dev) in ["mlx5_0", "mlx5_1"].iter().enumerate() {
            let id = series(&store, &Fleet::node(i), dev);
            let pts: Vec<i64> = store
                .get(id)
                .expect("series")
                .points(&store)
                .map(|p| p.0)
                .collect();
            assert_eq!(pts.len(), steps + 1, "{i} {dev}: history and the poll");
            assert_eq!(
                pts[0],
                c.at - WINDOW_S * 1000,
                "{i} {dev}: the window's start"
            );
            let rates = store.rates(id, 0);
            assert_eq!(rates.len(), steps, "{i} {dev}: a rate per interval");
            for (t, r) in &rates {
                let want = if i == 0 && d == 0 && *t > reset_ms - STEP_S * 1000 && *t <= reset_ms {
                    None
                } else {
                    Some(Fleet::cnp_rate(i, d) as f64)
                };
                assert_eq!(r.value(), want, "{i} {dev} at {t} (reset at {reset_ms})");
            }
        }
    }
    let pause = rate_sum(
        &store,
        names::NIC_PFC_RX_PAUSE,
        &[("node", "gpu0012"), ("priority", "3")],
    );
    assert_eq!(pause, Some(2.0 * Fleet::pause_rate(12) as f64));

    // A gap of 4 steps (polls that did not happen): the next poll brings exactly those.
    now.store(t0 + 5 * STEP_S * 1000, Ordering::SeqCst);
    let c2 = poll_once(&src).await;
    assert_eq!(c2.error, None);
    assert_eq!(
        c2.history.times,
        (1..5).map(|k| c.at + k * STEP_S * 1000).collect::<Vec<_>>()
    );
    c2.apply(&mut store);
    let id = series(&store, &Fleet::node(7), "mlx5_1");
    let rates: Vec<_> = store
        .rates(id, c.at)
        .into_iter()
        .filter(|(t, _)| *t > c.at)
        .collect();
    assert_eq!(rates.len(), 5, "four filled steps and the poll: {rates:?}");
    assert!(
        rates
            .iter()
            .all(|(_, r)| r.value() == Some(Fleet::cnp_rate(7, 1) as f64)),
        "{rates:?}"
    );
    // The next poll in step brings no history and no extra query.
    now.store(t0 + 6 * STEP_S * 1000, Ordering::SeqCst);
    let q = transport.queries().await;
    let c3 = poll_once(&src).await;
    assert!(c3.history.is_empty() && c3.history.series.is_empty());
    assert_eq!(transport.queries().await - q, 3);
}
