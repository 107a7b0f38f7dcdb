//! Appending records: each one a gzip member written with a single `write_all`, so the file on
//! disk is always a run of complete members plus at most one partial member at its end.

use super::RecordError;
use super::format::{End, FORMAT_VERSION, Header, MAGIC, Output, Poll, Record, SourceInfo};
use super::inventory;
use crate::collect::poll::Collected;
use crate::collect::source::Source;
use crate::config::Config;
use crate::metrics::{Ts, now_ms};
use flate2::Compression;
use flate2::write::GzEncoder;
use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct Writer {
    file: File,
    path: PathBuf,
    sources: HashMap<u32, SourceInfo>,
    bytes: u64,
    polls: u64,
    raw_bytes: u64,
}

/// One record as one gzip member.
pub(crate) fn encode(rec: &Record) -> Result<Vec<u8>, RecordError> {
    let mut json = serde_json::to_vec(rec).map_err(|e| RecordError::Encode(e.to_string()))?;
    json.push(b'\n');
    let mut gz = GzEncoder::new(
        Vec::with_capacity(json.len() / 4 + 64),
        Compression::default(),
    );
    gz.write_all(&json)
        .and_then(|_| gz.finish())
        .map_err(|e| RecordError::Encode(e.to_string()))
}

impl Writer {
    /// Create (or truncate) `path` and write the header: the config without secrets and the sources.
    pub fn create<'a>(
        path: &Path,
        cfg: &Config,
        sources: impl IntoIterator<Item = &'a Source>,
    ) -> Result<Self, RecordError> {
        let infos: Vec<SourceInfo> = sources.into_iter().map(SourceInfo::of).collect();
        let header = Header {
            magic: MAGIC.into(),
            format: FORMAT_VERSION,
            rocetop: env!("CARGO_PKG_VERSION").into(),
            created_ms: now_ms(),
            demo: cfg.demo,
            config_toml: inventory::config_toml(cfg),
            config: inventory::redacted_json(cfg),
            sources: infos.clone(),
        };
        let file = File::create(path).map_err(|e| RecordError::io(path, e))?;
        let mut w = Self {
            file,
            path: path.to_path_buf(),
            sources: infos.into_iter().map(|s| (s.id, s)).collect(),
            bytes: 0,
            polls: 0,
            raw_bytes: 0,
        };
        w.append(&Record::Header(header))?;
        Ok(w)
    }

    fn append(&mut self, rec: &Record) -> Result<(), RecordError> {
        let buf = encode(rec)?;
        self.file
            .write_all(&buf)
            .map_err(|e| RecordError::io(&self.path, e))?;
        self.bytes += buf.len() as u64;
        Ok(())
    }

    /// Append one poll: its raw outputs (replay parses them again), or its error.
    pub fn write(&mut self, c: &Collected) -> Result<(), RecordError> {
        let (name, kind, ctx_name, ctx_log) = match self.sources.get(&c.source.0) {
            Some(s) => (
                s.name.clone(),
                s.kind.clone(),
                s.ctx_name.clone(),
                s.ctx_log.clone(),
            ),
            None => (
                format!("source {}", c.source.0),
                "node".into(),
                String::new(),
                String::new(),
            ),
        };
        let outputs: Vec<Output> = c
            .raw
            .iter()
            .map(|(k, t)| Output {
                kind: k.name().to_string(),
                text: t.clone(),
            })
            .collect();
        self.raw_bytes += outputs.iter().map(|o| o.text.len() as u64).sum::<u64>();
        let poll = Poll {
            source: c.source.0,
            name,
            kind,
            ctx_name,
            ctx_log,
            at: c.at,
            outputs,
            error: c.error.clone(),
            notes: c.parsed.notes.clone(),
        };
        self.append(&Record::Poll(poll))?;
        self.polls += 1;
        Ok(())
    }

    /// Mark a clean end and flush to disk.
    pub fn finish(mut self, at: Ts) -> Result<Stats, RecordError> {
        let end = End {
            at,
            polls: self.polls,
        };
        self.append(&Record::End(end))?;
        self.file
            .sync_all()
            .map_err(|e| RecordError::io(&self.path, e))?;
        Ok(self.stats())
    }

    pub fn stats(&self) -> Stats {
        Stats {
            bytes: self.bytes,
            polls: self.polls,
            raw_bytes: self.raw_bytes,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// What has been written so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes on disk.
    pub bytes: u64,
    pub polls: u64,
    /// Bytes of raw output before compression.
    pub raw_bytes: u64,
}
