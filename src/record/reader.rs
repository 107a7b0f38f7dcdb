//! Reading a recording record by record. Each gzip member is decoded as far as it goes: a member
//! cut short (kill -9, a truncated copy) still yields every complete record in it. A damaged
//! member (CRC or deflate error) ends the reading at its start; the reason is kept in
//! [`Reader::cut`].

use super::RecordError;
use super::format::{End, FORMAT_VERSION, Header, MAGIC, Poll, Record};
use flate2::bufread::GzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// No member decodes to more than this (the writer rotates at 4 MiB); beyond it, it is corrupt.
const MAX_MEMBER_BYTES: u64 = 256 << 20;

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
    /// Byte offset of the gzip member that could not be read to its end.
    pub offset: u64,
    pub reason: String,
}

/// Position of a record: the gzip member it is in and its line within the member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pos {
    pub member: u64,
    pub line: u32,
}

/// One member, decoded.
struct Member {
    offset: u64,
    next: u64,
    lines: Vec<Vec<u8>>,
    /// Why the member ended early, if it did with a record lost.
    bad: Option<String>,
}

pub struct Reader {
    file: Counting<BufReader<File>>,
    path: PathBuf,
    header: Header,
    cur: Option<Member>,
    line: usize,
    end: Option<End>,
    cut: Option<Cut>,
    done: bool,
}

/// Decode the member at the file's position; `None` at the end of the file.
fn read_member(r: &mut Counting<BufReader<File>>) -> Option<Member> {
    let offset = r.pos;
    match r.fill_buf() {
        Ok([]) => return None,
        Ok(_) => {}
        Err(e) => {
            return Some(Member {
                offset,
                next: offset,
                lines: Vec::new(),
                bad: Some(e.to_string()),
            });
        }
    }
    let mut data = Vec::new();
    let res = GzDecoder::new(&mut *r)
        .take(MAX_MEMBER_BYTES + 1)
        .read_to_end(&mut data);
    let mut bad = match res {
        Ok(_) if data.len() as u64 > MAX_MEMBER_BYTES => Some("record block too large".to_string()),
        Ok(_) => None,
        // The file ends inside the member (kill -9, truncation): its complete records are good.
        Err(e) if e.kind() == ErrorKind::UnexpectedEof => None,
        Err(e) => Some(e.to_string()),
    };
    if bad.is_some() {
        // A CRC or deflate error: the damage may lie anywhere in the member, so none of it is
        // trusted (a flipped bit can turn one digit into another and still be valid JSON).
        data.clear();
    }
    let mut lines: Vec<Vec<u8>> = data
        .split_inclusive(|b| *b == b'\n')
        .map(<[u8]>::to_vec)
        .collect();
    if lines.last().is_some_and(|l| l.last() != Some(&b'\n')) {
        lines.pop();
        bad.get_or_insert_with(|| "record cut short".to_string());
    }
    Some(Member {
        offset,
        next: r.pos,
        lines,
        bad,
    })
}

impl Reader {
    /// Open a recording and read its header.
    pub fn open(path: &Path) -> Result<Self, RecordError> {
        let file = File::open(path).map_err(|e| RecordError::io(path, e))?;
        let mut file = Counting {
            inner: BufReader::with_capacity(64 << 10, file),
            pos: 0,
        };
        let not = |why: String| RecordError::NotARecording {
            path: path.display().to_string(),
            why,
        };
        let Some(first) = read_member(&mut file) else {
            return Err(not("empty file".into()));
        };
        let Some(line) = first.lines.first() else {
            return Err(not(first.bad.unwrap_or_else(|| "no header".into())));
        };
        let v: serde_json::Value =
            serde_json::from_slice(line).map_err(|e| not(format!("header: {e}")))?;
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
            file,
            path: path.to_path_buf(),
            header,
            cur: Some(first),
            line: 1,
            end: None,
            cut: None,
            done: false,
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Position of the next record (for an index to seek back to).
    pub fn pos(&self) -> Pos {
        match &self.cur {
            Some(m) if self.line < m.lines.len() => Pos {
                member: m.offset,
                line: self.line as u32,
            },
            Some(m) => Pos {
                member: m.next,
                line: 0,
            },
            None => Pos {
                member: self.file.pos,
                line: 0,
            },
        }
    }

    /// Continue reading at a position that [`Reader::pos`] returned.
    pub fn seek(&mut self, pos: Pos) -> Result<(), RecordError> {
        self.done = false;
        self.cut = None;
        if self.cur.as_ref().is_some_and(|m| m.offset == pos.member) {
            self.line = pos.line as usize;
            return Ok(());
        }
        self.file
            .inner
            .seek(SeekFrom::Start(pos.member))
            .map_err(|e| RecordError::io(&self.path, e))?;
        self.file.pos = pos.member;
        self.cur = read_member(&mut self.file);
        self.line = pos.line as usize;
        Ok(())
    }

    /// The next record's JSON, moving to the next member as needed.
    fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            let m = self.cur.as_ref()?;
            if let Some(l) = m.lines.get(self.line) {
                self.line += 1;
                return Some(l.clone());
            }
            if let Some(reason) = &m.bad {
                self.cut = Some(Cut {
                    offset: m.offset,
                    reason: reason.clone(),
                });
                return None;
            }
            if self.file.pos != m.next {
                let next = m.next;
                if self.file.inner.seek(SeekFrom::Start(next)).is_err() {
                    return None;
                }
                self.file.pos = next;
            }
            self.cur = read_member(&mut self.file);
            self.line = 0;
        }
    }

    /// The next poll; `None` at the end of the file, at an `end` record, or at a damaged record.
    pub fn next_poll(&mut self) -> Option<Poll> {
        while !self.done {
            let at = self.pos();
            let Some(line) = self.next_line() else {
                self.done = true;
                break;
            };
            let bad = |reason: String| Cut {
                offset: at.member,
                reason,
            };
            let v: serde_json::Value = match serde_json::from_slice(&line) {
                Ok(v) => v,
                Err(e) => {
                    self.done = true;
                    self.cut = Some(bad(format!("record is not valid JSON: {e}")));
                    break;
                }
            };
            match v.get("type").and_then(|t| t.as_str()) {
                Some("poll") => match serde_json::from_value::<Record>(v) {
                    Ok(Record::Poll(p)) => return Some(p),
                    Ok(_) => {}
                    Err(e) => {
                        self.done = true;
                        self.cut = Some(bad(format!("poll record: {e}")));
                    }
                },
                Some("end") => {
                    self.end = match serde_json::from_value::<Record>(v) {
                        Ok(Record::End(e)) => Some(e),
                        _ => None,
                    };
                    self.done = true;
                }
                // A record type of a newer rocetop: skipped.
                _ => {}
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
