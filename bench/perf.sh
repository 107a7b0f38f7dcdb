#!/usr/bin/env bash
# rocetop against the `watch`-over-SSH baseline, on one machine, over loopback OpenSSH only.
#
# Starts N simulated nodes (each its own sysfs tree, `ethtool -S` and SSH connection; nodes share
# min(N, 8) sshd) and a simulated NX-OS switch (an sshd ForceCommand answering the three `show`
# commands), with counters bench/perf/fabric.py advances every INTERVAL seconds. Then, one after another on
# the same fabric, SECS seconds each at 1 Hz:
#   export  `rocetop export` headless ([poll] mode = "exec": one exec per node per refresh)
#   stream  `rocetop export` with [poll] mode = "stream" (one long-lived channel per node)
#   tui     the live screen under tmux at 120x40 (bytes to the terminal from tmux pipe-pane)
#   tuistream  the same screen with mode = "stream"
#   watch   one `ssh` per source per second: N nodes (sysfs dump + ethtool -S, the same commands
#           rocetop sends) + 3 switch commands, in parallel (bench/perf/watch.sh)
#   cm      the same through OpenSSH ControlMaster (one master per host, opened first)
# and prints per case: monitor CPU seconds per minute (the monitor's process tree, /proc), peak RSS
# (MiB, VmHWM KiB / 1024: tables before 2026-11-24 called the same figure "MB"),
# refresh latency p50/p99 (rocetop: start of a source's poll to its parsed answer, from the
# `rocetop_poll_duration_seconds` histogram of export; baselines: start of a round to all its ssh
# done), rounds completed, remote CPU (every sshd process and what it ran; "node %core": the nodes'
# sshd alone, per node, in % of one core), terminal bytes/s, and how many times less monitor CPU a
# refresh each case takes than the watch and ControlMaster baselines.
#
# Then the budgets (README's goals table), one line each for what the run measured: figure, budget,
# OK or OVER, and with ROCETOP_BASE the base binary's figure and the change, flagged when more than
# 10 % worse. Figures are reported here, never asserted in tests:
#   N=8 + 1 switch, 1 Hz (stream, the default mode): the TUI <= 1 % of one core (tuistream),
#     export <= 0.5 % (stream), the node side <= 0.5 % of a core per node (stream: the nodes' sshd)
#   512 nodes: the TUI <= 10 % of one core (tuistream), RSS <= 150 MiB with 15 minutes of history
#     (tuistream's VmHWM at the end: SECS=900), a frame after new data <= 2 ms (render, worst tab)
#
#   MODES=budgets bench/perf.sh          just the budget cases, in order: N=8 stream, tuistream and
#                                        render (SECS=30 unless set), then N=512 tuistream on its own
#                                        fabric (SECS512=60, INTERVAL512=5 unless set; SECS512=900
#                                        for the RSS budget's 15 minutes); one summary at the end
#
#   bench/perf.sh                        # N=8, 60 s per case
#   N=64 SECS=60 bench/perf.sh
#   N=512 MODES="export tui" bench/perf.sh   (the baselines cannot keep 1 Hz at 512 on a small box)
#   ROCETOP_BIN=path/to/rocetop bench/perf.sh
#   N=512 MODES=prefill bench/perf.sh    15 min of 512-node history in the store, old vs new layout
#   MODES=render bench/perf.sh           frame render time, 8 and 512 nodes and 64 switches (examples/render_time
#                                        beside the binary, else built; with ROCETOP_BASE, the one
#                                        beside the base binary first)
#   MODES=profile bench/perf.sh          `rocetop export` under `perf record`
#   MODES=callgrind bench/perf.sh        instructions of `rocetop export` (stream) per refresh, counted
#                                        by callgrind over SECS seconds once every source is up
#                                        (machine load does not move them as it moves CPU time)
#   MODES=tuicallgrind bench/perf.sh     the same for the live screen (stream), per thread: the main
#                                        thread (the screen's loop) apart from the collectors
#   SSHD_CIPHERS=chacha20-poly1305@openssh.com bench/perf.sh   the ciphers every sshd offers
#   MEMPROBE=1 MODES=stream bench/perf.sh   also where export's memory is at the end (memprobe.sh)
#   ROCETOP_BASE=old/rocetop bench/perf.sh   also runs every rocetop case (export, stream, tui,
#                                        tuistream) with this binary, right before the same case
#                                        of ROCETOP_BIN, on the same fabric: rows `base:<case>`
# Needs sshd, ssh, tmux, python3, and a release build (cargo build --release). As root it logs in as
# a user `rocetoptest` with /bin/sh (created if missing), so no shell startup file is measured.
# Only 127.0.0.1 is contacted; every process started here is ended by its pid.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
N=${N:-8}
SECS=${SECS:-60}
# Seconds between refreshes (every case). 1 is the goal; at N=512 a small box cannot simulate 1 Hz,
# so INTERVAL=5 measures rocetop's cost per refresh where the fabric keeps up.
INTERVAL=${INTERVAL:-1}
MODES=${MODES:-export stream tui tuistream watch cm}
SSHDS=${SSHDS:-$((N < 8 ? N : 8))}
BIN=${ROCETOP_BIN:-${CARGO_TARGET_DIR:-target}/release/rocetop}
[ -x "$BIN" ] || { echo "no binary at $BIN: cargo build --release (or set ROCETOP_BIN)" >&2; exit 1; }
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
BASE=${ROCETOP_BASE:-}
if [ -n "$BASE" ]; then
  [ -x "$BASE" ] || { echo "no binary at ROCETOP_BASE=$BASE" >&2; exit 1; }
  BASE=$(cd "$(dirname "$BASE")" && pwd)/$(basename "$BASE")
