//! PFC: switch ports (RxPPP/TxPPP per second, the last 60 s, totals, PFC oper state, 802.3x) and
//! the hosts' NIC pause counters (`ethtool -S`). Both are selectable: the selection walks the port
//! rows, then the host rows (`TabView::get`), each with its lossless findings in its detail view.

use super::{Ctx, LinksCache, by_first, sev_rank};
use crate::app::alerts::{ROCE_PRIORITY, Severity, Subject, WINDOW_MS};
use crate::app::source::{SrcState, age_text};
use crate::app::table::group::{self, Sums};
use crate::app::table::{
    Cell, CellsIn, Chart, Col, LayoutAt, Row, RowId, TabView, Tone, Val, col, lcol, short_names,
};
use crate::metrics::names::*;
use crate::metrics::query::{self, Agg};
use crate::metrics::store::{SeriesId, SourceId};
use crate::metrics::{Store, Ts};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

/// PFC p3 and 802.3x name the misconfigured port: never hidden. "60s" (frames in the last
/// minute, rx + tx) keeps a storm that just ended on top when sorted by it.
pub const SW_COLS: [Col; 11] = [
    lcol("port", 14, 0),
    lcol("class", 5, 3),
    lcol("nodes behind", 16, 1),
    col("RxPPP/s", 9, 1),
    col("TxPPP/s", 9, 1),
    col("PPP 60s", 9, 2),
    col("RxPPP tot", 9, 3),
    col("TxPPP tot", 9, 3),
    lcol("PFC p3", 6, 0),
    lcol("802.3x rx/tx", 12, 0),
    col("link pause/s", 12, 2),
];

pub const HOST_COLS: [Col; 9] = [
    // Identity columns never hide: a node's two NICs differ by netdev, and its priority-3 PFC row
    // and global (802.3x) row differ only by prio (rows looked duplicated at 80 columns).
    lcol("node", 13, 0),
    lcol("netdev", 8, 0),
    lcol("prio", 6, 0),
    col("rx pause/s", 10, 1),
    col("tx pause/s", 10, 2),
    col("pause%", 7, 0),
    col("rx pause total", 14, 3),
    col("storm events", 12, 1),
    col("rx_discards_phy", 15, 2),
];

/// A switch port's PFC counters of one direction, by priority: the port total
/// (`priority="all"`) where reported, else the priorities summed. Each group is one priority's
/// series, in key order (the order the sums were always taken in).
#[derive(Default)]
struct Pause {
    all: Vec<Vec<SeriesId>>,
    prios: Vec<Vec<SeriesId>>,
}

impl Pause {
    fn add(&mut self, priority: &str, ids: Vec<SeriesId>) {
        if priority == "all" {
            self.all.push(ids);
        } else {
            self.prios.push(ids);
        }
    }

    fn is_empty(&self) -> bool {
        self.all.is_empty() && self.prios.is_empty()
    }

    /// The port's rate: the "all" groups' rates summed where there are such series, else the
    /// priorities'; `None` without any series.
    fn rate(&self, st: &Store) -> Option<Agg> {
        let groups = if self.all.is_empty() {
            &self.prios
        } else {
            &self.all
        };
        if groups.is_empty() {
            return None;
        }
        let mut slot = Agg::default();
        for g in groups {
            let a = query::rate_of(st, g);
            if let Some(r) = a.rate {
                *slot.rate.get_or_insert(0.0) += r;
            }
            slot.reset |= a.reset;
        }
        Some(slot)
    }

    /// The port's increase since `since`: the "all" groups' where any counted, else the
    /// priorities'.
    fn total(&self, cx: &Ctx, since: Ts) -> Option<u64> {
        let sum = |groups: &[Vec<SeriesId>]| {
            groups
                .iter()
                .filter_map(|g| cx.increase_of(g, since))
                .fold(None, |acc: Option<u64>, v| Some(acc.unwrap_or(0) + v))
        };
        sum(&self.all).or_else(|| sum(&self.prios))
    }
}

