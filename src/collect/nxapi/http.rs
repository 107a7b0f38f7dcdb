//! HTTP/1.1 for NX-API and the Prometheus API, through hyper: one connection (TCP or TLS, opened
//! by the caller, which keeps its own timeouts, trust and error texts), one POST at a time on it,
//! the reply's body read up to a cap. No proxy, redirect or compression: neither API needs them.

use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::body::Bytes;
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, Version};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;

/// A large switch's `show interface` is a few MB; anything past this is not NX-API. The answer cap of every transport (`poll.max_answer_bytes` default).
pub const MAX_BODY: usize = crate::config::DEFAULT_MAX_ANSWER_BYTES;

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
    /// The server closes the connection after this reply.
    pub close: bool,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The connection was closed or reset before the reply began: a kept-alive connection the
    /// server had dropped; the request can be sent again on a new one.
    #[error("connection closed before the reply")]
    Stale(#[source] hyper::Error),
    #[error("bad HTTP reply: {0}")]
    Protocol(String),
    /// The body is over the answer cap: refused before it is read whole (`len` when the reply
    /// said it in Content-Length).
    #[error("{}", too_large(*len, *max))]
    TooLarge { len: Option<usize>, max: usize },
}

fn too_large(len: Option<usize>, max: usize) -> String {
    match len {
        Some(l) => format!("a reply of {l} bytes, over the cap of {max} bytes"),
        None => format!("a reply over the cap of {max} bytes"),
    }
}

pub struct Post<'a> {
    pub host: &'a str,
    pub path: &'a str,
    pub content_type: &'a str,
    pub authorization: Option<&'a str>,
    pub cookie: Option<&'a str>,
    /// Ask the server to close the connection after its reply (one request per connection).
    pub close: bool,
    pub body: &'a [u8],
}

/// One HTTP/1.1 connection. Dropping it closes the connection, a half-read reply included.
pub struct Conn {
    send: SendRequest<Full<Bytes>>,
    /// hyper's side of the connection (reading and writing the socket), ended on drop.
    task: JoinHandle<()>,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Conn {
    /// Start HTTP/1.1 on an open stream.
    pub async fn start<S>(io: S) -> Result<Conn, HttpError>
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let (send, conn) = http1::handshake(TokioIo::new(io))
            .await
            .map_err(|e| HttpError::Protocol(e.to_string()))?;
        let task = tokio::spawn(async move {
            // Its error is the request's: the reply future sees the same failure.
            let _ = conn.await;
        });
        Ok(Conn { send, task })
    }

