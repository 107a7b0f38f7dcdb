//! The `nic_counters` keep filter: which `ethtool -S` / netdev statistics counters a live source
//! keeps, so that hundreds of nodes stay cheap (`parse` itself prints every counter).

/// The `nic_counters` verdict of each counter a source printed in its last poll, in order: a poll
/// prints the same ~750 names in the same order every second, so a name compare replaces matching
/// every pattern. A name that differs from last time is matched and remembered again.
#[derive(Debug, Default)]
pub struct NicMemo(std::sync::Mutex<Vec<(Box<str>, bool)>>);

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
        }
    }
}

/// [`keep_nic`] through a source's [`NicMemo`], for the counters of one poll in order.
pub struct NicKeeper<'a> {
    owner: &'a NicMemo,
    patterns: &'a [String],
    memo: Vec<(Box<str>, bool)>,
    pos: usize,
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
            && **name == *counter
        {
            self.pos += 1;
            return *keep;
        }
        let keep = keep_nic(counter, self.patterns);
        if self.pos < NicMemo::MAX {
            self.memo.truncate(self.pos);
            self.memo.push((counter.into(), keep));
            self.pos += 1;
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
        if let Ok(mut v) = self.owner.0.lock() {
            *v = std::mem::take(&mut self.memo);
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
