//! Focus: Prometheus for the fleet, SSH for the node you look at. Enter on a
//! row of a `[[prometheus]]` fleet's node asks the event loop to start SSH collectors for that
//! node ([`Action::Focus`]); when they run ([`Event::Focused`]) the screen becomes that node's: a
//! whole `App` of its own, over its own config (the node, its logs and pings, 1 s) and its own
//! store (`collect/focus.rs` says why not the fleet's), which every key but a final Esc goes to.
//! The fleet's `App` keeps collecting behind it, so Esc returns to the fleet as it is now, with
//! the tab, selection and filter it had.

use super::table::RowId;
use super::{Action, App, Event};
use crate::config::Config;
use crate::metrics::{Store, Ts};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use std::ops::ControlFlow;

/// A node looked at over SSH.
pub struct Focus {
    pub node: String,
    /// The node's screen.
    pub app: Box<App>,
}

impl App {
    /// The node of a row when a `[[prometheus]]` fleet reports it (a node, device or netdev row).
    pub fn fleet_node(&self, id: &RowId) -> Option<String> {
        // A replay has no collectors to start, and a focus has no fleet of its own.
        if self.cfg.prometheus.is_empty() || self.focused.is_some() || self.replay.is_some() {
            return None;
        }
        let node = match id {
            RowId::Node(n) | RowId::Device { node: n, .. } | RowId::Netdev { node: n, .. } => n,
            _ => return None,
        };
        let cx = self.ctx(self.tab);
        cx.nodes()
            .iter()
            .any(|r| r.name == *node && self.cfg.prometheus.iter().any(|p| p.name == r.source))
            .then(|| node.clone())
    }

    /// Enter: focus the selected fleet node when SSH can reach it; else the row's charts (with
    /// the reason in the status line when it was a fleet node).
    pub(super) fn enter(&mut self) {
        let node = self.selected_row().and_then(|r| self.fleet_node(&r.id));
        if let Some(node) = node {
            match self.reach.check(&node) {
                Ok(_) => {
                    self.say(format!("focus {node}: connecting over SSH"));
                    self.actions.push(Action::Focus(node));
                    return;
                }
                Err(why) => self.say(why),
            }
        }
        self.detail = true;
    }

    /// The focus started: the screen becomes the node's, as the fleet's screen looks now.
    pub(super) fn enter_focus(&mut self, node: String, cfg: Config, store: Store) {
        let mut app = App::new(cfg, store, self.theme.clone(), self.now);
        app.size = self.size;
        app.ascii = self.ascii;
        app.no_color = self.no_color;
        app.focused = Some(node.clone());
        self.message = None;
        self.focus = Some(Focus {
            node,
            app: Box::new(app),
        });
    }

    /// Leave the focus: its collectors are stopped ([`Action::Unfocus`]), the fleet comes back.
    pub fn leave_focus(&mut self) {
        if let Some(f) = self.focus.take() {
            self.actions.push(Action::Unfocus);
            self.say(format!("left {}: its SSH collectors stop", f.node));
        }
    }

    /// The events a focus takes before the fleet's `update` sees them: `Break(redraw)`, or
    /// `Continue` with the event for the fleet.
    pub(super) fn focus_first(&mut self, ev: Event, now: Ts) -> ControlFlow<bool, Event> {
        ControlFlow::Break(match ev {
            Event::Focused { node, cfg, store } => {
                self.enter_focus(node, *cfg, store.0);
                true
            }
            Event::FocusRefused { why, .. } => {
                self.say(why);
                true
            }
            // Polls still in flight after Esc go nowhere.
            Event::FocusCollected(c) => self
                .focus
                .as_mut()
                .is_some_and(|f| f.app.update(Event::Collected(c), now)),
            Event::Key(k) if self.focus.is_some() => {
                self.focus_key(k, now);
                true
            }
            Event::Mouse(m) if self.focus.is_some() => self.in_focus(Event::Mouse(m), now),
            Event::Tick if self.focus.is_some() => {
                // The fleet's alerts and proof go on (unless it is held); the screen is the focus's.
                if self.frozen.is_none() && self.rewinding.is_none() {
                    self.prove_topology();
                    self.maybe_reprove();
                    // As without a focus: at most once a second (the frames evaluate too).
                    let _ = self.maybe_eval_alerts();
                }
                self.in_focus(Event::Tick, now)
            }
            ev => return ControlFlow::Continue(ev),
        })
    }

