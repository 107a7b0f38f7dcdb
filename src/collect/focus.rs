//! Focus: Prometheus for the fleet, SSH for the node you look at. Enter on a
//! node of a `[[prometheus]]` fleet starts SSH collectors for that one node (its counters every
//! second, its `[[log]]` tail, its `[[ping]]`s), feeding a store of their own; Esc stops them.
//!
//! The focus has its own store, not the fleet's: the SSH polls of `gpu17` and the fleet's series
//! of `gpu17` have the same keys (same names, `node="gpu17"`, `device="mlx5_0"`), and one store
//! would put a 15 s scrape and a 1 s poll into one series (the older scrape dropped as out of
//! order, rates across two clocks). Kept apart by store, the tabs show the SSH series while
//! focused and the fleet keeps collecting behind them.

use super::poll::{Collected, KeepRaw, spawn_all};
use super::source::{RemoteFactory, Source, build};
use crate::config::{Config, Node, is_safe_name};
use crate::metrics::Store;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

/// A focused node is polled at least this often (the "1 Hz detail view").
pub const FOCUS_INTERVAL: Duration = Duration::from_secs(1);

/// How a node of the fleet can be reached over SSH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// A `[[node]]` of the config names it: its host, port, user, key, devices, sysfs root.
    Node,
    /// A pattern of `ssh.focus_hosts` matches it: the ssh config resolves the name (HostName,
    /// Port, User, IdentityFile, ProxyJump), devices and netdevs are discovered, and its host key
    /// must be known unless `ssh.focus_host_key_policy` says otherwise.
    Allowed,
}

/// What decides whether a fleet node can be focused: the config's `[[node]]` names and its
/// `ssh.focus_hosts` patterns. A node's name comes from a label of whatever the fleet's
/// Prometheus scraped, so it becomes an SSH destination only where the config names it: a `Host
/// gpu*` line of the ssh config (User and IdentityFile, no HostName) had let a label
/// `gpu99.attacker.example` be logged in to with the user's key.
#[derive(Clone, Debug, Default)]
pub struct Reach {
    nodes: Vec<String>,
    patterns: Vec<String>,
}

impl Reach {
    /// The config's nodes and focus patterns (no I/O).
    pub fn load(cfg: &Config) -> Reach {
        Reach::of_nodes(cfg)
    }

    /// The config's nodes and focus patterns: what `App::new` starts with.
    pub fn of_nodes(cfg: &Config) -> Reach {
        Reach {
            nodes: cfg.nodes.iter().map(|n| n.name.clone()).collect(),
            patterns: cfg.ssh.focus_hosts.clone(),
        }
    }

    /// Whether `node` can be focused, and how; else the sentence the status line shows.
    pub fn check(&self, node: &str) -> Result<How, String> {
        if self.nodes.iter().any(|n| n == node) {
            return Ok(How::Node);
        }
        // A label value from a server becomes a host to connect to: only plain names.
        if !is_safe_name(node) {
            return Err(format!(
                "cannot focus {node:?}: not a plain host name, so rocetop will not connect to it"
            ));
        }
        if self.patterns.iter().any(|p| host_matches(p, node)) {
            return Ok(How::Allowed);
        }
        Err(format!(
            "cannot focus {node} over SSH: no [[node]] named {node} in the config and no \
             ssh.focus_hosts pattern matching it (a name from the fleet's labels is logged in to \
             only where the config allows it)"
        ))
    }
}

