//! A node's GPUs as `nvidia-smi --query-gpu=... --format=csv[,nounits]` prints them: one CSV
//! row per GPU under a header that names each column (`utilization.gpu [%]`, `memory.used [MiB]`),
//! so the parser reads any subset of fields in any order, from any driver that prints this
//! layout. A pasted capture without its header (`--format=csv,noheader`) is read when the command
//! line before it names the fields. The topology matrix of `nvidia-smi topo -m` is in [`topo`].
//!
//! A field nvidia-smi cannot read prints `[N/A]`, `[Not Supported]` or another bracketed word:
//! that value is missing (no sample, and a note says which field), never 0. Units are decided
//! once, in the metric names: percent, watts, degrees Celsius, bytes (the driver's MiB × 2^20).

pub mod topo;
pub mod xid;

use crate::metrics::names::*;
use crate::metrics::{Parsed, Sample, SeriesKey};
use std::collections::HashMap;

/// What the node request prints where nvidia-smi is not installed (see transport.rs): a node
/// without GPUs, which is not an error and shows no GPU rows.
pub const NOT_INSTALLED: &str = "rocetop: nvidia-smi not installed";
/// What it prints when nvidia-smi did not answer within its own time limit (a hung driver), so
/// the rest of the node's dump still arrives.
pub const TIMED_OUT: &str = "rocetop: nvidia-smi timed out";

/// The fields of the query rocetop runs on each node, in the order it asks for them.
pub const QUERY_FIELDS: &[&str] = &[
    "index",
    "uuid",
    "pci.bus_id",
    "utilization.gpu",
    "utilization.memory",
    "power.draw",
    "temperature.gpu",
    "clocks_throttle_reasons.active",
    "memory.used",
    "memory.total",
    "ecc.errors.corrected.volatile.total",
    "ecc.errors.uncorrected.volatile.total",
];

/// A column of the CSV, by what rocetop makes of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Index,
    Uuid,
    BusId,
    Gauge(Metric),
    Throttle,
    Counter(&'static str),
    /// A field rocetop does not keep (`name`, `timestamp`, `pstate`, clocks, fan).
    Other,
}

/// A gauge column: its metric and the factor from the driver's unit to the metric's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Metric {
    name: &'static str,
    mib: bool,
}

fn field(name: &str) -> Field {
    let g = |name| Field::Gauge(Metric { name, mib: false });
    let mib = |name| Field::Gauge(Metric { name, mib: true });
    match name {
        "index" => Field::Index,
        "uuid" | "gpu_uuid" => Field::Uuid,
        "pci.bus_id" | "gpu_bus_id" => Field::BusId,
        "utilization.gpu" => g(GPU_UTILIZATION_PERCENT),
        "utilization.memory" => g(GPU_MEMORY_UTILIZATION_PERCENT),
        // Drivers from 535 on also offer `.instant` and `.average`; `power.draw` is what every
        // driver has.
        "power.draw" => g(GPU_POWER_WATTS),
        "temperature.gpu" => g(GPU_TEMPERATURE_CELSIUS),
        "memory.used" => mib(GPU_MEMORY_USED_BYTES),
        "memory.total" => mib(GPU_MEMORY_TOTAL_BYTES),
        // Renamed in driver 535; both spellings are the same NVML bitmask.
        "clocks_throttle_reasons.active" | "clocks_event_reasons.active" => Field::Throttle,
        "ecc.errors.corrected.volatile.total" => Field::Counter(GPU_ECC_CORRECTED),
        "ecc.errors.uncorrected.volatile.total" => Field::Counter(GPU_ECC_UNCORRECTED),
        _ => Field::Other,
    }
}

/// The NVML clock throttle reasons that slow a GPU down on its own (nvml.h
/// `nvmlClocksThrottleReason*`), by the `reason` label rocetop gives them. Idle, application
/// clocks, sync boost and display clocks are not a slowdown of work.
pub const THROTTLE_REASONS: &[(u64, &str)] = &[
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x20, "sw_thermal"),
    (0x40, "hw_thermal"),
    (0x80, "hw_power_brake"),
];

/// Whether a throttle reason is about power (else it is about heat or the board).
pub fn is_power_reason(reason: &str) -> bool {
    matches!(reason, "sw_power_cap" | "hw_power_brake")
}

