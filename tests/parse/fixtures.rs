//! The data-driven parser test: every capture under tests/fixtures/ goes through the parser its
//! path names (see tests/fixtures/README.md) and must print exactly its expected file beside it:
//! `NAME.expected.prom` (what `rocetop parse KIND NAME --name fixture` prints) or, for a capture
//! that holds no sample, `NAME.expected.err` (the message `rocetop parse` exits 2 with).
//!
//! Adding a real output is adding two files. `ROCETOP_BLESS=1 cargo test --test parse fixtures::`
//! writes the missing and changed expected files; read the diff before committing it.

use crate::skip;

use rocetop::cmd::parse::{render, write};
use rocetop::output::Format;
use rocetop::parse::ParseKind;
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// Command slugs a capture's file name starts with (after an optional `demo-`, `nxapi-`,
/// `eapi-` prefix), per vendor directory; the longest match wins.
const RULES: &[(&str, &str, ParseKind)] = &[
    ("nxos", "show-queuing-interface", ParseKind::NxosQueuing),
    ("nxos", "show-queueing-interface", ParseKind::NxosQueuing),
    ("nxos", "show-queuing-summary", ParseKind::NxosQueuing),
    (
        "nxos",
        "show-interface-priority-flow-control",
        ParseKind::NxosPfc,
    ),
    (
        "nxos",
        "show-interface-flowcontrol",
        ParseKind::NxosFlowcontrol,
    ),
    ("nxos", "show-interface", ParseKind::NxosInterface),
    ("sonic", "show-pfc-counters", ParseKind::SonicPfc),
    ("sonic", "show-queue-counters", ParseKind::SonicQueue),
    ("sonic", "show-queue-wredcounters", ParseKind::SonicWred),
    (
        "arista",
        "show-priority-flow-control-counters",
        ParseKind::EosPfc,
    ),
    (
        "arista",
        "show-interfaces-counters-queue",
        ParseKind::EosQueue,
    ),
    (
        "arista",
        "show-qos-interfaces-ecn-counters",
        ParseKind::EosEcn,
    ),
    ("arista", "show-interfaces", ParseKind::EosInterface),
    ("linux", "ethtool-S", ParseKind::Ethtool),
    ("linux", "rdma-stat", ParseKind::RdmaStatistic),
    ("linux", "hw-counters", ParseKind::HwCounters),
    ("gpu", "nvidia-smi-query-gpu", ParseKind::GpuQuery),
    ("gpu", "nvidia-smi-topo-m", ParseKind::GpuTopo),
    ("training", "", ParseKind::TrainingLog),
    // Topology captures: LLDP, host QoS, PFC watchdog.
    ("topology", "lldpctl", ParseKind::Lldpctl),
    ("topology", "show-lldp-", ParseKind::LldpNeighbors),
    ("topology", "mlnx_qos", ParseKind::HostQos),
    ("topology", "show-pfcwd-stats", ParseKind::SonicPfcwd),
    ("topology", "show-queuing-pfc-queue", ParseKind::NxosPfcwd),
    // Switch QoS configuration: DSCP classification, PFC, ECN, MTU.
    (
        "topology",
        "show-runningconfiguration-all",
        ParseKind::SonicQos,
    ),
    ("topology", "config-db", ParseKind::SonicQos),
    ("topology", "show-running-config-ipqos", ParseKind::NxosQos),
    ("topology", "show-running-config_eos", ParseKind::EosQos),
];

/// Files in the fixture tree that are not captures of a parse kind, and why.
fn not_a_capture(rel: &str) -> Option<&'static str> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if name.ends_with(".md") {
        Some("documentation")
    } else if name.contains(".expected.") {
        Some("an expected output")
    } else if name.ends_with(".ttar") {
        Some("a sysfs tree (tests/parse/parse_host.rs unpacks it)")
    } else if name.ends_with(".metrics") {
        Some("an exporter's /metrics text (a test serves it to a real Prometheus)")
    } else {
        None
    }
}

pub fn kind_of(rel: &str) -> Option<ParseKind> {
    let (dir, rest) = rel.split_once('/')?;
    let name = rest.rsplit('/').next().unwrap_or(rest);
    let slug = ["demo-", "nxapi-", "eapi-"]
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name);
    RULES
        .iter()
        .filter(|(d, prefix, _)| *d == dir && slug.starts_with(prefix))
        .max_by_key(|(_, prefix, _)| prefix.len())
        .map(|(_, _, k)| *k)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// What `rocetop parse` prints for this capture: its stdout, or `error: ` and its message.
fn actual(kind: ParseKind, rel: &str, bytes: &[u8]) -> (String, &'static str) {
    let text = String::from_utf8_lossy(bytes);
    match render(kind, &text, Format::Prom, "fixture", rel) {
        Ok(out) => (out, "prom"),
        Err(e) => (format!("{e}\n"), "err"),
    }
}

