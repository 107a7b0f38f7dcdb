//! A node's sysfs tree whose counters a test advances and resets between polls, read through the
//! real local transport, parsers and store: rates right, resets marked, never a negative rate.

use rocetop::collect::poll::poll_once;
use rocetop::collect::source::build;
use rocetop::collect::transport::CollectError;
use rocetop::config::Config;
use rocetop::metrics::rate::Rate;
use rocetop::metrics::{SeriesKey, Store, names};
use std::path::Path;

fn write(root: &Path, rel: &str, v: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, format!("{v}\n")).expect("write");
}

fn tree(root: &Path, cnp: u64, rx_bytes: u64) {
    let port = "class/infiniband/mlx5_0/ports/1";
    write(
        root,
        &format!("{port}/hw_counters/np_cnp_sent"),
        &cnp.to_string(),
    );
    write(
        root,
        &format!("{port}/hw_counters/np_ecn_marked_roce_packets"),
        &(cnp * 2).to_string(),
    );
    write(root, &format!("{port}/hw_counters/lifespan"), "10");
    write(
        root,
        &format!("{port}/counters/port_rcv_data"),
        &(rx_bytes / 4).to_string(),
    );
    write(root, &format!("{port}/gid_attrs/ndevs/0"), "lo");
    write(root, &format!("{port}/state"), "4: ACTIVE");
    write(
        root,
        "class/net/lo/statistics/rx_bytes",
        &rx_bytes.to_string(),
    );
}

#[tokio::test]
async fn local_node_rates_resets_and_discovery() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_string_lossy().to_string();
    tree(dir.path(), 100, 4000);
    let cfg = Config::from_str(
        &format!("[[node]]\nname = \"here\"\nhost = \"127.0.0.1\"\nlocal = true\nsysfs_root = \"{root}\"\n"),
        "test",
        None,
    )
    .expect("config");
    let mut store = Store::new(600_000, 100);
    let none: rocetop::collect::source::RemoteFactory<'_> =
        &|_, _| Err(CollectError::Unavailable("no".into()));
    let sources = build(&cfg, &mut store, none);
    let src = &sources[0];
    let key = SeriesKey::new(
        names::rdma_counter("np_cnp_sent"),
        &[("node", "here"), ("device", "mlx5_0"), ("rdma_port", "1")],
    );

    let c1 = poll_once(src).await;
    assert_eq!(c1.error, None);
    c1.apply(&mut store);
    let id = store.id(&key).expect("np_cnp_sent series");
    assert_eq!(store.rate(id), None, "first sample has no rate");
    // The first dump taught the netdev: the next poll reads its kernel statistics too.
    assert_eq!(
        src.discovery.as_ref().map(|d| d.netdevs()),
        Some(vec!["lo".to_string()])
    );

    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    tree(dir.path(), 150, 8000);
    let c2 = poll_once(src).await;
    c2.apply(&mut store);
    let r = store.rate(id).and_then(Rate::value).expect("a rate");
    let dt = (c2.at - c1.at) as f64 / 1000.0;
    assert!((r - 50.0 / dt).abs() < 1e-6, "rate {r} over {dt} s");
    let kernel = SeriesKey::new(
        names::NODE_KERNEL_BYTES,
        &[("node", "here"), ("netdev", "lo"), ("direction", "rx")],
    );
    assert!(
        store.id(&kernel).is_some(),
        "kernel bytes of the discovered netdev"
    );

    // Driver reload: counters start again from a small value.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    tree(dir.path(), 3, 8100);
    poll_once(src).await.apply(&mut store);
    assert_eq!(
        store.rate(id),
        Some(Rate::Reset),
        "a decrease is a reset, not a negative rate"
    );
    for (_, s) in store.all() {
        for (_, r) in store.rates(store.id(&s.key).expect("id"), 0) {
            if let Some(v) = r.value() {
                assert!((0.0..1e9).contains(&v), "{} rate {v}", s.key);
            }
        }
    }
}

#[tokio::test]
async fn missing_sysfs_is_reported_not_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().to_string_lossy().to_string();
    let cfg = Config::from_str(
        &format!("[[node]]\nname = \"bare\"\nhost = \"127.0.0.1\"\nlocal = true\nsysfs_root = \"{root}\"\n"),
        "test",
        None,
    )
    .expect("config");
    let mut store = Store::new(600_000, 100);
    let none: rocetop::collect::source::RemoteFactory<'_> =
        &|_, _| Err(CollectError::Unavailable("no".into()));
    let sources = build(&cfg, &mut store, none);
    let c = poll_once(&sources[0]).await;
    assert!(c.parsed.samples.is_empty(), "no counters invented");
    assert!(
        c.parsed.notes.iter().any(|n| n.contains("no RDMA device")),
        "{:?}",
        c.parsed.notes
    );
}
