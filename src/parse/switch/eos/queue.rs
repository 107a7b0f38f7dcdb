//! `show interfaces counters queue [detail|drops] | json`. EOS releases and ASIC families nest the
//! same leaves differently (`egressQueueCounters.interfaces.{intf}.ucastQueues.trafficClasses.{TC}`,
//! `ingressVoqCounters.interfaces.{intf}.trafficClasses.{TC}`,
//! `interfaces.{intf}.trafficClasses.{TC}.egressQueueCounters.countersSum`), so the tree is walked:
//! the interface, traffic class and direction come from the keys on the way down, and the leaves
//! `enqueuedPackets/Bytes`, `droppedPackets/Bytes` are summed over unicast/multicast and drop
//! precedences (only `countersSum` where the device gives one).

use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample};
use crate::parse::switch::common::{Acc, jtake};
use crate::parse::switch::normalize_port;
use serde_json::Value;

#[derive(Clone, Copy, PartialEq)]
enum Dir {
    Egress,
    Ingress,
}

#[derive(Clone, Default)]
struct Ctx {
    port: Option<String>,
    tc: Option<String>,
    dir: Option<Dir>,
}

fn is_tc(k: &str) -> bool {
    k.strip_prefix("TC")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn is_intf(k: &str) -> bool {
    let n = normalize_port(k);
    (n.starts_with("Ethernet") || n.starts_with("port-channel"))
        && k.chars().any(|c| c.is_ascii_digit())
}

fn walk(v: &Value, ctx: &Ctx, sw: &str, acc: &mut Acc, hits: &mut usize, p: &mut Parsed) {
    let Value::Object(m) = v else { return };
    if let Some(sum) = m.get("countersSum") {
        return walk(sum, ctx, sw, acc, hits, p);
    }
    for (k, child) in m {
        let mut c = ctx.clone();
        match k.as_str() {
            "egressQueueCounters" => c.dir = Some(Dir::Egress),
            "ingressVoqCounters" => c.dir = Some(Dir::Ingress),
            _ if is_tc(k) => c.tc = Some(k.clone()),
            _ if is_intf(k) => c.port = Some(normalize_port(k)),
            _ => {}
        }
        if child.is_object() {
            walk(child, &c, sw, acc, hits, p);
            continue;
        }
        let (Some(port), Some(tc)) = (ctx.port.as_deref(), ctx.tc.as_deref()) else {
            continue;
        };
        if !matches!(
            k.as_str(),
            "enqueuedPackets" | "enqueuedBytes" | "droppedPackets" | "droppedBytes"
        ) {
            continue;
        }
        let Some(n) = jtake(p, || format!("{port} {tc} {k}"), child) else {
            continue;
        };
        let base = [("switch", sw), ("port", port), ("queue", tc)];
        let s = match (ctx.dir.unwrap_or(Dir::Egress), k.as_str()) {
            (Dir::Egress, "enqueuedPackets") => Sample::counter(SW_QUEUE_TX_PACKETS, &base, n),
            (Dir::Egress, "enqueuedBytes") => Sample::counter(SW_QUEUE_TX_BYTES, &base, n),
            (Dir::Egress, "droppedPackets") => Sample::counter(
                SW_QUEUE_DROPPED,
                &[base[0], base[1], base[2], ("reason", "drop")],
                n,
            ),
            (Dir::Egress, "droppedBytes") => Sample::counter(
                SW_QUEUE_DROPPED_BYTES,
                &[base[0], base[1], base[2], ("reason", "drop")],
                n,
            ),
            (Dir::Ingress, "droppedPackets") => Sample::counter(
                SW_INGRESS_DROPPED,
                &[base[0], base[1], base[2], ("reason", "voq")],
                n,
            ),
            (Dir::Ingress, "droppedBytes") => Sample::counter(
                SW_INGRESS_DROPPED_BYTES,
                &[base[0], base[1], base[2], ("reason", "voq")],
                n,
            ),
            _ => continue,
        };
        *hits += 1;
        acc.add(s);
    }
}

pub fn parse(v: &Value, sw: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut acc = Acc::default();
    let mut hits = 0;
    walk(v, &Ctx::default(), sw, &mut acc, &mut hits, &mut p);
    if hits == 0 {
        p.unknown("JSON without per-interface traffic-class queue counters");
    }
    acc.into_parsed(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Value as V;

    #[test]
    fn shapes() {
        let v: Value = serde_json::from_str(
            r#"{"egressQueueCounters":{"interfaces":{"Ethernet1":{
                "ucastQueues":{"trafficClasses":{"TC3":{"dropPrecedences":{"DP0":{"enqueuedPackets":5,"droppedPackets":"1"}}}}},
                "mcastQueues":{"trafficClasses":{"TC3":{"dropPrecedences":{"DP0":{"enqueuedPackets":2}}}}}}}},
              "ingressVoqCounters":{"interfaces":{"Ethernet1":{"trafficClasses":{"TC3":{"droppedPackets":9}}}}}}"#,
        )
        .unwrap_or_default();
        let p = parse(&v, "a");
        assert_eq!(
            p.find(SW_QUEUE_TX_PACKETS, &[("queue", "TC3")]),
            Some(V::Counter(7))
        );
        assert_eq!(
            p.find(SW_QUEUE_DROPPED, &[("reason", "drop")]),
            Some(V::Counter(1))
        );
        assert_eq!(
            p.find(SW_INGRESS_DROPPED, &[("reason", "voq")]),
            Some(V::Counter(9))
        );
        let anta: Value = serde_json::from_str(
            r#"{"interfaces":{"Ethernet3/1":{"trafficClasses":{"TC1":{
                "egressQueueCounters":{"countersSum":{"droppedPackets":4},"dropPrecedences":{"DP0":{"droppedPackets":4}}},
                "ingressVoqCounters":{"countersSum":{"droppedPackets":0}}}}}}}"#,
        )
        .unwrap_or_default();
        let p = parse(&anta, "a");
        assert_eq!(
            p.find(SW_QUEUE_DROPPED, &[("port", "Ethernet3/1")]),
            Some(V::Counter(4))
        );
        assert_eq!(p.find(SW_INGRESS_DROPPED, &[]), Some(V::Counter(0)));
    }
}
