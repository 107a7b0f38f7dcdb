//! A loopback NX-API look-alike for the transport tests: HTTPS (tokio-rustls) with a certificate
//! signed by a throw-away CA (rcgen), basic auth, `POST /ins` answered from a command → body map
//! in the `ins_api` envelope, and counters for TLS handshakes and requests.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

pub const USER: &str = "admin";
pub const PASSWORD: &str = "s3cret pw";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Answer every request, keep the connection open.
    Normal,
    /// Read the request, never answer.
    Stall,
    /// Answer, then close the connection without saying so (an idle keep-alive timeout).
    CloseAfterReply,
}

pub struct Pki {
    pub ca_pem: String,
    pub leaf: CertificateDer<'static>,
    key: Vec<u8>,
}

/// A CA and a leaf for 127.0.0.1 signed by it.
pub fn pki() -> Pki {
    let ca_key = KeyPair::generate().expect("ca key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("ca params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "rocetop test CA");
    let ca_cert = ca.self_signed(&ca_key).expect("ca cert");
    let issuer = Issuer::new(ca, ca_key);
    let leaf_key = KeyPair::generate().expect("leaf key");
    let mut leaf = CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("leaf params");
    leaf.distinguished_name
        .push(DnType::CommonName, "nxos-test");
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer).expect("leaf cert");
    Pki {
        ca_pem: ca_cert.pem(),
        leaf: leaf_cert.der().clone(),
        key: leaf_key.serialize_der(),
    }
}

pub struct Server {
    pub port: u16,
    pub handshakes: Arc<AtomicUsize>,
    pub requests: Arc<AtomicUsize>,
    /// The `input` of every request, in order.
    pub inputs: Arc<Mutex<Vec<String>>>,
}

/// Serve on 127.0.0.1 (a free port) until the test ends. `bodies` maps a command (or a prefix
/// ending in `*`) to its `body`.
pub async fn start(pki: &Pki, mode: Mode, bodies: HashMap<String, Value>) -> Server {
    let cfg = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::aws_lc_rs::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("versions")
    .with_no_client_auth()
    .with_single_cert(
        vec![pki.leaf.clone()],
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(pki.key.clone())),
    )
    .expect("server cert");
    let acceptor = TlsAcceptor::from(Arc::new(cfg));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let server = Server {
        port,
        handshakes: Arc::default(),
        requests: Arc::default(),
        inputs: Arc::default(),
    };
    let (hs, rq, inputs) = (
        server.handshakes.clone(),
        server.requests.clone(),
        server.inputs.clone(),
    );
    let bodies = Arc::new(bodies);
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, hs, rq, inputs, bodies) = (
                acceptor.clone(),
                hs.clone(),
                rq.clone(),
                inputs.clone(),
                bodies.clone(),
            );
            tokio::spawn(async move {
                // A client that refuses the certificate ends here.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                hs.fetch_add(1, Ordering::SeqCst);
                let mut s = BufReader::new(tls);
                while let Some((auth, body)) = read_request(&mut s).await {
                    rq.fetch_add(1, Ordering::SeqCst);
                    let input = serde_json::from_slice::<Value>(&body)
                        .ok()
                        .and_then(|v| v.pointer("/ins_api/input")?.as_str().map(String::from))
                        .unwrap_or_default();
                    inputs.lock().expect("inputs").push(input.clone());
                    if mode == Mode::Stall {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        return;
                    }
                    let reply = if auth != basic(USER, PASSWORD) {
                        "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n".to_string()
                    } else {
                        let doc = envelope(&input, &bodies).to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\
                             Set-Cookie: nxapi_auth=admin:123; Secure; HttpOnly\r\n\
                             Content-Length: {}\r\n\r\n{doc}",
                            doc.len()
                        )
                    };
                    if s.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                    let _ = s.flush().await;
                    if mode == Mode::CloseAfterReply {
                        let _ = s.shutdown().await;
                        return;
                    }
                }
            });
        }
    });
    server
}

pub fn basic(user: &str, pw: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pw}"))
    )
}

/// The Authorization header and the body of one request; `None` at the end of the connection.
async fn read_request<S: tokio::io::AsyncBufRead + Unpin>(s: &mut S) -> Option<(String, Vec<u8>)> {
    let mut auth = String::new();
    let mut len = 0usize;
    let mut line = String::new();
    if s.read_line(&mut line).await.ok()? == 0 || !line.starts_with("POST /ins HTTP/1.1") {
        return None;
    }
    loop {
        line.clear();
        if s.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':')?;
        match k.to_ascii_lowercase().as_str() {
            "authorization" => auth = v.trim().to_string(),
            "content-length" => len = v.trim().parse().ok()?,
            _ => {}
        }
    }
    let mut body = vec![0; len];
    s.read_exact(&mut body).await.ok()?;
    Some((auth, body))
}

/// The `ins_api` reply: one output per ` ;`-separated command (an object for one, a list for
/// several, as NX-API does), code 400 for a command it does not know.
fn envelope(input: &str, bodies: &HashMap<String, Value>) -> Value {
    let outs: Vec<Value> = input
        .split(" ;")
        .map(|cmd| {
            let cmd = cmd.trim();
            let body = bodies.get(cmd).or_else(|| {
                bodies
                    .iter()
                    .find(|(k, _)| k.strip_suffix('*').is_some_and(|p| cmd.starts_with(p)))
                    .map(|(_, v)| v)
            });
            match body {
                Some(b) => json!({"input": cmd, "msg": "Success", "code": "200", "body": b}),
                None => json!({"input": cmd, "msg": "Input CLI command error", "code": "400",
                               "clierror": "% Invalid command at '^' marker.\n"}),
            }
        })
        .collect();
    let output = match <[Value; 1]>::try_from(outs) {
        Ok([one]) => one,
        Err(many) => Value::Array(many),
    };
    json!({"ins_api": {"type": "cli_show", "version": "1.0", "sid": "eoc",
                       "outputs": {"output": output}}})
}
