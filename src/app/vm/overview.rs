//! Overview: one row per node (the congestion loop's rates, host pause, RTT, its state).

use super::{Ctx, LinksCache, sev_rank};
use crate::app::alerts::{Severity, Subject, WINDOW_MS};
use crate::app::source::SrcState;
use crate::app::table::{
    Cell, CellsIn, Chart, ChartKind, Col, LayoutAt, Row, RowId, TabView, Tone, Val, col, lcol,
};
use crate::metrics::names::*;
use crate::metrics::query::{self, Agg};
use crate::metrics::store::{SeriesId, SourceId};
use crate::metrics::{Store, human};
use std::collections::HashMap;
use std::rc::Rc;

/// The node and its state (alerts, down, stale) name where to look: never hidden.
pub const COLS: [Col; 10] = [
    lcol("node", 13, 0),
    lcol("state", 9, 0),
    lcol("port", 8, 3),
    col("ECN marked/s(60s)", 17, 1),
    col("CNP sent/s(60s)", 15, 2),
    col(human::name::CNP_HANDLED, 13, 3),
    col(human::name::NIC_PAUSE_RX, 10, 2),
    col(human::name::PAUSE_TIME, 6, 1),
    col("RTT p50", 8, 3),
    col("RTT p99", 8, 2),
];

/// [`COLS`] with the GPUs' mean and least utilization after the host pause, where any node
/// reports GPUs: are they idle while the fabric pauses?
pub const COLS_GPU: [Col; 12] = [
    lcol("node", 13, 0),
    lcol("state", 9, 0),
    lcol("port", 8, 3),
    col("ECN marked/s(60s)", 17, 1),
    col("CNP sent/s(60s)", 15, 2),
    col(human::name::CNP_HANDLED, 13, 3),
    col(human::name::NIC_PAUSE_RX, 10, 2),
    col(human::name::PAUSE_TIME, 6, 1),
    col(human::name::GPU_UTIL, 5, 1),
    col(human::name::GPU_UTIL_LEAST, 7, 2),
    col("RTT p50", 8, 3),
    col("RTT p99", 8, 2),
];

/// Whether a table of these columns is the one with GPUs (its timeline has their line too).
pub fn has_gpus(cols: &[Col]) -> bool {
    cols.iter().any(|c| c.title == human::name::GPU_UTIL)
}

pub fn view(cx: &Ctx) -> TabView {
    let gpus = cx.layout(|| layout(cx)).gpus;
    TabView {
        cols: if gpus { &COLS_GPU } else { &COLS },
        rows: node_rows(cx),
        ..Default::default()
    }
}

fn state_cell(state: &SrcState, sev: Option<Severity>) -> Cell {
    if let Some(s) = sev.filter(|_| *state == SrcState::Up) {
        let word = if s == Severity::Crit {
            "!! alert"
        } else {
            "! alert"
        };
        return Cell::tone(word, Tone::of(Some(s)));
    }
    let tone = match state {
        SrcState::Up => Tone::Ok,
        SrcState::Stale(_) => Tone::Stale,
        SrcState::Down(..) => Tone::Crit,
        _ => Tone::Dim,
    };
    Cell::tone(state.word(), tone)
}

/// One node's row as the set of series makes it: its source, alert subjects, the series behind
/// each cell and its charts ([`Ctx::layout`]); only the values are read per frame.
struct NodeRow {
    name: String,
    /// The alert subjects the row's state shows: the node's own, and its source's.
    node_subject: Subject,
    source_subject: Subject,
    ecn: Vec<SeriesId>,
    cnp: Vec<SeriesId>,
    hdl: Vec<SeriesId>,
    pause: Vec<SeriesId>,
    /// Pause durations rx and tx: the row shows the largest share of any.
    paused: Vec<SeriesId>,
    /// Its RTT as a peer over verbs and over TCP (verbs shown where it has one).
    rtt: PeerRtt,
    /// Its GPUs' utilization, one series a GPU.
    gpu: Vec<SeriesId>,
    /// Its GPUs' last XID (fleet mode: dcgm-exporter), by GPU number.
    xid: Vec<(String, SeriesId)>,
    id: RowId,
    charts: Rc<[Chart]>,
    /// Its source in the store ([`Ctx::source_id`]).
    src: Option<SourceId>,
}

