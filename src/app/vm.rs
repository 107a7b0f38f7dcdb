//! One view model per tab: the rows a tab shows, computed from the store, the alerts and the
//! config at one time `now` (a [`Ctx`]), so the same function gives the live screen, a frozen
//! view, a replay cursor or any "state at time T". `ui` only draws what these return.

pub mod congestion;
pub mod latency;
pub mod overview;
pub mod pause_tree;
pub mod pfc;
pub mod queues;
pub mod summary;
pub mod timeline;

use super::alerts::Alerts;
use super::source::SrcState;
use super::table::{Chart, LayoutAt, NameOrderMemo, Row, RowId, Sort, TabView, arrange_with_names};
use super::{App, Tab};
use crate::config::Config;
use crate::metrics::query;
use crate::metrics::store::{SeriesId, ShapeKey, SourceId, WindowsCache};
use crate::metrics::{Store, Ts};
use std::any::Any;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

/// What is behind a switch port: the nodes cabled there, or the switches at the far end of an
/// inter-switch link.
pub struct Behind<'a> {
    pub names: Vec<&'a str>,
    pub isl: bool,
}

/// A node a row is made for, and the source whose state it shows.
pub struct NodeRef {
    pub name: String,
    pub source: String,
    pub switch_port: Option<String>,
}

/// Everything a view model reads.
pub struct Ctx<'a> {
    pub cfg: &'a Config,
    /// Which node is behind which switch port (config, else LLDP).
    pub links: &'a super::pairing::Links,
    /// The fabric graph, made with `links` (so kept in a [`LinksCache`] like them).
    pub fabric: &'a super::fabric::Fabric,
    /// The lossless-path proof as of the last topology read.
    pub lossless: &'a super::lossless::Proof,
    pub store: &'a Store,
    pub alerts: &'a Alerts,
    /// The time the view shows.
    pub now: Ts,
    /// Totals count from here (start or mark).
    pub base: Ts,
    pub filter: &'a str,
    pub sort: Sort,
    source_ids: &'a HashMap<String, SourceId>,
    /// Counters' intervals kept between frames for `store` (see `metrics/store/windows.rs`).
    windows: &'a RefCell<WindowsCache>,
    /// The tab's rows as made from the set of series ([`Ctx::layout`]), kept between frames.
    layout: &'a LayoutCache,
    /// The rows of the table this one replaces, to be written over ([`Ctx::reused`]).
    pool: &'a RowPool,
    /// The main and second table's order by name, kept between frames ([`Ctx::arrange`]).
    names: &'a NameOrderMemos,
}

/// A tab's main and second table's [`NameOrderMemo`].
pub type NameOrderMemos = [RefCell<NameOrderMemo>; 2];

/// Rows of a tab's main and second table, kept to be written over.
pub type RowPool = RefCell<(Vec<Row>, Vec<Row>)>;

/// A tab's kept [`Ctx::layout`] with what it was made from: the store and its set of series
/// and sources.
pub type LayoutCache = RefCell<Option<(ShapeKey, Rc<dyn Any>)>>;

/// The part of a layout made from the links ([`Ctx::with_links`]), with their generation.
pub type LinksCache<N> = RefCell<Option<(u64, Rc<N>)>>;