#[test]
fn every_fixture_prints_its_expected_output() {
    let bless = std::env::var_os("ROCETOP_BLESS").is_some();
    let mut files = Vec::new();
    walk(Path::new(ROOT), &mut files);
    files.sort();
    let (mut checked, mut problems) = (0, Vec::new());
    for path in &files {
        let rel = path
            .strip_prefix(ROOT)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if not_a_capture(&rel).is_some() {
            continue;
        }
        let Some(kind) = kind_of(&rel) else {
            problems.push(format!(
                "{rel}: no parse kind (name it as tests/fixtures/README.md says)"
            ));
            continue;
        };
        let bytes = std::fs::read(path).unwrap_or_default();
        let (out, ext) = actual(kind, &rel, &bytes);
        let want_path = PathBuf::from(format!("{}.expected.{ext}", path.display()));
        let other = if ext == "prom" { "err" } else { "prom" };
        let stale = PathBuf::from(format!("{}.expected.{other}", path.display()));
        checked += 1;
        if bless {
            if std::fs::read_to_string(&want_path).ok().as_deref() != Some(out.as_str()) {
                let _ = std::fs::write(&want_path, &out);
            }
            let _ = std::fs::remove_file(&stale);
            continue;
        }
        match std::fs::read_to_string(&want_path) {
            Ok(want) if want == out => {}
            Ok(want) => problems.push(format!(
                "{rel} ({}): output differs from {}\n{}",
                kind.name(),
                want_path.display(),
                diff(&want, &out)
            )),
            Err(_) if stale.exists() => problems.push(format!(
                "{rel} ({}): expected {} but it printed {ext}:\n{out}",
                kind.name(),
                stale.display()
            )),
            Err(_) => problems.push(format!(
                "{rel} ({}): no {} (ROCETOP_BLESS=1 writes it)",
                kind.name(),
                want_path.display()
            )),
        }
    }
    assert!(checked >= 20, "only {checked} fixtures found under {ROOT}");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The first lines that differ, with line numbers (enough to see what changed).
fn diff(want: &str, got: &str) -> String {
    let (w, g): (Vec<_>, Vec<_>) = (want.lines().collect(), got.lines().collect());
    let mut out = Vec::new();
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i), g.get(i));
        if a != b {
            out.push(format!(
                "  line {}: want {:?}\n           got  {:?}",
                i + 1,
                a.unwrap_or(&""),
                b.unwrap_or(&"")
            ));
        }
        if out.len() >= 8 {
            break;
        }
    }
    out.join("\n")
}

#[test]
fn fixture_names_map_to_kinds() {
    assert_eq!(
        kind_of("nxos/show-interface-priority-flow-control_n5k.txt"),
        Some(ParseKind::NxosPfc)
    );
    assert_eq!(
        kind_of("nxos/synthetic/nxapi-show-queuing-interface_x.json"),
        Some(ParseKind::NxosQueuing)
    );
    assert_eq!(
        kind_of("nxos/show-interface_n9k.txt"),
        Some(ParseKind::NxosInterface)
    );
    assert_eq!(kind_of("training/any.log"), Some(ParseKind::TrainingLog));
    assert_eq!(kind_of("sonic/show-interface.txt"), None);
}

/// What `rocetop parse` printed before it streamed: the whole rendering, then the terminal
/// escaping of its format.
fn printed_whole(kind: ParseKind, text: &str, f: Format, log: &str) -> Result<Vec<u8>, String> {
    let out = render(kind, text, f, "fixture", log)?;
    Ok(match f {
        Format::Json => rocetop::safe::json(&out).into_owned().into_bytes(),
        Format::Prom | Format::Table => rocetop::safe::text(&out).into_owned().into_bytes(),
    })
}

fn printed_streamed(kind: ParseKind, text: &str, f: Format, log: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    write(kind, text, f, "fixture", log, &mut out)?.expect("a Vec takes every write");
    Ok(out)
}

