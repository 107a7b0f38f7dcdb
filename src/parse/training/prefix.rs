//! What launchers put around a line: CR line ends, ANSI colours, MPI / torchrun / srun rank prefixes,
//! and several tagged lines glued onto one when ranks write at once.

use std::borrow::Cow;

/// At most `max` bytes of `line`, cut on a character boundary.
pub(super) fn truncate(line: &str, max: usize) -> &str {
    if line.len() <= max {
        return line;
    }
    let mut end = max;
    while end > 0 && !line.is_char_boundary(end) {
        end -= 1;
    }
    line.get(..end).unwrap_or("")
}

/// The line without its line end (LF, CRLF, stray CR) and without ANSI escape sequences.
pub(super) fn clean(line: &str) -> Cow<'_, str> {
    let line = line.trim_end_matches(['\r', '\n']);
    if !line.contains('\x1b') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // CSI: parameters, then one final byte in @..~
            Some('[') => {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            // OSC: up to BEL or ESC \
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' {
                        chars.next();
                        break;
                    }
                }
            }
            // two-byte escapes (ESC c, ESC =, ...)
            _ => {}
        }
    }
    Cow::Owned(out)
}

/// Split a physical line where another tagged line begins (`...0.5 |[1,3]<stdout>:iteration ...`),
/// so that each part is read with its own rank.
pub(super) fn split_tagged(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let bytes = line.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        if bytes[i] == b'[' && tag_len(&line[i..]).is_some() {
            parts.push(&line[start..i]);
            start = i;
        }
        i += 1;
    }
    parts.push(&line[start..]);
    parts
}

/// The length of a rank tag at the start of `s`, with the rank: `[1,3]<stdout>:` (Open MPI
/// `--tag-output`), `[rank3]:` (torch's own prefix on a rank's traceback) or torchrun's `--tee`
/// prefix `[default3]:` (its template `[${role_name}${local_rank}]:`; the role is `default`
/// unless `--role` names one, and the number is the rank on its node).
fn tag_len(s: &str) -> Option<(usize, u32)> {
    let rest = s.strip_prefix('[')?;
    let role = rest
        .bytes()
        .take_while(|c| c.is_ascii_alphabetic() || *c == b'_')
        .count();
    if role > 0 && role <= 32 {
        let (n, used) = digits(&rest[role..])?;
        let mut tail = &rest[role + used..];
        let mut n = n;
        // torchx through torchrun: `[trainer0|3]:` (replica, then the rank on its node)
        if let Some(r) = tail.strip_prefix('|') {
            let (local, used) = digits(r)?;
            n = local;
            tail = &r[used..];
        }
        let after = tail.strip_prefix("]:")?;
        return Some((s.len() - after.len(), n));
    }
    let (_, used) = digits(rest)?;
    let r = rest[used..].strip_prefix(',')?;
    let (n, used) = digits(r)?;
    let r = r[used..].strip_prefix(']')?;
    let r = r.strip_prefix('<')?;
    let close = r.find(">:")?;
    let stream = &r[..close];
    if !matches!(stream, "stdout" | "stderr" | "stddiag") {
        return None;
    }
    let after = &r[close + 2..];
    Some((s.len() - after.len(), n))
}

/// Leading decimal digits: their value (if it fits) and how many bytes they take.
fn digits(s: &str) -> Option<(u32, usize)> {
    let used = s.bytes().take_while(u8::is_ascii_digit).count();
    if used == 0 || used > 9 {
        return None;
    }
    Some((s[..used].parse().ok()?, used))
}

/// The line without its rank prefixes, and the rank they named. Prefixes stack (`srun -l` around
/// `mpirun --tag-output`), so a few are taken off in turn; the innermost rank wins.
pub(super) fn strip(line: &str) -> (&str, Option<u32>) {
    let mut body = line;
    let mut rank = None;
    for _ in 0..4 {
        if let Some((len, r)) = tag_len(body) {
            body = &body[len..];
            rank = Some(r);
            continue;
        }
        // MPICH `-prepend-rank`: `[3] text`
        if let Some(rest) = body.strip_prefix('[')
            && let Some((r, used)) = digits(rest)
            && let Some(after) = rest[used..].strip_prefix("] ")
        {
            body = after;
            rank = Some(r);
            continue;
        }
        // torchx: `trainer/0 [3]:text` (role, replica, then the rank on its node)
        if let Some((len, r)) = torchx_len(body) {
            body = &body[len..];
            rank = Some(r);
            continue;
        }
        // `srun --label`: `3: text` (a time like `12:42:20` has no space after its colon)
        let t = body.trim_start_matches(' ');
        if let Some((r, used)) = digits(t)
            && let Some(after) = t[used..].strip_prefix(": ")
        {
            body = after;
            rank = Some(r);
            continue;
        }
        break;
    }
    (body, rank)
}

/// Role names a launcher prints bare before a rank (`trainer0: text`); other words followed by a
/// number and a colon are the line's own (`epoch1: ...`).
const ROLES: &[&str] = &["trainer", "worker", "default"];

