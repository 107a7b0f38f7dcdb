//! Prometheus and node_exporter found, or a counted skip. Test crates only: the crate root declares
//! `mod prom` (`common/prom.rs`) and `mod skip` (`common/skip.rs`), which examples cannot (skip.rs
//! needs `CARGO_TARGET_TMPDIR`; `cargo test --all-targets` builds examples with cfg(test) too, so a
//! cfg gate in prom.rs does not keep them out).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The binaries, or a counted skip (`skip.rs`: printed and summed up by `scripts/test.sh`; a
/// failure under CI, where the script installs them).
pub fn prometheus(test: &str) -> Option<(PathBuf, PathBuf)> {
    match crate::prom::binaries() {
        Ok(b) => Some(b),
        Err(e) => {
            crate::skip::skip(test, crate::skip::Lack::Installed("prometheus"), &e);
            None
        }
    }
}

/// Debian's `prometheus-node-exporter` (upstream's `node_exporter`), or a counted skip (a failure
/// under CI, where scripts/test.sh installs it).
pub fn node_exporter(test: &str) -> Option<PathBuf> {
    let found = ["/usr/bin", "/usr/local/bin", "/bin"]
        .iter()
        .flat_map(|d| ["prometheus-node-exporter", "node_exporter"].map(|n| Path::new(d).join(n)))
        .find(|p| p.exists());
    if found.is_none() {
        crate::skip::skip(
            test,
            crate::skip::Lack::Installed("prometheus-node-exporter"),
            "prometheus-node-exporter is not installed (apt-get install prometheus-node-exporter)",
        );
    }
    found
}
