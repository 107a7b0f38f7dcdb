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
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[ -e /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)
[ -e /usr/include/rdma/rdma_cma.h ] || need+=(librdmacm-dev)
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
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
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
cargo test --all-targets --no-fail-fast
if grep -q '^verbs' Cargo.toml; then
  # The verbs loops (fakes, fake sysfs trees, QP attributes) and the hardware test's non-hardware parts.
  cargo test --features verbs --lib --test ping_rdma_hw
fi
