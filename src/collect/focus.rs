//! Focus (issue #17 item 4): Prometheus for the fleet, SSH for the node you look at. Enter on a
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
use super::ssh::{host_lines, names_host};
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
    /// A `Host` line of the user's ssh config names it: HostName, Port, User, IdentityFile and
    /// ProxyJump from there, devices and netdevs discovered.
    Alias,
}

/// What decides whether a fleet node can be focused: the config's `[[node]]` names and the
/// `Host` lines of the ssh config, read once (the live screen asks on every Enter, without I/O).
#[derive(Clone, Debug, Default)]
pub struct Reach {
    nodes: Vec<String>,
    hosts: Vec<Vec<String>>,
    /// The ssh config as a person writes it (`~/.ssh/config`), for the message.
    ssh_config: String,
}

impl Reach {
    /// The config's nodes and the `Host` lines of its `ssh.ssh_config` (reads that file).
    pub fn load(cfg: &Config) -> Reach {
        let mut r = Reach::of_nodes(cfg);
        r.hosts = host_lines(&cfg.ssh.ssh_config);
        r
    }

    /// The config's nodes only (no I/O): what `App::new` starts with.
    pub fn of_nodes(cfg: &Config) -> Reach {
        Reach {
            nodes: cfg.nodes.iter().map(|n| n.name.clone()).collect(),
            hosts: Vec::new(),
            ssh_config: super::ssh::tilde(&cfg.ssh.ssh_config),
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
        if names_host(&self.hosts, node) {
            return Ok(How::Alias);
        }
        Err(format!(
            "cannot focus {node} over SSH: no [[node]] named {node} in the config and no Host line \
             naming it in {}",
            self.ssh_config
        ))
    }
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
    let entry = match reach.check(node)? {
        How::Node => cfg
            .nodes
            .iter()
            .find(|n| n.name == node)
            .cloned()
            .ok_or_else(|| format!("cannot focus {node}: its [[node]] is gone"))?,
        How::Alias => Node {
            name: node.to_string(),
            // The ssh config resolves it (HostName, Port, User, keys, ProxyJump).
            host: node.to_string(),
            port: 22,
            user: None,
            devices: Vec::new(),
            netdevs: Vec::new(),
            switch_port: None,
            sysfs_root: "/sys".into(),
            identity_file: None,
            local: false,
        },
    };
    let mut c = cfg.clone();
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
    fn an_ssh_config_alias_reaches_a_node_without_a_node_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("ssh_config");
        std::fs::write(&p, "Host *\n  User x\nHost gpu7\n  HostName 127.0.0.1\n").expect("w");
        let mut c = cfg();
        c.ssh.ssh_config = p;
        let r = Reach::load(&c);
        assert_eq!(r.check("gpu7"), Ok(How::Alias));
        assert_eq!(r.check("gpu1"), Ok(How::Node));
        let f = focus_config(&c, "gpu7", &r).expect("alias");
        assert_eq!(
            f.nodes[0].host, "gpu7",
            "resolved by the ssh config when connecting"
        );
        assert!(f.nodes[0].devices.is_empty(), "discovered");
        let e = r.check("gpu8").expect_err("Host * names nothing");
        assert!(e.contains("no [[node]] named gpu8"), "{e}");
        assert!(e.contains("ssh_config"), "{e}");
        assert!(r.check("-oProxyCommand=x").is_err());
    }
}
