//! Episodes: the fabric leaving its normal state and coming back, told as one story.
//!
//! Pure: fed an [`Obs`] (the store's newest state, read through the metrics query API) once a
//! second, no I/O. Every signal (training step and all-reduce time, each switch port's PFC rate,
//! drops, ECN and CNP rates, each node's pause time, each peer's RTT p99) is judged against its own
//! recent behaviour: the median of its last [`BASE_KEEP`] calm values. A value is abnormal above
//! `max(median × ratio, median + floor)` (ratios from config `[alerts] episode_*`; floors, from the
//! signal's own calm spread, keep a near-zero baseline from calling noise a storm); any drop is
//! abnormal. An episode opens when two
//! layers are abnormal at once or one stays abnormal for two evaluations, starting at the first
//! abnormal instant; it closes once nothing has been abnormal for `settle`. Baselines learn only
//! outside episodes, so a long storm does not become the new normal. docs/user-guide.md has the
//! rules.

pub mod gpu;
mod observe;
mod place;
mod route;
pub mod text;
mod verdict;

pub use observe::{
    Obs, PfcPick, PortDrops, PortPfc, PortRates, observe, observe_with, port_pfc_in,
};

pub use route::ONSET_MS;
use route::record;
pub use verdict::{STAND_RATIO, STAND_SHARE, port_of, stand_out, switch_of};
use verdict::{conclude, one_rail};

use super::pairing::Links;
use crate::config::Config;
use crate::metrics::Ts;
use std::collections::VecDeque;

/// Calm values kept per signal for its baseline (about two minutes at 1 s polls).
pub const BASE_KEEP: usize = 120;
/// A signal is judged only once its baseline holds this many values.
pub const BASE_MIN: usize = 8;
/// Closed episodes kept.
const KEEP: usize = 200;

/// The layers of the congestion chain; on a tie in time, the order a cause travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub enum Layer {
    Drops,
    Pfc,
    HostPause,
    Ecn,
    Rtt,
    Training,
}

/// How many [`Layer`]s there are: the detector keeps the signals of each apart.
const LAYERS: usize = Layer::Training as usize + 1;

/// Thresholds, from config `[alerts]` (`episode_step_ratio`, `episode_rate_ratio`,
/// `episode_rtt_ratio`, `episode_settle`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rules {
    pub step_ratio: f64,
    pub rate_ratio: f64,
    pub rtt_ratio: f64,
    pub settle_ms: i64,
}

impl Rules {
    pub fn of(cfg: &Config) -> Rules {
        Rules {
            step_ratio: cfg.alerts.episode_step_ratio,
            rate_ratio: cfg.alerts.episode_rate_ratio,
            rtt_ratio: cfg.alerts.episode_rtt_ratio,
            settle_ms: cfg.alerts.episode_settle_ms,
        }
    }

    /// (ratio, floor) of a layer: abnormal above max(median × ratio, median + floor). The
    /// floor of PFC, ECN/CNP and pause is the signal's own noise ([`Signal::noise`]), at least
    /// the least its counter tells apart (one frame or mark a second, a thousandth of the time
    /// paused): a fabric at a tenth of another's rates has a tenth of its noise, and a fixed
    /// floor sized for one hid the other's storms.
    fn of_layer(&self, l: Layer, sig: &Signal) -> (f64, f64) {
        let noise = |least: f64| least.max(NOISE_K * sig.noise());
        match l {
            Layer::Training => (self.step_ratio, 0.005),
            Layer::Pfc => (self.rate_ratio, noise(1.0)),
            Layer::Ecn => (self.rate_ratio, noise(1.0)),
            Layer::HostPause => (3.0, noise(0.001)),
            Layer::Rtt => (self.rtt_ratio, 0.0),
            Layer::Drops => (0.0, 0.0),
        }
    }
}

