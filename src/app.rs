//! The live screen's state. [`App::update`] is the one place it changes: collected polls, keys,
//! resizes, ticks and log lines all arrive as [`Event`]s, so the whole behaviour is testable by
//! feeding events, without a terminal. `ui::draw` only reads an `App`.

pub mod alerts;
pub mod episodes;
pub mod fabric;
pub mod focus;
mod hold;
mod keys;
pub mod lossless;
mod lossless_switch;
pub mod pairing;
pub mod ports;
mod proof;
pub mod source;
pub mod tab;
pub mod table;
pub mod travel;
pub mod view;
pub mod vm;

use crate::collect::poll::Collected;
use crate::config::Config;
use crate::metrics::store::SourceId;
use crate::metrics::{Store, Ts};
use crate::theme::Theme;
use crossterm::event::{KeyEvent, MouseEvent};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

pub use tab::Tab;

/// Everything that can change the screen's state.
#[derive(Debug)]
pub enum Event {
    Collected(Collected),
    Key(KeyEvent),
    /// Clicks and the wheel, where `ui.mouse = true`.
    Mouse(MouseEvent),
    Resize(u16, u16),
    /// Once a second: ages, staleness and alerts move on even when no data arrives.
    Tick,
    /// A frame is about to be drawn: the alerts are brought up to the polls it shows (at most
    /// once a second), so a row and its alert mark never disagree.
    Frame,
    /// Raw training-log lines from a follower, in order.
    LogLines {
        source: SourceId,
        lines: Vec<String>,
    },
    Shutdown,
    /// A replay seeks backwards: start over from an empty store whose history up to `at` (the
    /// cursor) follows at once. The screen's clock goes back to `at`.
    Rewind {
        store: NewStore,
        at: Ts,
    },
    /// A seek's history is all delivered: the state at the cursor is complete.
    Seeked {
        at: Ts,
    },
    /// A replay reached the end of its recording (`cut`: why it ended early, if it did).
    Ended {
        cut: Option<String>,
    },
    /// The focus asked for ([`Action::Focus`]) started: its own config and store (`app/focus.rs`).
    Focused {
        node: String,
        cfg: Box<Config>,
        store: NewStore,
    },
    /// The focus asked for could not start: why.
    FocusRefused {
        node: String,
        why: String,
    },
    /// A poll of a focus source (ids of the focus's store, not the fleet's).
    FocusCollected(Collected),
}

/// A store handed to [`Event::Rewind`].
pub struct NewStore(pub Store);

impl std::fmt::Debug for NewStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NewStore")
    }
}

/// Side effects a key asks for. `App` does no I/O: the event loop carries these out.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// `r`: start recording every source's raw output to a file, or stop.
    ToggleRecord,
    /// `S`: write an incident bundle (current values, recent history, log, alerts, config).
    Bundle,
    /// Replay controls (`rocetop replay`).
    Replay(ReplayAction),
    /// Enter on a node of a `[[prometheus]]` fleet that SSH can reach: start its collectors and
    /// answer with [`Event::Focused`] (or [`Event::FocusRefused`]).
    Focus(String),
    /// Esc in a focus: stop its collectors (their SSH connection closes).
    Unfocus,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ReplayAction {
    TogglePause,
    Step,
    SeekBy(i64),
    /// Multiply the speed.
    Speed(f64),
}

/// Where a replay stands, as the event loop last saw it (shown in the tab bar).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReplayView {
    pub at: Ts,
    pub start: Ts,
    pub end: Ts,
    pub paused: bool,
    pub speed: f64,
    pub ended: bool,
}

/// A tab's selected row: the item it stands for (so it follows the item across re-sorts, filters
/// and new rows), and where it was, used while the item is not shown (filtered out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    pub id: Option<table::RowId>,
    pub index: usize,
}

/// Where the last draw put what a click can hit (the one thing drawing tells the state).
#[derive(Clone, Debug, Default)]
pub struct Hits {
    /// Tab bar: where each tab's title is.
    pub tabs: Vec<TabHit>,
    pub tab_bar_y: u16,
    /// The selectable table's body.
    pub table: Option<TableHit>,
}

