//! `rocetop export`: the collectors without a screen, serving `GET /metrics` in the Prometheus
//! text format (the docs/architecture.md vocabulary, `rocetop_source_up` for every source).

pub mod http;

use crate::collect::poll::{KeepRaw, spawn_all};
use crate::config::Config;
use crate::metrics::Store;
use crate::output::prom;
use flate2::Compression;
use flate2::write::GzEncoder;
use http::{Request, Response};
use std::collections::HashMap;
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

pub use crate::config::DEFAULT_EXPORT_LISTEN as DEFAULT_LISTEN;
/// Open connections; one more is answered 503 and closed (a scrape opens one or two).
const MAX_CONNECTIONS: usize = 512;
/// Open connections from one address; one more is answered 503 and closed. A Prometheus keeps one
/// or two, so one client cannot take every slot from the others.
pub const MAX_PER_PEER: usize = 32;
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `ADDR:PORT`, `[v6]:PORT`, `localhost:PORT`, or a bare port (loopback).
pub fn parse_listen(s: &str) -> Result<SocketAddr, String> {
    if let Ok(a) = s.parse::<SocketAddr>() {
        return Ok(a);
    }
    if let Ok(p) = s.parse::<u16>() {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p));
    }
    if let Some(p) = s
        .strip_prefix("localhost:")
        .and_then(|p| p.parse::<u16>().ok())
    {
        return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), p));
    }
    Err(format!(
        "--listen \"{s}\": expected ADDRESS:PORT such as {DEFAULT_LISTEN}, [::1]:9464 or 0.0.0.0:9464"
    ))
}

/// The warning for a listener others can reach, if it is one.
pub fn exposure_warning(addr: &SocketAddr) -> Option<String> {
    (!addr.ip().is_loopback()).then(|| {
        format!(
            "rocetop: warning: listening on {addr}, which is not a loopback address: anyone who can reach \
             it can read the fabric's metrics (names of switches, ports and nodes)"
        )
    })
}

/// The answer to one request.
pub fn respond(store: &Mutex<Store>, req: &Request) -> Response {
    if req.path != "/metrics" {
        return Response::text(404, "not found; metrics are at /metrics\n");
    }
    if req.method != "GET" && req.method != "HEAD" {
        let mut r = Response::text(405, "only GET and HEAD\n");
        r.headers.push(("Allow", "GET, HEAD".into()));
        return r;
    }
    let text = {
        let st = store.lock().unwrap_or_else(|p| p.into_inner());
        let mut t = prom::render(&st, false, true);
        t.push_str(&crate::collect::poll::timing::POLLS.render(
            "rocetop_poll_duration_seconds",
            "Time from the start of a source's poll to its parsed answer (all sources, since start)",
        ));
        t
    };
    let mut r = Response {
        status: 200,
        content_type: CONTENT_TYPE,
        headers: vec![("Vary", "Accept-Encoding".into())],
        body: text.into_bytes(),
    };
    if req.accepts_gzip() {
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        if let Ok(z) = gz.write_all(&r.body).and_then(|_| gz.finish()) {
            r.body = z;
            r.headers.push(("Content-Encoding", "gzip".into()));
        }
    }
    r
}

