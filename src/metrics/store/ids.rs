//! Compact lists of series ids. A `Vec<SeriesId>` costs 4 bytes an id and up to as much again in
//! room left by its doubling; the store keeps two lists that name every series (the series of each
//! metric name, each source's last poll in order), which were ~11 of a series' bytes.
//! Both lists have structure: a name's ids only grow (ids are handed out in order), and a poll
//! names the series it made in one go one after another.

use super::SeriesId;

/// Ascending ids, each the varint of its distance from the one before: a metric's series made
/// row after row are a few ids apart, one byte each.
#[derive(Clone, Debug, Default)]
pub(super) struct Ascending {
    bytes: Vec<u8>,
    last: Option<u32>,
}

impl Ascending {
    /// Add `id`, larger than every id already in (an id not larger is ignored).
    pub fn push(&mut self, id: SeriesId) {
        let d = match self.last {
            None => u64::from(id.0),
            Some(l) if id.0 > l => u64::from(id.0 - l),
            Some(_) => return,
        };
        self.last = Some(id.0);
        let mut d = d;
        loop {
            let b = (d & 0x7f) as u8;
            d >>= 7;
            if d == 0 {
                self.bytes.push(b);
                break;
            }
            self.bytes.push(b | 0x80);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = SeriesId> + '_ {
        let mut pos = 0;
        let mut at: Option<u32> = None;
        std::iter::from_fn(move || {
            let mut d: u64 = 0;
            let mut shift = 0;
            loop {
                let b = *self.bytes.get(pos)?;
                pos += 1;
                d |= u64::from(b & 0x7f) << shift;
                shift += 7;
                if b & 0x80 == 0 || shift > 35 {
                    break;
                }
            }
            let id = match at {
                None => d as u32,
                Some(a) => a.wrapping_add(d as u32),
            };
            at = Some(id);
            Some(SeriesId(id))
        })
    }

    /// Heap bytes held (for the memory tests).
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.bytes.capacity()
    }
}

/// Ids in a given order, as runs of consecutive ids: a source's poll names its series in the
/// order it made them, so a whole answer is one run. A place with no series (a sample of a new
/// series that was not stored) is [`Runs::NONE`].
#[derive(Clone, Debug, Default)]
pub(super) struct Runs {
    runs: Vec<Run>,
}

/// Consecutive ids: `first`, `first + 1`, … `len` of them (all [`Runs::NONE`] where `first` is).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Run {
    first: u32,
    len: u32,
}

impl Runs {
    /// An id that names no series.
    pub const NONE: u32 = u32::MAX;

    pub fn push(&mut self, id: u32) {
        if let Some(run) = self.runs.last_mut() {
            let next = if run.first == Self::NONE {
                Some(Self::NONE)
            } else {
                run.first.checked_add(run.len)
            };
            if next == Some(id) && run.len < u32::MAX {
                run.len += 1;
                return;
            }
        }
        self.runs.push(Run { first: id, len: 1 });
    }

    /// The ids in order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&Run { first, len }| {
            (0..len).map(move |i| {
                if first == Self::NONE {
                    Self::NONE
                } else {
                    first + i
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascending_ids_come_back_as_pushed_in_a_byte_or_so_each() {
        let mut a = Ascending::default();
        let ids = [0u32, 1, 2, 10, 11, 300, 70_000, 70_001, u32::MAX - 1];
        for &i in &ids {
            a.push(SeriesId(i));
        }
        a.push(SeriesId(5)); // not larger: ignored
        assert!(a.iter().map(|s| s.0).eq(ids));
        let mut b = Ascending::default();
        for i in 0..1000u32 {
            b.push(SeriesId(i * 10 + 3));
        }
        assert!(b.iter().map(|s| s.0).eq((0..1000u32).map(|i| i * 10 + 3)));
        assert!(b.bytes() <= 2048, "{} bytes", b.bytes());
    }

    #[test]
    fn runs_keep_order_and_places_without_a_series() {
        let mut r = Runs::default();
        let ids = [5u32, 6, 7, 2, 3, Runs::NONE, Runs::NONE, 8, 9, 0];
        for &i in &ids {
            r.push(i);
        }
        assert!(r.iter().eq(ids));
        assert_eq!(r.runs.len(), 5);
        let mut one = Runs::default();
        (100..100_100).for_each(|i| one.push(i));
        assert_eq!(
            one.runs,
            [Run {
                first: 100,
                len: 100_000
            }]
        );
    }
}
