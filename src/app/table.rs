//! What a tab's table is made of, independent of drawing: rows with stable identities (so the
//! selection follows its node, port, device or peer across re-sorts, filters and new rows), cells
//! holding values (formatted only when drawn, sortable by any column), columns with a priority
//! (the low ones drop on a narrow screen), and the charts a row offers the detail view.

use super::alerts::Severity;
use crate::metrics::query::{self, Agg};
use crate::metrics::{Store, Ts};
use std::cmp::Ordering;
use std::rc::Rc;

mod arrange;
pub mod group;
mod reuse;
pub use arrange::{NameOrderMemo, arrange, arrange_with_names};
pub use reuse::CellsIn;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Tone {
    #[default]
    Normal,
    Dim,
    Stale,
    Ok,
    Warn,
    Crit,
    Accent,
}

impl Tone {
    pub fn of(sev: Option<Severity>) -> Tone {
        match sev {
            Some(Severity::Crit) => Tone::Crit,
            Some(Severity::Warn) => Tone::Warn,
            None => Tone::Normal,
        }
    }
}

/// A cell's value; `ui` formats it (one formatter per kind), sorting compares the values.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Text(String),
    /// A per-second rate with its reset mark.
    Rate(Option<Agg>),
    /// A sparse counter: the rate and how many happened in the last 60 s.
    Sparse(Option<Agg>, Option<u64>),
    Count(Option<u64>),
    Num(Option<f64>),
    /// Seconds (RTTs, step times).
    Secs(Option<f64>),
    /// A fraction 0..1 shown as a percentage.
    Percent(Option<f64>),
}

impl Default for Val {
    fn default() -> Self {
        Val::Text(String::new())
    }
}

impl From<&str> for Val {
    fn from(s: &str) -> Val {
        Val::Text(s.to_string())
    }
}

impl From<String> for Val {
    fn from(s: String) -> Val {
        Val::Text(s)
    }
}

