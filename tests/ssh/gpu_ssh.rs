//! The node dump's GPU part against a real sshd on 127.0.0.1: an `nvidia-smi` script on the
//! PATH sshd gives the session (the lowest layer rocetop does not own), in stream and exec mode;
//! a node without nvidia-smi (no GPU series, no error, no note); and one whose nvidia-smi hangs
//! (it is stopped at its own limit and the rest of the dump still arrives within the poll's).

use crate::sshd;

use rocetop::collect::poll::{Collected, KeepRaw, poll_once, spawn_all};
use rocetop::collect::source::{Source, SourceKind, build};
use rocetop::config::Config;
use rocetop::metrics::Store;
use rocetop::metrics::names::{GPU_POWER_WATTS, GPU_UTILIZATION_PERCENT};
use sshd::{Options, Sshd};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

const PORT: &str = "class/infiniband/mlx5_0/ports/1";

/// Two GPUs as driver 535 prints rocetop's query (`--format=csv,nounits`), one power `[N/A]`.
const CSV: &str = "index, uuid, pci.bus_id, utilization.gpu [%], utilization.memory [%], power.draw [W], temperature.gpu, clocks_throttle_reasons.active, memory.used [MiB], memory.total [MiB], ecc.errors.corrected.volatile.total, ecc.errors.uncorrected.volatile.total
0, GPU-1b724e78-eef5-4163-d43c-e4da15d41176, 00000000:07:00.0, 93, 41, 402.11, 64, 0x0000000000000000, 70123, 81920, 0, 0
1, GPU-8f639255-9bdd-d28c-78be-e05a47c7049e, 00000000:0F:00.0, 88, 39, [N/A], 66, 0x0000000000000004, 70123, 81920, 0, 0";

fn write(root: &Path, rel: &str, v: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(&p, format!("{v}\n")).expect("write");
}

fn tree(root: &Path) {
    write(root, &format!("{PORT}/hw_counters/np_cnp_sent"), "5");
    write(root, &format!("{PORT}/state"), "4: ACTIVE");
}