/// How many times its calm spread ([`Signal::noise`]) a signal must rise above its median (where
/// the median is too near zero for the ratio to tell).
pub const NOISE_K: f64 = 2.0;

/// One signal's part in an episode.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Part {
    pub layer: Layer,
    /// `step`, `pfc <switch> <port>`, `drop <switch> <port> <reason>`, `pause <node>`, ...
    pub key: String,
    /// When it first went abnormal.
    pub first: Ts,
    /// Its baseline (median of calm values) when it went abnormal; drops: 0.
    pub base: f64,
    pub peak: f64,
    pub peak_at: Ts,
    /// PFC only: peak frames/s received and sent by the switch on this port.
    pub rx_peak: f64,
    pub tx_peak: f64,
    /// How many evaluations it was abnormal in: a drop seen once is a stray, not a congestion
    /// point.
    pub evals: u32,
}

/// Whether ECN/CNP (DCQCN) took the congestion or PFC had to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Dcqcn {
    /// ECN/CNP rose and PFC did not storm.
    Absorbing,
    /// PFC stormed: pause frames outnumbered ECN marks more than tenfold.
    NotAbsorbing,
    /// Both rose comparably.
    Partly,
    /// Neither PFC nor ECN moved (e.g. an RTT or step-time episode only).
    Quiet,
    /// No switch was read during the episode: whether PFC stormed is not known, so neither is
    /// whether DCQCN absorbed (never told as calm).
    Unseen,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Episode {
    pub id: u32,
    pub start: Ts,
    /// `None` while open.
    pub end: Option<Ts>,
    /// The newest instant something was abnormal.
    pub last_abnormal: Ts,
    /// When the most signals were abnormal at once.
    pub peak_at: Ts,
    peak_count: usize,
    /// Every abnormal signal, in cause order (first abnormal, then layer).
    pub chain: Vec<Part>,
    /// Peak of the summed PFC frames/s over the storming ports.
    pub pfc_total_peak: f64,
    /// Training time lost: Σ over the episode of (1 − baseline step / step) × seconds.
    pub lost_s: f64,
    pub dcqcn: Dcqcn,
    /// Whether any switch's PFC or drop counters were read during the episode: a layer not read
    /// is unseen, not quiet.
    pub switch_read: bool,
    /// The port to look at first (the one dropping most, else the edge port sending most pauses,
    /// else the port the map puts the node paused most on) and the nodes behind it.
    pub culprit: Option<(String, String)>,
    pub culprit_nodes: Vec<String>,
    /// What named the culprit.
    pub culprit_by: Option<CulpritBy>,
    /// Where the congestion is when no port stands out as the culprit ([`stand_out`]): the
    /// ports that dropped, then the edge ports that sent pauses, each largest first. Empty when
    /// a culprit (or, with no switch read, the node paused most) is named.
    pub spread: Vec<SwitchPort>,
    /// What the GPUs did meanwhile ([`gpu`]).
    pub gpu: gpu::Gpus,
    /// The pause tree's root and spread at the episode's PFC peak, where the pausing crossed
    /// switches ([`Obs::pause_root`]).
    pub pause_root: Option<String>,
    /// The rail every switch of its chain that is on a rail is on (a spine is on none), where
    /// the fabric has rails: the episode touched that rail's NICs only.
    pub rail: Option<u32>,
    /// The whole pause tree at the episode's PFC peak, for the tree view and the bundle (written
    /// apart from the episode's own fields: `text::json` puts it under `peak_tree`). One per
    /// episode, shared with the evaluation that made it, so keeping it copies nothing.
    #[serde(skip)]
    pub peak_tree: Option<PeakTree>,
}

/// The pause tree an episode kept, and when it was made.
#[derive(Clone, Debug, PartialEq)]
pub struct PeakTree {
    pub at: Ts,
    pub tree: std::sync::Arc<crate::app::fabric::pause_tree::PauseTree>,
}

/// A port of a switch.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct SwitchPort {
    pub switch: String,
    pub port: String,
}