    /// Send one request and read its reply, the body at most `max` bytes: a larger one stops the
    /// reading (the memory stays bounded by `max` whatever the framing) with
    /// [`HttpError::TooLarge`].
    pub async fn post(&mut self, req: &Post<'_>, max: usize) -> Result<Response, HttpError> {
        // A connection the server has closed fails here, before anything is sent.
        self.send.ready().await.map_err(HttpError::Stale)?;
        let mut r = Request::post(req.path)
            .header(header::HOST, req.host)
            .header(header::CONTENT_TYPE, req.content_type)
            .header(header::ACCEPT, "application/json")
            .header(header::USER_AGENT, "rocetop")
            .header(
                header::CONNECTION,
                if req.close { "close" } else { "keep-alive" },
            );
        if let Some(a) = req.authorization {
            r = r.header(header::AUTHORIZATION, a);
        }
        if let Some(c) = req.cookie {
            r = r.header(header::COOKIE, c);
        }
        let r = r
            .body(Full::new(Bytes::copy_from_slice(req.body)))
            .map_err(|e| HttpError::Protocol(format!("request: {e}")))?;
        let resp = self.send.send_request(r).await.map_err(|e| {
            // Closed or reset before the reply began: the kept-alive connection was stale.
            if e.is_canceled() || e.is_closed() || e.is_incomplete_message() {
                HttpError::Stale(e)
            } else {
                HttpError::Protocol(e.to_string())
            }
        })?;
        let (parts, body) = resp.into_parts();
        if let Some(len) = content_length(&parts.headers)
            && len > max
        {
            return Err(HttpError::TooLarge {
                len: Some(len),
                max,
            });
        }
        let body = Limited::new(body, max)
            .collect()
            .await
            .map_err(|e| body_error(e, max))?
            .to_bytes()
            .to_vec();
        let conn = parts
            .headers
            .get(header::CONNECTION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let close = conn.contains("close")
            || (parts.version == Version::HTTP_10 && !conn.contains("keep-alive"))
            || self.send.is_closed();
        Ok(Response {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
            close,
        })
    }
}

fn content_length(h: &HeaderMap) -> Option<usize> {
    h.get(header::CONTENT_LENGTH)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

fn body_error(e: Box<dyn std::error::Error + Send + Sync>, max: usize) -> HttpError {
    if e.is::<LengthLimitError>() {
        return HttpError::TooLarge { len: None, max };
    }
    // The reading's own failure (a body cut short, bad chunk framing).
    HttpError::Protocol(format!("reading the body: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// One connection to a local server that reads one request and writes `raw`, then closes.
    async fn exchange(raw: &'static [u8], max: usize) -> Result<Response, HttpError> {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        tokio::spawn(async move {
            let (mut s, _) = l.accept().await.expect("accept");
            let mut buf = vec![0; 4096];
            let _ = s.read(&mut buf).await;
            let _ = s.write_all(raw).await;
            let _ = s.shutdown().await;
        });
        let mut c = Conn::start(TcpStream::connect(addr).await.expect("connect")).await?;
        c.post(
            &Post {
                host: "127.0.0.1",
                path: "/ins",
                content_type: "application/json",
                authorization: Some("Basic x"),
                cookie: None,
                close: false,
                body: b"{}",
            },
            max,
        )
        .await
    }

    #[tokio::test]
    async fn framings() {
        let r = exchange(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\nSet-Cookie: nxapi_auth=x\r\n\r\nhello", MAX_BODY)
            .await
            .expect("ok");
        assert_eq!((r.status, r.body.as_slice()), (200, &b"hello"[..]));
        assert_eq!(r.header("set-cookie"), Some("nxapi_auth=x"));

        let r = exchange(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n", MAX_BODY)
            .await
            .expect("ok");
        assert_eq!(r.body, b"abcde");

        let r = exchange(b"HTTP/1.0 401 Unauthorized\r\n\r\nno", MAX_BODY)
            .await
            .expect("ok");
        assert_eq!(
            (r.status, r.body.as_slice(), r.close),
            (401, &b"no"[..], true)
        );

        let r = exchange(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            MAX_BODY,
        )
        .await
        .expect("ok");
        assert!(r.close);
    }

    #[tokio::test]
    async fn broken_replies() {
        assert!(matches!(
            exchange(b"", MAX_BODY).await,
            Err(HttpError::Stale(_))
        ));
        assert!(matches!(
            exchange(b"SSH-2.0-x\r\n", MAX_BODY).await,
            Err(HttpError::Protocol(_))
        ));
        assert!(matches!(
            exchange(
                b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
                MAX_BODY
            )
            .await,
            Err(HttpError::Protocol(_))
        ));
        assert!(matches!(
            exchange(
                b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
                MAX_BODY
            )
            .await,
            Err(HttpError::TooLarge {
                len: Some(99999999999),
                max: MAX_BODY
            })
        ));
        assert!(matches!(
            exchange(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
                MAX_BODY
            )
            .await,
            Err(HttpError::Protocol(_))
        ));
        assert!(
            exchange(b"HTTP/1.1 200 OK\r\nContent-Le", MAX_BODY)
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn the_cap_holds_for_every_framing() {
        let chunked = exchange(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n",
            4,
        );
        assert!(matches!(
            chunked.await,
            Err(HttpError::TooLarge { len: None, max: 4 })
        ));
        let unframed = exchange(b"HTTP/1.1 200 OK\r\n\r\nabcdef", 4);
        assert!(matches!(
            unframed.await,
            Err(HttpError::TooLarge { len: None, max: 4 })
        ));
        let e = exchange(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde", 4)
            .await
            .expect_err("over the cap");
        assert_eq!(e.to_string(), "a reply of 5 bytes, over the cap of 4 bytes");
        let ok = exchange(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd", 4).await;
        assert_eq!(ok.expect("at the cap").body, b"abcd");
    }
}
