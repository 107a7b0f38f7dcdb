//! Queues: one row per switch port, its lossless class with the other classes folded under it,
//! with the nodes behind the port.

use super::{Ctx, LinksCache};
use crate::app::alerts::{ROCE_PRIORITY, Subject, WINDOW_MS};
use crate::app::source::SrcState;
use crate::app::table::group::{self, Sums};
use crate::app::table::{Cell, CellsIn, Chart, Col, Row, RowId, TabView, Tone, Val, col, lcol};
use crate::metrics::names::*;
use crate::metrics::query::{self, Agg};
use crate::metrics::store::SeriesId;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

/// Ingress drops (MMU/overflow) name the culprit: never hidden. A port's row is its lossless
/// class; "port drops" are the whole port's, every class's.
pub const COLS: [Col; 11] = [
    lcol("port", 14, 0),
    lcol("nodes behind", 16, 1),
    lcol("QoS", 7, 0),
    col("Tx pkts/s", 10, 2),
    col("Tx Gb/s", 8, 3),
    col("ECN/s", 7, 2),
    col("Q drops/s(60s)", 14, 1),
    col("port drops(60s)", 15, 2),
    col("ingr drops/s", 12, 0),
    col("depth", 8, 3),
    col("drops total", 11, 2),
];

/// Where [`COLS`]' numbers start, and the one a summary line does not add up.
const FIRST_NUMBER_COL: usize = 3;
const DEPTH_COL: usize = 9;

const G: [&str; 4] = ["switch", "port", "qos_group", "queue"];

/// One queue's series (a QoS group or an egress queue of a port).
#[derive(Default)]
struct Series {
    tx: Vec<SeriesId>,
    tx_bytes: Vec<SeriesId>,
    ecn: Vec<SeriesId>,
    drops: Vec<SeriesId>,
    depth: Vec<SeriesId>,
}

/// One switch port's row: its lossless class, with the port's other classes folded under it (a
/// port whose classes name no lossless one has a row per class, none folded).
struct QueueRow {
    switch: String,
    port: String,
    qos: String,
    own: Series,
    /// The folded classes' names.
    folded: Vec<String>,
    /// The port's drops, every class's: the switch's own port total (class `all`) where it
    /// reports one, else the classes summed. A drop in a lossy class is still a drop.
    port_drops: Vec<SeriesId>,
    /// The port's ingress drops.
    ingress: Vec<SeriesId>,
    subject: Subject,
    id: RowId,
    charts: Rc<[Chart]>,
    /// Where its [`Named`] is.
    ix: usize,
}

/// The class RoCE traffic is in: the unicast class numbered as the RoCE priority (qos-group 3
/// on NX-OS, TC3 on EOS, UC3 on SONiC, as the lossless profiles all number it). A multicast
/// queue (SONiC's MC3) is not it.
fn is_lossless(class: &str) -> bool {
    let digits = class.trim_start_matches(|c: char| !c.is_ascii_digit());
    digits == ROCE_PRIORITY && !class.to_ascii_uppercase().starts_with("MC")
}

/// What a queue row takes from the links: the nodes behind its port, and its name (for sorting
/// and the filter) that names its switch and them.
struct Named {
    behind: String,
    name: String,
}

/// Per switch, its queues' rows in the order they are made ([`Ctx::layout`]), and what the
/// links say of each.
struct Layout {
    queues: HashMap<String, Vec<QueueRow>>,
    named: LinksCache<Vec<Named>>,
}

impl Layout {
    fn named(&self, cx: &Ctx) -> Rc<Vec<Named>> {
        cx.behind_each(
            &self.named,
            &self.queues,
            |q| (q.ix, q.port.as_str()),
            |q, behind| Named {
                behind: crate::app::table::short_names(&behind.names),
                name: format!(
                    "{} {} {} {}",
                    q.switch,
                    q.port,
                    q.qos,
                    behind.names.join(" ")
                ),
            },
        )
    }
}

/// One class of a port as the series name it: its name, the label that names it, its series.
struct Class {
    name: String,
    label: &'static str,
    series: Series,
}

/// A row's classes: the one it shows and those folded under it.
struct Shown {
    class: Class,
    folded: Vec<Class>,
}