/// The evidence that named an episode's culprit, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum CulpritBy {
    /// The switch port dropping most.
    Drops,
    /// The edge port sending most pauses (lossless: PFC held, nothing dropped).
    Pauses,
    /// The node paused most, on the port the map puts it (no switch read).
    HostPause,
}

impl Episode {
    /// Open at `at`, starting at `start`, nothing in it yet.
    fn new(id: u32, start: Ts, at: Ts) -> Episode {
        Episode {
            id,
            start,
            end: None,
            last_abnormal: at,
            peak_at: at,
            peak_count: 0,
            chain: Vec::new(),
            pfc_total_peak: 0.0,
            lost_s: 0.0,
            dcqcn: Dcqcn::Quiet,
            switch_read: false,
            culprit: None,
            culprit_nodes: Vec::new(),
            culprit_by: None,
            spread: Vec::new(),
            gpu: gpu::Gpus::default(),
            pause_root: None,
            rail: None,
            peak_tree: None,
        }
    }

    /// How severe it is, larger worse: the strongest layer in its chain (drops, then PFC, host
    /// pause, ECN, RTT, training), then the most signals abnormal at once, then the newer.
    pub fn severity(&self) -> (usize, usize, u32) {
        let strongest = self.chain.iter().map(|p| p.layer).min();
        let rank = strongest.map_or(0, |l| LAYERS - l as usize);
        (rank, self.peak_count, self.id)
    }

    pub fn duration_ms(&self, now: Ts) -> i64 {
        self.end.unwrap_or(now) - self.start
    }

    pub fn parts(&self, layer: Layer) -> impl Iterator<Item = &Part> {
        self.chain.iter().filter(move |p| p.layer == layer)
    }
}

#[derive(Debug, Default)]
struct Signal {
    calm: VecDeque<f64>,
    /// `calm` sorted (`f64::total_cmp`): the median every evaluation without a sort.
    sorted: Vec<f64>,
    since: Option<Ts>,
    seen: bool,
}

impl Signal {
    fn median(&self) -> Option<f64> {
        if self.calm.len() < BASE_MIN {
            return None;
        }
        self.sorted.get(self.sorted.len() / 2).copied()
    }

    /// How far its calm values reach above their median: the largest minus the median (0
    /// before a baseline).
    fn noise(&self) -> f64 {
        let top = self.sorted.iter().rev().find(|v| v.is_finite());
        match (self.median(), top) {
            (Some(m), Some(top)) if *top > m => top - m,
            _ => 0.0,
        }
    }

    /// Keep `v` in the baseline, forgetting the oldest beyond [`BASE_KEEP`].
    fn learn(&mut self, v: f64) {
        self.calm.push_back(v);
        let i = self.sorted.partition_point(|x| x.total_cmp(&v).is_lt());
        self.sorted.insert(i, v);
        if self.calm.len() > BASE_KEEP {
            if let Some(old) = self.calm.pop_front() {
                // Equal in the total order means the same bits: whichever copy goes.
                if let Ok(i) = self.sorted.binary_search_by(|x| x.total_cmp(&old)) {
                    self.sorted.remove(i);
                }
            }
        }
    }
}

/// The detector: baselines, the open episodes (one per place), and past ones.
#[derive(Debug, Default)]
pub struct Episodes {
    /// Per layer (`Layer as usize`), by key: looked up by a borrowed key ([`each_value`]), so a
    /// second's hundreds of signals allocate nothing once known.
    signals: [Signals; LAYERS],
    /// Open episodes, oldest first: separate places make separate episodes ([`place`]).
    opened: Vec<Opened>,
    /// Closed episodes, in the order they closed.
    pub closed: VecDeque<Episode>,
    last_at: Option<Ts>,
    next_id: u32,
    /// The GPUs' calm ([`gpu`]).
    gpu: gpu::Baselines,
}