/// A tab's title in the tab bar.
#[derive(Clone, Debug)]
pub struct TabHit {
    /// Its columns.
    pub x: std::ops::Range<u16>,
    pub tab: Tab,
}

/// The rows of the table that holds the selection, where the last draw put them.
#[derive(Clone, Debug)]
pub struct TableHit {
    /// The first row's y.
    pub y: u16,
    /// Rows drawn.
    pub rows: u16,
    /// The index of the first row drawn among the table's rows.
    pub first: usize,
    /// The table's columns.
    pub x: std::ops::Range<u16>,
}

/// Raw log lines kept for the Log tab.
pub const LOG_KEEP: usize = 5000;
/// Polls held back while frozen before the oldest are applied anyway (memory bound).
const FROZEN_MAX: usize = 20_000;
/// Alerts are re-evaluated at most this often on data (and on every tick).
const ALERT_EVERY_MS: i64 = 1000;
/// The lossless proof is redone at most this often for a switch's settings (every poll brings
/// them); topology answers redo it at once.
const REPROVE_MS: i64 = 30_000;

#[derive(Debug, Default)]
pub struct LogView {
    pub lines: VecDeque<String>,
    /// Lines up from the bottom; 0 follows the end.
    pub scroll: usize,
    /// Lines ever received (shown as "N lines").
    pub received: u64,
    /// The log until its first training step: what to say if none comes.
    pub unread: crate::parse::training::hint::Unread,
    /// No step after a few hundred lines or a minute: the Log tab says so, with a line of the
    /// log and a `format_regex` built from it.
    pub hint: Option<crate::parse::training::hint::Hint>,
}

