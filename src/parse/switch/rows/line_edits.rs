//! Edits of one line of a captured answer, for the tests that hold a line memo's update equal to
//! a full parse (this module's and the queuing delta's).

/// `line` with every digit one higher (9 wraps to 0): a changed value, the same layout.
pub fn bump_digits(line: &str) -> String {
    line.chars()
        .map(|c| match c.to_digit(10) {
            Some(d) => char::from_digit((d + 1) % 10, 10).unwrap_or(c),
            None => c,
        })
        .collect()
}

/// The text of `lines` with line `i` replaced by `with`, or removed when `with` is `None`.
pub fn with_line(lines: &[&str], i: usize, with: Option<&str>) -> String {
    let mut v = lines.to_vec();
    match with {
        Some(l) => v[i] = l,
        None => {
            v.remove(i);
        }
    }
    v.join("\n") + "\n"
}
