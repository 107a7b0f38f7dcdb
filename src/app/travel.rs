//! Live time travel: `[` `]` move the view 10 s back/forward, `{` `}` 60 s, Home/End or Esc return
//! to live. The screen then draws from `Store::as_of(cursor)` (the store as it was at the cursor:
//! what a replay seek also ends in) while polls keep going into the live store, so every tab shows
//! the values at the cursor with no notion of time travel of its own. Also here: the overlays
//! (Episodes list, alerts list) and the jump from an alert to its row.

use super::{App, Tab};
use crate::metrics::{Store, Ts};

/// Where the view stands in the past.
pub struct Travel {
    pub at: Ts,
    /// The live store, kept up to date while the screen shows the past.
    pub live: Store,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    Episodes,
    Alerts,
}

impl App {
    /// The store polls go into (the live one, also while time travelling).
    pub fn live_mut(&mut self) -> &mut Store {
        match &mut self.travel {
            Some(t) => &mut t.live,
            None => &mut self.store,
        }
    }

    /// The live store.
    pub fn live(&self) -> &Store {
        match &self.travel {
            Some(t) => &t.live,
            None => &self.store,
        }
    }

    /// The earliest instant history reaches back to.
    pub fn history_start(&self) -> Ts {
        (self.now - self.live().retention_ms()).max(self.started)
    }

    /// Move the cursor by `delta_ms` (negative: back). Forward past now returns to live.
    pub fn seek_by(&mut self, delta_ms: i64) {
        let from = self.view_now();
        let to = (from + delta_ms).max(self.history_start());
        if to >= self.now {
            self.back_to_live();
            return;
        }
        self.seek_to(to);
    }

    /// Show the store as it was at `at`.
    pub fn seek_to(&mut self, at: Ts) {
        let live = match self.travel.take() {
            Some(t) => t.live,
            None => std::mem::replace(&mut self.store, Store::new(1, 2)),
        };
        self.store = live.as_of(at);
        self.past_alerts = Some(self.alerts.as_of(&self.store, &self.cfg, &self.links, at));
        self.travel = Some(Travel { at, live });
    }

    pub fn back_to_live(&mut self) {
        if let Some(t) = self.travel.take() {
            self.store = t.live;
        }
        self.past_alerts = None;
    }

    /// The episode open at the view time: live, the most severe open one; while time
    /// travelling, the most severe of those whose span holds the cursor (the alert lines put its
    /// alerts first).
    pub fn episode_open_in_view(&self) -> Option<&super::episodes::Episode> {
        match &self.travel {
            None => self.episodes.worst_open(),
            Some(t) => self.episodes.open_at(t.at).first().copied(),
        }
    }

    /// The episode to show for the view time: the most severe one the cursor is in (else the
    /// last before it); live, the most severe open one or the newest.
    pub fn episode_in_view(&self) -> Option<&super::episodes::Episode> {
        let Some(t) = &self.travel else {
            return self.episodes.current();
        };
        self.episode_open_in_view()
            .or_else(|| self.episodes.all().into_iter().find(|e| e.start <= t.at))
    }

    /// How many episodes are open at the view time beside the one shown (the Overview says
    /// "+1 more episode open").
    pub fn episodes_open_beside(&self) -> usize {
        let open = match &self.travel {
            None => self.episodes.open().len(),
            Some(t) => self.episodes.open_at(t.at).len(),
        };
        open.saturating_sub(1)
    }

    /// Ask for `tab` with the row named like `name` selected (Enter on an alert).
    pub fn jump_to(&mut self, tab: Tab, name: String) {
        self.tab = tab;
        self.detail = false;
        self.overlay = None;
        self.jump = Some((tab, name));
        self.resolve_jump();
    }

    /// The row a pending jump lands on, in the rows `tab` shows now (its view model).
    pub fn jump_row(&self, tab: Tab) -> Option<usize> {
        let (t, name) = self.jump.as_ref()?;
        if *t != tab {
            return None;
        }
        self.shown(tab).rows.iter().position(|r| {
            r.name
                .split_whitespace()
                .any(|w| w == name || w.trim_end_matches(',') == name)
        })
    }

    /// Turn a pending jump into the tab's selection (the row's identity, so it stays on its item).
    pub(super) fn resolve_jump(&mut self) {
        let Some((tab, _)) = self.jump.clone() else {
            return;
        };
        if let Some(i) = self.jump_row(tab) {
            let v = self.shown(tab);
            self.selected[tab.index()] = super::Selection {
                id: v.rows.get(i).map(|r| r.id.clone()),
                index: i,
            };
            self.jump = None;
        }
    }
}
