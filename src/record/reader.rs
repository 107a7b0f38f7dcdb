//! Reading a recording record by record. Each gzip member is decoded as far as it goes: a member
//! cut short (kill -9, a truncated copy) still yields every complete record in it. A damaged
//! member (CRC or deflate error) ends the reading at its start; the reason is kept in
//! [`Reader::cut`].

use super::RecordError;
use super::format::{
    End, FORMAT_VERSION, Header, MAGIC, Poll, Record, SEALED_SINCE, Unsealed, check_seal,
};
use flate2::bufread::GzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// No member decodes to more than this (the writer rotates at 4 MiB of raw output, so a member
/// holds one record larger than that at most); beyond it, it is corrupt or crafted.
const MAX_MEMBER_BYTES: u64 = 64 << 20;
/// No record is larger than this: a poll's outputs are capped by `poll.max_answer_bytes` (32 MiB
/// by default). Parsing a record costs a small multiple of its size, so this bounds one record's
/// memory; a larger one ends the replay there, with the reason.
pub const MAX_RECORD_BYTES: usize = 40 << 20;

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
    /// The file's lines carry checksums (format 2 on); a line whose checksum fails ends reading.
    sealed: bool,
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
        let seal = check_seal(line);
        if seal == Err(Unsealed::Mismatch) {
            return Err(not(format!("header: {}", Unsealed::Mismatch)));
        }
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
        if found >= SEALED_SINCE
            && let Err(why) = seal
        {
            return Err(not(format!("header: {why}")));
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
            sealed: found >= SEALED_SINCE,
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
            if line.len() > MAX_RECORD_BYTES {
                self.done = true;
                self.cut = Some(bad(format!(
                    "a record of {} bytes, more than the {MAX_RECORD_BYTES} a recording holds",
                    line.len()
                )));
                break;
            }
            if self.sealed
                && let Err(why) = check_seal(&line)
            {
                self.done = true;
                self.cut = Some(bad(why.to_string()));
                break;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::poll::Collected;
    use crate::config::Config;
    use crate::metrics::Parsed;
    use crate::metrics::store::SourceId;
    use crate::parse::ParseKind;
    use crate::record::Writer;
    use proptest::prelude::*;

    /// A small recording: 40 polls, a member every 10 polls.
    fn recording() -> Vec<u8> {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("r");
        let mut w = Writer::create(&p, &Config::reference(), std::iter::empty()).expect("create");
        w.set_member_limits(10_000, u64::MAX);
        for i in 0..40i64 {
            let c = Collected {
                source: SourceId((i % 3) as u32),
                at: 1_000_000 + i * 1000,
                parsed: Parsed::default(),
                raw: Some(vec![(
                    ParseKind::Ethtool,
                    format!("     rx_prio3_pause: {}\n", i * 7),
                )]),
                error: (i == 7).then(|| "timed out after 5 s".to_string()),
                history: Default::default(),
            };
            w.write(&c).expect("write");
        }
        w.finish(2_000_000).expect("finish");
        std::fs::read(&p).expect("read")
    }

    fn read_all(bytes: &[u8]) -> Option<(Vec<Poll>, bool)> {
        let dir = tempfile::tempdir().ok()?;
        let p = dir.path().join("x");
        std::fs::write(&p, bytes).ok()?;
        let mut r = Reader::open(&p).ok()?;
        let polls: Vec<Poll> = r.by_ref().collect();
        Some((polls, r.end().is_some()))
    }

    #[test]
    fn whole_file_reads_back_with_end_and_seeks() {
        let bytes = recording();
        let (polls, closed) = read_all(&bytes).expect("reads");
        assert_eq!(polls.len(), 40);
        assert!(closed);
        assert_eq!(polls[7].error.as_deref(), Some("timed out after 5 s"));
        assert_eq!(polls[39].outputs[0].text, "     rx_prio3_pause: 273\n");
        // Seek back into an earlier member and forward again.
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("s");
        std::fs::write(&p, &bytes).expect("write");
        let mut r = Reader::open(&p).expect("open");
        let mut index = Vec::new();
        loop {
            let pos = r.pos();
            let Some(x) = r.next_poll() else { break };
            index.push((pos, x.at));
        }
        let members: std::collections::BTreeSet<u64> =
            index.iter().map(|(p, _)| p.member).collect();
        assert!(members.len() >= 4, "{members:?}");
        for k in [33, 2, 17, 18, 0] {
            r.seek(index[k].0).expect("seek");
            assert_eq!(r.next_poll().map(|p| p.at), Some(index[k].1));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn damaged_files_never_panic_and_yield_a_prefix(
            cut in 0usize..20_000,
            flips in proptest::collection::vec((0usize..20_000, 1u8..=255), 0..4),
        ) {
            let full = recording();
            let (all, _) = read_all(&full).expect("reads");
            let mut bytes = full.clone();
            for (i, x) in &flips {
                let n = bytes.len();
                if let Some(b) = bytes.get_mut(i % n) {
                    *b ^= x;
                }
            }
            bytes.truncate(cut.min(bytes.len()));
            if let Some((polls, _)) = read_all(&bytes) {
                prop_assert!(polls.len() <= all.len());
                // Whatever is delivered is what was recorded, in order.
                for (a, b) in polls.iter().zip(&all) {
                    prop_assert_eq!(a, b);
                }
            }
        }
    }
}
