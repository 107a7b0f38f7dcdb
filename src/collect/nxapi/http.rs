//! Just enough HTTP/1.1 for NX-API: one POST at a time on a kept-alive connection, replies
//! framed by Content-Length, chunked encoding, or the end of the connection.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// A large switch's `show interface` is a few MB; anything past this is not NX-API. The answer cap of every transport (`poll.max_answer_bytes` default).
pub const MAX_BODY: usize = crate::config::DEFAULT_MAX_ANSWER_BYTES;
const MAX_LINE: u64 = 16 << 10;
const MAX_HEADERS: usize = 100;

#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The server closes the connection after this reply.
    pub close: bool,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The connection was closed or reset before the reply began: a kept-alive connection the
    /// server had dropped; the request can be sent again on a new one.
    #[error("connection closed before the reply")]
    Stale(#[source] std::io::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
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
    pub authorization: &'a str,
    pub cookie: Option<&'a str>,
    pub body: &'a [u8],
}

/// Send one request and read its reply.
pub async fn exchange<S>(s: &mut S, req: &Post<'_>) -> Result<Response, HttpError>
where
    S: AsyncBufRead + AsyncWrite + Unpin,
{
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nAuthorization: {}\r\nContent-Type: application/json\r\n\
         Accept: application/json\r\nContent-Length: {}\r\nConnection: keep-alive\r\n",
        req.path,
        req.host,
        req.authorization,
        req.body.len()
    );
    if let Some(c) = req.cookie {
        head.push_str(&format!("Cookie: {c}\r\n"));
    }
    head.push_str("\r\n");
    let mut msg = head.into_bytes();
    msg.extend_from_slice(req.body);
    s.write_all(&msg).await.map_err(HttpError::Stale)?;
    s.flush().await.map_err(HttpError::Stale)?;
    read_response(s).await
}

/// Read one reply (1xx interim replies skipped), its body at most [`MAX_BODY`].
pub async fn read_response<S: AsyncBufRead + Unpin>(s: &mut S) -> Result<Response, HttpError> {
    read_response_max(s, MAX_BODY).await
}

/// Read one reply whose body may be at most `max` bytes; a larger one stops the reading (the
/// memory stays bounded by `max` whatever the framing) with [`HttpError::TooLarge`].
pub async fn read_response_max<S: AsyncBufRead + Unpin>(
    s: &mut S,
    max: usize,
) -> Result<Response, HttpError> {
    let mut first = true;
    loop {
        let line = match read_line(s).await {
            Ok(l) if l.is_empty() && first => {
                let eof = std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
                return Err(HttpError::Stale(eof));
            }
            Ok(l) => l,
            Err(e) if first && is_reset(&e) => return Err(HttpError::Stale(e)),
            Err(e) => return Err(e.into()),
        };
        first = false;
        let mut parts = line.trim_end().splitn(3, ' ');
        let version = parts.next().unwrap_or("");
        let status: u16 = parts
            .next()
            .and_then(|c| c.parse().ok())
            .filter(|_| version.starts_with("HTTP/1."))
            .ok_or_else(|| HttpError::Protocol(format!("status line {:?}", clip(&line))))?;
        let headers = read_headers(s).await?;
        if (100..200).contains(&status) {
            continue;
        }
        let get = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(n))
                .map(|(_, v)| v.to_ascii_lowercase())
        };
        let conn = get("connection").unwrap_or_default();
        let mut close =
            conn.contains("close") || (version == "HTTP/1.0" && !conn.contains("keep-alive"));
        let body = if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            read_chunked(s, max).await?
        } else if let Some(len) = get("content-length") {
            let len: usize = len
                .trim()
                .parse()
                .map_err(|_| HttpError::Protocol(format!("Content-Length {len:?}")))?;
            if len > max {
                return Err(HttpError::TooLarge {
                    len: Some(len),
                    max,
                });
            }
            let mut b = vec![0; len];
            s.read_exact(&mut b).await?;
            b
        } else if status == 204 || status == 304 {
            Vec::new()
        } else {
            // No framing: the body runs to the end of the connection.
            close = true;
            let mut b = Vec::new();
            s.take(max as u64 + 1).read_to_end(&mut b).await?;
            if b.len() > max {
                return Err(HttpError::TooLarge { len: None, max });
            }
            b
        };
        return Ok(Response {
            status,
            headers,
            body,
            close,
        });
    }
}

fn is_reset(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(
        e.kind(),
        K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof
    )
}

async fn read_headers<S: AsyncBufRead + Unpin>(
    s: &mut S,
) -> Result<Vec<(String, String)>, HttpError> {
    let mut headers = Vec::new();
    loop {
        let line = read_line(s).await?;
        if line.is_empty() {
            return Err(HttpError::Protocol("reply ends inside the headers".into()));
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Ok(headers);
        }
        let (k, v) = line
            .split_once(':')
            .ok_or_else(|| HttpError::Protocol(format!("header {:?}", clip(line))))?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
        if headers.len() > MAX_HEADERS {
            return Err(HttpError::Protocol("too many headers".into()));
        }
    }
}

