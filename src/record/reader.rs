//! Reading a recording record by record. A member that is cut short or fails its CRC ends the
//! reading there (everything before it is delivered); the reason is kept in [`Reader::cut`].

use super::RecordError;
use super::format::{End, FORMAT_VERSION, Header, MAGIC, Poll, Record};
use flate2::bufread::GzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// No record is this big (a poll is some kilobytes); beyond it the member is treated as corrupt.
const MAX_RECORD_BYTES: u64 = 256 << 20;

/// A `BufRead` that counts consumed bytes: the gzip decoder consumes exactly its member, so the
/// count is the file offset of the next member.
struct Counting<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counting<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.pos += amt as u64;
        self.inner.consume(amt);
    }
}

/// Where and why reading stopped before the end of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cut {
    /// Byte offset of the first record that could not be read.
    pub offset: u64,
    pub reason: String,
}

pub struct Reader {
    inner: Counting<BufReader<File>>,
    path: PathBuf,
    header: Header,
    end: Option<End>,
    cut: Option<Cut>,
    done: bool,
}

enum Next {
    Record(serde_json::Value),
    Eof,
    Bad(String),
}

fn read_one(r: &mut Counting<BufReader<File>>) -> Next {
    match r.fill_buf() {
        Ok([]) => return Next::Eof,
        Ok(_) => {}
        Err(e) => return Next::Bad(e.to_string()),
    }
    let mut text = Vec::new();
    let mut dec = GzDecoder::new(&mut *r).take(MAX_RECORD_BYTES + 1);
    if let Err(e) = dec.read_to_end(&mut text) {
        let why = if e.kind() == std::io::ErrorKind::UnexpectedEof {
            "record cut short".to_string()
        } else {
            e.to_string()
        };
        return Next::Bad(why);
    }
    if text.len() as u64 > MAX_RECORD_BYTES {
        return Next::Bad("record too large".into());
    }
    if text.last() != Some(&b'\n') {
        return Next::Bad("record cut short".into());
    }
    match serde_json::from_slice(&text) {
        Ok(v) => Next::Record(v),
        Err(e) => Next::Bad(format!("record is not valid JSON: {e}")),
    }
}

impl Reader {
    /// Open a recording and read its header.
    pub fn open(path: &Path) -> Result<Self, RecordError> {
        let file = File::open(path).map_err(|e| RecordError::io(path, e))?;
        let mut inner = Counting {
            inner: BufReader::with_capacity(64 << 10, file),
            pos: 0,
        };
        let not = |why: String| RecordError::NotARecording {
            path: path.display().to_string(),
            why,
        };
        let v = match read_one(&mut inner) {
            Next::Record(v) => v,
            Next::Eof => return Err(not("empty file".into())),
            Next::Bad(why) => return Err(not(why)),
        };
        if v.get("magic").and_then(|m| m.as_str()) != Some(MAGIC) {
            return Err(not("no rocetop header".into()));
        }
        let found = v.get("format").and_then(|f| f.as_u64()).unwrap_or(0) as u32;
        if found > FORMAT_VERSION {
            return Err(RecordError::TooNew {
                path: path.display().to_string(),
                found,
            });
        }
        let header = match serde_json::from_value::<Record>(v) {
            Ok(Record::Header(h)) => h,
            Ok(_) => return Err(not("first record is not a header".into())),
            Err(e) => return Err(not(format!("header: {e}"))),
        };
        Ok(Self {
            inner,
            path: path.to_path_buf(),
            header,
            end: None,
            cut: None,
            done: false,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// File offset of the next record (for an index to seek back to).
    pub fn offset(&self) -> u64 {
        self.inner.pos
    }

    /// Continue reading at a record offset that [`Reader::offset`] returned.
    pub fn seek(&mut self, offset: u64) -> Result<(), RecordError> {
        self.inner
            .inner
            .seek(SeekFrom::Start(offset))
            .map_err(|e| RecordError::io(&self.path, e))?;
        self.inner.pos = offset;
        self.done = false;
        self.cut = None;
        Ok(())
    }

    /// The next poll; `None` at the end of the file, at an `end` record, or at a damaged record.
    pub fn next_poll(&mut self) -> Option<Poll> {
        while !self.done {
            let at = self.inner.pos;
            match read_one(&mut self.inner) {
                Next::Eof => self.done = true,
                Next::Bad(reason) => {
                    self.done = true;
                    self.cut = Some(Cut { offset: at, reason });
                }
                Next::Record(v) => match v.get("type").and_then(|t| t.as_str()) {
                    Some("poll") => match serde_json::from_value::<Record>(v) {
                        Ok(Record::Poll(p)) => return Some(p),
                        Ok(_) => {}
                        Err(e) => {
                            self.done = true;
                            self.cut = Some(Cut {
                                offset: at,
                                reason: format!("poll record: {e}"),
                            });
                        }
                    },
                    Some("end") => {
                        self.end = serde_json::from_value::<Record>(v)
                            .ok()
                            .and_then(|r| match r {
                                Record::End(e) => Some(e),
                                _ => None,
                            });
                        self.done = true;
                    }
                    // A record type of a newer rocetop: skipped.
                    _ => {}
                },
            }
        }
        None
    }

    /// Why reading stopped before the end of the file, if it did.
    pub fn cut(&self) -> Option<&Cut> {
        self.cut.as_ref()
    }

    /// The `end` record, if the recorder stopped cleanly (and reading got there).
    pub fn end(&self) -> Option<&End> {
        self.end.as_ref()
    }
}

impl Iterator for Reader {
    type Item = Poll;
    fn next(&mut self) -> Option<Poll> {
        self.next_poll()
    }
}