/// A header's column name without its unit (`memory.used [MiB]` → `memory.used`).
fn column_name(cell: &str) -> &str {
    let c = cell.trim();
    match c.find(" [") {
        Some(i) if c.ends_with(']') => c[..i].trim(),
        _ => c,
    }
}

/// A header line: every cell a query field name (lower case, dots and underscores), at least one
/// with a dot or `index`, so a data row (numbers, `GeForce`, `P0`) never reads as one.
fn is_header(cells: &[&str]) -> bool {
    let name_like = |c: &str| {
        let n = column_name(c);
        n.starts_with(|ch: char| ch.is_ascii_lowercase())
            && n.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'_')
    };
    !cells.is_empty()
        && cells.iter().all(|c| name_like(c))
        && cells
            .iter()
            .any(|c| column_name(c).contains('.') || column_name(c) == "index")
}

/// The fields a pasted command line asks for (`nvidia-smi --query-gpu=a,b,c --format=...`).
fn command_fields(line: &str) -> Option<Vec<String>> {
    let at = line.find("--query-gpu=")?;
    let list = line[at + "--query-gpu=".len()..]
        .split(|c: char| c.is_whitespace() || c == '`' || c == '\'' || c == '"')
        .next()
        .unwrap_or("");
    let fields: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(str::to_string)
        .collect();
    (!fields.is_empty()).then_some(fields)
}

/// A value cell without the unit the CSV prints after it when `nounits` was not given
/// (`26 %`, `83.92 W`, `32480 MiB`); None for a value nvidia-smi could not read (`[N/A]`,
/// `[Not Supported]`, `N/A`).
fn value(cell: &str) -> Option<&str> {
    let c = cell.trim();
    if c.starts_with('[') || c.eq_ignore_ascii_case("N/A") || c.is_empty() {
        return None;
    }
    Some(
        c.strip_suffix(" %")
            .or_else(|| c.strip_suffix(" W"))
            .or_else(|| c.strip_suffix(" MiB"))
            .unwrap_or(c)
            .trim(),
    )
}

/// Parse a `--query-gpu` CSV from node `node`.
pub fn parse(text: &str, node: &str) -> Parsed {
    let mut p = Parsed::default();
    let mut out = Samples::default();
    let mut columns: Option<Vec<String>> = None;
    // Rows under the current header: a GPU's number when the CSV has no `index` column.
    let mut row = 0usize;
    let mut rows_of: HashMap<String, usize> = HashMap::new();
    for raw in text.lines() {
        let t = raw.trim().trim_matches('`').trim();
        if t.is_empty() {
            continue;
        }
        if t == NOT_INSTALLED {
            continue;
        }
        if t.starts_with(TIMED_OUT) {
            p.note(
                "nvidia-smi did not answer in time (a hung driver?): GPU values missing this poll",
            );
            continue;
        }
        if t.starts_with("NVIDIA-SMI has failed")
            || t.starts_with("No devices were found")
            || t.starts_with("Failed to initialize NVML")
        {
            p.note(format!(
                "nvidia-smi: {}",
                t.chars().take(160).collect::<String>()
            ));
            continue;
        }
        if let Some(f) = command_fields(t) {
            columns = Some(f);
            row = 0;
            continue;
        }
        let cells: Vec<&str> = t.split(',').map(str::trim).collect();
        if is_header(&cells) {
            columns = Some(cells.iter().map(|c| column_name(c).to_string()).collect());
            row = 0;
            continue;
        }
        let Some(cols) = columns.as_ref() else {
            p.unknown(raw);
            continue;
        };
        if cells.len() != cols.len() {
            p.unknown(raw);
            continue;
        }
        let fields: Vec<Field> = cols.iter().map(|c| field(c)).collect();
        let gpu = fields
            .iter()
            .zip(&cells)
            .find(|(f, _)| **f == Field::Index)
            .and_then(|(_, c)| value(c))
            .filter(|v| v.bytes().all(|b| b.is_ascii_digit()))
            .map(str::to_string);
        let gpu = match gpu {
            Some(g) => g,
            None => {
                p.note("no index column: GPUs numbered in the order nvidia-smi printed them");
                row.to_string()
            }
        };
        row += 1;
        *rows_of.entry(gpu.clone()).or_default() += 1;
        row_samples(&mut p, &mut out, node, &gpu, &fields, cols, &cells);
    }
    if rows_of.values().any(|n| *n > 1) {
        p.note("several rows for one GPU (a --loop capture): the last one kept");
    }
    p.samples = out.into_vec();
    p
}

