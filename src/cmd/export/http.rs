//! A small HTTP/1.1 server loop for one connection: enough for Prometheus and curl. Keep-alive and
//! pipelining per RFC 9112, `Connection: close` honoured, header size and idle time bounded,
//! request bodies refused beyond a small size. No framework: the exporter serves one path.

use std::io;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Request line and headers larger than this get 431 and the connection closes.
pub const MAX_HEADER_BYTES: usize = 16 * 1024;
/// A GET has no body; one up to this size is read and ignored, a larger one gets 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// No byte of a next request this long after the previous one closes the connection.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// A request (headers and body) not complete this long after its first byte closes the connection,
/// and a connection's first request must be complete this long after it was accepted: a client
/// trickling a partial request, or one that connects and sends nothing, gives up its slot after
/// this, not after the idle minute (512 silent connections had held every slot, each scrape 503).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// A response the client does not take within this closes the connection.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub method: String,
    /// The path without the query string.
    pub path: String,
    pub query: String,
    /// HTTP/1.1 or later (keep-alive by default).
    pub http11: bool,
    /// Names lower-cased.
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn has_token(&self, name: &str, token: &str) -> bool {
        self.headers
            .iter()
            .filter(|(k, _)| k == name)
            .flat_map(|(_, v)| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    /// Whether the client accepts a gzip-encoded body.
    pub fn accepts_gzip(&self) -> bool {
        self.headers
            .iter()
            .filter(|(k, _)| k == "accept-encoding")
            .flat_map(|(_, v)| v.split(','))
            .any(|t| {
                let mut parts = t.split(';');
                let coding = parts.next().unwrap_or("").trim();
                let refused = parts.any(|p| {
                    let p = p.trim().replace(' ', "");
                    p == "q=0" || p == "q=0.0" || p == "q=0.00" || p == "q=0.000"
                });
                coding.eq_ignore_ascii_case("gzip") && !refused
            })
    }

    fn keep_alive(&self) -> bool {
        if self.http11 {
            !self.has_token("connection", "close")
        } else {
            self.has_token("connection", "keep-alive")
        }
    }
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(status: u16, body: impl Into<String>) -> Self {
        Self {
            status,
            content_type: "text/plain; charset=utf-8",
            headers: Vec::new(),
            body: body.into().into_bytes(),
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Unknown",
    }
}

/// End of the header block: index just past the blank line.
fn header_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4)
        .or_else(|| buf.windows(2).position(|w| w == b"\n\n").map(|i| i + 2))
}

/// Parse the request line and headers; `Err(status)` for what cannot be served.
pub fn parse_head(head: &[u8]) -> Result<Request, u16> {
    let text = std::str::from_utf8(head).map_err(|_| 400u16)?;
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next().ok_or(400u16)?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(400);
    };
    let http11 = match version {
        "HTTP/1.1" => true,
        "HTTP/1.0" => false,
        v if v.starts_with("HTTP/") => return Err(505),
        _ => return Err(400),
    };
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(400);
    }
    // Absolute form (`GET http://host/metrics`) is allowed by RFC 9112: keep the path.
    let target = match target.split_once("://") {
        Some((_, rest)) => rest.find('/').map_or("/", |i| &rest[i..]),
        None => target,
    };
    if !target.starts_with('/') {
        return Err(400);
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers = Vec::new();
    for l in lines {
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').ok_or(400u16)?;
        // Whitespace before the colon is forbidden (request smuggling).
        if k.is_empty() || k.ends_with([' ', '\t']) {
            return Err(400);
        }
        headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
    }
    Ok(Request {
        method: method.to_string(),
        path: path.to_string(),
        query: query.to_string(),
        http11,
        headers,
    })
}

async fn write_response<S: AsyncWrite + Unpin>(
    s: &mut S,
    resp: &Response,
    head_only: bool,
    keep: bool,
) -> io::Result<()> {
    let mut out = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n",
        resp.status,
        reason(resp.status),
        resp.content_type,
        resp.body.len(),
        if keep { "keep-alive" } else { "close" },
    );
    for (k, v) in &resp.headers {
        out.push_str(k);
        out.push_str(": ");
        out.push_str(v);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    // The body is written as it is, not copied behind the head: at 512 nodes /metrics is ~7 MB,
    // and a copy was as much again at every scrape. (Connections are TCP_NODELAY, export.rs: the
    // head's own segment holds nothing back.)
    s.write_all(out.as_bytes()).await?;
    if !head_only {
        s.write_all(&resp.body).await?;
    }
    s.flush().await
}