fi
NEW_BIN=$BIN

# budget_summary FIGURES: one line per budget (see the header) from "KEY<TAB>VALUE<TAB>NOTE" lines,
# KEY prefixed "base:" for the base binary's figures.
budget_summary() {
  echo
  echo "Budgets (README's goals), $(date -u +%Y-%m-%d), $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg):"
  awk -F'\t' '
    { v[$1] = $2; note[$1] = $3 }
    function line(key, what, limit, unit, fig, b, status, ch, bs, worse) {
      if (!(key in v)) { printf "| %-38s | %12s | %9s | %-6s | %12s | %8s |  | not measured in this run\n", what, "-", "<= " limit " " unit, "-", "-", "-"; return }
      fig = v[key] + 0; status = fig <= limit ? "OK" : "OVER"
      bs = "-"; ch = "-"; worse = ""
      if (("base:" key) in v) {
        b = v["base:" key] + 0; bs = sprintf("%.2f %s", b, unit)
        if (b > 0) { ch = sprintf("%+.1f %%", (fig - b) * 100 / b); if (fig > b * 1.1) worse = "WORSE > 10 %" }
      }
      printf "| %-38s | %9.2f %-3s | %9s | %-6s | %12s | %8s | %s | %s\n", what, fig, unit, "<= " limit " " unit, status, bs, ch, worse, note[key]
    }
    END {
      printf "| %-38s | %12s | %9s | %-6s | %12s | %8s | flag | note\n", "budget", "figure", "budget", "status", "base", "change"
      printf "|----------------------------------------|-------------:|----------:|--------|-------------:|---------:|------|-----\n"
      line("tui8", "N=8 + 1 switch, 1 Hz: the TUI (CPU)", 1, "%")
      line("export8", "N=8 + 1 switch, 1 Hz: export (CPU)", 0.5, "%")
      line("node", "node side, CPU per node", 0.5, "%")
      line("tui512", "512 nodes: the TUI (CPU)", 10, "%")
      line("frame512", "512 nodes: a frame after new data", 2, "ms")
      line("rss512", "512 nodes: RSS, 15 min of history", 150, "MiB")
    }' "$1"
}

if [ "$MODES" = budgets ]; then
  # The budget cases only: the 8-node ones and the frame first (minutes), then 512 nodes on their
  # own fabric (writing 512 trees takes a minute or more). Each part is a run of this script;
  # their figures meet in one file for one summary.
  FIG=$(mktemp /tmp/rocetop-budgets.XXXXXX)
  trap 'rm -f "$FIG"' EXIT
  N=8 SECS=${SECS:-30} MODES="stream tuistream render" BUDGET_FIGURES=$FIG BUDGET_SUMMARY=0 ROCETOP_BIN=$BIN "$ROOT/bench/perf.sh"
  N=512 SECS=${SECS512:-60} INTERVAL=${INTERVAL512:-5} MODES=tuistream BUDGET_FIGURES=$FIG BUDGET_SUMMARY=0 ROCETOP_BIN=$BIN "$ROOT/bench/perf.sh"
  budget_summary "$FIG"
  exit 0
fi

for c in sshd ssh tmux python3 curl; do
  command -v "$c" >/dev/null || [ -x "/usr/sbin/$c" ] || { echo "$c is needed" >&2; exit 1; }
