//! Which polls call for a new proof: the topology reads it stands on, and the switch settings it
//! compares.

use crate::metrics::Str;
use crate::metrics::names::*;

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

/// What a poll brought that the proof stands on, strongest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Arrived {
    Nothing,
    /// A switch port's setting ([`switch_setting`]): prove again when the last proof is old.
    SwitchSetting,
    /// A topology read ([`feeds`]): prove again now.
    Topology,
}

impl Arrived {
    /// The strongest of `names` (a poll's samples' names, in order). A poll repeats each name
    /// over its rows one after another, sharing one text: a name the same text as the row
    /// before is not looked at again (every name of every poll was compared with five texts,
    /// twice, ~0.1 M instructions a second at N=8, issue #20).
    pub fn of<'a>(names: impl Iterator<Item = &'a Str>) -> Self {
        let mut strongest = Arrived::Nothing;
        let mut last: Option<&Str> = None;
        for name in names {
            if last.is_some_and(|l| l.same_text(name)) {
                continue;
            }
            last = Some(name);
            if feeds(name) {
                return Arrived::Topology;
            }
            if switch_setting(name) {
                strongest = Arrived::SwitchSetting;
            }
        }
        strongest
    }
}

/// A switch port's setting the proof compares (PFC priorities, 802.3x, MTU), which the counter
/// polls bring every interval.
pub fn switch_setting(name: &str) -> bool {
    name == SW_PFC_ENABLED || name == SW_FLOWCONTROL_ENABLED || name == SW_PORT_MTU_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A poll's names, repeated over rows (one shared text) or equal in separate texts: the
    /// strongest reason to prove again wins wherever it stands.
    #[test]
    fn arrived_takes_the_strongest_name_of_a_poll() {
        let rx = Str::from("rocetop_switch_pfc_rx_total");
        let own = |s: &str| Str::from(s.to_string());
        let cases: &[(&[&str], Arrived)] = &[
            (&[], Arrived::Nothing),
            (&[SW_PFC_RX, SW_PFC_RX, SW_QUEUE_DROPPED], Arrived::Nothing),
            (
                &[SW_PFC_RX, SW_PORT_MTU_BYTES, SW_PFC_RX],
                Arrived::SwitchSetting,
            ),
            (
                &[SW_PFC_ENABLED, SW_PFC_RX, LINK_NEIGHBOR_INFO],
                Arrived::Topology,
            ),
            (&[SW_PFC_RX, "rocetop_nic_qos_trust"], Arrived::Topology),
            (&[NIC_MTU_BYTES], Arrived::Topology),
        ];
        for (names, want) in cases {
            let texts: Vec<Str> = names.iter().map(|n| own(n)).collect();
            assert_eq!(Arrived::of(texts.iter()), *want, "{names:?}");
        }
        // The same text after a shared one is skipped; an equal text in its own allocation is
        // still looked at (a long name is never shared by the text cache).
        let long = "rocetop_switch_qos_a_name_longer_than_the_text_cache_keeps_0123456789";
        let texts = [rx.clone(), rx.clone(), own(long), own(long)];
        assert_eq!(Arrived::of(texts.iter()), Arrived::Topology);
        let texts = [rx.clone(), rx, Str::from(SW_FLOWCONTROL_ENABLED)];
        assert_eq!(Arrived::of(texts.iter()), Arrived::SwitchSetting);
    }
}
