use super::*;
use crate::parse::switch::nxos::{flowcontrol, pfc};
use crate::parse::switch::rows::line_edits;

/// The PFC table as bench/perf/fabric.py writes it, at tick `t` (every counter moves with `t`).
fn fabric_pfc(ports: usize, t: u64) -> String {
    let rule = "=".repeat(60);
    let mut s = format!(
        "\n{rule}\nPort               Mode Oper(VL bmap)  RxPPP      TxPPP     \n{rule}\n\n"
    );
    for k in 0..ports as u64 {
        let p = format!("Ethernet1/{}", k + 1);
        s.push_str(&format!(
            "{p:<19}Auto On  (8)   {:<11}{:<10}\n",
            t * (120 + k),
            t * (90 + k)
        ));
    }
    s
}

/// The `detail` layout: a port line, then its modes and per-priority rows (state between lines).
fn detail(t: u64) -> String {
    let mut s = String::new();
    for (port, oper) in [
        ("Ethernet1/1", "On"),
        ("Ethernet1/2", "Off"),
        ("Eth1/3", "On"),
    ] {
        s.push_str(&format!(
            "{port}\n  Admin Mode: Auto\n  Oper Mode: {oper}\n  VL bitmap: (8)\n  Total Rx PFC Frames: {}\n  Total Tx PFC Frames: {}\n  | Priority0 | Priority1 | Priority2 | Priority3 |\n  | Rx | 0 | 1 | {} | {} |\n  | Tx | 0 | 0 | {} | 5 |\n",
            t * 3,
            t * 2,
            t,
            t * 7,
            t * 11
        ));
    }
    s
}

/// The 802.3x table as the fabric writes it, with moving counters.
fn fabric_fc(ports: usize, t: u64) -> String {
    let mut s = format!(
        "\n{}\nPort         Send FlowControl  Receive FlowControl  RxPause TxPause\n             admin    oper     admin    oper\n{}\n",
        "-".repeat(80),
        "-".repeat(80)
    );
    for k in 0..ports as u64 {
        s.push_str(&format!(
            "{:<13}on       on       desired  off         {:<7} {:<7}\n",
            format!("Eth1/{}", k + 1),
            t * k,
            t + k
        ));
    }
    s
}

/// Every NX-OS text capture of the fixtures (PFC, flowcontrol and others: neither parser may
/// care), with the fabric's tables.
fn captures() -> Vec<String> {
    let mut v = Vec::new();
    for dir in ["/tests/fixtures/nxos", "/tests/fixtures/nxos/synthetic"] {
        let dir = format!("{}{dir}", env!("CARGO_MANIFEST_DIR"));
        v.extend(
            std::fs::read_dir(dir)
                .expect("fixtures")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "txt"))
                .filter_map(|p| std::fs::read_to_string(p).ok()),
        );
    }
    assert!(v.len() > 10, "the NX-OS fixtures are read");
    v.extend([fabric_pfc(5, 3), detail(4), fabric_fc(5, 2)]);
    v
}

/// A parser and its full parse.
trait Checked: Rows {
    fn full(&self, text: &str) -> Parsed;
}

impl Checked for pfc::Text<'_> {
    fn full(&self, text: &str) -> Parsed {
        pfc::parse_text(text, self.sw)
    }
}

impl Checked for flowcontrol::Text<'_> {
    fn full(&self, text: &str) -> Parsed {
        flowcontrol::parse_text(text, self.sw)
    }
}

/// `update` from `old` to `new`: None when it declined, else what it made, which must be the
/// full parse of `new`.
fn updated<R: Checked>(r: &R, old: &str, new: &str) -> Option<Parsed> {
    let (mut p, tr) = parse_traced(r, old);
    if !update(r, &tr, old, new, &mut p) {
        return None;
    }
    assert_eq!(p, r.full(new), "update from\n{old}\nto\n{new}");
    Some(p)
}

#[test]
fn a_traced_parse_is_the_parse() {
    for t in captures() {
        let (pf, fc) = (pfc::Text { sw: "sw" }, flowcontrol::Text { sw: "sw" });
        assert_eq!(parse_traced(&pf, &t).0, pf.full(&t));
        assert_eq!(parse_traced(&fc, &t).0, fc.full(&t));
    }
}

#[test]
fn moving_counters_are_read_from_the_changed_lines_only() {
    let pf = pfc::Text { sw: "sw" };
    let fc = flowcontrol::Text { sw: "sw" };
    let texts: [(&dyn Fn(u64) -> String, bool); 3] = [
        (&|t| fabric_pfc(6, t), true),
        (&detail, true),
        (&|t| fabric_fc(6, t), false),
    ];
    for (make, is_pfc) in texts {
        // Poll after poll on one trace, as the collector does.
        let mut old = make(1);
        let (mut p, tr_p) = parse_traced(&pf, &old);
        let (mut q, tr_f) = parse_traced(&fc, &old);
        let n = if is_pfc {
            p.samples.len()
        } else {
            q.samples.len()
        };
        assert!(n >= 12, "{n} samples");
        for t in 2..6 {
            let new = make(t);
            assert_ne!(new, old);
            if is_pfc {
                assert!(update(&pf, &tr_p, &old, &new, &mut p), "tick {t}");
                assert_eq!(p, pf.full(&new), "tick {t}");
            } else {
                assert!(update(&fc, &tr_f, &old, &new, &mut q), "tick {t}");
                assert_eq!(q, fc.full(&new), "tick {t}");
            }
            old = new;
        }
    }
}

/// Each line changed in a few ways, one at a time: every update taken must be the full parse,
/// and value changes are taken; another number of lines never is.
#[test]
fn any_one_changed_line_gives_the_full_parse() {
    let (pf, fc) = (pfc::Text { sw: "sw" }, flowcontrol::Text { sw: "sw" });
    let mut taken = 0;
    for text in captures() {
        let lines: Vec<&str> = num::lines(&text).collect();
        let with = |i: usize, l: Option<&str>| line_edits::with_line(&lines, i, l);
        for (i, line) in lines.iter().enumerate() {
            let bumped = line_edits::bump_digits(line);
            let variants = [
                bumped,
                line.replace("On", "Off"),
                line.replace("(8)", "(9)"),
                line.replace("Rx", "Tx"),
                line.replace('|', " "),
                format!("{line} 7"),
                String::new(),
                "garbage line 12".to_string(),
                "Ethernet1/9".to_string(),
                "Eth1/9  on on on on 1 2".to_string(),
            ];
            for v in &variants {
                if v == line {
                    continue;
                }
                let new = with(i, Some(v));
                taken += usize::from(updated(&pf, &text, &new).is_some());
                taken += usize::from(updated(&fc, &text, &new).is_some());
            }
            let fewer = with(i, None);
            assert!(updated(&pf, &text, &fewer).is_none());
            assert!(updated(&fc, &text, &fewer).is_none());
        }
    }
    assert!(taken > 50, "value changes are taken ({taken})");
}

#[test]
fn a_series_set_twice_keeps_the_later_value() {
    let pf = pfc::Text { sw: "sw" };
    let row = |v: u64| format!("Ethernet1/1  Auto On (8) {v} 20\n");
    let old = format!("{}{}", row(1), row(2));
    for new in [
        format!("{}{}", row(1), row(3)),
        format!("{}{}", row(9), row(2)),
    ] {
        let p = updated(&pf, &old, &new).expect("values only");
        assert_eq!(p, pf.full(&new));
    }
}