done
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
W=$(mktemp -d /tmp/rocetop-perf.XXXXXX)
chmod 755 "$W"
PIDS=()
SOCK="rocetop-perf-$$"
cleanup() {
  for s in "$W"/cm/*; do [ -S "$s" ] && ssh -o ControlPath="$s" -O exit x >/dev/null 2>&1 || true; done
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for f in "$W"/sshd*/sshd.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
log() { echo "perf: $*" >&2; }

USER_NAME=${BENCH_USER:-$(id -un)}
if [ -z "${BENCH_USER:-}" ] && [ "$(id -u)" = 0 ]; then
  id rocetoptest >/dev/null 2>&1 || useradd -M -s /bin/sh rocetoptest
  # useradd leaves it locked ("!"), which sshd refuses without PAM: no password, not locked
  usermod -p '*' rocetoptest
  USER_NAME=rocetoptest
fi

# --- the fabric ----------------------------------------------------------------------------------
# The counters move once an INTERVAL (by INTERVAL seconds' worth): every poll still sees every
# counter move, and at N=512 the fabric's file replacements no longer take half a core every second.
python3 bench/perf/fabric.py "$W/fabric" "$N" "$INTERVAL" & PIDS+=($!)
# Up to 5 min: writing 512 nodes' trees takes over a minute while the box is busy.
for _ in $(seq 3000); do [ -f "$W/fabric/ready" ] && break; sleep 0.1; done
[ -f "$W/fabric/ready" ] || { echo "fabric did not start" >&2; exit 1; }
chmod -R a+rX "$W/fabric"
mkdir -p /run/sshd "$W/cm"
ssh-keygen -q -t ed25519 -N "" -f "$W/id"
chmod 644 "$W/id.pub"
# start_sshd NAME FORCECOMMAND -> port
start_sshd() {
  local d="$W/sshd$1" port
  mkdir -p "$d"; port=$(free_port)
  ssh-keygen -q -t ed25519 -N "" -f "$d/hostkey"
  cp "$W/id.pub" "$d/authorized_keys"; chmod 644 "$d/authorized_keys"
  cat >"$d/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $d/hostkey
AuthorizedKeysFile $d/authorized_keys
PidFile $d/sshd.pid
PasswordAuthentication no
StrictModes no
UsePAM no
MaxStartups 1000:30:1000
MaxSessions 20
PermitRootLogin yes
# no ~/.bashrc in sessions (bash skips it at SHLVL>=2): the login user's rc is not what we measure
SetEnv SHLVL=1
ForceCommand $2
CFG
  # SSHD_CIPHERS=chacha20-poly1305@openssh.com: what the sshd offers, to compare ciphers with one binary
  [ -z "${SSHD_CIPHERS:-}" ] || echo "Ciphers $SSHD_CIPHERS" >>"$d/sshd_config"
  /usr/sbin/sshd -f "$d/sshd_config" -E "$d/log"
  for _ in $(seq 50); do [ -f "$d/sshd.pid" ] && break; sleep 0.1; done
  echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$d/hostkey.pub")" >>"$W/known_hosts"
  echo "$port"
}
NODE_FC="FABRIC=$W/fabric PATH=$ROOT/bench/perf/bin:\$PATH; export FABRIC PATH; eval \"\$SSH_ORIGINAL_COMMAND\""
SW_PORT=$(start_sshd sw "FABRIC=$W/fabric exec $ROOT/bench/perf/nxos.sh")
NODE_PORTS=()
for s in $(seq "$SSHDS"); do NODE_PORTS+=("$(start_sshd "n$s" "$NODE_FC")"); done
SSHD_PIDS=$(cat "$W"/sshd*/sshd.pid | tr '\n' ' ')
# The nodes' sshd alone (node side: what rocetop costs each node), apart from the switch's.
NODE_SSHD_PIDS=$(cat "$W"/sshdn*/sshd.pid | tr '\n' ' ')

# --- the config rocetop reads, and the baseline's targets (the same commands) ---------------------
cat >"$W/c.toml" <<T
demo = false
[ssh]
known_hosts = "$W/known_hosts"
identity_file = "$W/id"
max_concurrent_connects = 32
[poll]
mode = "exec"
interval = "${INTERVAL}s"
retention = "15m"

[[switch]]
name = "leaf1"
host = "127.0.0.1"
port = $SW_PORT
user = "$USER_NAME"
os = "nxos"
ports = ["Ethernet1/1-32", "ii1/1/1-6"]
T
: >"$W/targets"
for i in $(seq "$N"); do
  port=${NODE_PORTS[$(((i - 1) % SSHDS))]}
  sys="$W/fabric/n$i/sys"
  cat >>"$W/c.toml" <<T

[[node]]
name = "node$i"
host = "127.0.0.1"
port = $port
user = "$USER_NAME"
sysfs_root = "$sys"
devices = ["rocep11s0"]
netdevs = ["enp${i}s0"]
T
  ib="$sys/class/infiniband/rocep11s0/ports/*"
  printf '%s\t%s\n' "$port" "LC_ALL=C grep -rs . $ib/hw_counters $ib/counters $ib/state $ib/gid_attrs/ndevs $sys/class/net/enp${i}s0/statistics ; true; echo ethtool -S enp${i}s0; LC_ALL=C ethtool -S enp${i}s0" >>"$W/targets"
done
for c in "show queuing interface Ethernet1/1-32" "show interface priority-flow-control" "show interface flowcontrol"; do
  printf '%s\t%s\n' "$SW_PORT" "$c" >>"$W/targets"
done
# The same fabric read through one long-lived channel per node (switches always exec).
sed 's/^mode = "exec"$/mode = "stream"/' "$W/c.toml" >"$W/c-stream.toml"
grep -q '^mode = "stream"' "$W/c-stream.toml" || { echo "could not derive the stream config" >&2; exit 1; }
SSH=(-q -i "$W/id" -o UserKnownHostsFile="$W/known_hosts" -o StrictHostKeyChecking=yes -o BatchMode=yes
     -o IdentitiesOnly=yes -o IdentityAgent=none -l "$USER_NAME")

# --- measuring -----------------------------------------------------------------------------------
RESULTS="$W/results"
: >"$RESULTS"
# row NAME CPU_S RSS_KIB P50_MS P99_MS ROUNDS REMOTE_CPU_S BYTES_PER_S
row() { echo "$*" >>"$RESULTS"; }
pct() { sort -n "$1" | awk -v q="$2" '{ a[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int(q * NR + 0.999999); if (i < 1) i = 1; print a[i] }'; }
all_up() { curl -sf "http://127.0.0.1:$1/metrics" | grep -c '^rocetop_source_up{.*} 1$' || true; }
# histogram quantile (linear within the bucket, as Prometheus does) of the difference of two scrapes
hq() {
  python3 - "$1" "$2" "$3" <<'PY'
import re, sys
def read(p):
    b = {}
    for l in open(p):
        m = re.match(r'rocetop_poll_duration_seconds_bucket\{le="([^"]+)"\} (\d+)', l)
        if m: b[float("inf") if m[1] == "+Inf" else float(m[1])] = int(m[2])
    return b
a, b, q = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[3])
les = sorted(b); d = [b[x] - a.get(x, 0) for x in les]
tot = d[-1] if d else 0
if not tot: print("-"); sys.exit()
want, lo, prev = q * tot, 0.0, 0
for le, c in zip(les, d):
    if c >= want:
        hi = le if le != float("inf") else lo
        print(f"{(lo + (hi - lo) * (want - prev) / max(1, c - prev)) * 1000:.1f}"); break
    lo, prev = le, c
PY
}
meter() { python3 bench/perf/meter.py "$@"; }
# remote_start / remote_end: every sshd's CPU over SECS (what it ran included) and the nodes' part
# of it, as "$rcpu" = "ALL:NODES" seconds (the table splits them).
remote_start() {
  meter "$SECS" $SSHD_PIDS >"$W/remote" & RM_ALL=$!
  meter "$SECS" $NODE_SSHD_PIDS >"$W/remote.nodes" & RM_NODES=$!
}
remote_end() {
  local all nodes
  wait "$RM_ALL" "$RM_NODES"
  read -r all _ <"$W/remote"; read -r nodes _ <"$W/remote.nodes"
  rcpu="$all:$nodes"
}
# wire_snap PID: per TCP connection of PID, "peer_port bytes_received data_segs_in" (ss -tinp), so
# that two snapshots give the bytes and TCP data segments sshd sent over SECS: what the client
# decrypts, and about how many socket reads (wake-ups of the session task) it took.
wire_snap() {
  ss -tinpHO state established 2>/dev/null | awk -v pid="pid=$1," '
    index($0, pid) { split($4, a, ":"); b = 0; s = 0
      for (i = 6; i <= NF; i++) { if ($i ~ /^bytes_received:/) b = substr($i, 16); if ($i ~ /^data_segs_in:/) s = substr($i, 14) }
      print a[2], b, s }'
}
# wire NAME: the node connections' and the switch's bytes and segments a second, from two snapshots
wire() {
  awk -v name="$1" -v sw="$SW_PORT" -v secs="$SECS" -v n="$N" '
    { k = ($1 == sw) ? "sw" : "node"; d = (FNR == NR) ? -1 : 1; b[k] += d * $2; s[k] += d * $3 }
    END { printf "| %-14s | %12.0f | %10.1f | %12.0f | %10.1f |\n", name, b["node"] / secs / n, s["node"] / secs / n, b["sw"] / secs, s["sw"] / secs }
  ' "$W/ss0" "$W/ss1" >>"$W/wire"
}

