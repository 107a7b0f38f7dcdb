//! [`Labels`]: a series' label set, sorted by name. A switch answer's row makes about ten series
//! that share their switch and port and differ in a priority or a direction; a set of its own
//! per sample (`Arc<[(name, value)]>`, ~112 bytes) was most of a parsed sample's and a stored
//! series' cost. So a set is two parts: the labels whose value is one of a small
//! closed vocabulary ([`OWN_NAMES`] with [`OWN_VALUES`]: priorities, DSCP values, directions) are
//! held inline as numbers into one static table, at most [`MAX_OWN`] of them, and the rest is an
//! immutable shared `Arc` slice. Sets made one after another share that slice through a small
//! per-thread memo of the last ones seen, as [`Str`] shares texts: a row's ten series hold one.
//!
//! Which label goes where is a function of the set alone, so equal sets have equal parts. The
//! memo is not state anyone reads: a miss makes a set equal to the one a hit would have
//! returned, so parsers stay pure functions of their text. It holds at most [`SLOTS`] sets of at
//! most [`MAX_CACHED`] labels.

use super::{LabelName, Str};
use serde::Serialize;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

/// A sorted label set; compares, hashes, orders and serializes as the slice of its labels in
/// name order (as a `Vec` did, so keys hash and sort as before).
#[derive(Clone)]
pub struct Labels {
    shared: Shared,
    /// Indices into [`OWN`] (0: none), in name order.
    own: [u16; MAX_OWN],
}

/// The labels held in an allocation of their own, shared by the sets that have them: behind
/// one pointer (an `Arc<[_]>` is two words), so a set is 16 bytes and a stored series' key 24.
type Shared = Arc<Box<[(LabelName, Str)]>>;

/// The shared part of sets with no label outside the vocabulary (one allocation per process).
static EMPTY: LazyLock<Shared> = LazyLock::new(|| Arc::new(Box::new([])));

/// Label names whose closed values are held inline.
const OWN_NAMES: [&str; 6] = [
    "direction",
    "dscp",
    "priority",
    "qos_group",
    "rdma_port",
    "tc",
];
/// Their values held inline: `0`..`63`, `all`, `rx`, `tx`.
const NUMBERS: usize = 64;
const OWN_VALUES: usize = NUMBERS + 3;
/// Inline labels at most (a series is named by a priority and a direction at most).
const MAX_OWN: usize = 2;

/// Every (name, value) pair held inline, at index 1 + name × OWN_VALUES + value.
static OWN: LazyLock<Vec<(LabelName, Str)>> = LazyLock::new(|| {
    let mut v = vec![("", Str::from(""))];
    for n in OWN_NAMES {
        for i in 0..OWN_VALUES {
            let text = match i {
                i if i < NUMBERS => i.to_string(),
                i if i == NUMBERS => "all".into(),
                i if i == NUMBERS + 1 => "rx".into(),
                _ => "tx".into(),
            };
            v.push((n, Str::from(text)));
        }
    }
    v
});

/// The inline index of a label, if its name and value are of the closed vocabulary.
fn own_index(name: &str, value: &str) -> Option<u16> {
    // A match, not a search: most labels asked about (port, switch) are not of the vocabulary.
    let n = match name {
        "direction" => 0,
        "dscp" => 1,
        "priority" => 2,
        "qos_group" => 3,
        "rdma_port" => 4,
        "tc" => 5,
        _ => return None,
    };
    let b = value.as_bytes();
    let v = match value {
        "all" => NUMBERS,
        "rx" => NUMBERS + 1,
        "tx" => NUMBERS + 2,
        // `0`..`63` as written by `to_string` (no sign, no leading zero).
        _ if !b.is_empty()
            && b.len() <= 2
            && b.iter().all(u8::is_ascii_digit)
            && (b.len() == 1 || b[0] != b'0') =>
        {
            let v: usize = value.parse().ok()?;
            (v < NUMBERS).then_some(v)?
        }
        _ => return None,
    };
    u16::try_from(1 + n * OWN_VALUES + v).ok()
}

