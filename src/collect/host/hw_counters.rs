//! placeholder

use crate::metrics::Parsed;

pub fn parse(text: &str, _node: &str) -> Parsed {
    let mut p = Parsed::default();
    text.lines().for_each(|l| p.unknown(l));
    p
}
