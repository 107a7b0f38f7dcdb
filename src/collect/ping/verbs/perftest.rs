//! The `ib_send_lat` runs that the hardware test (tests/e2e/ping_rdma_hw.rs) compares rocetop with.
//! perftest listens on 18515 by default, pingd's port, and its server binds every address: it gets
//! its own port. Both sides must run the same iteration count (perftest ≥ 6.28 aborts on "iters
//! mismatch"), so both command lines come from here and the peer's is printed exactly. The device,
//! port, GID index and traffic class are the ones rocetop's own session resolved, so both time the
//! same path.

/// perftest's control port for the comparison: not pingd's 18515.
pub const PORT: u16 = 18516;
/// Iterations on both sides.
pub const ITERS: u32 = 5000;

/// One side's RDMA path: each part perftest's default where not given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path {
    pub device: Option<String>,
    /// Port of the device, from 1 (`-i`).
    pub port: Option<u8>,
    /// GID index (`-x`).
    pub gid: Option<u8>,
    /// Traffic class of the GRH (`--tclass`), as rocetop's `traffic_class`.
    pub tclass: Option<u8>,
}

/// `ib_send_lat` arguments on one side.
fn side(p: &Path) -> Vec<String> {
    let mut a: Vec<String> = ["-F", "-p", &PORT.to_string(), "-n", &ITERS.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(d) = &p.device {
        a.extend(["-d".into(), d.clone()]);
    }
    if let Some(i) = p.port {
        a.extend(["-i".into(), i.to_string()]);
    }
    if let Some(g) = p.gid {
        a.extend(["-x".into(), g.to_string()]);
    }
    if let Some(t) = p.tclass {
        a.push(format!("--tclass={t}"));
    }
    a
}

/// The server side, on the peer (started first).
pub fn server_args(p: &Path) -> Vec<String> {
    side(p)
}

/// The client side, here.
pub fn client_args(p: &Path, peer: &str) -> Vec<String> {
    let mut a = side(p);
    a.push(peer.to_string());
    a
}

/// What to run on the peer before the test, exactly.
pub fn peer_commands(peer: &str, p: &Path) -> String {
    format!(
        "rocetop pingd --listen {peer}:18515 &     # built with --features verbs\n\
         ib_send_lat {}     # once per test run",
        server_args(p).join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(d: &str, port: u8, gid: u8, tclass: Option<u8>) -> Path {
        Path {
            device: Some(d.into()),
            port: Some(port),
            gid: Some(gid),
            tclass,
        }
    }

    #[test]
    fn both_sides_agree_on_port_and_iterations_and_avoid_pingds_port() {
        let s = server_args(&path("rocep19s0", 1, 3, None));
        let c = client_args(&path("mlx4_0", 2, 2, Some(106)), "192.0.2.202");
        assert_eq!(
            s.join(" "),
            "-F -p 18516 -n 5000 -d rocep19s0 -i 1 -x 3",
            "the device, port and GID rocetop resolved"
        );
        assert_eq!(
            c.join(" "),
            "-F -p 18516 -n 5000 -d mlx4_0 -i 2 -x 2 --tclass=106 192.0.2.202"
        );
        assert_ne!(PORT, crate::collect::ping::DEFAULT_PORT);
        assert_eq!(
            peer_commands("192.0.2.202", &path("rocep19s0", 1, 3, None)),
            "rocetop pingd --listen 192.0.2.202:18515 &     # built with --features verbs\n\
             ib_send_lat -F -p 18516 -n 5000 -d rocep19s0 -i 1 -x 3     # once per test run"
        );
        assert_eq!(
            server_args(&Path::default()),
            ["-F", "-p", "18516", "-n", "5000"]
        );
    }

    /// scripts/rdma-hw.sh starts the peer's side by hand (over ssh, or here for loopback): its
    /// `ib_send_lat` runs the port and iterations this side runs.
    #[test]
    fn the_hardware_script_runs_the_same_ib_send_lat() {
        let script = include_str!("../../../../scripts/rdma-hw.sh");
        let fixed = server_args(&Path::default()).join(" ");
        assert!(script.contains(&format!("ib_send_lat {fixed}")), "{fixed}");
        assert!(script.contains("ROCETOP_HW_PORT") && script.contains("ROCETOP_HW_TCLASS"));
    }
}
