//! The store's series, in chunks: a `Vec` of 200k series of ~100 bytes doubles to 26 MB when it
//! holds 13 MB, and leaves up to as much unused. Chunks of
//! [`CHUNK`] never move once full, so the room left over is at most one chunk's.

/// Series a chunk holds at most. The first grows as a `Vec` does, so a small store stays small.
const CHUNK: usize = 1024;

#[derive(Debug)]
pub(super) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Self {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunked<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn push(&mut self, v: T) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => {
                if c.len() == c.capacity() {
                    // Doubling, but never past a chunk.
                    c.reserve_exact(c.len().clamp(4, CHUNK - c.len()));
                }
                c.push(v);
            }
            _ => {
                let mut c = Vec::with_capacity(if self.chunks.is_empty() { 4 } else { CHUNK });
                c.push(v);
                self.chunks.push(c);
            }
        }
        self.len += 1;
    }

    /// Elements the chunks have room for.
    pub fn capacity(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum()
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks.get_mut(i / CHUNK)?.get_mut(i % CHUNK)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.chunks.iter().flatten()
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.chunks.iter_mut().flatten()
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(it: I) -> Self {
        let mut out = Chunked::default();
        for v in it {
            out.push(v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_hold_across_chunks() {
        let mut c = Chunked::default();
        for i in 0..3 * CHUNK + 5 {
            c.push(i);
        }
        assert_eq!(c.len(), 3 * CHUNK + 5);
        assert_eq!(c.get(CHUNK - 1), Some(&(CHUNK - 1)));
        assert_eq!(c.get(CHUNK), Some(&CHUNK));
        assert_eq!(c.get(3 * CHUNK + 5), None);
        if let Some(x) = c.get_mut(2 * CHUNK + 1) {
            *x = 7;
        }
        assert_eq!(c.get(2 * CHUNK + 1), Some(&7));
        assert_eq!(c.iter().count(), 3 * CHUNK + 5);
        assert!(c.chunks.iter().all(|x| x.capacity() <= CHUNK));
    }
}
