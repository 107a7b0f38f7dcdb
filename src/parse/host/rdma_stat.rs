//! `rdma statistic show [link <dev>/<port>]` (iproute2): the fallback where sysfs is not readable.
//!
//! Layouts: the default one (`link mlx5_0/1 name value name value ...`, one line per port, which
//! terminals and mail wrap anywhere, even between a name and its value), `-p`
//! (`link mlx5_0/1` then one indented `name value` per line) and `-j` (JSON). The text is read as
//! one stream of words: `link <dev>/<port>` starts a port, then names and values alternate.
//! Prompt and command lines (`[user@host ~]$ rdma stat show`) are skipped.

use super::hw_counters::rdma_sample;
use super::prompt;
use crate::metrics::Parsed;
use crate::parse::num;

/// A counter name as the kernel spells it (`np_cnp_sent`, `cc_rx_ce_pkts`).
fn is_name(w: &str) -> bool {
    w.starts_with(|c: char| c.is_ascii_alphabetic())
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// Where the word stream is.
struct Stream<'a> {
    node: &'a str,
    /// The current port: (device, port).
    link: Option<(&'a str, &'a str)>,
    /// `link` was the last word: the next is `<dev>/<port>`.
    want_link: bool,
    /// A name waiting for its value (possibly on the next line).
    name: Option<&'a str>,
}

impl<'a> Stream<'a> {
    /// Feed one word; false when it does not fit the structure.
    fn word(&mut self, w: &'a str, p: &mut Parsed) -> bool {
        if self.want_link {
            self.want_link = false;
            self.link = w
                .rsplit_once('/')
                .filter(|(d, port)| !d.is_empty() && !port.is_empty());
            return self.link.is_some();
        }
        if let Some(name) = self.name.take() {
            let Some(v) = num::count(w) else {
                return false;
            };
            let Some((dev, port)) = self.link else {
                return false;
            };
            let labels = [("node", self.node), ("device", dev), ("rdma_port", port)];
            p.push(rdma_sample(name, &labels, v));
            return true;
        }
        if w == "link" {
            self.want_link = true;
            return true;
        }
        if is_name(w) && self.link.is_some() {
            self.name = Some(w);
            return true;
        }
        false
    }

    /// A structure break (blank line, prompt): anything half-read is dropped.
    fn reset(&mut self) -> bool {
        let dangling = self.want_link || self.name.is_some();
        self.want_link = false;
        self.name = None;
        self.link = None;
        !dangling
    }
}

/// Parse `rdma statistic show` output of one node.
pub fn parse(text: &str, node: &str) -> Parsed {
    let t = text.trim_start();
    if t.starts_with('[') || t.starts_with('{') {
        if let Some(p) = json::parse(t, node) {
            return p;
        }
    }
    let mut p = Parsed::default();
    let mut s = Stream {
        node,
        link: None,
        want_link: false,
        name: None,
    };
    // The line that left a name or `link` dangling, to count it if the stream breaks there.
    let mut open_line: Option<&str> = None;
    for raw in text.lines() {
        let line = raw.trim_end_matches('\r');
        let trimmed = line.trim();
        let is_break = trimmed.is_empty()
            || prompt::command(trimmed, "rdma").is_some()
            || prompt::after_prompt(trimmed).is_some();
        if is_break {
            if !s.reset()
                && let Some(l) = open_line.take()
            {
                p.unknown(l);
            }
            continue;
        }
        let mut ok = true;
        for w in trimmed.split_whitespace() {
            if !s.word(w, &mut p) {
                ok = false;
            }
        }
        if !ok {
            p.unknown(line);
        }
        open_line = (ok && (s.want_link || s.name.is_some())).then_some(line);
    }
    if !s.reset()
        && let Some(l) = open_line
    {
        p.unknown(l);
    }
    p
}

mod json;

#[cfg(test)]
mod tests;
