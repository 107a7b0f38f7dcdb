//! Fleet mode over Debian's `prometheus-node-exporter`: the real exporter reads a
//! fake sysfs tree (`--path.sysfs`) holding the InfiniBand port counters its infiniband collector
//! knows (procfs `parseInfiniBandCounters`: `class/infiniband/<dev>/{fw_ver,board_id,hca_type}`,
//! `ports/<n>/{state,phys_state,rate}`, `ports/<n>/counters/<file>`), a real Prometheus scrapes it
//! every second, and rocetop's `[[prometheus]]` source reads it back: the values are the files',
//! and when the test rewrites the files the increases are the injected ones. All on 127.0.0.1.

use crate::prom;
use crate::prom_skip;

use prom_skip::prometheus;
use rocetop::collect::poll::poll_once;
use rocetop::metrics::query::latest;
use rocetop::metrics::{SeriesKey, Store, Value, names};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TEST: &str = "prometheus_node_exporter::fake_sysfs";
const DEVICES: [&str; 2] = ["mlx5_0", "mlx5_1"];

/// The counter files written (sysfs name, value for device `d`), as rocetop names them
/// (`rocetop_rdma_<file>_total`, the data counters in the file's 4-byte words).
fn counters(d: u64, round: u64) -> Vec<(&'static str, u64)> {
    vec![
        ("port_rcv_data", 1_000 * (d + 1) + round * inc_words(d)),
        ("port_xmit_data", 2_000 * (d + 1) + round * 2 * inc_words(d)),
        ("port_rcv_packets", 30 + d + round * 10),
        ("port_xmit_packets", 40 + d + round * 20),
        ("port_xmit_wait", 77 + d + round * inc_wait(d)),
        ("port_rcv_errors", 2 + d),
        ("link_downed", 1),
    ]
}

fn inc_words(d: u64) -> u64 {
    250 * (d + 1)
}

fn inc_wait(d: u64) -> u64 {
    1_000 * (d + 1)
}

/// The tree node_exporter 1.5's procfs needs for one device (missing `board_id` or `rate` makes
/// the whole collector answer nothing).
fn write_tree(sys: &Path, round: u64) {
    for (d, dev) in DEVICES.iter().enumerate() {
        let dev_dir = sys.join("class/infiniband").join(dev);
        let port = dev_dir.join("ports/1");
        std::fs::create_dir_all(port.join("counters")).expect("tree");
        std::fs::create_dir_all(port.join("hw_counters")).expect("tree");
        for (f, v) in [
            ("fw_ver", "16.35.1012"),
            ("board_id", "MT_0000000010"),
            ("hca_type", "MT4123"),
        ] {
            std::fs::write(dev_dir.join(f), format!("{v}\n")).expect("write");
        }
        for (f, v) in [
            ("state", "4: ACTIVE"),
            ("phys_state", "5: LinkUp"),
            ("rate", "100 Gb/sec (4X EDR)"),
        ] {
            std::fs::write(port.join(f), format!("{v}\n")).expect("write");
        }
        for (f, v) in counters(d as u64, round) {
            // Write then rename: the exporter never reads a half-written file.
            let tmp = port.join(format!(".{f}"));
            std::fs::write(&tmp, format!("{v}\n")).expect("write");
            std::fs::rename(&tmp, port.join("counters").join(f)).expect("rename");
        }
        // A congestion counter this version does not export (1.11 does): it must not appear.
        std::fs::write(port.join("hw_counters/np_cnp_sent"), "5\n").expect("write");
    }
}

