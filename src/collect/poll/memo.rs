//! A switch's `show queuing interface`, `show interface priority-flow-control` and `show
//! interface flowcontrol` answers, parsed from the last ones: the poll loop of a switch keeps
//! each one's last text, parse and trace, and the next answer's parse reads only the lines that
//! changed (`parse/switch/nxos/queuing/delta.rs`, `parse/switch/rows.rs`: exact). The samples it
//! hands on share their keys with the last poll's, so the store matches them by pointer.
//!
//! Only for NX-OS text answers; JSON and other kinds are parsed as before.

use crate::collect::collected::{of_ports, ports_keep};
use crate::metrics::Parsed;
use crate::parse::switch::common::{is_prompt_or_echo, json_text};
use crate::parse::switch::nxos::{self, flowcontrol, pfc, queuing};
use crate::parse::switch::rows;
use crate::parse::{self, Ctx, Options, ParseKind, capture, num};

/// What a parse recorded to read the next answer's changed lines again.
enum Trace {
    Queuing(queuing::Trace),
    Pfc(rows::Trace<pfc::State>),
    Flowcontrol(rows::Trace<()>),
}

/// The last parse of one probe's answer.
struct Entry {
    probe: usize,
    kind: ParseKind,
    /// The answer as it came, capture framing and all.
    raw: String,
    /// What cleaning it did: per line of `raw`, its line in the cleaned text
    /// (`capture::kept_lines`), the common indent, what was skipped.
    cleaned_line: Vec<u32>,
    indent: usize,
    skipped: capture::Skipped,
    /// The parser's answer for the cleaned text (without the note of what was skipped).
    parsed: Parsed,
    /// Per sample of `parsed`, whether the source's ports keep it (`collected::ports_keep`; empty:
    /// all): a memo's keys stay as they were, so the verdicts do too, and a label lookup a sample
    /// a poll was a visible part of export's CPU.
    keep: Vec<bool>,
    trace: Trace,
}

/// One switch's memos (one per probe of these kinds).
#[derive(Default)]
pub(crate) struct Memo {
    entries: Vec<Entry>,
    /// The switch's ports asked for (`Source::ports`; empty: all).
    ports: Vec<String>,
    /// Answers taken from a memo.
    #[cfg(test)]
    pub hits: u64,
}

impl Memo {
    /// The memos of a switch whose samples are restricted to `ports` (`collected::of_ports`).
    pub fn of_ports(ports: &[String]) -> Self {
        Memo {
            ports: ports.to_vec(),
            ..Memo::default()
        }
    }

    /// What `collected::of_ports(ports, parse::parse_with(kind, text, ctx, opts))` answers, for probe
    /// `probe`.
    pub fn part(
        &mut self,
        probe: usize,
        kind: ParseKind,
        text: &str,
        ctx: &Ctx,
        opts: &mut Options,
    ) -> Parsed {
        let at = self.entries.iter().position(|e| e.probe == probe);
        if !matches!(
            kind,
            ParseKind::NxosQueuing | ParseKind::NxosPfc | ParseKind::NxosFlowcontrol
        ) {
            if let Some(i) = at {
                self.entries.swap_remove(i);
            }
            return of_ports(&self.ports, parse::parse_with(kind, text, ctx, opts));
        }
        let sw = ctx.name.as_str();
        let mut p = match at.and_then(|i| self.update(i, kind, text, sw)) {
            Some(p) => p,
            None => self.parse(probe, kind, at, text, sw),
        };
        // And the `nic_counters` subset applied as `parse::parse_with` applies it.
        if let Some(k) = opts.keeper.as_deref_mut().filter(|k| k.filters()) {
            p.samples.retain(|s| k.keep_counter(&s.key.name));
        }
        p
    }

    /// Entry `i` brought to the answer `text` by reading again only its changed lines; None when
    /// that cannot be done (the entry is then replaced by a full parse).
    fn update(&mut self, i: usize, kind: ParseKind, text: &str, sw: &str) -> Option<Parsed> {
        let e = self.entries.get_mut(i).filter(|e| e.kind == kind)?;
        let ok = match raw_changes(&e.raw, &e.cleaned_line, e.indent, text) {
            Some(changes) => update_lines(&mut e.trace, sw, &mut e.parsed, &changes),
            None => {
                // The framing moved (or may have): compare the cleaned texts, as a full parse
                // would read them.
                let (old, _) = capture::clean(&e.raw, true);
                let (new, skipped) = capture::clean(text, true);
                if json_text(&new).is_some() {
                    return None;
                }
                let ok = match &mut e.trace {
                    Trace::Queuing(t) => queuing::update(t, &old, &new, sw, &mut e.parsed),
                    Trace::Pfc(t) => rows::update(&pfc::Text { sw }, t, &old, &new, &mut e.parsed),
                    Trace::Flowcontrol(t) => {
                        rows::update(&flowcontrol::Text { sw }, t, &old, &new, &mut e.parsed)
                    }
                };
                if ok {
                    (e.cleaned_line, e.indent) = capture::kept_lines(text, true);
                    e.skipped = skipped;
                }
                ok
            }
        };
        if !ok {
            return None;
        }
        e.raw.clear();
        e.raw.push_str(text);
        #[cfg(test)]
        {
            self.hits += 1;
        }
        let mut p = kept(&mut e.parsed, &e.keep);
        e.skipped.note(&mut p);
        Some(p)
    }

