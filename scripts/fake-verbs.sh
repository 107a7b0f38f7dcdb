#!/usr/bin/env bash
# The verbs pinger and a pingd session through a fake libibverbs.so.1 (tests/fake-verbs/), so the
# real ffi.rs runs without an RDMA NIC: builds the fake and the verbs build, writes the sysfs tree
# the fake and rocetop's GID selection read, and pings over loopback for FAKE_VERBS_SECS (default
# 20) seconds. Prints the session's setup time, the first 20 RTTs and the Latency row; exits
# non-zero when no RDMA probe completed (or a check of tests/e2e/ping_fake_verbs.rs failed).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/libclang.sh
. scripts/libclang.sh
[ -n "${LIBCLANG_PATH:-}" ] || LIBCLANG_PATH=$(libclang_dir) && export LIBCLANG_PATH
target=${CARGO_TARGET_DIR:-target}
out="$target/fake-verbs"
mkdir -p "$out"
cc -O1 -g -Wall -Wextra -Werror -shared -fPIC \
  -Wl,--version-script=tests/fake-verbs/libibverbs.map -Wl,-soname,libibverbs.so.1 \
  -o "$out/libibverbs.so.1" tests/fake-verbs/fake_verbs.c

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port="$work/sysfs/class/infiniband/fakerxe0/ports/1"
mkdir -p "$port/gids" "$port/gid_attrs/types" "$port/gid_attrs/ndevs" "$work/wire"
echo "4: ACTIVE" >"$port/state"
echo "Ethernet" >"$port/link_layer"
# The kernel's usual four: the link-local GID and the netdev's IPv4 address, each as v1 and v2.
i=0
for gid in fe80:0000:0000:0000:0000:00ff:fe00:0001 fe80:0000:0000:0000:0000:00ff:fe00:0001 \
  0000:0000:0000:0000:0000:ffff:7f00:0001 0000:0000:0000:0000:0000:ffff:7f00:0001; do
  echo "$gid" >"$port/gids/$i"
  if [ $((i % 2)) -eq 0 ]; then echo "IB/RoCE v1"; else echo "RoCE v2"; fi >"$port/gid_attrs/types/$i"
  echo lo >"$port/gid_attrs/ndevs/$i"
  i=$((i + 1))
done
echo "0000:0000:0000:0000:0000:0000:0000:0000" >"$port/gids/$i"

# A second tree for `device = "all"`: fakerxe1 beside fakerxe0, its netdev holding 127.0.0.2 (an
# address of lo on Linux, so a control connection can be bound to it).
cp -a "$work/sysfs" "$work/sysfs2"
rail="$work/sysfs2/class/infiniband/fakerxe1/ports"
mkdir -p "$rail"
cp -a "$work/sysfs/class/infiniband/fakerxe0/ports/1" "$rail/1"
for i in 2 3; do echo 0000:0000:0000:0000:0000:ffff:7f00:0002 >"$rail/1/gids/$i"; done

cargo test --features verbs --test e2e --no-run
FAKE_VERBS_SYSFS="$work/sysfs" FAKE_VERBS_DIR="$work/wire" FAKE_VERBS_LOG="$work/violations.log" \
  FAKE_VERBS_SECS="${FAKE_VERBS_SECS:-20}" LD_LIBRARY_PATH="$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  cargo test --features verbs --test e2e ping_fake_verbs -- --nocapture --test-threads=1
FAKE_VERBS_DEVICES=2 FAKE_VERBS_SYSFS="$work/sysfs2" FAKE_VERBS_DIR="$work/wire" \
  FAKE_VERBS_LOG="$work/violations2.log" LD_LIBRARY_PATH="$out${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
  cargo test --features verbs --test e2e ping_fake_verbs::every_rail -- --nocapture --test-threads=1
