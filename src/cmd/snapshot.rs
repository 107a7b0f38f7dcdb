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
    let mut episodes = crate::app::episodes::Episodes::default();
    let rules = crate::app::episodes::Rules::of(cfg);
    for round in 0..2 {
        if round == 1 {
            tokio::time::sleep(interval).await;
        }
        let mut at = 0;
        for c in poll_all(&sources).await {
            at = at.max(c.at);
            c.apply(&mut store);
        }
        // Which node is behind which port: config, else the LLDP just read.
        let links = crate::app::pairing::Links::of(cfg, &store);
        let mut obs = crate::app::episodes::observe(&store, at);
        // The tree the live screen gives its episodes (their root and spread).
        let fabric = crate::app::fabric::Fabric::of(cfg, &store, &links);
        obs.pause_tree = Some(std::sync::Arc::new(
            crate::app::fabric::observe::pause_tree_of(&store, &fabric),
        ));
        obs.rails = std::sync::Arc::new(fabric.rails());
        episodes.update(&obs, &rules, &links);
    }
    // A topology read that failed is not a failed snapshot: no counter depends on it.
    let rare: Vec<_> = sources
        .iter()
        .filter(|s| s.kind == crate::collect::source::SourceKind::Topology)
        .map(|s| s.id)
        .collect();
    let failed = store
        .sources()
        .filter(|(id, h)| h.up != Some(true) && !rare.contains(id))
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
        Format::Json => {
            let links = crate::app::pairing::Links::of(cfg, &store);
            let fabric = crate::app::fabric::Fabric::of(cfg, &store, &links);
            let tree = crate::app::fabric::observe::pause_tree_of(&store, &fabric);
            with_episodes(&store, &episodes, &links, &fabric, &tree)
        }
        Format::Table => table::render(&store, table::Silent::NoAnswer),
    };
    Outcome { text, failed }
}

/// `episodes`, the fabric graph and its `pause_tree` beside the sources and series: what the detector found over the snapshot's polls
/// (with two polls there is no baseline yet, so normally none; the note says so). Written with
/// them as the document is made (`json::document`), never read back into a tree.
fn with_episodes(
    store: &Store,
    eps: &crate::app::episodes::Episodes,
    links: &crate::app::pairing::Links,
    fabric: &crate::app::fabric::Fabric,
    tree: &crate::app::fabric::pause_tree::PauseTree,
) -> String {
    let now = eps.all().first().map_or(0, |e| e.last_abnormal);
    let note = format!(
        "each signal is judged against its own last {} calm values; a snapshot polls twice, so \
         episodes come from the live screen, its incident bundle (S) and replay",
        crate::app::episodes::BASE_MIN
    );
    json::document(
        store,
        vec![
            (
                "episodes",
                crate::app::episodes::text::json(&eps.all(), links, now),
            ),
            ("episodes_note", note.into()),
            ("fabric", crate::app::fabric::json(fabric)),
            ("pause_tree", crate::app::fabric::pause_tree::json(tree)),
        ],
    )
}