# run_export [NAME CONFIG]
run_export() {
  local name=${1:-export} cfg=${2:-$W/c.toml}
  local port; port=$(free_port)
  "$BIN" export --config "$cfg" --listen "127.0.0.1:$port" 2>"$W/export.log" & local pid=$!; PIDS+=($pid)
  for _ in $(seq 300); do [ "$(all_up "$port")" -ge $((N + 1)) ] && break; sleep 0.2; done
  sleep 2
  curl -sf "http://127.0.0.1:$port/metrics" >"$W/m0"
  wire_snap "$pid" >"$W/ss0"
  remote_start
  read -r cpu rss < <(meter "$SECS" "$pid")
  remote_end
  wire_snap "$pid" >"$W/ss1"
  wire "$name"
  curl -sf "http://127.0.0.1:$port/metrics" >"$W/m1"
  rss=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
  local up; up=$(grep -c '^rocetop_source_up{.*} 1$' "$W/m1" || true)
  local ours; ours=$(grep -c '^rocetop_' "$W/m1" || true)
  # MEMPROBE=1: where the memory is at the end of the case (bench/perf/memprobe.sh)
  [ -z "${MEMPROBE:-}" ] || bench/perf/memprobe.sh "$pid" "$W/export.log" | sed "s/^/$name /" >>"$W/memprobe"
  kill "$pid"; wait "$pid" 2>/dev/null || true
  log "$name: $up/$((N + 1)) sources up, $ours metric lines"
  row "$name" "$cpu" "$rss" "$(hq "$W/m0" "$W/m1" 0.5)" "$(hq "$W/m0" "$W/m1" 0.99)" "$((SECS / INTERVAL))" "$rcpu" 0
}