/// The samples of one CSV row.
fn row_samples(
    p: &mut Parsed,
    out: &mut Samples,
    node: &str,
    gpu: &str,
    fields: &[Field],
    cols: &[String],
    cells: &[&str],
) {
    let labels = [("gpu", gpu), ("node", node)];
    let mut uuid = None;
    let mut bus = None;
    for ((f, col), cell) in fields.iter().zip(cols).zip(cells) {
        let v = value(cell);
        if v.is_none() && *f != Field::Other {
            p.note(format!(
                "{col}: {} (missing, not 0)",
                cell.trim().chars().take(40).collect::<String>()
            ));
        }
        let Some(v) = v else { continue };
        match *f {
            Field::Index | Field::Other => {}
            Field::Uuid => uuid = Some(v),
            Field::BusId => bus = Some(v),
            Field::Gauge(m) => match crate::parse::num::float(v) {
                Some(x) => {
                    let x = if m.mib { x * 1048576.0 } else { x };
                    out.put(Sample::gauge(m.name, &labels, x));
                }
                None => p.unknown(&format!("{col}: {v}")),
            },
            Field::Counter(name) => match crate::parse::num::count(v) {
                Some(x) => out.put(Sample::counter(name, &labels, x)),
                None => p.unknown(&format!("{col}: {v}")),
            },
            Field::Throttle => {
                let bits = v
                    .strip_prefix("0x")
                    .and_then(|h| u64::from_str_radix(h, 16).ok());
                match bits {
                    Some(bits) => {
                        for (bit, reason) in THROTTLE_REASONS {
                            let on = if bits & bit != 0 { 1.0 } else { 0.0 };
                            out.put(Sample::gauge(
                                GPU_THROTTLE_ACTIVE,
                                &[("gpu", gpu), ("node", node), ("reason", reason)],
                                on,
                            ));
                        }
                    }
                    None => p.unknown(&format!("{col}: {v}")),
                }
            }
        }
    }
    if uuid.is_some() || bus.is_some() {
        out.put(Sample::gauge(
            GPU_INFO,
            &[
                ("gpu", gpu),
                ("node", node),
                ("pci_bus_id", bus.unwrap_or("")),
                ("uuid", uuid.unwrap_or("")),
            ],
            1.0,
        ));
    }
}

/// Samples kept once per series, at the place of its first row with the value of its last.
#[derive(Default)]
struct Samples {
    v: Vec<Sample>,
    at: HashMap<SeriesKey, usize>,
}

impl Samples {
    fn put(&mut self, s: Sample) {
        match self.at.get(&s.key) {
            Some(&i) => {
                if let Some(slot) = self.v.get_mut(i) {
                    slot.value = s.value;
                }
            }
            None => {
                self.at.insert(s.key.clone(), self.v.len());
                self.v.push(s);
            }
        }
    }

