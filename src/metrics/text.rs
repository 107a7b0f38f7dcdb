//! [`Str`]: the text of metric names and label values. A big answer makes millions of samples
//! that repeat a handful of texts (the switch's name, a port's name for each of its ten series,
//! the metric names, priorities `0`–`7`): each sample holding its own `String`s cost kilobytes a
//! row. A `Str` is a shared, immutable text behind one pointer (`Arc<Box<str>>`: a
//! word, where an `Arc<str>` is two; a stored series holds a name and a label set, and the
//! second word was 8 of its bytes), and texts made one after another are shared through a small
//! per-thread cache of the last texts seen, so a row's repeated texts are allocated once.
//!
//! The cache is a memo, not state anyone reads: a miss makes a new `Str` equal to the one a hit
//! would have returned, so parsers stay pure functions of their text. It holds at most
//! [`SLOTS`] texts of at most [`MAX_CACHED`] bytes (under 400 KiB), whatever the input. It is
//! large enough that a poll's texts are still there at the next poll of the same kind: its keys
//! then share their texts with the stored series', and the store matches them by pointer.

use serde::Serialize;
use std::borrow::Borrow;
use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable text, cheap to clone (a reference count); compares, hashes and prints as its `str`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Str(Arc<Box<str>>);

/// Cache slots (direct-mapped by a hash of the text): at 256, a 512-node fabric's few hundred
/// metric names and label values evicted each other, so a key was compared with its series' by
/// content (most of ingest's `memcmp` calls).
const SLOTS: usize = 4096;
/// Longer texts are not cached: they rarely repeat, and the cache must stay small.
const MAX_CACHED: usize = 64;

thread_local! {
    static RECENT: RefCell<Vec<Option<Str>>> = RefCell::new(vec![None; SLOTS]);
}

fn slot_of(s: &str) -> usize {
    // FNV-1a: short texts, a few bytes each; only picks a slot, equality is checked after.
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    (h as usize) % SLOTS
}

impl Str {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Self {
        if s.len() > MAX_CACHED {
            return Str(Arc::new(Box::from(s)));
        }
        let i = slot_of(s);
        RECENT
            .try_with(|c| {
                let mut c = c.borrow_mut();
                match &c[i] {
                    Some(hit) if hit.as_str() == s => hit.clone(),
                    _ => {
                        let new = Str(Arc::new(Box::from(s)));
                        c[i] = Some(new.clone());
                        new
                    }
                }
            })
            // The thread is ending: no cache, still the same text.
            .unwrap_or_else(|_| Str(Arc::new(Box::from(s))))
    }
}

impl From<String> for Str {
    fn from(s: String) -> Self {
        Str::from(s.as_str())
    }
}

impl From<&String> for Str {
    fn from(s: &String) -> Self {
        Str::from(s.as_str())
    }
}

impl From<&Str> for Str {
    fn from(s: &Str) -> Self {
        s.clone()
    }
}

impl Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, o: &str) -> bool {
        self.as_str() == o
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, o: &&str) -> bool {
        self.as_str() == *o
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, o: &String) -> bool {
        self.as_str() == o.as_str()
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, o: &Str) -> bool {
        *self == o.as_str()
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Str {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_texts_share_one_allocation() {
        let a = Str::from("Ethernet1/1/1");
        let b = Str::from(String::from("Ethernet1/1/1"));
        assert!(Arc::ptr_eq(&a.0, &b.0));
        assert_eq!(a, "Ethernet1/1/1");
        let long = "x".repeat(MAX_CACHED + 1);
        let (c, d) = (Str::from(long.as_str()), Str::from(long.as_str()));
        assert_eq!(c, d);
        assert!(!Arc::ptr_eq(&c.0, &d.0), "long texts are not cached");
    }

    /// A 512-node fabric's texts made poll after poll mostly come back as the same allocation,
    /// so the store's key comparisons end at the pointer (at 256 slots: 6 % of them).
    #[test]
    fn a_fabrics_texts_are_still_shared_a_poll_later() {
        let texts: Vec<String> = (1..=512)
            .map(|i| format!("gpu{i}"))
            .chain((0..300).map(|i| format!("rocetop_rdma_counter_{i}_total")))
            .collect();
        let first: Vec<Str> = texts.iter().map(Str::from).collect();
        let again = texts
            .iter()
            .zip(&first)
            .filter(|(t, s)| Arc::ptr_eq(&Str::from(*t).0, &s.0))
            .count();
        assert!(again * 10 >= texts.len() * 7, "{again} of {}", texts.len());
    }

    #[test]
    fn compares_hashes_and_prints_as_its_text() {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let h = BuildHasherDefault::<DefaultHasher>::default();
        let s = Str::from("sw");
        assert_eq!(h.hash_one(&s), h.hash_one("sw"));
        assert_eq!(format!("{s} {s:?}"), "sw \"sw\"");
        let (a, b) = (Str::from("a"), Str::from("b"));
        assert!(a < b);
        assert_eq!(serde_json::to_string(&s).expect("a string"), "\"sw\"");
    }
}