# profile: `rocetop export` under `perf record` (software clock, call graphs) for SECS seconds;
# the report goes to $PROFILE_OUT (default /tmp/rocetop-perf.report). PROFILE_MODE=stream profiles
# the streaming collector (the default for nodes), else exec.
run_profile() {
  local port; port=$(free_port)
  local cfg=$W/c.toml; [ "${PROFILE_MODE:-exec}" = stream ] && cfg=$W/c-stream.toml
  perf record -q -e cpu-clock -F "${PERF_FREQ:-249}" --call-graph dwarf,16384 -o "$W/perf.data" -- \
    "$BIN" export --config "$cfg" --listen "127.0.0.1:$port" 2>"$W/export.log" & local pid=$!; PIDS+=($pid)
  sleep "$((SECS + 3))"
  kill -INT "$pid"; wait "$pid" 2>/dev/null || true
  perf report -i "$W/perf.data" --stdio --children --percent-limit 3 -g none 2>/dev/null >"${PROFILE_OUT:-/tmp/rocetop-perf.report}"
  [ -z "${PROFILE_DATA:-}" ] || cp "$W/perf.data" "$PROFILE_DATA"
  log "profile written to ${PROFILE_OUT:-/tmp/rocetop-perf.report}"
}

# callgrind [NAME]: `rocetop export` in stream mode under callgrind; its counters are zeroed once
# every source is up (connects and key exchanges excluded) and dumped SECS seconds later; the
# refreshes in between are the switch's polls (the poll-duration histogram's count: nodes stream).
# Prints instructions (Ir) per refresh. CG_KEEP=DIR keeps the dumps (callgrind_annotate them).
run_callgrind() {
  local name=${1:-callgrind}
  local port; port=$(free_port)
  valgrind --tool=callgrind --callgrind-out-file="$W/cg.$name.out" \
    "$BIN" export --config "$W/c-stream.toml" --listen "127.0.0.1:$port" 2>"$W/cg.$name.log" & local pid=$!; PIDS+=($pid)
  for _ in $(seq 600); do [ "$(all_up "$port")" -ge $((N + 1)) ] && break; sleep 0.5; done
  sleep 3
  # The scrapes that count the polls stay outside the counted window (a scrape renders every series).
  curl -sf "http://127.0.0.1:$port/metrics" >"$W/m0"
  callgrind_control --zero "$pid" >/dev/null 2>&1
  sleep "$SECS"
  callgrind_control --dump "$pid" >/dev/null 2>&1
  curl -sf "http://127.0.0.1:$port/metrics" >"$W/m1"
  local up; up=$(grep -c '^rocetop_source_up{.*} 1$' "$W/m1" || true)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  local polls; polls=$(cat "$W/m0" "$W/m1" | awk '/^rocetop_poll_duration_seconds_count/ { v[n++] = $2 } END { print v[1] - v[0] }')
  local dump; dump=$(ls "$W/cg.$name.out".* 2>/dev/null | head -1)
  local ir; ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$dump")
  [ -z "${CG_KEEP:-}" ] || cp "$dump" "$CG_KEEP/cg.$name.out"
  log "$name: $up/$((N + 1)) sources up"
  echo "$name: $ir instructions over ${SECS}s: $((ir / SECS)) a second; the switch polled $polls times: $((ir / (polls > 0 ? polls : 1))) per poll" | tee -a "$W/callgrind" >&2
}

