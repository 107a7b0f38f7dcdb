//! The records of a recording file (one JSON object per gzip member).

use crate::collect::source::{Source, SourceKind};
use crate::metrics::Ts;
use serde::{Deserialize, Serialize};

/// Bumped when a reader of the previous version could misread a file.
pub const FORMAT_VERSION: u32 = 1;
/// First field of the header: tells a recording from any other gzip file.
pub const MAGIC: &str = "rocetop-recording";

/// What a source was at record time: enough to parse its outputs again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// The source's id in the recorder's store.
    pub id: u32,
    pub name: String,
    /// switch | node | log | ping
    pub kind: String,
    pub interval_ms: u64,
    pub timeout_ms: u64,
    /// Parse context: the switch/node label and the log path.
    pub ctx_name: String,
    #[serde(default)]
    pub ctx_log: String,
    /// Port filter applied after parsing (empty: all).
    #[serde(default)]
    pub ports: Vec<String>,
    /// Parse kinds of its probes, by name.
    #[serde(default)]
    pub probes: Vec<String>,
    /// A log's custom line format, so replay parses its lines as the live follower did.
    #[serde(default)]
    pub format_regex: Option<String>,
}

impl SourceInfo {
    pub fn of(s: &Source) -> Self {
        Self {
            id: s.id.0,
            name: s.name.clone(),
            kind: kind_name(s.kind).to_string(),
            interval_ms: s.interval.as_millis() as u64,
            timeout_ms: s.timeout.as_millis() as u64,
            ctx_name: s.ctx.name.clone(),
            ctx_log: s.ctx.log.clone(),
            ports: s.ports.clone(),
            probes: s.probes.iter().map(|p| p.kind.name().to_string()).collect(),
            format_regex: s.format_regex.clone(),
        }
    }

    pub fn source_kind(&self) -> SourceKind {
        match self.kind.as_str() {
            "switch" => SourceKind::Switch,
            "log" => SourceKind::Log,
            "ping" => SourceKind::Ping,
            "topology" => SourceKind::Topology,
            "prometheus" => SourceKind::Prometheus,
            _ => SourceKind::Node,
        }
    }
}

pub fn kind_name(k: SourceKind) -> &'static str {
    match k {
        SourceKind::Switch => "switch",
        SourceKind::Node => "node",
        SourceKind::Log => "log",
        SourceKind::Ping => "ping",
        SourceKind::Topology => "topology",
        SourceKind::Prometheus => "prometheus",
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Header {
    pub magic: String,
    pub format: u32,
    /// Version of the rocetop that wrote it.
    pub rocetop: String,
    pub created_ms: Ts,
    pub demo: bool,
    /// The config as TOML that `Config::from_str` accepts (secrets removed, hostfiles expanded).
    pub config_toml: String,
    /// The config as `Config` serialises (secrets removed), for people reading the file.
    pub config: serde_json::Value,
    pub sources: Vec<SourceInfo>,
}

/// One raw output of a poll and the parser it goes to (by name, so a future kind is skipped, not fatal).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Output {
    pub kind: String,
    pub text: String,
}

/// One poll of one source, as the collector saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Poll {
    pub source: u32,
    pub name: String,
    pub kind: String,
    pub ctx_name: String,
    #[serde(default)]
    pub ctx_log: String,
    /// Time of the answers (ms since the epoch), as the collector stamped them.
    pub at: Ts,
    #[serde(default)]
    pub outputs: Vec<Output>,
    /// Set when the source's main request failed.
    #[serde(default)]
    pub error: Option<String>,
    /// Side errors and parser notes of the poll.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// Written on a clean stop: tells a complete recording from one cut short.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct End {
    pub at: Ts,
    pub polls: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Header(Header),
    Poll(Poll),
    End(End),
}
