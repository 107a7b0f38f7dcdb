//! Fleet mode over dcgm-exporter: the real Debian Prometheus scrapes two static `/metrics` texts
//! on loopback (127.0.0.1 and 127.0.0.2, one node each) in dcgm-exporter's real output format
//! (tests/fixtures/gpu/dcgm-exporter_*.metrics: gpu-operator's exporter on an NVIDIA L4), and
//! rocetop's `[[prometheus]]` source reads the GPU series back as the node dump names them
//! (`rocetop_gpu_*{node,gpu}`), so the Overview's GPU columns read every node alike.

use crate::prom;
use crate::prom_skip;

use prom_skip::prometheus;
use rocetop::collect::poll::poll_once;
use rocetop::metrics::names;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

const FIXTURE: &str = include_str!(
    "../fixtures/gpu/dcgm-exporter_1gpu-l4_driver-580.105.08_gpu-operator-e2e-log.metrics"
);

/// Serve `body` as `/metrics` on `ip`, on a free port, until the test process ends.
fn serve(ip: &str, body: String) -> u16 {
    let l = TcpListener::bind((ip, 0)).expect("bind loopback");
    let port = l.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for conn in l.incoming() {
            let Ok(mut c) = conn else { continue };
            let mut req = [0u8; 4096];
            let _ = c.read(&mut req);
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = c.write_all(head.as_bytes());
            let _ = c.write_all(body.as_bytes());
        }
    });
    port
}

/// The second node: the same exporter text with other values, and the XID series dcgm-exporter
/// adds when `DCGM_FI_DEV_XID_ERRORS` is in its counters file (its default one has it).
fn busy_node() -> String {
    let labels = FIXTURE
        .lines()
        .find_map(|l| l.strip_prefix("DCGM_FI_DEV_GPU_UTIL"))
        .and_then(|rest| rest.rsplit_once(' '))
        .map(|(labels, _)| labels.to_string())
        .expect("the fixture has DCGM_FI_DEV_GPU_UTIL");
    let mut out = String::new();
    for l in FIXTURE.lines() {
        let l = if l.starts_with("DCGM_FI_DEV_GPU_UTIL{") {
            format!("DCGM_FI_DEV_GPU_UTIL{labels} 87")
        } else if l.starts_with("DCGM_FI_DEV_POWER_USAGE{") {
            format!("DCGM_FI_DEV_POWER_USAGE{labels} 61.500000")
        } else if l.starts_with("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{") {
            format!("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{labels} 0.420000")
        } else {
            l.to_string()
        };
        out.push_str(&l);
        out.push('\n');
    }
    out.push_str("# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.\n");
    out.push_str("# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n");
    out.push_str(&format!("DCGM_FI_DEV_XID_ERRORS{labels} 79\n"));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dcgm_exporter_gpus_arrive_as_the_node_dumps_gpu_series() {
    let Some(bins) = prometheus("prometheus_dcgm::two_nodes") else {
        return;
    };
    let pa = serve("127.0.0.1", FIXTURE.to_string());
    let pb = serve("127.0.0.2", busy_node());
    let server = prom::start_with(
        &bins,
        &prom::Options {
            scrape: vec![format!("127.0.0.1:{pa}"), format!("127.0.0.2:{pb}")],
            ..prom::Options::default()
        },
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, n) = prom::query(server.port, "count(DCGM_FI_DEV_GPU_UTIL)", None);
        if n.contains("\"2\"]") {
            break;
        }
        assert!(Instant::now() < deadline, "not scraped in 60 s: {n}");
        std::thread::sleep(Duration::from_millis(300));
    }
    // A poll reads the newest scrape of the last step: give both targets one more.
    std::thread::sleep(Duration::from_millis(1500));
    let (_, src) = prom::live_source("fleet", server.port);
    let c = poll_once(&src).await;
    assert_eq!(c.error, None, "{:?}", c.parsed.notes);
    let get = |name: &str, node: &str| {
        c.parsed
            .find(name, &[("gpu", "0"), ("node", node)])
            .map(|v| v.as_f64())
    };
    // The idle L4 as the exporter printed it: 0 % is a reading, not a missing value.
    assert_eq!(get(names::GPU_UTILIZATION_PERCENT, "127.0.0.1"), Some(0.0));
    assert_eq!(get(names::GPU_POWER_WATTS, "127.0.0.1"), Some(16.365));
    assert_eq!(get(names::GPU_TENSOR_ACTIVE_RATIO, "127.0.0.1"), Some(0.0));
    assert_eq!(
        get(names::GPU_LAST_XID, "127.0.0.1"),
        None,
        "no XID series: missing, never 0"
    );
    assert_eq!(get(names::GPU_UTILIZATION_PERCENT, "127.0.0.2"), Some(87.0));
    assert_eq!(get(names::GPU_POWER_WATTS, "127.0.0.2"), Some(61.5));
    assert_eq!(get(names::GPU_TENSOR_ACTIVE_RATIO, "127.0.0.2"), Some(0.42));
    assert_eq!(get(names::GPU_LAST_XID, "127.0.0.2"), Some(79.0));
    // Gauges, labelled exactly as the node dump labels them (node, gpu).
    let s = c
        .parsed
        .samples
        .iter()
        .find(|s| s.key.name.as_str() == names::GPU_UTILIZATION_PERCENT)
        .expect("a GPU series");
    assert!(matches!(s.value, rocetop::metrics::Value::Gauge(_)));
    let labels: Vec<&str> = s.key.labels.iter().map(|(k, _)| *k).collect();
    assert_eq!(labels, vec!["gpu", "node"]);
}
