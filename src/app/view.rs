//! What the tabs show, computed once and kept until something it depends on changes.
//!
//! A tab's table (hundreds of rows at 512 nodes, each summed over its series, sorted and
//! filtered) and its charts come from the store; drawing them again when only the selection,
//! a popup or the status bar changed would redo all of it. So each tab's computed view is kept
//! here under a [`ViewKey`] of everything it reads: the store's and the alerts' generations (bumped
//! by every change through `App::update`), the view time, mark, sort, filter, theme and area. A
//! frame whose key matches draws from the kept view and formats only the rows that fit.

use super::alerts::{Rolled, WINDOW_MS};
use super::episodes::{Episode, text};
use super::table::{Sort, TabView};
use super::vm::summary;
use super::vm::timeline::{self, Timeline};
use super::{App, Tab};
use crate::metrics::Ts;
use crate::metrics::store::{ShapeKey, WindowsCache};
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ops::Range;
use std::rc::Rc;

/// Everything a tab's computed view depends on, besides the immutable config.
#[derive(Clone, Debug, PartialEq)]
pub struct ViewKey {
    store: u64,
    alerts: u64,
    now: Ts,
    mark: Option<Ts>,
    baseline: Ts,
    sort: Sort,
    filter: String,
    ascii: bool,
    theme: &'static str,
    no_color: bool,
    area: (u16, u16),
}

type Slot = RefCell<Option<(ViewKey, Rc<dyn Any>)>>;

/// A tab's table as computed for a key.
type TableSlot = RefCell<Option<(ViewKey, Rc<TabView>)>>;

/// What the rolled-up alert lines were made from: they change only when these do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RolledKey {
    /// [`Alerts::generation`](super::alerts::Alerts::generation).
    alerts: u64,
    /// The pairing's generation ([`Links::generation`](super::pairing::Links::generation)).
    links: u64,
}

/// A switch's [`summary::SwitchIds`] with the store and set of series they were selected from.
struct SwitchIdsCache {
    made_for: ShapeKey,
    ids: summary::SwitchIds,
}

/// One kept view per tab: its table (app/vm) and what `ui` computes besides (charts, lines).
#[derive(Default)]
pub struct ViewCache {
    tables: [TableSlot; Tab::COUNT],
    slots: [Slot; Tab::COUNT],
    /// The rolled-up alert lines, with what they were made from (the Overview draws them every
    /// frame).
    rolled: RefCell<Option<(RolledKey, Rc<Vec<Rolled>>)>>,
    /// Per switch, the series its summary line reads.
    switch_ids: RefCell<HashMap<String, SwitchIdsCache>>,
    /// Views computed so far (a test checks that an unchanged frame computes nothing).
    pub computed: Cell<u64>,
    /// Counters' intervals decoded for the tables' store (the live one, or the time-travel copy
    /// being shown), kept so a frame after new data decodes only the new points.
    pub windows: RefCell<WindowsCache>,
    /// The same for the live store while time travelling (the Overview timeline always spans
    /// live history; otherwise the tables' store is the live one and `windows` serves both).
    pub live_windows: RefCell<WindowsCache>,
    /// The Overview timeline's columns from the last frame (only the newest seconds recompute).
    pub timeline: RefCell<super::vm::timeline::TimelineMemo>,
    /// Per tab, its rows as made from the set of series (`vm::Ctx::layout`): a frame after new
    /// data reads only the values behind them.
    pub layouts: [super::vm::LayoutCache; Tab::COUNT],
    /// Per tab, the rows (main table, second table) of the table last replaced, for the next one
    /// to be written into ([`Row::reuse`](super::table::Row::reuse)): a frame after new data
    /// neither frees the old rows nor allocates the new ones.
    pub pools: [super::vm::RowPool; Tab::COUNT],
    /// Per tab, its tables' rows in name order, for sorting the next frame's rows by name
    /// without comparing names (`table::NameOrderMemo`).
    pub names: [super::vm::NameOrderMemos; Tab::COUNT],
}

