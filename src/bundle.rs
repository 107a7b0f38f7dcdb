//! Incident bundle (`S` in the TUI): one directory holding what the fabric looked like when it
//! was written: current values (as `snapshot --format json` and `--format prom` print them), the
//! last minutes of every series, recent log lines, the active alerts and the config without
//! secrets. Written under a temporary name and renamed, so a half-written bundle is never seen.

use crate::config::Config;
use crate::metrics::store::Kind;
use crate::metrics::{Store, Ts, now_ms};
use crate::output::{json, prom};
use crate::record::inventory::redacted_json;
use serde_json::{Value as J, json};
use std::path::{Path, PathBuf};

/// How much history `series.json` keeps, ending at the newest point in the store.
pub const SERIES_WINDOW_MS: Ts = 10 * 60_000;

/// The files of a bundle, for the README and the tests.
pub const FILES: &[&str] = &[
    "current.json",
    "metrics.prom",
    "series.json",
    "log.txt",
    "alerts.txt",
    "episodes.json",
    "fabric.json",
    "pause-trees.txt",
    "config.json",
    "README.txt",
];

#[derive(Debug, thiserror::Error)]
#[error("cannot write the incident bundle in {dir}: {source}")]
pub struct BundleError {
    pub dir: String,
    #[source]
    pub source: std::io::Error,
}

/// UTC civil date and time of a Unix time in ms: (year, month, day, hour, minute, second).
pub fn utc_parts(ms: Ts) -> (i64, u32, u32, u32, u32, u32) {
    let secs = ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Howard Hinnant's days-to-civil algorithm.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (
        y,
        m,
        d,
        (sod / 3600) as u32,
        (sod % 3600 / 60) as u32,
        (sod % 60) as u32,
    )
}

/// `rocetop-incident-YYYYmmdd-HHMMSS` (UTC).
pub fn bundle_name(ms: Ts) -> String {
    let (y, mo, d, h, mi, s) = utc_parts(ms);
    format!("rocetop-incident-{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}")
}

/// Runs of equal items: `[[item, n], ...]`.
fn runs<T: PartialEq + Clone + Into<J>>(items: impl IntoIterator<Item = T>) -> J {
    let mut out: Vec<(T, u64)> = Vec::new();
    for x in items {
        match out.last_mut() {
            Some((y, n)) if *y == x => *n += 1,
            _ => out.push((x, 1)),
        }
    }
    J::from(
        out.into_iter()
            .map(|(x, n)| json!([x.into(), n]))
            .collect::<Vec<J>>(),
    )
}

/// How a series' values are written (see [`SERIES_FORMAT`]).
fn values_json(kind: &Kind, pts: &[(Ts, crate::metrics::Value)]) -> (&'static str, J) {
    if matches!(kind, Kind::Counter(_)) {
        // Counters: the first value, then each poll's increase (mostly a few repeated numbers;
        // negative only across a reset, where the counter went back).
        let v: Vec<i128> = pts
            .iter()
            .map(|(_, v)| match v {
                // Pause durations are kept as the NIC counts them (µs): the kind says so below.
                crate::metrics::Value::Counter(n)
                | crate::metrics::Value::Counter32(n)
                | crate::metrics::Value::CounterMicros(n) => i128::from(*n),
                crate::metrics::Value::Gauge(g) => *g as i128,
            })
            .collect();
        let deltas = v.windows(2).map(|w| J::from((w[1] - w[0]) as i64));
        let first = v.first().map_or(J::Null, |x| J::from(*x as i64));
        let micros = pts
            .iter()
            .any(|(_, v)| matches!(v, crate::metrics::Value::CounterMicros(_)));
        let kind = if micros { "counter_micros" } else { "counter" };
        (kind, json!({ "v0": first, "d": runs(deltas) }))
    } else {
        let vals = pts.iter().map(|(_, v)| {
            let x = v.as_f64();
            if x.is_finite() { J::from(x) } else { J::Null }
        });
        ("gauge", json!({ "v": runs(vals) }))
    }
}

/// How `series.json` is laid out (written into it, so a reader needs nothing else).
pub const SERIES_FORMAT: &str = "each series: clock = index into clocks; a clock is [t0_ms, \
runs of [gap_ms, n]] (the poll times: t0, then n gaps of gap_ms each); a gauge's v is runs of \
[value, n]; a counter's v0 is its first value and d runs of [increase, n] per poll (negative: a \
reset). A counter's rate is its increase divided by the gap.";