struct Layout {
    nodes: Vec<NodeRow>,
    /// Some node reports GPUs: the table has their columns.
    gpus: bool,
    /// Per node, its port column and NICs as the config or the links tell them.
    ports: LinksCache<Vec<Cabling>>,
    /// Per node, the netdevs its pause counters name (its NICs as the store knows them), found
    /// in one pass over the series rather than once per node whenever the links change.
    netdevs: HashMap<String, Vec<String>>,
}

/// Where a node is cabled: its port column and its detail's line for each NIC.
struct Cabling {
    column: String,
    nics: Vec<String>,
}

fn layout(cx: &Ctx) -> Layout {
    let st = cx.store;
    let (ecn_n, cnp_n, hdl_n) = (
        rdma_counter("np_ecn_marked_roce_packets"),
        rdma_counter("np_cnp_sent"),
        rdma_counter("rp_cnp_handled"),
    );
    let g = ["node"];
    let by_node = |name: &str| {
        let mut m: HashMap<String, Vec<SeriesId>> = HashMap::new();
        for (k, ids) in query::groups(st, name, &[], &g) {
            m.insert(k.into_iter().next().unwrap_or_default(), ids);
        }
        m
    };
    let (ecn, cnp, hdl, pause) = (
        by_node(&ecn_n),
        by_node(&cnp_n),
        by_node(&hdl_n),
        by_node(NIC_PFC_RX_PAUSE),
    );
    let (rx, tx) = (
        by_node(NIC_PFC_RX_PAUSE_DURATION),
        by_node(NIC_PFC_TX_PAUSE_DURATION),
    );
    let gpu = by_node(GPU_UTILIZATION_PERCENT);
    let ids = |m: &HashMap<String, Vec<SeriesId>>, n: &str| m.get(n).cloned().unwrap_or_default();
    let mut rtt = rtt_by_peer(st);
    let nodes = cx
        .nodes()
        .into_iter()
        .map(|n| {
            let name = n.name.as_str();
            let node = [("node", name)];
            let mut paused = ids(&rx, name);
            paused.extend(ids(&tx, name));
            let mut charts = vec![
                Chart::rate(human::name::ECN_MARKED, &ecn_n, &node),
                Chart::rate(human::name::CNP_SENT, &cnp_n, &node),
                Chart::rate(human::name::CNP_HANDLED, &hdl_n, &node),
                Chart::rate(human::name::NIC_PAUSE_RX, NIC_PFC_RX_PAUSE, &node),
                Chart::rate(
                    "time paused rx (fraction of each second, 0..1)",
                    NIC_PFC_RX_PAUSE_DURATION,
                    &node,
                ),
            ];
            // The node's detail lists its GPUs, one chart each, in nvidia-smi's order.
            charts.extend(
                gpu_numbers(st, name, GPU_UTILIZATION_PERCENT)
                    .iter()
                    .map(|g| {
                        Chart::new(
                            &format!("GPU {g} util %"),
                            GPU_UTILIZATION_PERCENT,
                            &[("gpu", g), ("node", name)],
                            ChartKind::Gauge(1.0),
                        )
                    }),
            );
            // Where the node reports it (dcgm-exporter's profiling): how much of the time its
            // tensor cores worked, which utilization (any kernel running) does not tell.
            charts.extend(
                gpu_numbers(st, name, GPU_TENSOR_ACTIVE_RATIO)
                    .iter()
                    .map(|g| {
                        Chart::new(
                            &format!("GPU {g} tensor active %"),
                            GPU_TENSOR_ACTIVE_RATIO,
                            &[("gpu", g), ("node", name)],
                            ChartKind::Gauge(100.0),
                        )
                    }),
            );
            let mut xid: Vec<(String, SeriesId)> = st
                .select(GPU_LAST_XID, &node)
                .filter_map(|(id, s)| Some((s.key.label("gpu")?.to_string(), id)))
                .collect();
            xid.sort_by(|a, b| crate::app::table::natural_cmp(&a.0, &b.0));
            NodeRow {
                node_subject: Subject::Node(name.into()),
                source_subject: Subject::Source(n.source.as_str().into()),
                ecn: ids(&ecn, name),
                cnp: ids(&cnp, name),
                hdl: ids(&hdl, name),
                pause: ids(&pause, name),
                paused,
                rtt: rtt.remove(name).unwrap_or_default(),
                gpu: ids(&gpu, name),
                xid,
                id: RowId::Node(name.into()),
                charts: Rc::from(charts),
                src: cx.source_id(&n.source),
                name: n.name,
            }
        })
        .collect();
    let mut netdevs: HashMap<String, Vec<String>> = HashMap::new();
    for k in query::groups(st, NIC_PFC_RX_PAUSE, &[], &["node", "netdev"]).into_keys() {
        if let Ok([node, netdev]) = <[String; 2]>::try_from(k) {
            netdevs.entry(node).or_default().push(netdev);
        }
    }
    for v in netdevs.values_mut() {
        v.sort_by(|a, b| crate::app::table::natural_cmp(a, b));
    }
    Layout {
        gpus: !gpu.is_empty(),
        nodes,
        ports: LinksCache::default(),
        netdevs,
    }
}

