//! `[[prometheus]]`: a fleet read from an existing Prometheus (DESIGN.md §4 names, issue #17).
//!
//! Each poll asks one query per profile the server holds (never one per node), all evaluated at
//! the same time T, a multiple of `step` (the scrape interval). Each query is a range selector
//! over the last two steps, so the answer carries every series' raw samples with their scrape
//! times: the mapping reads the newest sample in (T - step, T] and leaves out a series that has
//! none (a target that went down, a series gone stale without a staleness marker) instead of
//! reading its old value again, which an instant query would give for 5 minutes and which would
//! read as a rate of 0. Counters come in as counters, with T as the sample time, and the store's
//! rate.rs computes rates, resets and gaps as for every other source: consecutive polls read
//! consecutive scrapes, so a rate is exact per scrape interval. (Server-side `rate()` would give
//! gauges the tabs do not read, and hide resets.) The raw answers go into one text, after a
//! header with the node label and the window (`parse::prom_api` reads it), so record/replay maps
//! them again.

pub mod http;

use crate::collect::nxapi::{secret, tls};
use crate::collect::{CollectError, Request, Transport};
use crate::config::{PromAuth, Prometheus};
use crate::metrics::{Ts, now_ms};
use crate::parse::prom_api::{self, DETECT_SELECTOR, NOTHING_TO_READ, Profile};
use async_trait::async_trait;
use base64::Engine as _;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;

/// The profiles are asked again this often (in polls), so an exporter enabled later shows up.
const DETECT_EVERY: u64 = 20;

/// The wall clock in [`Ts`]; tests give a clock that walks through a backfilled past.
pub type Clock = Arc<dyn Fn() -> Ts + Send + Sync>;

pub struct PromTransport {
    cfg: Prometheus,
    tls: Option<http::Tls>,
    clock: Clock,
    state: Mutex<State>,
    /// The evaluation time of the last answer (the poll's sample time).
    answered: std::sync::Mutex<Option<Ts>>,
}

#[derive(Default)]
struct State {
    last_t: Option<Ts>,
    profiles: Vec<Profile>,
    polls: u64,
    authorization: Option<String>,
    /// Requests sent so far (the bench reports queries per refresh).
    queries: u64,
}

impl fmt::Debug for PromTransport {
    // By hand, so that no credential can reach a log line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromTransport")
            .field("name", &self.cfg.name)
            .field("url", &self.cfg.url)
            .finish_non_exhaustive()
    }
}

impl PromTransport {
    pub fn new(cfg: &Prometheus, clock: Clock) -> Result<Self, String> {
        let tls = if cfg.url.tls {
            let trust = match &cfg.ca_file {
                Some(f) => tls::Trust::CaFile(f.clone()),
                None => tls::Trust::SystemRoots,
            };
            let name = rustls::pki_types::ServerName::try_from(cfg.url.host.clone())
                .map_err(|_| format!("{:?} is not a host name or address", cfg.url.host))?;
            Some(http::Tls {
                config: tls::client_config(&trust)?,
                name,
            })
        } else {
            None
        };
        Ok(Self {
            cfg: cfg.clone(),
            tls,
            clock,
            state: Mutex::new(State::default()),
            answered: std::sync::Mutex::new(None),
        })
    }

    pub fn live(cfg: &Prometheus) -> Result<Self, String> {
        Self::new(cfg, Arc::new(now_ms))
    }

    /// Requests sent to the server so far.
    pub async fn queries(&self) -> u64 {
        self.state.lock().await.queries
    }

    /// The selector of one profile with the configured matchers.
    fn selector(&self, names: &str) -> String {
        if self.cfg.matchers.is_empty() {
            format!("{{{names}}}")
        } else {
            format!("{{{names},{}}}", self.cfg.matchers)
        }
    }

    /// A profile's query: its series' raw samples over the last two steps (the mapping keeps the
    /// newest in the last step; the step before tells a series that just missed a scrape).
    pub fn query(&self, p: Profile) -> String {
        format!(
            "{}[{}ms]",
            self.selector(p.selector()),
            2 * self.cfg.step.as_millis().max(1)
        )
    }

    /// The evaluation time of this poll: the newest step boundary that every scrape of the step
    /// before has had time to land on (a lag of a third of a step, at most 5 s), never one already
    /// read.
    async fn eval_time(&self, last: Option<Ts>) -> Ts {
        let step = self.cfg.step.as_millis().max(1) as Ts;
        let lag = (step / 3).min(5_000);
        let now = (self.clock)();
        let t = (now - lag).div_euclid(step) * step;
        match last {
            Some(l) if t <= l => {
                let next = l + step;
                let wait = (next + lag - now).clamp(0, step);
                tokio::time::sleep(Duration::from_millis(wait as u64)).await;
                next
            }
            _ => t,
        }
    }