pub struct App {
    cfg: Config,
    pub store: Store,
    tab: Tab,
    /// Selected row per tab.
    selected: [Selection; Tab::COUNT],
    /// Row order per tab (worst first, or a column; `<`/`>` pick, `s` flips).
    sorts: [table::Sort; Tab::COUNT],
    /// Columns scrolled in per tab (←/→) when some are hidden.
    hscroll: [usize; Tab::COUNT],
    /// Case-insensitive substring on row names; empty shows everything.
    filter: String,
    filter_editing: bool,
    /// The view time while frozen: polls are held back until `f` again.
    frozen: Option<Ts>,
    held: VecDeque<Event>,
    /// Baseline for totals (`m`); `None` counts from the start.
    mark: Option<Ts>,
    pub started: Ts,
    now: Ts,
    pub theme: Theme,
    no_color: bool,
    pub ascii: bool,
    help: bool,
    detail: bool,
    alerts: alerts::Alerts,
    /// While time travelling: the alerts as they stood at the cursor (`Alerts::as_of`), what
    /// the screen shows instead of the live ones.
    past_alerts: Option<alerts::Alerts>,
    /// The series the evaluation reads, resolved while the live store's set of series stays.
    eval_ids: alerts::EvalIdsCache,
    /// The live store's counters' intervals the evaluation's 60 s windows are read from, kept
    /// only a little longer than that window: the views' (3 min) held ~16 MB more at 512 nodes.
    /// The Overview's switch lines read their drop counters' windows here too while the tables
    /// show the live store: one sync a new point, not one here and one in the views'.
    eval_windows: std::cell::RefCell<crate::metrics::store::WindowsCache>,
    last_alert_eval: Option<Ts>,
    /// Polls arrived since the alerts were last evaluated.
    alerts_due: bool,
    log: LogView,
    pub size: (u16, u16),
    quit: bool,
    /// What the last draw put where (mouse clicks).
    pub hits: RefCell<Hits>,
    /// Until a seek's history is delivered (`Seeked`), polls rebuild the state without alerts.
    rewinding: Option<Ts>,
    /// Source ids by name (a screen of 512 nodes looks each up every frame).
    source_ids: HashMap<String, SourceId>,
    /// Side effects asked for by keys, taken by the event loop.
    pub actions: Vec<Action>,
    /// A one-line message for the status bar ("bundle written to ..."), with when it was set.
    message: Option<(Ts, String)>,
    /// The file being recorded to, while `r` recording runs.
    pub recording: Option<String>,
    /// Set in `rocetop replay`.
    pub replay: Option<ReplayView>,
    /// The tabs' computed views (`view.rs`).
    views: view::ViewCache,
    /// Episodes found so far (`episodes.rs`), judged on the live store.
    episodes: episodes::Episodes,
    /// Live time travel (`travel.rs`): the cursor and the live store while `store` shows the past.
    travel: Option<travel::Travel>,
    /// Overlays: the Episodes list (`e`) and the alerts list (`A`), with their selections.
    overlay: Option<travel::Overlay>,
    overlay_sel: usize,
    /// A jump asked for by Enter on an alert: the tab and the row name to select there, resolved
    /// against that tab's view model.
    jump: Option<(Tab, String)>,
    /// Which node is behind which switch port: config `switch_port`, else LLDP (`pairing`).
    /// Rebuilt when topology answers arrive, so tabs and episodes never pair per frame.
    links: pairing::Links,
    /// The fabric graph (switches, host NICs, links), rebuilt with the pairing; whether it was
    /// made of every topology source's first answer yet (a change after that is said).
    fabric: fabric::Fabric,
    fabric_read: bool,
    /// Who pauses whom now, made on the evaluation's rates (`fabric/pause_tree.rs`).
    pause_tree: std::sync::Arc<fabric::pause_tree::PauseTree>,
    /// The PFC tab shows the pause tree instead of its tables (`p`).
    pub(crate) show_tree: bool,
    /// The episode (its id) whose peak tree the tree view shows (`p` in the episodes list);
    /// `None`: the live tree, or under time travel the episode's at the cursor.
    pub(crate) tree_of: Option<u32>,
    /// The lossless-path proof over the last topology answers (`lossless`), for the PFC tab.
    lossless: lossless::Proof,
    /// The node looked at over SSH, as a screen of its own (Enter on a fleet node; Esc leaves).
    pub focus: Option<focus::Focus>,
    /// In a focus's own screen: the node it looks at (the tab bar says so).
    pub focused: Option<String>,
    /// Which fleet nodes a focus can reach ([`crate::collect::focus::Reach`]).
    pub reach: crate::collect::focus::Reach,
    /// When the proof was made, and whether a switch's settings arrived since.
    proof_at: Option<Ts>,
    proof_due: bool,
    /// Topology arrived since the proof: pair and prove again before the next frame or tick. Once
    /// for all that came in between: with a thousand nodes each reading LLDP, pairing again per
    /// answer was most of the CPU.
    topology_due: bool,
}

/// Read access for the view layer, commands and tests: only `App::update` (and what it calls)
/// changes these.
impl App {
    pub fn cfg(&self) -> &Config {
        &self.cfg
    }
    pub fn tab(&self) -> Tab {
        self.tab
    }
    pub fn selected(&self) -> &[Selection; Tab::COUNT] {
        &self.selected
    }
    pub fn sorts(&self) -> &[table::Sort; Tab::COUNT] {
        &self.sorts
    }
    pub fn hscroll(&self) -> &[usize; Tab::COUNT] {
        &self.hscroll
    }
    pub fn filter(&self) -> &str {
        &self.filter
    }
    pub fn filter_editing(&self) -> bool {
        self.filter_editing
    }
    pub fn frozen(&self) -> Option<Ts> {
        self.frozen
    }
    pub fn mark(&self) -> Option<Ts> {
        self.mark
    }
    pub fn now(&self) -> Ts {
        self.now
    }
    pub fn help(&self) -> bool {
        self.help
    }
    pub fn detail(&self) -> bool {
        self.detail
    }
    /// The alerts the screen shows: those at the cursor while time travelling, else the live ones.
    pub fn alerts(&self) -> &alerts::Alerts {
        self.past_alerts.as_ref().unwrap_or(&self.alerts)
    }
    /// The alerts of now, whatever the screen shows (the bundle, acknowledgements).
    pub fn live_alerts(&self) -> &alerts::Alerts {
        &self.alerts
    }
    pub fn log(&self) -> &LogView {
        &self.log
    }
    pub fn quit(&self) -> bool {
        self.quit
    }
    pub fn message(&self) -> Option<&(Ts, String)> {
        self.message.as_ref()
    }
    pub fn views(&self) -> &view::ViewCache {
        &self.views
    }
    pub fn episodes(&self) -> &episodes::Episodes {
        &self.episodes
    }
    pub fn travel(&self) -> Option<&travel::Travel> {
        self.travel.as_ref()
    }
    pub fn overlay(&self) -> Option<&travel::Overlay> {
        self.overlay.as_ref()
    }
    pub fn overlay_sel(&self) -> usize {
        self.overlay_sel
    }
    pub fn links(&self) -> &pairing::Links {
        &self.links
    }
    pub fn lossless(&self) -> &lossless::Proof {
        &self.lossless
    }
    pub fn fabric(&self) -> &fabric::Fabric {
        &self.fabric
    }
    pub fn pause_tree(&self) -> &fabric::pause_tree::PauseTree {
        &self.pause_tree
    }
    pub fn show_tree(&self) -> bool {
        self.show_tree
    }
    pub fn tree_of(&self) -> Option<u32> {
        self.tree_of
    }
}

