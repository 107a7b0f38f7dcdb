//! Parsers for eos switch outputs (placeholder until the switch parsers land).

use crate::metrics::Parsed;

pub fn parse_pfc(text: &str, _switch: &str) -> Parsed {
    let mut p = Parsed::default();
    text.lines().for_each(|l| p.unknown(l));
    p
}

pub fn parse_queue(text: &str, _switch: &str) -> Parsed {
    let mut p = Parsed::default();
    text.lines().for_each(|l| p.unknown(l));
    p
}

pub fn parse_ecn(text: &str, _switch: &str) -> Parsed {
    let mut p = Parsed::default();
    text.lines().for_each(|l| p.unknown(l));
    p
}

pub fn parse_interface(text: &str, _switch: &str) -> Parsed {
    let mut p = Parsed::default();
    text.lines().for_each(|l| p.unknown(l));
    p
}