/// Every series over the last [`SERIES_WINDOW_MS`] before `to`, compact: poll times written once
/// per distinct clock (series of one source share one), values as runs. Its size is bounded by
/// the window, not by how long rocetop ran.
pub fn series_json(store: &Store, to: Ts) -> J {
    let from = to - SERIES_WINDOW_MS;
    let mut all: Vec<_> = store.all().collect();
    all.sort_by(|a, b| a.1.key.cmp(&b.1.key));
    let mut clocks: Vec<J> = Vec::new();
    let mut clock_ix: std::collections::HashMap<Vec<Ts>, usize> = Default::default();
    let series: Vec<J> = all
        .into_iter()
        .filter_map(|(_, s)| {
            let pts: Vec<(Ts, crate::metrics::Value)> = s
                .points(store)
                .filter(|(t, _)| *t >= from && *t <= to)
                .collect();
            let t0 = pts.first()?.0;
            let times: Vec<Ts> = pts.iter().map(|(t, _)| *t).collect();
            let n = clocks.len();
            let clock = *clock_ix.entry(times).or_insert_with_key(|times| {
                let gaps = times.windows(2).map(|w| J::from(w[1] - w[0]));
                clocks.push(json!([t0, runs(gaps)]));
                n
            });
            let labels: serde_json::Map<String, J> = s
                .key
                .labels
                .iter()
                .map(|(k, v)| ((*k).to_string(), J::from(v.as_str())))
                .collect();
            let (kind, vals) = values_json(&s.kind(), &pts);
            let mut o = json!({
                "name": s.key.name,
                "labels": labels,
                "source": store.source(s.source).map(|h| h.name.clone()),
                "kind": kind,
                "clock": clock,
            });
            if let (Some(o), J::Object(v)) = (o.as_object_mut(), vals) {
                o.extend(v);
            }
            Some(o)
        })
        .collect();
    json!({
        "from_ms": from,
        "to_ms": to,
        "window_ms": SERIES_WINDOW_MS,
        "format": SERIES_FORMAT,
        "clocks": clocks,
        "series": series,
    })
}

/// One line per alert for `alerts.txt`: severity, start, tab, and where (switch and port, node,
/// source or peer; a device where the condition is per device), then what.
pub fn alert_lines(alerts: &[&crate::app::alerts::Alert]) -> Vec<String> {
    alerts
        .iter()
        .map(|a| {
            format!(
                "{} since {} [{}] {}: {}",
                a.severity.label(),
                crate::ui::fmt::clock(a.since),
                a.tab.title(),
                a.subject.describe(),
                a.what
            )
        })
        .collect()
}

/// Write a bundle in `dir`, named after the wall clock now. Returns its path.
pub fn write_bundle(
    dir: &Path,
    cfg: &Config,
    store: &Store,
    recent_log_lines: &[String],
    alerts: &[String],
) -> Result<PathBuf, BundleError> {
    let none = J::Array(Vec::new());
    let found = Found {
        episodes: &none,
        fabric: &J::Null,
        trees: "",
    };
    write_bundle_at(dir, cfg, store, recent_log_lines, alerts, &found, now_ms())
}

/// What the screen found, written beside the data: the episodes (`episodes.json`), the fabric
/// graph with its pause tree (`fabric.json`), and the pause trees as text, now and at each
/// episode's PFC peak (`pause-trees.txt`).
#[derive(Clone, Copy)]
pub struct Found<'a> {
    pub episodes: &'a J,
    pub fabric: &'a J,
    pub trees: &'a str,
}