impl App {
    pub fn new(cfg: Config, store: Store, theme: Theme, now: Ts) -> Self {
        let ascii = cfg.ui.ascii.unwrap_or_else(ascii_terminal);
        let source_ids = store
            .sources()
            .map(|(id, h)| (h.name.clone(), id))
            .collect();
        Self {
            store,
            tab: Tab::Overview,
            selected: Default::default(),
            sorts: Default::default(),
            hscroll: [0; Tab::COUNT],
            filter: String::new(),
            filter_editing: false,
            frozen: None,
            held: VecDeque::new(),
            mark: None,
            started: now,
            now,
            no_color: theme.name == "mono" && crate::theme::no_color_env(),
            theme,
            ascii,
            help: false,
            detail: false,
            alerts: alerts::Alerts::default(),
            past_alerts: None,
            eval_ids: alerts::EvalIdsCache::default(),
            eval_windows: std::cell::RefCell::new(crate::metrics::store::WindowsCache::keeping(
                alerts::KEPT_MS,
            )),
            last_alert_eval: None,
            alerts_due: false,
            log: LogView::default(),
            size: (0, 0),
            quit: false,
            hits: RefCell::default(),
            rewinding: None,
            source_ids,
            actions: Vec::new(),
            message: None,
            recording: None,
            replay: None,
            views: view::ViewCache::default(),
            episodes: episodes::Episodes::default(),
            travel: None,
            overlay: None,
            overlay_sel: 0,
            jump: None,
            links: pairing::Links::from_config(&cfg),
            fabric: fabric::Fabric::from_config(&cfg),
            fabric_read: false,
            pause_tree: Default::default(),
            show_tree: false,
            tree_of: None,
            lossless: lossless::Proof::default(),
            proof_at: None,
            proof_due: false,
            topology_due: false,
            focus: None,
            focused: None,
            reach: crate::collect::focus::Reach::of_nodes(&cfg),
            cfg,
        }
    }

    /// Replace the store and go back to `at` (a replay seeking backwards starts over): nothing
    /// of the later time stays (alerts, messages, log lines), and no alert is evaluated until the
    /// history up to `at` is in (`Seeked`), so a seek raises nothing by itself.
    fn rewind(&mut self, store: Store, at: Ts) {
        self.source_ids = store
            .sources()
            .map(|(id, h)| (h.name.clone(), id))
            .collect();
        self.store = store;
        self.travel = None;
        self.past_alerts = None;
        self.links = pairing::Links::from_config(&self.cfg);
        self.fabric = fabric::Fabric::from_config(&self.cfg);
        self.fabric_read = false;
        self.pause_tree = Default::default();
        self.lossless = lossless::Proof::default();
        self.proof_at = None;
        self.proof_due = false;
        self.topology_due = false;
        self.alerts = alerts::Alerts::default();
        self.last_alert_eval = None;
        self.episodes = episodes::Episodes::default();
        self.log = LogView::default();
        self.held.clear();
        self.message = None;
        self.now = at;
        if self.frozen.is_some() {
            self.frozen = Some(at);
        }
        self.mark = self.mark.filter(|m| *m <= at);
        self.rewinding = Some(at);
    }