/// An open episode and its chain ordered by part key.
#[derive(Debug)]
struct Opened {
    ep: Episode,
    by_key: ChainOrderCache,
    /// The peak of every port's PFC and node's pause during its onset ([`ONSET_MS`]): a new place
    /// beside it must have risen well above what this storm's spread made of it. As many as the
    /// fabric has ports and nodes.
    onset: rustc_hash::FxHashMap<String, f64>,
}

/// An open episode's chain ordered by its parts' keys, for a binary search per abnormal signal:
/// a storm at 512 nodes has hundreds of parts, and a linear search for each signal was quadratic.
/// Parts are only added (then the chain is sorted again), so the order holds for the episode and
/// chain length it was made for.
#[derive(Debug, Default)]
struct ChainOrderCache {
    made_for: Option<ChainOrderKey>,
    /// Indices into the chain, ordered by their parts' keys.
    order: Vec<usize>,
}

impl ChainOrderCache {
    /// Order `ep`'s chain again unless the order kept was made for it as it is.
    fn fit(&mut self, ep: &Episode) {
        let made_for = ChainOrderKey {
            episode: ep.id,
            parts: ep.chain.len(),
        };
        if self.made_for != Some(made_for) {
            self.order.clear();
            self.order.extend(0..ep.chain.len());
            self.order
                .sort_unstable_by(|&a, &b| ep.chain[a].key.cmp(&ep.chain[b].key));
            self.made_for = Some(made_for);
        }
    }

    /// Where `key` is in the order (of `ep`, fitted): `Ok` its place, `Err` where it would go.
    fn find(&self, ep: &Episode, key: &str) -> Result<usize, usize> {
        self.order
            .binary_search_by(|&i| ep.chain[i].key.as_str().cmp(key))
    }
}

/// What a [`ChainOrderCache`] was made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ChainOrderKey {
    episode: u32,
    parts: usize,
}

/// The signals of one layer, by key.
/// Hashed with Fx (as the alerts' rows are): its order is never read, and SipHash of every
/// key every second was most of a lookup.
type Signals =
    hashbrown::HashMap<String, Signal, std::hash::BuildHasherDefault<rustc_hash::FxHasher>>;

/// One signal's value at an instant.
struct Val {
    layer: Layer,
    /// Where its key is in the instant's key buffer (one allocation for all its keys).
    key: std::ops::Range<usize>,
    v: f64,
    rx: f64,
    tx: f64,
}

/// A signal abnormal at an instant: its value, since when it has been abnormal, and its baseline
/// then (drops: 0).
struct Abnormal {
    val: Val,
    since: Ts,
    base: f64,
}

/// One evaluation as the router and the episodes take it: its abnormal signals (their keys in
/// `keys`, one buffer for all), its instant, the one before and the time in between (at most 5 s
/// counts toward training time lost).
struct Instant<'a> {
    abnormal: &'a [Abnormal],
    keys: &'a str,
    prev: Option<Ts>,
    at: Ts,
    dt: i64,
}

/// One signal's value at an instant, its key borrowed (built in a buffer reused for all).
struct ValRef<'a> {
    layer: Layer,
    key: &'a str,
    v: f64,
    rx: f64,
    tx: f64,
}

impl ValRef<'_> {
    /// Its key copied to the end of `keys`.
    fn owned(&self, keys: &mut String) -> Val {
        let start = keys.len();
        keys.push_str(self.key);
        Val {
            layer: self.layer,
            key: start..keys.len(),
            v: self.v,
            rx: self.rx,
            tx: self.tx,
        }
    }
}