impl Ctx<'_> {
    /// A source's state at the view's time.
    pub fn src(&self, name: &str) -> SrcState {
        let h = match self.source_ids.get(name) {
            Some(id) => self.store.source(*id),
            None => self.store.source_by_name(name).map(|(_, h)| h),
        };
        SrcState::of(h, self.now)
    }

    /// The store's id of the source named `name`, resolved once where a layout is made (the
    /// layout is made again when a source is added), for [`Ctx::src_of`].
    pub fn source_id(&self, name: &str) -> Option<SourceId> {
        match self.source_ids.get(name) {
            Some(id) => Some(*id),
            None => self.store.source_by_name(name).map(|(id, _)| id),
        }
    }

    /// [`Ctx::src`] of a source resolved by [`Ctx::source_id`] (no name looked up per row).
    pub fn src_of(&self, id: Option<SourceId>) -> SrcState {
        SrcState::of(id.and_then(|id| self.store.source(id)), self.now)
    }

    /// The nodes rows are made for: the configured ones, then those a `[[prometheus]]` fleet
    /// names in its labels (no node list for a fleet), each with the source that reports it.
    pub fn nodes(&self) -> Vec<NodeRef> {
        let mut v: Vec<NodeRef> = self
            .cfg
            .nodes
            .iter()
            .map(|n| NodeRef {
                name: n.name.clone(),
                source: n.name.clone(),
                // The config's, else where LLDP puts the node (two NICs on two leaves: both).
                switch_port: n.switch_port.clone().or_else(|| {
                    let ports = self.links.ports_of(&n.name);
                    (!ports.is_empty()).then(|| ports.join(","))
                }),
            })
            .collect();
        v.extend(self.fleet_nodes());
        v
    }

    /// [`query::increase_by`] over `store`, from the intervals kept between frames.
    pub fn increase_by(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        group: &[&str],
        since: Ts,
    ) -> BTreeMap<Vec<String>, u64> {
        let mut w = self.windows.borrow_mut();
        query::increase_by_in(self.store, &mut w, name, labels, group, since)
    }

    /// The nodes the `[[prometheus]]` sources name in their labels, in source order and by name
    /// within one (tables ask on a new set of series only: [`Ctx::layout`]).
    fn fleet_nodes(&self) -> Vec<NodeRef> {
        let mut v = Vec::new();
        for p in &self.cfg.prometheus {
            let Some(id) = self
                .source_ids
                .get(&p.name)
                .copied()
                .or_else(|| self.store.source_by_name(&p.name).map(|(id, _)| id))
            else {
                continue;
            };
            let mut seen: std::collections::BTreeSet<&str> = std::collections::BTreeSet::new();
            for (_, s) in self.store.all() {
                if s.source == id {
                    if let Some(n) = s.key.label("node") {
                        seen.insert(n);
                    }
                }
            }
            v.extend(seen.into_iter().map(|n| NodeRef {
                name: n.to_string(),
                source: p.name.clone(),
                switch_port: None,
            }));
        }
        v
    }

    /// [`query::increase_of_in`] over `store`, from the intervals kept between frames.
    pub fn increase_of(&self, ids: &[SeriesId], since: Ts) -> Option<u64> {
        if ids.is_empty() {
            return None;
        }
        let mut w = self.windows.borrow_mut();
        query::increase_of_in(self.store, &mut w, ids, since)
    }

    /// What a tab's rows are made of while the set of series and the sources stay (which rows,
    /// their charts, the series behind each cell): the kept one, else `make`'s. Only the values
    /// are read again when new points arrive.
    pub fn layout<L: 'static>(&self, make: impl FnOnce() -> L) -> Rc<L> {
        let key = self.store.shape_key();
        if let Some((k, v)) = &*self.layout.borrow() {
            if *k == key {
                if let Ok(v) = Rc::clone(v).downcast::<L>() {
                    return v;
                }
            }
        }
        let v = Rc::new(make());
        *self.layout.borrow_mut() = Some((key, v.clone() as Rc<dyn Any>));
        v
    }

    /// A row for the main table (`extra`: the second one) made in one of the replaced table's
    /// ([`Row::reuse`]).
    pub fn reused(&self, extra: bool, id: &RowId, name: &str, charts: &Rc<[Chart]>) -> Row {
        let old = {
            let mut p = self.pool.borrow_mut();
            if extra { p.1.pop() } else { p.0.pop() }
        };
        Row::reuse(old, id, name, charts)
    }

    /// The part of a kept layout that reads the links (the nodes behind a port: a row's name),
    /// kept in `slot` until the links are made again (every topology answer, every proof).
    pub fn with_links<N: 'static>(&self, slot: &LinksCache<N>, make: impl FnOnce() -> N) -> Rc<N> {
        if let Some((k, v)) = &*slot.borrow() {
            if *k == self.links.generation() {
                return v.clone();
            }
        }
        let v = Rc::new(make());
        *slot.borrow_mut() = Some((self.links.generation(), v.clone()));
        v
    }

    /// For every row of a per-switch layout (`rows`: switch → its rows; `at`: a row's place in
    /// the answer and its port), what `make` makes of it and what is behind its port: the nodes
    /// the links put there, or, for a port the fabric graph links to another switch, that
    /// switch (`Behind::isl`). Kept in `slot` until the links are made again
    /// ([`Ctx::with_links`]).
    pub fn behind_each<R, N: 'static>(
        &self,
        slot: &LinksCache<Vec<N>>,
        rows: &HashMap<String, Vec<R>>,
        at: impl Fn(&R) -> (usize, &str),
        make: impl Fn(&R, Behind) -> N,
    ) -> Rc<Vec<N>> {
        self.with_links(slot, || {
            let mut v: Vec<Option<N>> = Vec::new();
            v.resize_with(rows.values().map(Vec::len).sum(), || None);
            for (sw, rows) in rows {
                for r in rows {
                    let (ix, port) = at(r);
                    let switches: Vec<&str> = (self.fabric.neighbours(sw, port))
                        .map(|far| far.device.name.as_str())
                        .collect();
                    let behind = if switches.is_empty() {
                        Behind {
                            names: self.links.behind(sw, port),
                            isl: false,
                        }
                    } else {
                        Behind {
                            names: switches,
                            isl: true,
                        }
                    };
                    v[ix] = Some(make(r, behind));
                }
            }
            v.into_iter().flatten().collect()
        })
    }

    /// Filter and order rows as the tab asks (`extra`: the second table's).
    pub fn arrange(&self, extra: bool, rows: &mut Vec<Row>) {
        let mut names = self.names[usize::from(extra)].borrow_mut();
        arrange_with_names(rows, self.filter, self.sort, &mut names);
    }

    /// A row whose cells wait until it is drawn or read ([`fill`]): made in one of the replaced
    /// table's rows ([`Ctx::reused`]), its old cells dropped (they are another frame's).
    pub fn pending(
        &self,
        extra: bool,
        id: &RowId,
        name: &str,
        charts: &Rc<[Chart]>,
        at: LayoutAt,
    ) -> Row {
        let mut row = self.reused(extra, id, name, charts);
        row.cells.clear();
        row.pending = Some(at);
        row
    }

    /// [`Ctx::arrange`] for rows made by [`Ctx::pending`]: sorting by a column reads every
    /// row's cells, so then `cells` computes those of the rows the filter keeps first; worst
    /// first reads only the score and the filter only the name.
    pub fn arrange_pending(
        &self,
        extra: bool,
        rows: &mut Vec<Row>,
        cells: impl FnOnce(&mut dyn Iterator<Item = &mut Row>),
    ) {
        if self.sort.col.is_some() {
            let f = self.filter.to_lowercase();
            cells(
                &mut rows
                    .iter_mut()
                    .filter(|r| r.pending.is_some() && r.name.to_lowercase().contains(&f)),
            );
        }
        self.arrange(extra, rows);
    }
}

