//! The parse kinds of DESIGN.md §5 and the one dispatch every path uses: live collectors, the demo,
//! replay and `rocetop parse`. Every parser is pure (`&str` in, [`Parsed`] out) and never panics.

pub mod host;
pub mod keep;
pub mod lldp;
pub mod num;
pub mod ping;
pub mod switch;
pub mod training;

use crate::metrics::Parsed;
use clap::ValueEnum;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ParseKind {
    NxosQueuing,
    NxosPfc,
    NxosFlowcontrol,
    NxosInterface,
    SonicPfc,
    SonicQueue,
    SonicWred,
    EosPfc,
    EosQueue,
    EosEcn,
    EosInterface,
    RdmaStatistic,
    HwCounters,
    Ethtool,
    TrainingLog,
    /// A ping source's report of its window (parse::ping).
    Ping,
    /// A switch's `show lldp neighbors` (NX-OS, EOS) or SONiC `show lldp table`.
    LldpNeighbors,
    /// A host's `lldpctl` (text, `-f keyvalue`, `-f json`).
    Lldpctl,
    /// A host's `mlnx_qos -i`, sysfs ecn knobs, mtu and `ethtool -a` (parse::host::qos).
    HostQos,
    /// SONiC `show pfcwd stats`.
    SonicPfcwd,
    /// NX-OS `show queuing pfc-queue detail` (PFC watchdog).
    NxosPfcwd,
}

impl ParseKind {
    pub fn name(self) -> &'static str {
        match self {
            ParseKind::NxosQueuing => "nxos-queuing",
            ParseKind::NxosPfc => "nxos-pfc",
            ParseKind::NxosFlowcontrol => "nxos-flowcontrol",
            ParseKind::NxosInterface => "nxos-interface",
            ParseKind::SonicPfc => "sonic-pfc",
            ParseKind::SonicQueue => "sonic-queue",
            ParseKind::SonicWred => "sonic-wred",
            ParseKind::EosPfc => "eos-pfc",
            ParseKind::EosQueue => "eos-queue",
            ParseKind::EosEcn => "eos-ecn",
            ParseKind::EosInterface => "eos-interface",
            ParseKind::RdmaStatistic => "rdma-statistic",
            ParseKind::HwCounters => "hw-counters",
            ParseKind::Ethtool => "ethtool",
            ParseKind::TrainingLog => "training-log",
            ParseKind::Ping => "ping",
            ParseKind::LldpNeighbors => "lldp-neighbors",
            ParseKind::Lldpctl => "lldpctl",
            ParseKind::HostQos => "host-qos",
            ParseKind::SonicPfcwd => "sonic-pfcwd",
            ParseKind::NxosPfcwd => "nxos-pfcwd",
        }
    }

    pub fn from_name(s: &str) -> Option<Self> {
        <Self as ValueEnum>::from_str(s, true).ok()
    }
}

/// Who the output came from: fills the `switch` or `node` label (and `log` for training logs).
#[derive(Clone, Debug, Default)]
pub struct Ctx {
    pub name: String,
    pub log: String,
}

impl Ctx {
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_string(),
            log: String::new(),
        }
    }
}

/// Parse one captured output of `kind`.
pub fn parse(kind: ParseKind, text: &str, ctx: &Ctx) -> Parsed {
    let name = ctx.name.as_str();
    match kind {
        ParseKind::NxosQueuing => switch::nxos::parse_queuing(text, name),
        ParseKind::NxosPfc => switch::nxos::parse_pfc(text, name),
        ParseKind::NxosFlowcontrol => switch::nxos::parse_flowcontrol(text, name),
        ParseKind::NxosInterface => switch::nxos::parse_interface(text, name),
        ParseKind::SonicPfc => switch::sonic::parse_pfc(text, name),
        ParseKind::SonicQueue => switch::sonic::parse_queue(text, name),
        ParseKind::SonicWred => switch::sonic::parse_wred(text, name),
        ParseKind::EosPfc => switch::eos::parse_pfc(text, name),
        ParseKind::EosQueue => switch::eos::parse_queue(text, name),
        ParseKind::EosEcn => switch::eos::parse_ecn(text, name),
        ParseKind::EosInterface => switch::eos::parse_interface(text, name),
        ParseKind::RdmaStatistic => host::rdma_stat::parse(text, name),
        ParseKind::HwCounters => host::hw_counters::parse(text, name),
        ParseKind::Ethtool => host::ethtool::parse(text, name, ""),
        ParseKind::TrainingLog => training::parse_text(text, name, &ctx.log),
        ParseKind::Ping => ping::parse(text, name),
        ParseKind::LldpNeighbors => lldp::parse_switch(text, name),
        ParseKind::Lldpctl => lldp::parse_lldpctl(text, name),
        ParseKind::HostQos => host::qos::parse(text, name, ""),
        ParseKind::SonicPfcwd => switch::pfcwd::parse_sonic(text, name),
        ParseKind::NxosPfcwd => switch::pfcwd::parse_nxos(text, name),
    }
}
