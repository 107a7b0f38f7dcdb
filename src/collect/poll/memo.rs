//! A switch's `show queuing interface` answer, parsed from the last one: the poll loop of a
//! switch keeps its last text, parse and [`queuing::Trace`], and the next answer's parse reads
//! only the lines that changed (`parse/switch/nxos/queuing/delta.rs`, exact). The samples it
//! hands on share their keys with the last poll's, so the store matches them by pointer.
//!
//! Only for text answers; JSON and other kinds are parsed as before.

use crate::metrics::Parsed;
use crate::parse::switch::common::json_text;
use crate::parse::switch::nxos::{self, queuing};
use crate::parse::{self, Ctx, Options, ParseKind, capture};

/// The last parse of one probe's answer.
struct Entry {
    probe: usize,
    text: String,
    parsed: Parsed,
    trace: queuing::Trace,
}

/// One switch's memos (one per queuing probe, in practice one).
#[derive(Default)]
pub(crate) struct Memo {
    entries: Vec<Entry>,
    /// Answers taken from a memo.
    #[cfg(test)]
    pub hits: u64,
}

impl Memo {
    /// What `parse::parse_with(kind, text, ctx, opts)` answers, for probe `probe`.
    pub fn part(
        &mut self,
        probe: usize,
        kind: ParseKind,
        text: &str,
        ctx: &Ctx,
        opts: &mut Options,
    ) -> Parsed {
        let at = self.entries.iter().position(|e| e.probe == probe);
        if kind != ParseKind::NxosQueuing {
            if let Some(i) = at {
                self.entries.swap_remove(i);
            }
            return parse::parse_with(kind, text, ctx, opts);
        }
        // As `parse::parse` does: the capture framing undone (an NX-OS 7.x answer's
        // `QoS-Group#` header lines read as prompts), the parser given what is left, and what
        // was skipped noted after.
        let (text, skipped) = capture::clean(text, true);
        let mut p = self.parsed(probe, at, &text, &ctx.name);
        skipped.note(&mut p);
        // And the `nic_counters` subset applied as `parse::parse_with` applies it.
        if let Some(k) = opts.keeper.as_deref_mut().filter(|k| k.filters()) {
            p.samples.retain(|s| k.keep_counter(&s.key.name));
        }
        p
    }

    /// `nxos::parse_queuing(text, sw)`, from the memo where it holds.
    fn parsed(&mut self, probe: usize, at: Option<usize>, text: &str, sw: &str) -> Parsed {
        if json_text(text).is_some() {
            if let Some(i) = at {
                self.entries.swap_remove(i);
            }
            return nxos::parse_queuing(text, sw);
        }
        if let Some(e) = at.and_then(|i| self.entries.get_mut(i))
            && queuing::update(&e.trace, &e.text, text, sw, &mut e.parsed)
        {
            e.text.clear();
            e.text.push_str(text);
            #[cfg(test)]
            {
                self.hits += 1;
            }
            return e.parsed.clone();
        }
        let (parsed, trace) = queuing::parse_traced(text, sw);
        let e = Entry {
            probe,
            text: text.to_owned(),
            parsed: parsed.clone(),
            trace,
        };
        match at.and_then(|i| self.entries.get_mut(i)) {
            Some(slot) => *slot = e,
            None => self.entries.push(e),
        }
        parsed
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
        let (pats, memo) = (patterns(), crate::parse::keep::NicMemo::default());
        let mut k = memo.keeper(&pats);
        let mut opts = Options {
            format_regex: None,
            keeper: Some(&mut k),
        };
        m.part(0, kind, text, &ctx(), &mut opts)
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
        let pfc = "Ethernet1/1  Auto On (8) 10 20\n";
        assert_eq!(
            part(&mut m, ParseKind::NxosPfc, pfc),
            plain(ParseKind::NxosPfc, pfc)
        );
        assert!(m.entries.is_empty());
        assert_eq!(m.hits, 3);
    }
}