/// One switch port's row as the set of series makes it.
struct PortRow {
    switch: String,
    port: String,
    rx: Pause,
    tx: Pause,
    /// PFC enabled on the RoCE priority; a port with only these series has a row once one holds
    /// a value.
    pfc_on: Vec<SeriesId>,
    fc_rx: Vec<SeriesId>,
    fc_tx: Vec<SeriesId>,
    link_pause: Vec<SeriesId>,
    subject: Subject,
    id: RowId,
    charts: Rc<[Chart]>,
    /// Where its [`Named`] is.
    ix: usize,
}

/// What a port row takes from the links: the nodes behind it, and its name (for sorting and
/// the filter) that names them.
struct Named {
    behind: String,
    any_behind: bool,
    /// The port links to another switch (what is behind it is that switch).
    isl: bool,
    name: String,
}

/// One host NIC priority's row as the set of series makes it.
struct HostRow {
    netdev: String,
    priority: String,
    rx: Vec<SeriesId>,
    tx: Vec<SeriesId>,
    frac_rx: Vec<SeriesId>,
    frac_tx: Vec<SeriesId>,
    storms: Vec<SeriesId>,
    discards: Vec<SeriesId>,
    id: RowId,
    name: String,
    charts: Rc<[Chart]>,
}

/// The tab's rows while the set of series stays ([`Ctx::layout`]): per configured switch its
/// ports, per node (and its source) its NICs' priorities, in the order the rows are made.
struct Layout {
    ports: HashMap<String, Vec<PortRow>>,
    /// Per node: its name, its source's id in the store ([`Ctx::source_id`]), its rows.
    hosts: Vec<(String, Option<SourceId>, Vec<HostRow>)>,
    /// Per port row ([`PortRow::ix`]), what the links say of it.
    named: LinksCache<Vec<Named>>,
}

impl Layout {
    fn named(&self, cx: &Ctx) -> Rc<Vec<Named>> {
        cx.behind_each(
            &self.named,
            &self.ports,
            |p| (p.ix, p.port.as_str()),
            |p, behind| Named {
                behind: short_names(&behind.names),
                any_behind: !behind.names.is_empty(),
                isl: behind.isl,
                name: format!("{} {} {}", p.switch, p.port, behind.names.join(" ")),
            },
        )
    }
}

/// Series of `name` by (switch, port, priority), by port.
fn by_port(st: &Store, name: &str) -> BTreeMap<(String, String), Pause> {
    let mut out: BTreeMap<(String, String), Pause> = BTreeMap::new();
    for (k, ids) in query::groups(st, name, &[], &["switch", "port", "priority"]) {
        let [sw, port, prio] = <[String; 3]>::try_from(k).unwrap_or_default();
        out.entry((sw, port)).or_default().add(&prio, ids);
    }
    out
}

