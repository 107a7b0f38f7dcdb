//! `rocetop parse KIND [FILE|-]`: one captured output through its parser, printed as Prometheus text
//! (each series once, the last value the input gave) or JSON (every sample).

use crate::metrics::{Store, now_ms};
use crate::output::{Format, prom, table};
use crate::parse::{Ctx, ParseKind, parse};
use std::io::Read;

pub fn run(kind: ParseKind, file: &str, format: Format, name: &str) -> Result<String, String> {
    let mut bytes = Vec::new();
    let res = if file == "-" {
        std::io::stdin().read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|mut f| f.read_to_end(&mut bytes))
    };
    res.map_err(|e| format!("cannot read {file}: {e}"))?;
    // Binary or odd encodings are parsed as text: invalid bytes become U+FFFD, never a failure.
    let text = String::from_utf8_lossy(&bytes);
    let log = if file == "-" { "stdin" } else { file };
    render(kind, &text, format, name, log)
}

/// One output through its parser, rendered as `rocetop parse` prints it (the fixture runner's
/// expected files are this text). `Err` when nothing in it could be read: which layout was
/// expected and what came first, never an empty success.
pub fn render(
    kind: ParseKind,
    text: &str,
    format: Format,
    name: &str,
    log: &str,
) -> Result<String, String> {
    let parsed = parse(
        kind,
        text,
        &Ctx {
            name: name.to_string(),
            log: log.to_string(),
        },
    );
    if parsed.samples.is_empty() {
        return Err(crate::parse::unreadable(kind, text, &parsed));
    }
    let mut out = match format {
        Format::Json => serde_json::to_string_pretty(&parsed).map_err(|e| e.to_string())?,
        Format::Prom | Format::Table => {
            let mut store = Store::new(i64::MAX / 4, 2);
            let src = store.add_source(name, 1000);
            store.ingest(src, now_ms(), &parsed);
            if format == Format::Prom {
                prom::render(&store, false, false)
            } else {
                table::render(&store)
            }
        }
    };
    if format != Format::Json {
        let mut notes = String::new();
        for n in &parsed.notes {
            notes.push_str(&format!("# note: {n}\n"));
        }
        if parsed.unknown_lines > 0 {
            notes.push_str(&format!(
                "# {} lines not understood, e.g.: {:?}\n",
                parsed.unknown_lines,
                parsed
                    .unknown_examples
                    .first()
                    .map(String::as_str)
                    .unwrap_or("")
            ));
        }
        if format == Format::Prom {
            out.insert_str(0, &notes);
        } else {
            out.push_str(&notes);
        }
    }
    Ok(out)
}
