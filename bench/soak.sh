#!/usr/bin/env bash
# Soak: run rocetop on the demo cluster (the real TUI under tmux, and `export` headless) for a
# while, sampling RSS and open file descriptors of each every SAMPLE seconds. Both must stay flat.
# Usage: bench/soak.sh [DURATION_SECONDS=3600] [SAMPLE_SECONDS=60] [OUT=soak.csv]
# Connects to nothing: the demo is simulated in-process; export listens on 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
DUR=${1:-3600}; SAMPLE=${2:-60}; OUT=${3:-soak.csv}
BIN=${ROCETOP_BIN:-target/release/rocetop}
[ -x "$BIN" ] || cargo build --release -q
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
sess="rocetop-soak-$$"
tmux new-session -d -s "$sess" -x 120 -y 40 "$BIN --demo"
"$BIN" export --demo --listen "127.0.0.1:$port" >/dev/null 2>&1 &
epid=$!
trap 'tmux kill-session -t "$sess" 2>/dev/null; kill $epid 2>/dev/null' EXIT
sleep 2
tpid=$(pgrep -f "^$BIN --demo" | head -1)
echo "elapsed_s,tui_rss_kb,tui_fds,export_rss_kb,export_fds" >"$OUT"
start=$(date +%s)
keys=(1 2 3 4 5 6)
while :; do
  now=$(date +%s); el=$((now - start))
  row="$el"
  for p in "$tpid" "$epid"; do
    rss=$(awk '/VmRSS/{print $2}' "/proc/$p/status" 2>/dev/null || echo NA)
    fds=$(ls "/proc/$p/fd" 2>/dev/null | wc -l)
    row+=",$rss,$fds"
  done
  echo "$row" | tee -a "$OUT"
  # Exercise the screen and the exporter a little between samples.
  tmux send-keys -t "$sess" "${keys[$((el / SAMPLE % 6))]}" 2>/dev/null || true
  curl -sf "http://127.0.0.1:$port/metrics" >/dev/null || echo "scrape failed at ${el}s" >&2
  [ "$el" -ge "$DUR" ] && break
  sleep "$SAMPLE"
done
echo "soak done: $OUT"