/// Memo slots (direct-mapped by a hash of the set).
const SLOTS: usize = 8;
/// Larger sets are not memoised.
const MAX_CACHED: usize = 8;

thread_local! {
    static RECENT: RefCell<[Option<Shared>; SLOTS]> =
        const { RefCell::new([const { None }; SLOTS]) };
}

fn slot_of<'a>(labels: impl Iterator<Item = &'a (LabelName, &'a str)>) -> usize {
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

/// The inline part of a sorted set without repeated names: the first [`MAX_OWN`] labels of the
/// closed vocabulary.
fn split<'a>(labels: impl Iterator<Item = (LabelName, &'a str)>) -> [u16; MAX_OWN] {
    let mut own = [0u16; MAX_OWN];
    let mut n = 0;
    for (k, v) in labels {
        if n == MAX_OWN {
            break;
        }
        if let Some(i) = own_index(k, v) {
            own[n] = i;
            n += 1;
        }
    }
    own
}

fn is_own(own: &[u16; MAX_OWN], i: u16) -> bool {
    i != 0 && own.contains(&i)
}

impl Labels {
    /// The set of `labels`, sorted by name, a name given twice kept once (its first value).
    pub fn new(labels: &[(LabelName, &str)]) -> Labels {
        // Parsers mostly pass their labels in order, with no name twice: those are memoised.
        if !sorted(labels) || labels.len() > MAX_CACHED {
            return Labels::from_vec(labels.iter().map(|(k, v)| (*k, Str::from(*v))).collect());
        }
        let own = split(labels.iter().copied());
        let rest = || {
            labels
                .iter()
                .filter(move |(k, v)| !own_index(k, v).is_some_and(|i| is_own(&own, i)))
        };
        let make = || -> Shared {
            let v: Box<[_]> = rest().map(|(k, v)| (*k, Str::from(*v))).collect();
            if v.is_empty() {
                EMPTY.clone()
            } else {
                Arc::new(v)
            }
        };
        let i = slot_of(rest());
        let shared = RECENT
            .try_with(|c| {
                let mut c = c.borrow_mut();
                match &c[i] {
                    Some(hit) if equals(hit, rest()) => hit.clone(),
                    _ => {
                        let new = make();
                        c[i] = Some(new.clone());
                        new
                    }
                }
            })
            // The thread is ending: no memo, still the same set.
            .unwrap_or_else(|_| make());
        Labels { shared, own }
    }

    /// A set from owned labels in any order (sorted here; a name twice kept once).
    pub fn from_vec(mut v: Vec<(LabelName, Str)>) -> Labels {
        if !v.windows(2).all(|w| w[0].0 < w[1].0) {
            v.sort_by(|a, b| a.0.cmp(b.0));
            v.dedup_by(|a, b| a.0 == b.0);
        }
        let own = split(v.iter().map(|(k, v)| (*k, v.as_str())));
        v.retain(|(k, x)| !own_index(k, x).is_some_and(|i| is_own(&own, i)));
        let shared = if v.is_empty() {
            EMPTY.clone()
        } else {
            Arc::new(v.into_boxed_slice())
        };
        Labels { shared, own }
    }