/// A directory holding an executable `nvidia-smi` with this body.
fn fake_nvidia_smi(body: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().expect("bin");
    let p = bin.path().join("nvidia-smi");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::fs::set_permissions(bin.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    bin
}

/// An sshd whose sessions find `bin` first on their PATH (sshd keeps the first `SetEnv`, so
/// the harness's own SHLVL is repeated here).
fn sshd_with_path(bin: Option<&Path>) -> Sshd {
    let path = match bin {
        Some(b) => format!("{}:/usr/local/bin:/usr/bin:/bin", b.display()),
        None => "/usr/local/bin:/usr/bin:/bin".to_string(),
    };
    Sshd::with(Options {
        extra: vec![format!("SetEnv PATH={path} SHLVL=1")],
        ..Options::default()
    })
}

fn node(s: &Sshd, root: &Path, mode: &str, timeout: &str) -> Arc<Source> {
    source(s, root, mode, timeout, SourceKind::Node)
}

/// The node's source of `kind` (`Node`: its dump; `Topology`: its rare reads, `topo -m` among them).
fn source(s: &Sshd, root: &Path, mode: &str, timeout: &str, kind: SourceKind) -> Arc<Source> {
    let kh = s.path("known_hosts_gpu");
    s.trust(&kh, "ed25519");
    let text = format!(
        "[ssh]\nknown_hosts = \"{}\"\nssh_config = \"{}\"\nconnect_timeout = \"5s\"\ncommand_timeout = \"{timeout}\"\n\
         [poll]\ninterval = \"1s\"\nmode = \"{mode}\"\n\
         [[node]]\nname = \"g1\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nidentity_file = \"{}\"\nsysfs_root = \"{}\"\n",
        kh.display(),
        kh.with_file_name("no_ssh_config").display(),
        s.port,
        sshd::current_user(),
        s.client_key.display(),
        root.display()
    );
    let cfg = Config::from_str(&text, "gpu.toml", None).expect("config");
    let mut store = Store::new(600_000, 10_000);
    build(&cfg, &mut store, rocetop::cmd::remote())
        .into_iter()
        .find(|s| s.kind == kind)
        .map(Arc::new)
        .expect("the node's source")
}

fn gpu(c: &Collected, name: &str, gpu: &str) -> Option<f64> {
    c.parsed
        .find(name, &[("gpu", gpu), ("node", "g1")])
        .map(|v| v.as_f64())
}

fn cnp(c: &Collected) -> Option<f64> {
    c.parsed
        .samples
        .iter()
        .find(|s| s.key.name.ends_with("np_cnp_sent_total"))
        .map(|s| s.value.as_f64())
}

async fn first_stream_poll(src: Arc<Source>) -> Collected {
    let (tx, mut rx) = mpsc::channel(4);
    let _tasks = spawn_all(vec![src], tx, KeepRaw::default());
    tokio::time::timeout(Duration::from_secs(60), rx.recv())
        .await
        .expect("a poll within 60 s")
        .expect("collector alive")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gpus_arrive_in_the_dump_in_both_modes() {
    let bin = fake_nvidia_smi(&format!(
        "case \"$1\" in --query-gpu=*) cat <<'EOF'\n{CSV}\nEOF\n;; *) echo \"bad args $*\"; exit 2;; esac"
    ));
    let s = sshd_with_path(Some(bin.path()));
    let dir = tempfile::tempdir().expect("root");
    tree(dir.path());
    let exec = poll_once(&node(&s, dir.path(), "exec", "10s")).await;
    assert_eq!(exec.error, None);
    assert_eq!(gpu(&exec, GPU_UTILIZATION_PERCENT, "0"), Some(93.0));
    assert_eq!(gpu(&exec, GPU_UTILIZATION_PERCENT, "1"), Some(88.0));
    assert_eq!(gpu(&exec, GPU_POWER_WATTS, "0"), Some(402.11));
    assert_eq!(gpu(&exec, GPU_POWER_WATTS, "1"), None, "[N/A] is missing");
    assert_eq!(cnp(&exec), Some(5.0));
    assert_eq!(
        exec.parsed.unknown_lines, 0,
        "{:?}",
        exec.parsed.unknown_examples
    );

    let streamed = first_stream_poll(node(&s, dir.path(), "stream", "10s")).await;
    assert_eq!(streamed.error, None);
    assert_eq!(gpu(&streamed, GPU_UTILIZATION_PERCENT, "1"), Some(88.0));
    assert_eq!(cnp(&streamed), Some(5.0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_without_nvidia_smi_has_no_gpu_and_no_error() {
    let s = sshd_with_path(None);
    let dir = tempfile::tempdir().expect("root");
    tree(dir.path());
    for c in [
        poll_once(&node(&s, dir.path(), "exec", "10s")).await,
        first_stream_poll(node(&s, dir.path(), "stream", "10s")).await,
    ] {
        assert_eq!(c.error, None);
        assert_eq!(cnp(&c), Some(5.0));
        assert!(
            !c.parsed
                .samples
                .iter()
                .any(|s| s.key.name.starts_with("rocetop_gpu_")),
            "no GPU series"
        );
        assert!(
            !c.parsed
                .notes
                .iter()
                .any(|n| n.contains("gpu") || n.contains("nvidia")),
            "{:?}",
            c.parsed.notes
        );
        assert_eq!(c.parsed.unknown_lines, 0, "{:?}", c.parsed.unknown_examples);
    }
    // Its topology read asks `nvidia-smi topo -m` too: no line of that answer is "not understood"
    // (the status bar counted one per GPU-less node).
    let topo = poll_once(&source(&s, dir.path(), "exec", "10s", SourceKind::Topology)).await;
    assert_eq!(topo.error, None);
    assert_eq!(
        topo.parsed.unknown_lines, 0,
        "{:?}",
        topo.parsed.unknown_examples
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_driver_times_out_and_the_rest_of_the_dump_arrives() {
    // What a wedged driver looks like from the shell: nvidia-smi never answers.
    let bin = fake_nvidia_smi("exec sleep 60");
    let s = sshd_with_path(Some(bin.path()));
    let dir = tempfile::tempdir().expect("root");
    tree(dir.path());
    // command_timeout 4 s: nvidia-smi gets 2 s of it.
    let started = Instant::now();
    let exec = poll_once(&node(&s, dir.path(), "exec", "4s")).await;
    let took = started.elapsed();
    assert_eq!(exec.error, None, "the poll itself did not fail");
    assert_eq!(cnp(&exec), Some(5.0), "the counters still came");
    assert!(
        took < Duration::from_secs(4),
        "within the poll's limit: {took:?}"
    );
    assert!(
        exec.parsed
            .notes
            .iter()
            .any(|n| n.contains("did not answer")),
        "{:?}",
        exec.parsed.notes
    );
    assert_eq!(gpu(&exec, GPU_UTILIZATION_PERCENT, "0"), None);

    let streamed = first_stream_poll(node(&s, dir.path(), "stream", "4s")).await;
    assert_eq!(streamed.error, None);
    assert_eq!(cnp(&streamed), Some(5.0));
    assert!(
        streamed
            .parsed
            .notes
            .iter()
            .any(|n| n.contains("did not answer"))
    );
}

/// `rocetop check` (the real binary) against a loopback sshd serving two GPU nodes: their
/// `nvidia-smi topo -m` is a real 16-GPU capture (mlx5_0/mlx5_1 PIX/PXB to GPU0-3, mlx5_4..9 on
/// the other socket, SYS), their NCCL_DEBUG=INFO lines come from followed logs. g1's NCCL uses
/// mlx5_5 (SYS) while GPU0 has mlx5_0 (PIX): flagged per GPU with the NIC to list in
/// NCCL_IB_HCA; g2's NCCL runs over sockets (`via NET/Socket`): flagged too.
#[test]
fn check_flags_a_cross_socket_nccl_nic_and_nccl_over_sockets() {
    let topo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gpu/nvidia-smi-topo-m_16gpu-10nic_mlx5-columns_nccl-tests-issue78_excerpt.txt"
    );
    let bin = fake_nvidia_smi(&format!(
        "case \"$1\" in --query-gpu=*) cat <<'EOF'\n{CSV}\nEOF\n;; topo) exec cat {topo} ;; *) echo \"bad args $*\"; exit 2;; esac"
    ));
    let s = sshd_with_path(Some(bin.path()));
    let kh = s.path("known_hosts_gpu_check");
    s.trust(&kh, "ed25519");
    let dir = tempfile::tempdir().expect("root");
    let mut text = format!(
        "[ssh]\nknown_hosts = \"{}\"\nssh_config = \"{}\"\nconnect_timeout = \"5s\"\ncommand_timeout = \"10s\"\n",
        kh.display(),
        kh.with_file_name("no_ssh_config").display(),
    );
    let logs = [
        (
            "g1",
            "g1:2291:2291 [0] NCCL INFO NET/IB : Using [0]mlx5_5:1/RoCE ; OOB eth0:10.0.0.1<0>\n\
             g1:2291:2310 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n",
        ),
        (
            "g2",
            "g2:3301:3301 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>\n\
             g2:3301:3320 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [send] via NET/Socket/0\n",
        ),
    ];
    for (name, log) in logs {
        let root = dir.path().join(name);
        tree(&root);
        let log_path = dir.path().join(format!("{name}.log"));
        std::fs::write(&log_path, log).expect("log");
        text.push_str(&format!(
            "[[node]]\nname = \"{name}\"\nhost = \"127.0.0.1\"\nport = {}\nuser = \"{}\"\nidentity_file = \"{}\"\nsysfs_root = \"{}\"\n\
             [[log]]\nnode = \"{name}\"\npath = \"{}\"\n",
            s.port,
            sshd::current_user(),
            s.client_key.display(),
            root.display(),
            log_path.display()
        ));
    }
    let cfg = dir.path().join("rocetop.toml");
    std::fs::write(&cfg, text).expect("config");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rocetop"))
        .args(["check", "--config"])
        .arg(&cfg)
        .env_remove("SSH_AUTH_SOCK")
        .output()
        .expect("run rocetop check");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let all = format!(
        "{stdout}\n--- stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let section = stdout
        .split("GPU <-> NIC affinity:")
        .nth(1)
        .unwrap_or_else(|| panic!("an affinity section:\n{all}"));
    assert!(
        section.contains("g1 GPU0: nearest NIC mlx5_0 (PIX); NCCL uses mlx5_5 (SYS)"),
        "{all}"
    );
    assert!(
        section.contains(
            "g1 GPU0: NCCL's NIC mlx5_5 is SYS from it (the other socket) while mlx5_0 is PIX: list mlx5_0 in NCCL_IB_HCA"
        ),
        "{all}"
    );
    // GPU2's PIX NIC is mlx5_1: the finding names the NIC near each GPU.
    assert!(section.contains("while mlx5_1 is PIX"), "{all}");
    assert!(
        section.contains("g2: NCCL runs over sockets (eth0) although topo -m shows RDMA NICs"),
        "{all}"
    );
    assert!(
        section.contains("g2 GPU0: nearest NIC mlx5_0 (PIX); NCCL uses sockets"),
        "{all}"
    );
}
