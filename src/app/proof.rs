//! What the lossless-path proof finds (`lossless.rs` for the host side and the pairs,
//! `lossless_switch.rs` for the switch's classification and queues): both write these.

use super::pairing::Pair;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Host,
    Switch,
    Config,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub side: Side,
    /// The pair it bites (for a config disagreement: the configured port, netdev unknown), so
    /// the PFC tab can mark that port's and that netdev's rows.
    pub pair: Pair,
    /// `ubunturdma1 ens224 ↔ NX_AI_Leaf1 Ethernet1/2/2`
    pub link: String,
    pub problem: String,
    /// The command (or config line) that fixes it on `side`.
    pub fix: String,
}

#[derive(Clone, Debug, Default)]
pub struct Proof {
    pub pairs: Vec<Pair>,
    pub findings: Vec<Finding>,
    /// Facts that could not be read (no mlnx_qos, no ecn knobs): neither pass nor failure.
    pub notes: Vec<String>,
}
