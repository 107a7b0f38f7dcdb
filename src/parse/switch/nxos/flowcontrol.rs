//! `show interface flowcontrol` (802.3x link pause): the two-line header
//! (`Port Send FlowControl Receive FlowControl RxPause TxPause` / `admin oper admin oper`), rows of
//! port, send admin/oper, receive admin/oper, RxPause, TxPause; and JSON
//! (`TABLE_flowcontrol.ROW_flowcontrol`).

use crate::metrics::names::*;
use crate::metrics::{self, Parsed, Sink};
use crate::parse::num::{count, is_rule};
use crate::parse::switch::common::{Acc, is_prompt_or_echo, jnum, jstr, on_off};
use crate::parse::switch::normalize_port;
use crate::parse::switch::rows::{self, Rows};
use serde_json::Value;

struct Row<'a> {
    port: String,
    send_oper: Option<&'a str>,
    recv_oper: Option<&'a str>,
    rx: Option<u64>,
    tx: Option<u64>,
}

fn emit(acc: &mut dyn Sink, sw: &str, r: &Row) {
    let port = r.port.as_str();
    for (name, v) in [(SW_LINK_PAUSE_RX, r.rx), (SW_LINK_PAUSE_TX, r.tx)] {
        if let Some(v) = v {
            acc.put(
                name,
                &[("port", port), ("switch", sw)],
                metrics::Value::Counter(v),
            );
        }
    }
    // Send = the switch transmits pause frames (tx); receive = it honours them (rx).
    for (dir, st) in [("tx", r.send_oper), ("rx", r.recv_oper)] {
        if let Some(v) = st.and_then(on_off) {
            acc.put(
                SW_FLOWCONTROL_ENABLED,
                &[("direction", dir), ("port", port), ("switch", sw)],
                metrics::Value::Gauge(v),
            );
        }
    }
}

pub fn parse_text(text: &str, sw: &str) -> Parsed {
    let mut acc = Acc::default();
    let p = rows::parse_into(&Text { sw }, text, &mut acc);
    acc.into_parsed(p)
}

/// The text layout, a line at a time (`switch::rows`: a poll's answer is read again only where
/// its lines changed). Its rows stand alone: no state between lines.
pub struct Text<'a> {
    pub sw: &'a str,
}

impl Rows for Text<'_> {
    type State = ();

    fn step(&self, _: &mut (), raw: &str, acc: &mut dyn Sink, p: &mut Parsed) {
        let sw = self.sw;
        let t = crate::parse::num::trim(raw);
        if t.is_empty() || is_rule(t) || is_prompt_or_echo(t) {
            return;
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        let lower = t.to_ascii_lowercase();
        let header = lower.contains("flowcontrol")
            || toks
                .iter()
                .all(|w| matches!(w.to_ascii_lowercase().as_str(), "admin" | "oper"));
        if header {
            return;
        }
        match toks.as_slice() {
            [port, _sa, so, _ra, ro, rx, tx] if port.chars().any(|c| c.is_ascii_digit()) => {
                let (rx, tx) = (count(rx), count(tx));
                // `desired` (negotiating) and `Unsupp.` (the port cannot pause, printed by
                // Catalyst IOS) are states too: they give no on/off gauge, but the row's counts
                // stand.
                let known = |s: &str| {
                    on_off(s).is_some() || s.eq_ignore_ascii_case("desired") || is_unsupported(s)
                };
                if (rx.is_none() && tx.is_none()) || !known(so) || !known(ro) {
                    p.unknown(t);
                    return;
                }
                let r = Row {
                    port: normalize_port(port),
                    send_oper: Some(so),
                    recv_oper: Some(ro),
                    rx,
                    tx,
                };
                emit(acc, sw, &r);
            }
            _ => p.unknown(t),
        }
    }
}

/// `Unsupp.`, `unsupported`, `n/a`: the port has no such function.
fn is_unsupported(s: &str) -> bool {
    let l = s.trim_end_matches('.').to_ascii_lowercase();
    matches!(l.as_str(), "unsupp" | "unsupported" | "n/a" | "na")
}

/// Keys vary by release (`rx-pause` / `rxpause` / `rx_pause`): compare them without separators.
fn field<'a>(row: &'a Value, want: &[&str]) -> Option<&'a Value> {
    let m = row.as_object()?;
    m.iter()
        .find(|(k, _)| {
            let k: String = k
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            want.contains(&k.as_str())
        })
        .map(|(_, v)| v)
}

/// One `ROW_flowcontrol` of an NX-API reply (see `nxapi::parse_rows`).
pub fn json_row(p: &mut Parsed, acc: &mut Acc, sw: &str, r: &Value) {
    let Some(port) = jstr(r, "interface").or_else(|| jstr(r, "if_name_str")) else {
        p.unknown("ROW_flowcontrol without interface");
        return;
    };
    let s = |keys: &[&str]| field(r, keys).and_then(Value::as_str);
    let row = Row {
        port: normalize_port(&port),
        send_oper: s(&["sendoper", "sendoperstate", "txoper"]),
        recv_oper: s(&["recvoper", "receiveoper", "rxoper"]),
        rx: field(r, &["rxpause"]).and_then(jnum),
        tx: field(r, &["txpause"]).and_then(jnum),
    };
    emit(acc, sw, &row);
}
