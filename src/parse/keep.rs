//! The `nic_counters` keep filter: which `ethtool -S` / netdev statistics counters a live source
//! keeps, so that hundreds of nodes stay cheap (`parse` itself prints every counter).

use std::sync::{Arc, Mutex, Weak};

/// The `nic_counters` verdict of each counter a source printed in its last poll, in order: a poll
/// prints the same ~750 names in the same order every second, so a name compare replaces matching
/// every pattern. A name that differs from last time is matched and remembered again.
///
/// Nodes of one model print the same names and get the same verdicts: the memos that are equal
/// are one shared copy ([`shared`]), copied only when a source's names differ (512 nodes: ~19 KB
/// a node, 9.6 MB, became one copy).
#[derive(Debug, Default)]
pub struct NicMemo(Mutex<Arc<Names>>);

/// Counter names in order, all in one string, with a verdict each. A `Vec<(Box<str>, bool)>` of
/// ~750 names was ~55 KB a node with the allocations' headers and the vector's doubling (a fleet of
/// 512 nodes: 28 MB); this is the names' bytes, 4 bytes of end and 1 of verdict each.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Names {
    text: String,
    /// Where each name ends in `text`.
    ends: Vec<u32>,
    keep: Vec<bool>,
}

impl Names {
    fn len(&self) -> usize {
        self.ends.len()
    }

    /// Name `i` and its verdict.
    fn get(&self, i: usize) -> Option<(&str, bool)> {
        let start = match i.checked_sub(1) {
            Some(j) => *self.ends.get(j)? as usize,
            None => 0,
        };
        let end = *self.ends.get(i)? as usize;
        Some((self.text.get(start..end)?, *self.keep.get(i)?))
    }

    /// Keep the first `n` names.
    fn truncate(&mut self, n: usize) {
        if n < self.len() {
            let end = n.checked_sub(1).map_or(0, |j| self.ends[j] as usize);
            self.text.truncate(end);
            self.ends.truncate(n);
            self.keep.truncate(n);
        }
    }

    /// Add a name; false (nothing added) past what the offsets can address.
    fn push(&mut self, name: &str, keep: bool) -> bool {
        let Ok(end) = u32::try_from(self.text.len() + name.len()) else {
            return false;
        };
        self.text.push_str(name);
        self.ends.push(end);
        self.keep.push(keep);
        true
    }

    /// Drop the room a poll's growing left beyond what it holds.
    fn fit(&mut self) {
        self.text.shrink_to_fit();
        self.ends.shrink_to_fit();
        self.keep.shrink_to_fit();
    }
}

/// The copy of `names` every memo holding the same names and verdicts shares: an equal one
/// already held by some memo, else `names` itself, remembered for the next. Runs only when a
/// poll remembered a name (a source's first poll, a NIC that changed).
fn shared(names: Arc<Names>) -> Arc<Names> {
    static KNOWN: Mutex<Vec<Weak<Names>>> = Mutex::new(Vec::new());
    let Ok(mut known) = KNOWN.lock() else {
        return names;
    };
    known.retain(|w| w.strong_count() > 0);
    if let Some(same) = known
        .iter()
        .filter_map(Weak::upgrade)
        .find(|k| **k == *names)
    {
        return same;
    }
    known.push(Arc::downgrade(&names));
    names
}

impl Clone for NicMemo {
    /// A copy starts empty (it is only a cache).
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl NicMemo {
    /// More names than any NIC prints: a source that prints more is matched without the cache.
    const MAX: usize = 16_384;

    /// A matcher for one poll; the verdicts are kept for the next poll when it is dropped.
    pub fn keeper<'a>(&'a self, patterns: &'a [String]) -> NicKeeper<'a> {
        let memo = self
            .0
            .lock()
            .map(|mut v| std::mem::take(&mut *v))
            .unwrap_or_default();
        NicKeeper {
            owner: self,
            patterns,
            memo,
            pos: 0,
            grew: false,
        }
    }
}

/// [`keep_nic`] through a source's [`NicMemo`], for the counters of one poll in order.
pub struct NicKeeper<'a> {
    owner: &'a NicMemo,
    patterns: &'a [String],
    /// Shared until this poll's names differ (then this source's own copy).
    memo: Arc<Names>,
    pos: usize,
    /// Whether this poll remembered a name (the memo's room is then fitted when it is kept).
    grew: bool,
}

