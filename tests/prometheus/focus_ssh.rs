//! Focus (SSH for one node of a Prometheus fleet) end to end: a fleet read from Prometheus (the
//! real Debian server over a backfilled TSDB, and a fleet store filled by hand where it is not
//! installed), Enter on one of its nodes, that node's `[[node]]` pointing at a real sshd on
//! 127.0.0.1 serving a fake sysfs tree and a training log: its SSH samples and log lines reach the
//! focus's own store, the tab bar names the focus, Esc returns to the fleet and the node's SSH
//! connection closes.

use crate::prom;
use crate::prom_skip;
use crate::sshd;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use rocetop::app::{Action, App, Event, NewStore};
use rocetop::collect::focus::{self, Reach};
use rocetop::collect::poll::{Collected, poll_once};
use rocetop::config::Config;
use rocetop::metrics::{Store, names};
use sshd::Sshd;
use std::path::Path;
use std::time::{Duration, Instant};

const NODE: &str = "gpu0001";
const PORT: &str = "class/infiniband/mlx5_0/ports/1";
/// What the fake tree's CNP counter holds: the SSH poll must read exactly this.
const SSH_CNP: u64 = 4242;

fn write(root: &Path, rel: &str, v: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(&p, format!("{v}\n")).expect("write");
}

/// The config as a user writes it: the fleet's Prometheus, and one `[[node]]` (with its log)
/// saying how to reach a node of it over SSH.
fn config(s: &Sshd, dir: &Path, prom_port: u16) -> Config {
    let kh = dir.join("known_hosts");
    s.trust(&kh, "ed25519");
    let root = dir.join("sys");
    write(
        &root,
        &format!("{PORT}/hw_counters/np_cnp_sent"),
        &SSH_CNP.to_string(),
    );
    write(&root, &format!("{PORT}/counters/port_rcv_data"), "1000");
    write(&root, &format!("{PORT}/state"), "4: ACTIVE");
    let log = dir.join("train.log");
    std::fs::write(&log, "focus-log-line-1 step 1 loss 2.5\n").expect("log");
    let t = format!(
        "[ssh]\nknown_hosts = \"{}\"\nssh_config = \"{}\"\nconnect_timeout = \"5s\"\ncommand_timeout = \"10s\"\n\
         [poll]\ninterval = \"10s\"\n\
         [[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:{prom_port}\"\n\
         [[node]]\nname = \"{NODE}\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nidentity_file = \"{}\"\nsysfs_root = \"{}\"\n\
         [[log]]\nnode = \"{NODE}\"\npath = \"{}\"\n",
        kh.display(),
        dir.join("no_ssh_config").display(),
        s.port,
        sshd::current_user(),
        s.client_key.display(),
        root.display(),
        log.display(),
    );
    Config::from_str(&t, "focus.toml", None).expect("config")
}

fn key(c: KeyCode) -> Event {
    Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

fn screen_text(app: &App) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).expect("term");
    t.draw(|f| rocetop::ui::draw(f, app)).expect("draw");
    let b = t.backend().buffer().clone();
    let mut s = String::new();
    for y in 0..b.area.height {
        for x in 0..b.area.width {
            s.push_str(b[(x, y)].symbol());
        }
        s.push('\n');
    }
    s
}

/// The focus's CNP counter of mlx5_0, newest value.
fn focus_cnp(app: &App) -> Option<f64> {
    let f = app.focus.as_ref()?;
    let name = names::rdma_counter("np_cnp_sent");
    let labels = [("node", NODE), ("device", "mlx5_0")];
    f.app
        .store
        .select(&name, &labels)
        .filter_map(|(_, s)| s.latest(&f.app.store))
        .map(|(_, v)| v.as_f64())
        .next()
}

