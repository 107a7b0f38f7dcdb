//! What every fuzz target checks, shared by the cargo-fuzz targets (fuzz_targets/). A check that
//! fails panics, which is the crash.
//!
//! Heap is counted by rocetop's counting allocator, so every parse target also checks size
//! amplification: the heap that parsing and storing an input takes at its peak stays
//! within `rocetop::heap::bound(input length)`, the bound `tests/heap/amplification.rs` holds every
//! capture and 100k-row answers to in the normal test suite.

use rocetop::metrics::{Store, Value};
use rocetop::parse::{Ctx, ParseKind};
use std::io::Write;

#[global_allocator]
static A: rocetop::heap::Counting = rocetop::heap::Counting;

/// Parse `data` as `kind`, then put the result through a store twice and read every rate back:
/// no panic anywhere, bounded examples, finite gauges, 32-bit counters that fit, sane rates.
pub fn parse_kind(kind: ParseKind, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let ctx = Ctx {
        name: "fuzz".into(),
        log: "/fuzz.log".into(),
    };
    // Size amplification: parsing and storing the text, as a poll does, peaks within
    // `rocetop::heap::bound` of its length (the text's: an invalid byte is read as a 3-byte U+FFFD).
    let ((p, mut store, src), peak) = rocetop::heap::peak_during(|| {
        let p = rocetop::parse::parse(kind, &text, &ctx);
        let mut store = Store::new(60_000, 16);
        let src = store.add_source("fuzz", 1000);
        store.ingest(src, 1_000, &p);
        (p, store, src)
    });
    assert!(
        peak <= rocetop::heap::bound(text.len()),
        "{} B of text took {peak} B of heap (bound {} B)",
        text.len(),
        rocetop::heap::bound(text.len())
    );
    assert!(p.unknown_examples.len() <= rocetop::metrics::Parsed::MAX_EXAMPLES);
    assert!(p.unknown_examples.len() <= p.unknown_lines);
    for s in &p.samples {
        match s.value {
            Value::Gauge(v) => assert!(v.is_finite(), "{} = {v}", s.key),
            Value::Counter32(v) => assert!(v <= u64::from(u32::MAX), "{} = {v}", s.key),
            Value::Counter(_) | Value::CounterMicros(_) => {}
        }
    }
    store.ingest(src, 2_000, &p);
    let ids: Vec<_> = store.all().map(|(id, _)| id).collect();
    for id in ids {
        if let Some(r) = store.rate(id).and_then(|r| r.value()) {
            // The same values twice: nothing grew.
            assert!(r == 0.0, "rate {r} between equal polls");
        }
    }
}

/// A recording made of `data`: byte 0 chooses whether the rest is written as is or gzipped
/// first (so the fuzzer reaches the JSON records behind the gzip CRC). Open, read every poll,
/// seek back and read again: no panic, and the second pass gives the same polls.
pub fn record_reader(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes = if mode & 1 == 0 {
        rest.to_vec()
    } else {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        // A gzip member per `\x00`: the writer flushes members, the reader must join them.
        for part in rest.split(|b| *b == 0) {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            let _ = e.write_all(part);
            if let Ok(v) = e.finish() {
                let _ = gz.get_mut().write_all(&v);
            }
        }
        let _ = gz.get_mut().flush();
        gz.get_ref().clone()
    };
    let path = std::env::temp_dir().join(format!("rocetop-fuzz-{}.rec", std::process::id()));
    if std::fs::write(&path, &bytes).is_err() {
        return;
    }
    if let Ok(mut r) = rocetop::record::reader::Reader::open(&path) {
        let start = r.pos();
        let first: Vec<_> = r.by_ref().take(1000).collect();
        if r.seek(start).is_ok() {
            let again: Vec<_> = r.by_ref().take(1000).collect();
            assert_eq!(first, again, "a seek back reads the same polls");
        }
        for p in &first {
            if let Some(kind) = ParseKind::from_name(p.outputs.first().map_or("", |o| &o.kind)) {
                let _ = rocetop::parse::parse(kind, &p.outputs[0].text, &Ctx::named(&p.ctx_name));
            }
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// Config text: loads or says why, never panics; a loaded config's names are all safe.
pub fn config_loader(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(cfg) = rocetop::config::Config::from_str(text, "fuzz.toml", None) {
        // Everything that reaches a remote command line passed the strict patterns.
        use rocetop::config::{is_safe_name, is_safe_path};
        for n in &cfg.nodes {
            assert!(is_safe_name(&n.name), "{:?}", n.name);
            assert!(is_safe_path(&n.sysfs_root), "{:?}", n.sysfs_root);
            for d in n.devices.iter().chain(&n.netdevs) {
                assert!(is_safe_name(d), "{d:?}");
            }
        }
        for s in &cfg.switches {
            assert!(is_safe_name(&s.name), "{:?}", s.name);
            for p in s.port_patterns.iter().chain(&s.ports) {
                assert!(is_safe_name(p), "{p:?}");
            }
        }
        for l in &cfg.logs {
            assert!(is_safe_path(&l.path), "{:?}", l.path);
        }
    }
}
