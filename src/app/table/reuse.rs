//! A table written over the one it replaces: after new data the rows of the last frame keep
//! their strings and vectors, and the new values are written into them, so a frame neither frees
//! the old rows nor allocates the new ones (at 512 nodes that was as much work as computing them).

use super::{Cell, Chart, Row, RowId, Tone, Val};
use std::rc::Rc;

/// Writes a row's cells over the ones it held in the previous frame (a recycled row, see
/// [`Row::reuse`]): a text goes into the string already there, so a frame after new data
/// allocates no text it had before. Cells past the last one written are dropped.
pub struct CellsIn<'a> {
    v: &'a mut Vec<Cell>,
    n: usize,
}

impl<'a> CellsIn<'a> {
    pub fn new(v: &'a mut Vec<Cell>) -> Self {
        CellsIn { v, n: 0 }
    }

    #[inline]
    fn slot(&mut self) -> &mut Cell {
        if self.n == self.v.len() {
            self.v.push(Cell::default());
        }
        self.n += 1;
        &mut self.v[self.n - 1]
    }

    /// A text cell: `Cell { val: Val::Text(s.into()), tone }`.
    #[inline]
    pub fn text(&mut self, s: &str, tone: Option<Tone>) {
        let c = self.slot();
        match &mut c.val {
            Val::Text(t) => {
                t.clear();
                t.push_str(s);
            }
            v => *v = Val::Text(s.to_string()),
        }
        c.tone = tone;
    }

    /// A text cell written from `args` (`format!` without a new string).
    pub fn text_fmt(&mut self, args: std::fmt::Arguments, tone: Option<Tone>) {
        use std::fmt::Write;
        let c = self.slot();
        if let Val::Text(t) = &mut c.val {
            t.clear();
        } else {
            c.val = Val::Text(String::new());
        }
        if let Val::Text(t) = &mut c.val {
            let _ = t.write_fmt(args);
        }
        c.tone = tone;
    }

    #[inline]
    pub fn push(&mut self, cell: Cell) {
        *self.slot() = cell;
    }
}

impl Drop for CellsIn<'_> {
    fn drop(&mut self) {
        self.v.truncate(self.n);
    }
}

impl RowId {
    /// `*self = src.clone()`, into the strings this one holds where both are of one kind.
    pub fn assign(&mut self, src: &RowId) {
        match (self, src) {
            // The Overview's 512 node rows a frame: no string made and freed for each.
            (RowId::Node(n), RowId::Node(s)) | (RowId::Source(n), RowId::Source(s)) => {
                n.clone_from(s);
            }
            (
                RowId::Peer {
                    peer,
                    transport,
                    device,
                },
                RowId::Peer {
                    peer: p,
                    transport: t,
                    device: d,
                },
            ) => {
                peer.clone_from(p);
                transport.clone_from(t);
                device.clone_from(d);
            }
            (RowId::Port { switch, port }, RowId::Port { switch: s, port: p }) => {
                switch.clone_from(s);
                port.clone_from(p);
            }
            (
                RowId::Queue {
                    switch,
                    port,
                    queue,
                },
                RowId::Queue {
                    switch: s,
                    port: p,
                    queue: q,
                },
            ) => {
                switch.clone_from(s);
                port.clone_from(p);
                queue.clone_from(q);
            }
            (RowId::Device { node, device }, RowId::Device { node: n, device: d }) => {
                node.clone_from(n);
                device.clone_from(d);
            }
            (
                RowId::Netdev {
                    node,
                    netdev,
                    priority,
                },
                RowId::Netdev {
                    node: n,
                    netdev: d,
                    priority: p,
                },
            ) => {
                node.clone_from(n);
                netdev.clone_from(d);
                priority.clone_from(p);
            }
            (me, src) => *me = src.clone(),
        }
    }
}

impl Row {
    /// A row named `id` and `name` with `charts`, made in `old` (a row of the previous frame, or
    /// a new one) so its strings and vectors are written over rather than made again. Its cells
    /// are the caller's to write ([`CellsIn`]); everything else is as a new row's.
    pub fn reuse(old: Option<Row>, id: &RowId, name: &str, charts: &Rc<[Chart]>) -> Row {
        let Some(mut r) = old else {
            return Row {
                id: id.clone(),
                name: name.to_string(),
                charts: charts.clone(),
                ..Default::default()
            };
        };
        r.id.assign(id);
        r.name.clear();
        r.name.push_str(name);
        r.charts = charts.clone();
        r.tone = Tone::default();
        r.score = 0.0;
        r.span = None;
        r.notes.clear();
        r.facts.clear();
        r.pending = None;
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `assign` leaves what `clone` would, from every kind of id into every kind.
    #[test]
    fn assign_equals_clone_between_every_kind() {
        let s = |x: &str| x.to_string();
        let ids = [
            RowId::Source(s("src")),
            RowId::Switch(s("leaf2")),
            RowId::Node(s("gpu12")),
            RowId::Node(s("a node with a longer name")),
            RowId::Port {
                switch: s("leaf1"),
                port: s("Ethernet1/1"),
            },
            RowId::Queue {
                switch: s("leaf1"),
                port: s("Ethernet1/2"),
                queue: s("3"),
            },
            RowId::Device {
                node: s("gpu1"),
                device: s("rocep11s0"),
            },
            RowId::Netdev {
                node: s("gpu1"),
                netdev: s("ens192"),
                priority: s("3"),
            },
            RowId::Peer {
                peer: s("gpu2"),
                transport: s("rdma"),
                device: s("mlx5_1"),
            },
        ];
        for into in &ids {
            for from in &ids {
                let mut id = into.clone();
                id.assign(from);
                assert_eq!(&id, from, "{into:?} <- {from:?}");
            }
        }
    }
}
