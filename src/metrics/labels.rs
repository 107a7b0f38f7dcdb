//! [`Labels`]: a series' label set, sorted by name and shared. A switch answer's row makes about
//! ten series with the same labels (switch, port, QoS group), and a vector of `(name, Str)` per
//! sample was ~100 bytes a sample, most of a parsed port's cost (issue #22). A `Labels` is an
//! immutable `Arc` slice, and sets made one after another are shared through a small per-thread
//! memo of the last sets seen, as [`Str`] shares texts: a row's label set is allocated once.
//!
//! The memo is not state anyone reads: a miss makes a set equal to the one a hit would have
//! returned, so parsers stay pure functions of their text. It holds at most [`SLOTS`] sets of at
//! most [`MAX_CACHED`] labels.

use super::{LabelName, Str};
use serde::Serialize;
use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A sorted label set; compares, hashes, orders and serializes as its slice (as a `Vec` did, so
/// keys hash and sort as before).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Labels(Arc<[(LabelName, Str)]>);

/// Memo slots (direct-mapped by a hash of the set).
const SLOTS: usize = 8;
/// Larger sets are not memoised.
const MAX_CACHED: usize = 8;

thread_local! {
    static RECENT: RefCell<[Option<Labels>; SLOTS]> = const { RefCell::new([const { None }; SLOTS]) };
}

fn slot_of(labels: &[(LabelName, &str)]) -> usize {
    // FNV-1a over the values (the names follow from the parser); only picks a slot.
    let mut h: u32 = 0x811c_9dc5;
    for (_, v) in labels {
        for b in v.bytes().chain([0xff]) {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    }
    (h as usize) % SLOTS
}

fn sorted(labels: &[(LabelName, &str)]) -> bool {
    labels.windows(2).all(|w| w[0].0 < w[1].0)
}

impl Labels {
    /// The set of `labels`, sorted by name, a name given twice kept once (its first value).
    pub fn new(labels: &[(LabelName, &str)]) -> Labels {
        // Parsers mostly pass their labels in order, with no name twice: those are memoised.
        if !sorted(labels) || labels.len() > MAX_CACHED {
            return Labels::from_vec(labels.iter().map(|(k, v)| (*k, Str::from(*v))).collect());
        }
        let i = slot_of(labels);
        let make = || Labels(labels.iter().map(|(k, v)| (*k, Str::from(*v))).collect());
        RECENT
            .try_with(|c| {
                let mut c = c.borrow_mut();
                match &c[i] {
                    Some(hit) if hit.equals(labels) => hit.clone(),
                    _ => {
                        let new = make();
                        c[i] = Some(new.clone());
                        new
                    }
                }
            })
            // The thread is ending: no memo, still the same set.
            .unwrap_or_else(|_| make())
    }

    /// A set from owned labels in any order (sorted here; a name twice kept once).
    pub fn from_vec(mut v: Vec<(LabelName, Str)>) -> Labels {
        if !v.windows(2).all(|w| w[0].0 < w[1].0) {
            v.sort_by(|a, b| a.0.cmp(b.0));
            v.dedup_by(|a, b| a.0 == b.0);
        }
        Labels(v.into())
    }

    fn equals(&self, labels: &[(LabelName, &str)]) -> bool {
        self.0.len() == labels.len()
            && self
                .0
                .iter()
                .zip(labels)
                .all(|((k, v), (k2, v2))| k == k2 && v.as_str() == *v2)
    }

    /// Whether two sets are one allocation (for tests of the sharing).
    pub fn shares(&self, o: &Labels) -> bool {
        Arc::ptr_eq(&self.0, &o.0)
    }
}

impl Default for Labels {
    fn default() -> Self {
        Labels(Arc::from([]))
    }
}

impl Deref for Labels {
    type Target = [(LabelName, Str)];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = &'a (LabelName, Str);
    type IntoIter = std::slice::Iter<'a, (LabelName, Str)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(ser)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

    #[test]
    fn a_rows_samples_share_one_label_set() {
        let a = Labels::new(&[("port", "Ethernet1/1/1"), ("switch", "sw")]);
        let b = Labels::new(&[("port", "Ethernet1/1/1"), ("switch", "sw")]);
        assert!(a.shares(&b));
        let c = Labels::new(&[("port", "Ethernet1/1/2"), ("switch", "sw")]);
        assert!(!a.shares(&c));
        assert_ne!(a, c);
        // A hit never returns another set: same names, other value; same values, other names.
        assert_eq!(
            &*Labels::new(&[("port", "Ethernet1/1/1"), ("switch", "sx")]),
            &[
                ("port", Str::from("Ethernet1/1/1")),
                ("switch", Str::from("sx"))
            ][..]
        );
        assert_eq!(
            &*Labels::new(&[("node", "Ethernet1/1/1"), ("switch", "sw")]),
            &[
                ("node", Str::from("Ethernet1/1/1")),
                ("switch", Str::from("sw"))
            ][..]
        );
    }

    #[test]
    fn unsorted_and_repeated_names_are_sorted_and_kept_once() {
        let l = Labels::new(&[("switch", "sw"), ("port", "p1"), ("port", "p2")]);
        assert_eq!(
            &*l,
            &[("port", Str::from("p1")), ("switch", Str::from("sw"))][..]
        );
    }

    #[test]
    fn hashes_orders_and_serializes_as_the_vec_it_replaced() {
        let v: Vec<(LabelName, Str)> = vec![("port", Str::from("p1")), ("switch", Str::from("sw"))];
        let l = Labels::new(&[("port", "p1"), ("switch", "sw")]);
        let h = BuildHasherDefault::<DefaultHasher>::default();
        assert_eq!(h.hash_one(&l), h.hash_one(&v));
        assert_eq!(
            serde_json::to_string(&l).expect("json"),
            serde_json::to_string(&v).expect("json")
        );
        let m = Labels::new(&[("port", "p2"), ("switch", "sw")]);
        assert!(l < m);
        assert!(Labels::default().is_empty());
    }
}
