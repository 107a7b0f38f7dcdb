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

/// A `[[prometheus]]` source called `name` reading the server on 127.0.0.1:`port` (1 s step, 5 s
/// timeout), and the store it was registered in.
pub fn live_source(
    name: &str,
    port: u16,
) -> (rocetop::metrics::Store, rocetop::collect::source::Source) {
    let cfg = rocetop::config::Config::from_str(
        &format!(
            "[[prometheus]]\nname = \"{name}\"\nurl = \"http://127.0.0.1:{port}\"\nstep = \"1s\"\ntimeout = \"5s\"\n"
        ),
        "test",
        None,
    )
    .expect("config");
    let p = &cfg.prometheus[0];
    let mut store = rocetop::metrics::Store::new(3_600_000, 600);
    let transport = rocetop::collect::prometheus::PromTransport::live(p).expect("transport");
    let src = rocetop::collect::source::fleet_source(p, &mut store, std::sync::Arc::new(transport));
    (store, src)
}

/// Skip with a printed reason, or fail under CI (for the bench, which has no skip log).
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
    /// Bad data on top: node 3's series end at [`Fleet::gone_at`] with no staleness marker (a
    /// node that disappears, as backfilled or federated data shows it), and node 4's ECN counter
    /// of mlx5_0 is +Inf.
    pub faults: bool,
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
    /// With `faults`, node 3's last sample (s).
    pub fn gone_at(&self) -> i64 {
        self.start + 16 * 60
    }
    /// Whether node `i` has a sample at `t`.
    fn present(&self, i: usize, t: i64) -> bool {
        !(self.faults && i == 3 && t > self.gone_at())
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
                |f, i, d, t| {
                    if f.faults && i == 4 && d == 0 {
                        Some(f64::INFINITY)
                    } else {
                        Some((Fleet::ecn_rate(i, d) * (t - f.start) as u64) as f64)
                    }
                },
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
                    for t in self.times().filter(|&t| self.present(i, t)) {
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
                    for t in self.times().filter(|&t| self.present(i, t)) {
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
                for t in self.times().filter(|&t| self.present(i, t)) {
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
                for t in self.times().filter(|&t| self.present(i, t)) {
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
    } else if v == f64::INFINITY {
        "+Inf".into()
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

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// What a test server holds and guards.
#[derive(Default)]
pub struct Options<'a> {
    /// A TSDB backfilled with this fleet.
    pub fleet: Option<&'a Fleet>,
    /// Targets (`127.0.0.1:PORT`) scraped every second, job `rocetop`.
    pub scrape: Vec<String>,
    /// The body of a `--web.config.file` (e.g. `basic_auth_users`).
    pub web_config: Option<String>,
    /// The Authorization header the readiness check sends (the web config guards `/-/ready` too).
    pub auth: Option<String>,
}

/// Backfill `fleet` and start Prometheus over it; ready when this returns.
pub fn start(bins: &(PathBuf, PathBuf), fleet: &Fleet) -> Server {
    start_with(
        bins,
        &Options {
            fleet: Some(fleet),
            ..Options::default()
        },
    )
}

/// Start Prometheus as `o` says; ready when this returns.
pub fn start_with(bins: &(PathBuf, PathBuf), o: &Options) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    if let Some(fleet) = o.fleet {
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
    }
    let cfg = dir.path().join("prometheus.yml");
    let mut yml = String::from("global:\n  scrape_interval: 15s\n");
    if !o.scrape.is_empty() {
        let targets: Vec<String> = o.scrape.iter().map(|t| format!("'{t}'")).collect();
        let _ = write!(
            yml,
            "scrape_configs:\n  - job_name: rocetop\n    scrape_interval: 1s\n    scrape_timeout: 1s\n    \
             static_configs:\n      - targets: [{}]\n",
            targets.join(", ")
        );
    }
    std::fs::write(&cfg, yml).expect("config");
    let port = free_port();
    let mut cmd = Command::new(&bins.0);
    cmd.arg(format!("--config.file={}", cfg.display()))
        .arg(format!("--storage.tsdb.path={}", data.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg("--storage.tsdb.retention.time=3650d");
    if let Some(w) = &o.web_config {
        let f = dir.path().join("web.yml");
        std::fs::write(&f, w).expect("web config");
        cmd.arg(format!("--web.config.file={}", f.display()));
    }
    let child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("prom.log")).expect("log"),
        ))
        .spawn()
        .expect("prometheus starts");
    let server = Server { child, port, dir };
    let deadline = Instant::now() + Duration::from_secs(60);
    while get(port, "/-/ready", o.auth.as_deref()).0 != 200 {
        assert!(
            Instant::now() < deadline,
            "prometheus not ready in 60 s: {}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    server
}

impl Server {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prom.log")).unwrap_or_default()
    }
}

/// `GET path` on 127.0.0.1:`port`: the status (0 when nothing answered) and the body.
pub fn get(port: u16, path: &str, auth: Option<&str>) -> (u16, String) {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, String::new());
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(30)));
    let auth = auth.map_or(String::new(), |a| format!("Authorization: {a}\r\n"));
    let _ = write!(s, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n{auth}\r\n");
    let mut b = String::new();
    let _ = s.read_to_string(&mut b);
    let status = b
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = b.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
    (status, body)
}

/// An instant query's JSON answer (`/api/v1/query?query=...`).
pub fn query(port: u16, promql: &str, auth: Option<&str>) -> (u16, String) {
    let mut q = String::new();
    for b in promql.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            q.push(b as char);
        } else {
            let _ = write!(q, "%{b:02X}");
        }
    }
    get(port, &format!("/api/v1/query?query={q}"), auth)
}

/// A bcrypt hash of `password` for `basic_auth_users` (cost 4: tests need no strength), from
/// `htpasswd` (apache2-utils) or Python's `crypt`; `None` when neither is here.
pub fn bcrypt(password: &str) -> Option<String> {
    let ht = Command::new("htpasswd")
        .args(["-nbB", "-C", "4", "u", password])
        .output();
    if let Ok(o) = ht
        && o.status.success()
    {
        let line = String::from_utf8_lossy(&o.stdout).trim().to_string();
        return line.strip_prefix("u:").map(str::to_string);
    }
    let py = Command::new("python3")
        .args([
            "-W",
            "ignore",
            "-c",
            "import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=16)))",
            password,
        ])
        .output()
        .ok()?;
    let h = String::from_utf8_lossy(&py.stdout).trim().to_string();
    (py.status.success() && h.starts_with("$2")).then_some(h)
}