    /// Show a message in the status bar for a while.
    pub fn say(&mut self, msg: impl Into<String>) {
        self.message = Some((self.now, msg.into()));
    }

    /// The time the screen shows: the time-travel cursor, frozen, or now.
    pub fn view_now(&self) -> Ts {
        self.travel
            .as_ref()
            .map(|t| t.at)
            .or(self.frozen)
            .unwrap_or(self.now)
    }

    /// Totals count from here: the mark, or the start.
    pub fn baseline(&self) -> Ts {
        self.mark.unwrap_or(self.started)
    }

    /// Apply one event at `now`; returns whether the screen should be redrawn.
    pub fn update(&mut self, ev: Event, now: Ts) -> bool {
        let redraw = self.apply(ev, now);
        // The alert lines are rolled up here, when the alerts (an evaluation, an ack, a mute)
        // or the pairing changed, rather than in the frame after new data that shows them.
        self.rolled();
        redraw
    }

    fn apply(&mut self, ev: Event, now: Ts) -> bool {
        // While rewinding, the clock stays at the cursor: the history arriving is older.
        if self.rewinding.is_none() {
            self.now = self.now.max(now);
        }
        // A focus's events, and the keys while focused (app/focus.rs).
        let ev = match self.focus_first(ev, now) {
            std::ops::ControlFlow::Break(redraw) => return redraw,
            std::ops::ControlFlow::Continue(ev) => ev,
        };
        match ev {
            Event::Rewind { store, at } => {
                self.rewind(store.0, at);
                true
            }
            Event::Ended { cut } => {
                self.say(match cut {
                    Some(c) => format!("end of recording (cut short: {c})"),
                    None => "end of recording".to_string(),
                });
                true
            }
            Event::Seeked { at } => {
                self.rewinding = None;
                self.now = self.now.max(at);
                self.eval_alerts();
                true
            }
            Event::Collected(c) if self.rewinding.is_some() => {
                self.push_log(log_lines(&c));
                self.saw_steps(&c);
                self.take_poll(&c, false);
                true
            }
            Event::Collected(_) | Event::LogLines { .. } if self.frozen.is_some() => {
                self.hold(ev);
                false
            }
            Event::Collected(c) => {
                self.push_log(log_lines(&c));
                self.saw_steps(&c);
                let was_up = self.live().source(c.source).and_then(|h| h.up);
                self.take_poll(&c, true);
                // Evaluated before the next frame that shows this poll (Event::Frame); a source
                // that went down or came back, at once (its row says so in that frame).
                self.alerts_due = true;
                let is_up = self.live().source(c.source).and_then(|h| h.up);
                if is_up != was_up && (is_up == Some(false) || was_up == Some(false)) {
                    let _ = self.eval_alerts();
                }
                // The fleet goes on behind a focus; the screen shows the focus.
                self.focus.is_none()
            }
            Event::LogLines { lines, .. } => {
                self.push_log(lines);
                self.focus.is_none()
            }
            Event::Key(k) => {
                self.resolve_jump();
                keys::handle(self, k);
                true
            }
            Event::Mouse(m) => keys::mouse(self, m),
            Event::Resize(w, h) => {
                self.size = (w, h);
                self.in_focus(Event::Resize(w, h), now);
                true
            }
            Event::Frame => {
                self.prove_topology();
                if self.alerts_due && self.rewinding.is_none() && self.frozen.is_none() {
                    let _ = self.maybe_eval_alerts();
                }
                self.in_focus(Event::Frame, now);
                false
            }
            Event::Tick => {
                let proved = self.prove_topology();
                self.resolve_jump();
                // A minute without a step says so even when no line came since.
                let hint = self.log.unread.due(self.now);
                let hinted = hint.is_some() != self.log.hint.is_some();
                self.log.hint = hint;
                if self.rewinding.is_some() {
                    return false;
                }
                if self.frozen.is_some() {
                    // The header shows how old the held view is.
                    return true;
                }
                // The frames after polls evaluate (Event::Frame); the tick moves the windows on
                // when none did within the last second (every source down or slow).
                let changed = proved | self.maybe_reprove() | self.maybe_eval_alerts() | hinted;
                // Ages are shown only for stale and down sources, so only they need a redraw.
                changed
                    || self
                        .store
                        .sources()
                        .any(|(_, h)| h.up == Some(false) || h.is_stale(self.now))
            }
            Event::Shutdown => {
                self.quit = true;
                true
            }
            // Taken by `focus_first`.
            Event::Focused { .. } | Event::FocusRefused { .. } | Event::FocusCollected(_) => false,
        }
    }

