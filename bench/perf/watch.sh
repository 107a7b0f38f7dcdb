#!/usr/bin/env bash
# The `watch` baseline of bench/perf.sh: every second (PERIOD seconds), one `ssh` per line of TARGETS (a node's
# sysfs dump + `ethtool -S`, or one switch `show` command), all in parallel, as four `watch -n1 ssh ...`
# terminals would; a round that takes longer than a second delays the next (no overlap).
#   watch.sh SECS TARGETS ROUNDS_OUT [ssh option...]
# TARGETS: lines `PORT<TAB>COMMAND`. ROUNDS_OUT gets one line per round: its duration in ms.
set -u
secs=$1 targets=$2 rounds=$3
shift 3
mapfile -t lines <"$targets"
start=$(date +%s%N)
end=$((start + secs * 1000000000))
next=$start
while :; do
  now=$(date +%s%N)
  [ "$now" -ge "$end" ] && break
  t0=$now
  for l in "${lines[@]}"; do
    ssh "$@" -p "${l%%$'\t'*}" 127.0.0.1 "${l#*$'\t'}" >/dev/null 2>&1 &
  done
  wait
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000000)) >>"$rounds"
  next=$((next + ${PERIOD:-1} * 1000000000))
  [ "$next" -lt "$t1" ] && next=$t1
  d=$((next - t1))
  [ "$d" -gt 0 ] && sleep "$(printf '%d.%09d' $((d / 1000000000)) $((d % 1000000000)))"
done