impl Val {
    /// The number this value sorts by (missing sorts last whichever the direction).
    pub fn number(&self) -> Option<f64> {
        match self {
            Val::Text(_) => None,
            Val::Rate(a) => a.as_ref().and_then(|a| a.rate),
            // The last minute's count tells a storm that just ended from a quiet port.
            Val::Sparse(a, n) => n
                .map(|n| n as f64)
                .or_else(|| a.as_ref().and_then(|a| a.rate)),
            Val::Count(n) => n.map(|n| n as f64),
            Val::Num(v) | Val::Secs(v) | Val::Percent(v) => *v,
        }
        .filter(|v| v.is_finite())
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Cell {
    pub val: Val,
    /// `None`: the row's tone.
    pub tone: Option<Tone>,
}

impl Cell {
    pub fn new(val: impl Into<Val>) -> Cell {
        Cell {
            val: val.into(),
            tone: None,
        }
    }
    pub fn tone(val: impl Into<Val>, tone: Tone) -> Cell {
        Cell {
            val: val.into(),
            tone: Some(tone),
        }
    }
    /// Toned only when `bad`.
    pub fn warn_if(val: impl Into<Val>, bad: bool, tone: Tone) -> Cell {
        Cell {
            val: val.into(),
            tone: bad.then_some(tone),
        }
    }
    /// A count that must stand out from the first event (drops): critical when > 0.
    pub fn crit_if(val: impl Into<Val>, bad: bool) -> Cell {
        Cell::warn_if(val, bad, Tone::Crit)
    }
}

/// A column: its title and width, and its priority: 0 is never hidden (it names the row or the
/// culprit), larger numbers drop first when the screen is narrow.
#[derive(Clone, Copy, Debug)]
pub struct Col {
    pub title: &'static str,
    pub width: usize,
    pub left: bool,
    pub prio: u8,
}

/// A right-aligned (numeric) column.
pub const fn col(title: &'static str, width: usize, prio: u8) -> Col {
    Col {
        title,
        width,
        left: false,
        prio,
    }
}

/// A left-aligned (text) column.
pub const fn lcol(title: &'static str, width: usize, prio: u8) -> Col {
    Col {
        title,
        width,
        left: true,
        prio,
    }
}

/// What a row stands for; the selection holds this, not a position.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RowId {
    /// A source without data (down, waiting): the row stands for the source.
    Source(String),
    /// A switch's summary line above its rows.
    Switch(String),
    Node(String),
    Port {
        switch: String,
        port: String,
    },
    Queue {
        switch: String,
        port: String,
        queue: String,
    },
    Device {
        node: String,
        device: String,
    },
    Netdev {
        node: String,
        netdev: String,
        priority: String,
    },
    Peer {
        peer: String,
        transport: String,
        /// The rail (`device = "all"`); empty where the peer is pinged over one device.
        device: String,
    },
}

impl Default for RowId {
    fn default() -> Self {
        RowId::Source(String::new())
    }
}

#[derive(Clone, Debug, Default)]
pub struct Row {
    pub id: RowId,
    /// For sorting by name and the filter.
    pub name: String,
    pub cells: Vec<Cell>,
    pub tone: Tone,
    /// Larger is worse (sort worst first).
    pub score: f64,
    /// Text drawn across the columns after the first `n` cells (an error, "waiting").
    pub span: Option<(usize, Cell)>,
    /// Shared with the kept layout: a frame hands its rows the same charts without copying.
    pub charts: Rc<[Chart]>,
    /// Lines the detail view shows above the charts (a lossless-path finding and its fix).
    pub notes: Vec<String>,
    /// Plain lines the detail view shows first (a node's NICs and where they are cabled).
    pub facts: Vec<String>,
    /// Cells not computed yet (`cells` is empty): the tab's view model makes them from its
    /// layout's entry when the row is drawn or read (`vm::fill`). Hundreds of rows are sorted,
    /// ~30 are on screen.
    pub pending: Option<LayoutAt>,
}

/// A row's entry in its tab's kept layout: the group (a switch, a node) and the item in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutAt {
    pub group: usize,
    pub item: usize,
}

