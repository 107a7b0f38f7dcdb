//! NX-OS over NX-API: `cli_show` JSON POSTed to `https://host:port/ins` on one
//! kept-alive TLS connection, with HTTP basic auth. Every command of a poll goes in one request;
//! each command's `body` comes back as JSON text, which the NX-OS parsers read.
//!
//! hyper over tokio-rustls (http.rs) rather than a client with a pool: one POST at a time on one
//! connection is all NX-API needs, and the transport decides when a connection is reused.

pub mod http;
pub mod ins;
pub mod secret;
pub mod tls;

use crate::collect::{CollectError, Request, Transport};
use crate::config::{Secret, Switch};
use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http::{HttpError, Post};
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio_rustls::TlsConnector;

/// NX-API refuses longer `cli_show` batches; larger polls go in several requests.
const MAX_BATCH: usize = 10;

type Conn = http::Conn;

pub struct NxapiTransport {
    host: String,
    port: u16,
    user: String,
    password: Option<Secret>,
    tls: Arc<ClientConfig>,
    server_name: ServerName<'static>,
    connect_timeout: Duration,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    conn: Option<Conn>,
    /// `Basic …`, built once per password lookup; cleared on 401 so the secret is read again.
    authorization: Option<String>,
    /// `nxapi_auth=…` from the switch: it then skips a full login (AAA) per request.
    cookie: Option<String>,
    handshakes: u64,
}

impl fmt::Debug for NxapiTransport {
    // Hand-written so no credential can reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NxapiTransport")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

impl NxapiTransport {
    /// The transport for a `[[switch]]` with `transport = "nxapi"`. Trust: the pinned
    /// fingerprint when given, else the CA file, else the system roots.
    pub fn from_switch(sw: &Switch, connect_timeout: Duration) -> Result<Self, CollectError> {
        let trust = match (&sw.nxapi_fingerprint, &sw.nxapi_ca_file) {
            (Some(fp), _) => tls::Trust::Pinned(
                tls::parse_fingerprint(fp)
                    .map_err(|e| CollectError::Unavailable(format!("{}: {e}", sw.name)))?,
            ),
            (None, Some(ca)) => tls::Trust::CaFile(ca.clone()),
            (None, None) => tls::Trust::SystemRoots,
        };
        Self::new(
            &sw.host,
            sw.nxapi_port,
            &sw.user,
            sw.password.clone(),
            &trust,
            connect_timeout,
        )
        .map_err(|e| CollectError::Unavailable(format!("{}: {e}", sw.name)))
    }

    pub fn new(
        host: &str,
        port: u16,
        user: &str,
        password: Option<Secret>,
        trust: &tls::Trust,
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        let server_name = ServerName::try_from(host.to_string())
            .map_err(|_| format!("nxapi: {host:?} is not a host name or address"))?;
        Ok(NxapiTransport {
            host: host.to_string(),
            port,
            user: user.to_string(),
            password,
            tls: tls::client_config(trust)?,
            server_name,
            connect_timeout,
            state: Mutex::new(State::default()),
        })
    }

    /// TLS handshakes made so far (one while the connection stays up).
    pub async fn handshakes(&self) -> u64 {
        self.state.lock().await.handshakes
    }

    fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// Run up to `MAX_BATCH` commands in one request, bounded by `timeout` as a whole.
    async fn call(
        &self,
        cmds: &[&str],
        timeout: Duration,
    ) -> Result<Vec<Result<String, CollectError>>, CollectError> {
        if let Some(c) = cmds.iter().find(|c| c.contains(';')) {
            return Err(CollectError::Unavailable(format!(
                "nxapi: `;` inside the command {c:?}"
            )));
        }
        // A call dropped by the timeout drops the connection it had taken out of the state,
        // so a half-read reply is never reused.
        tokio::time::timeout(timeout, self.call_inner(cmds))
            .await
            .map_err(|_| CollectError::Timeout(timeout))?
    }