impl NicKeeper<'_> {
    /// Whether any pattern narrows the counters (none: every counter is kept).
    pub fn filters(&self) -> bool {
        !self.patterns.is_empty()
    }

    /// Whether an `ethtool -S` / netdev statistics counter name is in the `nic_counters` subset.
    pub fn keep_nic(&mut self, counter: &str) -> bool {
        if self.patterns.is_empty() {
            return true;
        }
        if let Some((name, keep)) = self.memo.get(self.pos)
            && name == counter
        {
            self.pos += 1;
            return keep;
        }
        let keep = keep_nic(counter, self.patterns);
        if self.pos < NicMemo::MAX {
            let memo = Arc::make_mut(&mut self.memo);
            memo.truncate(self.pos);
            if memo.push(counter, keep) {
                self.pos += 1;
                self.grew = true;
            }
        }
        keep
    }

    /// [`keep_counter`], through the cache.
    pub fn keep_counter(&mut self, name: &str) -> bool {
        match nic_family_counter(name, self.patterns) {
            Some(counter) => self.keep_nic(counter),
            None => true,
        }
    }
}

impl Drop for NicKeeper<'_> {
    fn drop(&mut self) {
        let mut memo = std::mem::take(&mut self.memo);
        if self.grew {
            Arc::make_mut(&mut memo).fit();
            memo = shared(memo);
        }
        if let Ok(mut v) = self.owner.0.lock() {
            *v = memo;
        }
    }
}

/// Whether a sample of metric `name` is kept under the `nic_counters` patterns: only the generic
/// `ethtool -S` (`rocetop_nic_<c>_total`) and kernel netdev (`rocetop_node_kernel_<c>_total`)
/// families are subject to them; PFC pause families and the RDMA/kernel byte totals always stay.
pub fn keep_counter(name: &str, patterns: &[String]) -> bool {
    match nic_family_counter(name, patterns) {
        Some(counter) => keep_nic(counter, patterns),
        None => true,
    }
}

/// The counter name inside a metric subject to the `nic_counters` patterns, if it is one.
fn nic_family_counter<'a>(name: &'a str, patterns: &[String]) -> Option<&'a str> {
    if patterns.is_empty()
        || name.starts_with("rocetop_nic_pfc_")
        || name == crate::metrics::names::NODE_KERNEL_BYTES
    {
        return None;
    }
    name.strip_prefix("rocetop_nic_")
        .or_else(|| name.strip_prefix("rocetop_node_kernel_"))
        .and_then(|c| c.strip_suffix("_total"))
}

/// Whether an `ethtool -S` / netdev statistics counter name is in the `nic_counters` subset.
pub fn keep_nic(counter: &str, patterns: &[String]) -> bool {
    patterns.is_empty() || patterns.iter().any(|p| glob(p, counter))
}

/// `*` matches any run of characters; everything else matches itself. No allocation and no
/// substring-searcher setup: this runs for every counter of every poll (~750 names × the patterns
/// per node and second), on names of a few dozen bytes.
fn glob(pat: &str, s: &str) -> bool {
    let (p, s) = (pat.as_bytes(), s.as_bytes());
    let Some(star) = p.iter().position(|&b| b == b'*') else {
        return p == s;
    };
    let (first, mut pat_rest) = p.split_at(star);
    let Some(mut rest) = s.strip_prefix(first) else {
        return false;
    };
    // pat_rest starts with '*': match each `*part` in turn, the last one at the end of `s`.
    while let Some((_, after)) = pat_rest.split_first() {
        let next = after.iter().position(|&b| b == b'*');
        let part = &after[..next.unwrap_or(after.len())];
        match next {
            None => return rest.len() >= part.len() && rest.ends_with(part),
            Some(n) => {
                match find(rest, part) {
                    Some(i) => rest = &rest[i + part.len()..],
                    None => return false,
                }
                pat_rest = &after[n..];
            }
        }
    }
    true
}

