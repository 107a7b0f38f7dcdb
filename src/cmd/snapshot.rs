//! `rocetop snapshot`: poll every source twice, print counters with rates, exit non-zero naming
//! every source that failed and why.

use crate::collect::poll::poll_all;
use crate::config::Config;
use crate::metrics::Store;
use crate::output::{Format, json, prom, table};
use std::sync::Arc;
use std::time::Duration;

pub struct Outcome {
    pub text: String,
    /// "name: reason" for every source whose last poll failed.
    pub failed: Vec<String>,
}

pub async fn run(cfg: &Config, format: Format, interval: Duration) -> Outcome {
    let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 16);
    let sources: Vec<Arc<_>> = super::build_sources(cfg, &mut store, super::remote())
        .into_iter()
        .map(Arc::new)
        .collect();
    super::warm_up(cfg, &sources).await;
    for round in 0..2 {
        if round == 1 {
            tokio::time::sleep(interval).await;
        }
        for c in poll_all(&sources).await {
            c.apply(&mut store);
        }
    }
    let failed = store
        .sources()
        .filter(|(_, h)| h.up != Some(true))
        .map(|(_, h)| {
            format!(
                "{}: {}",
                h.name,
                h.last_error.as_deref().unwrap_or("no answer")
            )
        })
        .collect();
    let text = match format {
        Format::Prom => prom::render(&store, true, true),
        Format::Json => json::render(&store),
        Format::Table => table::render(&store),
    };
    Outcome { text, failed }
}
