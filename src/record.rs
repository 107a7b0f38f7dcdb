//! Recordings: every source's raw outputs with their timestamps, in one append-only file that a
//! crash cannot spoil, and the replay feed that sends them through the same parsers and store.
//!
//! File format (version 1): a sequence of gzip members holding JSON lines, one record a line;
//! `zcat FILE | jq` reads it. The first member holds the header alone (config with secrets
//! removed, the sources); then `poll` records, one per poll; then `end` on a clean stop. The
//! deflate stream is sync-flushed after every record, so a kill -9 loses at most the record being
//! written and a file cut anywhere replays up to the cut; a new member (fresh dictionary, its own
//! CRC) starts every 30 s of recording, which bounds what a seek decodes.

pub mod format;
pub mod inventory;
pub mod reader;
pub mod replay;
pub mod writer;

pub use format::{FORMAT_VERSION, Header, Poll, SourceInfo};
pub use reader::{Cut, Pos, Reader};
pub use replay::{Feed, Replay, ReplayClock, ReplayControl, replay_feed};
pub use writer::Writer;

/// Why a recording could not be written or opened.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a rocetop recording ({why})")]
    NotARecording { path: String, why: String },
    #[error("{path}: recording format {found} is newer than this rocetop reads ({FORMAT_VERSION})")]
    TooNew { path: String, found: u32 },
    #[error("cannot encode a record: {0}")]
    Encode(String),
}

impl RecordError {
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        RecordError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}
