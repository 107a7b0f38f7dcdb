//! RoCE settings that must agree between switch and hosts. One function per check, each returning
//! its findings (one sentence each); `CHECKS` lists them, so a new check is one more entry.

use crate::config::Config;
use crate::metrics::{Store, names};

pub type Check = fn(&Config, &Store) -> Vec<String>;

/// Every consistency check, in the order their findings are printed.
pub const CHECKS: &[Check] = &[pfc_priorities, flowcontrol, lifespan];

/// Every finding of every check, sorted, each once.
pub fn findings(cfg: &Config, store: &Store) -> Vec<String> {
    let mut out: Vec<String> = CHECKS.iter().flat_map(|c| c(cfg, store)).collect();
    out.sort();
    out.dedup();
    out
}

/// A priority the switch has PFC on must show pause counters on the NICs behind that port (mlx5
/// prints `rx_prioN_pause` only for priorities with PFC on).
pub fn pfc_priorities(cfg: &Config, store: &Store) -> Vec<String> {
    let mut out = Vec::new();
    // The nodes behind a port by config, else by LLDP.
    let links = crate::app::pairing::Links::of(cfg, store);
    for (_, s) in store.select(names::SW_PFC_ENABLED, &[]) {
        let (Some(port), Some(prio)) = (s.key.label("port"), s.key.label("priority")) else {
            continue;
        };
        let sw = s.key.label("switch").unwrap_or("");
        if !s.latest(store).is_some_and(|(_, v)| v.as_f64() > 0.5) {
            continue;
        }
        for n in links.behind(sw, port) {
            let up = store
                .source_by_name(n)
                .is_some_and(|(_, h)| h.up == Some(true));
            let seen = store
                .select(names::NIC_PFC_RX_PAUSE, &[("node", n), ("priority", prio)])
                .next()
                .is_some();
            if up && !seen {
                out.push(format!(
                    "{port} has PFC on priority {prio}, but {n} shows no rx_prio{prio}_pause counter (PFC off on the host NIC, or a VF)"
                ));
            }
        }
    }
    out
}

/// 802.3x link pause on each switch port as `alerts.flowcontrol` expects.
pub fn flowcontrol(cfg: &Config, store: &Store) -> Vec<String> {
    let Some(want) = &cfg.alerts.flowcontrol else {
        return Vec::new();
    };
    let want_on = want == "on";
    let mut out = Vec::new();
    for (_, s) in store.select(names::SW_FLOWCONTROL_ENABLED, &[]) {
        let on = s.latest(store).is_some_and(|(_, v)| v.as_f64() > 0.5);
        if on != want_on {
            out.push(format!(
                "{} {} 802.3x flowcontrol ({}) is {}, config expects {want}",
                s.key.label("switch").unwrap_or("?"),
                s.key.label("port").unwrap_or("?"),
                s.key.label("direction").unwrap_or("?"),
                if on { "on" } else { "off" }
            ));
        }
    }
    out
}

/// mlx5 caches hw_counters for `lifespan`: a faster poll reads the same values twice.
pub fn lifespan(cfg: &Config, store: &Store) -> Vec<String> {
    let mut out = Vec::new();
    for (_, s) in store.select(names::RDMA_HW_COUNTERS_LIFESPAN, &[]) {
        let lifespan = s.latest(store).map_or(0.0, |(_, v)| v.as_f64());
        if cfg.poll.interval.as_secs_f64() < lifespan {
            out.push(format!(
                "{} {}: poll.interval {:?} is shorter than the hw_counters lifespan {lifespan} s: rates would repeat",
                s.key.label("node").unwrap_or("?"),
                s.key.label("device").unwrap_or("?"),
                cfg.poll.interval
            ));
        }
    }
    out
}