/// Answer a connection that gets no slot, then close it.
pub async fn write_busy<S: AsyncWrite + Unpin>(mut s: S, resp: &Response) -> io::Result<()> {
    write_response(&mut s, resp, false, false).await?;
    s.shutdown().await
}

/// Serve requests on one connection (just accepted) until the client closes, asks to close, errs
/// or idles out.
pub async fn serve_conn<S, H>(mut s: S, handler: H) -> io::Result<()>
where
    S: AsyncRead + AsyncWrite + Unpin,
    H: Fn(&Request) -> Response,
{
    let mut buf: Vec<u8> = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    // The first request is due within REQUEST_TIMEOUT of the accept, its first byte included.
    let mut first = Some(tokio::time::Instant::now() + REQUEST_TIMEOUT);
    loop {
        // Read until a complete header block is buffered: within IDLE_TIMEOUT in all (a client
        // trickling bytes does not hold a connection forever) and MAX_HEADER_BYTES in all.
        let mut deadline = tokio::time::Instant::now() + IDLE_TIMEOUT;
        if !buf.is_empty() {
            deadline = tokio::time::Instant::now() + REQUEST_TIMEOUT;
        }
        if let Some(due) = first.take() {
            deadline = due;
        }
        let mut taken = buf.len();
        let end = loop {
            if let Some(e) = header_end(&buf) {
                break e;
            }
            if taken > MAX_HEADER_BYTES {
                let r = Response::text(431, "request headers too large\n");
                return write_response(&mut s, &r, false, false).await;
            }
            let n = match tokio::time::timeout_at(deadline, s.read(&mut chunk)).await {
                Ok(r) => r?,
                Err(_) => return Ok(()),
            };
            if n == 0 {
                return Ok(());
            }
            if taken == 0 {
                // The first byte of a request: the rest must follow soon.
                deadline = deadline.min(tokio::time::Instant::now() + REQUEST_TIMEOUT);
            }
            taken += n;
            buf.extend_from_slice(&chunk[..n]);
            // Tolerate blank lines between pipelined requests (RFC 9112 §2.2).
            let blank = buf
                .iter()
                .take_while(|b| **b == b'\r' || **b == b'\n')
                .count();
            buf.drain(..blank);
        };
        if end > MAX_HEADER_BYTES {
            let r = Response::text(431, "request headers too large\n");
            return write_response(&mut s, &r, false, false).await;
        }
        let req = match parse_head(&buf[..end]) {
            Ok(r) => r,
            Err(status) => {
                let r = Response::text(status, format!("{}\n", reason(status)));
                return write_response(&mut s, &r, false, false).await;
            }
        };
        buf.drain(..end);
        if req.header("transfer-encoding").is_some() {
            let r = Response::text(501, "request bodies are not supported\n");
            return write_response(&mut s, &r, false, false).await;
        }
        let body_len = match req.header("content-length") {
            None => 0,
            Some(v) => match v.parse::<usize>() {
                Ok(n) => n,
                Err(_) => {
                    let r = Response::text(400, "bad Content-Length\n");
                    return write_response(&mut s, &r, false, false).await;
                }
            },
        };
        if body_len > MAX_BODY_BYTES {
            let r = Response::text(413, "request body too large\n");
            return write_response(&mut s, &r, false, false).await;
        }
        while buf.len() < body_len {
            let n = match tokio::time::timeout_at(deadline, s.read(&mut chunk)).await {
                Ok(r) => r?,
                Err(_) => return Ok(()),
            };
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        buf.drain(..body_len);
        let keep = req.keep_alive();
        let head_only = req.method == "HEAD";
        let resp = handler(&req);
        let wrote = write_response(&mut s, &resp, head_only, keep);
        match tokio::time::timeout(WRITE_TIMEOUT, wrote).await {
            Ok(r) => r?,
            Err(_) => return Ok(()),
        }
        if !keep {
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(_: &Request) -> Response {
        Response::text(200, "hi\n")
    }

    async fn exchange(input: &[u8]) -> String {
        let (mut client, server) = tokio::io::duplex(1 << 20);
        let task = tokio::spawn(serve_conn(server, ok));
        client.write_all(input).await.expect("write");
        client.shutdown().await.expect("shutdown");
        let mut out = String::new();
        client.read_to_string(&mut out).await.expect("read");
        let _ = task.await;
        out
    }

    #[tokio::test]
    async fn pipelined_keep_alive_then_close() {
        let out = exchange(
            b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\nGET /c HTTP/1.1\r\n\r\n",
        )
        .await;
        assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 2, "{out}");
        assert!(out.contains("Connection: keep-alive"));
        assert!(out.ends_with("Connection: close\r\n\r\nhi\n"), "{out}");
    }

    #[tokio::test]
    async fn http10_closes_and_head_has_no_body() {
        let out = exchange(b"HEAD / HTTP/1.0\r\n\r\n").await;
        assert!(out.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(out.contains("Content-Length: 3\r\n"));
        assert!(out.ends_with("\r\n\r\n"), "{out}");
    }

    #[tokio::test]
    async fn oversized_headers_get_431() {
        let mut req = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..2000 {
            req.extend_from_slice(format!("X-{i}: {}\r\n", "a".repeat(20)).as_bytes());
        }
        req.extend_from_slice(b"\r\n");
        let out = exchange(&req).await;
        assert!(out.starts_with("HTTP/1.1 431 "), "{out}");
    }

    #[tokio::test]
    async fn garbage_gets_400_and_bodies_are_skipped() {
        assert!(
            exchange(b"hello\r\n\r\n")
                .await
                .starts_with("HTTP/1.1 400 ")
        );
        assert!(
            exchange(b"GET / HTTP/2.0\r\n\r\n")
                .await
                .starts_with("HTTP/1.1 505 ")
        );
        let out =
            exchange(b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nxxxxxGET / HTTP/1.1\r\n\r\n")
                .await;
        assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 2, "{out}");
    }

    /// A connection that sends nothing, or trickles its first request, is closed REQUEST_TIMEOUT
    /// after it was accepted (not the idle minute); a later request may wait longer than that.
    #[tokio::test]
    async fn a_first_request_is_due_soon_after_the_accept() {
        async fn silent(trickle: &'static [u8]) {
            let (mut client, server) = tokio::io::duplex(1 << 16);
            let t0 = tokio::time::Instant::now();
            let task = tokio::spawn(serve_conn(server, ok));
            client.write_all(trickle).await.expect("write");
            tokio::time::sleep(REQUEST_TIMEOUT / 2).await;
            // Another byte does not move the deadline.
            client.write_all(b"T").await.expect("write");
            let mut out = Vec::new();
            client.read_to_end(&mut out).await.expect("closed");
            assert!(out.is_empty(), "{out:?}");
            let _ = task.await;
            let took = t0.elapsed();
            assert!(
                took >= REQUEST_TIMEOUT && took < REQUEST_TIMEOUT * 3,
                "{trickle:?}: closed after {took:?}"
            );
        }
        async fn kept_alive() {
            let (mut client, server) = tokio::io::duplex(1 << 16);
            let task = tokio::spawn(serve_conn(server, ok));
            client
                .write_all(b"GET / HTTP/1.1\r\n\r\n")
                .await
                .expect("write");
            let mut head = [0u8; 15];
            client.read_exact(&mut head).await.expect("answer");
            tokio::time::sleep(REQUEST_TIMEOUT + Duration::from_secs(1)).await;
            client
                .write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n")
                .await
                .expect("write");
            let mut out = String::new();
            client.read_to_string(&mut out).await.expect("read");
            assert!(out.contains("HTTP/1.1 200 OK"), "{out}");
            let _ = task.await;
        }
        tokio::join!(silent(b""), silent(b"GET / HT"), kept_alive());
    }

    #[test]
    fn head_parsing() {
        let r =
            parse_head(b"GET http://h:9/metrics?x=1 HTTP/1.1\r\nAccept-Encoding: gzip;q=0\r\n\r\n")
                .expect("parses");
        assert_eq!((r.path.as_str(), r.query.as_str()), ("/metrics", "x=1"));
        assert!(!r.accepts_gzip());
        let r = parse_head(b"GET / HTTP/1.1\r\nAccept-Encoding: deflate, GZIP\r\n\r\n")
            .expect("parses");
        assert!(r.accepts_gzip());
        assert_eq!(parse_head(b"GET / HTTP/1.1\r\nHost : x\r\n\r\n"), Err(400));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn any_bytes_get_an_answer_or_a_close(input in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000)) {
            let _ = parse_head(&input);
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
            let out = rt.block_on(exchange(&input));
            proptest::prop_assert!(out.is_empty() || out.starts_with("HTTP/1.1 "), "{}", out);
        }
    }
}