fn layout(cx: &Ctx) -> Layout {
    let st = cx.store;
    let mut rx = by_port(st, SW_PFC_RX);
    let mut tx = by_port(st, SW_PFC_TX);
    let sp = ["switch", "port"];
    let mut pfc_on = query::groups(st, SW_PFC_ENABLED, &[("priority", ROCE_PRIORITY)], &sp);
    let mut fc = query::groups(
        st,
        SW_FLOWCONTROL_ENABLED,
        &[],
        &["switch", "port", "direction"],
    );
    let mut lp = query::groups(st, SW_LINK_PAUSE_RX, &[], &sp);
    let keys: BTreeSet<(String, String)> = rx
        .keys()
        .chain(tx.keys())
        .cloned()
        .chain(pfc_on.keys().map(|k| (k[0].clone(), k[1].clone())))
        .collect();
    let mut ports: HashMap<String, Vec<PortRow>> = HashMap::new();
    for (ix, (sw, port)) in keys.into_iter().enumerate() {
        let k = vec![sw.clone(), port.clone()];
        let mut fck = |d: &str| {
            fc.remove(&vec![sw.clone(), port.clone(), d.to_string()])
                .unwrap_or_default()
        };
        let (fc_rx, fc_tx) = (fck("rx"), fck("tx"));
        let lbl = [("switch", sw.as_str()), ("port", port.as_str())];
        let row = PortRow {
            rx: rx.remove(&(sw.clone(), port.clone())).unwrap_or_default(),
            tx: tx.remove(&(sw.clone(), port.clone())).unwrap_or_default(),
            pfc_on: pfc_on.remove(&k).unwrap_or_default(),
            fc_rx,
            fc_tx,
            link_pause: lp.remove(&k).unwrap_or_default(),
            subject: Subject::Port {
                switch: sw.clone(),
                port: port.clone(),
            },
            ix,
            id: RowId::Port {
                switch: sw.clone(),
                port: port.clone(),
            },
            charts: Rc::from(vec![
                Chart::rate("RxPPP frames/s", SW_PFC_RX, &lbl),
                Chart::rate("TxPPP frames/s", SW_PFC_TX, &lbl),
                Chart::rate("802.3x link pause rx/s", SW_LINK_PAUSE_RX, &lbl),
            ]),
            port,
            switch: sw.clone(),
        };
        ports.entry(sw).or_default().push(row);
    }
    Layout {
        ports,
        hosts: host_layout(cx),
        named: LinksCache::default(),
    }
}

fn on_off(v: Option<f64>) -> &'static str {
    match v {
        None => "-",
        Some(v) if v > 0.5 => "on",
        Some(_) => "off",
    }
}

pub fn view(cx: &Ctx) -> TabView {
    let lay = cx.layout(|| layout(cx));
    let (rows, notes) = port_rows(cx, &lay);
    TabView {
        cols: &SW_COLS,
        rows,
        extra_cols: &HOST_COLS,
        extra: host_rows(cx, &lay),
        notes,
    }
}

fn port_rows(cx: &Ctx, lay: &Layout) -> (Vec<Row>, Vec<String>) {
    let st = cx.store;
    let named = lay.named(cx);
    let mut rows = Vec::with_capacity(lay.ports.values().map(Vec::len).sum());
    let mut notes = Vec::new();
    let mut heads: HashMap<&str, SwitchHead> = HashMap::new();
    for (g, sw) in cx.cfg.switches.iter().enumerate() {
        let name = sw.name.as_str();
        let state = cx.src(name);
        // A port with only its PFC-enabled series has a row once that holds a value.
        let mine: Vec<(usize, &PortRow)> = lay
            .ports
            .get(name)
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, p)| {
                !p.rx.is_empty() || !p.tx.is_empty() || query::latest_of(st, &p.pfc_on).is_some()
            })
            .collect();
        if let Some(r) = state.source_row(name, !mine.is_empty(), "PFC counters") {
            rows.push(r);
            continue;
        }
        if let SrcState::Stale(ms) = state {
            notes.push(format!("{name} stale {}", age_text(ms)));
        }
        for (ix, p) in mine {
            let h = PortHead::of(cx, p);
            heads.entry(name).or_default().add(&h);
            let mut row = cx.pending(
                false,
                &p.id,
                &named[p.ix].name,
                &p.charts,
                LayoutAt { group: g, item: ix },
            );
            row.tone = state.row_tone();
            row.score = sev_rank(h.sev) * 1e9 + per_sec(&h.rx) + per_sec(&h.tx);
            // The lossless path proven wrong through this port: marked on its PFC cell, said in
            // its detail view.
            row.notes = cx
                .lossless
                .at_port(name, &p.port)
                .map(|f| format!("{}: {}", f.link, f.text()))
                .collect();
            rows.push(row);
        }
    }
    let n = cx.lossless.findings.len();
    if n > 0 {
        let s = if n == 1 { "" } else { "es" };
        notes.push(format!("lossless path: {n} mismatch{s}, marked !"));
    }
    cx.arrange_pending(false, &mut rows, |todo| fill(cx, todo));
    if cx.cfg.switches.len() > 1 {
        rows = group::by_switch(rows, |sw, _| {
            let id = RowId::Switch(sw.to_string());
            let mut row = cx.reused(false, &id, sw, &Rc::from(Vec::new()));
            heads
                .get(sw)
                .cloned()
                .unwrap_or_default()
                .cells(sw, &mut row);
            row
        });
    }
    (rows, notes)
}