    async fn call_inner(
        &self,
        cmds: &[&str],
    ) -> Result<Vec<Result<String, CollectError>>, CollectError> {
        let mut st = self.state.lock().await;
        let authorization = match &st.authorization {
            Some(a) => a.clone(),
            None => {
                let a = self.authorization().await?;
                st.authorization = Some(a.clone());
                a
            }
        };
        let body = ins::request_body(cmds);
        let addr = self.addr();
        let resp = loop {
            let reused = st.conn.is_some();
            let mut conn = match st.conn.take() {
                Some(c) => c,
                None => {
                    let c = self.connect().await?;
                    st.handshakes += 1;
                    c
                }
            };
            let post = Post {
                host: &addr,
                path: "/ins",
                content_type: "application/json",
                authorization: Some(&authorization),
                cookie: st.cookie.as_deref(),
                close: false,
                body: body.as_bytes(),
            };
            match conn.post(&post, http::MAX_BODY).await {
                Ok(r) => {
                    if !r.close {
                        st.conn = Some(conn);
                    }
                    break r;
                }
                // The switch closed an idle kept-alive connection: once more on a new one.
                Err(HttpError::Stale(_)) if reused => continue,
                Err(e) => return Err(CollectError::Io(format!("nxapi {addr}: {e}"))),
            }
        };
        if let Some(c) = resp.header("set-cookie").and_then(auth_cookie) {
            st.cookie = Some(c);
        }
        match resp.status {
            401 => {
                st.authorization = None;
                st.cookie = None;
                st.conn = None;
                Err(CollectError::Auth(format!(
                    "nxapi: 401 for user {}",
                    self.user
                )))
            }
            status => match ins::split_reply(&resp.body, cmds.len()) {
                Some(outs) => Ok(outs),
                None => Err(CollectError::Command {
                    status: format!("nxapi HTTP {status}"),
                    stderr: snippet(&resp.body),
                }),
            },
        }
    }

    async fn authorization(&self) -> Result<String, CollectError> {
        let src = self.password.as_ref().ok_or_else(|| {
            CollectError::Auth(format!(
                "nxapi: no password for user {} (set password_env or password_command)",
                self.user
            ))
        })?;
        let pw = secret::resolve(src)
            .await
            .map_err(|e| CollectError::Auth(format!("nxapi: {e}")))?;
        let basic = STANDARD.encode(format!("{}:{pw}", self.user));
        Ok(format!("Basic {basic}"))
    }

    async fn connect(&self) -> Result<Conn, CollectError> {
        let addr = self.addr();
        let tcp = tokio::time::timeout(
            self.connect_timeout,
            TcpStream::connect((self.host.as_str(), self.port)),
        )
        .await
        .map_err(|_| CollectError::Timeout(self.connect_timeout))?
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => {
                CollectError::Refused(format!(" by {addr} (is NX-API on? `feature nxapi`)"))
            }
            _ => CollectError::Connect(format!("{addr}: {e}")),
        })?;
        // Requests are small and answered at once: no Nagle delay.
        let _ = tcp.set_nodelay(true);
        let tls = TlsConnector::from(self.tls.clone())
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(|e| match tls::as_untrusted(&e) {
                Some(u) => CollectError::Connect(format!(
                    "certificate for {addr} not trusted: {u} — set nxapi_fingerprint or nxapi_ca_file"
                )),
                None => CollectError::Connect(format!("TLS with {addr}: {e}")),
            })?;
        Conn::start(tls)
            .await
            .map_err(|e| CollectError::Connect(format!("{addr}: {e}")))
    }
}

/// `nxapi_auth=…` out of a `Set-Cookie` header.
fn auth_cookie(set_cookie: &str) -> Option<String> {
    let pair = set_cookie.split(';').next()?.trim();
    pair.starts_with("nxapi_auth=").then(|| pair.to_string())
}

