//! One Prometheus API request: a form POST on a fresh connection (plain TCP, or TLS through the
//! NX-API rustls config), the reply read by the NX-API HTTP reader. A poll makes a handful of
//! requests every scrape interval, so connection reuse is not worth its states.

use crate::collect::CollectError;
use crate::collect::nxapi::http::{HttpError, read_response_max};
use crate::config::PromUrl;
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
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
    let head = request_head(url, &addr, path, form, authorization);
    match tls {
        None => exchange(tcp, &head, form, &addr, max_answer).await,
        Some(t) => {
            let s = TlsConnector::from(t.config.clone())
                .connect(t.name.clone(), tcp)
                .await
                .map_err(|e| CollectError::Connect(format!("TLS with {addr}: {e}")))?;
            exchange(s, &head, form, &addr, max_answer).await
        }
    }
}

fn request_head(url: &PromUrl, addr: &str, path: &str, form: &str, auth: Option<&str>) -> String {
    let mut head = format!(
        "POST {}{path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Accept: application/json\r\nContent-Length: {}\r\nConnection: close\r\nUser-Agent: rocetop\r\n",
        url.prefix,
        form.len()
    );
    if let Some(a) = auth {
        head.push_str("Authorization: ");
        head.push_str(a);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head
}

async fn exchange<S: AsyncRead + AsyncWrite + Unpin>(
    mut s: S,
    head: &str,
    form: &str,
    addr: &str,
    max_answer: usize,
) -> Result<String, CollectError> {
    let io = |e: std::io::Error| CollectError::Io(format!("{addr}: {e}"));
    s.write_all(head.as_bytes()).await.map_err(io)?;
    s.write_all(form.as_bytes()).await.map_err(io)?;
    s.flush().await.map_err(io)?;
    let mut r = BufReader::new(s);
    // A larger answer means the selector matches far more than RDMA counters: the reading stops
    // at the cap, so memory stays bounded whatever the server sends.
    let resp = read_response_max(&mut r, max_answer)
        .await
        .map_err(|e| match e {
            HttpError::TooLarge { .. } => CollectError::Io(format!(
                "{addr}: {e} (poll.max_answer_bytes): narrow `selector` or raise the cap"
            )),
            e => CollectError::Io(format!("{addr}: {e}")),
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