impl App {
    fn view_key(&self, tab: Tab, area: (u16, u16)) -> ViewKey {
        ViewKey {
            store: self.store.generation(),
            alerts: self.alerts().generation(),
            now: self.view_now(),
            mark: self.mark,
            baseline: self.baseline(),
            sort: self.sorts[tab.index()],
            filter: self.filter.clone(),
            ascii: self.ascii,
            theme: self.theme.name,
            no_color: self.no_color,
            area,
        }
    }

    /// The view of `tab` for an area of `area` (width, height): the kept one if nothing it
    /// depends on changed, else `compute`'s.
    pub fn view<T: 'static>(
        &self,
        tab: Tab,
        area: (u16, u16),
        compute: impl FnOnce() -> T,
    ) -> Rc<T> {
        let mut key = self.view_key(tab, area);
        // Charts and lines besides the table do not depend on its order or filter.
        key.sort = Sort::default();
        key.filter.clear();
        let slot = &self.views.slots[tab.index()];
        if let Some((k, v)) = &*slot.borrow() {
            if *k == key {
                if let Ok(v) = Rc::clone(v).downcast::<T>() {
                    return v;
                }
            }
        }
        let v = Rc::new(compute());
        self.views.computed.set(self.views.computed.get() + 1);
        *slot.borrow_mut() = Some((key, v.clone() as Rc<dyn Any>));
        v
    }
}

impl App {
    /// `tab`'s table at the view time, every row's cells computed: the kept one if nothing it
    /// depends on changed.
    pub fn table(&self, tab: Tab) -> Rc<TabView> {
        self.filled(tab, self.arranged(tab), &[super::vm::EVERY_ROW])
    }

    /// `tab`'s table at the view time, ordered and filtered, with only the cells computed so far
    /// (`Row::pending`): the kept one if nothing it depends on changed. For drawing, with
    /// [`App::filled`] for the rows that fit.
    pub fn arranged(&self, tab: Tab) -> Rc<TabView> {
        // Rows do not depend on the area, the theme or ASCII: they hold values, not text.
        let mut key = self.view_key(tab, (0, 0));
        key.ascii = false;
        key.theme = "";
        key.no_color = false;
        let slot = &self.views.tables[tab.index()];
        if let Some((k, v)) = &*slot.borrow() {
            if *k == key {
                return v.clone();
            }
        }
        let pool = &self.views.pools[tab.index()];
        if let Some((_, old)) = slot.borrow_mut().take() {
            if let Ok(t) = Rc::try_unwrap(old) {
                *pool.borrow_mut() = (t.rows, t.extra);
            }
        }
        let v = Rc::new(super::vm::arranged(tab, &self.ctx(tab)));
        // What the new table did not take.
        *pool.borrow_mut() = Default::default();
        self.views.computed.set(self.views.computed.get() + 1);
        *slot.borrow_mut() = Some((key, v.clone()));
        v
    }

    /// `v` (`tab`'s [`App::arranged`] table) with the cells of the rows at `want` computed (the
    /// selection's order: main table, then the second), kept for later frames.
    pub fn filled(&self, tab: Tab, v: Rc<TabView>, want: &[Range<usize>]) -> Rc<TabView> {
        let n = v.len();
        let done = |v: &TabView| {
            want.iter().all(|w| {
                (w.start..w.end.min(n)).all(|i| v.get(i).is_none_or(|r| r.pending.is_none()))
            })
        };
        if done(&v) {
            return v;
        }
        let mut slot = self.views.tables[tab.index()].borrow_mut();
        let Some((_, kept)) = slot.as_mut().filter(|(_, k)| Rc::ptr_eq(k, &v)) else {
            // Not the kept table (a caller held an older one): fill a copy.
            let mut t = (*v).clone();
            super::vm::fill(tab, &self.ctx(tab), &mut t, want);
            return Rc::new(t);
        };
        drop(v);
        // Only the slot holds it now, unless a caller keeps a copy: then it is copied.
        super::vm::fill(tab, &self.ctx(tab), Rc::make_mut(kept), want);
        kept.clone()
    }

    /// The table as last drawn (what the user sees, so keys act on it; a row that was not on
    /// screen may have its cells pending), computed if never drawn.
    pub fn shown(&self, tab: Tab) -> Rc<TabView> {
        if let Some((_, v)) = &*self.views.tables[tab.index()].borrow() {
            return v.clone();
        }
        self.table(tab)
    }

