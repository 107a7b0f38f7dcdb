//! The machine rocetop runs on: sysfs read directly (no shell, no SSH to itself), `ethtool`
//! spawned without a shell, files read natively.

use super::transport::{CollectError, Request, StreamEvent, Transport};
use crate::config::expand::expand_home;
use async_trait::async_trait;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;

#[derive(Debug, Default)]
pub struct LocalTransport;

#[async_trait]
impl Transport for LocalTransport {
    async fn run(&self, req: &Request, timeout: Duration) -> Result<String, CollectError> {
        let req = req.clone();
        let work = async move {
            match req {
                Request::SysfsDump {
                    root,
                    devices,
                    netdevs,
                } => tokio::task::spawn_blocking(move || sysfs_dump(&root, &devices, &netdevs))
                    .await
                    .map_err(|e| CollectError::Io(e.to_string()))?,
                Request::Ethtool { netdev } => ethtool(&netdev).await,
                Request::Tail { path, lines } | Request::Follow { path, lines } => {
                    tokio::task::spawn_blocking(move || tail(&expand_home(&path), lines))
                        .await
                        .map_err(|e| CollectError::Io(e.to_string()))?
                }
                r @ (Request::Lldp
                | Request::HostQos { .. }
                | Request::Gpu { .. }
                | Request::GpuTopo { .. }) => sh(&r.shell()).await,
                Request::Cli(c) => Err(CollectError::Unavailable(format!(
                    "'{c}' is a switch command; this source has no switch transport"
                ))),
                Request::PromQueries => Err(CollectError::Unavailable(
                    "Prometheus queries need a [[prometheus]] source".into(),
                )),
            }
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| CollectError::Timeout(timeout))?
    }

    /// `Request::Follow`: the native `tail -F` (crate::collect::logtail::local).
    async fn stream(&self, req: &Request) -> Result<mpsc::Receiver<StreamEvent>, CollectError> {
        match req {
            Request::Follow { path, lines } => Ok(crate::collect::logtail::local::follow(
                &expand_home(path),
                *lines,
            )),
            _ => Err(CollectError::Unavailable(format!(
                "local cannot stream {req:?}"
            ))),
        }
    }

    fn describe(&self) -> String {
        "local".into()
    }
}

/// The same `path:value` lines `grep -rs .` prints for [`Request::SysfsDump`].
pub fn sysfs_dump(
    root: &str,
    devices: &[String],
    netdevs: &[String],
) -> Result<String, CollectError> {
    let ib = Path::new(root).join("class/infiniband");
    let mut out = String::new();
    let devs: Vec<PathBuf> = if devices.is_empty() {
        match std::fs::read_dir(&ib) {
            Ok(rd) => {
                let mut v: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
                v.sort();
                v
            }
            Err(_) => Vec::new(),
        }
    } else {
        devices.iter().map(|d| ib.join(d)).collect()
    };
    for dev in devs {
        let Ok(ports) = std::fs::read_dir(dev.join("ports")) else {
            continue;
        };
        let mut ports: Vec<PathBuf> = ports.filter_map(|e| e.ok().map(|e| e.path())).collect();
        ports.sort();
        for port in ports {
            for sub in ["hw_counters", "counters", "gid_attrs/ndevs"] {
                dump_dir(&port.join(sub), &mut out);
            }
            dump_file(&port.join("state"), &mut out);
        }
    }
    for n in netdevs {
        dump_dir(
            &Path::new(root).join("class/net").join(n).join("statistics"),
            &mut out,
        );
    }
    Ok(out)
}

fn dump_dir(dir: &Path, out: &mut String) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for f in files {
        if f.is_dir() {
            dump_dir(&f, out);
        } else {
            dump_file(&f, out);
        }
    }
}

fn dump_file(f: &Path, out: &mut String) {
    // Unreadable files (write-only, EINVAL for unused GIDs) are skipped, as `grep -s` does.
    if let Ok(text) = std::fs::read_to_string(f) {
        for line in text.lines().filter(|l| !l.is_empty()) {
            let _ = writeln!(out, "{}:{line}", f.display());
        }
    }
}

/// A host request that is a shell line (it never fails for a missing tool: it says so).
async fn sh(line: &str) -> Result<String, CollectError> {
    let out = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(line)
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| CollectError::Unavailable(format!("sh: {e}")))?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

async fn ethtool(netdev: &str) -> Result<String, CollectError> {
    let out = tokio::process::Command::new("ethtool")
        .arg("-S")
        .arg(netdev)
        .env("LC_ALL", "C")
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| CollectError::Unavailable(format!("ethtool: {e}")))?;
    if !out.status.success() {
        return Err(CollectError::Command {
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    // Same shape as the remote command: the echoed command names the netdev.
    Ok(format!(
        "ethtool -S {netdev}\n{}",
        String::from_utf8_lossy(&out.stdout)
    ))
}

/// The last `lines` lines of a file, reading at most the last 1 MiB.
pub fn tail(path: &Path, lines: usize) -> Result<String, CollectError> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)
        .map_err(|e| CollectError::Io(format!("{}: {e}", path.display())))?;
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let start = len.saturating_sub(1 << 20);
    f.seek(SeekFrom::Start(start))
        .map_err(|e| CollectError::Io(e.to_string()))?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)
        .map_err(|e| CollectError::Io(e.to_string()))?;
    let text = String::from_utf8_lossy(&buf);
    let all: Vec<&str> = text.lines().collect();
    let from = all.len().saturating_sub(lines);
    let mut s = all[from..].join("\n");
    s.push('\n');
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysfs_dump_prints_path_value_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let hc = dir
            .path()
            .join("class/infiniband/rocep11s0/ports/1/hw_counters");
        std::fs::create_dir_all(&hc).expect("mkdir");
        std::fs::write(hc.join("np_cnp_sent"), "42\n").expect("write");
        std::fs::write(hc.parent().expect("port").join("state"), "4: ACTIVE\n").expect("write");
        let root = dir.path().to_string_lossy().to_string();
        let out = sysfs_dump(&root, &[], &[]).expect("dump");
        assert!(
            out.contains("/ports/1/hw_counters/np_cnp_sent:42\n"),
            "{out}"
        );
        assert!(out.contains("/ports/1/state:4: ACTIVE\n"), "{out}");
    }

    #[test]
    fn tail_returns_last_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("log");
        std::fs::write(&p, "a\nb\nc\nd\n").expect("write");
        assert_eq!(tail(&p, 2).expect("tail"), "c\nd\n");
        assert!(tail(&dir.path().join("missing"), 2).is_err());
    }
}