    fn push_log(&mut self, lines: Vec<String>) {
        for l in lines {
            self.log.received += 1;
            self.log.unread.line(&l, self.now);
            self.log.lines.push_back(l);
            if self.log.lines.len() > LOG_KEEP {
                self.log.lines.pop_front();
            }
            if self.log.scroll > 0 {
                // Scrolled back: keep the same lines in view while new ones arrive.
                self.log.scroll = (self.log.scroll + 1).min(self.log.lines.len());
            }
        }
        self.log.hint = self.log.unread.due(self.now);
    }

    /// A poll that read a training step: the log is understood (no hint, none to come).
    fn saw_steps(&mut self, c: &Collected) {
        use crate::metrics::names;
        let step = [
            names::TRAIN_ITERATION,
            names::TRAIN_LOSS,
            names::TRAIN_STEP_SECONDS,
            names::TRAIN_ALLREDUCE_SECONDS,
            names::TRAIN_SAMPLES_PER_SECOND,
        ];
        if c.parsed
            .samples
            .iter()
            .any(|s| step.contains(&s.key.name.as_str()))
        {
            self.log.unread.stepped();
        }
        self.log.hint = self.log.unread.due(self.now);
    }

    /// After a poll that carried topology (LLDP, host QoS): pair again and prove the path again,
    /// over the live store, before the next frame or tick. A switch's settings (PFC priorities,
    /// 802.3x, MTU) come with its counter polls: they only mark the proof due, and a tick proves
    /// again at most every [`REPROVE_MS`].
    /// `c` put into the live store (else the tables' one, rewinding), then [`App::topology_arrived`].
    fn take_poll(&mut self, c: &Collected, into_live: bool) {
        let st = if into_live {
            self.live_mut()
        } else {
            &mut self.store
        };
        c.apply(st);
        if c.error.is_none() {
            self.topology_arrived(c);
        }
    }

    fn topology_arrived(&mut self, c: &Collected) {
        match lossless::Arrived::of(&c.parsed.samples) {
            lossless::Arrived::Topology => self.topology_due = true,
            lossless::Arrived::SwitchSetting => self.proof_due = true,
            lossless::Arrived::Nothing => {}
        }
    }

    fn reprove(&mut self) {
        let live = match &self.travel {
            Some(t) => &t.live,
            None => &self.store,
        };
        self.links = pairing::Links::of(&self.cfg, live);
        let fabric = fabric::Fabric::of(&self.cfg, live, &self.links);
        self.lossless = lossless::prove(&self.cfg, live);
        self.proof_at = Some(self.now);
        self.proof_due = false;
        self.topology_due = false;
        // The first graph of topology answers replaces the config's: that is no change to say,
        // nor is each first answer that completes it: once every topology source has answered
        // or failed, a change is news.
        let first_round = live
            .sources()
            .filter(|(_, h)| crate::collect::source::is_topology(&h.name))
            .all(|(_, h)| h.up.is_some());
        let fabric::Changes { added, removed } = fabric.changes_since(&self.fabric);
        if self.fabric_read && added + removed > 0 {
            self.say(format!("fabric links changed: +{added} -{removed}"));
        }
        self.fabric = fabric;
        self.fabric_read |= first_round;
    }

    /// Before a frame or on a tick: pair and prove again if topology came since; whether it did.
    fn prove_topology(&mut self) -> bool {
        let due = self.topology_due;
        if due {
            self.reprove();
        }
        due
    }

