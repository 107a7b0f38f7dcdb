//! The SSH transport: one russh connection per host, opened once (lazily or with
//! [`SshTransport::connect`]) and reused for every request; each request is an exec channel.
//! docs/architecture.md explains the choices (channel limit, draining tasks, keepalive, host-key
//! algorithms, switches that close the connection after an exec).

mod alias;
mod auth;
pub(crate) mod batch;
mod conn;
mod hostkey;
mod sizes;

mod target;

pub use alias::{ResolvedHost, host_lines, names_host, parse_jump, resolve_alias};
pub use conn::NODE_MAX_PACKET;
pub use target::{HostKeyPolicy, LegacyAlgorithms, PasswordSource, SshTarget};
pub(crate) use target::{home, tilde};

use super::transport::{Answers, CollectError, Request, StreamEvent, Transport};
use async_trait::async_trait;
use conn::{Conn, ExecFail};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};
use tokio::sync::{Mutex, mpsc};

/// Connection state of one host, behind an async mutex so concurrent calls share one connect.
#[derive(Default)]
struct ConnState {
    conn: Option<Arc<Conn>>,
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<CollectError>,
}

/// The SSH [`Transport`]: one connection per host, reused; see the module doc.
pub struct SshTransport {
    target: Arc<SshTarget>,
    state: Mutex<ConnState>,
    /// Learned: this host closes the whole connection when an exec channel ends.
    closes_after_exec: AtomicBool,
    /// The current failure and since when, for the source's panel.
    status: std::sync::Mutex<Option<(CollectError, SystemTime)>>,
}

impl std::fmt::Debug for SshTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl SshTransport {
    pub fn new(target: SshTarget) -> Self {
        SshTransport {
            target: Arc::new(target),
            state: Mutex::new(ConnState::default()),
            closes_after_exec: AtomicBool::new(false),
            status: std::sync::Mutex::new(None),
        }
    }

    pub fn target(&self) -> &SshTarget {
        &self.target
    }

    /// Open the connection now (connect + authenticate) instead of on the first request.
    pub async fn connect(&self) -> Result<(), CollectError> {
        self.conn().await.map(|_| ())
    }

    /// Whether this host was seen closing the connection after an exec (switches).
    pub fn closes_after_exec(&self) -> bool {
        self.closes_after_exec.load(Ordering::Relaxed)
    }

    /// The failure the last call ended with and since when it has been failing; `None`
    /// while the host answers.
    pub fn failing_since(&self) -> Option<(CollectError, SystemTime)> {
        self.status.lock().ok().and_then(|s| s.clone())
    }

    /// Whether a connection is open now.
    pub async fn is_connected(&self) -> bool {
        let st = self.state.lock().await;
        st.conn.as_ref().is_some_and(|c| !c.is_closed())
    }

    fn set_status(&self, r: Option<&CollectError>) {
        if let Ok(mut s) = self.status.lock() {
            match r {
                None => *s = None,
                Some(e) => {
                    let since = s.as_ref().map_or_else(SystemTime::now, |(_, t)| *t);
                    *s = Some((e.clone(), since));
                }
            }
        }
    }

