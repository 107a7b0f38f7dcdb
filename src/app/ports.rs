//! Port lists said the short way: `ii1/1/1`, `ii1/1/2`, ... `ii1/1/6` → `ii1/1/1-6`, so six ports
//! with one condition take one line (episodes and rolled-up alerts).

/// `Ethernet1/1/7` → (`Ethernet1/1/`, 7); a name with no trailing number is its own group.
fn split(p: &str) -> (&str, Option<u32>) {
    let digits = p.len() - p.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return (p, None);
    }
    let (head, tail) = p.split_at(p.len() - digits);
    (head, tail.parse().ok())
}

/// Consecutive ports sharing a prefix become `prefix<first>-<last>`; groups are joined by `,`.
/// The order is the natural one (by prefix, then number), duplicates are dropped.
pub fn compress<S: AsRef<str>>(ports: &[S]) -> String {
    let mut v: Vec<(&str, Option<u32>, &str)> = ports
        .iter()
        .map(|p| {
            let (h, n) = split(p.as_ref());
            (h, n, p.as_ref())
        })
        .collect();
    v.sort();
    v.dedup();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let (head, n, name) = v[i];
        let Some(first) = n else {
            out.push(name.to_string());
            i += 1;
            continue;
        };
        let mut last = first;
        let mut j = i + 1;
        while j < v.len() && v[j].0 == head && v[j].1 == Some(last + 1) {
            last += 1;
            j += 1;
        }
        out.push(if last > first {
            format!("{head}{first}-{last}")
        } else {
            name.to_string()
        });
        i = j;
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::compress;

    #[test]
    fn ranges_of_consecutive_ports() {
        let ii: Vec<String> = (1..=6).rev().map(|i| format!("ii1/1/{i}")).collect();
        assert_eq!(compress(&ii), "ii1/1/1-6");
        assert_eq!(
            compress(&["Ethernet1/1/1", "Ethernet1/1/2", "Ethernet1/1/4", "ii1/1/3"]),
            "Ethernet1/1/1-2,Ethernet1/1/4,ii1/1/3"
        );
        assert_eq!(
            compress(&["mgmt", "mgmt", "Ethernet1/10"]),
            "Ethernet1/10,mgmt"
        );
        assert_eq!(compress::<&str>(&[]), "");
    }
}
