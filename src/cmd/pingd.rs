//! `rocetop pingd`: the responder latency pings talk to. TCP pings are echoed byte for byte; an RDMA
//! session (feature `verbs`) gets its own RC QP, set up over the same TCP connection, and its probes
//! echoed by a thread that busy-polls the CQ. One line at start says what it serves.

use crate::collect::ping::proto::{HELLO_LEN, Hello, Mode, Msg, ProtoError};
use crate::collect::ping::{QpType, VerbsOptions, tcp};
use std::io;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

#[derive(Clone, Debug)]
pub struct Options {
    pub listen: String,
    pub verbs: VerbsOptions,
    /// RDMA: the most the CQ is busy-polled after each probe of a pinger faster than one probe
    /// per 2 ms (slower ones are slept for until just before each probe); 0 polls every 50 µs.
    pub spin: Duration,
}

/// "RDMA: devices rocep19s0; device and GID chosen per session ...", or why there is none.
pub fn rdma_status(opts: &VerbsOptions) -> String {
    #[cfg(feature = "verbs")]
    let s = crate::collect::ping::verbs::describe(opts);
    #[cfg(not(feature = "verbs"))]
    let s = {
        let _ = opts;
        "built without verbs".to_string()
    };
    format!("RDMA: {}", s.strip_prefix("RDMA ").unwrap_or(&s))
}

/// Sessions open at once; a connection beyond them is closed at once (a cluster's pingers open
/// one per peer and transport, so hundreds, not thousands).
pub const MAX_SESSIONS: usize = 1024;
/// Sessions open at once from one address (a pinger opens one per transport to each peer): one
/// host keeping idle sessions alive cannot take the others' places.
pub const MAX_PER_SOURCE: usize = 16;
/// A TCP session that sends nothing for this long after its hello is closed (pingers probe every
/// poll interval, seconds apart), so idle connections cannot pile up to the cap.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// The hello must arrive this soon after connecting, and an RDMA session's whole handshake
/// (period and endpoint, `verbs::responder`) this soon after the hello.
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// Accept and answer pings until the future is dropped (which also ends every TCP session).
/// An accept error (out of file descriptors under a connection flood) is waited out with a
/// growing pause, never the end of the daemon.
pub async fn serve(listener: TcpListener, opts: Arc<Options>) -> io::Result<()> {
    let mut sessions = JoinSet::new();
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_SESSIONS));
    let sources = Sources::default();
    let mut backoff = Duration::from_millis(10);
    let mut refused = 0u64;
    loop {
        let (s, peer) = match listener.accept().await {
            Ok(x) => x,
            Err(e) => {
                if backoff == Duration::from_millis(10) {
                    crate::safe::eprintln(&format!("pingd: accept failed ({e}); retrying"));
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
                continue;
            }
        };
        backoff = Duration::from_millis(10);
        while sessions.try_join_next().is_some() {}
        let slot = match sources.take(peer.ip()) {
            None => Err(format!("{MAX_PER_SOURCE} sessions open from {}", peer.ip())),
            Some(mine) => match slots.clone().try_acquire_owned() {
                Ok(all) => Ok((all, mine)),
                Err(_) => Err(format!("{MAX_SESSIONS} sessions open")),
            },
        };
        let Ok(slot) = slot.inspect_err(|why| {
            // Closed unanswered; said once per 1000 so a flood does not flood stderr too.
            if refused % 1000 == 0 {
                crate::safe::eprintln(&format!("pingd: {peer}: refused, {why}"));
            }
            refused += 1;
        }) else {
            continue;
        };
        let opts = opts.clone();
        sessions.spawn(async move {
            match session(s, &opts).await {
                Ok(mode) => crate::safe::eprintln(&format!("pingd: {peer}: {mode} session ended")),
                Err(e) => crate::safe::eprintln(&format!("pingd: {peer}: {}", tcp::why(&e))),
            }
            drop(slot);
        });
    }
}

/// Sessions open per source address.
#[derive(Clone, Default)]
struct Sources(Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>);

impl Sources {
    /// One more session from `ip`, held until the guard drops; `None` past [`MAX_PER_SOURCE`].
    fn take(&self, ip: std::net::IpAddr) -> Option<SourceSlot> {
        let mut m = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let n = m.entry(ip).or_insert(0);
        if *n >= MAX_PER_SOURCE {
            return None;
        }
        *n += 1;
        Some(SourceSlot(self.clone(), ip))
    }
}

struct SourceSlot(Sources, std::net::IpAddr);

impl Drop for SourceSlot {
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

async fn session(mut s: TcpStream, opts: &Options) -> io::Result<&'static str> {
    s.set_nodelay(true)?;
    let mut hello = [0u8; HELLO_LEN];
    tokio::time::timeout(HELLO_TIMEOUT, s.read_exact(&mut hello))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "no hello within 5 s"))??;
    let hello = match Hello::decode(&hello) {
        Ok(h) => h,
        Err(e) => {
            if e == ProtoError::OldRdma {
                // An older pinger shows this sentence; closing without it would say only "closed".
                let why = Msg::Refuse(e.to_string()).encode().unwrap_or_default();
                let _ = s.write_all(&why).await;
            }
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
    };
    match hello.mode {
        Mode::Tcp => {
            // Echo whatever arrives at once: probes are timed by the pinger, not here.
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let n = tokio::time::timeout(IDLE_TIMEOUT, s.read(&mut buf))
                    .await
                    .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "idle for 60 s"))??;
                if n == 0 {
                    return Ok("tcp");
                }
                tokio::time::timeout(IDLE_TIMEOUT, s.write_all(&buf[..n]))
                    .await
                    .map_err(|_| {
                        io::Error::new(io::ErrorKind::TimedOut, "echo not read for 60 s")
                    })??;
            }
        }
        Mode::Rdma => rdma(s, opts, QpType::Rc).await.map(|_| "rdma"),
        Mode::RdmaUd => rdma(s, opts, QpType::Ud).await.map(|_| "rdma ud"),
    }
}