/// Write a bundle named after `at` (a replay passes the recording's time).
pub fn write_bundle_at(
    dir: &Path,
    cfg: &Config,
    store: &Store,
    recent_log_lines: &[String],
    alerts: &[String],
    found: &Found<'_>,
    at: Ts,
) -> Result<PathBuf, BundleError> {
    let Found {
        episodes,
        fabric,
        trees,
    } = *found;
    let err = |source| BundleError {
        dir: dir.display().to_string(),
        source,
    };
    let newest = store
        .all()
        .filter_map(|(_, s)| s.last_seen(store))
        .max()
        .unwrap_or(at);
    let name = bundle_name(at);
    let tmp = private_dir(dir, &format!(".{name}.{}", std::process::id())).map_err(err)?;
    let pretty = |v: &J| serde_json::to_string_pretty(v).unwrap_or_default() + "\n";
    let mut log = recent_log_lines.join("\n");
    if !log.is_empty() {
        log.push('\n');
    }
    let alerts_txt = if alerts.is_empty() {
        "(no active alerts)\n".to_string()
    } else {
        alerts.join("\n") + "\n"
    };
    let (y, mo, d, h, mi, s) = utc_parts(at);
    let readme = format!(
        "rocetop {} incident bundle, written {y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02} UTC\n\
         newest data: {newest} ms since the epoch\n\n\
         current.json  every source's health and every series' newest value and rate (= snapshot --format json)\n\
         metrics.prom  the same in Prometheus text format (= snapshot --format prom)\n\
         series.json   the last {} minutes of every series, compact (its \"format\" says how to read it)\n\
         log.txt       recent training log lines\n\
         alerts.txt    alerts active when it was written\n\
         episodes.json every episode found (start, end, peak, the chain in cause order, culprit, cost)\n\
         fabric.json   the fabric's links (LLDP, [[link]], pairing) and the PFC pause tree when it was written\n\
         pause-trees.txt  who paused whom: the tree when it was written and each episode's at its PFC peak\n\
         config.json   the config, secrets removed\n",
        env!("CARGO_PKG_VERSION"),
        SERIES_WINDOW_MS / 60_000,
    );
    let trees = if trees.is_empty() {
        "(no pause tree: written without the screen's findings)\n".to_string()
    } else {
        trees.to_string()
    };
    let files: [(&str, String); 10] = [
        ("current.json", json::render(store) + "\n"),
        ("metrics.prom", prom::render(store, true, true)),
        // One line: pretty-printing made it several times larger.
        ("series.json", series_json(store, newest).to_string() + "\n"),
        ("log.txt", log),
        ("alerts.txt", alerts_txt),
        ("episodes.json", pretty(episodes)),
        ("fabric.json", pretty(fabric)),
        ("pause-trees.txt", trees),
        ("config.json", pretty(&redacted_json(cfg))),
        ("README.txt", readme),
    ];
    for (f, text) in &files {
        let written = crate::record::writer::create_new(&tmp.join(f))
            .and_then(|mut file| std::io::Write::write_all(&mut file, text.as_bytes()));
        if let Err(e) = written {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(err(e));
        }
    }
    // Two bundles in the same second: the second gets a suffix.
    for n in 1..1000 {
        let target = if n == 1 {
            dir.join(&name)
        } else {
            dir.join(format!("{name}-{n}"))
        };
        // Anything of that name, a link to nowhere included, is passed over.
        if target.symlink_metadata().is_ok() {
            continue;
        }
        return match std::fs::rename(&tmp, &target) {
            Ok(()) => Ok(target),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&tmp);
                Err(err(e))
            }
        };
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Err(err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{name}: too many bundles in this second"),
    )))
}