    /// The open connection, or a new one; fails fast during the backoff window.
    async fn conn(&self) -> Result<Arc<Conn>, CollectError> {
        let mut st = self.state.lock().await;
        if let Some(c) = &st.conn {
            if !c.is_closed() {
                return Ok(c.clone());
            }
            let why = c.closed_reason();
            if self.target.switch_mode && c.served() > 0 {
                // A switch connection that answered and then hung up between polls: some
                // network OSes end the connection with each exec.
                self.closes_after_exec.store(true, Ordering::Relaxed);
            }
            st.conn = None;
            // A switch that hangs up after every exec is working as designed.
            if !(self.target.switch_mode && self.closes_after_exec()) {
                st.last_error = Some(CollectError::Connect(why));
            }
        }
        let now = Instant::now();
        if let (Some(at), Some(e)) = (st.retry_at, &st.last_error)
            && now < at
        {
            let secs = (at - now).as_secs_f64().ceil().max(1.0);
            return Err(with_suffix(e, &format!("; retrying in {secs} s")));
        }
        let t = &self.target;
        let res = match tokio::time::timeout(t.connect_timeout, conn::open(t)).await {
            Ok(r) => r,
            Err(_) => Err(CollectError::Timeout(t.connect_timeout)),
        };
        match res {
            Ok(c) => {
                let c = Arc::new(c);
                st.conn = Some(c.clone());
                st.failures = 0;
                st.retry_at = None;
                st.last_error = None;
                Ok(c)
            }
            Err(e) => {
                st.failures = st.failures.saturating_add(1);
                st.retry_at = Some(now + backoff(t, st.failures));
                st.last_error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Forget `c` (it died, or this switch hangs up after each exec).
    async fn drop_conn(&self, c: &Arc<Conn>, why: Option<String>) {
        let mut st = self.state.lock().await;
        if st.conn.as_ref().is_some_and(|x| Arc::ptr_eq(x, c)) {
            st.conn = None;
            if let Some(w) = why {
                st.last_error = Some(CollectError::Connect(w));
            }
        }
    }

    /// One exec on the shared connection; the connection is dropped if it died.
    async fn exec_once(&self, cmd: &str) -> Result<String, ExecFail> {
        let c = self.conn().await.map_err(ExecFail::Other)?;
        let r = c.exec(cmd).await;
        match &r {
            Err(ExecFail::Lost(why)) => {
                if self.target.switch_mode && c.served() > 0 {
                    // It answered an exec and then hung up: that is how this switch works.
                    self.closes_after_exec.store(true, Ordering::Relaxed);
                    self.drop_conn(&c, None).await;
                } else {
                    self.drop_conn(&c, Some(why.clone())).await;
                }
            }
            Ok(_) if self.target.switch_mode && self.closes_after_exec() => {
                self.drop_conn(&c, None).await;
            }
            _ => {}
        }
        r
    }

    /// An exec with one retry on a fresh connection when the first one turned out dead
    /// (a stale connection, or a switch that closes after each exec).
    async fn exec(&self, cmd: &str) -> Result<String, CollectError> {
        match self.exec_once(cmd).await {
            Ok(s) => Ok(s),
            Err(ExecFail::Lost(why)) => match self.exec_once(cmd).await {
                Ok(s) => Ok(s),
                Err(ExecFail::Lost(_)) => Err(CollectError::Connect(why)),
                Err(ExecFail::Other(e)) => Err(e),
            },
            Err(ExecFail::Other(e)) => Err(e),
        }
    }

    async fn run_cmd(&self, cmd: &str, timeout: Duration) -> Result<String, CollectError> {
        let r = match tokio::time::timeout(timeout, self.exec(cmd)).await {
            Ok(r) => r,
            Err(_) => Err(CollectError::Timeout(timeout)),
        };
        match &r {
            Ok(_) | Err(CollectError::Command { .. }) => self.set_status(None),
            Err(e) => self.set_status(Some(e)),
        }
        r
    }
}

/// Open the connections of many hosts at start: at most `concurrency` handshakes at once,
/// each started `stagger` after the previous, so hundreds of nodes neither trip sshd's
/// MaxStartups nor take the CPU at once. Results are in the order given.
pub async fn connect_all(
    transports: &[&SshTransport],
    concurrency: usize,
    stagger: Duration,
) -> Vec<Result<(), CollectError>> {
    use futures::StreamExt;
    let start = tokio::time::Instant::now();
    futures::stream::iter(transports.iter().enumerate())
        .map(|(i, t)| async move {
            let at = start + stagger.saturating_mul(u32::try_from(i).unwrap_or(u32::MAX));
            tokio::time::sleep_until(at).await;
            t.connect().await
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}

/// Exponential backoff scaled by the host's own 0.8–1.2 factor, so hosts that failed together do
/// not retry together.
fn backoff(t: &SshTarget, failures: u32) -> Duration {
    let exp = failures.saturating_sub(1).min(16);
    let base = t
        .reconnect_min
        .saturating_mul(1u32 << exp)
        .min(t.reconnect_max);
    base.mul_f64(crate::collect::spread::spread(&t.name))
}

/// The same error with more words, for "…; retrying in 3 s".
fn with_suffix(e: &CollectError, s: &str) -> CollectError {
    match e {
        CollectError::Refused(m) => CollectError::Refused(format!("{m}{s}")),
        CollectError::Connect(m) => CollectError::Connect(format!("{m}{s}")),
        CollectError::Auth(m) => CollectError::Auth(format!("{m}{s}")),
        CollectError::HostKey(m) => CollectError::HostKey(format!("{m}{s}")),
        CollectError::Io(m) => CollectError::Io(format!("{m}{s}")),
        CollectError::Unavailable(m) => CollectError::Unavailable(format!("{m}{s}")),
        other => CollectError::Connect(format!("{other}{s}")),
    }
}

#[async_trait]
impl Transport for SshTransport {
    async fn warm_up(&self) -> Result<(), CollectError> {
        self.connect().await
    }

    async fn run(&self, req: &Request, timeout: Duration) -> Result<String, CollectError> {
        self.run_cmd(&req.shell(), timeout).await
    }

    /// A host's requests run in one exec (batch.rs); a switch's in parallel, one exec channel
    /// each (at most `max_channels` at once).
    /// A switch that closes the connection after each exec gets its CLI commands in ONE exec,
    /// joined by " ; ", on a fresh connection per poll: the whole output is returned in the
    /// first slot and the others are empty (NX-OS prints nothing between the commands'
    /// outputs, so splitting by section starts is the parser's job).
    async fn run_all(
        &self,
        reqs: &[Request],
        timeout: Duration,
    ) -> Vec<Result<String, CollectError>> {
        self.run_poll(reqs, timeout).await.each
    }

    async fn run_poll(&self, reqs: &[Request], timeout: Duration) -> Answers {
        let separate = |each| Answers {
            each,
            joined: Vec::new(),
        };
        let all_cli = reqs.iter().all(|r| matches!(r, Request::Cli(_)));
        if self.target.switch_mode && all_cli && self.closes_after_exec() && reqs.len() > 1 {
            return Answers {
                each: self.run_joined(reqs, timeout).await,
                joined: (0..reqs.len()).collect(),
            };
        }
        // A Linux host's requests of one poll: one exec, one shell (see batch.rs).
        let host_reqs = reqs.iter().all(|r| {
            matches!(
                r,
                Request::SysfsDump { .. }
                    | Request::Ethtool { .. }
                    | Request::Tail { .. }
                    | Request::Lldp
                    | Request::HostQos { .. }
                    | Request::Gpu { .. }
                    | Request::GpuTopo { .. }
            )
        });
        if !self.target.switch_mode && host_reqs && reqs.len() > 1 {
            let nonce = batch::nonce();
            let cmds: Vec<String> = reqs.iter().map(Request::shell).collect();
            return separate(
                match self.run_cmd(&batch::join(&cmds, &nonce), timeout).await {
                    Ok(out) => batch::split(&out, &nonce, reqs.len()),
                    Err(e) => vec![Err(e); reqs.len()],
                },
            );
        }
        let mut out = futures::future::join_all(reqs.iter().map(|r| self.run(r, timeout))).await;
        // Learned during this poll: redo what the hang-up cut off, joined.
        if self.target.switch_mode && all_cli && self.closes_after_exec() {
            let failed: Vec<usize> = (0..out.len())
                .filter(|&i| matches!(out.get(i), Some(Err(CollectError::Connect(_)))))
                .collect();
            if !failed.is_empty() {
                let again: Vec<Request> = failed
                    .iter()
                    .filter_map(|&i| reqs.get(i).cloned())
                    .collect();
                let redo = self.run_joined(&again, timeout).await;
                for (&i, r) in failed.iter().zip(redo) {
                    if let Some(slot) = out.get_mut(i) {
                        *slot = r;
                    }
                }
                if failed.len() > 1 {
                    return Answers {
                        each: out,
                        joined: failed,
                    };
                }
            }
        }
        separate(out)
    }

    async fn stream(&self, req: &Request) -> Result<mpsc::Receiver<StreamEvent>, CollectError> {
        let cmd = req.shell();
        let c = self.conn().await?;
        match c.stream(&cmd).await {
            Ok(rx) => Ok(rx),
            Err(ExecFail::Lost(why)) => {
                self.drop_conn(&c, Some(why)).await;
                let c = self.conn().await?;
                c.stream(&cmd).await.map_err(ExecFail::into_error)
            }
            Err(ExecFail::Other(e)) => Err(e),
        }
    }

    fn streams_polls(&self) -> bool {
        self.target.stream && !self.target.switch_mode
    }

    async fn stream_shell(&self, cmd: &str) -> Result<super::transport::ShellStream, CollectError> {
        let c = self.conn().await;
        let r = match c {
            Ok(c) => match c.stream_bytes(cmd).await {
                Ok(rx) => Ok(rx),
                Err(ExecFail::Lost(why)) => {
                    self.drop_conn(&c, Some(why)).await;
                    match self.conn().await {
                        Ok(c) => c.stream_bytes(cmd).await.map_err(ExecFail::into_error),
                        Err(e) => Err(e),
                    }
                }
                Err(ExecFail::Other(e)) => Err(e),
            },
            Err(e) => Err(e),
        };
        match &r {
            Ok(_) => self.set_status(None),
            Err(e) => self.set_status(Some(e)),
        }
        r
    }

    fn describe(&self) -> String {
        let t = &self.target;
        match &t.proxy_jump {
            Some(j) => format!("ssh {}@{}:{} via {}", t.user, t.host, t.port, j.host),
            None => format!("ssh {}@{}:{}", t.user, t.host, t.port),
        }
    }
}

impl SshTransport {
    async fn run_joined(
        &self,
        reqs: &[Request],
        timeout: Duration,
    ) -> Vec<Result<String, CollectError>> {
        let joined = reqs
            .iter()
            .map(Request::shell)
            .collect::<Vec<_>>()
            .join(" ; ");
        let first = self.run_cmd(&joined, timeout).await;
        let rest_ok = first.is_ok();
        let mut out = vec![first];
        for _ in 1..reqs.len() {
            out.push(if rest_ok {
                Ok(String::new())
            } else {
                Err(CollectError::Unavailable(
                    "sent with the first command, which failed".into(),
                ))
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let t = SshTarget::new("n", "127.0.0.1", 22, "u");
        let b1 = backoff(&t, 1);
        let b3 = backoff(&t, 3);
        assert!(b1 >= Duration::from_millis(800) && b1 <= Duration::from_millis(1200));
        assert!(b3 >= Duration::from_millis(3200) && b3 <= Duration::from_millis(4800));
        assert!(backoff(&t, 40) <= Duration::from_secs(72));
    }

    /// Each failure doubles the wait (within the ±20 % jitter) up to `reconnect_max`, and hosts
    /// that failed together (one switch reboot, 50 nodes) spread their retries over that ±20 %.
    #[test]
    fn backoff_doubles_with_jitter_so_hosts_that_failed_together_retry_apart() {
        let t = SshTarget::new("n", "127.0.0.1", 22, "u");
        for n in 1..=6u32 {
            let base = t
                .reconnect_min
                .saturating_mul(1 << (n - 1))
                .min(t.reconnect_max);
            let b = backoff(&t, n);
            assert!(
                b >= base.mul_f64(0.8) && b <= base.mul_f64(1.2),
                "failure {n}: {b:?} is not {base:?} ± 20 %"
            );
        }
        let waits: Vec<Duration> = (0..50)
            .map(|i| backoff(&SshTarget::new(&format!("n{i}"), "127.0.0.1", 22, "u"), 3))
            .collect();
        let base = t.reconnect_min * 4;
        let (lo, hi) = (
            waits.iter().min().copied().unwrap_or_default(),
            waits.iter().max().copied().unwrap_or_default(),
        );
        assert!(
            hi - lo >= base.mul_f64(0.2),
            "50 hosts retry within {:?} of each other",
            hi - lo
        );
        let mut ms: Vec<u128> = waits.iter().map(Duration::as_millis).collect();
        ms.sort_unstable();
        ms.dedup();
        assert!(
            ms.len() >= 40,
            "retries collide: {} distinct of 50",
            ms.len()
        );
    }

    #[test]
    fn suffix_keeps_the_kind() {
        let e = with_suffix(
            &CollectError::Refused(" (127.0.0.1:2)".into()),
            "; retrying in 2 s",
        );
        assert_eq!(
            e.to_string(),
            "connection refused (127.0.0.1:2); retrying in 2 s"
        );
        let e = with_suffix(
            &CollectError::Timeout(Duration::from_secs(5)),
            "; retrying in 2 s",
        );
        assert_eq!(
            e.to_string(),
            "cannot connect: timed out after 5 s; retrying in 2 s"
        );
    }

    #[test]
    fn host_port_is_known_hosts_style() {
        assert_eq!(SshTarget::new("a", "h", 22, "u").host_port(), "h");
        assert_eq!(
            SshTarget::new("a", "127.0.0.1", 2222, "u").host_port(),
            "[127.0.0.1]:2222"
        );
    }
}