/// The numbers of a node's GPUs that have series `metric`, in numeric order.
fn gpu_numbers(st: &Store, node: &str, metric: &str) -> Vec<String> {
    let mut v: Vec<String> = query::groups(st, metric, &[("node", node)], &["gpu"])
        .into_keys()
        .filter_map(|k| k.into_iter().next())
        .collect();
    v.sort_by(|a, b| crate::app::table::natural_cmp(a, b));
    v
}

/// The mean and the least of the newest values of `ids` (None where none has one).
fn mean_min(st: &Store, ids: &[SeriesId]) -> (Option<f64>, Option<f64>) {
    let vals: Vec<f64> = ids
        .iter()
        .filter_map(|&id| st.get(id)?.latest(st))
        .map(|(_, v)| v.as_f64())
        .filter(|v| v.is_finite())
        .collect();
    if vals.is_empty() {
        return (None, None);
    }
    let mean = vals.iter().sum::<f64>() / vals.len() as f64;
    let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
    (Some(mean), Some(min))
}

impl Layout {
    /// The port column of every node: the config's, else where LLDP puts it (two NICs on two
    /// leaves: the first and how many more), and its NICs' lines, made again only when the
    /// links are.
    fn ports(&self, cx: &Ctx) -> Rc<Vec<Cabling>> {
        cx.with_links(&self.ports, || {
            let configured: HashMap<&str, &str> = cx
                .cfg
                .nodes
                .iter()
                .filter_map(|n| Some((n.name.as_str(), n.switch_port.as_deref()?)))
                .collect();
            self.nodes
                .iter()
                .map(|n| {
                    let ports = match configured.get(n.name.as_str()) {
                        Some(p) => vec![*p],
                        None => cx.links.ports_of(&n.name),
                    };
                    Cabling {
                        column: port_column(&ports, own_rails(cx, &n.name)),
                        nics: nic_lines(
                            cx,
                            &n.name,
                            self.netdevs.get(&n.name).map_or(&[][..], Vec::as_slice),
                        ),
                    }
                })
                .collect()
        })
    }
}

/// What a node's row is ordered by (and shows): its source's state, its worst alert, its pause
/// share and ECN rate.
struct Head {
    state: SrcState,
    sev: Option<Severity>,
    pf: Option<f64>,
    ecn: Option<Agg>,
}