# tuicallgrind [NAME]: the live screen (stream mode, tmux 120x40) under callgrind, one dump per
# thread (--separate-threads=yes); counters zeroed once every source is up, dumped SECS seconds
# later. Prints instructions a second: the main thread (the screen's loop: ingest, alerts,
# episodes, frames), the rest (collectors, input) and the whole, and the frames drawn in between
# (the main thread's instructions a frame: its ingest included, a second's polls each frame).
# CG_KEEP=DIR keeps the main thread's dump.
run_tuicallgrind() {
  local name=${1:-tuicallgrind}
  local out="$W/tuicg.out" pid
  : >"$out"
  tmux -L "$SOCK" new-session -d -s tuicg -x 120 -y 40 \
    "exec valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=$W/cg.$name.out $BIN --config $W/c-stream.toml 2>$W/cg.$name.log"
  tmux -L "$SOCK" pipe-pane -o -t tuicg "cat >>'$out'"
  pid=$(tmux -L "$SOCK" display -p -t tuicg '#{pane_pid}')
  for _ in $(seq 1200); do
    tmux -L "$SOCK" capture-pane -p -t tuicg | grep -qE "sources ([0-9]+): \1 up" && break
    sleep 0.1
  done
  sleep 3
  callgrind_control --zero "$pid" >/dev/null 2>&1
  local b0; b0=$(stat -c %s "$out")
  sleep "$SECS"
  callgrind_control --dump "$pid" >/dev/null 2>&1
  local b1; b1=$(stat -c %s "$out")
  local frames; frames=$(tail -c +"$((b0 + 1))" "$out" | head -c "$((b1 - b0))" | grep -ao $'\e\\[?2026h' | wc -l)
  tmux -L "$SOCK" capture-pane -p -t tuicg >"$W/tuicg.screen"
  tmux -L "$SOCK" send-keys -t tuicg q
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  tmux -L "$SOCK" kill-session -t tuicg 2>/dev/null || true
  # the first dump (part 1) of each thread; thread 1 is the main thread
  local main=0 all=0 f ir
  for f in "$W/cg.$name.out".*1-*; do
    ir=$(awk '/^(summary|totals):/ { print $2; exit }' "$f")
    all=$((all + ir))
    case $f in *-01) main=$ir; [ -z "${CG_KEEP:-}" ] || cp "$f" "$CG_KEEP/cg.$name.main.out" ;; esac
  done
  log "$name: status at the end: $(grep -oE 'sources [0-9]+: .{0,60}' "$W/tuicg.screen" | head -1)"
  # The main thread's parts (inclusive): frames drawn, alert evaluations, polls stored.
  local parts; parts=$(callgrind_annotate --inclusive=yes --threshold=100 "$W/cg.$name.out".*1-01 2>/dev/null | awk -v f="$frames" -v secs="$SECS" '
    function n(x) { gsub(",", "", x); return x + 0 }
    # A function can show on several lines (inlined parts, named by another file): its largest
    # inclusive count is the whole of it.
    function top(cur, x) { x = n(x); return x > cur ? x : cur }
    / [^ ]*:ratatui_core::terminal::render::<impl ratatui_core::terminal::Terminal<B>>::try_draw( \[|$)/ { d = top(d, $1) }
    / [^ ]*:rocetop::tui::flush::Flusher::draw( \[|$)/ { d = top(d, $1) }   # our flush since flush17
    / [^ ]*:rocetop::app::App::eval_alerts( \[|$)/ { e = top(e, $1) }
    # Collected::apply is inlined into App::take_poll since lead19 (its own part ~40 a poll)
    / [^ ]*:rocetop::collect::collected::Collected::apply( \[|$)/ { i = top(i, $1) }
    / [^ ]*:rocetop::app::App::take_poll( \[|$)/ { i = top(i, $1) }
    END { f = f > 0 ? f : 1; printf "draw %d a frame, evaluation %d a frame, storing polls %d a second", d / f, e / f, i / secs }')
  # Evaluations can be more than frames (a tick evaluates when no frame did for a second).
  local evals; evals=$(python3 - "$W/cg.$name.out".*1-01 <<'PY'
import re, sys
names, cur, n = {}, None, 0
for l in open(sys.argv[1]):
    # a name is given once, at its first fn= or cfn=, then only its number
    m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", l.rstrip("\n"))
    if m:
        if m[3]: names[m[2]] = m[3]
        if m[1] == "cfn": cur = names.get(m[2])
    elif l.startswith("calls=") and cur and cur.endswith("rocetop::app::App::eval_alerts"):
        n += int(l[6:].split()[0])
print(n)
PY
)
  parts="$parts; $evals evaluations"
  echo "$name: main thread: $parts" | tee -a "$W/callgrind" >&2
  # Under callgrind a frame takes long enough that fewer than one a second are drawn (fewer under
  # load): compare runs by the instructions a frame and an evaluation, at like frame counts (a
  # frame after a longer gap recomputes more of the kept timeline).
  echo "$name: main thread $((main / SECS)), others $(((all - main) / SECS)), all $((all / SECS)) instructions a second over ${SECS}s; $frames frames, main thread $((main / (frames > 0 ? frames : 1))) a frame" | tee -a "$W/callgrind" >&2
}

# run_tui [NAME CONFIG]
run_tui() {
  local name=${1:-tui} cfg=${2:-$W/c.toml}
  local out="$W/tui.out" t0 t1 pid
  : >"$out"
  t0=$(date +%s%N)
  tmux -L "$SOCK" new-session -d -s tui -x 120 -y 40 "exec $BIN --config $cfg"
  tmux -L "$SOCK" pipe-pane -o -t tui "cat >>'$out'"
  pid=$(tmux -L "$SOCK" display -p -t tui '#{pane_pid}')
  local first=-
  for _ in $(seq 600); do
    if tmux -L "$SOCK" capture-pane -p -t tui | grep -qE "sources ([0-9]+): \1 up"; then
      t1=$(date +%s%N); first=$(((t1 - t0) / 1000000)); break
    fi
    sleep 0.05
  done
  echo "$first" >"$W/first_screen"
  sleep 2
  local b0; b0=$(stat -c %s "$out")
  remote_start
  read -r cpu _ < <(meter "$SECS" "$pid")
  remote_end
  local b1; b1=$(stat -c %s "$out")
  # Frames drawn in the window: every frame is one synchronized update (tui.rs), ESC [?2026h.
  local frames; frames=$(tail -c +"$((b0 + 1))" "$out" | head -c "$((b1 - b0))" | grep -ao $'\e\\[?2026h' | wc -l)
  local rss; rss=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
  tmux -L "$SOCK" capture-pane -p -t tui >"$W/tui.screen"
  cp "$W/tui.screen" "${TUI_SCREEN_OUT:-/tmp/rocetop-perf.tui.screen}"
  tmux -L "$SOCK" send-keys -t tui q
  sleep 0.5
  tmux -L "$SOCK" kill-session -t tui 2>/dev/null || true
  log "$name: first full screen after ${first} ms, $frames frames in ${SECS} s"
  log "$name: status at the end: $(grep -oE 'sources [0-9]+: .{0,60}' "$W/tui.screen" | head -1)"
  row "$name" "$cpu" "$rss" - - "$((SECS / INTERVAL))" "$rcpu" $(((b1 - b0) / SECS)) "$frames"
}

# baseline MODE [ssh options]: watch.sh in a tmux-less shell, output to /dev/null
run_baseline() {
  local name=$1; shift
  : >"$W/rounds.$name"
  remote_start
  read -r cpu rss < <(meter "$SECS" ${MASTERS:-} -- env PERIOD="$INTERVAL" bash bench/perf/watch.sh "$SECS" "$W/targets" "$W/rounds.$name" "${SSH[@]}" "$@")
  remote_end
  row "$name" "$cpu" "$rss" "$(pct "$W/rounds.$name" 0.5)" "$(pct "$W/rounds.$name" 0.99)" \
    "$(wc -l <"$W/rounds.$name")" "$rcpu" 0
}

run_cm() {
  local seen="" masters=""
  while IFS=$'\t' read -r port _; do
    case " $seen " in *" $port "*) continue ;; esac
    seen+=" $port"
    ssh "${SSH[@]}" -o ControlMaster=yes -o ControlPersist=yes -o ControlPath="$W/cm/$port" -p "$port" -fN 127.0.0.1
    masters+=" $(ssh -o ControlPath="$W/cm/$port" -O check x 2>&1 | grep -o 'pid=[0-9]*' | cut -d= -f2)"
  done <"$W/targets"
  MASTERS=$masters run_baseline cm -o ControlPath="$W/cm/%p" -o ControlMaster=no
}

log "N=$N nodes on $SSHDS sshd + 1 switch, every ${INTERVAL}s, ${SECS}s per case, cases: $MODES; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "$BASE" ] || log "base: $BASE; new: $NEW_BIN"
for m in $MODES; do
  # With ROCETOP_BASE, each rocetop case runs twice in a row, base first, on the same fabric.
  bins=("")
  case $m in export | stream | tui | tuistream | callgrind | tuicallgrind | render) [ -z "$BASE" ] || bins=(base: "") ;; esac
  for b in "${bins[@]}"; do
    if [ "$b" = base: ]; then BIN=$BASE; else BIN=$NEW_BIN; fi
    log "running $b$m"
    case $m in
      export) run_export "${b}export" ;;
      stream) run_export "${b}stream" "$W/c-stream.toml" ;;
      tui) run_tui "${b}tui" ;;
      tuistream) run_tui "${b}tuistream" "$W/c-stream.toml" ;;
      watch) run_baseline watch ;;
      cm) run_cm ;;
      profile) run_profile ;;
      callgrind) run_callgrind "${b}callgrind" ;;
      tuicallgrind) run_tuicallgrind "${b}tuicallgrind" ;;
      prefill)
        # 15 minutes of history for N nodes, filled without waiting (examples/store_memory.rs)
        ex=$(dirname "$BIN")/examples/store_memory
        [ -x "$ex" ] || { log "no $ex: cargo build --release --example store_memory"; continue; }
        "$ex" "$N" "${MINUTES:-15}" | tee "$W/prefill" >&2 ;;
      render)
        # one frame at 120x40 with 8 and 512 demo nodes and a 64-switch fabric (examples/render_time.rs, release): the
        # example built beside the binary (cargo build --release --example render_time), else
        # built now from this tree (not for the base: its tree is not here)
        ex=$(dirname "$BIN")/examples/render_time
        if [ -x "$ex" ]; then
          "$ex" | grep '^render' | sed "s/^/$b/" | tee -a "$W/render" >&2
        elif [ -z "$b" ]; then
          cargo run --release --quiet --example render_time 2>/dev/null | grep '^render' | tee -a "$W/render" >&2
        else
          log "no $ex: the base's frame is not measured"
        fi ;;
    esac
  done