    fn into_vec(self) -> Vec<Sample> {
        self.v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Value;

    fn get(p: &Parsed, name: &str, gpu: &str) -> Option<f64> {
        p.find(name, &[("gpu", gpu)]).map(|v| v.as_f64())
    }

    #[test]
    fn rocetop_own_query_with_missing_fields() {
        let text = "index, uuid, pci.bus_id, utilization.gpu [%], utilization.memory [%], power.draw [W], temperature.gpu, clocks_throttle_reasons.active, memory.used [MiB], memory.total [MiB], ecc.errors.corrected.volatile.total, ecc.errors.uncorrected.volatile.total\n\
0, GPU-aa, 00000000:07:00.0, 92, 40, 301.25, 61, 0x0000000000000000, 1024, 81920, 0, 0\n\
1, GPU-bb, 00000000:0F:00.0, 41, 10, [N/A], 83, 0x0000000000000044, 2048, 81920, [N/A], [Not Supported]\n";
        let p = parse(text, "n1");
        assert_eq!(p.unknown_lines, 0, "{:?}", p.unknown_examples);
        assert_eq!(get(&p, GPU_UTILIZATION_PERCENT, "0"), Some(92.0));
        assert_eq!(get(&p, GPU_UTILIZATION_PERCENT, "1"), Some(41.0));
        assert_eq!(get(&p, GPU_POWER_WATTS, "0"), Some(301.25));
        assert_eq!(
            get(&p, GPU_POWER_WATTS, "1"),
            None,
            "[N/A] is missing, not 0"
        );
        assert_eq!(get(&p, GPU_ECC_UNCORRECTED, "1"), None);
        assert_eq!(
            p.find(GPU_ECC_CORRECTED, &[("gpu", "0")]),
            Some(Value::Counter(0))
        );
        assert_eq!(
            get(&p, GPU_MEMORY_USED_BYTES, "1"),
            Some(2048.0 * 1048576.0)
        );
        let thr = |gpu, reason| {
            p.find(GPU_THROTTLE_ACTIVE, &[("gpu", gpu), ("reason", reason)])
                .map(|v| v.as_f64())
        };
        assert_eq!(thr("1", "sw_power_cap"), Some(1.0));
        assert_eq!(thr("1", "hw_thermal"), Some(1.0));
        assert_eq!(thr("1", "sw_thermal"), Some(0.0));
        assert_eq!(thr("0", "sw_power_cap"), Some(0.0));
        assert!(
            p.find(
                GPU_INFO,
                &[("uuid", "GPU-bb"), ("pci_bus_id", "00000000:0F:00.0")]
            )
            .is_some()
        );
        assert!(p.notes.iter().any(|n| n.contains("power.draw: [N/A]")));
    }

    #[test]
    fn units_in_values_and_a_loop_keep_the_last_row() {
        let text = "index, temperature.gpu, utilization.gpu [%], power.draw [W], memory.used [MiB]\n\
0, 56, 26 %, 83.92 W, 100 MiB\n0, 55, 30 %, 77.00 W, 200 MiB\n";
        let p = parse(text, "n");
        assert_eq!(get(&p, GPU_UTILIZATION_PERCENT, "0"), Some(30.0));
        assert_eq!(get(&p, GPU_POWER_WATTS, "0"), Some(77.0));
        assert_eq!(get(&p, GPU_MEMORY_USED_BYTES, "0"), Some(200.0 * 1048576.0));
        assert_eq!(
            p.samples
                .iter()
                .filter(|s| s.key.name == GPU_UTILIZATION_PERCENT)
                .count(),
            1
        );
        assert!(p.notes.iter().any(|n| n.contains("--loop")));
    }

    #[test]
    fn a_noheader_paste_is_read_by_its_command_line() {
        let text = "$ nvidia-smi --query-gpu=gpu_name,utilization.gpu,temperature.gpu,power.draw --format=csv,noheader\n\
`GeForce GTX 770, [Not Supported], 52, [Not Supported]`\n";
        let p = parse(text, "n");
        assert_eq!(get(&p, GPU_TEMPERATURE_CELSIUS, "0"), Some(52.0));
        assert_eq!(get(&p, GPU_UTILIZATION_PERCENT, "0"), None);
        assert_eq!(p.unknown_lines, 0);
    }

    #[test]
    fn no_nvidia_smi_no_gpu_and_no_complaint() {
        let p = parse(&format!("{NOT_INSTALLED}\n"), "n");
        assert!(p.samples.is_empty() && p.notes.is_empty() && p.unknown_lines == 0);
        let p = parse(&format!("{TIMED_OUT} after 5 s\n"), "n");
        assert!(p.samples.is_empty() && p.notes.iter().any(|n| n.contains("hung")));
    }

    #[test]
    fn rows_without_a_header_or_of_the_wrong_width_are_not_understood() {
        let p = parse("0, 1, 2\n", "n");
        assert_eq!(p.unknown_lines, 1);
        let p = parse("index, utilization.gpu [%]\n0, 5, 7\n\u{1b}[31m\n", "n");
        assert_eq!(p.unknown_lines, 2);
        assert!(p.samples.is_empty());
    }
}
