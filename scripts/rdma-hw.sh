#!/usr/bin/env bash
# rocetop's RDMA RTT against ib_send_lat on real RoCE hardware (tests/e2e/ping_rdma_hw.rs; docs/latency.md,
# "On real RoCE hardware"). Needs perftest and a verbs build; cannot run without a RoCE NIC.
#
#   scripts/rdma-hw.sh PEER_ADDR SSH_TARGET    two hosts: starts pingd and the ib_send_lat server on the
#                                              peer over ssh (rocetop and perftest installed there),
#                                              then runs the test here against PEER_ADDR
#   scripts/rdma-hw.sh --loopback ADDR         one host, one RoCE port: pingd and the ib_send_lat
#                                              server here on ADDR (an address of that port's netdev)
#
# This side's path and marking (optional): ROCETOP_HW_DEVICE, ROCETOP_HW_PORT, ROCETOP_HW_GID,
# ROCETOP_HW_TCLASS (default 106, DSCP 26), ROCETOP_HW_SOURCE; the peer's: ROCETOP_HW_PEER_DEVICE,
# ROCETOP_HW_PEER_PORT, ROCETOP_HW_PEER_GID. The test prints the resolved device/port/GID (given to
# ib_send_lat too), the session's setup time, the first 20 RTTs, and RTT/2 beside ib_send_lat's t_avg.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/libclang.sh
. scripts/libclang.sh
[ -n "${LIBCLANG_PATH:-}" ] || LIBCLANG_PATH=$(libclang_dir) && export LIBCLANG_PATH

usage() {
  sed -n '5,9p' "$0" >&2
  exit 2
}
[ $# -eq 2 ] || usage

tclass=${ROCETOP_HW_TCLASS:-106}
export ROCETOP_HW_TCLASS=$tclass
# The server side of the comparison: the port and iterations of perftest::server_args, the peer's pins.
server=(ib_send_lat -F -p 18516 -n 5000)
[ -n "${ROCETOP_HW_PEER_DEVICE:-}" ] && server+=(-d "$ROCETOP_HW_PEER_DEVICE")
[ -n "${ROCETOP_HW_PEER_PORT:-}" ] && server+=(-i "$ROCETOP_HW_PEER_PORT")
[ -n "${ROCETOP_HW_PEER_GID:-}" ] && server+=(-x "$ROCETOP_HW_PEER_GID")
server+=("--tclass=$tclass")

cargo build --release --features verbs --bin rocetop
target=${CARGO_TARGET_DIR:-target}
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  if [ -n "${ssh_target:-}" ]; then
    # shellcheck disable=SC2029 # expanded here on purpose: the pid file names are fixed
    ssh "$ssh_target" 'kill $(cat /tmp/rocetop-hw-pingd.pid /tmp/rocetop-hw-ibsl.pid) 2>/dev/null' || true
  fi
}
trap cleanup EXIT

if [ "$1" = --loopback ]; then
  peer=$2
  # Both ends are this host's port: the server takes the ROCETOP_HW_PEER_* pins (or perftest's first device).
  "$target/release/rocetop" pingd --listen "$peer:18515" &
  pids+=($!)
  "${server[@]}" &
  pids+=($!)
else
  peer=$1
  ssh_target=$2
  # shellcheck disable=SC2029 # the command line is built here, run there
  ssh "$ssh_target" "nohup rocetop pingd --listen $peer:18515 >/tmp/rocetop-hw-pingd.log 2>&1 &
    echo \$! >/tmp/rocetop-hw-pingd.pid
    nohup ${server[*]} >/tmp/rocetop-hw-ibsl.log 2>&1 &
    echo \$! >/tmp/rocetop-hw-ibsl.pid"
fi
sleep 1
ROCETOP_HW_PEER=$peer cargo test --release --features verbs --test e2e ping_rdma_hw -- --ignored \
  --nocapture --test-threads=1