done
BIN=$NEW_BIN

# --- the table -----------------------------------------------------------------------------------
echo
echo "N=$N nodes + 1 NX-OS switch, every ${INTERVAL}s, ${SECS}s per case; $(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -s "$RESULTS" ] && awk -v secs="$SECS" -v n="$N" -v interval="$INTERVAL" '
  { name[NR] = $1; cpu[NR] = $2 * 60 / secs; rss[NR] = $3 / 1024; p50[NR] = $4; p99[NR] = $5
    rounds[NR] = $6; per[NR] = $6 > 0 ? $2 * 1000 / $6 : 0; split($7, rc, ":")
    rcpu[NR] = rc[1] * 60 / secs; node[NR] = rc[2] * 100 / secs / n; tb[NR] = $8
    fps[NR] = $9 != "" ? sprintf("%.2f", $9 / secs) : "-"
    if ($1 == "watch") base = per[NR]; if ($1 == "cm") cm = per[NR] }
  END {
    printf "| %-14s | %9s | %12s | %8s | %8s | %9s | %15s | %7s | %9s | %10s | %8s | %8s |\n", "case", "CPU s/min", "CPU/refresh", "x watch", "x cm", "peak RSS", "refresh p50/p99", "rounds", "sshd s/min", "node %core", "term B/s", "frames/s"
    printf "|----------------|----------:|-------------:|---------:|---------:|----------:|----------------:|--------:|-----------:|-----------:|---------:|---------:|\n"
    for (i = 1; i <= NR; i++) {
      r = (base > 0 && per[i] > 0) ? sprintf("%.0f", base / per[i]) : "-"
      c = (cm > 0 && per[i] > 0) ? sprintf("%.1f", cm / per[i]) : "-"
      printf "| %-14s | %9.2f | %9.1f ms | %8s | %8s | %5.1f MiB | %6s/%6s ms | %3d/%-3d | %10.2f | %10.2f | %8s | %8s |\n", name[i], cpu[i], per[i], r, c, rss[i], p50[i], p99[i], rounds[i], secs / interval, rcpu[i], node[i], (name[i] ~ /tui/ ? tb[i] : "-"), fps[i]
    }
  }' "$RESULTS"