fn layout(cx: &Ctx) -> Layout {
    let st = cx.store;
    let mut tx = query::groups(st, SW_QUEUE_TX_PACKETS, &[], &G);
    let mut txb = query::groups(st, SW_QUEUE_TX_BYTES, &[], &G);
    let mut ecn = query::groups(st, SW_QUEUE_ECN_MARKED, &[], &G);
    let mut drops = query::groups(st, SW_QUEUE_DROPPED, &[], &G);
    let mut depth = query::groups(st, SW_QUEUE_DEPTH, &[], &G);
    let mut ingr = query::groups(st, SW_INGRESS_DROPPED, &[], &["switch", "port"]);
    let keys: BTreeSet<Vec<String>> = tx
        .keys()
        .chain(drops.keys())
        .chain(txb.keys())
        .cloned()
        .collect();
    // Per switch port, its classes in key order.
    let mut ports: BTreeMap<(String, String), Vec<Class>> = BTreeMap::new();
    for k in keys {
        let at = |i: usize| k.get(i).cloned().unwrap_or_default();
        let (label, class) = if at(2).is_empty() {
            ("queue", at(3))
        } else {
            ("qos_group", at(2))
        };
        let take = |m: &mut BTreeMap<Vec<String>, Vec<SeriesId>>| m.remove(&k).unwrap_or_default();
        let series = Series {
            tx: take(&mut tx),
            tx_bytes: take(&mut txb),
            ecn: take(&mut ecn),
            drops: take(&mut drops),
            depth: take(&mut depth),
        };
        ports.entry((at(0), at(1))).or_default().push(Class {
            name: class,
            label,
            series,
        });
    }
    let mut out: HashMap<String, Vec<QueueRow>> = HashMap::new();
    let mut ix = 0;
    for ((switch, port), mut classes) in ports {
        let ingress = ingr
            .remove(&vec![switch.clone(), port.clone()])
            .unwrap_or_default();
        let port_drops: Vec<SeriesId> = match classes.iter().find(|c| c.name == "all") {
            Some(all) => all.series.drops.clone(),
            None => (classes.iter())
                .flat_map(|c| c.series.drops.iter().copied())
                .collect(),
        };
        // The lossless class makes the row and the others fold under it; without one, each
        // class is a row of its own.
        let rows: Vec<Shown> = match classes.iter().position(|c| is_lossless(&c.name)) {
            Some(i) => {
                let class = classes.remove(i);
                vec![Shown {
                    class,
                    folded: classes,
                }]
            }
            None => (classes.into_iter())
                .map(|class| Shown {
                    class,
                    folded: Vec::new(),
                })
                .collect(),
        };
        for Shown { class, folded } in rows {
            let (qos, label, own) = (class.name, class.label, class.series);
            let lbl = [
                ("switch", switch.as_str()),
                ("port", port.as_str()),
                (label, qos.as_str()),
            ];
            let shown = if folded.is_empty() {
                qos.clone()
            } else {
                format!("{qos} +{}", folded.len())
            };
            let row = QueueRow {
                switch: switch.clone(),
                port: port.clone(),
                qos: shown,
                own,
                port_drops: port_drops.clone(),
                folded: folded.into_iter().map(|c| c.name).collect(),
                ingress: ingress.clone(),
                subject: Subject::Port {
                    switch: switch.clone(),
                    port: port.clone(),
                },
                ix,
                id: RowId::Queue {
                    switch: switch.clone(),
                    port: port.clone(),
                    queue: qos.clone(),
                },
                charts: Rc::from(vec![
                    Chart::rate("Tx packets/s", SW_QUEUE_TX_PACKETS, &lbl),
                    Chart::rate("queue drops/s", SW_QUEUE_DROPPED, &lbl),
                    Chart::rate("ingress drops/s (port)", SW_INGRESS_DROPPED, &lbl[..2]),
                ]),
            };
            ix += 1;
            out.entry(switch.clone()).or_default().push(row);
        }
    }
    Layout {
        queues: out,
        named: LinksCache::default(),
    }
}