/// A switch's summary line: how many of its ports pause, and their pause rates summed.
#[derive(Clone, Default)]
struct SwitchHead {
    ports: usize,
    pausing: usize,
    rates: Sums,
}

impl SwitchHead {
    fn add(&mut self, h: &PortHead) {
        self.ports += 1;
        if per_sec(&h.rx) > 0.0 || per_sec(&h.tx) > 0.0 {
            self.pausing += 1;
        }
        let blank = Cell::default;
        self.rates.add(&[
            blank(),
            blank(),
            blank(),
            Cell::new(Val::Rate(h.rx)),
            Cell::new(Val::Rate(h.tx)),
        ]);
    }

    fn cells(&self, sw: &str, row: &mut Row) {
        let mut c = CellsIn::new(&mut row.cells);
        c.text(sw, Some(Tone::Accent));
        c.text("", None);
        if self.pausing > 0 {
            c.text_fmt(
                format_args!("{} of {} pausing", self.pausing, self.ports),
                Some(Tone::Warn),
            );
        } else {
            c.text_fmt(format_args!("{} ports", self.ports), Some(Tone::Dim));
        }
        for i in 3..SW_COLS.len() {
            c.push(Cell::new(self.rates.get(i)));
        }
    }
}

/// What a port's row is ordered by (and shows): its worst alert and its pause rates.
struct PortHead {
    sev: Option<Severity>,
    rx: Option<Agg>,
    tx: Option<Agg>,
}

impl PortHead {
    fn of(cx: &Ctx, p: &PortRow) -> PortHead {
        PortHead {
            sev: cx.alerts.worst_for(&p.subject),
            rx: p.rx.rate(cx.store),
            tx: p.tx.rate(cx.store),
        }
    }
}

fn per_sec(a: &Option<Agg>) -> f64 {
    a.and_then(|a| a.rate).unwrap_or(0.0)
}

/// The cells of the port and host rows made pending by [`port_rows`] and [`host_rows`].
pub fn fill(cx: &Ctx, rows: &mut dyn Iterator<Item = &mut Row>) {
    let lay = cx.layout(|| layout(cx));
    let named = lay.named(cx);
    for row in rows {
        let Some(LayoutAt { group: g, item: ix }) = row.pending.take() else {
            continue;
        };
        if matches!(row.id, RowId::Port { .. }) {
            let sw = cx.cfg.switches[g].name.as_str();
            let p = &lay.ports[sw][ix];
            port_cells(cx, p, &named[p.ix], row);
        } else {
            let (name, _, mine) = &lay.hosts[g];
            host_cells(cx, name, &mine[ix], row);
        }
    }
}

