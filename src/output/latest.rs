//! `rocetop parse --format prom` without a store: the newest value of each series, printed as
//! [`prom::render`] prints a store that took the parse as one poll (each series once with the
//! last value the input gave, the first [`MAX_SERIES_PER_SOURCE`] series the input named, sorted
//! and grouped by family). The samples come one at a time from the parser ([`Latest::put`]) and
//! each keeps its label set, its value and two numbers (40 bytes a series), where a store's
//! series cost ~265 B and the whole vector of samples came before it.
//!
//! [`prom::render`]: super::prom::render

use super::prom::{fmt_f64, help, value_text};
use crate::metrics::store::MAX_SERIES_PER_SOURCE;
use crate::metrics::{Labels, Sample, SeriesKey, Str, Value, names, write_key};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io;

/// One sample as kept: its metric by number, its place in the input.
struct Row {
    labels: Labels,
    value: Value,
    name: u32,
    seq: u32,
}

/// The samples of one parse: as they came, then (every [`COMPACT_AT`] of them, and at the end)
/// sorted with each series once. Once it holds [`MAX_SERIES_PER_SOURCE`] series it is full: a
/// sample of a series it holds updates it, any other is counted and dropped, as a store drops
/// the series a source makes past its maximum; so it never holds more than `COMPACT_AT` rows.
#[derive(Default)]
pub struct Latest {
    names: Vec<Str>,
    by_name: HashMap<Str, u32>,
    rows: Vec<Row>,
    /// Samples put so far.
    seq: u32,
    /// Rows are sorted, each series once, and no series may be added.
    full: bool,
    /// Samples of series that were not kept.
    over: usize,
}

/// Rows held before they are sorted and made unique.
const COMPACT_AT: usize = MAX_SERIES_PER_SOURCE + MAX_SERIES_PER_SOURCE / 4;

/// The bits a store keeps of a value.
fn raw(v: Value) -> u64 {
    match v {
        Value::Counter(n) | Value::Counter32(n) | Value::CounterMicros(n) => n,
        Value::Gauge(f) => f.to_bits(),
    }
}

/// What a store shows for a series made by `first` whose last value was `last`: the series keeps
/// its first sample's kind, and the last bits read as that kind.
fn as_first(first: Value, last: Value) -> Value {
    let r = raw(last);
    match first {
        Value::Counter(_) => Value::Counter(r),
        Value::Counter32(_) => Value::Counter32(r),
        Value::CounterMicros(_) => Value::CounterMicros(r),
        Value::Gauge(_) => Value::Gauge(f64::from_bits(r)),
    }
}

impl Latest {
    pub fn put(&mut self, s: Sample) {
        self.seq = self.seq.saturating_add(1);
        if self.full {
            let names = &self.names;
            let want = (s.key.name.as_str(), &s.key.labels);
            match self
                .rows
                .binary_search_by(|r| (names[r.name as usize].as_str(), &r.labels).cmp(&want))
            {
                Ok(i) => self.rows[i].value = as_first(self.rows[i].value, s.value),
                Err(_) => self.over += 1,
            }
            return;
        }
        let name = match self.by_name.get(s.key.name.as_str()) {
            Some(&i) => i,
            None => {
                let i = self.names.len() as u32;
                self.names.push(s.key.name.clone());
                self.by_name.insert(s.key.name, i);
                i
            }
        };
        self.rows.push(Row {
            labels: s.key.labels,
            value: s.value,
            name,
            seq: self.seq,
        });
        if self.rows.len() >= COMPACT_AT {
            self.compact();
        }
    }

    /// How many samples it was given.
    pub fn samples(&self) -> usize {
        self.seq as usize
    }

    /// Sorted by name then labels, each series once (its first sample's place and kind, its last
    /// value); past [`MAX_SERIES_PER_SOURCE`] series, those the input named first kept, the
    /// others dropped and counted, and no series added after.
    fn compact(&mut self) {
        let names = &self.names;
        let rows = &mut self.rows;
        rows.sort_unstable_by(|a, b| {
            (names[a.name as usize].as_str(), &a.labels, a.seq).cmp(&(
                names[b.name as usize].as_str(),
                &b.labels,
                b.seq,
            ))
        });
        // How many samples each kept series stands for (needed only when series may be dropped).
        let capped = rows.len() > MAX_SERIES_PER_SOURCE;
        let mut counts: Vec<usize> = Vec::new();
        if capped {
            counts.push(1);
        }
        rows.dedup_by(|later, kept| {
            let same = kept.name == later.name && kept.labels == later.labels;
            if same {
                kept.value = as_first(kept.value, later.value);
                if let Some(c) = counts.last_mut() {
                    *c += 1;
                }
            } else if capped {
                counts.push(1);
            }
            same
        });
        if rows.len() > MAX_SERIES_PER_SOURCE {
            // A store makes the series the input names first.
            let mut firsts: Vec<u32> = rows.iter().map(|r| r.seq).collect();
            let (_, &mut limit, _) = firsts.select_nth_unstable(MAX_SERIES_PER_SOURCE);
            let mut c = counts.iter();
            let over = &mut self.over;
            rows.retain(|r| {
                let n = c.next().copied().unwrap_or(0);
                *over += if r.seq < limit { 0 } else { n };
                r.seq < limit
            });
        }
        self.full = rows.len() >= MAX_SERIES_PER_SOURCE;
    }

