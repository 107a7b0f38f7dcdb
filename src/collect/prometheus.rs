//! `[[prometheus]]`: a fleet read from an existing Prometheus (docs/fleet.md).
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
//!
//! History: when the source starts, and after a gap (polls that failed), the
//! same poll also asks `query_range` for the store's history window (one query per profile, step
//! = `step`, `last_over_time(...[step - 1 ms])` so each point is the newest sample in
//! `(t - step, t]` as a poll reads it). Its answers follow the poll's in the same text, after a
//! `# range START END step S` line; `parse::prom_api::history` maps them with the poll's mapping
//! into one sample set per step, and the store takes them as counters, oldest first, before the
//! poll's own: sparklines and the Overview timeline show the past at once, with the store's rates.

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

/// At most this many steps of history per backfill (a day at 15 s; Prometheus refuses more than
/// 11,000 points per series).
const MAX_BACKFILL_STEPS: i64 = 5_760;

/// The wall clock in [`Ts`]; tests give a clock that walks through a backfilled past.
pub type Clock = Arc<dyn Fn() -> Ts + Send + Sync>;

pub struct PromTransport {
    cfg: Prometheus,
    tls: Option<http::Tls>,
    clock: Clock,
    /// The history window backfilled at start and after a gap (`None`: no backfill).
    history: Option<Duration>,
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
            history: None,
            state: Mutex::new(State::default()),
            answered: std::sync::Mutex::new(None),
        })
    }

    pub fn live(cfg: &Prometheus) -> Result<Self, String> {
        Self::new(cfg, Arc::new(now_ms))
    }

    /// Backfill this much history (the store's retention) when the source starts and after a gap.
    pub fn with_history(mut self, window: Duration) -> Self {
        self.history = (!window.is_zero()).then_some(window);
        self
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

    /// A profile's history query: per step t, the newest sample in `(t - step, t]`, as a poll
    /// reads it (a range is closed at both ends before Prometheus 3, hence the 1 ms less).
    pub fn range_query(&self, p: Profile) -> String {
        format!(
            "last_over_time({}[{}ms])",
            self.selector(p.selector()),
            (self.cfg.step.as_millis().max(2) - 1)
        )
    }

    /// The steps to backfill before a poll at `t` (first and last, ms): the history window at
    /// start, the missed steps after a gap; `None` when there is nothing to fill.
    fn backfill(&self, last: Option<Ts>, t: Ts) -> Option<(Ts, Ts)> {
        let window = self.history?.as_millis() as Ts;
        let step = self.cfg.step.as_millis().max(1) as Ts;
        let oldest = t - (window / step).min(MAX_BACKFILL_STEPS) * step;
        let first = last.map_or(oldest, |l| oldest.max(l + step));
        let first = first + (step - first.rem_euclid(step)) % step;
        let last = t - step;
        (first <= last).then_some((first, last))
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
            PromAuth::Bearer(s) => {
                format!("Bearer {}", secret::resolve_token(s).await.map_err(auth)?)
            }
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
            "query={}&time={}&timeout={}s",
            http::form_encode(query),
            secs(t),
            timeout.as_secs().max(1)
        );
        self.post("/api/v1/query", &form, timeout, auth).await
    }

    /// `query_range` from `first` to `last` at this source's step.
    async fn ask_range(
        &self,
        query: &str,
        (first, last): (Ts, Ts),
        timeout: Duration,
        auth: Option<&str>,
    ) -> Result<String, CollectError> {
        let form = format!(
            "query={}&start={}&end={}&step={}&timeout={}s",
            http::form_encode(query),
            secs(first),
            secs(last),
            secs(self.cfg.step.as_millis().max(1) as Ts),
            timeout.as_secs().max(1)
        );
        self.post("/api/v1/query_range", &form, timeout, auth).await
    }

    async fn post(
        &self,
        path: &str,
        form: &str,
        timeout: Duration,
        auth: Option<&str>,
    ) -> Result<String, CollectError> {
        let call = http::post(
            &self.cfg.url,
            self.tls.as_ref(),
            path,
            form,
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
        let range = self.backfill(st.last_t, t);
        let ranges = range.into_iter().flat_map(|r| {
            st.profiles.iter().map(move |p| async move {
                (
                    *p,
                    self.ask_range(&self.range_query(*p), r, timeout, auth)
                        .await,
                )
            })
        });
        let (answers, history) = futures::future::join(
            futures::future::join_all(asks),
            futures::future::join_all(ranges),
        )
        .await;
        st.queries += (answers.len() + history.len()) as u64;
        let mut text = format!(
            "# node_label {}\n# at {t} step {}\n",
            self.cfg.node_label,
            self.cfg.step.as_millis().max(1)
        );
        let first_err = answers_into(&mut text, &answers);
        if let (Some(e), true) = (first_err, answers.iter().all(|(_, a)| a.is_err())) {
            if matches!(e, CollectError::Auth(_)) {
                st.authorization = None;
            }
            return Err(e);
        }
        if let Some((first, last)) = range {
            text.push_str(&format!(
                "# range {first} {last} step {}\n",
                self.cfg.step.as_millis().max(1)
            ));
            answers_into(&mut text, &history);
        }
        st.last_t = Some(t);
        if let Ok(mut a) = self.answered.lock() {
            *a = Some(t);
        }
        Ok(text)
    }
}

/// `ms` as the API's seconds.
fn secs(ms: Ts) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

/// Each answer after its `# query NAME` line (`# error NAME: why` for a failed one); the first error.
fn answers_into(
    text: &mut String,
    answers: &[(Profile, Result<String, CollectError>)],
) -> Option<CollectError> {
    let mut first_err = None;
    for (p, a) in answers {
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
    first_err
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
