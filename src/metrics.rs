//! The metric vocabulary shared by every parser, the store, the screen and the exporters
//! (docs/architecture.md): a [`Sample`] is one value of one series, named by a [`SeriesKey`].

pub mod human;
pub mod labels;
pub mod names;
pub mod query;
pub mod rate;
pub mod store;
pub mod text;

pub use labels::Labels;
pub use store::{SeriesId, Store};
pub use text::Str;

use serde::Serialize;
use std::fmt;

/// Milliseconds since the Unix epoch. Rates use the samples' own timestamps, never the UI's clock.
pub type Ts = i64;

/// Wall-clock time now, in [`Ts`] units.
pub fn now_ms() -> Ts {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as Ts)
        .unwrap_or(0)
}

/// Label names are a closed vocabulary (docs/architecture.md), so they are static strings.
pub type LabelName = &'static str;

/// A metric name plus its labels, sorted by label name so that equal series compare equal. The
/// texts are [`Str`]s: a big answer's samples share their switch, port and metric names instead
/// of each holding copies.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct SeriesKey {
    pub name: Str,
    pub labels: Labels,
}

impl SeriesKey {
    pub fn new(name: impl Into<Str>, labels: &[(LabelName, &str)]) -> Self {
        Self {
            name: name.into(),
            labels: Labels::new(labels),
        }
    }

    /// Whether this is the key `SeriesKey::new(name, labels)` makes, without making it.
    pub fn is(&self, name: &str, labels: &[(LabelName, &str)]) -> bool {
        self.name.as_str() == name && self.labels.is(labels)
    }

    /// Whether it has every one of `labels` (it may have others too): what a query selects by.
    pub fn has_labels(&self, labels: &[(&str, &str)]) -> bool {
        labels.iter().all(|(k, v)| self.label(k) == Some(*v))
    }

    /// The value of one label, if the series has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// A copy with one label added or replaced.
    pub fn with_label(&self, name: LabelName, value: &str) -> Self {
        let mut labels = self.labels.to_vec();
        match labels.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = Str::from(value),
            None => labels.push((name, Str::from(value))),
        }
        Self {
            name: self.name.clone(),
            labels: Labels::from_vec(labels),
        }
    }
}

impl fmt::Display for SeriesKey {
    /// Prometheus text form: `name{a="x",b="y"}`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_key(f, &self.name, &self.labels)
    }
}

/// `name{a="x",b="y"}` into `out`: a series shown under another name (a `_per_second` rate) is
/// written without making a key for it.
pub fn write_key(out: &mut impl fmt::Write, name: &str, labels: &Labels) -> fmt::Result {
    out.write_str(name)?;
    if labels.is_empty() {
        return Ok(());
    }
    out.write_str("{")?;
    for (i, (k, v)) in labels.iter().enumerate() {
        if i > 0 {
            out.write_str(",")?;
        }
        out.write_str(k)?;
        out.write_str("=\"")?;
        for c in v.chars() {
            match c {
                '\\' => out.write_str("\\\\")?,
                '"' => out.write_str("\\\"")?,
                '\n' => out.write_str("\\n")?,
                // Prometheus has no escape for them; a terminal would obey them.
                c if crate::safe::is_unsafe(c) => out.write_str("\u{fffd}")?,
                c => out.write_char(c)?,
            }
        }
        out.write_str("\"")?;
    }
    out.write_str("}")
}

/// How a value behaves over time. Counters only grow until a reset; 32-bit counters (declared by the
/// parser that knows the device) wrap at `u32::MAX`.
///
/// Counters are integers everywhere below the reading side (rates subtract integers exactly, the
/// store compresses integer deltas). Where a device counts in a finer unit than the metric's name
/// promises (a NIC counts pause time in µs; the metric is `..._seconds_total`), the parser emits a
/// [`Value::CounterMicros`]: the integer stays as the device counted it, and every read
/// ([`Value::as_f64`], `Store::rate`) is in the metric's unit. The factor is applied in one place,
/// [`Scale::per_count`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Counter(u64),
    Counter32(u64),
    /// A 64-bit counter of millionths of its metric's unit (NIC pause durations: µs under a
    /// `_seconds_total` name).
    CounterMicros(u64),
    Gauge(f64),
}