/// A port row's cells (its notes are the lossless findings through it, made with the row).
fn port_cells(cx: &Ctx, p: &PortRow, nm: &Named, row: &mut Row) {
    let st = cx.store;
    let limit = cx.cfg.alerts.port_pfc_per_second;
    let last_min = cx.now - WINDOW_MS;
    let port = p.port.as_str();
    let h = PortHead::of(cx, p);
    let (fc_rx, fc_tx) = (
        query::latest_of(st, &p.fc_rx),
        query::latest_of(st, &p.fc_tx),
    );
    let fc_bad = cx.cfg.alerts.flowcontrol.as_deref().is_some_and(|want| {
        !port.starts_with("ii")
            && [fc_rx, fc_tx]
                .iter()
                .flatten()
                .any(|v| on_off(Some(*v)) != want)
    });
    let p3 = on_off(query::latest_of(st, &p.pfc_on));
    let last60 = match (p.rx.total(cx, last_min), p.tx.total(cx, last_min)) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    };
    let lp = query::rate_if_any(st, &p.link_pause);
    let wrong = !row.notes.is_empty();
    let mut c = CellsIn::new(&mut row.cells);
    c.text(port, Some(Tone::of(h.sev)));
    let class = if port.starts_with("ii") {
        "ii"
    } else if nm.isl {
        "isl"
    } else {
        "edge"
    };
    c.text(class, None);
    c.text(&nm.behind, None);
    c.push(Cell::warn_if(
        Val::Rate(h.rx),
        per_sec(&h.rx) > limit,
        Tone::Warn,
    ));
    c.push(Cell::warn_if(
        Val::Rate(h.tx),
        per_sec(&h.tx) > limit,
        Tone::Warn,
    ));
    c.push(Cell::new(Val::Count(last60)));
    c.push(Cell::new(Val::Count(p.rx.total(cx, cx.base))));
    c.push(Cell::new(Val::Count(p.tx.total(cx, cx.base))));
    marked(&mut c, p3, wrong, p3 == "off" && nm.any_behind);
    c.text_fmt(
        format_args!("{}/{}", on_off(fc_rx), on_off(fc_tx)),
        fc_bad.then_some(Tone::Warn),
    );
    c.push(Cell::new(Val::Rate(lp)));
}

/// A cell that carries the lossless-path marker: `on !` in the critical tone where a finding
/// bites the row, else the value warned as `warn` says.
fn marked(c: &mut CellsIn, v: &str, wrong: bool, warn: bool) {
    if !wrong {
        c.text(v, warn.then_some(Tone::Warn));
    } else {
        c.text_fmt(format_args!("{v} !"), Some(Tone::Crit));
    }
}

const HG: [&str; 3] = ["node", "netdev", "priority"];

/// Per node rows are made for (and its source), its NICs' priorities.
fn host_layout(cx: &Ctx) -> Vec<(String, Option<SourceId>, Vec<HostRow>)> {
    let st = cx.store;
    let rx = query::groups(st, NIC_PFC_RX_PAUSE, &[], &HG);
    let tx = query::groups(st, NIC_PFC_TX_PAUSE, &[], &HG);
    let frac_rx = query::groups(st, NIC_PFC_RX_PAUSE_DURATION, &[], &HG);
    let frac_tx = query::groups(st, NIC_PFC_TX_PAUSE_DURATION, &[], &HG);
    let nd = ["node", "netdev"];
    let storms = query::groups(st, &nic_counter("tx_pause_storm_warning_events"), &[], &nd);
    let discards = query::groups(st, &nic_counter("rx_discards_phy"), &[], &nd);
    let keys: BTreeSet<Vec<String>> = rx.keys().chain(tx.keys()).cloned().collect();
    let grouped = by_first(keys.iter());
    let mut out = Vec::new();
    for n in cx.nodes() {
        let name = n.name.as_str();
        let mut rows = Vec::new();
        for k in grouped.get(name).into_iter().flatten() {
            let at = |i: usize| k.get(i).map(String::as_str).unwrap_or("");
            let nk = vec![name.to_string(), at(1).to_string()];
            let lbl = [("node", name), ("netdev", at(1)), ("priority", at(2))];
            rows.push(HostRow {
                netdev: at(1).into(),
                priority: at(2).into(),
                rx: rx.get(*k).cloned().unwrap_or_default(),
                tx: tx.get(*k).cloned().unwrap_or_default(),
                frac_rx: frac_rx.get(*k).cloned().unwrap_or_default(),
                frac_tx: frac_tx.get(*k).cloned().unwrap_or_default(),
                // A NIC's counters: every priority row of the netdev shows them.
                storms: storms.get(&nk).cloned().unwrap_or_default(),
                discards: discards.get(&nk).cloned().unwrap_or_default(),
                id: RowId::Netdev {
                    node: name.into(),
                    netdev: at(1).into(),
                    priority: at(2).into(),
                },
                name: format!("{name} {}", at(1)),
                charts: Rc::from(vec![
                    Chart::rate("rx pause frames/s", NIC_PFC_RX_PAUSE, &lbl),
                    Chart::rate("tx pause frames/s", NIC_PFC_TX_PAUSE, &lbl),
                ]),
            });
        }
        out.push((n.name, cx.source_id(&n.source), rows));
    }
    out
}

