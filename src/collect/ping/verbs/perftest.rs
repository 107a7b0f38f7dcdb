//! The `ib_send_lat` runs that the hardware test (tests/e2e/ping_rdma_hw.rs) compares rocetop with.
//! perftest listens on 18515 by default, pingd's port, and its server binds every address: it gets
//! its own port. Both sides must run the same iteration count (perftest ≥ 6.28 aborts on "iters
//! mismatch"), so both command lines come from here and the peer's is printed exactly.

/// perftest's control port for the comparison: not pingd's 18515.
pub const PORT: u16 = 18516;
/// Iterations on both sides.
pub const ITERS: u32 = 5000;

/// `ib_send_lat` arguments on one side: its own device and GID index, or perftest's defaults.
fn side(device: Option<&str>, gid: Option<u8>) -> Vec<String> {
    let mut a: Vec<String> = ["-F", "-p", &PORT.to_string(), "-n", &ITERS.to_string()]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(d) = device {
        a.extend(["-d".into(), d.to_string()]);
    }
    if let Some(g) = gid {
        a.extend(["-x".into(), g.to_string()]);
    }
    a
}

/// The server side, on the peer (started first).
pub fn server_args(device: Option<&str>, gid: Option<u8>) -> Vec<String> {
    side(device, gid)
}

/// The client side, here.
pub fn client_args(device: Option<&str>, gid: Option<u8>, peer: &str) -> Vec<String> {
    let mut a = side(device, gid);
    a.push(peer.to_string());
    a
}

/// What to run on the peer before the test, exactly.
pub fn peer_commands(peer: &str, device: Option<&str>, gid: Option<u8>) -> String {
    format!(
        "rocetop pingd --listen {peer}:18515 &     # built with --features verbs\n\
         ib_send_lat {}     # once per test run",
        server_args(device, gid).join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_agree_on_port_and_iterations_and_avoid_pingds_port() {
        let s = server_args(Some("rocep19s0"), Some(3));
        let c = client_args(Some("rocep11s0"), Some(5), "192.0.2.202");
        assert_eq!(
            s,
            [
                "-F",
                "-p",
                "18516",
                "-n",
                "5000",
                "-d",
                "rocep19s0",
                "-x",
                "3"
            ]
        );
        assert_eq!(
            c,
            [
                "-F",
                "-p",
                "18516",
                "-n",
                "5000",
                "-d",
                "rocep11s0",
                "-x",
                "5",
                "192.0.2.202"
            ]
        );
        assert_ne!(PORT, crate::collect::ping::DEFAULT_PORT);
        assert_eq!(
            peer_commands("192.0.2.202", Some("rocep19s0"), Some(3)),
            "rocetop pingd --listen 192.0.2.202:18515 &     # built with --features verbs\n\
             ib_send_lat -F -p 18516 -n 5000 -d rocep19s0 -x 3     # once per test run"
        );
        assert_eq!(server_args(None, None), ["-F", "-p", "18516", "-n", "5000"]);
    }
}
