//! A table of several switches' ports, each switch's rows under its summary line. The rows come
//! filtered and ordered; grouping keeps that order within a switch and puts the switches in the
//! order their first rows had, so the worst switch comes first when the rows are worst first,
//! and sorting by a column orders the switches by their best value in it.

use super::{Cell, Row, RowId, Val};
use crate::metrics::query::Agg;

/// The switch a row belongs to: its port's, or the switch a source row stands for.
pub fn switch_of(id: &RowId) -> Option<&str> {
    match id {
        RowId::Port { switch, .. } | RowId::Queue { switch, .. } | RowId::Switch(switch) => {
            Some(switch)
        }
        RowId::Source(name) => Some(name),
        _ => None,
    }
}

/// `rows` grouped by switch, each group after its summary line (`head` of the switch and its
/// rows; a down switch's one source row is its group without one). Rows of no switch stay last.
pub fn by_switch(rows: Vec<Row>, mut head: impl FnMut(&str, &[Row]) -> Row) -> Vec<Row> {
    let mut order: Vec<String> = Vec::new();
    let mut groups: Vec<Vec<Row>> = Vec::new();
    let mut loose = Vec::new();
    for r in rows {
        let Some(sw) = switch_of(&r.id) else {
            loose.push(r);
            continue;
        };
        match order.iter().position(|s| s == sw) {
            Some(i) => groups[i].push(r),
            None => {
                order.push(sw.to_string());
                groups.push(vec![r]);
            }
        }
    }
    let mut out =
        Vec::with_capacity(groups.iter().map(|g| g.len() + 1).sum::<usize>() + loose.len());
    for (sw, rows) in order.iter().zip(groups) {
        let sourced = rows.len() == 1 && matches!(rows[0].id, RowId::Source(_));
        if !sourced {
            out.push(head(sw, &rows));
        }
        out.extend(rows);
    }
    out.extend(loose);
    out
}

/// A summary line's values: per column, the rows' rates and counts summed (missing where no row
/// has one: a switch whose ports count nothing says so, not 0); other columns stay blank.
#[derive(Clone, Debug, Default)]
pub struct Sums(Vec<Val>);

impl Sums {
    pub fn add(&mut self, cells: &[Cell]) {
        if self.0.len() < cells.len() {
            self.0.resize(cells.len(), Val::default());
        }
        for (acc, c) in self.0.iter_mut().zip(cells) {
            *acc = match (&*acc, &c.val) {
                (Val::Rate(a), Val::Rate(b)) => Val::Rate(add_agg(*a, *b)),
                (Val::Text(t), Val::Rate(b)) if t.is_empty() => Val::Rate(*b),
                (Val::Sparse(a, n), Val::Sparse(b, m)) => {
                    Val::Sparse(add_agg(*a, *b), add_count(*n, *m))
                }
                (Val::Text(t), Val::Sparse(b, m)) if t.is_empty() => Val::Sparse(*b, *m),
                (Val::Count(n), Val::Count(m)) => Val::Count(add_count(*n, *m)),
                (Val::Text(t), Val::Count(m)) if t.is_empty() => Val::Count(*m),
                _ => Val::default(),
            };
        }
    }

    /// Column `i`'s sum (blank where the column is not summed).
    pub fn get(&self, i: usize) -> Val {
        self.0.get(i).cloned().unwrap_or_default()
    }
}

fn add_agg(a: Option<Agg>, b: Option<Agg>) -> Option<Agg> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(Agg {
            rate: add_f(a.rate, b.rate),
            reset: a.reset || b.reset,
        }),
    }
}

fn add_f(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(a + b),
    }
}

fn add_count(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(a.saturating_add(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::table::Cell;

    fn port(sw: &str, port: &str) -> Row {
        Row {
            id: RowId::Port {
                switch: sw.into(),
                port: port.into(),
            },
            name: format!("{sw} {port}"),
            ..Default::default()
        }
    }

    fn names(rows: &[Row]) -> Vec<String> {
        rows.iter().map(|r| r.name.clone()).collect()
    }

    #[test]
    fn sums_add_what_is_there_and_keep_missing_missing() {
        let rate = |r: Option<f64>| {
            Val::Rate(Some(Agg {
                rate: r,
                reset: false,
            }))
        };
        let mut s = Sums::default();
        s.add(&[
            Cell::new("Ethernet1"),
            Cell::new(rate(Some(2.0))),
            Cell::new(Val::Count(None)),
        ]);
        s.add(&[
            Cell::new("Ethernet2"),
            Cell::new(rate(None)),
            Cell::new(Val::Count(None)),
        ]);
        s.add(&[
            Cell::new("Ethernet3"),
            Cell::new(rate(Some(3.5))),
            Cell::new(Val::Count(None)),
        ]);
        assert_eq!(s.get(0), Val::default(), "a name is not summed");
        assert_eq!(s.get(1), rate(Some(5.5)));
        assert_eq!(s.get(2), Val::Count(None), "nothing counted stays missing");
        assert_eq!(s.get(9), Val::default());
    }

    #[test]
    fn switches_keep_the_order_of_their_first_rows_and_rows_theirs() {
        let down = Row {
            id: RowId::Source("leaf3".into()),
            name: "leaf3".into(),
            ..Default::default()
        };
        let rows = vec![
            port("leaf2", "Ethernet7"),
            down,
            port("leaf1", "Ethernet1"),
            port("leaf2", "Ethernet1"),
            port("leaf1", "Ethernet9"),
        ];
        let mut seen = Vec::new();
        let out = by_switch(rows, |sw, mine| {
            seen.push((sw.to_string(), mine.len()));
            Row {
                id: RowId::Switch(sw.into()),
                name: format!("= {sw}"),
                cells: vec![Cell::new(sw)],
                ..Default::default()
            }
        });
        assert_eq!(
            names(&out),
            [
                "= leaf2",
                "leaf2 Ethernet7",
                "leaf2 Ethernet1",
                "leaf3",
                "= leaf1",
                "leaf1 Ethernet1",
                "leaf1 Ethernet9"
            ]
        );
        assert_eq!(seen, [("leaf2".to_string(), 2), ("leaf1".to_string(), 2)]);
    }
}