    /// Prometheus text: `notes` first (already `# ` lines), then every family, written to `out`
    /// through `safe::text` in pieces of about 64 KiB.
    pub fn write_prom(mut self, notes: &str, out: &mut dyn io::Write) -> io::Result<()> {
        self.compact();
        let Latest {
            names, rows, over, ..
        } = self;
        let mut w = Pieces {
            buf: String::with_capacity(1 << 16),
            out,
        };
        w.buf.push_str(notes);
        if over > 0 {
            let _ = writeln!(
                w.buf,
                "# note: {over} samples of new series not printed: a source may make at most \
                 {MAX_SERIES_PER_SOURCE} series"
            );
        }
        let summary = summary_lines(&names, &rows);
        let mut i = 0;
        let mut refused = 0;
        while let Some(first) = rows.get(i) {
            let name = &names[first.name as usize];
            let end = i + rows[i..].partition_point(|r| r.name == first.name);
            // As `prom::render` does: a family whose name the format cannot carry is counted.
            if !names::is_metric_name(name) {
                refused += end - i;
                i = end;
                continue;
            }
            let kind = if name.as_str() == names::PING_RTT_SECONDS {
                "summary"
            } else if first.value.is_counter() {
                "counter"
            } else {
                "gauge"
            };
            let _ = writeln!(w.buf, "# HELP {name} {}", help(name));
            let _ = writeln!(w.buf, "# TYPE {name} {kind}");
            for r in &rows[i..end] {
                let _ = write_key(&mut w.buf, name, &r.labels);
                w.buf.push(' ');
                w.buf.push_str(&value_text(r.value.is_counter(), r.value));
                w.buf.push('\n');
                w.spill()?;
            }
            if name.as_str() == names::PING_RTT_SECONDS {
                w.buf.push_str(&summary);
            }
            i = end;
        }
        if refused > 0 {
            w.buf.push_str(&super::prom::refused_note(refused));
        }
        w.flush()
    }
}

/// `_sum` and `_count` lines of the ping RTT summary, from each window's probe count and mean
/// (`prom::summaries`: a window without its mean gets none), in the order the series came.
fn summary_lines(names: &[Str], rows: &[Row]) -> String {
    // Rows are sorted by name: a family's rows are together.
    let family = |n: &str| {
        let i = names.iter().position(|x| x.as_str() == n)? as u32;
        let lo = rows.iter().position(|r| r.name == i)?;
        let len = rows[lo..].partition_point(|r| r.name == i);
        Some((i, &rows[lo..lo + len]))
    };
    let mut out = String::new();
    if family(names::PING_RTT_SECONDS).is_none() {
        return out;
    }
    let (Some((_, probes)), Some((_, means))) = (
        family(names::PING_WINDOW_PROBES),
        family(names::PING_RTT_MEAN),
    ) else {
        return out;
    };
    let mut probes: Vec<&Row> = probes.iter().collect();
    probes.sort_by_key(|r| r.seq);
    for p in probes {
        let Ok(m) = means.binary_search_by(|r| r.labels.cmp(&p.labels)) else {
            continue;
        };
        let (mean, n) = (means[m].value.as_f64(), p.value.as_f64());
        for (suffix, v) in [("_sum", mean * n), ("_count", n)] {
            let key = SeriesKey {
                name: format!("{}{suffix}", names::PING_RTT_SECONDS).into(),
                labels: p.labels.clone(),
            };
            let _ = writeln!(out, "{key} {}", fmt_f64(v));
        }
    }
    out
}

/// Text written in pieces, each made safe for a terminal on its way out (`safe::text` treats
/// each character alone, so pieces cut between lines give the bytes of the whole).
struct Pieces<'a> {
    buf: String,
    out: &'a mut dyn io::Write,
}

impl Pieces<'_> {
    fn spill(&mut self) -> io::Result<()> {
        if self.buf.len() >= 1 << 16 {
            self.flush_buf()?;
        }
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        self.out
            .write_all(crate::safe::text(&self.buf).as_bytes())?;
        self.buf.clear();
        Ok(())
    }

    fn flush(mut self) -> io::Result<()> {
        self.flush_buf()?;
        self.out.flush()
    }
}