    /// On a tick: prove again if a switch's settings came since and the last proof is old enough.
    fn maybe_reprove(&mut self) -> bool {
        let due = self.proof_due && self.proof_at.is_none_or(|t| self.now - t >= REPROVE_MS);
        if due {
            self.reprove();
        }
        due
    }

    /// Evaluate the alerts unless they were within the last [`ALERT_EVERY_MS`]; whether what
    /// they show changed.
    fn maybe_eval_alerts(&mut self) -> bool {
        self.last_alert_eval
            .is_none_or(|t| self.now - t >= ALERT_EVERY_MS)
            && self.eval_alerts()
    }

    fn eval_alerts(&mut self) -> bool {
        self.last_alert_eval = Some(self.now);
        self.alerts_due = false;
        let live = match &self.travel {
            Some(t) => &t.live,
            None => &self.store,
        };
        // Series and groups found again only when the live store has new ones (or is another).
        self.eval_ids.resolve(live);
        let ids = &self.eval_ids;
        // Both read every switch port's PFC rates: once, for both.
        let pfc = episodes::port_pfc_in(live, ids);
        let mut obs = episodes::observe_with(live, self.now, &pfc, ids);
        let tree =
            std::sync::Arc::new(fabric::observe::inputs(live, ids, &pfc, &obs).tree(&self.fabric));
        // The episodes name the tree's root where it crosses switches, and keep the tree of
        // their PFC peak.
        obs.pause_root = fabric::pause_tree::text::across_switches(&tree);
        obs.pause_tree = Some(tree.clone());
        obs.rails = std::sync::Arc::new(self.fabric.rails());
        let rules = episodes::Rules::of(&self.cfg);
        let ep = self.episodes.update(&obs, &rules, &self.links);
        let changed = self.alerts.evaluate_with(
            live,
            &self.cfg,
            &self.links,
            self.now,
            &pfc,
            ids,
            Some(&mut self.eval_windows.borrow_mut()),
            Some(alerts::Graph {
                fabric: &self.fabric,
                tree: &tree,
            }),
        );
        self.pause_tree = tree;
        if ep {
            // The rolled-up lines put the open episode's alerts first.
            self.alerts.touch();
        }
        changed | ep
    }

    /// A source's health by name.
    pub fn source(&self, name: &str) -> Option<&crate::metrics::store::SourceHealth> {
        match self.source_ids.get(name) {
            Some(id) => self.store.source(*id),
            None => self.store.source_by_name(name).map(|(_, h)| h),
        }
    }

    /// The row of `view` that `tab` has selected: its item wherever it is now, else (the item is
    /// filtered out or gone) the row at the position it had; `None` for an empty table.
    pub fn selected_in(&self, tab: Tab, view: &table::TabView) -> Option<usize> {
        if view.is_empty() {
            return None;
        }
        let s = &self.selected[tab.index()];
        s.id.as_ref()
            .and_then(|id| view.position(id))
            .or(Some(s.index.min(view.len() - 1)))
    }

    /// The row the current tab has selected, in what was last drawn.
    pub fn selected_row(&self) -> Option<table::Row> {
        let v = self.shown(self.tab);
        self.selected_in(self.tab, &v)
            .and_then(|i| v.get(i).cloned())
    }

    /// Whether a row name passes the filter.
    pub fn matches(&self, name: &str) -> bool {
        self.filter.is_empty() || name.to_lowercase().contains(&self.filter.to_lowercase())
    }
}

/// The training-log lines a log follower's poll carries (empty segments are parser flushes).
fn log_lines(c: &Collected) -> Vec<String> {
    c.raw
        .iter()
        .flatten()
        .filter(|(k, t)| *k == crate::parse::ParseKind::TrainingLog && !t.is_empty())
        .flat_map(|(_, t)| t.lines().map(str::to_string))
        .collect()
}

/// Terminals known to lack the block characters sparklines use.
fn ascii_terminal() -> bool {
    std::env::var("TERM").is_ok_and(|t| t == "linux" || t.starts_with("vt100") || t == "dumb")
}