impl Head {
    fn of(cx: &Ctx, n: &NodeRow) -> Head {
        let sev = cx
            .alerts
            .worst_for(&n.node_subject)
            .max(cx.alerts.worst_for(&n.source_subject));
        Head {
            state: cx.src_of(n.src),
            sev,
            pf: query::pause_fraction_of(cx.store, &n.paused),
            ecn: query::rate_if_any(cx.store, &n.ecn),
        }
    }
}

/// One row per node, sorted and filtered; the cells only of rows drawn or read ([`fill`]).
fn node_rows(cx: &Ctx) -> Vec<Row> {
    let lay = cx.layout(|| layout(cx));
    let mut rows: Vec<Row> = Vec::with_capacity(lay.nodes.len());
    for (ix, n) in lay.nodes.iter().enumerate() {
        let h = Head::of(cx, n);
        let mut row = cx.pending(
            false,
            &n.id,
            &n.name,
            &n.charts,
            LayoutAt { group: 0, item: ix },
        );
        row.tone = h.state.row_tone();
        row.score = sev_rank(h.sev) * 1e9
            + h.pf.unwrap_or(0.0) * 1e6
            + h.ecn.and_then(|a| a.rate).unwrap_or(0.0);
        row.span = h.state.span(&n.name).map(|c| (2, c));
        rows.push(row);
    }
    cx.arrange_pending(false, &mut rows, |todo| fill(cx, todo));
    rows
}

/// The cells of node rows made pending by [`node_rows`].
pub fn fill(cx: &Ctx, rows: &mut dyn Iterator<Item = &mut Row>) {
    let st = cx.store;
    let last_min = cx.now - WINDOW_MS;
    let lay = cx.layout(|| layout(cx));
    let ports = lay.ports(cx);
    let warn_pct = cx.cfg.alerts.pause_time_percent;
    for row in rows {
        let Some(LayoutAt { item: ix, .. }) = row.pending.take() else {
            continue;
        };
        let (n, cabling) = (&lay.nodes[ix], &ports[ix]);
        let port = &cabling.column;
        let h = Head::of(cx, n);
        let rtt = |of: fn(&RttQuantiles) -> &Vec<SeriesId>| {
            query::latest_of(st, of(&n.rtt.rdma)).or_else(|| query::latest_of(st, of(&n.rtt.tcp)))
        };
        let (p50, p99) = (rtt(|q| &q.p50), rtt(|q| &q.p99));
        let mut c = CellsIn::new(&mut row.cells);
        c.text(&n.name, None);
        c.push(state_cell(&h.state, h.sev));
        c.text(port, None);
        c.push(Cell::new(Val::Sparse(
            h.ecn,
            cx.increase_of(&n.ecn, last_min),
        )));
        c.push(Cell::new(Val::Sparse(
            query::rate_if_any(st, &n.cnp),
            cx.increase_of(&n.cnp, last_min),
        )));
        c.push(Cell::new(Val::Rate(query::rate_if_any(st, &n.hdl))));
        c.push(Cell::new(Val::Rate(query::rate_if_any(st, &n.pause))));
        c.push(Cell::warn_if(
            Val::Percent(h.pf),
            h.pf.is_some_and(|p| p * 100.0 > warn_pct),
            Tone::Warn,
        ));
        if lay.gpus {
            // Percent to the fraction `Percent` cells show.
            let (mean, min) = mean_min(st, &n.gpu);
            c.push(Cell::new(Val::Percent(mean.map(|p| p / 100.0))));
            c.push(Cell::new(Val::Percent(min.map(|p| p / 100.0))));
        }
        c.push(Cell::new(Val::Secs(p50)));
        c.push(Cell::new(Val::Secs(p99)));
        row.notes = xid_notes(st, &n.xid);
        row.facts.clone_from(&cabling.nics);
    }
}

/// The detail's lines for GPUs whose last XID is an error (`last XID 79 on GPU 2: fallen off
/// the bus`), in GPU order.
fn xid_notes(st: &Store, xids: &[(String, SeriesId)]) -> Vec<String> {
    use crate::parse::host::gpu::xid;
    xids.iter()
        .filter_map(|(gpu, id)| {
            let (_, v) = st.get(*id)?.latest(st)?;
            Some(format!(
                "last {}",
                xid::describe(xid::code(v.as_f64())?, gpu)
            ))
        })
        .collect()
}