if [ -s "$W/wire" ]; then
  echo
  echo "On the wire (ss -ti of rocetop's TCP connections: what sshd sent, SSH framing and MAC included):"
  echo "| case           | node B/s each | segs/s each | switch B/s | segs/s |"
  echo "|----------------|-------------:|-----------:|-------------:|-----------:|"
  cat "$W/wire"
fi
[ -s "$W/memprobe" ] && { echo; cat "$W/memprobe"; }
[ -s "$W/callgrind" ] && { echo; echo "callgrind (instructions of rocetop, stream):"; cat "$W/callgrind"; }
[ -f "$W/first_screen" ] && echo "TUI: first full screen (every source up) after $(cat "$W/first_screen") ms"

# --- the budgets -----------------------------------------------------------------------------------
# This run's budget figures (see the header), "KEY<TAB>VALUE<TAB>NOTE"; base: rows give base: keys.
awk -v secs="$SECS" -v n="$N" -v interval="$INTERVAL" -v OFS='\t' '
  { pre = ""; name = $1; if (sub(/^base:/, "", name)) pre = "base:"
    cpu = $2 * 100 / secs; split($7, rc, ":"); at = interval == 1 ? "" : "at " interval " s a refresh, not 1 Hz"
    if (n == 8 && name == "stream") { print pre "export8", cpu, at; print pre "node", rc[2] * 100 / secs / n, at }
    if (n == 8 && name == "tuistream") print pre "tui8", cpu, at
    if (n >= 512 && name == "tuistream") {
      print pre "tui512", cpu, (interval == 1 ? "" : "at " interval " s a refresh (bench/two_intervals.sh gives 1 Hz)")
      print pre "rss512", $3 / 1024, (secs >= 900 ? "" : "a " secs " s case: not 15 minutes of history (SECS=900)")
    } }' "$RESULTS" >"$W/figures"
# The frame: the slowest tab at 512 nodes, after new data.
[ -s "$W/render" ] && python3 - "$W/render" >>"$W/figures" <<'PY'
import re, sys
unit = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
worst = {}
for l in open(sys.argv[1]):
    m = re.match(r"(base:)?render 512 nodes, (\S+)\s+120x40:.*?([\d.]+)(ns|µs|us|ms|s) after new data", l)
    if m:
        pre, tab, ms = m[1] or "", m[2], float(m[3]) * unit[m[4]]
        if ms > worst.get(pre, ("", -1))[1]:
            worst[pre] = (tab, ms)
for pre, (tab, ms) in worst.items():
    print(f"{pre}frame512\t{ms:.3f}\tslowest tab: {tab}")
PY
[ -z "${BUDGET_FIGURES:-}" ] || cat "$W/figures" >>"$BUDGET_FIGURES"
[ "${BUDGET_SUMMARY:-1}" = 0 ] || budget_summary "$W/figures"
exit 0
