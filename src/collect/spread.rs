//! One factor in 0.8–1.2 per source name, so waits of sources that failed together (a switch
//! reboot, a loaded box at start) end apart: SSH reconnects (`ssh::backoff`) and retried polls
//! (`poll::retry`) both scale their delays by it. It is a hash of the name with the std hasher's
//! fixed keys, so a source's factor is the same in every run and tests can pin it.

use std::hash::{DefaultHasher, Hasher};

/// 0.8 ..= 1.2, fixed per `name`.
pub fn spread(name: &str) -> f64 {
    let mut h = DefaultHasher::new();
    h.write(name.as_bytes());
    0.8 + (h.finish() % 4001) as f64 / 10_000.0
}

#[cfg(test)]
mod tests {
    use super::spread;

    /// A source waits the same in every run (its retries can be pinned in tests); the spread over
    /// many names is checked where it is used (`ssh::backoff`, `poll::retry`).
    #[test]
    fn a_name_keeps_its_factor_within_the_band() {
        for name in ["node0", "node17 topology", "leaf1", ""] {
            let f = spread(name);
            assert_eq!(f, spread(name), "{name}");
            assert!((0.8..=1.2).contains(&f), "{name}: {f}");
        }
        assert_ne!(spread("node0"), spread("node1"));
    }
}
