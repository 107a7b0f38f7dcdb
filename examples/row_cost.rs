//! Heap cost per input row of parsing, storing and rendering a big switch answer (a
//! 13.6 MB NX-API PFC reply of 125k rows took GBs). A counting allocator gives exact heap bytes:
//! the peak while a phase runs above what was live before it, and what the phase leaves behind.
//! Run by bench/row_cost.sh, or directly:
//!
//!   row_cost gen text|json ROWS        an NX-OS PFC table / NX-API JSON reply of ROWS ports, to stdout
//!   row_cost measure FILE              parse, store and render FILE as `parse nxos-pfc` would

use rocetop::metrics::{Store, Value};
use rocetop::output::Format;
use rocetop::parse::{Ctx, ParseKind, parse};
use std::fmt::Write as _;

#[global_allocator]
static A: rocetop::heap::Counting = rocetop::heap::Counting;

/// A stdout that counts the bytes written to it.
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len();
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Run `f`; (its result, peak heap above the start, heap left above the start).
fn phase<T>(f: impl FnOnce() -> T) -> (T, usize, isize) {
    let start = rocetop::heap::live();
    let (r, peak) = rocetop::heap::peak_during(f);
    (r, peak, rocetop::heap::live() as isize - start as isize)
}

/// The 20k-port table of tests/e2e/hostile.rs, ROWS long.
fn gen_text(rows: usize) -> String {
    let mut t = String::from("Port                 Mode Oper(VL bmap)  RxPPP      TxPPP\n");
    t.push_str("============================================================\n\n");
    for i in 0..rows {
        let _ = writeln!(
            t,
            "Ethernet{}/{}/1        Auto On (8)        {}          {}",
            1 + i / 1000,
            1 + i % 1000,
            i,
            i * 2
        );
    }
    t
}

/// An NX-API `ins_api` reply to `show interface priority-flow-control` with ROWS ports (~109
/// bytes a row, as the 13.6 MB / 125k-row reply of the issue).
fn gen_json(rows: usize) -> String {
    let mut t = String::from(
        r#"{"ins_api":{"type":"cli_show","version":"1.0","sid":"eoc","outputs":{"output":{"input":"show interface priority-flow-control","msg":"Success","code":"200","body":{"TABLE_pfc_interface":{"ROW_pfc_interface":["#,
    );
    for i in 0..rows {
        if i > 0 {
            t.push(',');
        }
        let _ = write!(
            t,
            r#"{{"if_name_str":"Ethernet{}/{}/1","admin":"Auto","oper":"On","oper_vl_bmap":"(8)","rx-stats":"{}","tx-stats":"{}"}}"#,
            1 + i / 1000,
            1 + i % 1000,
            i,
            i * 2
        );
    }
    t.push_str("]}}}}}}\n");
    t
}

fn measure(path: &str) {
    let text = std::fs::read_to_string(path).expect("input file");
    let bytes = text.len();
    let rows = text
        .matches("if_name_str")
        .count()
        .max(text.lines().filter(|l| l.starts_with("Ethernet")).count());
    let ctx = Ctx::named("sw");
    let (parsed, parse_peak, parsed_bytes) = phase(|| parse(ParseKind::NxosPfc, &text, &ctx));
    let samples = parsed.samples.len();
    // The store as the TUI sizes it for 15 minutes at 1 s, one poll: what holding the series costs.
    let (store, store_peak, store_bytes) = phase(|| {
        let mut st = Store::new(900_000, 916);
        let src = st.add_source("sw", 1000);
        st.ingest(src, 1_000, &parsed);
        st
    });
    let series = store.all().count();
    // The store alone once the parse is gone: its series with their keys and label sets (while
    // the parse lives, the store shares its label sets, so `store_bytes` leaves them out).
    let before_alone = rocetop::heap::live() as isize;
    drop(parsed);
    let store_alone = store_bytes + parsed_bytes + rocetop::heap::live() as isize - before_alone;
    drop(store);
    // The store after 60 polls (a minute at 1 s) of the same answer with the counters of a port in
    // ten moving (pause frames are rare), once the parse is gone: what a series' history adds.
    let mut parsed = parse(ParseKind::NxosPfc, &text, &ctx);
    let before_60 = rocetop::heap::live() as isize;
    let mut st = Store::new(900_000, 916);
    let src = st.add_source("sw", 1000);
    for poll in 0..60 {
        for (i, s) in parsed.samples.iter_mut().enumerate() {
            if (i / 10) % 10 == 0
                && poll > 0
                && let Value::Counter(v) = &mut s.value
            {
                *v += 3;
            }
        }
        st.ingest(src, 1_000 + poll * 1_000, &parsed);
    }
    let parsed_60 = rocetop::heap::live() as isize - before_60;
    let before_drop = rocetop::heap::live() as isize;
    drop(parsed);
    // What dropping the parse freed beyond what the store shares with it is the parse's own.
    let store_60 = parsed_60 - (before_drop - rocetop::heap::live() as isize) + parsed_bytes;
    let points = st.stats().points;
    drop(st);
    let mut line = format!(
        "input_bytes={bytes} rows={rows} samples={samples} series={series} \
         parse_peak={parse_peak} parsed_bytes={parsed_bytes} store_peak={store_peak} store_bytes={store_bytes} \
         store_alone={store_alone} store_60_alone={store_60} points_60={points}"
    );
    // `rocetop parse nxos-pfc --format F` end to end (parse, store, render, write to stdout),
    // peak above the input; what would be printed is counted, not kept.
    for (f, name) in [(Format::Prom, "prom"), (Format::Json, "json")] {
        let (out, peak, _) = phase(|| {
            let mut sink = Count(0);
            let r = rocetop::cmd::parse::write(
                ParseKind::NxosPfc,
                &text,
                f,
                "sw",
                "row_cost",
                &mut sink,
            );
            r.ok().and_then(Result::ok).map(|()| sink.0)
        });
        let _ = write!(
            line,
            " {name}_peak={peak} {name}_out={}",
            out.unwrap_or_default()
        );
    }
    println!("{line}");
    let per = |b: isize, n: usize| b as f64 / n.max(1) as f64;
    eprintln!(
        "per row: parse peak {:.0} B, parsed {:.0} B; per sample: parsed {:.0} B; per series: store {:.0} B (peak {:.0}), store alone {:.0} B, after 60 polls {:.0} B",
        per(parse_peak as isize, rows),
        per(parsed_bytes, rows),
        per(parsed_bytes, samples),
        per(store_bytes, series),
        per(store_peak as isize, series),
        per(store_alone, series),
        per(store_60, series),
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["gen", kind, rows] => {
            let rows: usize = rows.parse().expect("ROWS");
            let t = if *kind == "json" {
                gen_json(rows)
            } else {
                gen_text(rows)
            };
            print!("{t}");
        }
        ["measure", path] => measure(path),
        _ => {
            eprintln!("usage: row_cost gen text|json ROWS | row_cost measure FILE");
            std::process::exit(2);
        }
    }
}