/// Whether host pattern `pat` (`ssh.focus_hosts`) matches `name`: `*` any run and `?` one of
/// letters, digits, `-` and `_` (never a dot, so a pattern's domain is the name's), the rest
/// literal, ASCII case folded as host names are.
pub fn host_matches(pat: &str, name: &str) -> bool {
    let (p, s) = (pat.as_bytes(), name.as_bytes());
    let wild = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    let one = |pc: u8, c: u8| match pc {
        b'?' => wild(c),
        _ => pc.eq_ignore_ascii_case(&c),
    };
    // Iterative match with one backtrack point (the last `*`): a `*` that cannot take the byte
    // that failed (a dot) cannot take any run past it, so the match fails there (checked against
    // the equivalent regex on 300 000 random short patterns and names over `ab.*?`).
    let (mut i, mut j, mut star) = (0, 0, None::<(usize, usize)>);
    while j < s.len() {
        if i < p.len() && p[i] == b'*' {
            star = Some((i, j));
            i += 1;
        } else if i < p.len() && one(p[i], s[j]) {
            i += 1;
            j += 1;
        } else if let Some((si, sj)) = star.filter(|&(_, sj)| wild(s[sj])) {
            // The `*` takes one more byte (a wildcard one) and the rest is tried again.
            star = Some((si, sj + 1));
            i = si + 1;
            j = sj + 1;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == b'*')
}

/// The config the fleet view polls: with a `[[prometheus]]` source, the `[[node]]`s, the `[[log]]`s
/// on them and the `[[ping]]`s to them wait for focus (they say how to reach a node, not that it
/// is polled: the fleet is read from Prometheus). Without one, the config as it is.
pub fn fleet_config(cfg: &Config) -> Config {
    let mut c = cfg.clone();
    if cfg.prometheus.is_empty() {
        return c;
    }
    let is_node = |n: &str| cfg.nodes.iter().any(|x| x.name == n);
    c.nodes.clear();
    c.logs.retain(|l| !is_node(&l.node));
    c.pings.retain(|p| !is_node(&p.peer));
    c
}

/// The config of a focus on `node`: that node alone (its `[[node]]`, or one made from its ssh
/// config alias), its logs and pings, polled every [`FOCUS_INTERVAL`] at least; no switches and
/// no fleet (they go on in the fleet view).
pub fn focus_config(cfg: &Config, node: &str, reach: &Reach) -> Result<Config, String> {
    let how = reach.check(node)?;
    let entry = match how {
        How::Node => cfg
            .nodes
            .iter()
            .find(|n| n.name == node)
            .cloned()
            .ok_or_else(|| format!("cannot focus {node}: its [[node]] is gone"))?,
        How::Allowed => Node {
            name: node.to_string(),
            // The ssh config resolves it (HostName, Port, User, keys, ProxyJump).
            host: node.to_string(),
            port: 22,
            user: None,
            devices: Vec::new(),
            netdevs: Vec::new(),
            switch_port: None,
            switch: None,
            sysfs_root: "/sys".into(),
            identity_file: None,
            local: false,
        },
    };
    let mut c = cfg.clone();
    if how == How::Allowed {
        // The name came from a label: a key never seen is not taken on trust, whatever the
        // config's `host_key_policy`, unless `focus_host_key_policy` says so.
        c.ssh.host_key_policy = cfg.ssh.focus_host_key_policy;
    }
    c.switches.clear();
    c.prometheus.clear();
    c.nodes = vec![entry];
    c.logs.retain(|l| l.node == node);
    c.pings.retain(|p| p.peer == node);
    c.poll.interval = c.poll.interval.min(FOCUS_INTERVAL);
    c.poll.ping_interval = c.poll.ping_interval.min(FOCUS_INTERVAL);
    Ok(c)
}

/// The store of a screen over `cfg`: its retention, enough points for its fastest source.
pub fn screen_store(cfg: &Config) -> Store {
    let retention = cfg.poll.retention.as_millis() as i64;
    let min_interval = cfg
        .poll
        .interval
        .min(cfg.poll.switch_interval)
        .as_millis()
        .max(100) as i64;
    Store::new(
        retention,
        (retention / min_interval + 16).clamp(64, 8192) as usize,
    )
}

/// A focus's running collectors. Dropping it aborts them, which drops their transports and so
/// closes the node's SSH connection; [`FocusFeed::stop`] also waits until they have ended.
pub struct FocusFeed {
    pub node: String,
    /// The polls of the focus's sources (ids of the focus's own store).
    pub rx: mpsc::Receiver<Collected>,
    pub sources: Vec<Arc<Source>>,
    collectors: JoinSet<()>,
}

impl FocusFeed {
    /// Stop every collector and wait for them; returns how many there were.
    pub async fn stop(mut self) -> usize {
        self.sources.clear();
        self.collectors.abort_all();
        let mut n = 0;
        while self.collectors.join_next().await.is_some() {
            n += 1;
        }
        n
    }
}

/// Start focusing `node`: its sources built into a new store and their collectors spawned (in
/// the current tokio runtime). Returns the feed, the focus's config and its store, or why not.
pub fn start(
    cfg: &Config,
    node: &str,
    reach: &Reach,
    remote: RemoteFactory<'_>,
) -> Result<(FocusFeed, Config, Store), String> {
    let fcfg = focus_config(cfg, node, reach)?;
    let mut store = screen_store(&fcfg);
    let sources: Vec<Arc<Source>> = build(&fcfg, &mut store, remote)
        .into_iter()
        .map(Arc::new)
        .collect();
    let (tx, rx) = mpsc::channel(256);
    // A focus's polls are not recorded.
    let collectors = spawn_all(sources.clone(), tx, KeepRaw::default());
    Ok((
        FocusFeed {
            node: node.to_string(),
            rx,
            sources,
            collectors,
        },
        fcfg,
        store,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CFG: &str = "[ssh]\nssh_config = \"/nonexistent/ssh_config\"\n\
        [poll]\ninterval = \"5s\"\n\
        [[prometheus]]\nname = \"fleet\"\nurl = \"http://127.0.0.1:9\"\n\
        [[switch]]\nname = \"leaf1\"\nhost = \"127.0.0.1\"\nuser = \"admin\"\nos = \"sonic\"\n\
        [[node]]\nname = \"gpu1\"\nhost = \"127.0.0.1\"\nport = 2222\n\
        [[node]]\nname = \"gpu2\"\nhost = \"127.0.0.1\"\n\
        [[log]]\nnode = \"gpu1\"\npath = \"/tmp/train.log\"\n\
        [[log]]\nnode = \"gpu2\"\npath = \"/tmp/train.log\"\n\
        [[ping]]\npeer = \"gpu1\"\naddress = \"127.0.0.1\"\n\
        [[ping]]\npeer = \"gpu2\"\naddress = \"127.0.0.1\"\n";

    fn cfg() -> Config {
        Config::from_str(CFG, "focus.toml", None).expect("config")
    }

    #[test]
    fn the_fleet_view_leaves_nodes_their_logs_and_pings_to_focus() {
        let c = fleet_config(&cfg());
        assert!(c.nodes.is_empty());
        assert!(c.logs.is_empty());
        // A ping's peer is always a [[node]] (the config checks): they all wait.
        assert!(c.pings.is_empty());
        assert_eq!((c.switches.len(), c.prometheus.len()), (1, 1));
        // Without a fleet nothing changes.
        let mut plain = cfg();
        plain.prometheus.clear();
        assert_eq!(fleet_config(&plain).nodes.len(), 2);
    }

    #[test]
    fn a_focus_is_that_node_its_log_and_its_ping_every_second() {
        let c = cfg();
        let f = focus_config(&c, "gpu1", &Reach::load(&c)).expect("reachable");
        assert_eq!(f.nodes.len(), 1);
        assert_eq!((f.nodes[0].name.as_str(), f.nodes[0].port), ("gpu1", 2222));
        assert_eq!(f.logs.len(), 1);
        assert_eq!(f.logs[0].node, "gpu1");
        assert_eq!(f.pings.len(), 1);
        assert_eq!(f.pings[0].peer, "gpu1");
        assert!(f.switches.is_empty() && f.prometheus.is_empty());
        assert_eq!(f.poll.interval, FOCUS_INTERVAL);
    }

    #[test]
    fn a_focus_hosts_pattern_reaches_a_node_without_a_node_entry() {
        let mut c = cfg();
        c.ssh.focus_hosts = vec!["gpu?".into(), "rack*-n*.dc1".into()];
        c.ssh.host_key_policy = crate::config::HostKeyPolicy::AcceptNew;
        let r = Reach::load(&c);
        assert_eq!(r.check("gpu7"), Ok(How::Allowed));
        assert_eq!(r.check("GPU7"), Ok(How::Allowed), "host names fold case");
        assert_eq!(r.check("rack3-n17.dc1"), Ok(How::Allowed));
        assert_eq!(r.check("gpu1"), Ok(How::Node));
        let f = focus_config(&c, "gpu7", &r).expect("allowed");
        assert_eq!(
            f.nodes[0].host, "gpu7",
            "resolved by the ssh config when connecting"
        );
        assert!(f.nodes[0].devices.is_empty(), "discovered");
        assert_eq!(
            f.ssh.host_key_policy,
            crate::config::HostKeyPolicy::Strict,
            "a label's host: no new key on trust"
        );
        // A [[node]] keeps the config's policy.
        let f = focus_config(&c, "gpu1", &r).expect("node");
        assert_eq!(
            f.ssh.host_key_policy,
            crate::config::HostKeyPolicy::AcceptNew
        );
        c.ssh.focus_host_key_policy = crate::config::HostKeyPolicy::AcceptNew;
        let f = focus_config(&c, "gpu7", &Reach::load(&c)).expect("allowed");
        assert_eq!(
            f.ssh.host_key_policy,
            crate::config::HostKeyPolicy::AcceptNew
        );
        for bad in [
            "gpu8.attacker.example",
            "gpu77",
            "rack3-n17.dc1.attacker.example",
            "rack3.evil-n1.dc1",
            "x.gpu7",
            "gpu7@evil",
        ] {
            let e = r.check(bad).expect_err(bad);
            assert!(e.contains("no ssh.focus_hosts pattern"), "{e}");
        }
        assert!(r.check("-oProxyCommand=x").is_err());
    }

    #[test]
    fn a_label_is_no_ssh_destination_without_the_config_saying_so() {
        // The common `Host gpu*` of an ssh config (User, IdentityFile, no HostName) names no
        // host to focus: only the config's own [[node]]s and focus_hosts do.
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("ssh_config");
        std::fs::write(&p, "Host gpu*\n  User x\n  IdentityFile ~/.ssh/id\n").expect("w");
        let mut c = cfg();
        c.ssh.ssh_config = p;
        let r = Reach::load(&c);
        let e = r
            .check("gpu99.attacker.example")
            .expect_err("a label's host");
        assert!(
            e.contains("no [[node]] named gpu99.attacker.example"),
            "{e}"
        );
        assert!(focus_config(&c, "gpu99.attacker.example", &r).is_err());
        assert!(r.check("gpu7").is_err());
    }

    #[test]
    fn host_patterns_keep_their_domain() {
        let cases = [
            ("gpu*", "gpu", true),
            ("gpu*", "gpu0017", true),
            ("gpu*", "gpu-a_b", true),
            ("gpu*", "gpu1.x", false),
            ("*.dc1", "gpu1.dc1", true),
            ("*.dc1", "a.b.dc1", false),
            ("*.dc1", ".dc1", true),
            ("g*u*1", "gxxuyy1", true),
            ("g*u*1", "gxxuyy1x", false),
            ("n??", "n12", true),
            ("n??", "n1.", false),
            ("n??", "n1", false),
            ("a*b*c", "aXbYbZc", true),
            ("a*", "a.b", false),
        ];
        for (p, n, want) in cases {
            assert_eq!(host_matches(p, n), want, "{p} ~ {n}");
        }
    }
}