/// The start of a non-NX-API reply body, for the error message.
fn snippet(body: &[u8]) -> String {
    let t = String::from_utf8_lossy(body);
    let t: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.is_empty() {
        "empty reply".into()
    } else {
        t.chars().take(200).collect()
    }
}

#[async_trait]
impl Transport for NxapiTransport {
    async fn run(&self, req: &Request, timeout: Duration) -> Result<String, CollectError> {
        let mut out = self.run_all(std::slice::from_ref(req), timeout).await;
        out.pop()
            .unwrap_or_else(|| Err(CollectError::Io("nxapi: no reply".into())))
    }

    async fn run_all(
        &self,
        reqs: &[Request],
        timeout: Duration,
    ) -> Vec<Result<String, CollectError>> {
        let mut out: Vec<Option<Result<String, CollectError>>> = vec![None; reqs.len()];
        let cli: Vec<(usize, &str)> = reqs
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Request::Cli(c) => Some((i, c.as_str())),
                _ => None,
            })
            .collect();
        for batch in cli.chunks(MAX_BATCH) {
            let cmds: Vec<&str> = batch.iter().map(|(_, c)| *c).collect();
            match self.call(&cmds, timeout).await {
                Ok(results) => {
                    for ((i, _), r) in batch.iter().zip(results) {
                        if let Some(slot) = out.get_mut(*i) {
                            *slot = Some(r);
                        }
                    }
                }
                Err(e) => {
                    for (i, _) in batch {
                        if let Some(slot) = out.get_mut(*i) {
                            *slot = Some(Err(e.clone()));
                        }
                    }
                }
            }
        }
        out.into_iter()
            .zip(reqs)
            .map(|(o, r)| {
                o.unwrap_or_else(|| {
                    Err(CollectError::Unavailable(format!(
                        "nxapi runs NX-OS show commands only, not {r:?}"
                    )))
                })
            })
            .collect()
    }

    /// Open the TLS connection before the first poll (no request is sent).
    async fn warm_up(&self) -> Result<(), CollectError> {
        let mut st = self.state.lock().await;
        if st.conn.is_none() {
            let conn = tokio::time::timeout(self.connect_timeout, self.connect())
                .await
                .map_err(|_| CollectError::Timeout(self.connect_timeout))??;
            st.conn = Some(conn);
            st.handshakes += 1;
        }
        Ok(())
    }

    fn describe(&self) -> String {
        format!("nxapi {}@{}", self.user, self.addr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_and_snippet() {
        assert_eq!(
            auth_cookie("nxapi_auth=admin:1234; Secure; HttpOnly").as_deref(),
            Some("nxapi_auth=admin:1234")
        );
        assert_eq!(auth_cookie("other=1"), None);
        assert_eq!(
            snippet(b"<html>\n  <b>500</b>\n</html>"),
            "<html> <b>500</b> </html>"
        );
        assert_eq!(snippet(b""), "empty reply");
    }

    #[tokio::test]
    async fn non_cli_requests_are_refused_without_connecting() {
        let t = NxapiTransport::new(
            "127.0.0.1",
            9,
            "admin",
            None,
            &tls::Trust::Pinned([0; 32]),
            Duration::from_secs(1),
        )
        .expect("ok");
        let r = t
            .run(
                &Request::Ethtool {
                    netdev: "eth0".into(),
                },
                Duration::from_secs(1),
            )
            .await;
        assert!(matches!(r, Err(CollectError::Unavailable(m)) if m.contains("show commands only")));
        let r = t
            .run(
                &Request::Cli("show clock ; show users".into()),
                Duration::from_secs(1),
            )
            .await;
        assert!(matches!(r, Err(CollectError::Unavailable(m)) if m.contains("`;` inside")));
        assert_eq!(t.handshakes().await, 0);
        assert_eq!(t.describe(), "nxapi admin@127.0.0.1:9");
    }
}