/// A new directory `dir/<stem>.<n>.partial` (the first `n` free) that only its owner can enter:
/// a bundle holds log lines and the inventory. Never one that exists (a name planted there, a
/// link included, is passed over, not removed or followed).
fn private_dir(dir: &Path, stem: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    for n in 0..100 {
        let p = dir.join(format!("{stem}.{n}.partial"));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => {
                // The umask may have taken bits the owner needs.
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))?;
                return Ok(p);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        format!("{stem}: 100 partial bundles are in the way"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::config::Secret;
    use crate::metrics::{Parsed, Sample};

    #[test]
    fn civil_dates() {
        assert_eq!(utc_parts(0), (1970, 1, 1, 0, 0, 0));
        // 2024-02-29T03:12:05Z, a leap day.
        assert_eq!(utc_parts(1_709_176_325_000), (2024, 2, 29, 3, 12, 5));
        assert_eq!(
            bundle_name(1_709_176_325_999),
            "rocetop-incident-20240229-031205"
        );
        assert_eq!(utc_parts(-1000), (1969, 12, 31, 23, 59, 59));
    }

    fn store() -> Store {
        let mut st = Store::new(3_600_000, 10_000);
        let src = st.add_source("ubunturdma1", 1000);
        let t0 = 1_709_176_325_000;
        for i in 0..20 {
            let p = Parsed {
                samples: vec![
                    Sample::counter(
                        "rocetop_rdma_np_cnp_sent_total",
                        &[("node", "ubunturdma1")],
                        100 * i,
                    ),
                    Sample::gauge(
                        "rocetop_train_loss",
                        &[("node", "ubunturdma1")],
                        2.0 - i as f64 / 100.0,
                    ),
                ],
                ..Default::default()
            };
            // One point every 60 s: the window of 10 minutes keeps the last 11.
            st.ingest(src, t0 + i as i64 * 60_000, &p);
        }
        st
    }

    /// Read one series back from `series.json` as (t_ms, value) pairs, as its "format" says.
    fn decode(doc: &J, name: &str) -> Vec<(Ts, f64)> {
        let s = doc["series"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == name))
            .unwrap_or_else(|| panic!("no {name}"));
        let clock = &doc["clocks"][s["clock"].as_u64().expect("clock") as usize];
        let expand = |runs: &J| -> Vec<J> {
            runs.as_array()
                .expect("runs")
                .iter()
                .flat_map(|r| std::iter::repeat_n(r[0].clone(), r[1].as_u64().expect("n") as usize))
                .collect()
        };
        let mut t = vec![clock[0].as_i64().expect("t0")];
        for g in expand(&clock[1]) {
            t.push(t.last().copied().unwrap_or(0) + g.as_i64().expect("gap"));
        }
        let v: Vec<f64> = if s["kind"] == "counter" {
            let mut v = vec![s["v0"].as_f64().expect("v0")];
            for d in expand(&s["d"]) {
                v.push(v.last().copied().unwrap_or(0.0) + d.as_f64().expect("d"));
            }
            v
        } else {
            expand(&s["v"])
                .iter()
                .map(|x| x.as_f64().unwrap_or(f64::NAN))
                .collect()
        };
        assert_eq!(t.len(), v.len(), "{name}");
        t.into_iter().zip(v).collect()
    }

    /// 20 minutes of 1000 series polled every second (jittered clocks, busy and idle counters,
    /// a gauge): series.json keeps the last 10 minutes only, exactly, and stays small.
    #[test]
    fn series_json_is_bounded_and_compact() {
        let mut st = Store::new(3_600_000, 2_000);
        let t0 = 1_709_176_325_000;
        let srcs: Vec<_> = (0..10)
            .map(|i| st.add_source(&format!("n{i}"), 1000))
            .collect();
        for p in 0..1200i64 {
            for (i, src) in srcs.iter().enumerate() {
                let node = format!("n{i}");
                let mut samples = Vec::new();
                for c in 0..100u64 {
                    // A third of the counters move every poll, the rest stay at zero.
                    let v = if c % 3 == 0 {
                        p as u64 * (1000 + c * 7 + (p as u64 % 5))
                    } else {
                        0
                    };
                    samples.push(Sample::counter(
                        format!("rocetop_rdma_c{c}_total"),
                        &[("node", node.as_str())],
                        v,
                    ));
                }
                samples.push(Sample::gauge(
                    "rocetop_train_loss",
                    &[("node", node.as_str())],
                    2.0 - p as f64 / 1e4,
                ));
                let p2 = Parsed::from(samples);
                // Polls are a few ms late or early, differently per source.
                st.ingest(*src, t0 + p * 1000 + (p * 7 + i as i64) % 5, &p2);
            }
        }
        let to = t0 + 1199 * 1000 + 4;
        let doc = series_json(&st, to);
        let text = doc.to_string();
        let pts = decode(&doc, "rocetop_rdma_c3_total");
        assert!(
            pts.iter()
                .all(|(t, _)| *t >= to - SERIES_WINDOW_MS && *t <= to)
        );
        assert!((600..=601).contains(&pts.len()), "{}", pts.len());
        assert_eq!(doc["series"].as_array().map(Vec::len), Some(1010));
        assert!(
            doc["clocks"].as_array().map_or(0, Vec::len) <= 10,
            "a clock per source"
        );
        let mb = text.len() as f64 / 1e6;
        crate::safe::eprintln(&format!(
            "series.json: 1010 series x 10 min at 1 s: {mb:.2} MB"
        ));
        assert!(mb < 4.0, "{mb:.2} MB");
    }

    #[test]
    fn bundle_holds_every_file_and_no_secret() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut cfg = Config::reference();
        cfg.switches[0].password = Some(Secret::Command("echo hunter2".into()));
        let st = store();
        let lines = vec![
            "iter 10 loss 2.1".to_string(),
            "iter 11 loss 2.0".to_string(),
        ];
        let alerts = vec!["ubunturdma1: pause time 12% > 10%".to_string()];
        let at = 1_709_176_325_000;
        let p = write_bundle_at(
            dir.path(),
            &cfg,
            &st,
            &lines,
            &alerts,
            &Found {
                episodes: &J::Array(vec![]),
                fabric: &J::Null,
                trees: "",
            },
            at,
        )
        .expect("written");
        assert_eq!(
            p.file_name().and_then(|n| n.to_str()),
            Some("rocetop-incident-20240229-031205")
        );
        for f in FILES {
            assert!(p.join(f).is_file(), "{f} missing");
        }
        let read = |f: &str| std::fs::read_to_string(p.join(f)).expect("read");
        assert_eq!(read("current.json"), json::render(&st) + "\n");
        assert_eq!(read("metrics.prom"), prom::render(&st, true, true));
        assert_eq!(read("log.txt"), "iter 10 loss 2.1\niter 11 loss 2.0\n");
        assert_eq!(read("alerts.txt"), "ubunturdma1: pause time 12% > 10%\n");
        assert!(!read("config.json").contains("hunter2"));
        let series: J = serde_json::from_str(&read("series.json")).expect("json");
        let pts = decode(&series, "rocetop_rdma_np_cnp_sent_total");
        assert_eq!(pts.len(), 11);
        assert_eq!(pts.last(), Some(&(at + 19 * 60_000, 1900.0)));
        let (t1, v1) = pts[9];
        let (t2, v2) = pts[10];
        assert_eq!((v2 - v1) / ((t2 - t1) as f64 / 1000.0), 100.0 / 60.0);
        let loss = decode(&series, "rocetop_train_loss");
        assert_eq!(loss.last(), Some(&(at + 19 * 60_000, 2.0 - 0.19)));
        assert_eq!(loss.len(), 11);
        // A second bundle in the same second does not overwrite the first; nothing partial is left.
        let q = write_bundle_at(
            dir.path(),
            &cfg,
            &st,
            &[],
            &[],
            &Found {
                episodes: &J::Array(vec![]),
                fabric: &J::Null,
                trees: "",
            },
            at,
        )
        .expect("second");
        assert_ne!(p, q);
        assert_eq!(
            std::fs::read_to_string(q.join("alerts.txt")).expect("read"),
            "(no active alerts)\n"
        );
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("ls")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }

    /// A bundle is its owner's alone (0700, files 0600, whatever the umask lets through), and a
    /// name planted where it goes (a link to another directory, or to nowhere) is passed over,
    /// never written through.
    #[test]
    fn a_bundle_is_private_and_never_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let elsewhere = tempfile::tempdir().expect("tempdir");
        let at = 1_709_176_325_000;
        let name = bundle_name(at);
        std::os::unix::fs::symlink(elsewhere.path(), dir.path().join(&name)).expect("link");
        std::os::unix::fs::symlink(
            dir.path().join("nowhere"),
            dir.path().join(format!("{name}-2")),
        )
        .expect("link");
        let pid = std::process::id();
        std::os::unix::fs::symlink(
            elsewhere.path(),
            dir.path().join(format!(".{name}.{pid}.0.partial")),
        )
        .expect("link");
        let cfg = Config::reference();
        let p = write_bundle_at(
            dir.path(),
            &cfg,
            &store(),
            &[],
            &[],
            &Found {
                episodes: &J::Array(vec![]),
                fabric: &J::Null,
                trees: "",
            },
            at,
        )
        .expect("written");
        assert_eq!(p, dir.path().join(format!("{name}-3")));
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&p), 0o700);
        for f in FILES {
            assert_eq!(mode(&p.join(f)), 0o600, "{f}");
        }
        assert_eq!(
            std::fs::read_dir(elsewhere.path()).expect("ls").count(),
            0,
            "nothing written through a link"
        );
        assert!(!dir.path().join("nowhere").exists());
    }
}
