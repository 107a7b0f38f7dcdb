//! Heap bytes per stored series (storing a row of a big answer must cost a few
//! hundred bytes, not kilobytes). An NX-OS PFC table of thousands of ports, ten series a port,
//! goes through the real parser into a store as the TUI sizes it, poll after poll; what the store
//! holds once the parses are gone is counted exactly by `rocetop::heap::Counting` (no RSS, no
//! timing): with one point a series, and after 60 polls, where most counters do not move (pause
//! frames are rare) and where every port's counters move every poll.

use rocetop::metrics::Store;
use rocetop::parse::{Ctx, ParseKind, parse};
use std::fmt::Write as _;

use crate::alone;

const ROWS: usize = 5000;
const POLLS: i64 = 60;
/// Heap bytes a row a parse may hold at its peak: 640 measured (a row's ten 40-byte samples, its
/// label set and texts, the accumulator's index, hashes and growth room); 19214e9's 1126.
const PEAK_ROW: usize = 720;

/// The PFC table of examples/row_cost.rs at poll `poll`: the ports for which `moves` holds count
/// pause frames.
fn table(poll: i64, moves: impl Fn(usize) -> bool) -> String {
    let mut t = String::from("Port                 Mode Oper(VL bmap)  RxPPP      TxPPP\n");
    t.push_str("============================================================\n\n");
    for i in 0..ROWS {
        let k = if moves(i) { poll as usize } else { 0 };
        let _ = writeln!(
            t,
            "Ethernet{}/{}/1        Auto On (8)        {}          {}",
            1 + i / 1000,
            1 + i % 1000,
            i + 3 * k,
            i * 2 + k
        );
    }
    t
}

/// Store `POLLS` polls of the table; heap bytes per series the store holds after the first and
/// after the last, and its series.
fn stored(moves: impl Fn(usize) -> bool) -> (f64, f64, usize) {
    let ctx = Ctx::named("sw");
    let before = rocetop::heap::live() as f64;
    // 15 minutes at 1 s, as the TUI keeps.
    let mut st = Store::new(900_000, 916);
    let src = st.add_source("sw", 1000);
    let mut first = 0.0;
    for poll in 0..POLLS {
        let text = table(poll, &moves);
        let parsed = parse(ParseKind::NxosPfc, &text, &ctx);
        st.ingest(src, 1000 + poll * 1000, &parsed);
        drop(parsed);
        drop(text);
        if poll == 0 {
            first = rocetop::heap::live() as f64 - before;
        }
    }
    let last = rocetop::heap::live() as f64 - before;
    let series = st.all().count();
    assert_eq!(
        st.stats().points,
        series * POLLS as usize,
        "every poll stored"
    );
    (first / series as f64, last / series as f64, series)
}

#[test]
fn a_stored_series_costs_tens_of_bytes_not_hundreds() {
    let _turn = alone();
    let (one, quiet, series) = stored(|i| i % 10 == 0);
    assert_eq!(
        series,
        ROWS * 10,
        "ten series a port (rx, tx, eight priorities)"
    );
    let (_, busy, _) = stored(|_| true);
    eprintln!(
        "heap per stored series: one point {one:.0} B; {POLLS} polls, a port in ten moving {quiet:.0} B, \
         every port moving {busy:.0} B (a port's ten series: {:.0} / {:.0} / {:.0} B)",
        one * 10.0,
        quiet * 10.0,
        busy * 10.0
    );
    // A series with its key, label set share, index and history: 70 / 74 / 115 B measured (a
    // 48-byte `Series`: no clock pointer, a 20-byte history whose encoded points sit in the
    // store's slab). 12d54b9's layout took ~290 B with one point and ~650 B after 60 polls (a
    // deque of blocks per series from the second); 19214e9's 126 / 131 / 170 B (a 96-byte
    // `Series`, `Vec`s of ids); 0949058's 101 / 106 / 145 B (80 bytes).
    assert!(one < 76.0, "one point: {one:.0} B a series");
    assert!(
        quiet < 80.0,
        "{POLLS} polls, mostly unmoving: {quiet:.0} B a series"
    );
    assert!(
        busy < 124.0,
        "{POLLS} polls, rx and tx moving: {busy:.0} B a series"
    );
}

/// Parsing a big answer: at its peak the parse holds not much more than the
/// samples it gives (a row's ten samples and its one label set). 19214e9's accumulator doubled its
/// vector of samples and kept a 17-byte-a-slot index beside it: 1.66 times what it gave here
/// (1126 B a row), 2.1 times at 125k rows.
#[test]
fn a_parse_peaks_near_what_it_gives() {
    let _turn = alone();
    let text = table(0, |_| false);
    let ctx = Ctx::named("sw");
    let before = rocetop::heap::live();
    let (parsed, peak) = rocetop::heap::peak_during(|| parse(ParseKind::NxosPfc, &text, &ctx));
    let given = rocetop::heap::live() - before;
    assert_eq!(parsed.samples.len(), ROWS * 10);
    let (peak_row, given_row) = (peak / ROWS, given / ROWS);
    eprintln!(
        "parse of {ROWS} rows: peak {peak_row} B a row, gives {given_row} B a row ({:.2}x)",
        peak as f64 / given as f64
    );
    assert!(peak_row < PEAK_ROW, "peak {peak_row} B a row");
    assert!(
        (peak as f64) < 1.4 * given as f64,
        "peak {peak_row} B a row, {given_row} B a row given"
    );
}
