//! `rocetop parse KIND [FILE|-]`: one captured output through its parser, printed as Prometheus text
//! (each series once, the last value the input gave) or JSON (every sample).

use crate::metrics::{Parsed, Store, now_ms};
use crate::output::latest::Latest;
use crate::output::{Format, prom, table};
use crate::parse::{Ctx, ParseKind, each_sample, parse};
use std::cell::{Cell, RefCell};
use std::io::{self, Read, Write};
use std::rc::Rc;

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
/// JSON and Prometheus text are streamed: the samples go from the parser to the writer one at a
/// time ([`parse::each_sample`]), never collected into a vector, and the JSON document of a
/// 125k-port reply (~490 MB) is never held whole; Prometheus text, sorted by series, keeps each
/// series in 40 bytes and its label set ([`latest::Latest`]). The bytes are those of [`render`]
/// made safe (a test keeps it so).
pub fn write(
    kind: ParseKind,
    text: &str,
    format: Format,
    name: &str,
    log: &str,
    out: &mut dyn Write,
) -> Result<io::Result<()>, String> {
    let ctx = Ctx {
        name: name.to_string(),
        log: log.to_string(),
    };
    match format {
        Format::Json => write_json(kind, text, &ctx, out),
        Format::Prom => {
            let mut series = Latest::default();
            let rest = each_sample(kind, text, &ctx, &mut |s| series.put(s));
            if series.samples() == 0 {
                return Err(crate::parse::unreadable(kind, text, &rest));
            }
            Ok(series.write_prom(&notes(&rest), out))
        }
        Format::Table => {
            let parsed = parsed(kind, text, name, log)?;
            let t = rendered(&parsed, format, name);
            Ok(out.write_all(crate::safe::text(&t).as_bytes()))
        }
    }
}

/// `serde_json::to_string_pretty` of the [`Parsed`] the parse gives, through `safe::json`, written
/// in 64 KiB pieces as the parser reads: the samples are serialized as they come, the rest of the
/// document after them. Nothing reaches `out` before the first sample, so an input with none is
/// the `Err` of [`render`], not half a document.
fn write_json(
    kind: ParseKind,
    text: &str,
    ctx: &Ctx,
    out: &mut dyn Write,
) -> Result<io::Result<()>, String> {
    let doc = Streamed {
        kind,
        text,
        ctx,
        rest: RefCell::new(None),
        opened: Rc::new(Cell::new(false)),
    };
    let gate = Gate {
        held: Vec::new(),
        opened: doc.opened.clone(),
        inner: crate::safe::JsonWriter::new(out),
    };
    let mut ser = serde_json::Serializer::pretty(io::BufWriter::with_capacity(1 << 16, gate));
    let res = serde::Serialize::serialize(&doc, &mut ser).map_err(io::Error::from);
    let rest = doc.rest.take().unwrap_or_default();
    if !doc.opened.get() {
        return Err(crate::parse::unreadable(kind, text, &rest));
    }
    Ok(res.and_then(|()| {
        let gate = ser.into_inner().into_inner().map_err(|e| e.into_error())?;
        gate.finish()
    }))
}

/// The JSON document of one parse, its samples serialized as the parser gives them.
struct Streamed<'a> {
    kind: ParseKind,
    text: &'a str,
    ctx: &'a Ctx,
    /// What the parse gave besides its samples, once they are written.
    rest: RefCell<Option<Parsed>>,
    /// Whether a sample came (the [`Gate`] opens).
    opened: Rc<Cell<bool>>,
}

/// The fields of [`Parsed`], in its order (its derived `Serialize`).
impl serde::Serialize for Streamed<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = ser.serialize_struct("Parsed", 4)?;
        st.serialize_field("samples", &Samples(self))?;
        let rest = self.rest.borrow();
        let rest = rest.as_ref();
        st.serialize_field("unknown_lines", &rest.map_or(0, |r| r.unknown_lines))?;
        st.serialize_field("unknown_examples", &rest.map(|r| &r.unknown_examples))?;
        st.serialize_field("notes", &rest.map(|r| &r.notes))?;
        st.end()
    }
}

struct Samples<'a, 'b>(&'a Streamed<'b>);

/// A sequence of unknown length: serde_json writes it as the `Vec` it stands for (`[]` empty).
impl serde::Serialize for Samples<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let d = self.0;
        let mut seq = ser.serialize_seq(None)?;
        let mut failed = None;
        let rest = each_sample(d.kind, d.text, d.ctx, &mut |s| {
            if failed.is_none() {
                d.opened.set(true);
                failed = seq.serialize_element(&s).err();
            }
        });
        *d.rest.borrow_mut() = Some(rest);
        match failed {
            Some(e) => Err(e),
            None => seq.end(),
        }
    }
}

/// Holds what is written until the first sample opens it (an input without samples prints
/// nothing), then passes everything on.
struct Gate<W: Write> {
    held: Vec<u8>,
    opened: Rc<Cell<bool>>,
    inner: crate::safe::JsonWriter<W>,
}

impl<W: Write> Gate<W> {
    fn finish(mut self) -> io::Result<()> {
        self.pass_held()?;
        self.inner.finish()?.flush()
    }

    fn pass_held(&mut self) -> io::Result<()> {
        if !self.held.is_empty() {
            self.inner.write_all(&self.held)?;
            self.held = Vec::new();
        }
        Ok(())
    }
}

impl<W: Write> Write for Gate<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.opened.get() {
            self.held.extend_from_slice(buf);
            return Ok(buf.len());
        }
        self.pass_held()?;
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        if self.opened.get() {
            self.pass_held()?;
            self.inner.flush()?;
        }
        Ok(())
    }
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
        table::render(&store, table::Silent::NoAnswer)
    };
    let notes = notes(parsed);
    if format == Format::Prom {
        out.insert_str(0, &notes);
    } else {
        out.push_str(&notes);
    }
    out
}

/// The notes of a parse and what it did not understand, as `# ` lines: each on its own line
/// (a note quoting the input cannot start a sample line of its own in the Prometheus text, or a
/// row in the table).
fn notes(parsed: &Parsed) -> String {
    let mut notes = String::new();
    for n in &parsed.notes {
        notes.push_str(&format!("# note: {}\n", crate::safe::line(n)));
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
    notes
}
