//! One Prometheus API request: a form POST on a fresh connection (plain TCP, or TLS through the
//! NX-API rustls config), sent and read by the NX-API HTTP connection (hyper). A poll makes a
//! handful of requests every scrape interval, so connection reuse is not worth its states.

use crate::collect::CollectError;
use crate::collect::nxapi::http::{Conn, HttpError, Post};
use crate::config::PromUrl;
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

pub struct Tls {
    pub config: Arc<ClientConfig>,
    pub name: ServerName<'static>,
}

/// `application/x-www-form-urlencoded` value.
pub fn form_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// POST `form` to `{prefix}{path}`; the body of a reply Prometheus wrote (2xx, or its JSON error
/// for 400/422/503), or why not.
pub async fn post(
    url: &PromUrl,
    tls: Option<&Tls>,
    path: &str,
    form: &str,
    authorization: Option<&str>,
    max_answer: usize,
) -> Result<String, CollectError> {
    let addr = if url.host.contains(':') {
        format!("[{}]:{}", url.host, url.port)
    } else {
        format!("{}:{}", url.host, url.port)
    };
    let tcp = TcpStream::connect(&addr)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => {
                CollectError::Refused(format!(" by {addr} (is Prometheus running?)"))
            }
            _ => CollectError::Connect(format!("{addr}: {e}")),
        })?;
    let _ = tcp.set_nodelay(true);
    let path = format!("{}{path}", url.prefix);
    let post = Post {
        host: &addr,
        path: &path,
        content_type: "application/x-www-form-urlencoded",
        authorization,
        cookie: None,
        close: true,
        body: form.as_bytes(),
    };
    match tls {
        None => exchange(tcp, &post, &addr, max_answer).await,
        Some(t) => {
            let s = TlsConnector::from(t.config.clone())
                .connect(t.name.clone(), tcp)
                .await
                .map_err(|e| CollectError::Connect(format!("TLS with {addr}: {e}")))?;
            exchange(s, &post, &addr, max_answer).await
        }
    }
}

async fn exchange<S: AsyncRead + AsyncWrite + Send + Unpin + 'static>(
    s: S,
    post: &Post<'_>,
    addr: &str,
    max_answer: usize,
) -> Result<String, CollectError> {
    let io = |e: HttpError| CollectError::Io(format!("{addr}: {e}"));
    let mut conn = Conn::start(s).await.map_err(io)?;
    // A larger answer means the selector matches far more than RDMA counters: the reading stops
    // at the cap, so memory stays bounded whatever the server sends.
    let resp = conn.post(post, max_answer).await.map_err(|e| match e {
        HttpError::TooLarge { .. } => CollectError::Io(format!(
            "{addr}: {e} (poll.max_answer_bytes): narrow `selector` or raise the cap"
        )),
        e => io(e),
    })?;
    let json = resp
        .header("content-type")
        .is_some_and(|c| c.contains("json"));
    match resp.status {
        200..=299 => {}
        401 | 403 => {
            return Err(CollectError::Auth(format!(
                "HTTP {} from {addr}: check bearer_token_env/_command or basic_user/basic_password_env",
                resp.status
            )));
        }
        // Prometheus' own errors (bad query, timeout, unavailable) carry a JSON body the mapping notes.
        400 | 422 | 503 if json => {}
        s => {
            return Err(CollectError::Io(format!(
                "HTTP {s} from {addr}{}: is this the Prometheus API url?",
                if json { "" } else { " (not JSON)" }
            )));
        }
    }
    String::from_utf8(resp.body)
        .map_err(|_| CollectError::Io(format!("{addr}: an answer that is not UTF-8")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_values_are_escaped() {
        assert_eq!(
            form_encode(r#"count by (__name__)({a=~"x|y"})"#),
            "count%20by%20%28__name__%29%28%7Ba%3D~%22x%7Cy%22%7D%29"
        );
    }
}