    /// The labels in name order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            shared: &self.shared[..],
            own: &self.own,
            s: 0,
            o: 0,
        }
    }

    /// Whether this is the set `Labels::new(labels)` makes, without making it: the same labels,
    /// in any order, none named twice (a name given twice is never taken for a match).
    pub fn is(&self, labels: &[(LabelName, &str)]) -> bool {
        let same =
            |(k, v): &(LabelName, &str), (k2, v2): &(LabelName, Str)| k == k2 && v2.as_str() == *v;
        if sorted(labels) {
            // The parts `new` would make (as `split` and the shared part's filter take them: the
            // first MAX_OWN labels of the vocabulary inline, the rest shared), compared where
            // they live in one pass: walking the merged labels cost more than making the set.
            let (mut own, mut n, mut s) = ([0u16; MAX_OWN], 0, 0);
            for &(k, v) in labels {
                if n < MAX_OWN
                    && let Some(i) = own_index(k, v)
                {
                    own[n] = i;
                    n += 1;
                    continue;
                }
                match self.shared.get(s) {
                    Some((k2, v2)) if *k2 == k && v2.as_str() == v => s += 1,
                    _ => return false,
                }
            }
            return own == self.own && s == self.shared.len();
        }
        let once = labels
            .iter()
            .enumerate()
            .all(|(i, (k, _))| labels[..i].iter().all(|(k2, _)| k2 != k));
        once && labels.len() == self.len() && labels.iter().all(|l| self.iter().any(|m| same(l, m)))
    }

    pub fn len(&self) -> usize {
        self.shared.len() + self.own.iter().filter(|&&i| i != 0).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn to_vec(&self) -> Vec<(LabelName, Str)> {
        self.iter().cloned().collect()
    }

    /// Whether two sets hold their shared part in one allocation (for tests of the sharing).
    pub fn shares(&self, o: &Labels) -> bool {
        Arc::ptr_eq(&self.shared, &o.shared)
    }
}

fn equals<'a>(
    set: &[(LabelName, Str)],
    mut labels: impl Iterator<Item = &'a (LabelName, &'a str)>,
) -> bool {
    set.iter().all(|(k, v)| {
        labels
            .next()
            .is_some_and(|(k2, v2)| k == k2 && v.as_str() == *v2)
    }) && labels.next().is_none()
}

/// The labels of a set in name order: its shared slice and its inline labels merged.
pub struct Iter<'a> {
    shared: &'a [(LabelName, Str)],
    own: &'a [u16; MAX_OWN],
    s: usize,
    o: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a (LabelName, Str);

    fn next(&mut self) -> Option<Self::Item> {
        let own = self
            .own
            .get(self.o)
            .filter(|&&i| i != 0)
            .and_then(|&i| OWN.get(usize::from(i)));
        let shared = self.shared.get(self.s);
        match (shared, own) {
            (Some(a), Some(b)) if a.0 > b.0 => {
                self.o += 1;
                Some(b)
            }
            (Some(a), _) => {
                self.s += 1;
                Some(a)
            }
            (None, Some(b)) => {
                self.o += 1;
                Some(b)
            }
            (None, None) => None,
        }
    }
}

impl<'a> IntoIterator for &'a Labels {
    type Item = &'a (LabelName, Str);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Default for Labels {
    fn default() -> Self {
        Labels {
            shared: EMPTY.clone(),
            own: [0; MAX_OWN],
        }
    }
}

/// Equal sets have equal parts (the split is a function of the set).
impl PartialEq for Labels {
    fn eq(&self, o: &Labels) -> bool {
        self.own == o.own
            && (Arc::ptr_eq(&self.shared, &o.shared) || same_labels(&self.shared, &o.shared))
    }
}

/// Two shared parts compared label by label, each name and value first by where its text lives:
/// names are the parsers' static texts and values [`Str`]s shared by the memo, so a key compared
/// with the same key of the last poll (every sample, on ingest) mostly needs no `memcmp` call.
fn same_labels(a: &[(LabelName, Str)], b: &[(LabelName, Str)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((k, v), (k2, v2))| (std::ptr::eq(*k, *k2) || k == k2) && v == v2)
}

impl Eq for Labels {}

/// As the slice of its labels: the length, then each label.
impl Hash for Labels {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.len());
        for l in self {
            l.hash(state);
        }
    }
}

impl PartialOrd for Labels {
    fn partial_cmp(&self, o: &Labels) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Labels {
    fn cmp(&self, o: &Labels) -> Ordering {
        if self == o {
            return Ordering::Equal;
        }
        self.iter().cmp(o.iter())
    }
}

impl fmt::Debug for Labels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Labels {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::super::SeriesKey;
    use super::*;
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};

