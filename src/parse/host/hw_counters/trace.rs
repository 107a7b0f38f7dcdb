//! Which lines each sample of a sysfs dump's parse was computed from, so that a caller that sees
//! only counter values change (the streaming collector: a node's dump is ~80 lines, a few of
//! which move in a second) can compute the new samples from the changed lines instead of parsing
//! the whole dump again. Unlike `ethtool -S`, a sample here is not always one line's value: the
//! RDMA bytes of a netdev add several lines (the byte counters of its ports, or their 4-byte word
//! counters × 4), so a sample says how it follows from lines ([`How`]).
//!
//! Exact, not a guess: a line [`value_line`] accepts is a counter line of a known structure
//! (`hw_counters`, IB `counters` or `net/.../statistics`) whose path is all the parser reads but
//! its value; for such a line, the parser's other decisions (labels, which sum it adds to, whether
//! a port counts bytes or words) depend on that path only. So when every line that changed kept
//! its path and still holds a number, a full parse gives the same samples, each with the value
//! its [`How`] computes from the new lines.

use super::{Line, MLX5_Q_COUNTERS_32BIT, split_line};
use crate::metrics::Value;
use crate::parse::num;

/// How one sample's value follows from the dump's lines (by index in `num::lines`).
#[derive(Clone, Debug, PartialEq)]
pub enum How {
    /// Not from a counter value (a port's state): its line changing needs a full parse.
    Fixed,
    /// A counter line's value, a 64-bit counter.
    Counter(u32),
    /// An RDMA counter line's value, as `rdma_sample` makes it: 32-bit when the name is one of
    /// the mlx5 Q counters (the bool) and the value fits.
    Rdma(u32, bool),
    /// `lifespan` (ms), a gauge in seconds.
    Millis(u32),
    /// The sum of lines' values, each times its factor, saturating at `u64::MAX`: the RDMA bytes
    /// of a netdev (the parser adds with `saturating_add`/`saturating_mul` of non-negative
    /// numbers, which is the exact sum capped at the end, whatever the order).
    Sum(Vec<(u32, u64)>),
}

impl How {
    /// The line this sample is the value of, if it is one line's.
    pub fn line(&self) -> Option<u32> {
        match self {
            How::Counter(l) | How::Rdma(l, _) | How::Millis(l) => Some(*l),
            How::Fixed | How::Sum(_) => None,
        }
    }

    /// An RDMA counter's `How` for line `line`.
    pub(super) fn rdma(line: u32, name: &str) -> How {
        How::Rdma(line, MLX5_Q_COUNTERS_32BIT.contains(&name))
    }

    /// The sample's value when each line `l` holds `value(l)`; None when a line it needs holds
    /// no number (or it is [`How::Fixed`]).
    pub fn value(&self, value: &mut dyn FnMut(u32) -> Option<u64>) -> Option<Value> {
        Some(match self {
            How::Fixed => return None,
            How::Counter(l) => Value::Counter(value(*l)?),
            How::Rdma(l, q32) => {
                let v = value(*l)?;
                if *q32 && v <= u64::from(u32::MAX) {
                    Value::Counter32(v)
                } else {
                    Value::Counter(v)
                }
            }
            How::Millis(l) => Value::Gauge(value(*l)? as f64 / 1000.0),
            How::Sum(terms) => {
                let mut sum: u128 = 0;
                for &(l, k) in terms {
                    sum += u128::from(value(l)?) * u128::from(k);
                }
                Value::Counter(u64::try_from(sum).unwrap_or(u64::MAX))
            }
        })
    }
}

/// Per sample of a parse, how its value follows from the lines.
#[derive(Debug, Default)]
pub struct Trace {
    pub how: Vec<How>,
    /// A line was read through the context of an earlier line (a pasted, relative dump): lines
    /// are then not independent, and no trace is given.
    pub(super) relative: bool,
}

/// A counter line the trace can follow: the text before its value and the value. Two lines
/// with the same text before their values are the same counter (same device, port, name).
pub fn value_line(line: &str) -> Option<(&str, u64)> {
    let line = line.trim_end_matches('\r');
    let (kind, value) = split_line(line)?;
    match kind {
        Line::Hw { .. } | Line::Ib { .. } | Line::NetStat { .. } => {}
        Line::State { .. } | Line::Ndev { .. } | Line::Attr { .. } => return None,
    }
    let v = num::count(num::trim(value))?;
    Some((line.get(..line.len() - value.len())?, v))
}

/// [`value_line`] of a line it accepts (one a trace maps to a sample or a sum), without
/// classifying its path where it can: when the text after the line's last ':' is a number, that
/// ':' is where `value_line` splits (its value has no ':'; a path-and-space line whose path holds
/// a ':' has a '/' and a space after it, which no number has). Not for other lines.
pub fn known_value(line: &str) -> Option<(&str, u64)> {
    let l = line.trim_end_matches('\r');
    if let Some(i) = l.rfind(':')
        && let Some(v) = num::count(num::trim(&l[i + 1..]))
    {
        return Some((&l[..=i], v));
    }
    value_line(line)
}
