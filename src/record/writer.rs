//! Appending records. Records are JSON lines in a deflate stream that is sync-flushed after every
//! record, so everything up to the last complete record is on disk and decodable at any moment;
//! the stream is cut into gzip members (a fresh dictionary) every [`MEMBER_SECONDS`] of recorded
//! time or [`MEMBER_RAW_BYTES`], which bounds what a seek must decode. Sharing one dictionary
//! across the records of a member makes the file about half the size of one member per record.

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

/// A new gzip member starts after this much recorded time...
pub const MEMBER_SECONDS: i64 = 30;
/// ...or this much JSON, whichever comes first.
pub const MEMBER_RAW_BYTES: u64 = 4 << 20;

/// The file, counting what reached it.
struct Sink {
    file: File,
    bytes: u64,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// The open member: where it started and how much went in.
struct Member {
    gz: GzEncoder<Sink>,
    first_at: Option<Ts>,
    raw: u64,
}

pub struct Writer {
    member: Option<Member>,
    /// Between members (after a failure to start one, the file is kept here).
    idle: Option<Sink>,
    path: PathBuf,
    sources: HashMap<u32, SourceInfo>,
    polls: u64,
    raw_bytes: u64,
    member_ms: i64,
    member_raw: u64,
}

fn line(rec: &Record) -> Result<Vec<u8>, RecordError> {
    super::format::seal(rec).map_err(|e| RecordError::Encode(e.to_string()))
}

/// A new file for a recording, readable by its owner only (it holds log lines and the
/// inventory): never one that exists, and never through a symlink (`O_EXCL` refuses both, a link
/// planted where the name will be included), so a planted link cannot make a recording overwrite
/// another file.
pub fn create_new(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let r = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path);
    r.map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => std::io::Error::new(
            e.kind(),
            "it exists (a recording never replaces a file): remove it or choose another name",
        ),
        _ => e,
    })
}

