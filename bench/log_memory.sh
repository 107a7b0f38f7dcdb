#!/bin/sh
# Memory of the training-log follower while 1 GiB is appended to the followed file.
# Baseline: RSS with the follower running before the append; reports after/before and the peak.
# Usage: bench/log_memory.sh [MIB] [DIR]   (DIR: where the temporary log goes, default $TMPDIR or /tmp)
set -eu
cd "$(dirname "$0")/.."
cargo build --release --quiet --example log_memory
target="${CARGO_TARGET_DIR:-target}"
exec "$target/release/examples/log_memory" "${1:-1024}" "${2:-${TMPDIR:-/tmp}}"