async fn read_chunked<S: AsyncBufRead + Unpin>(
    s: &mut S,
    max: usize,
) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    loop {
        let line = read_line(s).await?;
        let size_hex = line.trim().split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_hex, 16)
            .map_err(|_| HttpError::Protocol(format!("chunk size {:?}", clip(&line))))?;
        if size == 0 {
            // Trailers, up to the blank line.
            while !read_line(s).await?.trim_end().is_empty() {}
            return Ok(body);
        }
        if body.len().saturating_add(size) > max {
            return Err(HttpError::TooLarge { len: None, max });
        }
        let start = body.len();
        body.resize(start + size, 0);
        s.read_exact(&mut body[start..]).await?;
        let crlf = read_line(s).await?;
        if !crlf.trim_end().is_empty() {
            return Err(HttpError::Protocol("chunk not followed by CRLF".into()));
        }
    }
}

/// One line including its `\n` (empty at end of stream), at most `MAX_LINE` bytes.
async fn read_line<S: AsyncBufRead + Unpin>(s: &mut S) -> Result<String, std::io::Error> {
    let mut buf = Vec::new();
    (&mut *s).take(MAX_LINE).read_until(b'\n', &mut buf).await?;
    if buf.len() as u64 >= MAX_LINE && buf.last() != Some(&b'\n') {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "HTTP line too long",
        ));
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

fn clip(s: &str) -> String {
    s.trim_end().chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn parse(raw: &[u8]) -> Result<Response, HttpError> {
        let mut r = BufReader::new(raw);
        read_response(&mut r).await
    }

    #[tokio::test]
    async fn framings() {
        let r = parse(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\nSet-Cookie: nxapi_auth=x\r\n\r\nhelloEXTRA")
            .await
            .expect("ok");
        assert_eq!(
            (r.status, r.body.as_slice(), r.close),
            (200, &b"hello"[..], false)
        );
        assert_eq!(r.header("set-cookie"), Some("nxapi_auth=x"));

        let r = parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: 1\r\n\r\n")
            .await
            .expect("ok");
        assert_eq!(r.body, b"abcde");

        let r = parse(b"HTTP/1.0 401 Unauthorized\r\n\r\nno")
            .await
            .expect("ok");
        assert_eq!(
            (r.status, r.body.as_slice(), r.close),
            (401, &b"no"[..], true)
        );

        let r = parse(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
            .await
            .expect("ok");
        assert!(r.close);
    }

    #[tokio::test]
    async fn broken_replies() {
        assert!(matches!(parse(b"").await, Err(HttpError::Stale(_))));
        assert!(matches!(
            parse(b"SSH-2.0-x\r\n").await,
            Err(HttpError::Protocol(_))
        ));
        assert!(matches!(
            parse(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort").await,
            Err(HttpError::Io(_))
        ));
        assert!(matches!(
            parse(b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n").await,
            Err(HttpError::TooLarge {
                len: Some(99999999999),
                max: MAX_BODY
            })
        ));
        assert!(matches!(
            parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").await,
            Err(HttpError::Protocol(_))
        ));
        assert!(matches!(
            parse(b"HTTP/1.1 200 OK\r\nContent-Le").await,
            Err(HttpError::Protocol(_))
        ));
    }

    #[tokio::test]
    async fn the_cap_holds_for_every_framing() {
        let cap = |raw: &'static [u8]| async move {
            let mut r = BufReader::new(raw);
            read_response_max(&mut r, 4).await
        };
        let chunked = cap(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n");
        assert!(matches!(
            chunked.await,
            Err(HttpError::TooLarge { len: None, max: 4 })
        ));
        let unframed = cap(b"HTTP/1.1 200 OK\r\n\r\nabcdef");
        assert!(matches!(
            unframed.await,
            Err(HttpError::TooLarge { len: None, max: 4 })
        ));
        let e = cap(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde")
            .await
            .expect_err("over the cap");
        assert_eq!(e.to_string(), "a reply of 5 bytes, over the cap of 4 bytes");
        let ok = cap(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcd").await;
        assert_eq!(ok.expect("at the cap").body, b"abcd");
    }

    proptest::proptest! {
        // Whatever a peer sends, the reader answers with a reply or an error, never a panic.
        #[test]
        fn any_bytes_no_panic(raw in proptest::collection::vec(proptest::num::u8::ANY, 0..400), cut in 0usize..200) {
            let good = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
            let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
            rt.block_on(async {
                let _ = parse(&raw).await;
                let _ = parse(&good[..cut.min(good.len())]).await;
                let mut mixed = good.to_vec();
                mixed.splice(cut.min(mixed.len())..cut.min(mixed.len()), raw.iter().copied());
                let _ = parse(&mixed).await;
            });
        }
    }
}