    /// The full parse, as `parse::parse` does it: the capture framing undone (an NX-OS 7.x
    /// answer's `QoS-Group#` header lines read as prompts), the parser given what is left, what
    /// was skipped noted after; remembered with its trace for a text answer.
    fn parse(
        &mut self,
        probe: usize,
        kind: ParseKind,
        at: Option<usize>,
        raw: &str,
        sw: &str,
    ) -> Parsed {
        let (text, skipped) = capture::clean(raw, true);
        if json_text(&text).is_some() {
            if let Some(i) = at {
                self.entries.swap_remove(i);
            }
            let mut p = match kind {
                ParseKind::NxosPfc => nxos::parse_pfc(&text, sw),
                ParseKind::NxosFlowcontrol => nxos::parse_flowcontrol(&text, sw),
                _ => nxos::parse_queuing(&text, sw),
            };
            skipped.note(&mut p);
            return of_ports(&self.ports, p);
        }
        let (parsed, trace) = match kind {
            ParseKind::NxosPfc => {
                let (p, t) = rows::parse_traced(&pfc::Text { sw }, &text);
                (p, Trace::Pfc(t))
            }
            ParseKind::NxosFlowcontrol => {
                let (p, t) = rows::parse_traced(&flowcontrol::Text { sw }, &text);
                (p, Trace::Flowcontrol(t))
            }
            _ => {
                let (p, t) = queuing::parse_traced(&text, sw);
                (p, Trace::Queuing(t))
            }
        };
        let (cleaned_line, indent) = capture::kept_lines(raw, true);
        let mut parsed = parsed;
        let mut keep = if self.ports.is_empty() {
            Vec::new()
        } else {
            ports_keep(&self.ports, &parsed.samples)
        };
        // Every sample kept (the switch's ports are all asked for): a plain copy, as without ports.
        if keep.iter().all(|&k| k) {
            keep = Vec::new();
        }
        let mut p = kept(&mut parsed, &keep);
        skipped.note(&mut p);
        let e = Entry {
            probe,
            kind,
            raw: raw.to_owned(),
            cleaned_line,
            indent,
            skipped,
            parsed,
            keep,
            trace,
        };
        match at.and_then(|i| self.entries.get_mut(i)) {
            Some(slot) => *slot = e,
            None => self.entries.push(e),
        }
        p
    }
}

/// A copy of `parsed` with the samples `keep` says (all where `keep` is empty).
fn kept(parsed: &mut Parsed, keep: &[bool]) -> Parsed {
    if keep.is_empty() {
        return parsed.clone();
    }
    let samples = std::mem::take(&mut parsed.samples);
    let mut p = parsed.clone();
    p.samples = samples
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(s, _)| s.clone())
        .collect();
    parsed.samples = samples;
    p
}

/// The lines of `text` that differ from an entry's last answer `raw` (its `cleaned_line` and
/// `indent`), as lines of the cleaned text (index, old text, new text), when capture cleaning
/// keeps each of them as it is and the cleaned text is then the last one with those lines in place (`capture::same_framing`), and none of them can
/// make the answer read as NX-API JSON (`json_text` skips prompt and echo lines and looks for a
/// `{`). None otherwise: the lines' count or framing changed. Only the new lines are checked for
/// JSON: the last answer was not JSON, and `json_text` stops at the first line that is neither
/// blank nor a prompt or echo, which a new line that is not JSON-like is, whatever it replaced.
fn raw_changes<'e, 't>(
    raw: &'e str,
    cleaned_line: &[u32],
    indent: usize,
    text: &'t str,
) -> Option<Vec<(usize, &'e str, &'t str)>> {
    let json_like = |l: &str| memchr::memchr(b'{', l.as_bytes()).is_some() || is_prompt_or_echo(l);
    let mut changes = Vec::new();
    for (line, x, y) in num::diff_lines(raw, text)? {
        let at = cleaned_line.get(line).copied().filter(|&l| l != u32::MAX)?;
        if !capture::same_framing(x, y, true) || json_like(y) {
            return None;
        }
        let (x, y) = (capture::dedent(x, indent), capture::dedent(y, indent));
        changes.push((at as usize, x, y));
    }
    Some(changes)
}