/// The first position of `needle` in `hay` (naive: both are a few dozen bytes at most).
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let Some((&b0, tail)) = needle.split_first() else {
        return Some(0);
    };
    let last = hay.len().checked_sub(needle.len())?;
    (0..=last).find(|&i| hay[i] == b0 && hay[i + 1..].starts_with(tail))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nic_counter_subset() {
        assert!(keep_counter("rocetop_nic_ch3_events_total", &[]));
        assert!(keep_counter("rocetop_nic_ch3_events_total", &["*".into()]));
        assert!(glob("a*b*c", "axxbyyc") && !glob("a*b*c", "axxbyy") && !glob("ab", "abc"));
        assert!(glob("*_phy", "rx_bytes_phy") && !glob("x*x", "x"));
        assert!(glob("**", "") && glob("a**b", "ab") && glob("*ab*", "xaab") && !glob("", "a"));
    }

    /// The memo answers as `keep_nic` does whatever the names do between polls (the same, one
    /// renamed, fewer, more, other names), and holds the last poll's names first (a poll that
    /// printed a prefix of the one before leaves the rest, which the next poll may use).
    #[test]
    fn the_memo_follows_the_names_of_each_poll() {
        let pats = vec!["rx_*".to_string(), "*_pause".to_string()];
        let memo = NicMemo::default();
        let polls: [&[&str]; 6] = [
            &["rx_bytes", "tx_bytes", "rx_prio3_pause", "ch0_events"],
            &["rx_bytes", "tx_bytes", "rx_prio3_pause", "ch0_events"],
            &["rx_bytes", "tx_packets", "rx_prio3_pause"],
            &[
                "rx_bytes",
                "tx_packets",
                "rx_prio3_pause",
                "tx_pause",
                "é_x",
            ],
            &["rx_bytes", "tx_packets"],
            &["tx_pause"],
        ];
        for names in polls {
            let mut k = memo.keeper(&pats);
            for n in names {
                assert_eq!(k.keep_nic(n), keep_nic(n, &pats), "{n}");
            }
            drop(k);
            let m = memo.0.lock().expect("memo");
            let held: Vec<(&str, bool)> = (0..m.len()).filter_map(|i| m.get(i)).collect();
            let want: Vec<(&str, bool)> = names.iter().map(|n| (*n, keep_nic(n, &pats))).collect();
            assert_eq!(held.get(..want.len()), Some(&want[..]));
        }
    }

    /// Sources printing the same names share one memo; one whose names then differ gets its own
    /// copy and the others keep theirs, every answer still `keep_nic`'s.
    #[test]
    fn equal_memos_are_one_copy_and_part_when_names_differ() {
        let pats = vec!["rx_*".to_string()];
        let names = ["rx_bytes", "tx_bytes", "rx_drops"];
        let memos: Vec<NicMemo> = (0..3).map(|_| NicMemo::default()).collect();
        let poll = |m: &NicMemo, names: &[&str]| {
            let mut k = m.keeper(&pats);
            for n in names {
                assert_eq!(k.keep_nic(n), keep_nic(n, &pats), "{n}");
            }
        };
        for m in &memos {
            poll(m, &names);
        }
        let held = |m: &NicMemo| m.0.lock().expect("memo").clone();
        assert!(Arc::ptr_eq(&held(&memos[0]), &held(&memos[1])));
        assert!(Arc::ptr_eq(&held(&memos[0]), &held(&memos[2])));
        // Another pattern list gives other verdicts: not the same memo.
        let other = NicMemo::default();
        let mut k = other.keeper(&[]);
        names.iter().for_each(|n| assert!(k.keep_nic(n)));
        drop(k);
        let tx = vec!["tx_*".to_string()];
        let mut k = other.keeper(&tx);
        names
            .iter()
            .for_each(|n| assert_eq!(k.keep_nic(n), keep_nic(n, &tx)));
        drop(k);
        assert!(!Arc::ptr_eq(&held(&memos[0]), &held(&other)));
        poll(&memos[1], &["rx_bytes", "rx_new"]);
        assert!(!Arc::ptr_eq(&held(&memos[0]), &held(&memos[1])));
        assert_eq!(held(&memos[0]).len(), 3);
        poll(&memos[0], &names);
        poll(&memos[1], &names);
        assert!(Arc::ptr_eq(&held(&memos[0]), &held(&memos[1])));
    }

    /// The previous, obviously correct glob (str split + find): the byte-level one must agree.
    fn glob_ref(pat: &str, s: &str) -> bool {
        let mut parts = pat.split('*');
        let first = parts.next().unwrap_or("");
        let Some(mut rest) = s.strip_prefix(first) else {
            return false;
        };
        let mut parts = parts.peekable();
        let mut starred = false;
        while let Some(m) = parts.next() {
            starred = true;
            if parts.peek().is_none() {
                return rest.len() >= m.len() && rest.ends_with(m);
            }
            match rest.find(m) {
                Some(i) => rest = rest.get(i + m.len()..).unwrap_or(""),
                None => return false,
            }
        }
        !starred && rest.is_empty()
    }

    proptest::proptest! {
        #[test]
        fn glob_agrees_with_the_reference(pat in "[ab_*]{0,7}", s in "[ab_]{0,9}") {
            proptest::prop_assert_eq!(glob(&pat, &s), glob_ref(&pat, &s), "{} {}", pat, s);
        }
    }
}