/// How many of a metric's units one count of a counter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Scale {
    /// One count is one unit (frames, packets, bytes).
    #[default]
    One,
    /// One count is a millionth of the unit (µs of a seconds counter).
    Micro,
}

impl Scale {
    /// The metric's units per count: the only place a scaled counter is divided.
    pub const fn per_count(self) -> f64 {
        match self {
            Scale::One => 1.0,
            Scale::Micro => 1e-6,
        }
    }
}

impl Value {
    pub fn is_counter(&self) -> bool {
        !matches!(self, Value::Gauge(_))
    }

    /// The value in its metric's unit (seconds for a `_seconds_total` counter kept in µs).
    pub fn as_f64(&self) -> f64 {
        match *self {
            Value::Counter(v) | Value::Counter32(v) => v as f64,
            Value::CounterMicros(v) => v as f64 * Scale::Micro.per_count(),
            Value::Gauge(v) => v,
        }
    }

    /// How many metric units one count of this value is (gauges: 1).
    pub fn scale(&self) -> Scale {
        match self {
            Value::CounterMicros(_) => Scale::Micro,
            _ => Scale::One,
        }
    }
}

/// `{"kind": "counter"|"counter32"|"gauge", "value": ...}`, the value in the metric's unit: an exact
/// integer for plain counters, seconds (a float) for a counter kept in µs.
impl Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = ser.serialize_struct("Value", 2)?;
        match *self {
            Value::Counter(v) => {
                st.serialize_field("kind", "counter")?;
                st.serialize_field("value", &v)?;
            }
            Value::Counter32(v) => {
                st.serialize_field("kind", "counter32")?;
                st.serialize_field("value", &v)?;
            }
            Value::CounterMicros(_) => {
                st.serialize_field("kind", "counter")?;
                st.serialize_field("value", &self.as_f64())?;
            }
            Value::Gauge(v) => {
                st.serialize_field("kind", "gauge")?;
                st.serialize_field("value", &v)?;
            }
        }
        st.end()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    pub key: SeriesKey,
    pub value: Value,
}

impl Sample {
    pub fn counter(name: impl Into<Str>, labels: &[(LabelName, &str)], v: u64) -> Self {
        Self {
            key: SeriesKey::new(name, labels),
            value: Value::Counter(v),
        }
    }

    pub fn counter32(name: impl Into<Str>, labels: &[(LabelName, &str)], v: u64) -> Self {
        Self {
            key: SeriesKey::new(name, labels),
            value: Value::Counter32(v),
        }
    }

    /// A counter the device keeps in µs under a metric in seconds (see [`Value::CounterMicros`]).
    pub fn counter_micros(name: impl Into<Str>, labels: &[(LabelName, &str)], v: u64) -> Self {
        Self {
            key: SeriesKey::new(name, labels),
            value: Value::CounterMicros(v),
        }
    }

    pub fn gauge(name: impl Into<Str>, labels: &[(LabelName, &str)], v: f64) -> Self {
        Self {
            key: SeriesKey::new(name, labels),
            value: Value::Gauge(v),
        }
    }
}

/// Where a parser puts the samples it reads, one at a time: collected (a parser's accumulator,
/// which keeps one sample per series) or passed on as read (`rocetop parse` writes each sample
/// as it comes, so a 125k-port answer is never held as a whole vector of samples).
/// A closure taking a [`Sample`] is a sink.
pub trait Sink {
    fn set(&mut self, s: Sample);

    /// The sample `name{labels} = value`, given by its parts: a sink that only compares keys (a
    /// changed line read again, `parse/switch/rows.rs`) checks them without making the key.
    fn put(&mut self, name: &str, labels: &[(LabelName, &str)], value: Value) {
        self.set(Sample {
            key: SeriesKey::new(name, labels),
            value,
        });
    }
}

impl<F: FnMut(Sample)> Sink for F {
    fn set(&mut self, s: Sample) {
        self(s)
    }
}

/// What a pure parser returns: the samples it read, and an account of what it did not understand
/// (counted and shown in the health bar, never silently dropped).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Parsed {
    pub samples: Vec<Sample>,
    /// Non-blank lines that matched no known structure.
    pub unknown_lines: usize,
    /// The first few of those lines, for the error view and bug reports.
    pub unknown_examples: Vec<String>,
    /// Facts worth showing that are not numbers ("rx_prio3_pause not visible on this device").
    pub notes: Vec<String>,
}

