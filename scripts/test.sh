#!/usr/bin/env bash
# The whole test suite, as CI runs it and as the README tells a developer to run it.
# Installs what the tests need (Debian/Ubuntu, as root or via sudo) when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
# The exporter of tests/prometheus/prometheus_node_exporter.rs (the test starts its own on
# 127.0.0.1).
command -v prometheus-node-exporter >/dev/null 2>&1 || need+=(prometheus-node-exporter)
command -v curl >/dev/null 2>&1 || need+=(curl)
[ -x /usr/bin/time ] || need+=(time)          # peak RSS in tests/e2e/hostile.rs
command -v awk >/dev/null 2>&1 || need+=(mawk)  # the streaming node loop (tests/ssh/stream_ssh.rs)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -e /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)
# Python with venv for the real frameworks of tests/e2e/frameworks_real.rs (scripts/frameworks.sh).
if [ "${ROCETOP_FRAMEWORKS:-1}" != 0 ]; then
  command -v python3 >/dev/null 2>&1 || need+=(python3)
  python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
fi
[ -e /usr/include/rdma/rdma_cma.h ] || need+=(librdmacm-dev)
# bindgen loads libclang.so / libclang-<N>.so, never libclang-cpp: detect what it loads.
# shellcheck source=scripts/libclang.sh
. scripts/libclang.sh
libclang_dir >/dev/null || need+=("$(libclang_package)")
if [ ${#need[@]} -gt 0 ]; then
  echo "scripts/test.sh: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  # libclang_package asked apt-cache before the update: ask again now that the lists are fresh.
  for i in "${!need[@]}"; do
    case "${need[$i]}" in libclang*) need[$i]=$(libclang_package) ;; esac
  done
  # The prometheus and prometheus-node-exporter packages start a service listening on every
  # interface: deny service starts while apt installs (a policy-rc.d, unless the system has its
  # own), then stop and disable the ones just installed where systemd runs. Tests start their own
  # servers on 127.0.0.1 with free ports.
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\n# scripts/test.sh: no service starts while it installs\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod 755 "$policy"
  fi
  installed=0
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null || installed=$?
  [ -z "$policy" ] || $SUDO rm -f "$policy"
  [ "$installed" -eq 0 ] || exit "$installed"
  if [ -d /run/systemd/system ]; then
    for pkg in "${need[@]}"; do
      case "$pkg" in
        prometheus | prometheus-node-exporter) $SUDO systemctl disable --now "$pkg" >/dev/null 2>&1 || true ;;
      esac
    done
  fi
fi

# rdma-sys' bindgen breaks on libclang 16+: point it at an llvm <= 15 when several are installed.
if [ -z "${LIBCLANG_PATH:-}" ]; then
  if dir=$(libclang_dir); then
    export LIBCLANG_PATH="$dir"
  else
    echo "scripts/test.sh: no libclang 13-15 found; --features verbs will use what bindgen finds" >&2
  fi
fi

cargo fmt --all -- --check
cargo clippy --all-targets -- -D warnings
if grep -q '^verbs' Cargo.toml; then
  cargo clippy --all-targets --features verbs -- -D warnings
fi
# Skips are counted, never silent: a test that cannot run here writes why (tests/common/skip.rs);
# ignored tests carry their reason. Both are summed up when the script ends, pass or fail.
skips="${CARGO_TARGET_DIR:-target}/tmp/rocetop-skips.log"
rm -f "$skips"
skip_summary() {
  if [ -s "$skips" ]; then
    cut -f2 "$skips" | sort | uniq -c | while read -r n why; do echo "scripts/test.sh: $n skipped: $why"; done
  else
    echo "scripts/test.sh: 0 skipped"
  fi
  grep -rhoE '#\[ignore = "[^"]*"\]' src tests | sed -E 's/.*"(.*)".*/\1/' | sort | uniq -c |
    while read -r n why; do echo "scripts/test.sh: $n ignored: $why"; done
}
trap skip_summary EXIT
# The pinned torch/transformers/accelerate venv of tests/e2e/frameworks_real.rs, installed here so that
# its cost shows apart from the tests: ~2.4 GB from PyPI and ~4 min the first time, then cached
# in ~/.cache/rocetop (about a second). Where it cannot be installed the test says why and
# counts a skip; ROCETOP_FRAMEWORKS=0 leaves it out.
if [ "${ROCETOP_FRAMEWORKS:-1}" != 0 ]; then
  # A failed install is not tried again by the test: it reads the exit code (3: no python3-venv,
  # 4: cannot be installed here) and says why.
  scripts/frameworks.sh install >/dev/null || {
    export ROCETOP_FRAMEWORKS_INSTALL_EXIT=$?
    echo "scripts/test.sh: the frameworks venv was not installed (exit $ROCETOP_FRAMEWORKS_INSTALL_EXIT)" >&2
  }
fi
cargo test --all-targets --no-fail-fast
if grep -q '^verbs' Cargo.toml; then
  cargo test --features verbs --lib
  # The hardware test's parts that need no hardware (output parsing, the tolerance docs/latency.md states).
  cargo test --features verbs --test e2e ping_rdma_hw::
  # The real ffi.rs through a fake libibverbs.so.1 (tests/fake-verbs/), pinger and pingd on loopback.
  if command -v cc >/dev/null 2>&1; then FAKE_VERBS_SECS=5 scripts/fake-verbs.sh; fi
fi