/// The parse behind `trace` brought to a text whose lines `changes` changed.
fn update_lines(
    trace: &mut Trace,
    sw: &str,
    parsed: &mut Parsed,
    changes: &[(usize, &str, &str)],
) -> bool {
    match trace {
        Trace::Queuing(t) => queuing::update_lines(t, sw, parsed, changes),
        Trace::Pfc(t) => rows::update_lines(&pfc::Text { sw }, t, parsed, changes),
        Trace::Flowcontrol(t) => rows::update_lines(&flowcontrol::Text { sw }, t, parsed, changes),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> Ctx {
        Ctx::named("leaf1")
    }

    /// A `nic_counters` subset, as sources are given one (switch samples are not subject to it).
    fn patterns() -> Vec<String> {
        vec!["rx_bytes".to_string()]
    }

    fn part(m: &mut Memo, kind: ParseKind, text: &str) -> Parsed {
        part_of(m, 0, kind, text)
    }

    fn part_of(m: &mut Memo, probe: usize, kind: ParseKind, text: &str) -> Parsed {
        let (pats, memo) = (patterns(), crate::parse::keep::NicMemo::default());
        let mut k = memo.keeper(&pats);
        let mut opts = Options {
            format_regex: None,
            keeper: Some(&mut k),
        };
        m.part(probe, kind, text, &ctx(), &mut opts)
    }

    /// With ports asked for, every answer (parsed in full, from the memo, JSON, another kind) is
    /// the plain parse restricted as `collected::of_ports` restricts it; with every port asked for,
    /// the plain parse.
    #[test]
    fn answers_keep_only_the_ports_asked_for() {
        let queuing = |v: u64| {
            let port = |p: &str, v: u64| {
                format!(
                    "Egress Queuing for {p} [System]\n+---+\n|  QOS GROUP 1 |\n+---+\n|  Tx Pkts | {v} | 0 |\n"
                )
            };
            format!("{}{}", port("Eth1/1", v), port("Eth1/2", v * 2))
        };
        let pfc = |v: u64| {
            format!(
                "Ethernet1/1  Auto On (8) {v} 20\nEthernet1/2  Auto Off {} 0\n",
                v * 2
            )
        };
        let json = r#"{"TABLE_pfc_interface": {"ROW_pfc_interface": [
            {"if_name_str": "Ethernet1/1", "rx-stats": 1}, {"if_name_str": "Ethernet1/2", "rx-stats": 2}]}}"#;
        let other = "Ethernet1/1 is up\n  1 input packets\nEthernet1/2 is up\n  2 input packets\n";
        for asked in [&["Ethernet1/2"][..], &["Ethernet1/1", "Ethernet1/2"]] {
            let ports: Vec<String> = asked.iter().map(|p| p.to_string()).collect();
            // Whether `got` is `all` restricted to the ports, and fewer where one port is asked.
            let check = |got: &Parsed, all: Parsed, t: &str| {
                assert!(!got.samples.is_empty());
                assert_eq!(
                    got.samples.len() < all.samples.len(),
                    asked.len() == 1,
                    "{t}"
                );
                assert_eq!(*got, of_ports(&ports, all), "{t}");
            };
            let mut m = Memo::of_ports(&ports);
            for v in [1, 2, 3] {
                for (probe, kind, t) in [
                    (0, ParseKind::NxosQueuing, queuing(v)),
                    (1, ParseKind::NxosPfc, pfc(v)),
                ] {
                    check(&part_of(&mut m, probe, kind, &t), plain(kind, &t), &t);
                }
            }
            assert_eq!(m.hits, 4, "every answer after the first of each");
            for (kind, t) in [
                (ParseKind::NxosPfc, json),
                (ParseKind::NxosInterface, other),
            ] {
                check(&part_of(&mut m, 1, kind, t), plain(kind, t), t);
            }
        }
    }

    fn plain(kind: ParseKind, text: &str) -> Parsed {
        let (pats, memo) = (patterns(), crate::parse::keep::NicMemo::default());
        let mut k = memo.keeper(&pats);
        let mut opts = Options {
            format_regex: None,
            keeper: Some(&mut k),
        };
        parse::parse_with(kind, text, &ctx(), &mut opts)
    }

    #[test]
    fn answers_as_a_full_parse_and_takes_moved_values_from_the_memo() {
        let box_of = |v: u64| {
            format!(
                "Egress Queuing for Eth1/1 [System]\n+---+\n|  QOS GROUP 1 |\n+---+\n|  Tx Pkts | {v} | 0 |\n|  Tx Byts | {} | 0 |\n",
                v * 9
            )
        };
        let mut m = Memo::default();
        for v in [1, 2, 3] {
            let t = box_of(v);
            assert_eq!(
                part(&mut m, ParseKind::NxosQueuing, &t),
                plain(ParseKind::NxosQueuing, &t)
            );
        }
        assert_eq!(m.hits, 2);
        // Capture framing is undone and noted as a full parse does.
        let framed = format!("```\n{}```\n", box_of(4));
        let p = part(&mut m, ParseKind::NxosQueuing, &framed);
        assert_eq!(p, plain(ParseKind::NxosQueuing, &framed));
        assert!(!p.notes.is_empty());
        assert_eq!(m.hits, 3);
        // JSON and other kinds go the usual way; JSON drops the memo.
        let json = "{\"TABLE_queuing_interface\": {}}";
        assert_eq!(
            part(&mut m, ParseKind::NxosQueuing, json),
            plain(ParseKind::NxosQueuing, json)
        );
        let other = "Ethernet1/1 is up\n  1 input packets\n";
        assert_eq!(
            part(&mut m, ParseKind::NxosInterface, other),
            plain(ParseKind::NxosInterface, other)
        );
        assert!(m.entries.is_empty());
        assert_eq!(m.hits, 3);
    }

    #[test]
    fn framed_answers_are_read_from_their_changed_lines_and_equal_a_full_parse() {
        // Indented, fenced, with a prompt and an echo: capture cleaning removes or changes these
        // lines, and the memo must read the changed lines as the cleaned text has them.
        let framed = |v: u64, extra: &str| {
            format!(
                "   ```\n   sw1# show queuing interface\n   Egress Queuing for Eth1/1 [System]\n   +---+\n   |  QOS GROUP 1 |\n   +---+\n   |  Tx Pkts | {v} | 0 |\n   |  Tx Byts | {} | 0 |\n{extra}   ```\n",
                v * 9
            )
        };
        let mut m = Memo::default();
        let mut hits = 0;
        for (v, extra, taken) in [
            (1, "", false),
            (2, "", true),
            (3, "", true),
            // Lines of framing added or replaced: the cleaned texts compared, as before.
            (3, "   ~~~\n", true),
            (4, "   # show clock\n", true),
            // A line less indented (every cleaned line moves), JSON-like lines: parsed whole,
            // and still equal.
            (5, "   # show clock\n", true),
            (6, " |  Tx Pkts | 7 | 0 |\n", false),
            (7, " |  Tx Pkts | 8 | 0 |\n", true),
            (8, "   {\n", false),
            (9, "   }\n", false),
            // An echo line (JSON-like) that stops being one, and back: equal all the same.
            (10, "   show clock\n", false),
            (11, "   shows clock\n", false),
            (12, "   shows clock\n", true),
            (13, "   show clock\n", false),
        ] {
            let t = framed(v, extra);
            let got = part(&mut m, ParseKind::NxosQueuing, &t);
            assert_eq!(got, plain(ParseKind::NxosQueuing, &t), "{t}");
            assert!(!got.samples.is_empty() && !got.notes.is_empty());
            hits += u64::from(taken);
            assert_eq!(m.hits, hits, "{t}");
        }
    }

    #[test]
    fn pfc_and_flowcontrol_answers_come_from_their_memos() {
        let pfc = |v: u64| {
            format!(
                "Ethernet1/1  Auto On (8) {v} 20\nEthernet1/2  Auto Off {} 0\n",
                v * 2
            )
        };
        let fc = |v: u64| format!("Eth1/1  on  on  off  off  {v}  {}\n", v + 1);
        let mut m = Memo::default();
        for v in [1, 2, 3] {
            for (probe, kind, t) in [
                (1, ParseKind::NxosPfc, pfc(v)),
                (2, ParseKind::NxosFlowcontrol, fc(v)),
            ] {
                let (pats, memo) = (patterns(), crate::parse::keep::NicMemo::default());
                let mut k = memo.keeper(&pats);
                let mut opts = Options {
                    format_regex: None,
                    keeper: Some(&mut k),
                };
                let got = m.part(probe, kind, &t, &ctx(), &mut opts);
                assert_eq!(got, plain(kind, &t));
                assert!(!got.samples.is_empty());
            }
        }
        assert_eq!(m.hits, 4, "every answer after the first of each");
        // A key that changed (a port renamed) is parsed in full, and still equal.
        let renamed = pfc(4).replace("Ethernet1/2", "Ethernet1/7");
        let mut opts = Options::default();
        let got = m.part(1, ParseKind::NxosPfc, &renamed, &ctx(), &mut opts);
        assert_eq!(
            got,
            parse::parse_with(
                ParseKind::NxosPfc,
                &renamed,
                &ctx(),
                &mut Options::default()
            )
        );
        assert_eq!(m.hits, 4);
    }
}
