//! Good outputs of every parse kind (the demo's and real fixtures), and a source and store to put
//! them through, for the fault suite.
#![allow(dead_code)]

use rocetop::collect::poll::{Collected, parse_outputs, poll_once};
use rocetop::collect::source::{Source, SourceKind, Unavailable, build};
use rocetop::collect::transport::CollectError;
use rocetop::config::Config;
use rocetop::metrics::Store;
use rocetop::metrics::store::SourceId;
use rocetop::parse::{Ctx, ParseKind};
use std::sync::Arc;
use std::time::Duration;

pub fn fixture(rel: &str) -> String {
    let path = format!("{}/tests/fixtures/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A source of `kind` named "s" (its transport is never used: outputs are given).
pub fn source(kind: ParseKind) -> Source {
    let sk = match kind {
        ParseKind::HwCounters | ParseKind::Ethtool | ParseKind::RdmaStatistic => SourceKind::Node,
        ParseKind::TrainingLog => SourceKind::Log,
        ParseKind::Ping => SourceKind::Ping,
        _ => SourceKind::Switch,
    };
    Source {
        id: SourceId(0),
        name: "s".into(),
        kind: sk,
        interval: Duration::from_secs(1),
        timeout: Duration::from_secs(1),
        transport: Arc::new(Unavailable("test".into())),
        probes: Vec::new(),
        ctx: Ctx {
            name: "s".into(),
            log: "/train.log".into(),
        },
        ports: Vec::new(),
        discovery: None,
        format_regex: None,
        // Every counter: the parsers' whole output is what is checked.
        nic_counters: Vec::new(),
        nic_memo: Default::default(),
    }
}

/// A successful poll (the command answered) with this output, as `poll_once` builds it.
pub fn poll(kind: ParseKind, text: &str, at: i64) -> Collected {
    let raw = vec![(kind, text.to_string())];
    Collected {
        source: SourceId(0),
        at,
        parsed: parse_outputs(&source(kind), &raw),
        raw: Some(raw),
        error: None,
        history: Default::default(),
    }
}

/// A store holding that one source, as SourceId(0).
pub fn store_with(kind: ParseKind) -> Store {
    let mut st = Store::new(600_000, 1000);
    st.add_source(&source(kind).name, 1000);
    st
}

pub const EOS_QUEUE: &str = r#"{"egressQueueCounters":{"interfaces":{"Ethernet1":{
 "ucastQueues":{"trafficClasses":{"TC3":{"dropPrecedences":{"DP0":{"enqueuedPackets":51234,"droppedPackets":"10001"}}}}},
 "mcastQueues":{"trafficClasses":{"TC3":{"dropPrecedences":{"DP0":{"enqueuedPackets":20002}}}}}}}},
 "ingressVoqCounters":{"interfaces":{"Ethernet1":{"trafficClasses":{"TC3":{"droppedPackets":90009}}}}}}"#;

pub const EOS_INTERFACE: &str = "Ethernet1 is up, line protocol is up (connected)\n  Hardware is Ethernet, address is 001c.7300.0001\n  \
    5 minutes input rate 0 bps (0.0% with framing overhead), 0 packets/sec\n     \
    123456 packets input, 1234567 bytes\n     Received 1 broadcasts, 123 multicast\n     \
    30003 input errors, 0 CRC, 0 alignment, 0 symbol, 0 input discards\n     70007 PAUSE input\n     \
    23456 packets output, 234567 bytes\n     0 output errors, 0 collisions\n     90009 PAUSE output\n";

/// One good output per parse kind, in `ParseKind` order: what the demo cluster answers where it
/// speaks the kind, real captured outputs for the rest.
pub async fn good_outputs() -> Vec<(ParseKind, String)> {
    let cfg = Config::reference();
    let mut store = Store::new(60_000, 100);
    let none: rocetop::collect::source::RemoteFactory<'_> =
        &|_, _| Err(CollectError::Unavailable("demo".into()));
    let sources = build(&cfg, &mut store, none);
    let mut demo: Vec<(ParseKind, String)> = Vec::new();
    for s in &sources {
        if matches!(s.kind, SourceKind::Log) {
            continue;
        }
        let c = poll_once(s).await;
        demo.extend(c.raw.into_iter().flatten());
    }
    let from_demo = |k: ParseKind| {
        demo.iter()
            .find(|(kind, t)| *kind == k && !t.trim().is_empty())
            .map(|(_, t)| t.clone())
            .unwrap_or_else(|| panic!("the demo answers {k:?}"))
    };
    vec![
        (ParseKind::NxosQueuing, from_demo(ParseKind::NxosQueuing)),
        (ParseKind::NxosPfc, from_demo(ParseKind::NxosPfc)),
        (
            ParseKind::NxosFlowcontrol,
            from_demo(ParseKind::NxosFlowcontrol),
        ),
        (
            ParseKind::NxosInterface,
            fixture("nxos/show-interface_n9k_ntc-templates_01.txt"),
        ),
        (ParseKind::SonicPfc, fixture("sonic/show-pfc-counters.txt")),
        (
            ParseKind::SonicQueue,
            fixture("sonic/show-queue-counters.txt"),
        ),
        (
            ParseKind::SonicWred,
            fixture("sonic/show-queue-wredcounters.txt"),
        ),
        (
            ParseKind::EosPfc,
            fixture("arista/show-priority-flow-control-counters_eapi-json_anta-fixture.json"),
        ),
        (ParseKind::EosQueue, EOS_QUEUE.to_string()),
        (
            ParseKind::EosEcn,
            fixture("arista/show-qos-interfaces-ecn-counters-queue_eapi-json_anta-fixture.json"),
        ),
        (ParseKind::EosInterface, EOS_INTERFACE.to_string()),
        (
            ParseKind::RdmaStatistic,
            fixture("linux/rdma-stat-show_iproute2-cover-letter-2019.txt"),
        ),
        (ParseKind::HwCounters, from_demo(ParseKind::HwCounters)),
        (ParseKind::Ethtool, from_demo(ParseKind::Ethtool)),
        (
            ParseKind::TrainingLog,
            fixture("training/synthetic-seed-formats.log"),
        ),
        (ParseKind::Ping, from_demo(ParseKind::Ping)),
    ]
}