/// The length of a torchx prefix at the start of `s` and its rank: `ROLE/REPLICA [RANK]:`, or a
/// bare `ROLE N:` of [`ROLES`].
fn torchx_len(s: &str) -> Option<(usize, u32)> {
    let role = s
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
        .count();
    if role == 0 || role > 32 || !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    if let Some(rest) = s[role..].strip_prefix('/') {
        let (_, used) = digits(rest)?;
        let r = rest[used..].strip_prefix(" [")?;
        let (n, used) = digits(r)?;
        let after = r[used..].strip_prefix("]:")?;
        return Some((s.len() - after.len(), n));
    }
    let name = ROLES.iter().find(|n| s.starts_with(**n))?;
    let (n, used) = digits(&s[name.len()..])?;
    let after = s[name.len() + used..].strip_prefix(':')?;
    Some((s.len() - after.len(), n))
}

/// A rank named inside the line: DeepSpeed's and Megatron's `[Rank 0]`, Primus' `[rank-7/8]`.
pub(super) fn body_rank(body: &str) -> Option<u32> {
    let bytes = body.as_bytes();
    let mut from = 0;
    while let Some(off) = body.get(from..)?.find('[') {
        let at = from + off;
        let rest = &body[at + 1..];
        if rest.len() >= 5 && rest.as_bytes()[..4].eq_ignore_ascii_case(b"rank") {
            let r = rest[4..].trim_start_matches([' ', '-']);
            if let Some((n, used)) = digits(r) {
                let tail = &r[used..];
                let tail = match tail.strip_prefix('/') {
                    Some(t) => t.trim_start_matches(|c: char| c.is_ascii_digit()),
                    None => tail,
                };
                if tail.starts_with(']') {
                    return Some(n);
                }
            }
        }
        from = at + 1;
        if from >= bytes.len() {
            break;
        }
    }
    None
}

/// The lab's `  → ...` lines that follow each `Iteration N | ...` line.
pub(super) fn is_continuation(body: &str) -> bool {
    body.trim_start().starts_with('→')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_prefixes() {
        assert_eq!(strip("[1,3]<stdout>:iter=1"), ("iter=1", Some(3)));
        assert_eq!(strip("[1,12]<stderr>: x"), (" x", Some(12)));
        assert_eq!(strip("[rank5]: Traceback"), (" Traceback", Some(5)));
        assert_eq!(strip("  7: iteration 3"), ("iteration 3", Some(7)));
        assert_eq!(strip("[2] loss=1"), ("loss=1", Some(2)));
        assert_eq!(strip("12:42:20 loss=1"), ("12:42:20 loss=1", None));
        assert_eq!(strip("[1,0]<stdout>:[rank2]:x"), ("x", Some(2)));
        assert_eq!(strip("[1,0]<stdin>:x"), ("[1,0]<stdin>:x", None));
        // torchrun --tee 3, default and named roles (captured by scripts/frameworks.sh)
        assert_eq!(
            strip("[default1]:iter 3: loss 2.1"),
            ("iter 3: loss 2.1", Some(1))
        );
        assert_eq!(strip("[trainer12]:x"), ("x", Some(12)));
        assert_eq!(
            strip("[trainer0|3]:Step 1 | loss:2"),
            ("Step 1 | loss:2", Some(3))
        );
        assert_eq!(strip("[INFO]: x"), ("[INFO]: x", None));
        assert_eq!(strip("[default1] x"), ("[default1] x", None));
        // torchx, with its role and replica, and the bare role
        assert_eq!(
            strip("trainer/0 [1]:I0210 step 3"),
            ("I0210 step 3", Some(1))
        );
        assert_eq!(strip("trainer0: step: 3"), (" step: 3", Some(0)));
        assert_eq!(strip("epoch1: loss 2"), ("epoch1: loss 2", None));
        assert_eq!(strip("a/b [x]: loss 2"), ("a/b [x]: loss 2", None));
    }

    #[test]
    fn ranks_inside_the_line() {
        assert_eq!(
            body_rank("[2024] [INFO] [logging.py:96:log_dist] [Rank 0] step=1"),
            Some(0)
        );
        assert_eq!(body_rank("[20251202][rank-7/8][INFO ] iteration"), Some(7));
        assert_eq!(body_rank("[Ranking] 3"), None);
        assert_eq!(body_rank("["), None);
    }

    #[test]
    fn glued_tagged_lines_split() {
        let l = "[1,0]<stdout>:a=1[1,3]<stdout>:b=2 [x] [rank4]:c";
        assert_eq!(
            split_tagged(l),
            vec!["[1,0]<stdout>:a=1", "[1,3]<stdout>:b=2 [x] ", "[rank4]:c"]
        );
    }

    #[test]
    fn escapes_and_line_ends() {
        assert_eq!(clean("\x1b[32mloss\x1b[0m: 1\r\n"), "loss: 1");
        assert_eq!(clean("a\x1b]0;title\x07b"), "ab");
        assert_eq!(clean("a\x1b"), "a");
        assert_eq!(truncate("aé", 2), "a");
    }
}