/// Serve `/metrics` from `store` on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: TcpListener,
    store: Arc<Mutex<Store>>,
    shutdown: impl std::future::Future<Output = ()>,
) {
    // Accepting never waits for a slot: a slow client holds its own connection (for at most
    // http::REQUEST_TIMEOUT per request, and its first within that of the accept), never the next
    // scrape's place in the accept queue; and one address holds at most MAX_PER_PEER of them.
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let peers = Peers::default();
    let mut conns = JoinSet::new();
    let mut backoff = std::time::Duration::from_millis(10);
    tokio::pin!(shutdown);
    loop {
        let (sock, peer) = tokio::select! {
            a = listener.accept() => match a {
                Ok(a) => a,
                // Out of file descriptors and the like: keep serving the connections we have,
                // and try again later (backing off to 1 s), never exit.
                Err(_) => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(std::time::Duration::from_secs(1));
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        backoff = std::time::Duration::from_millis(10);
        let _ = sock.set_nodelay(true);
        let slot = peers
            .take(peer.ip())
            .ok_or("too many connections from your address\n")
            .and_then(|p| {
                let all = permits.clone().try_acquire_owned();
                all.map(|a| (a, p)).map_err(|_| "too many connections\n")
            });
        let permit = match slot {
            Ok(p) => p,
            Err(why) => {
                // No slot: say so at once and close, rather than queue behind slow clients.
                conns.spawn(async move {
                    let busy = http::Response::text(503, why);
                    let w = http::write_busy(sock, &busy);
                    let _ = tokio::time::timeout(http::WRITE_TIMEOUT, w).await;
                });
                continue;
            }
        };
        let store = store.clone();
        conns.spawn(async move {
            let _ = http::serve_conn(sock, |r| respond(&store, r)).await;
            drop(permit);
        });
        while conns.try_join_next().is_some() {}
    }
}

/// Connections open per client address.
#[derive(Clone, Default)]
struct Peers(Arc<Mutex<HashMap<IpAddr, usize>>>);

impl Peers {
    /// One more connection from `ip`, held until the guard drops; `None` past [`MAX_PER_PEER`].
    fn take(&self, ip: IpAddr) -> Option<PeerSlot> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(ip).or_insert(0);
        if *n >= MAX_PER_PEER {
            return None;
        }
        *n += 1;
        Some(PeerSlot(self.clone(), ip))
    }
}

struct PeerSlot(Peers, IpAddr);

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut m = (self.0).0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

/// Start the collectors feeding a shared store. Dropping the returned set stops them.
pub async fn start_collectors(cfg: &Config) -> (Arc<Mutex<Store>>, JoinSet<()>) {
    let mut store = Store::new(cfg.poll.retention.as_millis() as i64, 16);
    let sources: Vec<Arc<_>> = super::build_sources(cfg, &mut store, super::remote())
        .into_iter()
        .map(Arc::new)
        .collect();
    let store = Arc::new(Mutex::new(store));
    super::warm_up(cfg, &sources).await;
    let (tx, mut rx) = mpsc::channel(256);
    let mut tasks = spawn_all(sources, tx, KeepRaw::default());
    let st = store.clone();
    tasks.spawn(async move {
        while let Some(c) = rx.recv().await {
            let mut s = st.lock().unwrap_or_else(|p| p.into_inner());
            c.apply(&mut s);
        }
    });
    (store, tasks)
}

/// `rocetop export --listen ADDR`: until SIGINT/SIGTERM.
pub async fn run(cfg: &Config, listen: &str) -> Result<(), String> {
    let addr = parse_listen(listen)?;
    if let Some(w) = exposure_warning(&addr) {
        crate::safe::eprintln(&w.to_string());
    }
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().unwrap_or(addr);
    let (store, tasks) = start_collectors(cfg).await;
    // Held while serving (a guard dropped inside start_collectors would stop it at once).
    let _heap = crate::heap::spawn_give_back();
    let n = store.lock().map(|s| s.sources().count()).unwrap_or(0);
    crate::safe::eprintln(&format!(
        "rocetop: serving http://{local}/metrics ({n} sources); Ctrl-C stops"
    ));
    serve(listener, store, super::record::shutdown_signal()).await;
    drop(tasks);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_forms() {
        assert_eq!(
            parse_listen("9464"),
            Ok("127.0.0.1:9464".parse().expect("addr"))
        );
        assert_eq!(
            parse_listen("localhost:1"),
            Ok("127.0.0.1:1".parse().expect("addr"))
        );
        assert_eq!(
            parse_listen("[::1]:2"),
            Ok("[::1]:2".parse().expect("addr"))
        );
        assert!(parse_listen("nowhere").is_err());
        assert!(exposure_warning(&"127.0.0.1:1".parse().expect("addr")).is_none());
        assert!(exposure_warning(&"[::1]:1".parse().expect("addr")).is_none());
        assert!(exposure_warning(&"0.0.0.0:1".parse().expect("addr")).is_some());
    }

    #[test]
    fn metrics_404_405_gzip() {
        let mut st = Store::new(60_000, 10);
        st.add_source("sw", 1000);
        let st = Mutex::new(st);
        let req = |m: &str, p: &str, h: &[(&str, &str)]| Request {
            method: m.into(),
            path: p.into(),
            query: String::new(),
            http11: true,
            headers: h.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect(),
        };
        let r = respond(&st, &req("GET", "/metrics", &[]));
        assert_eq!(r.status, 200);
        let body = String::from_utf8(r.body).expect("utf8");
        // Never polled: no health line at all (missing, not down).
        assert!(!body.contains("rocetop_source_up"), "{body}");
        assert_eq!(respond(&st, &req("GET", "/", &[])).status, 404);
        assert_eq!(respond(&st, &req("POST", "/metrics", &[])).status, 405);
        let z = respond(&st, &req("GET", "/metrics", &[("accept-encoding", "gzip")]));
        assert!(
            z.headers
                .iter()
                .any(|(k, v)| *k == "Content-Encoding" && v == "gzip")
        );
        assert_eq!(z.body.get(..2), Some(&[0x1f, 0x8b][..]));
    }
}
