//! Filtering and ordering a tab's rows (every frame after new data, hundreds of rows at 512
//! nodes).

use super::{Row, Sort, Val, natural_cmp, natural_key};
use std::cmp::Ordering;

/// Keep the rows passing `filter` (case-insensitive substring of the name) and order them.
pub fn arrange(rows: &mut Vec<Row>, filter: &str, sort: Sort) {
    arrange_with_names(rows, filter, sort, &mut NameOrderMemo::default());
}

/// The rows' order by name (natural order, then as given), kept between frames: a table's rows
/// keep their names from one frame to the next (their layout is kept), so their order by name
/// is found once rather than by comparing names in every frame's sort (hundreds of rows, most
/// tied on the score). A memo: made again whenever the names differ.
#[derive(Debug, Default)]
pub struct NameOrderMemo {
    names: Vec<String>,
    /// Per row, its place in name order (all different: equal names by their place).
    rank: Vec<u32>,
}

impl NameOrderMemo {
    /// Each row's place in name order, the kept one where the rows have the kept names.
    fn ranks(&mut self, rows: &[Row]) -> &[u32] {
        let same = self.names.len() == rows.len()
            && self.names.iter().zip(rows).all(|(n, r)| *n == r.name);
        if !same {
            let keys: Vec<(&str, Option<u64>)> =
                rows.iter().map(|r| natural_key(&r.name)).collect();
            let mut order: Vec<usize> = (0..rows.len()).collect();
            order.sort_by(|&a, &b| {
                let ((pa, na), (pb, nb)) = (keys[a], keys[b]);
                pa.cmp(pb)
                    .then(na.cmp(&nb))
                    .then_with(|| rows[a].name.cmp(&rows[b].name))
            });
            self.rank.clear();
            self.rank.resize(rows.len(), 0);
            for (place, &i) in order.iter().enumerate() {
                self.rank[i] = place as u32;
            }
            self.names.truncate(rows.len());
            for (i, r) in rows.iter().enumerate() {
                match self.names.get_mut(i) {
                    Some(n) => n.clone_from(&r.name),
                    None => self.names.push(r.name.clone()),
                }
            }
        }
        &self.rank
    }
}

/// [`arrange`] with the rows' order by name kept in `names` (the same order).
pub fn arrange_with_names(
    rows: &mut Vec<Row>,
    filter: &str,
    sort: Sort,
    names: &mut NameOrderMemo,
) {
    if !filter.is_empty() {
        let f = filter.to_lowercase();
        rows.retain(|r| r.name.to_lowercase().contains(&f));
    }
    let flip = |o: Ordering| if sort.flipped { o.reverse() } else { o };
    let rank = names.ranks(rows);
    // Ties broken by the name's place: no two rows compare equal, so an unstable sort gives the
    // one order a stable sort by (key, name) gives.
    let order: Vec<usize> = match sort.col {
        None => by_score(rows, rank, sort.flipped),
        Some(c) => by_column(rows, rank, c, flip),
    };
    permute(rows, &order);
}

/// The rows' indices worst first (`flipped`: best first), ties by the name's place. Each row's
/// order is one integer (score, place, index) sorted as integers: comparing through the rows'
/// indices cost a lookup per side per comparison, hundreds of rows each frame after new data.
fn by_score(rows: &[Row], rank: &[u32], flipped: bool) -> Vec<usize> {
    let mut keys: Vec<u128> = rows
        .iter()
        .zip(rank)
        .enumerate()
        .map(|(i, (r, &k))| {
            let s = total_order(r.score);
            let s = if flipped { s } else { !s };
            u128::from(s) << 64 | u128::from(k) << 32 | i as u128
        })
        .collect();
    keys.sort_unstable();
    keys.into_iter().map(|k| k as u32 as usize).collect()
}

