//! The boxed QOS GROUP tables of the queuing text parser (7.x Unicast / OOBFC Unicast /
//! Multicast columns, 9.x WRED/AFD & Tail, Q Depth, WD & Tail): a row label's meaning and a row's
//! cells to samples.

use super::*;

impl<'a> St<'a> {
    /// What a box row label means (memoised: the same few labels repeat for every group).
    fn box_stat(&mut self, label: &'a str) -> usize {
        if let Some(i) = self.box_memo.iter().position(|(l, _)| *l == label) {
            return i;
        }
        let stat = queue_stat(label).map(|q| match q {
            QStat::TxPkts => BoxStat {
                name: SW_QUEUE_TX_PACKETS,
                reason: None,
                gauge: false,
            },
            QStat::TxBytes => BoxStat {
                name: SW_QUEUE_TX_BYTES,
                reason: None,
                gauge: false,
            },
            QStat::Depth => BoxStat {
                name: SW_QUEUE_DEPTH,
                reason: None,
                gauge: true,
            },
            QStat::EcnMarked => BoxStat {
                name: SW_QUEUE_ECN_MARKED,
                reason: None,
                gauge: false,
            },
            QStat::Dropped { reason, bytes } => BoxStat {
                name: if bytes {
                    SW_QUEUE_DROPPED_BYTES
                } else {
                    SW_QUEUE_DROPPED
                },
                reason: Some(reason),
                gauge: false,
            },
        });
        self.box_memo.push((label, stat));
        self.box_memo.len() - 1
    }

    /// A line inside a box: a QOS GROUP title, the column header, or stat/value cells (a row may
    /// hold two stat/value pairs).
    pub(super) fn box_line(&mut self, t: &'a str) -> bool {
        let mut cells = std::mem::take(&mut self.cells);
        split_cells(t, &mut cells);
        let ok = self.box_cells(&cells);
        self.cells = cells;
        ok
    }

    fn box_cells(&mut self, cells: &[&'a str]) -> bool {
        if let [title] = cells
            && let Some(g) = qos_group_title(title)
        {
            self.qg = Some(g);
            self.sec = Sec::Box;
            return true;
        }
        if !cells.is_empty() && cells.iter().all(|c| contains_ci(c, "cast")) {
            return true;
        }
        let value = |c: &str| match count(c) {
            Some(v) => Some(Some(v)),
            None if matches!(c, "-" | "N/A" | "NA") => Some(None),
            None => None,
        };
        // The cells are (label, values...) groups; a row that starts with a value is not one.
        match cells.first() {
            None => return false,
            Some(c) if value(c).is_some() => return false,
            Some(_) => {}
        }
        if self.port.is_none() || self.qg.is_none() {
            self.p
                .note("queue statistics without an interface or QoS group header were skipped");
            return false;
        }
        let mut ok = true;
        let mut i = 0;
        while let Some(&label) = cells.get(i) {
            // Sum the label's values; every column `-` is missing, not zero.
            let mut sum: Option<u64> = None;
            i += 1;
            let values_from = i;
            while let Some(v) = cells.get(i).and_then(|c| value(c)) {
                if let Some(v) = v {
                    sum = Some(sum.unwrap_or(0).saturating_add(v));
                }
                i += 1;
            }
            let m = self.box_stat(label);
            let Some((_, stat)) = self.box_memo.get(m) else {
                continue;
            };
            let Some(stat) = stat else {
                ok = false;
                continue;
            };
            let (Some(sum), Some(port), Some(qg)) = (sum, &self.port, &self.qg) else {
                continue;
            };
            // In label-name order, so that the key needs no sorting.
            let with_reason;
            let without;
            let labels: &[(&str, &str)] = match &stat.reason {
                Some(r) => {
                    with_reason = [
                        ("port", port.as_str()),
                        ("qos_group", qg.as_str()),
                        ("reason", r.as_str()),
                        ("switch", self.sw),
                    ];
                    &with_reason
                }
                None => {
                    without = [
                        ("port", port.as_str()),
                        ("qos_group", qg.as_str()),
                        ("switch", self.sw),
                    ];
                    &without
                }
            };
            let v = if stat.gauge {
                Value::Gauge(sum as f64)
            } else {
                Value::Counter(sum)
            };
            let from = cells.get(values_from..i).unwrap_or(&[]);
            self.out.put(stat.name, labels, v, from);
        }
        ok
    }
}
