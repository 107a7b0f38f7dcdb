//! The NX-API transport against a loopback HTTPS server (tests/ssh/nxapi/server.rs): trust (pinned
//! fingerprint, CA file, refusals that name the fingerprint), basic auth, keep-alive, reconnects,
//! timeouts, per-command errors, and the replies read by the NX-OS parsers, down to a whole poll
//! built from a config with `transport = "nxapi"`.

#[path = "nxapi/server.rs"]
mod server;

use rocetop::collect::nxapi::NxapiTransport;
use rocetop::collect::nxapi::tls::{Trust, fingerprint, parse_fingerprint};
use rocetop::collect::{CollectError, Request, Transport};
use rocetop::config::{Config, Secret};
use rocetop::metrics::names::*;
use rocetop::metrics::{Parsed, Store, Value};
use rocetop::parse::{Ctx, ParseKind, parse};
use serde_json::Value as Json;
use server::{Mode, Pki, Server};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(5);
const QUEUING: &str = "show queuing interface Ethernet1/1/1-2";
const PFC: &str = "show interface priority-flow-control";
const FLOWCONTROL: &str = "show interface flowcontrol";
const INTERFACE: &str = "show interface";

fn fixture(rel: &str) -> Json {
    let path = format!("{}/tests/fixtures/nxos/{rel}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The switch's answers: the real `show interface` NX-API body and synthetic PFC/queuing bodies.
fn bodies() -> HashMap<String, Json> {
    HashMap::from([
        (
            "show queuing interface*".to_string(),
            fixture("synthetic/nxapi-show-queuing-interface_SYNTHETIC.json"),
        ),
        (
            PFC.to_string(),
            fixture("synthetic/nxapi-show-interface-priority-flow-control_SYNTHETIC.json"),
        ),
        (
            FLOWCONTROL.to_string(),
            fixture("synthetic/nxapi-show-interface-flowcontrol_SYNTHETIC.json"),
        ),
        (
            INTERFACE.to_string(),
            fixture("show-interface_nxapi-json_ansible-fixture.json"),
        ),
    ])
}

fn password(pw: &str) -> Option<Secret> {
    Some(Secret::Command(format!("printf '%s\\n' '{pw}'")))
}

fn pin(pki: &Pki) -> Trust {
    Trust::Pinned(parse_fingerprint(&fingerprint(&pki.leaf)).expect("own fingerprint"))
}

fn transport(srv: &Server, trust: &Trust, pw: &str) -> NxapiTransport {
    NxapiTransport::new(
        "127.0.0.1",
        srv.port,
        server::USER,
        password(pw),
        trust,
        Duration::from_secs(2),
    )
    .expect("transport")
}

fn cli(cmds: &[&str]) -> Vec<Request> {
    cmds.iter().map(|c| Request::Cli(c.to_string())).collect()
}

fn counter(p: &Parsed, name: &str, labels: &[(&str, &str)]) -> Option<u64> {
    match p.find(name, labels) {
        Some(Value::Counter(v)) => Some(v),
        None => None,
        other => panic!("{name} {labels:?}: {other:?}"),
    }
}

#[tokio::test]
async fn pinned_fingerprint_one_request_and_parsed_samples() {
    let pki = server::pki();
    let srv = server::start(&pki, Mode::Normal, bodies()).await;
    let t = transport(&srv, &pin(&pki), server::PASSWORD);
    let out = t
        .run_all(&cli(&[QUEUING, PFC, FLOWCONTROL, INTERFACE]), T)
        .await;
    assert_eq!(
        srv.requests.load(Ordering::SeqCst),
        1,
        "one request per poll"
    );
    assert_eq!(
        srv.inputs.lock().expect("inputs").as_slice(),
        [format!("{QUEUING} ;{PFC} ;{FLOWCONTROL} ;{INTERFACE}")]
    );
    let text: Vec<String> = out
        .into_iter()
        .map(|r| r.expect("every command answered"))
        .collect();
    let ctx = Ctx::named("leaf1");
    let run = |kind, i: usize| {
        let p = parse(kind, &text[i], &ctx);
        assert_eq!(p.unknown_lines, 0, "{kind:?}: {:?}", p.unknown_examples);
        p
    };

    let q = run(ParseKind::NxosQueuing, 0);
    let e1 = ("port", "Ethernet1/1/1");
    assert_eq!(
        counter(&q, SW_QUEUE_TX_PACKETS, &[e1, ("qos_group", "3")]),
        Some(987_654_321)
    );
    assert_eq!(
        counter(&q, SW_QUEUE_TX_PACKETS, &[e1, ("qos_group", "0")]),
        Some(1007)
    );
    assert_eq!(
        counter(&q, SW_QUEUE_DROPPED, &[e1, ("qos_group", "3")]),
        Some(12)
    );
    assert_eq!(
        counter(&q, SW_INGRESS_DROPPED, &[e1, ("reason", "mmu")]),
        Some(42)
    );
    assert_eq!(counter(&q, SW_PFC_TX, &[e1, ("priority", "3")]), Some(1200));
    assert_eq!(
        counter(
            &q,
            SW_QUEUE_TX_PACKETS,
            &[("port", "Ethernet1/1/2"), ("qos_group", "3")]
        ),
        Some(5555)
    );
    assert_eq!(
        q.find(SW_QUEUE_DEPTH, &[e1, ("qos_group", "3")]),
        Some(Value::Gauge(20480.0))
    );

    let p = run(ParseKind::NxosPfc, 1);
    assert_eq!(
        counter(&p, SW_PFC_RX, &[e1, ("priority", "all")]),
        Some(345)
    );
    assert_eq!(
        counter(&p, SW_PFC_RX, &[("port", "Ethernet1/1/2")]),
        Some(9)
    );
    assert_eq!(
        p.find(SW_PFC_ENABLED, &[e1, ("priority", "3")]),
        Some(Value::Gauge(1.0))
    );

    let f = run(ParseKind::NxosFlowcontrol, 2);
    assert_eq!(counter(&f, SW_LINK_PAUSE_TX, &[e1]), Some(3));
    assert_eq!(counter(&f, SW_LINK_PAUSE_RX, &[e1]), Some(0));

    // The real NX-API `show interface` body, as parse_switch.rs reads it from the file.
    let i = run(ParseKind::NxosInterface, 3);
    assert_eq!(
        counter(&i, SW_LINK_PAUSE_RX, &[("port", "Ethernet2/1")]),
        Some(0)
    );
    assert_eq!(
        i.find(SW_PORT_MTU_BYTES, &[("port", "Ethernet2/1")]),
        Some(Value::Gauge(1500.0))
    );
    assert_eq!(
        i.samples.len(),
        10,
        "8 counters, and the MTU of both interfaces"
    );
    assert!(t.describe().starts_with("nxapi admin@127.0.0.1:"));
}

#[tokio::test]
async fn keep_alive_one_handshake_for_many_polls() {
    let pki = server::pki();
    let srv = server::start(&pki, Mode::Normal, bodies()).await;
    let t = transport(&srv, &pin(&pki), server::PASSWORD);
    t.warm_up().await.expect("warm up");
    t.warm_up().await.expect("warm up again");
    for _ in 0..5 {
        let out = t.run_all(&cli(&[PFC, FLOWCONTROL]), T).await;
        assert!(out.iter().all(Result::is_ok), "{out:?}");
        assert!(t.run(&Request::Cli(INTERFACE.into()), T).await.is_ok());
    }
    assert_eq!(srv.requests.load(Ordering::SeqCst), 10);
    assert_eq!(srv.handshakes.load(Ordering::SeqCst), 1);
    assert_eq!(t.handshakes().await, 1);
}

#[tokio::test]
async fn reconnects_when_the_switch_closed_the_connection() {
    let pki = server::pki();
    let srv = server::start(&pki, Mode::CloseAfterReply, bodies()).await;
    let t = transport(&srv, &pin(&pki), server::PASSWORD);
    for _ in 0..3 {
        let r = t.run(&Request::Cli(PFC.into()), T).await;
        assert!(r.is_ok(), "{r:?}");
    }
    assert_eq!(srv.requests.load(Ordering::SeqCst), 3);
    assert_eq!(srv.handshakes.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn wrong_fingerprint_is_refused_naming_the_real_one() {
    let pki = server::pki();
    let srv = server::start(&pki, Mode::Normal, bodies()).await;
    let wrong = Trust::Pinned([7; 32]);
    let t = transport(&srv, &wrong, server::PASSWORD);
    let err = t
        .run(&Request::Cli(PFC.into()), T)
        .await
        .expect_err("refused");
    let want = format!(
        "certificate for 127.0.0.1:{} not trusted: fingerprint {}",
        srv.port,
        fingerprint(&pki.leaf)
    );
    match &err {
        CollectError::Connect(m) => {
            assert!(m.starts_with(&want), "{m}");
            assert!(m.ends_with("set nxapi_fingerprint or nxapi_ca_file"), "{m}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(srv.requests.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn ca_file_accepted_and_another_ca_refused() {
    let pki = server::pki();
    let srv = server::start(&pki, Mode::Normal, bodies()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).expect("write ca");
    let t = transport(&srv, &Trust::CaFile(ca), server::PASSWORD);
    let r = t.run(&Request::Cli(FLOWCONTROL.into()), T).await;
    assert!(r.is_ok(), "{r:?}");

    let other = dir.path().join("other.pem");
    std::fs::write(&other, server::pki().ca_pem).expect("write other ca");
    let t = transport(&srv, &Trust::CaFile(other), server::PASSWORD);
    match t.run(&Request::Cli(FLOWCONTROL.into()), T).await {
        Err(CollectError::Connect(m)) => {
            assert!(m.contains(&fingerprint(&pki.leaf)), "{m}");
            assert!(m.contains("not trusted"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn wrong_password_is_an_auth_error() {
    let pki = server::pki();
    let srv = server::start(&pki, Mode::Normal, bodies()).await;
    let t = transport(&srv, &pin(&pki), "guess");
    let r = t.run(&Request::Cli(PFC.into()), T).await;
    assert_eq!(
        r,
        Err(CollectError::Auth("nxapi: 401 for user admin".into()))
    );
    assert_eq!(
        r.expect_err("401").to_string(),
        "auth failed: nxapi: 401 for user admin"
    );
    let none = NxapiTransport::new(
        "127.0.0.1",
        srv.port,
        "admin",
        None,
        &pin(&pki),
        Duration::from_secs(2),
    )
    .expect("transport");
    match none.run(&Request::Cli(PFC.into()), T).await {
        Err(CollectError::Auth(m)) => assert!(m.contains("password_env"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_stalled_switch_times_out_and_the_connection_is_dropped() {
    let pki = server::pki();
    let srv = server::start(&pki, Mode::Stall, bodies()).await;
    let t = transport(&srv, &pin(&pki), server::PASSWORD);
    let budget = Duration::from_millis(300);
    let t0 = Instant::now();
    let r = t.run(&Request::Cli(PFC.into()), budget).await;
    assert_eq!(r, Err(CollectError::Timeout(budget)));
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    // The half-answered connection is not reused.
    let r = t.run_all(&cli(&[PFC, FLOWCONTROL]), budget).await;
    assert_eq!(r, vec![Err(CollectError::Timeout(budget)); 2]);
    assert_eq!(t.handshakes().await, 2);
}

#[tokio::test]
async fn refused_and_per_command_errors() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let pki = server::pki();
    let t = NxapiTransport::new(
        "127.0.0.1",
        port,
        "admin",
        password("x"),
        &pin(&pki),
        Duration::from_secs(2),
    )
    .expect("transport");
    match t.run(&Request::Cli(PFC.into()), T).await {
        Err(e @ CollectError::Refused(_)) => {
            assert!(e.to_string().contains(&format!("127.0.0.1:{port}")), "{e}")
        }
        other => panic!("{other:?}"),
    }

    let srv = server::start(&pki, Mode::Normal, bodies()).await;
    let t = transport(&srv, &pin(&pki), server::PASSWORD);
    let out = t.run_all(&cli(&["show bogus", PFC]), T).await;
    match &out[0] {
        Err(CollectError::Command { status, stderr }) => {
            assert_eq!(status, "nxapi 400");
            assert!(stderr.starts_with("Input CLI command error: % Invalid command"));
        }
        other => panic!("{other:?}"),
    }
    assert!(out[1].is_ok());
}

#[tokio::test]
async fn a_config_with_transport_nxapi_polls_through_it() {
    let pki = server::pki();
    let srv = server::start(&pki, Mode::Normal, bodies()).await;
    // The pin in hex with colons, as `openssl x509 -fingerprint -sha256` prints it.
    let digest = parse_fingerprint(&fingerprint(&pki.leaf)).expect("fp");
    let hex: Vec<String> = digest.iter().map(|b| format!("{b:02X}")).collect();
    let cfg = Config::from_str(
        &format!(
            "[[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nuser = \"admin\"\nos = \"nxos\"\n\
             transport = \"nxapi\"\nnxapi_port = {}\nnxapi_fingerprint = \"{}\"\n\
             password_command = \"printf '%s' '{}'\"\nports = [\"Ethernet1/1/1-2\"]\n",
            srv.port,
            hex.join(":"),
            server::PASSWORD
        ),
        "test",
        None,
    )
    .expect("config");
    let mut store = Store::new(600_000, 100);
    let sources = rocetop::cmd::build_sources(&cfg, &mut store, rocetop::cmd::remote());
    let src = &sources[0];
    assert!(src.transport.describe().starts_with("nxapi admin@"));
    let c = rocetop::collect::poll::poll_once(src).await;
    assert_eq!(c.error, None);
    assert_eq!(c.parsed.unknown_lines, 0, "{:?}", c.parsed.unknown_examples);
    let e1 = ("port", "Ethernet1/1/1");
    assert_eq!(
        counter(&c.parsed, SW_INGRESS_DROPPED, &[e1, ("switch", "leaf1")]),
        Some(42)
    );
    assert_eq!(counter(&c.parsed, SW_LINK_PAUSE_TX, &[e1]), Some(3));
    assert_eq!(srv.requests.load(Ordering::SeqCst), 1);
    let inputs = srv.inputs.lock().expect("inputs").clone();
    assert!(
        inputs[0].starts_with("show queuing interface Ethernet1/1/1-2 ;"),
        "{inputs:?}"
    );
}