pub fn view(cx: &Ctx) -> TabView {
    let st = cx.store;
    let last_min = cx.now - WINDOW_MS;
    let lay = cx.layout(|| layout(cx));
    let named = lay.named(cx);
    let rate = |ids: &[SeriesId]| query::rate_if_any(st, ids);
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    let mut sums: HashMap<&str, Sums> = HashMap::new();
    for sw in &cx.cfg.switches {
        let name = sw.name.as_str();
        let state = cx.src(name);
        let mine: &[QueueRow] = lay.queues.get(name).map_or(&[], Vec::as_slice);
        if let Some(r) = state.source_row(name, !mine.is_empty(), "queue counters") {
            rows.push(r);
            continue;
        }
        if let SrcState::Stale(ms) = state {
            notes.push(format!("{name} stale {}", crate::app::source::age_text(ms)));
        }
        for q in mine {
            let n60 = cx.increase_of(&q.own.drops, last_min);
            let o60 = cx.increase_of(&q.port_drops, last_min);
            let i60 = cx.increase_of(&q.ingress, last_min);
            let sev = cx.alerts.worst_for(&q.subject);
            let gbps = rate(&q.own.tx_bytes).map(|a| Agg {
                rate: a.rate.map(|r| r * 8.0 / 1e9),
                reset: a.reset,
            });
            let total = cx.increase_of(&q.port_drops, cx.base);
            let tx = rate(&q.own.tx);
            let nm = &named[q.ix];
            let mut row = cx.reused(false, &q.id, &nm.name, &q.charts);
            {
                let mut c = CellsIn::new(&mut row.cells);
                c.text(&q.port, Some(Tone::of(sev)));
                c.text(&nm.behind, None);
                c.text(&q.qos, None);
                c.push(Cell::new(Val::Rate(tx)));
                c.push(Cell::new(Val::Rate(gbps)));
                c.push(Cell::new(Val::Rate(rate(&q.own.ecn))));
                c.push(Cell::crit_if(
                    Val::Sparse(rate(&q.own.drops), n60),
                    n60.unwrap_or(0) > 0,
                ));
                c.push(Cell::crit_if(
                    Val::Sparse(rate(&q.port_drops), o60),
                    o60.unwrap_or(0) > 0,
                ));
                c.push(Cell::crit_if(
                    Val::Sparse(rate(&q.ingress), i60),
                    i60.unwrap_or(0) > 0,
                ));
                c.push(Cell::new(Val::Num(query::latest_of(st, &q.own.depth))));
                c.push(Cell::crit_if(Val::Count(total), total.unwrap_or(0) > 0));
            }
            row.tone = state.row_tone();
            row.facts.clear();
            if !q.folded.is_empty() {
                row.facts.push(format!(
                    "classes folded under {}: {} (their drops count in \"port drops\")",
                    q.qos,
                    q.folded.join(", ")
                ));
            }
            row.score = (o60.unwrap_or(0) + i60.unwrap_or(0)) as f64 * 1e9
                + tx.and_then(|a| a.rate).unwrap_or(0.0);
            sums.entry(name).or_default().add(&row.cells);
            rows.push(row);
        }
    }
    cx.arrange(false, &mut rows);
    if cx.cfg.switches.len() > 1 {
        rows = group::by_switch(rows, |sw, _| head(cx, sw, lay.queues.get(sw), sums.get(sw)));
    }
    TabView {
        cols: &COLS,
        rows,
        notes,
        ..Default::default()
    }
}

/// A switch's summary line: its ports, and its rows' rates and drops summed.
fn head(cx: &Ctx, sw: &str, queues: Option<&Vec<QueueRow>>, sums: Option<&Sums>) -> Row {
    let ports: BTreeSet<&str> = queues
        .into_iter()
        .flatten()
        .map(|q| q.port.as_str())
        .collect();
    let id = RowId::Switch(sw.to_string());
    let mut row = cx.reused(false, &id, sw, &Rc::from(Vec::new()));
    {
        let mut c = CellsIn::new(&mut row.cells);
        c.text(sw, Some(Tone::Accent));
        c.text_fmt(format_args!("{} ports", ports.len()), Some(Tone::Dim));
        c.text("", None);
        let none = Sums::default();
        let sums = sums.unwrap_or(&none);
        // Tx, Gb/s and ECN add up across ports; drops too; a queue depth does not.
        for i in FIRST_NUMBER_COL..COLS.len() {
            let v = if i == DEPTH_COL {
                Val::default()
            } else {
                sums.get(i)
            };
            c.push(Cell::new(v));
        }
    }
    row
}
