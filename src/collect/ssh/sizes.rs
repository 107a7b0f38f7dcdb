//! How much room to read a command's answer into.

/// The size of each command's last answer on a connection, so the next one is read into room
/// for it: a switch's ~200 KB answer grown by doubling was copied about once more, work
/// done again every poll. A few commands a connection; any more are not kept.
#[derive(Default)]
pub(super) struct AnswerSizes(std::sync::Mutex<Vec<(String, usize)>>);

impl AnswerSizes {
    const KEPT: usize = 8;

    /// Room for the answer to `cmd`: its last size and an eighth more, at most `max`.
    pub fn room(&self, cmd: &str, max: usize) -> usize {
        let sizes = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let last = sizes.iter().find(|(c, _)| c == cmd).map_or(0, |(_, n)| *n);
        (last + last / 8).min(max)
    }

    /// `cmd` answered `len` bytes.
    pub fn saw(&self, cmd: &str, len: usize) {
        let mut sizes = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, n)) = sizes.iter_mut().find(|(c, _)| c == cmd) {
            *n = len;
        } else if sizes.len() < Self::KEPT {
            sizes.push((cmd.to_string(), len));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Room is each command's own last size and an eighth, capped by the answer limit; commands
    /// past the few kept get none.
    #[test]
    fn answer_room_follows_each_command_s_last_size() {
        let s = AnswerSizes::default();
        assert_eq!(s.room("a", 1 << 20), 0);
        s.saw("a", 8000);
        s.saw("b", 80);
        assert_eq!((s.room("a", 1 << 20), s.room("b", 1 << 20)), (9000, 90));
        assert_eq!(s.room("a", 100), 100);
        s.saw("a", 800);
        assert_eq!(s.room("a", 1 << 20), 900);
        for i in 0..AnswerSizes::KEPT {
            s.saw(&format!("c{i}"), 8);
        }
        let last = format!("c{}", AnswerSizes::KEPT - 1);
        assert_eq!((s.room("c0", 99), s.room(&last, 99)), (9, 0));
    }
}