impl App {
    /// The inputs of `tab`'s view model at the view time.
    pub fn ctx(&self, tab: Tab) -> Ctx<'_> {
        Ctx {
            cfg: &self.cfg,
            links: &self.links,
            fabric: self.fabric(),
            lossless: &self.lossless,
            store: &self.store,
            alerts: self.alerts(),
            now: self.view_now(),
            base: self.baseline(),
            filter: &self.filter,
            sort: self.sorts[tab.index()],
            source_ids: &self.source_ids,
            windows: &self.views.windows,
            layout: &self.views.layouts[tab.index()],
            pool: &self.views.pools[tab.index()],
            names: &self.views.names[tab.index()],
        }
    }
}

/// Every row of a table, for [`fill`].
pub const EVERY_ROW: std::ops::Range<usize> = 0..usize::MAX;

/// The table of `tab` (the Log tab has none), every row's cells computed.
pub fn compute(tab: Tab, cx: &Ctx) -> TabView {
    let mut t = arranged(tab, cx);
    fill(tab, cx, &mut t, &[EVERY_ROW]);
    t
}

/// The table of `tab` in its order, filtered, where some rows' cells are still to be computed
/// ([`Row::pending`](super::table::Row::pending); [`fill`]).
pub fn arranged(tab: Tab, cx: &Ctx) -> TabView {
    match tab {
        Tab::Overview => overview::view(cx),
        Tab::Queues => queues::view(cx),
        Tab::Pfc => pfc::view(cx),
        Tab::Congestion => congestion::view(cx),
        Tab::Latency => latency::view(cx),
        Tab::Log => TabView::default(),
    }
}

/// Computes the cells of `t`'s pending rows at the positions `want` holds (the selection's
/// order: the main table's rows, then the second's), as [`compute`] would have (`cx` must be
/// the one `t` was arranged with).
pub fn fill(tab: Tab, cx: &Ctx, t: &mut TabView, want: &[std::ops::Range<usize>]) {
    let mut todo = t
        .rows
        .iter_mut()
        .chain(t.extra.iter_mut())
        .enumerate()
        .filter(|(i, r)| r.pending.is_some() && want.iter().any(|w| w.contains(i)))
        .map(|(_, r)| r);
    match tab {
        Tab::Overview => overview::fill(cx, &mut todo),
        Tab::Pfc => pfc::fill(cx, &mut todo),
        Tab::Congestion => congestion::fill(cx, &mut todo),
        // Their rows are made whole.
        Tab::Queues | Tab::Latency | Tab::Log => {}
    }
}

/// Row keys (label values, the first one a switch or node name) grouped by that first value, so
/// tables of hundreds of nodes find their rows without a scan per node.
pub fn by_first<'a>(
    keys: impl IntoIterator<Item = &'a Vec<String>>,
) -> HashMap<&'a str, Vec<&'a Vec<String>>> {
    let mut m: HashMap<&str, Vec<&Vec<String>>> = HashMap::new();
    for k in keys {
        m.entry(k.first().map_or("", String::as_str))
            .or_default()
            .push(k);
    }
    m
}

/// Severity as a score offset: any alert ranks a row above every quiet one.
pub fn sev_rank(sev: Option<super::alerts::Severity>) -> f64 {
    sev.map_or(0.0, |s| s as u8 as f64 + 1.0)
}