/// `Ethernet1/2/2` → `Eth1/2/2` (the port column is narrow).
fn short_port(p: &str) -> String {
    p.strip_prefix("Ethernet")
        .map_or_else(|| p.to_string(), |r| format!("Eth{r}"))
}

/// The port column of a node on `ports`: the one port, shortened; for several, how many and
/// whether each is on a rail of its own (`2 rails`, else `2 ports`): two port names do not fit
/// the column, and the detail (Enter) lists them all. `-` for none known.
fn port_column(ports: &[&str], own_rails: bool) -> String {
    match ports {
        [] => "-".into(),
        [one] => short_port(one),
        more if own_rails => format!("{} rails", more.len()),
        more => format!("{} ports", more.len()),
    }
}

/// Each of `node`'s NICs is on a rail and no two on the same.
fn own_rails(cx: &Ctx, node: &str) -> bool {
    let rails: Vec<_> = (cx.fabric.of_host(node))
        .map(|l| cx.fabric.rail_of(&l.b.device.name))
        .collect();
    let distinct: std::collections::BTreeSet<_> = rails.iter().collect();
    rails.iter().all(Option::is_some) && distinct.len() == rails.len()
}

/// A node's detail line for each NIC: `ens1f0np0 → leaf1 Ethernet1/3 (rail 1)`, from the fabric
/// graph; a NIC the store counts but no link places says "switch unknown", as does a node with
/// no NIC known at all. Netdevs and ports are LLDP's (remote text): made safe here.
fn nic_lines(cx: &Ctx, node: &str, counted: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut placed: Vec<&str> = Vec::new();
    for l in cx.fabric.of_host(node) {
        let (nic, sw) = (&l.a, &l.b);
        let rail = cx
            .fabric
            .rail_of(&sw.device.name)
            .map_or(String::new(), |r| format!(" ({r})"));
        let netdev = if nic.port.is_empty() {
            "NIC"
        } else {
            &nic.port
        };
        out.push(format!(
            "{} → {} {}{rail}",
            crate::safe::line(netdev),
            crate::safe::line(&sw.device.name),
            crate::safe::line(&sw.port),
        ));
        placed.push(&nic.port);
    }
    // A config `switch_port` names no netdev: then which NIC it is is not known either.
    let unplaced =
        (counted.iter()).filter(|d| !placed.contains(&d.as_str()) && !placed.contains(&""));
    for d in unplaced {
        out.push(format!("{} → switch unknown", crate::safe::line(d)));
    }
    if out.is_empty() {
        out.push("NICs → switch unknown (no LLDP neighbour or switch_port names one)".into());
    }
    out
}

/// Per peer, its RTT series: [verbs, TCP] × [p50, p99].
/// A peer's RTT series: its p50 and p99 over one transport.
#[derive(Default)]
struct RttQuantiles {
    p50: Vec<SeriesId>,
    p99: Vec<SeriesId>,
}

/// A peer's RTT series over verbs and over TCP.
#[derive(Default)]
struct PeerRtt {
    rdma: RttQuantiles,
    tcp: RttQuantiles,
}

fn rtt_by_peer(st: &Store) -> HashMap<String, PeerRtt> {
    let g = query::groups(
        st,
        PING_RTT_SECONDS,
        &[],
        &["peer", "transport", "quantile"],
    );
    let mut out: HashMap<String, PeerRtt> = HashMap::new();
    for (k, ids) in g {
        let [peer, transport, quantile] = k.as_slice() else {
            continue;
        };
        let peer = out.entry(peer.clone()).or_default();
        let over = match transport.as_str() {
            "rdma" => &mut peer.rdma,
            "tcp" => &mut peer.tcp,
            _ => continue,
        };
        match quantile.as_str() {
            "0.5" => over.p50 = ids,
            "0.99" => over.p99 = ids,
            _ => continue,
        }
    }
    out
}