/// Until sshd serves no connection (a generous deadline; no timing is claimed).
async fn wait_no_connection(s: &Sshd, when: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while s.connections() > 0 {
        assert!(
            Instant::now() < deadline,
            "sshd still serves {} connection(s) {when}",
            s.connections()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Enter on the fleet's row of NODE, as the live loop does it; then Esc. `app` holds the fleet.
async fn focus_and_leave(mut app: App, cfg: &Config, s: &Sshd, fleet_cnp: f64) {
    app.update(Event::Resize(120, 40), app.now());
    // The user filters the fleet down to the node and presses Enter on its row.
    for c in ['/'].into_iter().chain(NODE.chars()) {
        app.update(key(KeyCode::Char(c)), app.now());
    }
    app.update(key(KeyCode::Enter), app.now());
    let _ = screen_text(&app);
    app.update(key(KeyCode::Enter), app.now());
    assert_eq!(
        app.actions,
        vec![Action::Focus(NODE.into())],
        "{:?}",
        app.message()
    );
    app.actions.clear();
    // Nothing polls the node before its focus (sshd's readiness probe may still be closing:
    // an SSH poller would hold its connection open for good).
    wait_no_connection(s, "before the focus").await;

    // What tui.rs does with the action.
    let (mut feed, fcfg, store) =
        focus::start(cfg, NODE, &Reach::load(cfg), rocetop::cmd::remote()).expect("focus");
    let kinds: Vec<_> = feed.sources.iter().map(|s| s.kind).collect();
    use rocetop::collect::source::SourceKind;
    assert!(
        kinds.contains(&SourceKind::Node) && kinds.contains(&SourceKind::Log),
        "{kinds:?}"
    );
    assert!(
        feed.sources
            .iter()
            .all(|s| s.interval <= focus::FOCUS_INTERVAL || s.kind == SourceKind::Topology)
    );
    app.update(
        Event::Focused {
            node: NODE.into(),
            cfg: Box::new(fcfg),
            store: NewStore(store),
        },
        rocetop::metrics::now_ms(),
    );

    // The node's SSH polls and log lines arrive in the focus's store (generous deadline).
    let focused_at = Instant::now();
    let mut first_sample = None;
    let deadline = Instant::now() + Duration::from_secs(90);
    let has_log = |a: &App| {
        a.focus.as_ref().is_some_and(|f| {
            f.app
                .log()
                .lines
                .iter()
                .any(|l| l.contains("focus-log-line-1"))
        })
    };
    while focus_cnp(&app).is_none() || !has_log(&app) {
        assert!(
            Instant::now() < deadline,
            "no SSH samples/log lines of {NODE} in the focus; sshd log:\n{}",
            s.log()
        );
        let c: Collected = tokio::time::timeout(Duration::from_secs(60), feed.rx.recv())
            .await
            .expect("a focus poll")
            .expect("collectors alive");
        app.update(Event::FocusCollected(c), rocetop::metrics::now_ms());
        if first_sample.is_none() && focus_cnp(&app).is_some() {
            first_sample = Some(focused_at.elapsed());
        }
    }
    // A figure for the README (printed, not asserted).
    eprintln!(
        "focus {NODE}: first SSH sample {:?} and its log line {:?} after the focus started",
        first_sample,
        focused_at.elapsed()
    );
    assert_eq!(
        focus_cnp(&app),
        Some(SSH_CNP as f64),
        "the file's value, over SSH"
    );
    assert_ne!(fleet_cnp, SSH_CNP as f64);
    // The fleet's series of the same key still holds Prometheus' value, apart.
    let name = names::rdma_counter("np_cnp_sent");
    let fleet_now = app
        .store
        .select(&name, &[("node", NODE), ("device", "mlx5_0")])
        .filter_map(|(_, s)| s.latest(&app.store))
        .map(|(_, v)| v.as_f64())
        .next();
    assert_eq!(fleet_now, Some(fleet_cnp));
    let up = app
        .focus
        .as_ref()
        .and_then(|f| f.app.source(NODE))
        .and_then(|h| h.up);
    assert_eq!(up, Some(true));
    let text = screen_text(&app);
    assert!(
        text.contains(&format!("FOCUS {NODE} (SSH up) Esc: fleet")),
        "{text}"
    );
    assert!(s.connections() >= 1, "the focus holds a connection");

    // Esc: back to the fleet; the loop stops the collectors and the connection closes.
    app.update(key(KeyCode::Esc), rocetop::metrics::now_ms());
    assert!(app.focus.is_none());
    assert_eq!(app.actions, vec![Action::Unfocus]);
    let n = feed.sources.len();
    assert_eq!(feed.stop().await, n, "every collector of the focus ended");
    wait_no_connection(s, "after Esc").await;
    let text = screen_text(&app);
    assert!(!text.contains("FOCUS"), "{text}");
    assert!(text.contains(NODE), "the fleet's row again: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn focus_a_node_of_a_real_prometheus_fleet_over_ssh_and_leave() {
    let Some(bins) = prom_skip::prometheus("focus_ssh::real_prometheus") else {
        return;
    };
    let now_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs() as i64;
    let start = (now_s - 3 * 3600) / prom::STEP_S * prom::STEP_S;
    let fleet = prom::Fleet {
        nodes: 4,
        start,
        faults: false,
    };
    let server = prom::start(&bins, &fleet);
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = config(&s, dir.path(), server.port);

    // The fleet view: the fleet's config (the [[node]] waits for focus), read at minute 10.
    let fleet_cfg = focus::fleet_config(&cfg);
    assert!(fleet_cfg.nodes.is_empty() && fleet_cfg.logs.is_empty());
    let p = &fleet_cfg.prometheus[0];
    let at = (start + 10 * 60) * 1000 + 2_000;
    let clock: rocetop::collect::prometheus::Clock = std::sync::Arc::new(move || at);
    let transport =
        std::sync::Arc::new(rocetop::collect::prometheus::PromTransport::new(p, clock).expect("t"));
    let mut store = Store::new(24 * 3600 * 1000, 4096);
    let src = rocetop::collect::source::fleet_source(p, &mut store, transport);
    let c = poll_once(&src).await;
    assert_eq!(c.error, None);
    let t = c.at;
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let mut app = App::new(fleet_cfg, store, theme, t);
    app.update(Event::Collected(c), t);
    app.reach = Reach::load(&cfg);
    let name = names::rdma_counter("np_cnp_sent");
    let fleet_cnp = app
        .store
        .select(&name, &[("node", NODE), ("device", "mlx5_0")])
        .filter_map(|(_, s)| s.latest(&app.store))
        .map(|(_, v)| v.as_f64())
        .next()
        .expect("the fleet reports the node");
    focus_and_leave(app, &cfg, &s, fleet_cnp).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn focus_a_node_of_a_fleet_store_over_ssh_and_leave() {
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("tempdir");
    // Nothing listens on port 9: the fleet's samples are put in its store by hand.
    let cfg = config(&s, dir.path(), 9);
    let fleet_cfg = focus::fleet_config(&cfg);
    let mut store = Store::new(600_000, 600);
    let id = store.add_source("fleet", 15_000);
    let t = rocetop::metrics::now_ms() - 60_000;
    let sample = |node: &str| rocetop::metrics::Sample {
        key: rocetop::metrics::SeriesKey::new(
            names::rdma_counter("np_cnp_sent"),
            &[("node", node), ("device", "mlx5_0"), ("rdma_port", "1")],
        ),
        value: rocetop::metrics::Value::Counter(777),
    };
    let c = Collected {
        source: id,
        at: t,
        parsed: rocetop::metrics::Parsed {
            samples: vec![sample(NODE), sample("gpu0002")],
            ..Default::default()
        },
        raw: Some(Vec::new()),
        error: None,
        history: Default::default(),
    };
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let mut app = App::new(fleet_cfg, store, theme, t);
    app.update(Event::Collected(c), t);
    app.reach = Reach::load(&cfg);
    // gpu0002 has no [[node]] and no Host line: Enter says so and changes nothing else.
    app.update(Event::Resize(120, 40), t);
    for c in "/gpu0002".chars() {
        app.update(key(KeyCode::Char(c)), t);
    }
    app.update(key(KeyCode::Enter), t);
    let _ = screen_text(&app);
    app.update(key(KeyCode::Enter), t);
    assert!(app.actions.is_empty() && app.focus.is_none());
    let msg = app.message().map(|(_, m)| m.clone()).unwrap_or_default();
    assert!(msg.contains("cannot focus gpu0002 over SSH"), "{msg}");
    app.update(key(KeyCode::Esc), t);
    app.update(key(KeyCode::Esc), t);
    assert!(app.filter().is_empty());
    focus_and_leave(app, &cfg, &s, 777.0).await;
}

/// Polls of a focus until one satisfies `ok` (a generous deadline; None if none did).
async fn focus_poll_until(
    feed: &mut focus::FocusFeed,
    ok: impl Fn(&Collected) -> bool,
) -> Option<Collected> {
    let deadline = Instant::now() + Duration::from_secs(40);
    while Instant::now() < deadline {
        match tokio::time::timeout(Duration::from_secs(5), feed.rx.recv()).await {
            Ok(Some(c)) if ok(&c) => return Some(c),
            Ok(Some(_)) | Err(_) => {}
            Ok(None) => return None,
        }
    }
    None
}

/// A fleet label names the SSH destination only where the config allows it. The ssh config has
/// the common pattern block (here `Host 127.0.0.*`: Port, User, IdentityFile, no HostName, so the
/// name itself is the host) and `host_key_policy = "accept-new"`; a fleet series labels its node
/// `127.0.0.1`, which no `[[node]]` names. Before: Enter focused it, rocetop saved the host's key
/// and logged in with the user's key. Now: refused without `ssh.focus_hosts`; allowed by
/// `focus_hosts`, but an unknown key is refused (focus_host_key_policy is strict by default);
/// with `focus_host_key_policy = "accept-new"` the key is learnt and the node polled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_label_cannot_choose_the_ssh_destination() {
    let s = Sshd::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let kh = dir.path().join("known_hosts");
    let ssh_config = dir.path().join("ssh_config");
    std::fs::write(
        &ssh_config,
        format!(
            "Host 127.0.0.*\n  Port {}\n  User {}\n  IdentityFile {}\n",
            s.port,
            sshd::current_user(),
            s.client_key.display()
        ),
    )
    .expect("ssh_config");
    let label = "127.0.0.1";
    let cfg = |extra: &str| {
        let t = format!(
            "[ssh]\nknown_hosts = \"{}\"\nssh_config = \"{}\"\nhost_key_policy = \"accept-new\"\n\
             connect_timeout = \"5s\"\ncommand_timeout = \"10s\"\n{extra}\
             [poll]\ninterval = \"10s\"\nmode = \"exec\"\n\
             [[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:9\"\n",
            kh.display(),
            ssh_config.display(),
        );
        Config::from_str(&t, "focus.toml", None).expect("config")
    };

    // No focus_hosts: Enter on the label's row says why and asks for nothing.
    let plain = cfg("");
    let mut store = Store::new(600_000, 600);
    let id = store.add_source("fleet", 15_000);
    let t = rocetop::metrics::now_ms() - 60_000;
    let c = Collected {
        source: id,
        at: t,
        parsed: rocetop::metrics::Parsed {
            samples: vec![rocetop::metrics::Sample {
                key: rocetop::metrics::SeriesKey::new(
                    names::rdma_counter("np_cnp_sent"),
                    &[("node", label), ("device", "mlx5_0"), ("rdma_port", "1")],
                ),
                value: rocetop::metrics::Value::Counter(5),
            }],
            ..Default::default()
        },
        raw: Some(Vec::new()),
        error: None,
        history: Default::default(),
    };
    let theme = rocetop::theme::Theme::named("dark").expect("theme");
    let mut app = App::new(focus::fleet_config(&plain), store, theme, t);
    app.update(Event::Collected(c), t);
    app.reach = Reach::load(&plain);
    app.update(Event::Resize(120, 40), t);
    for c in format!("/{label}").chars() {
        app.update(key(KeyCode::Char(c)), t);
    }
    app.update(key(KeyCode::Enter), t);
    let _ = screen_text(&app);
    app.update(key(KeyCode::Enter), t);
    assert!(app.actions.is_empty() && app.focus.is_none());
    let msg = app.message().map(|(_, m)| m.clone()).unwrap_or_default();
    assert!(
        msg.contains("cannot focus 127.0.0.1 over SSH") && msg.contains("ssh.focus_hosts"),
        "{msg}"
    );
    let refused = focus::start(&plain, label, &Reach::load(&plain), rocetop::cmd::remote());
    assert!(refused.is_err());

    // Allowed by a pattern, but the host's key is unknown: refused, nothing learnt.
    let allowed = cfg("focus_hosts = [\"127.0.0.*\"]\n");
    let (mut feed, _, _) = focus::start(
        &allowed,
        label,
        &Reach::load(&allowed),
        rocetop::cmd::remote(),
    )
    .expect("allowed");
    let down = focus_poll_until(&mut feed, |c| {
        c.error.as_deref().is_some_and(|e| e.contains("host key"))
    })
    .await;
    assert!(
        down.is_some(),
        "an unknown key is refused; sshd log:\n{}",
        s.log()
    );
    feed.stop().await;
    assert_eq!(s.accepted(), 0, "never logged in: {}", s.log());
    let learnt = std::fs::read_to_string(&kh).unwrap_or_default();
    assert!(!learnt.contains(&s.host_pub("ed25519")), "{learnt}");

    // The config says so: the key is learnt and the node polled.
    let trusting = cfg("focus_hosts = [\"127.0.0.*\"]\nfocus_host_key_policy = \"accept-new\"\n");
    let (mut feed, _, _) = focus::start(
        &trusting,
        label,
        &Reach::load(&trusting),
        rocetop::cmd::remote(),
    )
    .expect("allowed");
    let up = focus_poll_until(&mut feed, |c| c.error.is_none()).await;
    feed.stop().await;
    assert!(up.is_some(), "polled; sshd log:\n{}", s.log());
    assert!(s.accepted() >= 1);
    let learnt = std::fs::read_to_string(&kh).unwrap_or_default();
    assert!(learnt.contains(&s.host_pub("ed25519")), "{learnt}");
}
