#!/usr/bin/env bash
# Bytes the live screen writes to its terminal per second, and its CPU %, on the demo at 1 Hz polling,
# in 120x40 and 80x24 panes (8 nodes, and 512 with bench/gpu512.toml). The baseline, measured in the same
# run and pane size, is a full repaint of the same screen once a second (`clear; cat screen`), which is
# what a tool without cell diffing sends; the ratio is ours / baseline. Then the render time of one
# frame for 8 and 512 nodes (examples/render_time.rs, release build).
#
#   bench/tui_bytes.sh                 # needs tmux and a release build (cargo build --release)
#   SECS=30 RENDER=0 bench/tui_bytes.sh
#   ROCETOP_BIN=path/to/rocetop bench/tui_bytes.sh
#   (the render-time step runs `cargo test --release`: export CARGO_TARGET_DIR if you build elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${ROCETOP_BIN:-${CARGO_TARGET_DIR:-target}/release/rocetop}
SECS=${SECS:-20}
WARMUP=${WARMUP:-5}
RENDER=${RENDER:-1}
[ -x "$BIN" ] || { echo "no binary at $BIN: cargo build --release (or set ROCETOP_BIN)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "tmux is needed" >&2; exit 1; }
WORK=$(mktemp -d)
SOCK="rocetop-bench-$$"
cleanup() { tmux -L "$SOCK" kill-server 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
TCK=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# measure NAME W H COMMAND...: prints "bytes/s cpu%"
measure() {
  local name=$1 w=$2 h=$3; shift 3
  local out="$WORK/$name.out"
  tmux -L "$SOCK" new-session -d -s "$name" -x "$w" -y "$h" "exec $*"
  sleep "$WARMUP"
  local pid
  pid=$(tmux -L "$SOCK" display -p -t "$name" '#{pane_pid}')
  : >"$out"
  tmux -L "$SOCK" pipe-pane -o -t "$name" "cat >>'$out'"
  local c0; c0=$(cpu_ticks "$pid")
  sleep "$SECS"
  local c1; c1=$(cpu_ticks "$pid")
  tmux -L "$SOCK" pipe-pane -t "$name"
  tmux -L "$SOCK" capture-pane -p -t "$name" >"$WORK/$name.screen"
  tmux -L "$SOCK" send-keys -t "$name" q
  sleep 0.5
  tmux -L "$SOCK" kill-session -t "$name" 2>/dev/null || true
  local bytes; bytes=$(stat -c %s "$out")
  awk -v b="$bytes" -v s="$SECS" -v c="$((c1 - c0))" -v t="$TCK" 'BEGIN { printf "%.0f %.1f\n", b / s, 100 * c / t / s }'
}

printf "%-22s %8s %12s %8s %14s %7s\n" "case" "size" "bytes/s" "cpu%" "baseline B/s" "ratio"
for nodes in 8 512; do
  cfg=""
  [ "$nodes" = 512 ] && cfg="--config bench/gpu512.toml"
  for size in "120 40" "80 24"; do
    set -- $size
    read -r bps cpu < <(measure "n${nodes}_${1}x${2}" "$1" "$2" "$BIN --demo $cfg")
    # Baseline: the same screen repainted in full once a second.
    scr="$WORK/n${nodes}_${1}x${2}.screen"
    read -r base _ < <(measure "base${nodes}_${1}x${2}" "$1" "$2" "bash -c 'while sleep 1; do clear; cat $scr; done'")
    ratio=$(awk -v a="$bps" -v b="$base" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
    printf "%-22s %8s %12s %8s %14s %7s\n" "rocetop --demo ($nodes)" "${1}x${2}" "$bps" "$cpu" "$base" "$ratio"
  done
done

if [ "$RENDER" = 1 ]; then
  echo
  echo "render time of one frame (120x40, release):"
  cargo run --release --quiet --example render_time 2>/dev/null | grep '^render'
fi