/// Ends the child it holds, also when the test panics.
struct Reaper(Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !f() {
        assert!(Instant::now() < deadline, "{what}: not in 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn key(dev: &str, file: &str) -> (String, [(&'static str, String); 3]) {
    (
        names::rdma_counter(file),
        [
            ("node", "127.0.0.1".to_string()),
            ("device", dev.to_string()),
            ("rdma_port", "1".to_string()),
        ],
    )
}

fn value(store: &Store, dev: &str, file: &str) -> Option<u64> {
    let (name, l) = key(dev, file);
    let l: Vec<(&str, &str)> = l.iter().map(|(k, v)| (*k, v.as_str())).collect();
    match latest(store, &name, &l)?.1 {
        Value::Counter(v) => Some(v),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn node_exporter_over_a_fake_sysfs_reads_back_with_the_files_values_and_increments() {
    let Some(bins) = prometheus(TEST) else {
        return;
    };
    let Some(ne) = prom_skip::node_exporter(TEST) else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let sys = dir.path().join("sys");
    write_tree(&sys, 0);
    let ne_port = prom::free_port();
    let _ne = Reaper(
        Command::new(&ne)
            .arg(format!("--path.sysfs={}", sys.display()))
            .args(["--collector.disable-defaults", "--collector.infiniband"])
            .arg(format!("--web.listen-address=127.0.0.1:{ne_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(dir.path().join("ne.log")).expect("log"),
            ))
            .spawn()
            .expect("node_exporter starts"),
    );
    wait_for("node_exporter serves the fake tree", || {
        let (_, m) = prom::get(ne_port, "/metrics", None);
        m.contains("node_scrape_collector_success{collector=\"infiniband\"} 1")
    });
    let (_, m) = prom::get(ne_port, "/metrics", None);
    assert!(
        m.contains(
            "node_infiniband_port_data_received_bytes_total{device=\"mlx5_1\",port=\"1\"} 8000"
        ),
        "the exporter reads the tree (bytes = words x 4)"
    );
    assert!(!m.contains("np_cnp"), "1.5 exports no hw_counters");

    let server = prom::start_with(
        &bins,
        &prom::Options {
            scrape: vec![format!("127.0.0.1:{ne_port}")],
            ..prom::Options::default()
        },
    );
    wait_for("the exporter scraped a few times", || {
        let (_, n) = prom::query(
            server.port,
            "count_over_time(node_infiniband_port_transmit_wait_total{device=\"mlx5_0\"}[1m]) >= 3",
            None,
        );
        n.contains("\"result\":[{")
    });
    let (mut store, src) = prom::live_source("ne", server.port);
    // Poll until every counter of both devices is in (a scrape can land just outside a 1 s window).
    let complete = |store: &Store, round: u64| {
        DEVICES.iter().enumerate().all(|(d, dev)| {
            counters(d as u64, round)
                .iter()
                .all(|(f, v)| value(store, dev, f) == Some(*v))
        })
    };
    let mut first_at = None;
    for _ in 0..20 {
        let c = poll_once(&src).await;
        assert_eq!(c.error, None, "{:?}", c.parsed.notes);
        let at = c.at;
        c.apply(&mut store);
        if complete(&store, 0) {
            first_at = Some(at);
            break;
        }
    }
    let Some(first_at) = first_at else {
        let got: Vec<_> = DEVICES
            .iter()
            .flat_map(|dev| counters(0, 0).into_iter().map(move |(f, _)| (*dev, f)))
            .map(|(dev, f)| (dev, f, value(&store, dev, f)))
            .collect();
        panic!("the files' values never all read back: {got:?}");
    };
    assert!(
        store.names().iter().all(|n| !n.contains("np_cnp")),
        "nothing invented for a counter the exporter does not export"
    );

    // The test rewrites the files: the increases rocetop reads are the injected ones.
    write_tree(&sys, 1);
    let mut done = false;
    for _ in 0..20 {
        let c = poll_once(&src).await;
        assert_eq!(c.error, None, "{:?}", c.parsed.notes);
        c.apply(&mut store);
        if complete(&store, 1) {
            done = true;
            break;
        }
    }
    assert!(done, "the rewritten values never read back");
    for (d, dev) in DEVICES.iter().enumerate() {
        for (f, inc) in [
            ("port_xmit_wait", inc_wait(d as u64)),
            ("port_rcv_data", inc_words(d as u64)),
            ("port_rcv_errors", 0),
        ] {
            let (name, l) = key(dev, f);
            let k = SeriesKey::new(
                &name,
                &l.iter().map(|(k, v)| (*k, v.as_str())).collect::<Vec<_>>(),
            );
            let id = store.id(&k).expect("series");
            assert_eq!(
                store.increase_since(id, first_at),
                Some(inc),
                "{dev} {f}: the injected increment"
            );
            // The one interval that holds the change has the rate increment / its length.
            let rates = store.rates(id, first_at);
            let moved: Vec<_> = rates
                .iter()
                .filter(|(_, r)| r.value().is_some_and(|v| v > 0.0))
                .collect();
            if inc == 0 {
                assert!(moved.is_empty(), "{dev} {f}: {rates:?}");
                continue;
            }
            assert_eq!(moved.len(), 1, "{dev} {f}: {rates:?}");
            let (t, r) = moved[0];
            let prev = store
                .get(id)
                .expect("series")
                .points(&store)
                .map(|p| p.0)
                .filter(|p| p < t)
                .max()
                .expect("a point before");
            let want = inc as f64 * 1000.0 / (t - prev) as f64;
            assert!(
                (r.value().unwrap_or(f64::NAN) - want).abs() < 1e-9,
                "{dev} {f}: {r:?} over {} ms, want {want}",
                t - prev
            );
        }
    }
}
