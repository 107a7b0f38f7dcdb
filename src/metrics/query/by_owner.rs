//! The series of some metrics grouped by the switch or node they describe, found in one pass.
//! For code that asks about every port or NIC in turn (the lossless proof, once per pair): a
//! [`Store::select`] per question scans every series of the metric, which at 64 switches of 64
//! ports (28,672 PFC-enabled series, 2,016 NICs) made one proof take seconds.

use crate::metrics::store::{Series, SeriesId};
use crate::metrics::{Store, Ts, Value};
use std::collections::HashMap;

/// One metric of one switch or node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct OwnerKey<'a> {
    name: &'a str,
    owner: &'a str,
}

/// The labels that name what a series describes, the first a series has.
const OWNERS: [&str; 2] = ["switch", "node"];

pub struct ByOwner<'a> {
    store: &'a Store,
    ids: HashMap<OwnerKey<'a>, Vec<SeriesId>>,
    names: Vec<&'a str>,
}

impl<'a> ByOwner<'a> {
    /// The series of `names` in `store`, by owner.
    pub fn new(store: &'a Store, names: &[&'a str]) -> ByOwner<'a> {
        let mut ids: HashMap<OwnerKey<'a>, Vec<SeriesId>> = HashMap::new();
        for &name in names {
            for (id, s) in store.select(name, &[]) {
                let Some(owner) = OWNERS.iter().find_map(|l| s.key.label(l)) else {
                    continue;
                };
                ids.entry(OwnerKey { name, owner }).or_default().push(id);
            }
        }
        ByOwner {
            store,
            ids,
            names: names.to_vec(),
        }
    }

    pub fn store(&self) -> &'a Store {
        self.store
    }

    /// What `store.select(name, labels)` gives, in the same order. Where the first label is the
    /// owner and `name` was indexed, only that owner's series are looked at.
    pub fn select<'q>(
        &'q self,
        name: &'q str,
        labels: &'q [(&'q str, &'q str)],
    ) -> Box<dyn Iterator<Item = (SeriesId, &'q Series)> + 'q>
    where
        'a: 'q,
    {
        let owner = labels.first().filter(|(k, _)| OWNERS.contains(k));
        match owner {
            Some(&(_, owner)) if self.names.contains(&name) => {
                let ids = self.ids.get(&OwnerKey { name, owner });
                let store = self.store;
                Box::new(
                    ids.into_iter()
                        .flatten()
                        .filter_map(move |&id| store.get(id).map(|s| (id, s)))
                        .filter(move |(_, s)| s.key.has_labels(labels)),
                )
            }
            _ => Box::new(self.store.select(name, labels)),
        }
    }

    /// Newest value of the first matching series, as [`super::latest`].
    pub fn latest(&self, name: &str, labels: &[(&str, &str)]) -> Option<(Ts, Value)> {
        self.select(name, labels)
            .find_map(|(_, s)| s.latest(self.store))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Sample;

    fn sample(name: &'static str, labels: &[(&'static str, &str)], v: f64) -> Sample {
        Sample::gauge(name, labels, v)
    }

    /// Every question the proof asks answers as a scan of the store does.
    #[test]
    fn answers_as_the_store_does() {
        let mut store = Store::new(600_000, 16);
        let src = store.add_source("s", 1000);
        let mut samples = Vec::new();
        for sw in ["leaf1", "leaf2"] {
            for port in ["Ethernet1/1", "Ethernet1/2", "all"] {
                for prio in ["0", "3", "all"] {
                    let on = if prio == "3" && port != "all" {
                        1.0
                    } else {
                        0.0
                    };
                    samples.push(sample(
                        "rocetop_switch_pfc_enabled",
                        &[("switch", sw), ("port", port), ("priority", prio)],
                        on,
                    ));
                }
            }
        }
        samples.push(sample(
            "rocetop_nic_mtu_bytes",
            &[("node", "n1"), ("netdev", "ens1")],
            9000.0,
        ));
        samples.push(sample("rocetop_switch_pfc_enabled", &[("port", "x")], 1.0));
        let parsed = crate::metrics::Parsed {
            samples,
            ..Default::default()
        };
        store.ingest(src, 1, &parsed);
        let by = ByOwner::new(
            &store,
            &["rocetop_switch_pfc_enabled", "rocetop_nic_mtu_bytes"],
        );
        let questions: &[(&str, &[(&str, &str)])] = &[
            (
                "rocetop_switch_pfc_enabled",
                &[("switch", "leaf1"), ("port", "Ethernet1/2")],
            ),
            (
                "rocetop_switch_pfc_enabled",
                &[("switch", "leaf2"), ("port", "all")],
            ),
            (
                "rocetop_switch_pfc_enabled",
                &[("switch", "leaf3"), ("port", "all")],
            ),
            ("rocetop_switch_pfc_enabled", &[("port", "x")]),
            ("rocetop_switch_pfc_enabled", &[]),
            (
                "rocetop_nic_mtu_bytes",
                &[("node", "n1"), ("netdev", "ens1")],
            ),
            (
                "rocetop_nic_mtu_bytes",
                &[("node", "n1"), ("netdev", "ens2")],
            ),
            ("rocetop_nic_rx_bytes_total", &[("node", "n1")]),
        ];
        let mut answered = 0;
        for (name, labels) in questions {
            let scan: Vec<SeriesId> = store.select(name, labels).map(|(id, _)| id).collect();
            let index: Vec<SeriesId> = by.select(name, labels).map(|(id, _)| id).collect();
            assert_eq!(index, scan, "{name} {labels:?}");
            assert_eq!(
                by.latest(name, labels),
                super::super::latest(&store, name, labels)
            );
            answered += scan.len();
        }
        assert!(answered > 20, "the questions find series ({answered})");
    }
}
