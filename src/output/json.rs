//! `snapshot --format json`: sources with their health, every series with its newest value and rate.

use crate::metrics::Store;
use serde_json::{Value as J, json};

pub fn render(store: &Store) -> String {
    let sources: Vec<J> = store
        .sources()
        .map(|(_, h)| {
            json!({
                "name": h.name,
                "up": h.up,
                "error": h.last_error,
                "down_since_ms": h.down_since,
                "last_success_ms": h.last_success,
                "unparsed_lines": h.unknown_lines,
                "notes": h.notes,
            })
        })
        .collect();
    let mut all: Vec<_> = store.all().collect();
    all.sort_by(|a, b| a.1.key.cmp(&b.1.key));
    let series: Vec<J> = all
        .into_iter()
        .filter_map(|(id, s)| {
            let (t, v) = s.latest()?;
            let labels: serde_json::Map<String, J> = s
                .key
                .labels
                .iter()
                .map(|(k, v)| ((*k).to_string(), J::from(v.as_str())))
                .collect();
            let rate = store.rate(id).and_then(|r| r.value());
            Some(json!({
                "name": s.key.name,
                "labels": labels,
                "kind": if v.is_counter() { "counter" } else { "gauge" },
                "value": v.as_f64(),
                "at_ms": t,
                "rate_per_second": rate,
                "reset": store.reset_in_last(id),
            }))
        })
        .collect();
    let doc = json!({ "sources": sources, "series": series });
    serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}