/// What the detail view (Enter) charts for a row. The metric and its labels are shared: a
/// table kept between frames hands every frame's rows the same charts without copying them.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    pub label: String,
    pub name: Rc<str>,
    pub labels: Rc<[(&'static str, String)]>,
    pub kind: ChartKind,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ChartKind {
    /// Per-second rate summed over the matching series (drawn from zero).
    Rate,
    /// Gauge values (the largest of the matching series), multiplied by the factor; drawn over
    /// the window's min..max, and a sample holds until the next one (slow logs).
    Gauge(f64),
}

impl Chart {
    pub fn rate(label: &str, name: &str, labels: &[(&'static str, &str)]) -> Chart {
        Chart::new(label, name, labels, ChartKind::Rate)
    }
    pub fn new(label: &str, name: &str, labels: &[(&'static str, &str)], kind: ChartKind) -> Chart {
        Chart {
            label: label.into(),
            name: name.into(),
            labels: labels.iter().map(|(k, v)| (*k, (*v).to_string())).collect(),
            kind,
        }
    }

    /// The chart's values on the shared time axis ending at `now`.
    pub fn timeline(&self, store: &Store, now: Ts, step: i64, width: usize) -> Vec<Option<f64>> {
        let labels: Vec<(&str, &str)> = self.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let since = axis_start(now, step, width);
        match self.kind {
            ChartKind::Rate => query::rate_timeline(store, &self.name, &labels, since, step, width),
            ChartKind::Gauge(f) => hold_gaps(
                query::gauge_timeline(store, &self.name, &labels, since, step, width)
                    .into_iter()
                    .map(|v| v.map(|x| x * f))
                    .collect(),
            ),
        }
    }
}

/// Start of a time axis of `width` buckets of `step` ms whose last bucket holds `now`.
pub fn axis_start(now: Ts, step: i64, width: usize) -> Ts {
    let step = step.max(1);
    (now.div_euclid(step) - width as i64 + 1) * step
}

/// A gauge sampled slower than one bucket per sample (a log line every 2 s) leaves regular holes
/// between its samples: each sample holds until the next one when the hole is no longer than
/// the series' usual spacing (the median gap between its samples). A longer hole is missing
/// data and stays blank, as do the buckets before the first sample and after the last.
pub fn hold_gaps(mut v: Vec<Option<f64>>) -> Vec<Option<f64>> {
    let at: Vec<usize> = (0..v.len()).filter(|&i| v[i].is_some()).collect();
    let mut gaps: Vec<usize> = at.windows(2).map(|w| w[1] - w[0]).collect();
    if gaps.is_empty() {
        return v;
    }
    gaps.sort_unstable();
    let usual = gaps[gaps.len() / 2];
    for w in at.windows(2) {
        let (a, b) = (w[0], w[1]);
        if b - a > 1 && b - a <= usual {
            let held = v[a];
            for slot in &mut v[a + 1..b] {
                *slot = held;
            }
        }
    }
    v
}

/// Node names with their common prefix written once: "ubunturdma5,7,8".
pub fn short_names(names: &[&str]) -> String {
    let Some(first) = names.first() else {
        return "-".into();
    };
    if names.len() == 1 {
        return (*first).to_string();
    }
    let prefix_len = first
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(first.len()))
        .filter(|&i| {
            let p = &first[..i];
            !p.ends_with(|c: char| c.is_ascii_digit()) && names.iter().all(|n| n.starts_with(p))
        })
        .max()
        .unwrap_or(0);
    let prefix = &first[..prefix_len];
    let rest: Vec<&str> = names
        .iter()
        .map(|n| &n[prefix_len.min(n.len())..])
        .collect();
    format!("{prefix}{}", rest.join(","))
}

/// Order names as people do: ubunturdma2 before ubunturdma10.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (pa, na) = natural_key(a);
    let (pb, nb) = natural_key(b);
    pa.cmp(pb).then(na.cmp(&nb)).then(a.cmp(b))
}

/// A name as [`natural_cmp`] compares it: the text before its trailing digits, and their number.
fn natural_key(s: &str) -> (&str, Option<u64>) {
    let i = s.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    (&s[..i], s[i..].parse().ok())
}

/// How a tab's rows are ordered: worst first (each tab's score), or by one column; `desc`
/// flips (`s`). A numeric column starts largest first, a text column A to Z.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Sort {
    /// `None`: worst first.
    pub col: Option<usize>,
    pub flipped: bool,
}

/// A tab's computed table(s): the selectable rows, a second table where the tab has one (the PFC
/// tab's host NICs), and notes for its title line (stale switches).
#[derive(Clone, Debug, Default)]
pub struct TabView {
    pub cols: &'static [Col],
    pub rows: Vec<Row>,
    pub extra_cols: &'static [Col],
    pub extra: Vec<Row>,
    pub notes: Vec<String>,
}

impl TabView {
    /// Where the row `id` is now, counting the main table's rows first, then the second table's
    /// (the PFC tab's host rows are selectable too: their findings show in their detail view).
    pub fn position(&self, id: &RowId) -> Option<usize> {
        self.rows
            .iter()
            .chain(&self.extra)
            .position(|r| r.id == *id)
    }

    /// How many rows the selection walks: both tables.
    pub fn len(&self) -> usize {
        self.rows.len() + self.extra.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` of the selection's order: the main table, then the second one.
    pub fn get(&self, i: usize) -> Option<&Row> {
        self.rows.get(i).or_else(|| {
            i.checked_sub(self.rows.len())
                .and_then(|j| self.extra.get(j))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slow_series_holds_between_samples_but_a_gap_stays_a_gap() {
        let s = |v: f64| Some(v);
        // One sample every 2 buckets, then 6 buckets of nothing (the log stopped), then more.
        let v = vec![
            None,
            s(1.0),
            None,
            s(2.0),
            None,
            s(3.0),
            None,
            None,
            None,
            None,
            None,
            s(4.0),
            None,
            s(5.0),
        ];
        let h = hold_gaps(v);
        assert_eq!(
            h,
            vec![
                None,
                s(1.0),
                s(1.0),
                s(2.0),
                s(2.0),
                s(3.0),
                None,
                None,
                None,
                None,
                None,
                s(4.0),
                s(4.0),
                s(5.0)
            ]
        );
        // Every bucket sampled: nothing to hold.
        assert_eq!(
            hold_gaps(vec![s(1.0), None, s(2.0)]),
            vec![s(1.0), s(1.0), s(2.0)]
        );
        assert_eq!(hold_gaps(vec![s(1.0), s(2.0)]), vec![s(1.0), s(2.0)]);
    }

    fn row(name: &str, score: f64, v: Option<f64>) -> Row {
        Row {
            id: RowId::Node(name.into()),
            name: name.into(),
            cells: vec![Cell::new(name), Cell::new(Val::Num(v))],
            score,
            ..Default::default()
        }
    }

    #[test]
    fn sorting_by_a_column_puts_missing_last_in_both_directions() {
        let mut rows = vec![
            row("n2", 1.0, Some(5.0)),
            row("n10", 3.0, None),
            row("n1", 2.0, Some(7.0)),
        ];
        let names = |r: &[Row]| r.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
        arrange(&mut rows, "", Sort::default());
        assert_eq!(names(&rows), ["n10", "n1", "n2"], "worst first");
        let by1 = Sort {
            col: Some(1),
            flipped: false,
        };
        arrange(&mut rows, "", by1);
        assert_eq!(names(&rows), ["n1", "n2", "n10"]);
        arrange(
            &mut rows,
            "",
            Sort {
                flipped: true,
                ..by1
            },
        );
        assert_eq!(names(&rows), ["n2", "n1", "n10"]);
        arrange(
            &mut rows,
            "",
            Sort {
                col: Some(0),
                flipped: false,
            },
        );
        assert_eq!(names(&rows), ["n1", "n2", "n10"], "natural order");
        arrange(&mut rows, "N1", Sort::default());
        assert_eq!(names(&rows), ["n10", "n1"], "filter");
    }
}

#[cfg(test)]
mod chart_tests {
    use super::*;
    use crate::metrics::{Parsed, Sample};

    /// A step time logged every 2 s draws without holes on a 1 s axis; a 10 s silence stays one.
    #[test]
    fn a_slow_gauge_holds_and_an_outage_is_a_gap() {
        let mut st = Store::new(3_600_000, 10_000);
        let src = st.add_source("log", 1000);
        let t0 = 1_700_000_000_000;
        let mut at = Vec::new();
        at.extend((0..10).map(|i| t0 + i * 2000));
        at.extend((0..5).map(|i| t0 + 30_000 + i * 2000));
        for t in &at {
            let p = Parsed {
                samples: vec![Sample::gauge(
                    "rocetop_train_step_seconds",
                    &[("node", "n1")],
                    0.16,
                )],
                ..Default::default()
            };
            st.ingest(src, *t, &p);
        }
        let c = Chart::new(
            "step",
            "rocetop_train_step_seconds",
            &[("node", "n1")],
            ChartKind::Gauge(1e3),
        );
        let now = t0 + 38_000;
        let tl = c.timeline(&st, now, 1000, 39);
        let filled = |a: usize, b: usize| tl[a..=b].iter().all(Option::is_some);
        assert!(filled(0, 18), "held between 2 s samples: {tl:?}");
        assert!(tl[19..30].iter().all(Option::is_none), "the outage: {tl:?}");
        assert!(filled(30, 38), "{tl:?}");
        assert_eq!(tl[5], Some(160.0));
    }
}
