//! A real Prometheus (the Debian `prometheus` and `promtool`) on 127.0.0.1 with a free port,
//! serving a TSDB backfilled with `promtool tsdb create-blocks-from openmetrics`: a fleet whose
//! counters grow at known rates, in node_exporter's and rdma_exporter's exact metric names.
#![allow(dead_code)]
// Parallel arrays (device, netdev) indexed by the device number read more plainly than zips.
#![allow(clippy::needless_range_loop, clippy::type_complexity)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const STEP_S: i64 = 15;
pub const SPAN_S: i64 = 30 * 60;

/// Where the binaries are, or why the test cannot run (skipped visibly; under CI=true a failure).
pub fn binaries() -> Result<(PathBuf, PathBuf), String> {
    let find = |n: &str| {
        ["/usr/bin", "/usr/local/bin", "/bin"]
            .iter()
            .map(|d| Path::new(d).join(n))
            .find(|p| p.exists())
            .ok_or_else(|| format!("{n} is not installed (apt-get install prometheus)"))
    };
    Ok((find("prometheus")?, find("promtool")?))
}

/// Skip with a printed reason, or fail under CI.
pub fn require() -> Option<(PathBuf, PathBuf)> {
    match binaries() {
        Ok(b) => Some(b),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("CI=true: {e}"),
        Err(e) => {
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

/// The fleet: nodes `gpu0000..`, two devices each. Even nodes report through node_exporter
/// (infiniband + ethtool), odd ones through rdma_exporter; node 1 also through node_exporter
/// (duplicate series). Rates, per second, are exact functions of the indices.
pub struct Fleet {
    pub nodes: usize,
    /// First sample time (s), a multiple of STEP_S.
    pub start: i64,
}

impl Fleet {
    pub fn node(i: usize) -> String {
        format!("gpu{i:04}")
    }
    pub fn cnp_rate(i: usize, d: usize) -> u64 {
        (i as u64 % 50 + 1) * (d as u64 + 1)
    }
    pub fn ecn_rate(i: usize, d: usize) -> u64 {
        3 * Self::cnp_rate(i, d)
    }
    pub fn pause_rate(i: usize) -> u64 {
        10 + i as u64 % 7
    }
    /// µs of pause per second.
    pub fn pause_us_rate(i: usize) -> u64 {
        1000 * (i as u64 % 9 + 1)
    }
    /// Node 0, device 0 resets its CNP counter to 0 at this time (s).
    pub fn reset_at(&self) -> i64 {
        self.start + 20 * 60
    }
    pub fn node_exporter(i: usize) -> bool {
        i % 2 == 0 || i == 1
    }
    pub fn rdma_exporter(i: usize) -> bool {
        i % 2 == 1
    }

    fn times(&self) -> impl Iterator<Item = i64> + '_ {
        (0..=SPAN_S / STEP_S).map(move |k| self.start + k * STEP_S)
    }

    fn cnp_value(&self, i: usize, d: usize, t: i64) -> u64 {
        let since = if i == 0 && d == 0 && t >= self.reset_at() {
            self.reset_at()
        } else {
            self.start
        };
        Self::cnp_rate(i, d) * (t - since) as u64
    }

    /// OpenMetrics text for promtool.
    pub fn openmetrics(&self) -> String {
        let mut s = String::with_capacity(self.nodes * 2 * 8 * 121 * 90);
        let devs = ["mlx5_0", "mlx5_1"];
        let netdevs = ["ens1f0", "ens2f0"];
        // node_exporter infiniband: one family at a time, as OpenMetrics wants.
        let ib: [(&str, fn(&Fleet, usize, usize, i64) -> Option<f64>); 3] = [
            ("node_infiniband_np_cnp_packets_sent_total", |f, i, d, t| {
                Some(f.cnp_value(i, d, t) as f64)
            }),
            (
                "node_infiniband_np_ecn_marked_roce_packets_received_total",
                |f, i, d, t| Some((Fleet::ecn_rate(i, d) * (t - f.start) as u64) as f64),
            ),
            // Node 2 exports NaN here: refused, shown missing, never 0.
            (
                "node_infiniband_rp_cnp_packets_handled_total",
                |f, i, d, t| {
                    if i == 2 {
                        Some(f64::NAN)
                    } else {
                        Some((Fleet::cnp_rate(i, d) * (t - f.start) as u64) as f64)
                    }
                },
            ),
        ];
        for (name, val) in ib {
            for i in (0..self.nodes).filter(|&i| Self::node_exporter(i)) {
                for d in 0..2 {
                    for t in self.times() {
                        let v = val(self, i, d, t).unwrap_or(f64::NAN);
                        let _ = writeln!(
                            s,
                            "{name}{{device=\"{}\",port=\"1\",instance=\"{}:9100\",job=\"node\"}} {} {t}",
                            devs[d],
                            Self::node(i),
                            fmt(v)
                        );
                    }
                }
            }
        }
        for (name, rate) in [
            (
                "node_ethtool_received_prio3_pause",
                Self::pause_rate as fn(usize) -> u64,
            ),
            (
                "node_ethtool_received_prio3_pause_duration",
                Self::pause_us_rate,
            ),
        ] {
            for i in (0..self.nodes).filter(|&i| Self::node_exporter(i)) {
                for d in 0..2 {
                    for t in self.times() {
                        let _ = writeln!(
                            s,
                            "{name}{{device=\"{}\",instance=\"{}:9100\",job=\"node\"}} {} {t}",
                            netdevs[d],
                            Self::node(i),
                            rate(i) * (t - self.start) as u64
                        );
                    }
                }
            }
        }
        // rdma_exporter
        for i in (0..self.nodes).filter(|&i| Self::rdma_exporter(i)) {
            for d in 0..2 {
                for t in self.times() {
                    let _ = writeln!(
                        s,
                        "rdma_np_cnp_sent_total{{device=\"{}\",port=\"1\",instance=\"{}:9879\",job=\"rdma\"}} {} {t}",
                        devs[d],
                        Self::node(i),
                        self.cnp_value(i, d, t)
                    );
                }
            }
        }
        for i in (0..self.nodes).filter(|&i| Self::rdma_exporter(i)) {
            for d in 0..2 {
                for t in self.times() {
                    let _ = writeln!(
                        s,
                        "rdma_roce_pfc_pause_frames_total{{device=\"{}\",port=\"1\",netdev=\"{}\",direction=\"rx\",priority=\"3\",instance=\"{}:9879\",job=\"rdma\"}} {} {t}",
                        devs[d],
                        netdevs[d],
                        Self::node(i),
                        Self::pause_rate(i) * (t - self.start) as u64
                    );
                }
            }
        }
        s.push_str("# EOF\n");
        s
    }
}

fn fmt(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else {
        format!("{v}")
    }
}

pub struct Server {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Backfill `fleet` and start Prometheus over it; ready when this returns.
pub fn start(bins: &(PathBuf, PathBuf), fleet: &Fleet) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let om = dir.path().join("fleet.om");
    std::fs::write(&om, fleet.openmetrics()).expect("write openmetrics");
    let out = Command::new(&bins.1)
        .args(["tsdb", "create-blocks-from", "openmetrics", "-q"])
        .arg(&om)
        .arg(&data)
        .output()
        .expect("promtool runs");
    assert!(
        out.status.success(),
        "promtool: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_file(&om);
    let cfg = dir.path().join("prometheus.yml");
    std::fs::write(&cfg, "global:\n  scrape_interval: 15s\n").expect("config");
    let port = free_port();
    let child = Command::new(&bins.0)
        .arg(format!("--config.file={}", cfg.display()))
        .arg(format!("--storage.tsdb.path={}", data.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--storage.tsdb.retention.time=3650d")
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("prom.log")).expect("log"),
        ))
        .spawn()
        .expect("prometheus starts");
    let server = Server { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready(port) {
        assert!(
            Instant::now() < deadline,
            "prometheus not ready in 60 s: {}",
            std::fs::read_to_string(server.dir.path().join("prom.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    server
}

fn ready(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.write_all(b"GET /-/ready HTTP/1.0\r\n\r\n");
    let mut b = String::new();
    let _ = s.read_to_string(&mut b);
    b.starts_with("HTTP/1.0 200") || b.starts_with("HTTP/1.1 200")
}
