//! The shapes a pasted capture takes around the device's output, undone before a parser reads it:
//! Markdown code fences (```` ``` ````, `~~~`, and the `<pre>`/`<details>` lines of HTML kept around
//! a paste) and bold markers (`**Pkts discarded : 0**`) from an
//! issue tracker or a converted PDF, `grep -A/-B` group separators (`--`), elision lines (`..`,
//! `...`, and the typographic `…` a web page or word processor turns them into), a shell prompt with the command before the output (`admin@sonic:~$ show queue counters`,
//! `# pfcstat`), and the whole capture indented (copied from an e-mail or a doc). Lines removed
//! here are counted in a note, so nothing disappears silently; what remains is the output as the
//! device printed it.

use crate::metrics::Parsed;
use crate::parse::num;
use std::borrow::Cow;

/// What [`clean`] removed, by kind.
#[derive(Debug, Default, PartialEq)]
pub struct Skipped {
    pub fences: usize,
    pub separators: usize,
    pub prompts: usize,
}

impl Skipped {
    pub fn total(&self) -> usize {
        self.fences + self.separators + self.prompts
    }

    /// A note for the health bar and `rocetop parse` (none when nothing was skipped).
    pub fn note(&self, p: &mut Parsed) {
        if self.total() == 0 {
            return;
        }
        let mut parts = Vec::new();
        for (n, what) in [
            (self.fences, "Markdown fence"),
            (self.separators, "grep separator or elision"),
            (self.prompts, "prompt/command"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        p.note(format!(
            "skipped capture framing: {} lines ({})",
            self.total(),
            parts.join(", ")
        ));
    }
}

/// The HTML an issue tracker keeps around a pasted output (`<pre>`, a collapsed
/// `<details><summary>...</summary>` block) on a line of its own: a fence as well.
fn is_html_block(t: &str) -> bool {
    matches!(
        t,
        "<pre>" | "</pre>" | "<code>" | "</code>" | "<details>" | "</details>"
    ) || (t.starts_with("<summary>") && t.ends_with("</summary>"))
}

/// `...` where rows were left out; an article prints it as `…` (U+2026), sometimes doubled.
fn is_elision(t: &str) -> bool {
    !t.is_empty() && t.chars().count() <= 5 && t.chars().all(|c| c == '.' || c == '…')
}

/// How one line is treated.
enum Line<'a> {
    Keep(&'a str),
    Fence,
    Separator,
    Prompt,
}

fn classify(line: &str, shell_prompts: bool) -> Line<'_> {
    let t = num::trim(line);
    // Every framing shape below starts with one of these bytes (```, ~~~, an HTML tag, `--`, `.`,
    // `…` (lead byte 0xE2), `**`), and a shell prompt holds a `$` or `#`: a device's line (a
    // letter, a digit, `|`, `+`) is kept after one byte test and one vectorised search, instead of
    // a char-by-char search for the prompt characters on every line of every poll.
    let framing_lead = matches!(
        t.as_bytes().first(),
        Some(b'`' | b'~' | b'<' | b'-' | b'.' | 0xE2 | b'*')
    );
    let prompt_chars = shell_prompts && memchr::memchr2(b'$', b'#', t.as_bytes()).is_some();
    if !(framing_lead || prompt_chars) {
        return Line::Keep(line);
    }
    if t.starts_with("```") || t.starts_with("~~~") || is_html_block(t) {
        return Line::Fence;
    }
    if t == "--" || is_elision(t) {
        return Line::Separator;
    }
    if shell_prompts
        && t.contains(['$', '#'])
        && crate::parse::host::prompt::after_prompt(t).is_some_and(|w| !w.is_empty())
    {
        return Line::Prompt;
    }
    // `**Pkts discarded on ingress : 0**`: bold from Markdown, around the whole line.
    if let Some(inner) = t.strip_prefix("**").and_then(|x| x.strip_suffix("**")) {
        return Line::Keep(inner);
    }
    Line::Keep(line)
}

/// The capture without its framing, and what was skipped. Borrowed when there was nothing to undo
/// (the live path: a device's own output costs one scan). `shell_prompts`: remove shell prompt
/// lines (`user@host:~$ cmd`, `# cmd`); NX-OS parsers read their own `switch# show ...` lines.
pub fn clean(text: &str, shell_prompts: bool) -> (Cow<'_, str>, Skipped) {
    let mut skipped = Skipped::default();
    let mut indent = usize::MAX;
    let mut changed = false;
    for line in num::lines(text) {
        match classify(line, shell_prompts) {
            Line::Keep(l) => {
                changed |= l.len() != line.len();
                if !num::trim(l).is_empty() {
                    indent = indent.min(lead(l));
                }
            }
            Line::Fence => skipped.fences += 1,
            Line::Separator => skipped.separators += 1,
            Line::Prompt => skipped.prompts += 1,
        }
    }
    let indent = if indent == usize::MAX { 0 } else { indent };
    if !changed && indent == 0 && skipped.total() == 0 {
        return (Cow::Borrowed(text), skipped);
    }
    let mut out = String::with_capacity(text.len());
    for line in num::lines(text) {
        if let Line::Keep(l) = classify(line, shell_prompts) {
            out.push_str(dedent(l, indent));
            out.push('\n');
        }
    }
    (Cow::Owned(out), skipped)
}

/// What [`clean`] makes of a line it keeps as it is, the capture's common indent being `indent`.
pub fn dedent(l: &str, indent: usize) -> &str {
    // The common indent is whitespace on every non-blank line; a blank line may be shorter.
    l.get(indent..)
        .unwrap_or_else(|| l.trim_start_matches([' ', '\t']))
}

/// Per line of `text`, its line in what [`clean`] gives when `clean` keeps it as it is (u32::MAX:
/// removed, or changed beyond the common indent), and that indent. For a caller that patches a
/// cleaned text where lines changed ([`same_framing`]).
pub fn kept_lines(text: &str, shell_prompts: bool) -> (Vec<u32>, usize) {
    let (mut map, mut n, mut indent) = (Vec::new(), 0u32, usize::MAX);
    for line in num::lines(text) {
        match classify(line, shell_prompts) {
            Line::Keep(l) => {
                if !num::trim(l).is_empty() {
                    indent = indent.min(lead(l));
                }
                map.push(if l.len() == line.len() { n } else { u32::MAX });
                n += 1;
            }
            Line::Fence | Line::Separator | Line::Prompt => map.push(u32::MAX),
        }
    }
    (map, if indent == usize::MAX { 0 } else { indent })
}

/// Whether line `new` may replace `old`, a line [`clean`] kept as it is, leaving what `clean`
/// does to every other line the same: `new` is kept as it is too, as blank as `old` and with
/// the same indent (so the common indent and what was skipped do not move). Then `clean` of the
/// new text is `clean` of the old with that line's [`dedent`] in its place.
pub fn same_framing(old: &str, new: &str, shell_prompts: bool) -> bool {
    matches!(classify(new, shell_prompts), Line::Keep(l) if l.len() == new.len())
        && num::trim(old).is_empty() == num::trim(new).is_empty()
        && lead(old) == lead(new)
}

/// The leading spaces and tabs of a line.
fn lead(l: &str) -> usize {
    l.bytes().take_while(|b| matches!(b, b' ' | b'\t')).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_is_removed_and_counted() {
        let text = "```\nadmin@sonic:~$ show queue counters\n    Port  TxQ\n  --------\n--\n **Pkts : 0** \n...\n```\n";
        let (c, s) = clean(text, true);
        assert_eq!(c, "    Port  TxQ\n  --------\nPkts : 0\n");
        assert_eq!(
            s,
            Skipped {
                fences: 2,
                separators: 2,
                prompts: 1
            }
        );
        let (c, _) = clean("    Port  TxQ\n\n  --------\n", true);
        assert_eq!(c, "  Port  TxQ\n\n--------\n", "the common indent goes");
        let (c, s) = clean(
            "<details>\n  <summary>Omnipath</summary>\n<pre>\nRcAcks  1\n</pre>\n",
            true,
        );
        assert_eq!((c.as_ref(), s.fences), ("RcAcks  1\n", 4));
        let (c, s) = clean("Et1 TC0 0\n…\n……\nEt2 TC0 0\n", true);
        assert_eq!((c.as_ref(), s.separators), ("Et1 TC0 0\nEt2 TC0 0\n", 2));
        let (c, s) = clean("Port Rx\nEthernet0 1\n", true);
        assert!(matches!(c, Cow::Borrowed(_)));
        assert_eq!(s.total(), 0);
        // An NX-OS prompt stays for its parser when shell prompts are not removed.
        let (c, _) = clean("  sw# show int e1/1\n  Ethernet1/1 is up\n", false);
        assert_eq!(c, "sw# show int e1/1\nEthernet1/1 is up\n");
    }
}