/// Every signal of `o`, in a fixed order (training, PFC, drops, ECN, pause, RTT).
fn each_value(o: &Obs, mut f: impl FnMut(ValRef)) {
    let mut key = String::new();
    let mut val = |layer, parts: &[&str], v, rx, tx| {
        key.clear();
        for (i, p) in parts.iter().enumerate() {
            if i > 0 {
                key.push(' ');
            }
            key.push_str(p);
        }
        f(ValRef {
            layer,
            key: &key,
            v,
            rx,
            tx,
        });
    };
    if let Some(v) = o.step_s {
        val(Layer::Training, &["step"], v, 0.0, 0.0);
    }
    if let Some(v) = o.allreduce_s {
        val(Layer::Training, &["allreduce"], v, 0.0, 0.0);
    }
    for p in &o.pfc {
        let parts = ["pfc", &*p.switch, &*p.port];
        val(Layer::Pfc, &parts, p.rx + p.tx, p.rx, p.tx);
    }
    for d in &o.drops {
        let parts = ["drop", &*d.switch, &*d.port, &*d.reason];
        val(Layer::Drops, &parts, d.per_s, 0.0, 0.0);
    }
    if let Some(v) = o.ecn {
        val(Layer::Ecn, &["ecn"], v, 0.0, 0.0);
    }
    if let Some(v) = o.cnp {
        val(Layer::Ecn, &["cnp"], v, 0.0, 0.0);
    }
    for (n, v) in &o.pause {
        val(Layer::HostPause, &["pause", n], *v, 0.0, 0.0);
    }
    for (k, v) in &o.rtt_p99 {
        val(Layer::Rtt, &["rtt", k], *v, 0.0, 0.0);
    }
}

impl Episodes {
    /// Every episode, the newest start first (open and closed alike).
    pub fn all(&self) -> Vec<&Episode> {
        let mut all: Vec<&Episode> = self.open().chain(self.closed.iter()).collect();
        all.sort_by_key(|e| std::cmp::Reverse((e.start, e.id)));
        all
    }

    /// The open episodes, oldest first.
    pub fn open(&self) -> impl ExactSizeIterator<Item = &Episode> + Clone {
        self.opened.iter().map(|o| &o.ep)
    }

    /// The most severe open episode ([`Episode::severity`]).
    pub fn worst_open(&self) -> Option<&Episode> {
        self.open().max_by_key(|e| e.severity())
    }

    /// The episode shown on the Overview: the most severe open one, else the newest closed one.
    pub fn current(&self) -> Option<&Episode> {
        self.worst_open().or(self.closed.back())
    }

    /// The episodes whose span holds `at` (open ones hold every instant since their start), the
    /// most severe first.
    pub fn open_at(&self, at: Ts) -> Vec<&Episode> {
        let mut v: Vec<&Episode> = (self.open().chain(self.closed.iter()))
            .filter(|e| e.start <= at && e.end.is_none_or(|end| end >= at))
            .collect();
        v.sort_by_key(|e| std::cmp::Reverse(e.severity()));
        v
    }