    async fn authorization(&self, st: &mut State) -> Result<Option<String>, CollectError> {
        if st.authorization.is_some() {
            return Ok(st.authorization.clone());
        }
        let auth = |e: String| CollectError::Auth(format!("{}: {e}", self.cfg.name));
        let a = match &self.cfg.auth {
            PromAuth::None => return Ok(None),
            PromAuth::Bearer(s) => format!("Bearer {}", secret::resolve(s).await.map_err(auth)?),
            PromAuth::Basic { user, password } => {
                let pw = secret::resolve(password).await.map_err(auth)?;
                let b = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pw}"));
                format!("Basic {b}")
            }
        };
        st.authorization = Some(a);
        Ok(st.authorization.clone())
    }

    async fn ask(
        &self,
        query: &str,
        t: Ts,
        timeout: Duration,
        auth: Option<&str>,
    ) -> Result<String, CollectError> {
        let form = format!(
            "query={}&time={}.{:03}&timeout={}s",
            http::form_encode(query),
            t.div_euclid(1000),
            t.rem_euclid(1000),
            timeout.as_secs().max(1)
        );
        let call = http::post(
            &self.cfg.url,
            self.tls.as_ref(),
            "/api/v1/query",
            &form,
            auth,
            self.cfg.max_answer_bytes,
        );
        tokio::time::timeout(timeout, call)
            .await
            .map_err(|_| CollectError::Timeout(timeout))?
    }

    async fn poll(&self, timeout: Duration) -> Result<String, CollectError> {
        let mut st = self.state.lock().await;
        if let Ok(mut a) = self.answered.lock() {
            *a = None;
        }
        let t = self.eval_time(st.last_t).await;
        let auth = self.authorization(&mut st).await?;
        let auth = auth.as_deref();
        if st.profiles.is_empty() || st.polls % DETECT_EVERY == 0 {
            let q = format!("count by (__name__)({})", self.selector(DETECT_SELECTOR));
            st.queries += 1;
            let answer = self.ask(&q, t, timeout, auth).await;
            if matches!(answer, Err(CollectError::Auth(_))) {
                st.authorization = None;
            }
            st.profiles = prom_api::profiles(&answer?).map_err(CollectError::Io)?;
            if st.profiles.is_empty() {
                return Err(CollectError::Unavailable(NOTHING_TO_READ.into()));
            }
        }
        st.polls += 1;
        let asks = st
            .profiles
            .iter()
            .map(|p| async move { (*p, self.ask(&self.query(*p), t, timeout, auth).await) });
        let answers = futures::future::join_all(asks).await;
        st.queries += answers.len() as u64;
        let mut text = format!(
            "# node_label {}\n# at {t} step {}\n",
            self.cfg.node_label,
            self.cfg.step.as_millis().max(1)
        );
        let mut first_err = None;
        for (p, a) in &answers {
            match a {
                Ok(body) => {
                    text.push_str(&format!("# query {}\n", p.name()));
                    // One answer per line; JSON has no raw newline inside a string. (Prometheus
                    // writes none: the common case is one copy.)
                    if body.contains('\n') {
                        text.push_str(&body.replace('\n', " "));
                    } else {
                        text.push_str(body);
                    }
                    text.push('\n');
                }
                Err(e) => {
                    text.push_str(&format!("# error {}: {e}\n", p.name()));
                    first_err.get_or_insert_with(|| e.clone());
                }
            }
        }
        if let (Some(e), true) = (first_err, answers.iter().all(|(_, a)| a.is_err())) {
            if matches!(e, CollectError::Auth(_)) {
                st.authorization = None;
            }
            return Err(e);
        }
        st.last_t = Some(t);
        if let Ok(mut a) = self.answered.lock() {
            *a = Some(t);
        }
        Ok(text)
    }
}

#[async_trait]
impl Transport for PromTransport {
    async fn run(&self, req: &Request, timeout: Duration) -> Result<String, CollectError> {
        match req {
            Request::PromQueries => self.poll(timeout).await,
            other => Err(CollectError::Unavailable(format!(
                "a Prometheus source answers no {other:?}"
            ))),
        }
    }

    fn answers_at(&self) -> Option<Ts> {
        self.answered.lock().ok().and_then(|a| *a)
    }

    fn describe(&self) -> String {
        let u = &self.cfg.url;
        format!(
            "prometheus {}://{}:{}{}",
            if u.tls { "https" } else { "http" },
            u.host,
            u.port,
            u.prefix
        )
    }
}
