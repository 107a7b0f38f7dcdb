//! Queues: one row per switch port × QoS group (or queue), with the nodes behind the port.

use super::{Ctx, LinksCache};
use crate::app::alerts::{Subject, WINDOW_MS};
use crate::app::source::SrcState;
use crate::app::table::{Cell, CellsIn, Chart, Col, RowId, TabView, Tone, Val, col, lcol};
use crate::metrics::names::*;
use crate::metrics::query::{self, Agg};
use crate::metrics::store::SeriesId;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::rc::Rc;

/// Ingress drops (MMU/overflow) name the culprit: never hidden.
pub const COLS: [Col; 10] = [
    lcol("port", 14, 0),
    lcol("nodes behind", 16, 1),
    lcol("QoS", 7, 0),
    col("Tx pkts/s", 10, 2),
    col("Tx Gb/s", 8, 3),
    col("ECN/s", 7, 2),
    col("Q drops/s(60s)", 14, 1),
    col("ingr drops/s", 12, 0),
    col("depth", 8, 3),
    col("drops total", 11, 2),
];

const G: [&str; 4] = ["switch", "port", "qos_group", "queue"];

/// One port queue's row as the set of series makes it.
struct QueueRow {
    port: String,
    qos: String,
    tx: Vec<SeriesId>,
    tx_bytes: Vec<SeriesId>,
    ecn: Vec<SeriesId>,
    drops: Vec<SeriesId>,
    depth: Vec<SeriesId>,
    /// The port's ingress drops (every queue row of the port shows them).
    ingress: Vec<SeriesId>,
    subject: Subject,
    id: RowId,
    charts: Rc<[Chart]>,
    /// Where its [`Named`] is.
    ix: usize,
}

/// What a queue row takes from the links: the nodes behind its port, and its name (for sorting
/// and the filter) that names them.
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
                behind: crate::app::table::short_names(behind),
                name: format!("{} {} {}", q.port, q.qos, behind.join(" ")),
            },
        )
    }
}

fn layout(cx: &Ctx) -> Layout {
    let st = cx.store;
    let tx = query::groups(st, SW_QUEUE_TX_PACKETS, &[], &G);
    let txb = query::groups(st, SW_QUEUE_TX_BYTES, &[], &G);
    let ecn = query::groups(st, SW_QUEUE_ECN_MARKED, &[], &G);
    let drops = query::groups(st, SW_QUEUE_DROPPED, &[], &G);
    let depth = query::groups(st, SW_QUEUE_DEPTH, &[], &G);
    let ingr = query::groups(st, SW_INGRESS_DROPPED, &[], &["switch", "port"]);
    let keys: BTreeSet<&Vec<String>> = tx.keys().chain(drops.keys()).chain(txb.keys()).collect();
    let ids = |m: &BTreeMap<Vec<String>, Vec<SeriesId>>, k: &Vec<String>| {
        m.get(k).cloned().unwrap_or_default()
    };
    let mut out: HashMap<String, Vec<QueueRow>> = HashMap::new();
    for (n, k) in keys.into_iter().enumerate() {
        let at = |i: usize| k.get(i).map(String::as_str).unwrap_or("");
        let (name, port, qos) = (at(0), at(1), if at(2).is_empty() { at(3) } else { at(2) });
        let pk = vec![name.to_string(), port.to_string()];
        let mut lbl: Vec<(&'static str, &str)> = vec![("switch", name), ("port", port)];
        if !at(2).is_empty() {
            lbl.push(("qos_group", at(2)));
        } else if !at(3).is_empty() {
            lbl.push(("queue", at(3)));
        }
        let row = QueueRow {
            port: port.into(),
            qos: qos.into(),
            tx: ids(&tx, k),
            tx_bytes: ids(&txb, k),
            ecn: ids(&ecn, k),
            drops: ids(&drops, k),
            depth: ids(&depth, k),
            ingress: ids(&ingr, &pk),
            subject: Subject::Port {
                switch: name.into(),
                port: port.into(),
            },
            ix: n,
            id: RowId::Queue {
                switch: name.into(),
                port: port.into(),
                queue: qos.into(),
            },
            charts: Rc::from(vec![
                Chart::rate("Tx packets/s", SW_QUEUE_TX_PACKETS, &lbl),
                Chart::rate("queue drops/s", SW_QUEUE_DROPPED, &lbl),
                Chart::rate("ingress drops/s (port)", SW_INGRESS_DROPPED, &lbl[..2]),
            ]),
        };
        out.entry(name.to_string()).or_default().push(row);
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
            let n60 = cx.increase_of(&q.drops, last_min);
            let i60 = cx.increase_of(&q.ingress, last_min);
            let sev = cx.alerts.worst_for(&q.subject);
            let gbps = rate(&q.tx_bytes).map(|a| Agg {
                rate: a.rate.map(|r| r * 8.0 / 1e9),
                reset: a.reset,
            });
            let total = cx.increase_of(&q.drops, cx.base);
            let tx = rate(&q.tx);
            let nm = &named[q.ix];
            let mut row = cx.reused(false, &q.id, &nm.name, &q.charts);
            {
                let mut c = CellsIn::new(&mut row.cells);
                c.text(&q.port, Some(Tone::of(sev)));
                c.text(&nm.behind, None);
                c.text(&q.qos, None);
                c.push(Cell::new(Val::Rate(tx)));
                c.push(Cell::new(Val::Rate(gbps)));
                c.push(Cell::new(Val::Rate(rate(&q.ecn))));
                c.push(Cell::crit_if(
                    Val::Sparse(rate(&q.drops), n60),
                    n60.unwrap_or(0) > 0,
                ));
                c.push(Cell::crit_if(
                    Val::Sparse(rate(&q.ingress), i60),
                    i60.unwrap_or(0) > 0,
                ));
                c.push(Cell::new(Val::Num(query::latest_of(st, &q.depth))));
                c.push(Cell::crit_if(Val::Count(total), total.unwrap_or(0) > 0));
            }
            row.tone = state.row_tone();
            row.score = (n60.unwrap_or(0) + i60.unwrap_or(0)) as f64 * 1e9
                + tx.and_then(|a| a.rate).unwrap_or(0.0);
            rows.push(row);
        }
    }
    cx.arrange(false, &mut rows);
    TabView {
        cols: &COLS,
        rows,
        notes,
        ..Default::default()
    }
}