fn host_rows(cx: &Ctx, lay: &Layout) -> Vec<Row> {
    let mut rows = Vec::with_capacity(lay.hosts.iter().map(|h| h.2.len().max(1)).sum());
    for (g, (name, source, mine)) in lay.hosts.iter().enumerate() {
        let state = cx.src_of(*source);
        if let Some(r) = state.source_row(name, !mine.is_empty(), "pause counters") {
            rows.push(r);
            continue;
        }
        for (ix, h) in mine.iter().enumerate() {
            let head = HostHead::of(cx, h);
            let mut row = cx.pending(
                true,
                &h.id,
                &h.name,
                &h.charts,
                LayoutAt { group: g, item: ix },
            );
            row.tone = state.row_tone();
            row.score = head.pf.unwrap_or(0.0) * 1e6 + per_sec(&head.rx);
            // Selectable like the port rows: the detail view shows its findings and pauses.
            row.notes = cx
                .lossless
                .at_netdev(name, &h.netdev)
                .map(|f| format!("{}: {}", f.link, f.text()))
                .collect();
            rows.push(row);
        }
    }
    cx.arrange_pending(true, &mut rows, |todo| fill(cx, todo));
    rows
}

/// What a host row is ordered by (and shows): its pause share and rx pause rate.
struct HostHead {
    pf: Option<f64>,
    rx: Option<Agg>,
}

impl HostHead {
    fn of(cx: &Ctx, h: &HostRow) -> HostHead {
        let st = cx.store;
        let pf = match (
            query::pause_fraction_of(st, &h.frac_rx),
            query::pause_fraction_of(st, &h.frac_tx),
        ) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        HostHead {
            pf,
            rx: query::rate_if_any(st, &h.rx),
        }
    }
}

/// A host row's cells (its notes are the lossless findings at its NIC, made with the row).
fn host_cells(cx: &Ctx, name: &str, h: &HostRow, row: &mut Row) {
    let st = cx.store;
    let warn_pct = cx.cfg.alerts.pause_time_percent;
    let head = HostHead::of(cx, h);
    let storm = cx.increase_of(&h.storms, cx.base);
    let wrong = !row.notes.is_empty();
    let tx = query::rate_if_any(st, &h.tx);
    let mut c = CellsIn::new(&mut row.cells);
    c.text(name, None);
    c.text(&h.netdev, None);
    marked(&mut c, &h.priority, wrong, false);
    c.push(Cell::new(Val::Rate(head.rx)));
    c.push(Cell::new(Val::Rate(tx)));
    c.push(Cell::warn_if(
        Val::Percent(head.pf),
        head.pf.is_some_and(|p| p * 100.0 > warn_pct),
        Tone::Warn,
    ));
    c.push(Cell::new(Val::Count(cx.increase_of(&h.rx, cx.base))));
    c.push(Cell::warn_if(
        Val::Count(storm),
        storm.unwrap_or(0) > 0,
        Tone::Warn,
    ));
    c.push(Cell::new(Val::Count(cx.increase_of(&h.discards, cx.base))));
}