/// What RDMA sessions cost pingd, for its start line.
pub fn spin_cost(spin: Duration) -> String {
    if spin.is_zero() {
        "RDMA sessions poll every 50 µs (replies up to ~0.1 ms late)".into()
    } else {
        format!(
            "each RDMA session sleeps until just before its pinger's next probe is due (about \
             0.3 % of a core at 10 probes/s); pingers faster than one probe per 2 ms are \
             busy-polled 1.25 periods after each probe (at most {spin:?})"
        )
    }
}

/// Threads for blocking work: every RDMA session holds one for its life, so the pool holds as many
/// as sessions may be open (tokio's default of 512 left sessions past it queued, never served),
/// and a few for other blocking calls.
pub const BLOCKING_THREADS: usize = MAX_SESSIONS + 16;
const _: () = assert!(
    BLOCKING_THREADS >= MAX_SESSIONS,
    "every session gets its thread"
);

#[cfg(feature = "verbs")]
async fn rdma(s: TcpStream, opts: &Options, qp_type: QpType) -> io::Result<()> {
    use crate::collect::ping::verbs;
    let peer = s.peer_addr()?;
    let std = s.into_std()?;
    std.set_nonblocking(false)?;
    let vo = VerbsOptions {
        qp_type,
        ..opts.verbs.clone()
    };
    let (device, spin) = (verbs::Verbs(vo), opts.spin);
    tokio::task::spawn_blocking(move || {
        let log = |l: String| crate::safe::eprintln(&format!("pingd: {peer}: {l}"));
        verbs::serve(std, &device, spin, &log).map_err(io::Error::other)
    })
    .await
    .map_err(io::Error::other)?
}

#[cfg(not(feature = "verbs"))]
async fn rdma(mut s: TcpStream, _opts: &Options, _qp_type: QpType) -> io::Result<()> {
    let why = Msg::Refuse("RDMA pings: pingd built without verbs".into());
    s.write_all(&why.encode().map_err(io::Error::other)?)
        .await?;
    Ok(())
}

/// `rocetop pingd`: bind, say what is served, answer until killed.
pub fn run(opts: Options) -> ExitCode {
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(BLOCKING_THREADS)
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            crate::safe::eprintln(&format!("rocetop: cannot start the async runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    rt.block_on(async {
        let listener = match TcpListener::bind(&opts.listen).await {
            Ok(l) => l,
            Err(e) => {
                crate::safe::eprintln(&format!(
                    "rocetop pingd: cannot listen on {}: {e}",
                    opts.listen
                ));
                return ExitCode::from(2);
            }
        };
        let addr = listener
            .local_addr()
            .map_or(opts.listen.clone(), |a| a.to_string());
        crate::safe::eprintln(&format!(
            "pingd listening on {addr}; {}; {}",
            rdma_status(&opts.verbs),
            spin_cost(opts.spin)
        ));
        match serve(listener, Arc::new(opts)).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                crate::safe::eprintln(&format!("rocetop pingd: {e}"));
                ExitCode::from(1)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_line_says_what_rdma_can_do() {
        let s = rdma_status(&VerbsOptions::default());
        if cfg!(feature = "verbs") {
            if !std::path::Path::new("/sys/class/infiniband").exists() {
                assert_eq!(s, "RDMA: unavailable on this host: no devices");
            }
        } else {
            assert_eq!(s, "RDMA: built without verbs");
        }
    }

    #[test]
    fn the_start_line_says_what_spinning_costs() {
        assert_eq!(
            spin_cost(Duration::from_secs(1)),
            "each RDMA session sleeps until just before its pinger's next probe is due (about 0.3 % \
             of a core at 10 probes/s); pingers faster than one probe per 2 ms are busy-polled 1.25 \
             periods after each probe (at most 1s)"
        );
        assert!(spin_cost(Duration::ZERO).contains("every 50 µs"));
    }

    #[tokio::test]
    async fn a_stranger_is_turned_away_and_rdma_is_refused_or_served() {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = l.local_addr().expect("addr");
        let opts = Arc::new(Options {
            listen: addr.to_string(),
            verbs: VerbsOptions::default(),
            spin: Duration::from_millis(1),
        });
        let server = tokio::spawn(serve(l, opts));
        let mut s = TcpStream::connect(addr).await.expect("connect");
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").await.expect("write");
        let mut b = Vec::new();
        // Closed (or reset: the request was left unread), never answered.
        let _ = s.read_to_end(&mut b).await;
        assert!(b.is_empty(), "no answer to a stranger");
        // An RDMA pinger of protocol 1 (no RoCE versions in its Info) is told why.
        let mut s = TcpStream::connect(addr).await.expect("connect");
        s.write_all(b"RTPING\x01R").await.expect("w");
        let mut b = Vec::new();
        let _ = s.read_to_end(&mut b).await;
        assert_eq!(
            Msg::decode(&b).map(|m| m.0),
            Ok(Msg::Refuse(ProtoError::OldRdma.to_string()))
        );
        if !cfg!(feature = "verbs") {
            let mut s = TcpStream::connect(addr).await.expect("connect");
            s.write_all(&Hello { mode: Mode::Rdma }.encode())
                .await
                .expect("w");
            let mut b = Vec::new();
            s.read_to_end(&mut b).await.expect("read");
            assert_eq!(
                Msg::decode(&b).map(|m| m.0),
                Ok(Msg::Refuse("RDMA pings: pingd built without verbs".into()))
            );
        }
        server.abort();
    }
}
