//! `rocetop parse KIND [FILE|-]`: one captured output through its parser, printed as Prometheus text
//! (each series once, the last value the input gave) or JSON (every sample).

use crate::metrics::{Parsed, Store, now_ms};
use crate::output::{Format, prom, table};
use crate::parse::{Ctx, ParseKind, parse};
use std::io::{self, Read, Write};

/// Parse FILE (`-`: stdin) and write what `rocetop parse` prints to `out`. `Err`: nothing in it
/// could be read (the message `parse` exits 2 with); `Ok(Err)`: `out` failed.
pub fn run(
    kind: ParseKind,
    file: &str,
    format: Format,
    name: &str,
    out: &mut dyn Write,
) -> Result<io::Result<()>, String> {
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
    write(kind, &text, format, name, log, out)
}

/// One output through its parser, written to `out` as `rocetop parse` prints it, made safe for a
/// terminal (tables and Prometheus text through `safe::text`, JSON through `safe::JsonWriter`).
/// JSON is streamed: the document of a 125k-port reply (~490 MB) is never held whole, so printing
/// it costs what parsing costs. The bytes are those of [`render`] made safe (a test keeps it so).
pub fn write(
    kind: ParseKind,
    text: &str,
    format: Format,
    name: &str,
    log: &str,
    out: &mut dyn Write,
) -> Result<io::Result<()>, String> {
    let parsed = parsed(kind, text, name, log)?;
    Ok(match format {
        Format::Json => write_json(&parsed, out),
        Format::Prom | Format::Table => {
            let t = rendered(&parsed, format, name);
            out.write_all(crate::safe::text(&t).as_bytes())
        }
    })
}

/// `serde_json::to_string_pretty` of `parsed`, through `safe::json`, written in 64 KiB pieces.
fn write_json(parsed: &Parsed, out: &mut dyn Write) -> io::Result<()> {
    let buf = io::BufWriter::with_capacity(1 << 16, crate::safe::JsonWriter::new(out));
    let mut ser = serde_json::Serializer::pretty(buf);
    serde::Serialize::serialize(parsed, &mut ser).map_err(io::Error::from)?;
    let safe = ser.into_inner().into_inner().map_err(|e| e.into_error())?;
    safe.finish()?.flush()
}

/// One output through its parser, rendered as `rocetop parse` prints it before the terminal
/// escaping (the fixture runner's expected files are this text). `Err` when nothing in it could
/// be read: which layout was expected and what came first, never an empty success. JSON is built
/// as one string here: [`write`] streams the same bytes.
pub fn render(
    kind: ParseKind,
    text: &str,
    format: Format,
    name: &str,
    log: &str,
) -> Result<String, String> {
    let parsed = parsed(kind, text, name, log)?;
    match format {
        Format::Json => serde_json::to_string_pretty(&parsed).map_err(|e| e.to_string()),
        Format::Prom | Format::Table => Ok(rendered(&parsed, format, name)),
    }
}

fn parsed(kind: ParseKind, text: &str, name: &str, log: &str) -> Result<Parsed, String> {
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
    Ok(parsed)
}

/// Prometheus text or the table of `parsed`, with its notes and what was not understood.
fn rendered(parsed: &Parsed, format: Format, name: &str) -> String {
    let mut store = Store::new(i64::MAX / 4, 2);
    let src = store.add_source(name, 1000);
    store.ingest(src, now_ms(), parsed);
    let mut out = if format == Format::Prom {
        prom::render(&store, false, false)
    } else {
        table::render(&store)
    };
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
    out
}
