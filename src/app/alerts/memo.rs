//! The ids of alerts on groups of series, kept from one evaluation to the next: the same ~100
//! alerts are found every second, and making each id again (a walk over its key's bytes, an
//! allocation, and its free once the evaluation is done) was ~0.1 M instructions an evaluation
//! at N=8 (issue #20). A kept id is shared; looking one up compares its key's texts.

use super::rules::id_of;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::Hasher;
use std::ops::Deref;
use std::sync::Arc;

/// An alert's id as found: kept from an earlier evaluation, or made for this one.
pub(super) enum Id {
    Kept(Arc<str>),
    Made(String),
}

impl Deref for Id {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Id::Kept(s) => s,
            Id::Made(s) => s,
        }
    }
}

impl From<String> for Id {
    fn from(s: String) -> Self {
        Id::Made(s)
    }
}

impl From<Id> for String {
    fn from(id: Id) -> String {
        match id {
            Id::Kept(s) => s.to_string(),
            Id::Made(s) => s,
        }
    }
}

/// A kept id with the prefix and key it was made of.
struct Entry {
    prefix: Box<str>,
    key: Box<[Box<str>]>,
    id: Arc<str>,
}

impl Entry {
    fn is(&self, prefix: &str, key: &[&str]) -> bool {
        *self.prefix == *prefix
            && self.key.len() == key.len()
            && self.key.iter().zip(key).all(|(a, b)| **a == **b)
    }
}

/// Ids by a hash of their prefix and key; one entry a hash (a collision makes the id again).
#[derive(Default)]
pub(super) struct IdMemo {
    by_hash: FxHashMap<u64, Entry>,
}

impl std::fmt::Debug for IdMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "IdMemo({} ids)", self.by_hash.len())
    }
}

/// Entries kept at most: past this (keys come and go over a long run), all are dropped.
const MAX_ENTRIES: usize = 1 << 14;

impl IdMemo {
    /// [`id_of`]`(prefix, key)`, kept.
    pub(super) fn id(&mut self, prefix: &str, key: &[&str]) -> Id {
        let mut h = FxHasher::default();
        h.write(prefix.as_bytes());
        for k in key {
            // A separator no text holds, so ["ab", "c"] and ["a", "bc"] hash apart.
            h.write_u8(0xff);
            h.write(k.as_bytes());
        }
        let h = h.finish();
        if let Some(e) = self.by_hash.get(&h)
            && e.is(prefix, key)
        {
            return Id::Kept(e.id.clone());
        }
        if self.by_hash.len() >= MAX_ENTRIES {
            self.by_hash.clear();
        }
        let id: Arc<str> = id_of(prefix, key).into();
        let entry = Entry {
            prefix: prefix.into(),
            key: key.iter().map(|k| Box::from(*k)).collect(),
            id: id.clone(),
        };
        self.by_hash.insert(h, entry);
        Id::Kept(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept ids equal ids made afresh, through keys that share texts, keys that differ only in
    /// where their texts split, texts needing escapes, and more keys than the memo keeps.
    #[test]
    fn kept_ids_equal_made_ids() {
        let mut memo = IdMemo::default();
        let keys: Vec<Vec<String>> = (0..3 * MAX_ENTRIES / 2)
            .map(|i| match i % 5 {
                0 => vec![format!("leaf{}", i % 7), format!("Ethernet1/{i}")],
                1 => vec!["ab".into(), format!("c{}", i % 3)],
                2 => vec![format!("a{}", i % 3), "bc".into()],
                3 => vec![format!("n\"{}", i % 4), "x\\y".into()],
                _ => vec![format!("e{i}")],
            })
            .collect();
        let mut kept = 0;
        for round in 0..2 {
            for (i, k) in keys.iter().enumerate() {
                let k: Vec<&str> = k.iter().map(String::as_str).collect();
                let prefix = if i % 2 == 0 { "qdrop" } else { "pause rx" };
                let id = memo.id(prefix, &k);
                assert_eq!(&*id, id_of(prefix, &k), "round {round}, key {k:?}");
                kept += usize::from(matches!(id, Id::Kept(_)));
            }
        }
        assert_eq!(kept, 2 * keys.len());
        // One key asked again and again is one entry.
        let before = memo.by_hash.len();
        for _ in 0..3 {
            memo.id("pfc", &["leaf1", "Ethernet1/1"]);
        }
        assert!(memo.by_hash.len() <= before + 1);
    }

    /// An entry under the hash of another key is not taken for it (a collision).
    #[test]
    fn an_entry_is_checked_against_its_key() {
        let mut memo = IdMemo::default();
        let first = memo.id("qdrop", &["leaf1", "Ethernet1/1"]);
        let h = *memo.by_hash.keys().next().expect("one entry");
        // Make the entry hold another key's id under this hash.
        let other = memo.id("qdrop", &["leaf2", "Ethernet1/2"]);
        let e = memo.by_hash.remove(&h).expect("entry");
        memo.by_hash.clear();
        memo.by_hash.insert(
            h,
            Entry {
                prefix: "qdrop".into(),
                key: vec![Box::from("leaf2"), Box::from("Ethernet1/2")].into(),
                id: Arc::from(&*other),
            },
        );
        drop(e);
        assert_eq!(&*memo.id("qdrop", &["leaf1", "Ethernet1/1"]), &*first);
    }
}