/// `x` as an integer in the order of [`f64::total_cmp`].
fn total_order(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// Puts row `order[i]` at `i`, in place, one swap a row out of place: moving every row out and
/// back (two copies of ~250 bytes a row) was most of what ordering them cost.
fn permute(rows: &mut [Row], order: &[usize]) {
    let mut done = vec![false; rows.len()];
    for i in 0..rows.len() {
        let mut j = i;
        while !done[j] {
            done[j] = true;
            let k = order[j];
            if k == i {
                break;
            }
            // The row for `j` is still where it was made (`k` is not done yet); the one taken
            // out of `j` moves on along the cycle.
            rows.swap(j, k);
            j = k;
        }
    }
}

/// The rows' indices ordered by column `c` (missing last), ties by the name's place.
fn by_column(
    rows: &[Row],
    rank: &[u32],
    c: usize,
    flip: impl Fn(Ordering) -> Ordering,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_unstable_by(|&a, &b| {
        by_cell(cell_val(&rows[a], c), cell_val(&rows[b], c), &flip).then(rank[a].cmp(&rank[b]))
    });
    order
}

/// Two rows' values in the sorted column: numbers (largest first), then texts, missing data last
/// either way.
fn by_cell(va: Option<&Val>, vb: Option<&Val>, flip: impl Fn(Ordering) -> Ordering) -> Ordering {
    match (va.and_then(Val::number), vb.and_then(Val::number)) {
        (Some(x), Some(y)) => flip(y.total_cmp(&x)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => match (va, vb) {
            (Some(Val::Text(x)), Some(Val::Text(y))) => flip(natural_cmp(x, y)),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            _ => Ordering::Equal,
        },
    }
}

/// A row's value in column `c`; rows spanning an error have none past the span.
fn cell_val(r: &Row, c: usize) -> Option<&Val> {
    if r.span.as_ref().is_some_and(|(n, _)| c >= *n) {
        return None;
    }
    r.cells.get(c).map(|c| &c.val)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::table::{Cell, RowId};

    /// The order by definition: the rows themselves sorted by the key, then the name.
    fn plain(rows: &mut [Row], sort: Sort) {
        let flip = |o: Ordering| if sort.flipped { o.reverse() } else { o };
        let by_name = |a: &Row, b: &Row| natural_cmp(&a.name, &b.name);
        match sort.col {
            None => rows.sort_by(|a, b| flip(b.score.total_cmp(&a.score)).then(by_name(a, b))),
            // The rows themselves, stable, ties by the name compared (not by a kept place).
            Some(c) => rows
                .sort_by(|a, b| by_cell(cell_val(a, c), cell_val(b, c), flip).then(by_name(a, b))),
        }
    }

    fn row(name: &str, score: f64, v: Option<f64>, text: &str) -> Row {
        Row {
            id: RowId::Node(name.into()),
            name: name.into(),
            cells: vec![Cell::new(name), Cell::new(Val::Num(v)), Cell::new(text)],
            score,
            ..Default::default()
        }
    }

    /// Rows in name order (the fast path) and out of it, with ties on the score and on the
    /// column, missing values, equal names and a row spanning an error: every sort and
    /// direction orders them as sorting the rows by the key and then the name does.
    #[test]
    fn arranged_rows_are_in_the_order_sorting_them_by_definition_gives() {
        let in_order: Vec<Row> = (1..=40)
            .map(|i| {
                // Ties, both zeros, negative, infinite and NaN scores (ordered as `total_cmp` orders them).
                let score = [0.0, 0.0, -0.0, 5.0, 1e9, -3.0, f64::NAN, f64::INFINITY][i % 8];
                let v = (i % 7 != 0).then_some((i % 3) as f64);
                row(&format!("gpu{i}"), score, v, ["b", "a", "a10", "a9"][i % 4])
            })
            .collect();
        let mut shuffled = in_order.clone();
        shuffled.reverse();
        shuffled.swap(3, 17);
        let mut dup = in_order.clone();
        dup.insert(5, row("gpu5", 2.0, Some(1.0), "z"));
        dup.insert(0, row("gpu5", 2.0, Some(1.0), "y"));
        let mut spanned = in_order.clone();
        spanned[8].span = Some((1, Cell::new("down")));
        spanned.push(row("leaf", 0.0, None, "a"));
        let mut sorts = vec![Sort::default()];
        for col in 0..3 {
            sorts.push(Sort {
                col: Some(col),
                flipped: false,
            });
        }
        let sorts: Vec<Sort> = sorts
            .into_iter()
            .flat_map(|s| [s, Sort { flipped: true, ..s }])
            .collect();
        let names = |r: &[Row]| r.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
        let texts = |r: &[Row]| r.iter().map(|r| r.cells[2].val.clone()).collect::<Vec<_>>();
        for (case, rows) in [
            ("in order", in_order),
            ("shuffled", shuffled),
            ("equal names", dup),
            ("spanned", spanned),
        ] {
            for sort in &sorts {
                let (mut got, mut want) = (rows.clone(), rows.clone());
                arrange(&mut got, "", *sort);
                plain(&mut want, *sort);
                assert_eq!(names(&got), names(&want), "{case} {sort:?}");
                assert_eq!(texts(&got), texts(&want), "{case} {sort:?}");
            }
        }
    }

    /// One kept [`NameOrderMemo`] through a run of frames (as a tab keeps it): scores and values
    /// moving, a node going down (its row spans an error) and back, a new node, a filter, sort
    /// changes; every frame orders its rows as sorting them by definition does.
    #[test]
    fn a_kept_name_order_orders_every_frame_as_sorting_afresh() {
        let frame = |k: usize| -> Vec<Row> {
            // Names not in natural order as made (hosts of a PFC table: `gpu10 ens192` before
            // `gpu2 ens192`), two rows per node with equal names.
            let mut nodes: Vec<String> = (1..=12).map(|i| format!("gpu{i} ens192")).collect();
            if k >= 6 {
                nodes.push("gpu13 ens192".into());
            }
            nodes.sort();
            let mut rows = Vec::new();
            for (i, n) in nodes.iter().enumerate() {
                for prio in 0..2 {
                    let score =
                        [0.0, 0.0, (k % 3) as f64, 1e6 * (i % 2) as f64][(i + k + prio) % 4];
                    let v = ((i + k) % 5 != 0).then_some(((i * k) % 4) as f64);
                    let mut r = row(n, score, v, ["b", "a", "a10", "a9"][(i + prio) % 4]);
                    if (3..5).contains(&k) && i == 4 {
                        r.span = Some((1, Cell::new("down")));
                        r.id = RowId::Source(n.clone());
                    }
                    rows.push(r);
                }
            }
            rows
        };
        let names = |r: &[Row]| {
            r.iter()
                .map(|r| (r.name.clone(), r.cells[2].val.clone()))
                .collect::<Vec<_>>()
        };
        let mut kept = NameOrderMemo::default();
        for k in 0..14 {
            let sort = Sort {
                col: [None, None, Some(1), Some(2), Some(0)][(k / 2) % 5],
                flipped: k % 4 == 3,
            };
            let filter = if (9..11).contains(&k) { "GPU1" } else { "" };
            let (mut got, mut want) = (frame(k), frame(k));
            arrange_with_names(&mut got, filter, sort, &mut kept);
            want.retain(|r| r.name.to_lowercase().contains(&filter.to_lowercase()));
            plain(&mut want, sort);
            assert_eq!(names(&got), names(&want), "frame {k} {sort:?}");
        }
    }
}
