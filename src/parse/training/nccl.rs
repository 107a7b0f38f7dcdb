//! nccl-tests result tables (`all_reduce_perf` and friends):
//!
//! ```text
//! #                                                              out-of-place                       in-place
//! #       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
//! #        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
//!      8388608       2097152     float     sum      -1   4521.7   185.6   348.5      0   4519.2   185.6   348.6      0
//! # Out of bounds values : 0 OK
//! # Avg bus bandwidth    : 348.5
//! ```
//!
//! Choice: one table becomes one record, `allreduce_seconds` = the out-of-place time of the largest
//! message size (the size closest to a training gradient bucket, and the row least distorted by
//! latency), µs → s; no iteration, loss or samples/s. The table does not name its collective (the
//! binary's name is not printed), so an `all_gather_perf` table is read the same way. Only the
//! largest row is kept while the table runs, so memory stays constant.

use super::TrainRecord;

#[derive(Debug, Default)]
pub(super) struct Table {
    active: bool,
    /// Column of the out-of-place `time`, and the number of columns, from the header.
    time_col: usize,
    columns: usize,
    /// (size in bytes, out-of-place time in µs) of the largest row so far.
    best: Option<(u64, f64)>,
    rank: Option<u32>,
}

/// What one line did to the table.
pub(super) enum Step {
    NotTable,
    /// A header, a result row or a `#` comment of the run.
    Row,
    /// The table ended (footer, or a new header): its record, if it had rows.
    Done(Option<TrainRecord>),
}

impl Table {
    pub fn feed(&mut self, body: &str, rank: Option<u32>) -> Step {
        let t = body.trim();
        if let Some(comment) = t.strip_prefix('#') {
            let cells: Vec<&str> = comment.split_whitespace().collect();
            if is_header(&cells) {
                let done = self.finish();
                self.active = true;
                self.time_col = cells.iter().position(|c| *c == "time").unwrap_or(0);
                self.columns = cells.len();
                self.rank = rank;
                return match done {
                    Some(rec) => Step::Done(Some(rec)),
                    None => Step::Row,
                };
            }
            if self.active
                && (comment.contains("Out of bounds values")
                    || comment.contains("Avg bus bandwidth"))
            {
                return Step::Done(self.finish());
            }
            // The run's other `#` lines (units row, device list) belong to it.
            return if self.active {
                Step::Row
            } else {
                Step::NotTable
            };
        }
        if !self.active {
            return Step::NotTable;
        }
        match row(t, self.time_col, self.columns) {
            Some((size, time_us)) => {
                if self.best.is_none_or(|(s, _)| size >= s) {
                    self.best = Some((size, time_us));
                }
                self.rank = self.rank.or(rank);
                Step::Row
            }
            // NCCL INFO lines of other ranks interleave with the rows: not the end of the table.
            None => Step::NotTable,
        }
    }

    /// Close the table: its record, if it had rows.
    pub fn finish(&mut self) -> Option<TrainRecord> {
        let best = self.best.take();
        let rank = self.rank.take();
        self.active = false;
        let (_, us) = best?;
        Some(TrainRecord {
            allreduce_seconds: Some(us / 1e6),
            rank,
            ..TrainRecord::default()
        })
    }
}

/// `size count type redop [root] time algbw busbw #wrong|error time algbw busbw #wrong|error`
fn is_header(cells: &[&str]) -> bool {
    cells.first() == Some(&"size")
        && cells.contains(&"count")
        && cells.contains(&"time")
        && cells.contains(&"busbw")
}

/// A result row: size, and the out-of-place time in µs.
fn row(t: &str, time_col: usize, columns: usize) -> Option<(u64, f64)> {
    let cells: Vec<&str> = t.split_whitespace().collect();
    // Every layout ends with out-of-place (time algbw busbw wrong) + in-place (the same four).
    if cells.len() < 9 {
        return None;
    }
    let size: u64 = cells[0].parse().ok()?;
    let _count: u64 = cells.get(1)?.parse().ok()?;
    let col = if cells.len() == columns {
        time_col
    } else {
        cells.len() - 8
    };
    let time: f64 = cells.get(col)?.parse().ok()?;
    (time.is_finite() && time >= 0.0).then_some((size, time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_size_out_of_place_time() {
        let mut t = Table::default();
        let lines = [
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)",
            "           8             2     float     sum      -1    37.76    0.00    0.00      0    36.09    0.00    0.00      0",
            "host:1:1 [0] NCCL INFO Launch mode Parallel",
            "  1073741824     268435456     float     sum      -1    26893   39.93   37.43      0    26875   39.95   37.46    N/A",
        ];
        for l in lines {
            assert!(!matches!(t.feed(l, Some(0)), Step::Done(_)), "{l}");
        }
        let Step::Done(Some(rec)) = t.feed("# Avg bus bandwidth    : 11.2432", Some(0)) else {
            panic!("no record at the footer");
        };
        assert_eq!(rec.allreduce_seconds, Some(0.026893));
        assert_eq!(rec.rank, Some(0));
        assert!(t.finish().is_none());
    }

    #[test]
    fn comments_outside_a_table_are_not_rows() {
        let mut t = Table::default();
        assert!(matches!(
            t.feed("# SYNTHETIC: typed by hand", None),
            Step::NotTable
        ));
        assert!(matches!(
            t.feed("   8   2  float  sum  -1  1.0  0  0  0  1.0  0  0  0", None),
            Step::NotTable
        ));
    }
}