    /// Judge the fabric at `o.at`; returns whether an episode opened, changed or closed.
    pub fn update(&mut self, o: &Obs, rules: &Rules, links: &Links) -> bool {
        let at = o.at;
        let prev = self.last_at;
        let dt = prev.map_or(0, |t| (at - t).clamp(0, 5000));
        self.last_at = Some(at);
        let mut abnormal: Vec<Abnormal> = Vec::new();
        let mut keys = String::new();
        // A signal absent from this instant (drops come and go) is not abnormal now.
        for sig in self.signals.iter_mut().flat_map(|m| m.values_mut()) {
            sig.seen = false;
        }
        // No baseline learns while any episode is open: a long storm must not become the new
        // normal, and a calm place's signal beside a storm is not calm enough to be sure of.
        let learning = self.opened.is_empty();
        if learning {
            self.gpu.learn(o);
        }
        let signals = &mut self.signals;
        each_value(o, |v| {
            let sig = signals[v.layer as usize].entry_ref(v.key).or_default();
            sig.seen = true;
            let base = sig.median();
            let bad = match (v.layer, base) {
                (Layer::Drops, _) => v.v > 0.0,
                (_, Some(m)) => {
                    let (ratio, floor) = rules.of_layer(v.layer, sig);
                    v.v > (m * ratio).max(m + floor)
                }
                (_, None) => false,
            };
            if bad {
                let since = *sig.since.get_or_insert(at);
                abnormal.push(Abnormal {
                    val: v.owned(&mut keys),
                    since,
                    base: base.unwrap_or(0.0),
                });
            } else {
                sig.since = None;
                if learning && v.layer != Layer::Drops {
                    sig.learn(v.v);
                }
            }
        });
        for sig in self.signals.iter_mut().flat_map(|m| m.values_mut()) {
            if !sig.seen {
                sig.since = None;
            }
        }
        let now = Instant {
            abnormal: &abnormal,
            keys: &keys,
            prev,
            at,
            dt,
        };
        let to = self.route(&now, o, links);
        if self.opened.is_empty() {
            return false;
        }
        // Fabric-wide costs (training time lost) go to the episode the fabric-wide signals went
        // to: the one with the most signals this instant, on a tie the newest.
        let mut counts = vec![0usize; self.opened.len()];
        for j in to.iter().flatten() {
            counts[*j] += 1;
        }
        let owner = (0..counts.len()).max_by_key(|&j| (counts[j], j));
        let mut changed = false;
        for j in 0..self.opened.len() {
            let mine: Vec<&Abnormal> = (abnormal.iter().zip(&to))
                .filter(|(_, t)| **t == Some(j))
                .map(|(a, _)| a)
                .collect();
            let op = &mut self.opened[j];
            let pfc_before = op.ep.pfc_total_peak;
            record(
                &mut op.ep,
                &mine,
                &now,
                o,
                owner == Some(j),
                &self.signals,
                &mut op.by_key,
            );
            // The tree is the fabric's, not one place's: it goes with the fabric-wide signals,
            // kept from the episode's PFC peak.
            if owner == Some(j)
                && o.pause_root.is_some()
                && (op.ep.pause_root.is_none() || op.ep.pfc_total_peak > pfc_before)
            {
                op.ep.pause_root.clone_from(&o.pause_root);
            }
            // The whole tree by the same rule, whether or not it crosses switches: the view of
            // the peak shows one leaf's pausing too.
            if let (Some(tree), true) = (&o.pause_tree, owner == Some(j)) {
                if op.ep.peak_tree.is_none() || op.ep.pfc_total_peak > pfc_before {
                    op.ep.peak_tree = Some(PeakTree {
                        at,
                        tree: tree.clone(),
                    });
                }
            }
            gpu::fold(&mut op.ep, o, &self.gpu);
            op.ep.rail = one_rail(&op.ep.chain, &o.rails);
            conclude(&mut op.ep, links);
            if at - op.ep.start < ONSET_MS {
                // Every port's and node's, abnormal or not yet: one crossing its threshold late
                // was still this storm's.
                let mut keep = |key: String, v: f64| {
                    let peak = op.onset.entry(key).or_default();
                    *peak = peak.max(v);
                };
                for p in &o.pfc {
                    keep(format!("pfc {} {}", p.switch, p.port), p.rx + p.tx);
                }
                for (n, v) in &o.pause {
                    keep(format!("pause {n}"), *v);
                }
            }
            changed = true;
        }
        // Each closes on its own: nothing of its own abnormal for `settle`.
        let mut j = 0;
        while j < self.opened.len() {
            let ep = &self.opened[j].ep;
            if ep.last_abnormal < at && at - ep.last_abnormal >= rules.settle_ms {
                let mut ep = self.opened.remove(j).ep;
                ep.end = Some(ep.last_abnormal);
                self.closed.push_back(ep);
                if self.closed.len() > KEEP {
                    self.closed.pop_front();
                }
            } else {
                j += 1;
            }
        }
        changed
    }
}

#[cfg(test)]
mod tests;
