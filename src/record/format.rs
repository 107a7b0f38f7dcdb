//! The records of a recording file: one JSON object per line, in gzip members. Each line ends
//! with its own checksum, because a member cut short (kill -9, a truncated copy) has no gzip CRC
//! to vouch for the records it still holds, and a flipped bit inside deflate data often decodes
//! to other valid JSON.

use crate::collect::source::{Source, SourceKind};
use crate::metrics::Ts;
use serde::{Deserialize, Serialize};

/// Bumped when a reader of the previous version could misread a file. Version 2 seals each line
/// with a checksum; version 1 lines have none and are read as they are.
pub const FORMAT_VERSION: u32 = 2;
/// The first version whose lines are sealed.
pub const SEALED_SINCE: u32 = 2;
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

/// What closes a sealed line: `,"crc32":"` 8 hex digits `"}`.
const SEAL_HEAD: &[u8] = b",\"crc32\":\"";
const SEAL_LEN: usize = SEAL_HEAD.len() + 8 + 2;

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = flate2::Crc::new();
    crc.update(bytes);
    crc.sum()
}

/// One record as a sealed line: its JSON object with a last field `crc32`, the CRC-32 of the
/// bytes before that field. The line stays one JSON object, so `zcat | jq` still reads it.
pub fn seal(rec: &Record) -> Result<Vec<u8>, serde_json::Error> {
    let mut line = serde_json::to_vec(rec)?;
    // A record is a JSON object: it ends with its closing brace.
    line.pop();
    let crc = crc32(&line);
    line.extend_from_slice(SEAL_HEAD);
    line.extend_from_slice(format!("{crc:08x}\"}}\n").as_bytes());
    Ok(line)
}

/// Why a line's seal does not hold.
#[derive(Debug, PartialEq, Eq)]
pub enum Unsealed {
    NoSeal,
    Mismatch,
}

/// Check a sealed line (with or without its newline); the line is good to parse as it is.
pub fn check_seal(line: &[u8]) -> Result<(), Unsealed> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let Some(body_len) = line.len().checked_sub(SEAL_LEN) else {
        return Err(Unsealed::NoSeal);
    };
    let (body, seal) = line.split_at(body_len);
    let hex = seal
        .strip_prefix(SEAL_HEAD)
        .and_then(|s| s.strip_suffix(b"\"}"))
        .and_then(|h| std::str::from_utf8(h).ok())
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or(Unsealed::NoSeal)?;
    if hex == crc32(body) {
        Ok(())
    } else {
        Err(Unsealed::Mismatch)
    }
}

impl std::fmt::Display for Unsealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::NoSeal => "record has no checksum",
            Self::Mismatch => "record fails its checksum (damaged)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_line_is_one_json_object_and_any_changed_byte_breaks_the_seal() {
        let rec = Record::End(End {
            at: 1_000,
            polls: 7,
        });
        let line = seal(&rec).expect("encodes");
        assert_eq!(check_seal(&line), Ok(()));
        let v: serde_json::Value = serde_json::from_slice(&line).expect("valid JSON");
        assert_eq!(v["polls"], 7);
        assert!(v["crc32"].is_string());
        for i in 0..line.len() - 1 {
            let mut bad = line.clone();
            bad[i] ^= 0x10;
            assert!(
                check_seal(&bad).is_err(),
                "byte {i} changed and the seal held"
            );
        }
        assert_eq!(check_seal(b"{\"type\":\"end\"}\n"), Err(Unsealed::NoSeal));
        assert_eq!(check_seal(b""), Err(Unsealed::NoSeal));
    }
}
