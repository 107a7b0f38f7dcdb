//! placeholder

use crate::metrics::Parsed;

pub fn parse_text(text: &str, _node: &str, _log: &str) -> Parsed {
    let mut p = Parsed::default();
    text.lines().for_each(|l| p.unknown(l));
    p
}