    /// A key while focused: Esc leaves once the focus's screen has nothing of its own left for
    /// Esc to close (a filter, an overlay, time travel); every other key is the focus's.
    pub(super) fn focus_key(&mut self, k: KeyEvent, now: Ts) {
        let Some(f) = &self.focus else {
            return;
        };
        let inner = &f.app;
        let esc_is_inner = inner.filter_editing
            || inner.help
            || inner.detail
            || inner.overlay.is_some()
            || inner.travel.is_some()
            || !inner.filter.is_empty();
        if k.code == KeyCode::Esc && k.kind != KeyEventKind::Release && !esc_is_inner {
            self.leave_focus();
            return;
        }
        if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
            self.quit = true;
            return;
        }
        self.in_focus(Event::Key(k), now);
    }

    /// Give an event to the focus's screen; its quit and its actions (record, bundle) are the
    /// whole screen's. Returns whether it needs a redraw (false without a focus).
    pub(super) fn in_focus(&mut self, ev: Event, now: Ts) -> bool {
        let Some(f) = &mut self.focus else {
            return false;
        };
        let changed = f.app.update(ev, now);
        self.quit |= f.app.quit;
        self.actions.append(&mut f.app.actions);
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::super::Tab;
    use super::*;
    use crate::collect::poll::Collected;
    use crate::metrics::store::SourceId;
    use crate::metrics::{Parsed, Sample, SeriesKey, Value};
    use crossterm::event::KeyEvent;

    fn key(c: KeyCode) -> Event {
        Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
    }

    fn cnp(node: &str, v: u64) -> Sample {
        Sample {
            key: SeriesKey::new(
                "rocetop_rdma_np_cnp_sent_total",
                &[("node", node), ("device", "mlx5_0"), ("rdma_port", "1")],
            ),
            value: Value::Counter(v),
        }
    }

    fn poll(source: SourceId, at: Ts, samples: Vec<Sample>) -> Collected {
        Collected {
            source,
            at,
            parsed: Parsed {
                samples,
                ..Parsed::default()
            },
            raw: Some(Vec::new()),
            error: None,
            history: Default::default(),
        }
    }

    /// A fleet of gpu1 (a `[[node]]` reaches it) and gpu2 (nothing does), read from Prometheus.
    fn fleet() -> App {
        let cfg = Config::from_str(
            "[ssh]\nssh_config = \"/nonexistent/ssh_config\"\n\
             [[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:9\"\n\
             [[node]]\nname = \"gpu1\"\nhost = \"127.0.0.1\"\n",
            "t.toml",
            None,
        )
        .expect("config");
        let reach = crate::collect::focus::Reach::load(&cfg);
        let fleet_cfg = crate::collect::focus::fleet_config(&cfg);
        let mut store = Store::new(600_000, 600);
        let id = store.add_source("fleet", 15_000);
        let mut app = App::new(
            fleet_cfg,
            store,
            crate::theme::Theme::named("dark").expect("theme"),
            1_000_000,
        );
        app.reach = reach;
        for (i, t) in [1_000_000, 1_015_000].into_iter().enumerate() {
            let v = 100 * i as u64;
            app.update(
                Event::Collected(poll(id, t, vec![cnp("gpu1", v), cnp("gpu2", v)])),
                t,
            );
        }
        app.size = (120, 40);
        app
    }

    fn select(app: &mut App, node: &str) {
        let v = app.table(Tab::Overview);
        let i = v
            .position(&RowId::Node(node.into()))
            .expect("the fleet's node has a row");
        app.selected[Tab::Overview.index()] = super::super::Selection {
            id: Some(RowId::Node(node.into())),
            index: i,
        };
    }

    /// The fleet's node list is kept between frames (`vm::Ctx::nodes`): a node whose series
    /// first appear in a later poll still gets its row, and one that stops reporting keeps it.
    #[test]
    fn a_fleet_node_that_appears_later_gets_a_row() {
        let mut app = fleet();
        let names = |app: &App| -> Vec<String> {
            app.table(Tab::Overview)
                .rows
                .iter()
                .map(|r| r.name.clone())
                .collect()
        };
        assert_eq!(names(&app).len(), 2);
        let id = app.store.source_by_name("fleet").expect("source").0;
        let t = 1_030_000;
        app.update(
            Event::Collected(poll(id, t, vec![cnp("gpu1", 300), cnp("gpu3", 0)])),
            t,
        );
        let mut n = names(&app);
        n.sort();
        assert_eq!(n, ["gpu1", "gpu2", "gpu3"]);
    }

    #[test]
    fn enter_on_a_reachable_fleet_node_asks_for_its_focus_and_esc_leaves() {
        let mut app = fleet();
        select(&mut app, "gpu1");
        app.update(key(KeyCode::Enter), 1_016_000);
        assert_eq!(app.actions, vec![Action::Focus("gpu1".into())]);
        assert!(!app.detail, "a focus, not the charts");
        app.actions.clear();

        // The loop started it: the screen is the node's, over its own store.
        let mut cfg = app.cfg.clone();
        cfg.prometheus.clear();
        let mut store = Store::new(600_000, 600);
        let ssh = store.add_source("gpu1", 1000);
        app.update(
            Event::Focused {
                node: "gpu1".into(),
                cfg: Box::new(cfg),
                store: super::super::NewStore(store),
            },
            1_016_000,
        );
        let f = app.focus.as_ref().expect("focused");
        assert_eq!(f.app.focused.as_deref(), Some("gpu1"));
        for (i, t) in [1_017_000, 1_018_000].into_iter().enumerate() {
            app.update(
                Event::FocusCollected(poll(ssh, t, vec![cnp("gpu1", 7 * i as u64)])),
                t,
            );
        }
        let inner = &app.focus.as_ref().expect("focused").app;
        let series = cnp("gpu1", 0).key;
        let id = inner
            .store
            .id(&series)
            .expect("the SSH series is in the focus's store");
        assert_eq!(inner.store.get(id).map(|s| s.source), Some(ssh));
        assert_eq!(
            inner.store.get(id).map(|s| s.len(&inner.store)),
            Some(2),
            "the focus's store holds the SSH polls only"
        );
        // The fleet's store keeps its own series of the same key, untouched by the SSH polls.
        let fid = app.store.id(&series).expect("fleet series");
        assert_eq!(app.store.get(fid).map(|s| s.len(&app.store)), Some(2));
        // The fleet goes on behind the focus, without redrawing the focus's screen.
        let fleet_id = app
            .store
            .source_by_name("fleet")
            .map(|(id, _)| id)
            .expect("fleet");
        let redraw = app.update(
            Event::Collected(poll(fleet_id, 1_030_000, vec![cnp("gpu1", 300)])),
            1_030_000,
        );
        assert!(!redraw);
        assert_eq!(app.store.get(fid).map(|s| s.len(&app.store)), Some(3));

        // Keys go to the focus: `/` types a filter there; the first Esc clears it, the next leaves.
        app.update(key_char('/'), 1_018_000);
        app.update(key_char('x'), 1_018_000);
        app.update(key(KeyCode::Enter), 1_018_000);
        assert!(app.filter.is_empty(), "the fleet's filter is untouched");
        app.update(key(KeyCode::Esc), 1_018_000);
        assert!(app.focus.is_some(), "Esc cleared the focus's filter first");
        assert!(app.actions.is_empty());
        app.update(key(KeyCode::Esc), 1_018_000);
        assert!(app.focus.is_none(), "Esc returns to the fleet");
        assert_eq!(app.actions, vec![Action::Unfocus]);
        let redraw = app.update(
            Event::Collected(poll(fleet_id, 1_045_000, vec![cnp("gpu1", 400)])),
            1_045_000,
        );
        assert!(redraw, "the fleet's screen again");
        // The focus's polls still in flight go nowhere.
        assert!(!app.update(
            Event::FocusCollected(poll(ssh, 1_046_000, vec![cnp("gpu1", 99)])),
            1_046_000
        ));
    }

    fn key_char(c: char) -> Event {
        key(KeyCode::Char(c))
    }

    #[test]
    fn enter_on_an_unreachable_fleet_node_says_why_and_opens_its_charts() {
        let mut app = fleet();
        select(&mut app, "gpu2");
        app.update(key(KeyCode::Enter), 1_016_000);
        assert!(app.actions.is_empty(), "no focus asked for");
        assert!(app.focus.is_none());
        let (_, msg) = app.message.clone().expect("a message");
        assert!(msg.contains("cannot focus gpu2 over SSH"), "{msg}");
        assert!(msg.contains("no [[node]] named gpu2"), "{msg}");
        assert!(app.detail, "the row's charts, as Enter does elsewhere");
        // A refusal from the loop (the node vanished from the config) is shown the same way.
        app.update(
            Event::FocusRefused {
                node: "gpu1".into(),
                why: "cannot focus gpu1: its [[node]] is gone".into(),
            },
            1_016_000,
        );
        assert!(app.focus.is_none());
        assert!(
            app.message
                .as_ref()
                .is_some_and(|(_, m)| m.contains("gone"))
        );
    }

    #[test]
    fn enter_outside_a_fleet_opens_the_charts() {
        let mut app = fleet();
        select(&mut app, "gpu1");
        app.cfg.prometheus.clear();
        app.update(key(KeyCode::Enter), 1_016_000);
        assert!(app.actions.is_empty());
        assert!(app.detail);
    }
}