    /// The rolled-up alert lines (`alerts/rollup.rs`): the last ones until the alerts (every
    /// evaluation, ack, mute; the open episode changes only with an evaluation) or the pairing
    /// change.
    pub fn rolled(&self) -> Rc<Vec<Rolled>> {
        let key = RolledKey {
            alerts: self.alerts().generation(),
            links: self.links.generation(),
        };
        let mut slot = self.views.rolled.borrow_mut();
        if let Some((k, v)) = &*slot {
            if *k == key {
                return v.clone();
            }
        }
        let v = Rc::new(
            self.alerts()
                .rolled(self.episode_open_in_view(), &self.links),
        );
        *slot = Some((key, v.clone()));
        v
    }
}

/// What the Overview and Log tabs show besides their tables, from the view models (`app/vm`);
/// `ui` only formats it.
impl App {
    /// `name`'s totals at the view time: drops (newest interval, the last 60 s, since the
    /// baseline), PFC per second on edge and internal ports, 802.3x.
    pub fn switch_summary(&self, name: &str) -> summary::Switch {
        // The series selected for the store's set of series (the tables' store: live, or the
        // past shown), selected again when that changes.
        let shape = self.store.shape_key();
        let mut cache = self.views.switch_ids.borrow_mut();
        if cache.get(name).is_none_or(|c| c.made_for != shape) {
            let ids = summary::SwitchIds::of(&self.store, name);
            let c = SwitchIdsCache {
                made_for: shape,
                ids,
            };
            cache.insert(name.to_string(), c);
        }
        let ids = &cache[name].ids;
        // The evaluation's intervals while the tables show the live store (the same drop
        // counters, brought up to date once), else the tables' own.
        let windows = match self.travel {
            None => &self.eval_windows,
            Some(_) => &self.views.windows,
        };
        summary::switch_in(
            &self.store,
            &mut windows.borrow_mut(),
            ids,
            self.view_now() - WINDOW_MS,
            self.baseline(),
        )
    }

    /// The Overview's sentence for episode `ep` at the view time ([`text::line`]).
    pub fn episode_line(&self, ep: &Episode) -> String {
        text::line(ep, &self.links, self.view_now())
    }

    /// "+N more episode(s) open" where episodes are open at the view time beside the one shown.
    pub fn episodes_beside_note(&self) -> Option<String> {
        match self.episodes_open_beside() {
            0 => None,
            1 => Some("+1 more episode open".to_string()),
            n => Some(format!("+{n} more episodes open")),
        }
    }

    /// The sentence of [`App::episode_line`] in at most `max` lines of `width` columns
    /// ([`text::lines`]: whole words, the least important pieces left out first).
    pub fn episode_lines(&self, ep: &Episode, width: usize, max: usize) -> Vec<String> {
        let pieces = text::ranked(ep, &self.links);
        text::lines(ep, &pieces, self.view_now(), width, max)
    }

    /// The training line of the log on `node` (any node's where `None`) at the view time.
    pub fn training(&self, node: Option<&str>) -> summary::Training {
        summary::training(&self.store, node)
    }

    /// The log's loss, step and all-reduce seconds per second, `width` columns up to the view time.
    pub fn training_timelines(&self, node: Option<&str>, width: usize) -> [Vec<Option<f64>>; 3] {
        let since = super::table::axis_start(self.view_now(), timeline::STEP_MS, width);
        summary::training_timelines(&self.store, node, since, timeline::STEP_MS, width)
    }

    /// The Overview timeline, `width` columns of live history up to now, with the cursor's
    /// column while time travelling. Intervals and columns of the last frame are kept: only
    /// the new points decode and only the newest seconds recompute.
    pub fn timeline(&self, width: usize) -> Timeline {
        let windows = if self.travel.is_some() {
            &self.views.live_windows
        } else {
            &self.views.windows
        };
        let at = self.travel.as_ref().map(|t| t.at);
        timeline::compute(
            self.live(),
            windows,
            &self.views.timeline,
            self.now,
            at,
            width,
        )
    }
}