impl Writer {
    /// Create `path` (a new file, [`create_new`]) and write the header (its own member): the
    /// config without secrets and the sources.
    pub fn create<'a>(
        path: &Path,
        cfg: &Config,
        sources: impl IntoIterator<Item = &'a Source>,
    ) -> Result<Self, RecordError> {
        let file = create_new(path).map_err(|e| RecordError::io(path, e))?;
        Self::start(file, path, cfg, sources)
    }

    /// Create `path`, or where a file of that name exists `stem-2.ext`, `stem-3.ext`, ... (the
    /// screen's `r`: two recordings in one second, or a name already taken, get another name).
    pub fn create_unique<'a>(
        path: &Path,
        cfg: &Config,
        sources: impl IntoIterator<Item = &'a Source>,
    ) -> Result<Self, RecordError> {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
        let ext = path.extension().map(|e| e.to_string_lossy().into_owned());
        let mut last = None;
        for n in 1..1000 {
            let p = match (n, &stem) {
                (1, _) | (_, None) => path.to_path_buf(),
                (_, Some(stem)) => path.with_file_name(match &ext {
                    Some(ext) => format!("{stem}-{n}.{ext}"),
                    None => format!("{stem}-{n}"),
                }),
            };
            match create_new(&p) {
                Ok(file) => return Self::start(file, &p, cfg, sources),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && stem.is_some() => {
                    last = Some((p, e));
                }
                Err(e) => return Err(RecordError::io(&p, e)),
            }
        }
        let (p, e) =
            last.unwrap_or_else(|| (path.to_path_buf(), std::io::ErrorKind::AlreadyExists.into()));
        Err(RecordError::io(&p, e))
    }

    fn start<'a>(
        file: File,
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
        let mut w = Self {
            member: None,
            idle: Some(Sink { file, bytes: 0 }),
            path: path.to_path_buf(),
            sources: infos.into_iter().map(|s| (s.id, s)).collect(),
            polls: 0,
            raw_bytes: 0,
            member_ms: MEMBER_SECONDS * 1000,
            member_raw: MEMBER_RAW_BYTES,
        };
        w.append(&Record::Header(header), None)?;
        w.end_member()?;
        Ok(w)
    }

    fn io(&self, e: std::io::Error) -> RecordError {
        RecordError::io(&self.path, e)
    }

    /// Start a new gzip member after `ms` of recorded time or `raw` bytes of JSON (smaller members
    /// seek faster and compress worse; the defaults suit recordings of hours).
    pub fn set_member_limits(&mut self, ms: i64, raw: u64) {
        self.member_ms = ms.max(1);
        self.member_raw = raw.max(1);
    }

    /// Finish the open member, if any (writes its CRC trailer).
    fn end_member(&mut self) -> Result<(), RecordError> {
        if let Some(m) = self.member.take() {
            let sink = m.gz.finish().map_err(|e| self.io(e))?;
            self.idle = Some(sink);
        }
        Ok(())
    }

    /// One record, sync-flushed: on disk and decodable when this returns.
    fn append(&mut self, rec: &Record, at: Option<Ts>) -> Result<(), RecordError> {
        let buf = line(rec)?;
        let (limit_ms, limit_raw) = (self.member_ms, self.member_raw);
        let rotate = self.member.as_ref().is_some_and(|m| {
            m.raw >= limit_raw
                || matches!((m.first_at, at), (Some(a), Some(b)) if b - a >= limit_ms)
        });
        if rotate {
            self.end_member()?;
        }
        if self.member.is_none() {
            let Some(sink) = self.idle.take() else {
                return Err(self.io(std::io::Error::other("recording already closed")));
            };
            self.member = Some(Member {
                gz: GzEncoder::new(sink, Compression::default()),
                first_at: None,
                raw: 0,
            });
        }
        let r = match self.member.as_mut() {
            Some(m) => {
                m.first_at = m.first_at.or(at);
                m.raw += buf.len() as u64;
                m.gz.write_all(&buf).and_then(|_| m.gz.flush())
            }
            None => Ok(()),
        };
        r.map_err(|e| self.io(e))
    }

    /// Append one poll: its raw outputs (replay parses them again), or its error. A poll whose
    /// collector dropped its raw outputs (it finished before the recording began: `KeepRaw`) is
    /// left out, so that every poll recorded replays to what it gave live.
    pub fn write(&mut self, c: &Collected) -> Result<(), RecordError> {
        let Some(raw) = &c.raw else {
            return Ok(());
        };
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
        let outputs: Vec<Output> = raw
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
        self.append(&Record::Poll(poll), Some(c.at))?;
        self.polls += 1;
        Ok(())
    }

    /// Mark a clean end, finish the member and flush to disk.
    pub fn finish(mut self, at: Ts) -> Result<Stats, RecordError> {
        let end = End {
            at,
            polls: self.polls,
        };
        self.append(&Record::End(end), None)?;
        self.end_member()?;
        if let Some(s) = &self.idle {
            s.file.sync_all().map_err(|e| self.io(e))?;
        }
        Ok(self.stats())
    }

    pub fn stats(&self) -> Stats {
        let bytes = match (&self.member, &self.idle) {
            (Some(m), _) => m.gz.get_ref().bytes,
            (None, Some(s)) => s.bytes,
            (None, None) => 0,
        };
        Stats {
            bytes,
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn a_recording_is_a_new_file_of_its_owner_never_through_a_link() {
        let dir = tempfile::tempdir().expect("tmp");
        let cfg = Config::reference();
        let p = dir.path().join("r.rec");
        let w = Writer::create(&p, &cfg, std::iter::empty()).expect("create");
        drop(w);
        assert_eq!(mode(&p), 0o600, "whatever the umask");
        // An existing name: refused, the file untouched.
        let before = std::fs::read(&p).expect("read");
        let e = Writer::create(&p, &cfg, std::iter::empty())
            .err()
            .expect("exists");
        assert!(e.to_string().contains("never replaces"), "{e}");
        assert_eq!(std::fs::read(&p).expect("read"), before);
        // A link planted where the recording goes, to a file of the user's (or to nothing).
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep me").expect("w");
        let link = dir.path().join("l.rec");
        std::os::unix::fs::symlink(&victim, &link).expect("symlink");
        assert!(Writer::create(&link, &cfg, std::iter::empty()).is_err());
        assert_eq!(std::fs::read_to_string(&victim).expect("r"), "keep me");
        let dangling = dir.path().join("d.rec");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).expect("symlink");
        assert!(Writer::create(&dangling, &cfg, std::iter::empty()).is_err());
        assert!(
            !dir.path().join("nowhere").exists(),
            "not created through the link"
        );
        // The screen's `r`: another name where one is taken, a link included.
        let w = Writer::create_unique(&link, &cfg, std::iter::empty()).expect("unique");
        assert_eq!(w.path(), dir.path().join("l-2.rec"));
        let w2 = Writer::create_unique(&link, &cfg, std::iter::empty()).expect("unique");
        assert_eq!(w2.path(), dir.path().join("l-3.rec"));
        assert_eq!(mode(w2.path()), 0o600);
        assert_eq!(std::fs::read_to_string(&victim).expect("r"), "keep me");
    }
}