    /// `is` answers what making the set and comparing it would, for sets in and out of order,
    /// with a name twice, inline (vocabulary) and shared labels, one label more or less.
    #[test]
    fn is_answers_as_making_the_set_would() {
        let sets: Vec<Vec<(LabelName, &str)>> = vec![
            vec![],
            vec![("port", "E1/1"), ("switch", "sw")],
            vec![("switch", "sw"), ("port", "E1/1")],
            vec![("port", "E1/1"), ("switch", "sx")],
            vec![("port", "E1/1"), ("priority", "3"), ("switch", "sw")],
            vec![("switch", "sw"), ("priority", "3"), ("port", "E1/1")],
            vec![("port", "E1/1"), ("priority", "03"), ("switch", "sw")],
            vec![("port", "E1/1"), ("priority", "4"), ("switch", "sw")],
            vec![("port", "E1/1"), ("port", "E1/1"), ("switch", "sw")],
            vec![("switch", "sw"), ("port", "E1/1"), ("switch", "sw")],
            vec![("port", "E1/1"), ("switch", "sw"), ("switch", "sx")],
            vec![("direction", "rx"), ("port", "E1/1"), ("priority", "3")],
            vec![
                ("direction", "rx"),
                ("port", "E1/1"),
                ("priority", "3"),
                ("switch", "sw"),
            ],
            vec![("port", "E1/1")],
            vec![
                ("port", "E1/1"),
                ("qos_group", "all"),
                ("reason", "wred"),
                ("switch", "sw"),
            ],
            vec![
                ("switch", "sw"),
                ("port", "E1/1"),
                ("qos_group", "all"),
                ("reason", "wred"),
            ],
        ];
        let mut taken = 0;
        for a in &sets {
            let made = Labels::new(a);
            for b in &sets {
                let equal = made == Labels::new(b);
                let named_twice = b
                    .iter()
                    .enumerate()
                    .any(|(i, (k, _))| b[..i].iter().any(|x| x.0 == *k));
                // A name twice is never a match; else `is` is equality.
                assert_eq!(made.is(b), equal && !named_twice, "{a:?} is {b:?}");
                taken += usize::from(made.is(b));
            }
        }
        assert!(taken >= sets.len(), "every set is itself ({taken})");
        // The vocabulary's names are matched in OWN_NAMES's order.
        for n in OWN_NAMES {
            let i = own_index(n, "3").map(usize::from);
            assert_eq!(
                i.and_then(|i| OWN.get(i)).map(|(k, v)| (*k, v.as_str())),
                Some((n, "3"))
            );
        }
        let key = SeriesKey::new("m", &[("port", "E1/1"), ("switch", "sw")]);
        assert!(key.is("m", &[("switch", "sw"), ("port", "E1/1")]));
        assert!(!key.is("n", &[("port", "E1/1"), ("switch", "sw")]));
    }