/// `rocetop parse` writes its output as it goes (`--format json` is never held whole): for every
/// capture, every format, the bytes are those it printed when it rendered the whole document
/// first, and a hostile input big enough to cut the stream inside multi-byte characters (port
/// names with C1, bidi and accented characters, not-understood lines with escapes) too.
#[test]
fn streamed_output_equals_the_whole_rendering_made_safe() {
    let mut inputs = captures();
    let mut hostile = String::from("Port  Mode Oper(VL bmap)  RxPPP      TxPPP\n");
    for i in 0..3000 {
        hostile.push_str(&format!(
            "Eth1/{i}é\u{9b}€\u{202e}x  Auto On (8)  {i}  {}\n",
            i * 2
        ));
        if i % 700 == 0 {
            hostile.push_str("\x1b]0;PWN\x07 \u{202e}gnirts é\u{85}\n");
        }
    }
    inputs.extend(repeated_series());
    inputs.push((ParseKind::NxosPfc, "hostile".into(), hostile));
    let (mut json_docs, mut problems) = (0, Vec::new());
    for (kind, rel, text) in &inputs {
        for f in [Format::Json, Format::Prom, Format::Table] {
            let want = printed_whole(*kind, text, f, rel);
            let got = printed_streamed(*kind, text, f, rel);
            if want != got {
                problems.push(format!("{rel} ({}, {f:?}) differs", kind.name()));
            }
            if f == Format::Json && got.is_ok() {
                json_docs += 1;
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(json_docs >= 20, "only {json_docs} JSON documents compared");
    // The hostile document was escaped (its raw rendering holds the characters) and is valid JSON.
    let raw = render(
        ParseKind::NxosPfc,
        &inputs.last().expect("hostile").2,
        Format::Json,
        "fixture",
        "hostile",
    )
    .expect("rows");
    assert!(
        raw.len() > 1 << 17 && raw.contains('\u{202e}'),
        "{} bytes",
        raw.len()
    );
    let got = printed_streamed(
        ParseKind::NxosPfc,
        &inputs.last().expect("hostile").2,
        Format::Json,
        "hostile",
    )
    .expect("rows");
    let got = String::from_utf8(got).expect("UTF-8");
    assert!(
        !got.chars()
            .any(|c| rocetop::safe::is_unsafe(c) && c != '\n')
    );
    let back: serde_json::Value = serde_json::from_str(&got).expect("valid JSON");
    assert_eq!(
        back,
        serde_json::from_str::<serde_json::Value>(&raw).expect("valid JSON")
    );
}

/// NX-OS PFC answers that name series twice (a port's row repeated with other counts, the table
/// and the detail layout of one port, NX-API rows repeated): the streamed parse passes each series
/// once, at its first place with its last value, as the whole parse's accumulator keeps it.
/// Every capture a parse kind reads: (kind, path under the fixtures, text), in path order.
fn captures() -> Vec<(ParseKind, String, String)> {
    let mut files = Vec::new();
    walk(Path::new(ROOT), &mut files);
    files.sort();
    let mut inputs = Vec::new();
    for path in &files {
        let rel = path
            .strip_prefix(ROOT)
            .map(|p| p.to_string_lossy().replace('\\', "/"))
            .unwrap_or_default();
        if let (None, Some(kind)) = (not_a_capture(&rel), kind_of(&rel)) {
            let bytes = std::fs::read(path).unwrap_or_default();
            inputs.push((kind, rel, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    inputs
}

fn repeated_series() -> Vec<(ParseKind, String, String)> {
    let mut table = String::from("Port  Mode Oper(VL bmap)  RxPPP      TxPPP\n");
    for i in 0..40 {
        let port = i % 7;
        table.push_str(&format!(
            "Eth1/{port}  Auto On ({:x})  {i}  {}\n",
            i % 3 + 8,
            i * 2
        ));
    }
    table.push_str("Ethernet1/3\n  Admin Mode: On\n  Oper Mode: Off\n  Total Rx PFC Frames: 999\n");
    let mut rows = Vec::new();
    for i in 0..30 {
        rows.push(format!(
            r#"{{"if_name_str":"Ethernet1/{}","admin":"Auto","oper":"On","oper_vl_bmap":"({})","rx-stats":"{i}","tx-stats":"{}"}}"#,
            i % 4,
            i % 2 + 8,
            i * 3
        ));
    }
    let json = format!(
        r#"{{"ins_api":{{"outputs":{{"output":{{"code":"200","body":{{"TABLE_pfc_interface":{{"ROW_pfc_interface":[{}]}}}}}}}}}}}}"#,
        rows.join(",")
    );
    vec![
        (ParseKind::NxosPfc, "repeated table".into(), table),
        (ParseKind::NxosPfc, "repeated NX-API rows".into(), json),
    ]
}

/// The streamed Prometheus text (families written as the sorted series come, `# HELP`/`# TYPE`
/// once each) is what promtool accepts, for every capture and the answers naming series twice.
#[test]
fn streamed_prom_passes_promtool() {
    if !skip::have("promtool") {
        skip::skip(
            "fixtures::streamed_prom_passes_promtool",
            skip::Lack::Installed("promtool"),
            "promtool is not installed (Debian package `prometheus`)",
        );
        return;
    }
    let mut inputs = repeated_series();
    inputs.extend(captures());
    let mut checked = 0;
    for (kind, rel, text) in &inputs {
        let Ok(out) = printed_streamed(*kind, text, Format::Prom, rel) else {
            continue;
        };
        let mut child = std::process::Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("promtool");
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().expect("stdin");
            stdin.write_all(&out).expect("write");
        }
        let o = child.wait_with_output().expect("promtool output");
        // promtool exits 1 for lint problems (a counter without `_total`, a missing HELP) as
        // well as for text it cannot read: only the latter is a broken exposition.
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.status.success() || !said.contains("error while linting"),
            "{rel}: promtool: {said}"
        );
        let text = String::from_utf8_lossy(&out);
        let mut types: Vec<&str> = text.lines().filter(|l| l.starts_with("# TYPE ")).collect();
        let n = types.len();
        types.dedup();
        assert_eq!(types.len(), n, "{rel}: a family typed twice");
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} outputs checked");
}