/// Points from before a poll that the poll brought (a fleet source's backfill), series by
/// series: each key is held once however many steps it has (a fleet's 15 minutes are ~10^6
/// points).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct History {
    /// The evaluation times (ms), ascending.
    pub times: Vec<Ts>,
    /// Each series once, with (index into `times`, value) ascending.
    pub series: Vec<(SeriesKey, Vec<(u32, Value)>)>,
}

impl History {
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// How many points it holds.
    pub fn points(&self) -> usize {
        self.series.iter().map(|(_, v)| v.len()).sum()
    }
}

/// A parse of these samples with nothing unknown and no notes: what tests feed the store.
impl From<Vec<Sample>> for Parsed {
    fn from(samples: Vec<Sample>) -> Self {
        Self {
            samples,
            ..Self::default()
        }
    }
}

impl Parsed {
    pub const MAX_EXAMPLES: usize = 5;

    /// Record a line nobody understood (blank lines are not counted).
    pub fn unknown(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        self.unknown_lines += 1;
        if self.unknown_examples.len() < Self::MAX_EXAMPLES {
            self.unknown_examples.push(line.chars().take(160).collect());
        }
    }

    pub fn push(&mut self, s: Sample) {
        self.samples.push(s);
    }

    pub fn note(&mut self, n: impl Into<String>) {
        let n = n.into();
        if !self.notes.contains(&n) {
            self.notes.push(n);
        }
    }

    /// Append another parse result (several commands of one poll).
    pub fn merge(&mut self, other: Parsed) {
        self.samples.extend(other.samples);
        self.unknown_lines += other.unknown_lines;
        for e in other.unknown_examples {
            if self.unknown_examples.len() < Self::MAX_EXAMPLES {
                self.unknown_examples.push(e);
            }
        }
        for n in other.notes {
            self.note(n);
        }
    }

    /// The value of the first sample with this name whose labels include all of `labels`.
    pub fn find(&self, name: &str, labels: &[(&str, &str)]) -> Option<Value> {
        self.samples
            .iter()
            .find(|s| {
                s.key.name == name
                    && labels
                        .iter()
                        .all(|(k, v)| s.key.label(k).is_some_and(|x| x == *v))
            })
            .map(|s| s.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_small() {
        // The name one pointer, the label set inline (its shared part one pointer, two
        // closed-vocabulary labels as numbers): what a parsed sample costs besides its row's
        // one shared set.
        assert!(std::mem::size_of::<Str>() <= 8);
        assert!(std::mem::size_of::<Labels>() <= 16);
        assert!(std::mem::size_of::<SeriesKey>() <= 24);
        assert!(std::mem::size_of::<Sample>() <= 40);
    }

    #[test]
    fn keys_with_labels_in_any_order_are_equal() {
        let a = SeriesKey::new("m", &[("port", "E1"), ("switch", "s")]);
        let b = SeriesKey::new("m", &[("switch", "s"), ("port", "E1")]);
        assert_eq!(a, b);
        assert_eq!(a.to_string(), r#"m{port="E1",switch="s"}"#);
    }

    #[test]
    fn label_values_are_escaped_for_prometheus() {
        let k = SeriesKey::new("m", &[("log", "a\"b\\c\nd")]);
        assert_eq!(k.to_string(), r#"m{log="a\"b\\c\nd"}"#);
    }

    #[test]
    fn with_label_replaces_or_adds() {
        let k = SeriesKey::new("m", &[("node", "a")]);
        assert_eq!(k.with_label("node", "b").label("node"), Some("b"));
        let k2 = k.with_label("device", "d");
        assert_eq!(k2.labels.iter().next().map(|l| l.0), Some("device"));
    }

    #[test]
    fn unknown_lines_are_counted_with_a_few_examples() {
        let mut p = Parsed::default();
        for i in 0..10 {
            p.unknown(&format!("junk {i}"));
        }
        p.unknown("   ");
        assert_eq!(p.unknown_lines, 10);
        assert_eq!(p.unknown_examples.len(), Parsed::MAX_EXAMPLES);
    }
}
