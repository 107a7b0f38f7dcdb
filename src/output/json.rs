//! `snapshot --format json`: sources with their health, every series with its newest value and rate.
//! The document is written as it is made: each series' object is built, written and dropped in
//! turn, never a tree of the whole store (a 125k-port switch is over a million series).

use crate::metrics::Store;
use crate::metrics::store::Series;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use serde_json::{Value as J, json};

pub fn render(store: &Store) -> String {
    document(store, Vec::new())
}

/// `{"series": [...], "sources": [...]}` with `extra` fields beside them, pretty-printed: the bytes
/// `serde_json::to_string_pretty` gives for the tree of it (keys in a `serde_json::Map`'s order).
pub fn document(store: &Store, extra: Vec<(&'static str, J)>) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::pretty(&mut out);
    match (Doc { store, extra }).serialize(&mut ser) {
        Ok(()) => String::from_utf8(out).unwrap_or_default(),
        Err(e) => format!("{{\"error\": \"{e}\"}}"),
    }
}

struct Doc<'a> {
    store: &'a Store,
    extra: Vec<(&'static str, J)>,
}

impl Serialize for Doc<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        // A `serde_json::Map` (no `preserve_order`) is sorted by key.
        let mut keys: Vec<&str> = self.extra.iter().map(|(k, _)| *k).collect();
        keys.extend(["series", "sources"]);
        keys.sort_unstable();
        keys.dedup();
        let mut m = ser.serialize_map(Some(keys.len()))?;
        for k in keys {
            match (k, self.extra.iter().find(|(x, _)| *x == k)) {
                (_, Some((_, v))) => m.serialize_entry(k, v)?,
                ("series", None) => m.serialize_entry(k, &AllSeries(self.store))?,
                _ => m.serialize_entry(k, &Sources(self.store))?,
            }
        }
        m.end()
    }
}

struct Sources<'a>(&'a Store);

impl Serialize for Sources<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.0.sources().map(|(_, h)| {
            json!({
                "name": h.name,
                "up": h.up,
                "error": h.last_error,
                "down_since_ms": h.down_since,
                "last_success_ms": h.last_success,
                "unparsed_lines": h.unknown_lines,
                "notes": h.notes,
            })
        }))
    }
}

struct AllSeries<'a>(&'a Store);

impl Serialize for AllSeries<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let store = self.0;
        let mut all: Vec<_> = store.all().collect();
        all.sort_by(|a, b| a.1.key.cmp(&b.1.key));
        ser.collect_seq(all.into_iter().filter_map(|(id, s)| one(store, id, s)))
    }
}

/// One series' object.
fn one(store: &Store, id: crate::metrics::SeriesId, s: &Series) -> Option<J> {
    let (t, v) = s.latest(store)?;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    /// The tree `render` built before it wrote as it went: the same bytes, with and without
    /// fields beside the series.
    fn as_tree(store: &Store, extra: &[(&str, J)]) -> String {
        let sources: Vec<J> = store
            .sources()
            .map(|(_, h)| {
                json!({"name": h.name, "up": h.up, "error": h.last_error,
                    "down_since_ms": h.down_since, "last_success_ms": h.last_success,
                    "unparsed_lines": h.unknown_lines, "notes": h.notes})
            })
            .collect();
        let mut all: Vec<_> = store.all().collect();
        all.sort_by(|a, b| a.1.key.cmp(&b.1.key));
        let series: Vec<J> = all
            .into_iter()
            .filter_map(|(id, s)| one(store, id, s))
            .collect();
        let mut doc = json!({ "sources": sources, "series": series });
        for (k, v) in extra {
            doc[*k] = v.clone();
        }
        serde_json::to_string_pretty(&doc).expect("a tree")
    }

    #[test]
    fn written_as_made_it_is_the_tree_it_was() {
        let mut st = Store::new(60_000, 16);
        assert_eq!(render(&st), as_tree(&st, &[]));
        let src = st.add_source("n1", 1000);
        st.add_source("down", 1000);
        let poll = |v: u64| Parsed {
            samples: vec![
                Sample::counter("c_total", &[("node", "n1"), ("priority", "3")], v),
                Sample::gauge("g", &[("node", "n\"1\u{1b}")], f64::NAN),
                Sample::counter_micros("s_seconds_total", &[], v * 7),
            ],
            notes: vec!["a note".into()],
            ..Default::default()
        };
        st.ingest(src, 0, &poll(10));
        st.ingest(src, 2000, &poll(30));
        assert_eq!(render(&st), as_tree(&st, &[]));
        let extra = vec![
            ("episodes", json!([])),
            ("episodes_note", json!("each signal")),
        ];
        assert_eq!(document(&st, extra.clone()), as_tree(&st, &extra));
        assert!(render(&st).contains("\"c_total\""));
    }
}