    /// Equality by where texts live first answers as comparing the labels' texts: sets that share
    /// nothing (own slices, names at other addresses, values not from the memo), same or not.
    #[test]
    fn equality_is_the_labels_texts_wherever_they_live() {
        let long = "x".repeat(80);
        let other_port: LabelName = Box::leak(String::from("port").into_boxed_str());
        let fresh = |v: Vec<(LabelName, &str)>| {
            // `Str::from` shares memoised texts; longer ones are never memoised.
            Labels::from_vec(v.into_iter().map(|(k, v)| (k, Str::from(v))).collect())
        };
        let sets: Vec<Vec<(LabelName, &str)>> = vec![
            vec![],
            vec![("port", "E1/1")],
            vec![(other_port, "E1/1")],
            vec![("port", "E1/2")],
            vec![("port", long.as_str())],
            vec![(other_port, long.as_str())],
            vec![("port", &long[1..])],
            vec![("port", "E1/1"), ("switch", long.as_str())],
            vec![("port", "E1/1"), ("priority", "3"), ("switch", "sw")],
            vec![(other_port, "E1/1"), ("priority", "3"), ("switch", "sw")],
            vec![("port", "E1/1"), ("priority", "4"), ("switch", "sw")],
            vec![("port", "E1/1"), ("switch", "sw")],
            vec![("node", "E1/1"), ("switch", "sw")],
        ];
        for a in &sets {
            for b in &sets {
                let (x, y) = (fresh(a.clone()), fresh(b.clone()));
                let texts = |l: &Labels| -> Vec<(String, String)> {
                    l.iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect()
                };
                assert_eq!(x == y, texts(&x) == texts(&y), "{a:?} == {b:?}");
            }
        }
    }

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
            Labels::new(&[("port", "Ethernet1/1/1"), ("switch", "sx")]).to_vec(),
            [
                ("port", Str::from("Ethernet1/1/1")),
                ("switch", Str::from("sx"))
            ]
        );
        assert_eq!(
            Labels::new(&[("node", "Ethernet1/1/1"), ("switch", "sw")]).to_vec(),
            [
                ("node", Str::from("Ethernet1/1/1")),
                ("switch", Str::from("sw"))
            ]
        );
    }

    #[test]
    fn a_rows_series_share_their_port_and_keep_priority_and_direction_inline() {
        let rows: Vec<Labels> = ["0", "3", "all", "7"]
            .iter()
            .map(|p| Labels::new(&[("port", "E1/1"), ("priority", p), ("switch", "sw")]))
            .collect();
        assert!(rows.windows(2).all(|w| w[0].shares(&w[1]) && w[0] != w[1]));
        let l = Labels::new(&[
            ("direction", "rx"),
            ("port", "E1/1"),
            ("priority", "5"),
            ("switch", "sw"),
        ]);
        assert_eq!(l.shared.len(), 2, "{l:?}");
        let want = [
            ("direction", "rx"),
            ("port", "E1/1"),
            ("priority", "5"),
            ("switch", "sw"),
        ];
        assert!(l.iter().map(|(k, v)| (*k, v.as_str())).eq(want));
        assert_eq!(l.len(), 4);
        // Values outside the vocabulary stay in the shared part, and the split depends only on
        // the set: made in any order, from a vector or not, it is equal, hashes and orders alike.
        for odd in ["64", "03", "-1", "+1", "", "ALL", "3 "] {
            let l = Labels::new(&[("port", "E1/1"), ("priority", odd)]);
            assert_eq!(l.shared.len(), 2, "{odd:?}");
            assert_eq!(l.iter().nth(1).map(|x| x.1.as_str()), Some(odd));
        }
        let from_vec = Labels::from_vec(
            want.iter()
                .rev()
                .map(|(k, v)| (*k, Str::from(*v)))
                .collect(),
        );
        assert_eq!(from_vec, l);
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let h = BuildHasherDefault::<DefaultHasher>::default();
        assert_eq!(h.hash_one(&from_vec), h.hash_one(&l));
        let v: Vec<(LabelName, Str)> = l.to_vec();
        assert_eq!(h.hash_one(&l), h.hash_one(&v));
        // Three labels of the vocabulary: the third is shared.
        let three = Labels::new(&[("direction", "tx"), ("dscp", "26"), ("priority", "3")]);
        assert_eq!(three.shared.len(), 1);
        assert_eq!(three.len(), 3);
        // Ordered as the slices: an inline label against a shared one, a shorter set first.
        let a = Labels::new(&[("port", "E1/1"), ("priority", "3")]);
        let b = Labels::new(&[("port", "E1/1"), ("priority", "30")]);
        let c = Labels::new(&[("port", "E1/1"), ("priority", "3x")]);
        let d = Labels::new(&[("port", "E1/1")]);
        let mut sets = [c.clone(), b.clone(), a.clone(), d.clone()];
        sets.sort();
        let as_vec = |s: &Labels| s.to_vec();
        let mut vecs: Vec<_> = [&c, &b, &a, &d].iter().map(|s| as_vec(s)).collect();
        vecs.sort();
        assert_eq!(sets.iter().map(as_vec).collect::<Vec<_>>(), vecs);
    }

    #[test]
    fn unsorted_and_repeated_names_are_sorted_and_kept_once() {
        let l = Labels::new(&[("switch", "sw"), ("port", "p1"), ("port", "p2")]);
        assert_eq!(
            l.to_vec(),
            [("port", Str::from("p1")), ("switch", Str::from("sw"))]
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
