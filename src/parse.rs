//! The parse kinds (docs/user-guide.md) and the one dispatch every path uses: live collectors, the
//! demo, replay and `rocetop parse`. Every parser is pure (`&str` in, [`Parsed`] out) and never
//! panics.

pub mod capture;
pub mod host;
pub mod keep;
pub mod lldp;
pub mod num;
pub mod ping;
pub mod prom_api;
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
    /// NX-OS `show interface` read for each port's MTU only (the topology read: its counters
    /// would arrive minutes apart beside the counter polls').
    NxosMtu,
    /// SONiC CONFIG_DB as JSON (`show runningconfiguration all`): DSCP maps, PFC, ECN, MTU.
    SonicQos,
    /// NX-OS `show running-config ipqos`: DSCP classification, no-drop CoS, ECN on queues.
    NxosQos,
    /// Arista EOS `show running-config`: DSCP map, trust, PFC no-drop priorities, ECN per queue.
    EosQos,
    /// Answers of a Prometheus HTTP API, as a `[[prometheus]]` source stores them (parse::prom_api).
    PromApi,
    /// `nvidia-smi --query-gpu=... --format=csv` (parse::host::gpu).
    GpuQuery,
    /// `nvidia-smi topo -m` (parse::host::gpu::topo).
    GpuTopo,
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
            ParseKind::NxosMtu => "nxos-mtu",
            ParseKind::SonicQos => "sonic-qos",
            ParseKind::NxosQos => "nxos-qos",
            ParseKind::EosQos => "eos-qos",
            ParseKind::PromApi => "prom-api",
            ParseKind::GpuQuery => "gpu-query",
            ParseKind::GpuTopo => "gpu-topo",
        }
    }

    /// The layout this kind reads, as a user would recognise it in their capture.
    pub fn expects(self) -> &'static str {
        match self {
            ParseKind::NxosQueuing => {
                "NX-OS `show queuing interface` (N5K `RX/TX Queuing` + `qos-group N`, 7.x/9.x `Egress Queuing for EthernetX` tables, or NX-API JSON)"
            }
            ParseKind::NxosPfc => {
                "NX-OS `show interface priority-flow-control` (a `Port  Mode Oper(VL bmap)  RxPPP  TxPPP` table, or NX-API JSON)"
            }
            ParseKind::NxosFlowcontrol => {
                "NX-OS `show interface flowcontrol` (a `Port  Send FlowControl  Receive FlowControl  RxPause TxPause` table, or NX-API JSON)"
            }
            ParseKind::NxosInterface => {
                "NX-OS `show interface` (`EthernetX is up` blocks with RX/TX counters, or NX-API JSON)"
            }
            ParseKind::SonicPfc => "SONiC `show pfc counters` (`Port Rx  PFC0 ... PFC7` tables)",
            ParseKind::SonicQueue => {
                "SONiC `show queue counters` (`Port TxQ Counter/pkts Counter/bytes Drop/pkts Drop/bytes` rows, or --json)"
            }
            ParseKind::SonicWred => {
                "SONiC `show queue wredcounters` (`Port TxQ WredDrp/pkts WredDrp/bytes ...` rows)"
            }
            ParseKind::EosPfc => {
                "Arista EOS `show priority-flow-control counters | json` (eAPI JSON; its CLI table is not read)"
            }
            ParseKind::EosQueue => {
                "Arista EOS `show interfaces counters queue [detail]` (CLI tables: `Aggregate VoQ Counters`, `Egress Queue Counters`, `Port TxQ ...`; or eAPI JSON)"
            }
            ParseKind::EosEcn => {
                "Arista EOS `show qos interfaces ecn counters queue | json` (eAPI JSON; its CLI table is not read)"
            }
            ParseKind::EosInterface => "Arista EOS `show interfaces` (eAPI JSON or CLI blocks)",
            ParseKind::RdmaStatistic => {
                "`rdma statistic show` (`link mlx5_0/1 counter value ...` lines)"
            }
            ParseKind::HwCounters => {
                "`grep -r . /sys/class/infiniband/<dev>/ports/<n>/hw_counters` (`path:value` lines)"
            }
            ParseKind::Ethtool => {
                "`ethtool -S <netdev>` (`NIC statistics:` then `name: value` lines)"
            }
            ParseKind::TrainingLog => {
                "a training log (iteration/step lines with loss or step time, nccl-tests tables, NCCL_DEBUG transport lines)"
            }
            ParseKind::Ping => "a rocetop ping report",
            ParseKind::LldpNeighbors => {
                "a switch's `show lldp neighbors` (NX-OS, EOS) or SONiC `show lldp table`"
            }
            ParseKind::Lldpctl => "a host's `lldpctl` (text, `-f keyvalue` or `-f json`)",
            ParseKind::HostQos => {
                "a host's `mlnx_qos -i <netdev>` (trust, PFC, DSCP map) with the sysfs ecn knobs"
            }
            ParseKind::SonicPfcwd => "SONiC `show pfcwd stats`",
            ParseKind::NxosPfcwd => "NX-OS `show queuing pfc-queue detail` (PFC watchdog)",
            ParseKind::NxosMtu => "NX-OS `show interface`, read for each port's MTU only",
            ParseKind::SonicQos => {
                "SONiC CONFIG_DB as JSON (`show runningconfiguration all`, `sonic-cfggen -d --print-data`, config_db.json)"
            }
            ParseKind::NxosQos => {
                "NX-OS `show running-config ipqos` (class-map/policy-map type qos, network-qos, queuing; system qos; interfaces)"
            }
            ParseKind::EosQos => {
                "Arista EOS `show running-config` (qos map dscp, qos profile, interface qos trust / priority-flow-control / tx-queue random-detect ecn)"
            }
            ParseKind::PromApi => {
                "Prometheus /api/v1/query answers (`# query NAME` lines, each followed by the JSON answer)"
            }
            ParseKind::GpuQuery => {
                "`nvidia-smi --query-gpu=... --format=csv[,nounits]` (a header naming the fields, one row per GPU)"
            }
            ParseKind::GpuTopo => {
                "`nvidia-smi topo -m` (the GPU0 GPU1 ... NIC0 ... CPU Affinity matrix)"
            }
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

/// What a live source adds to the kind: a log's own line format (`[[log]] format_regex`) and the
/// `nic_counters` subset it keeps. `rocetop parse` uses the defaults (every line format, every
/// counter).
#[derive(Default)]
pub struct Options<'a, 'k> {
    pub format_regex: Option<&'a str>,
    pub keeper: Option<&'a mut keep::NicKeeper<'k>>,
}

/// Parse one output of `kind` as a live source with `opts` reads it: the one entry point of
/// collectors, replay and `rocetop parse` (no caller special-cases a kind).
pub fn parse_with(kind: ParseKind, text: &str, ctx: &Ctx, opts: &mut Options) -> Parsed {
    parse_with_lines(kind, text, ctx, opts).0
}

/// How each sample of a parse follows from the lines of its text (their indices in
/// `num::lines`), one entry per sample, for a caller that sets new counter values into the last
/// parse instead of parsing again (the streaming collector).
#[derive(Debug, PartialEq)]
pub enum LineMap {
    /// Each sample is one line's value and keeps its counter type: `ethtool -S` (see
    /// [`host::ethtool::parse_keeping_lines`]).
    Each(Vec<u32>),
    /// A sysfs dump, whose byte totals add several lines (see [`host::hw_counters::trace`]).
    Hw(Vec<host::hw_counters::How>),
}

impl LineMap {
    fn retain(&mut self, keep: &[bool]) {
        let mut verdict = keep.iter();
        match self {
            LineMap::Each(v) => v.retain(|_| verdict.next().copied().unwrap_or(true)),
            LineMap::Hw(v) => v.retain(|_| verdict.next().copied().unwrap_or(true)),
        }
    }
}

/// [`parse_with`], and where the parser can say so, how each sample follows from the lines of
/// `text` ([`LineMap`]): an `ethtool -S` output read for a `nic_counters` subset, or a sysfs
/// dump, with no capture framing removed; None otherwise.
pub fn parse_with_lines(
    kind: ParseKind,
    text: &str,
    ctx: &Ctx,
    opts: &mut Options,
) -> (Parsed, Option<LineMap>) {
    let mut lines = None;
    let mut parsed = match (kind, opts.format_regex, opts.keeper.as_deref_mut()) {
        (ParseKind::TrainingLog, Some(re), _) => {
            let custom = training::CustomFormat::new("config", re)
                .into_iter()
                .collect();
            training::parse_text_with(text, &ctx.name, &ctx.log, custom)
        }
        // Only the counters of the subset become samples (skipped before they are built).
        (ParseKind::Ethtool, _, Some(k)) if k.filters() => {
            let (text, skipped) = capture::clean(text, false);
            let (mut p, at) =
                host::ethtool::parse_keeping_lines(&text, &ctx.name, "", &mut |c| k.keep_nic(c));
            // Lines of a cleaned copy are not the lines of the text.
            if matches!(text, std::borrow::Cow::Borrowed(_)) {
                lines = Some(LineMap::Each(at));
            }
            skipped.note(&mut p);
            p
        }
        (ParseKind::HwCounters, _, _) => {
            let (text, skipped) = cleaned(kind, text);
            let (mut p, trace) = host::hw_counters::parse_traced(&text, &ctx.name);
            if let (std::borrow::Cow::Borrowed(_), Some(t)) = (&text, trace) {
                lines = Some(LineMap::Hw(t.how));
            }
            skipped.note(&mut p);
            p
        }
        _ => parse(kind, text, ctx),
    };
    if let Some(k) = opts.keeper.as_deref_mut().filter(|k| k.filters()) {
        match &mut lines {
            None => parsed.samples.retain(|s| k.keep_counter(&s.key.name)),
            // The same verdicts, applied to the samples and their lines alike.
            Some(at) => {
                let kept: Vec<bool> = parsed
                    .samples
                    .iter()
                    .map(|s| k.keep_counter(&s.key.name))
                    .collect();
                let mut verdict = kept.iter();
                parsed
                    .samples
                    .retain(|_| verdict.next().copied().unwrap_or(true));
                at.retain(&kept);
            }
        }
    }
    (parsed, lines)
}

/// Why an output that gave no sample could not be read: the layout `kind` expects and the first
/// line that was there, so "rocetop read nothing" is never mistaken for "all zeros".
pub fn unreadable(kind: ParseKind, text: &str, parsed: &Parsed) -> String {
    let first = text.lines().map(str::trim).find(|l| !l.is_empty());
    let mut msg = match first {
        None => format!("{}: the input is empty", kind.name()),
        Some(l) => format!(
            "{}: no sample read; expected {}; first line: {:?}",
            kind.name(),
            kind.expects(),
            l.chars().take(120).collect::<String>()
        ),
    };
    if parsed.unknown_lines > 0 {
        msg.push_str(&format!("; {} lines not understood", parsed.unknown_lines));
    }
    for n in &parsed.notes {
        msg.push_str(&format!("; note: {n}"));
    }
    msg
}

/// Parse one captured output of `kind`: its capture framing undone first (see [`capture`]), except
/// for a training log (any line may be the job's own) and the ping report and Prometheus answers
/// (written by rocetop itself).
pub fn parse(kind: ParseKind, text: &str, ctx: &Ctx) -> Parsed {
    let (text, skipped) = cleaned(kind, text);
    let mut p = dispatch(kind, &text, ctx);
    skipped.note(&mut p);
    p
}

/// [`parse`], each sample handed to `each` instead of collected: the samples of `parse(kind,
/// text, ctx)`, in its order, and what else it gave returned (its `samples` empty). A kind with a
/// streaming parser (NX-OS PFC, a 125k-port answer) never holds its samples: it
/// reads the text twice, first keeping only a hash of each series' key, so that a series the text
/// names twice is passed once, at its first place with its last value, as [`parse`]'s accumulator
/// keeps it. Other kinds are parsed whole, then passed on.
pub fn each_sample(
    kind: ParseKind,
    text: &str,
    ctx: &Ctx,
    each: &mut dyn FnMut(crate::metrics::Sample),
) -> Parsed {
    let (text, skipped) = cleaned(kind, text);
    let mut p = match kind {
        ParseKind::NxosPfc => unique(
            &mut |out| switch::nxos::parse_pfc_into(&text, &ctx.name, out),
            each,
        ),
        _ => {
            let mut p = dispatch(kind, &text, ctx);
            for s in std::mem::take(&mut p.samples) {
                each(s);
            }
            p
        }
    };
    skipped.note(&mut p);
    p
}

/// The samples `run` puts in its sink, each series once at its first place with its last value
/// (what the parsers' accumulator keeps), handed to `each` as they come; what `run` returns.
/// `run` is pure, so it is run again rather than its samples kept: once for the keys' hashes (8
/// bytes a sample, the only memory that grows with the input), and, when two hashes are equal
/// (a series named twice, or two keys sharing a hash), once more for the last value of those
/// series only.
fn unique(
    run: &mut dyn FnMut(&mut dyn crate::metrics::Sink) -> Parsed,
    each: &mut dyn FnMut(crate::metrics::Sample),
) -> Parsed {
    use crate::metrics::{Sample, SeriesKey, Value};
    use std::collections::{HashMap, HashSet};
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    let hasher = BuildHasherDefault::<DefaultHasher>::default();
    let mut hashes = Vec::new();
    run(&mut |s: Sample| hashes.push(hasher.hash_one(&s.key)));
    hashes.sort_unstable();
    let twice: HashSet<u64> = hashes
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    drop(hashes);
    if twice.is_empty() {
        return run(&mut |s: Sample| each(s));
    }
    let mut last: HashMap<SeriesKey, Value> = HashMap::new();
    run(&mut |s: Sample| {
        if twice.contains(&hasher.hash_one(&s.key)) {
            last.insert(s.key, s.value);
        }
    });
    run(&mut |s: Sample| {
        if !twice.contains(&hasher.hash_one(&s.key)) {
            each(s);
        } else if let Some(value) = last.remove(&s.key) {
            // The first time: the last value; later times it is gone.
            each(Sample { key: s.key, value });
        }
    })
}

/// `text` with its capture framing undone, as [`parse`] reads it for `kind`.
fn cleaned(kind: ParseKind, text: &str) -> (std::borrow::Cow<'_, str>, capture::Skipped) {
    match kind {
        ParseKind::TrainingLog | ParseKind::Ping | ParseKind::PromApi => (
            std::borrow::Cow::Borrowed(text),
            capture::Skipped::default(),
        ),
        // The host parsers read the netdev or device from the shell prompt's command (the sysfs
        // dump as rocetop reads it has no framing, so cleaning it costs one scan; a pasted one
        // does, and names its device in a `cd` or `show_counters` line).
        ParseKind::Ethtool
        | ParseKind::RdmaStatistic
        | ParseKind::HostQos
        | ParseKind::Lldpctl
        | ParseKind::HwCounters
        | ParseKind::GpuQuery
        | ParseKind::GpuTopo => capture::clean(text, false),
        _ => capture::clean(text, true),
    }
}

fn dispatch(kind: ParseKind, text: &str, ctx: &Ctx) -> Parsed {
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
        ParseKind::NxosMtu => {
            let mut p = switch::nxos::parse_interface(text, name);
            p.samples
                .retain(|s| s.key.name == crate::metrics::names::SW_PORT_MTU_BYTES);
            p
        }
        ParseKind::SonicQos => switch::sonic_qos::parse(text, name),
        ParseKind::NxosQos => switch::nxos_qos::parse(text, name),
        ParseKind::EosQos => switch::eos_qos::parse(text, name),
        ParseKind::PromApi => prom_api::parse(text),
        ParseKind::GpuQuery => host::gpu::parse(text, name),
        ParseKind::GpuTopo => host::gpu::topo::parse(text, name),
    }
}
