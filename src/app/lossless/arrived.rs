//! Which polls call for a new proof (the topology reads it stands on) or mark it due (the switch
//! settings it compares), told once per set of series a source answers: a node's counter poll
//! brings the same few hundred series every second, and looking at each one's name cost ~0.1 M
//! instructions a second at N=8 (issue #20).

use crate::metrics::Sample;
use crate::metrics::names::*;
use crate::metrics::store::SourceId;

/// Whether a series is one of the topology reads the pairing and this proof stand on (LLDP, host
/// QoS, 802.3x and MTU of a host): a poll carrying one calls for a new proof. (A switch port's MTU
/// is not one: EOS prints it every poll; it is read when the next topology answer comes.)
pub fn feeds(name: &str) -> bool {
    name == LINK_NEIGHBOR_INFO
        || name.starts_with("rocetop_nic_qos_")
        || name == NIC_FLOWCONTROL_ENABLED
        || name == NIC_MTU_BYTES
        || name.starts_with("rocetop_switch_qos_")
}

/// A switch port's setting the proof compares (PFC priorities, 802.3x, MTU), which the counter
/// polls bring every interval.
pub fn switch_setting(name: &str) -> bool {
    name == SW_PFC_ENABLED || name == SW_FLOWCONTROL_ENABLED || name == SW_PORT_MTU_BYTES
}

/// What a poll brought that the proof stands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrived {
    Nothing,
    /// A switch's settings: the proof is due.
    SwitchSetting,
    /// Topology: pair again and prove again now.
    Topology,
}

impl Arrived {
    /// What `samples` bring.
    pub fn of(samples: &[Sample]) -> Arrived {
        let names = || samples.iter().map(|s| s.key.name.as_str());
        if names().any(feeds) {
            Arrived::Topology
        } else if names().any(switch_setting) {
            Arrived::SwitchSetting
        } else {
            Arrived::Nothing
        }
    }
}

/// Per source, what its last poll brought, and the store ([`Store::uid`]) it went into.
///
/// [`Store::uid`]: crate::metrics::Store::uid
#[derive(Debug, Default)]
pub struct ArrivedMemo(Vec<Option<(u64, Arrived)>>);

impl ArrivedMemo {
    /// What a poll of `source` with `samples` brought, now in the store `uid`; `repeated`: the
    /// store found them the series of the source's poll before, in order
    /// ([`SourceHealth::keys_repeated`]), so that poll's answer holds.
    ///
    /// [`SourceHealth::keys_repeated`]: crate::metrics::store::SourceHealth::keys_repeated
    pub fn of(
        &mut self,
        uid: u64,
        source: SourceId,
        repeated: bool,
        samples: &[Sample],
    ) -> Arrived {
        let i = source.0 as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, None);
        }
        match self.0[i] {
            Some((kept_uid, a)) if repeated && kept_uid == uid => a,
            _ => {
                let a = Arrived::of(samples);
                self.0[i] = Some((uid, a));
                a
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Parsed, Store};

    /// Poll after poll through a store, the memo answers what looking at every name answers:
    /// counters repeated, a switch setting joining, topology arriving and repeated, a series
    /// dropped from the end, the order changed, another store, and a source never seen.
    #[test]
    fn memo_answers_what_the_names_answer() {
        let counter = |v| Sample::counter(SW_PFC_RX, &[("port", "Ethernet1/1")], v);
        let setting = Sample::gauge(SW_PFC_ENABLED, &[("port", "Ethernet1/1")], 1.0);
        let lldp = Sample::gauge(LINK_NEIGHBOR_INFO, &[("port", "Ethernet1/1")], 1.0);
        let other = |v| Sample::counter(SW_PFC_TX, &[("port", "Ethernet1/1")], v);
        // (into the second store, a time-travel copy?, the samples)
        let polls: Vec<(bool, Vec<Sample>)> = vec![
            (false, vec![counter(1), other(1)]),
            (false, vec![counter(2), other(2)]),
            (false, vec![counter(3), other(3), setting.clone()]),
            (false, vec![counter(4), other(4), setting.clone()]),
            (false, vec![counter(5), other(5)]),
            (false, vec![lldp.clone(), counter(6)]),
            (false, vec![lldp.clone(), counter(7)]),
            (false, vec![lldp.clone()]),
            (false, vec![counter(8), lldp.clone()]),
            (false, vec![counter(9), other(9)]),
            (false, vec![other(10), counter(10)]),
            (false, vec![other(11), counter(11)]),
            // The other store repeats its own last poll while this one's memo is of the first.
            (true, vec![lldp.clone(), counter(12)]),
            (false, vec![other(13), counter(13)]),
            (true, vec![lldp.clone(), counter(14)]),
        ];
        let mut memo = ArrivedMemo::default();
        let (mut a, mut b) = (Store::new(60_000, 1000), Store::new(60_000, 1000));
        let (sa, sb) = (a.add_source("sw", 1000), b.add_source("sw", 1000));
        let mut repeats = 0;
        for (k, (second, samples)) in polls.iter().enumerate() {
            let (st, src) = if *second { (&mut b, sb) } else { (&mut a, sa) };
            st.ingest(src, k as i64 * 1000, &Parsed::from(samples.clone()));
            let repeated = st.source(src).is_some_and(|h| h.keys_repeated);
            repeats += usize::from(repeated);
            let got = memo.of(st.uid(), src, repeated, samples);
            assert_eq!(got, Arrived::of(samples), "poll {k}");
        }
        assert!(repeats >= 5, "{repeats}");
        assert_eq!(
            memo.of(a.uid(), SourceId(7), true, &[lldp]),
            Arrived::Topology
        );
    }

    /// The store tells a poll that brought the same series in the same order, and only that.
    #[test]
    fn keys_repeated_only_for_the_same_series_in_order() {
        let c = |p: &str, v| Sample::counter("x_total", &[("port", p)], v);
        let mut st = Store::new(60_000, 1000);
        let src = st.add_source("n1", 1000);
        let cases: [(Vec<Sample>, bool); 6] = [
            (vec![c("a", 1), c("b", 1)], false),
            (vec![c("a", 2), c("b", 2)], true),
            (vec![c("a", 3), c("b", 3), c("c", 3)], false),
            (vec![c("a", 4), c("b", 4)], false),
            (vec![c("b", 5), c("a", 5)], false),
            (vec![c("b", 6), c("a", 6)], true),
        ];
        for (k, (samples, want)) in cases.into_iter().enumerate() {
            st.ingest(src, k as i64 * 1000, &Parsed::from(samples));
            assert_eq!(
                st.source(src).map(|h| h.keys_repeated),
                Some(want),
                "poll {k}"
            );
        }
    }
}
