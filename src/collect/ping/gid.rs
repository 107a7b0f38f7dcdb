//! RoCE v2 GID index detection from sysfs. Verbs do not expose a GID's type (RoCE v1 or v2), the
//! kernel does: `/sys/class/infiniband/<dev>/ports/<n>/gid_attrs/types/<idx>` reads "RoCE v2", and
//! `gids/<idx>` holds the address. Pure file reads, so it is tested on a fake tree.

use std::path::Path;

/// The GID index to use: the lowest RoCE v2 GID with an IPv4-mapped address (what RoCE v2 over IPv4
/// routes), else the lowest RoCE v2 GID that is set at all.
pub fn detect(sysfs_root: &str, device: &str, port: u8) -> Option<u8> {
    let base = Path::new(sysfs_root).join(format!("class/infiniband/{device}/ports/{port}"));
    let mut v2: Vec<(u8, String)> = std::fs::read_dir(base.join("gid_attrs/types"))
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let idx: u8 = e.file_name().to_str()?.parse().ok()?;
            // Reading the type of an unused index fails with EINVAL: not a candidate.
            let ty = std::fs::read_to_string(e.path()).ok()?;
            if !ty.trim().eq_ignore_ascii_case("RoCE v2") {
                return None;
            }
            let gid = std::fs::read_to_string(base.join(format!("gids/{idx}"))).ok()?;
            let gid = gid.trim().to_ascii_lowercase();
            (!gid.is_empty() && gid.chars().any(|c| c != '0' && c != ':')).then_some((idx, gid))
        })
        .collect();
    v2.sort();
    v2.iter()
        .find(|(_, g)| g.starts_with("0000:0000:0000:0000:0000:ffff:"))
        .or(v2.first())
        .map(|(i, _)| *i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gid(root: &Path, idx: u8, ty: &str, g: &str) {
        let p = root.join("class/infiniband/rocep11s0/ports/1");
        std::fs::create_dir_all(p.join("gid_attrs/types")).expect("mkdir");
        std::fs::create_dir_all(p.join("gids")).expect("mkdir");
        std::fs::write(p.join(format!("gid_attrs/types/{idx}")), format!("{ty}\n")).expect("w");
        std::fs::write(p.join(format!("gids/{idx}")), format!("{g}\n")).expect("w");
    }

    #[test]
    fn picks_the_ipv4_roce_v2_gid() {
        let d = tempfile::tempdir().expect("tmp");
        let root = d.path();
        let link_local = "fe80:0000:0000:0000:020c:29ff:fe5b:1a2c";
        let v4 = "0000:0000:0000:0000:0000:ffff:c0a8:faca";
        gid(root, 0, "IB/RoCE v1", link_local);
        gid(root, 1, "RoCE v2", link_local);
        gid(root, 2, "IB/RoCE v1", v4);
        gid(root, 3, "RoCE v2", v4);
        gid(
            root,
            4,
            "RoCE v2",
            "0000:0000:0000:0000:0000:0000:0000:0000",
        );
        let r = root.to_str().expect("utf8");
        assert_eq!(detect(r, "rocep11s0", 1), Some(3));
        std::fs::remove_file(root.join("class/infiniband/rocep11s0/ports/1/gid_attrs/types/3"))
            .expect("rm");
        assert_eq!(
            detect(r, "rocep11s0", 1),
            Some(1),
            "else any RoCE v2 GID that is set"
        );
        assert_eq!(detect(r, "rocep11s0", 2), None);
        assert_eq!(detect(r, "nodev", 1), None);
    }
}
