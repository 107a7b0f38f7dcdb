#!/usr/bin/env bash
# Where a running rocetop's memory is: memprobe.sh PID [STDERR_FILE]
# Prints RSS split (smaps_rollup), threads, the glibc heaps (main heap and each arena's 64 MiB
# reservation, from /proc/PID/maps) and, when gdb is installed, glibc's malloc_stats() per arena
# (written to the process's stderr; STDERR_FILE is where that goes, its new lines are printed).
# Reads only; the process is stopped for the moment gdb is attached.
set -uo pipefail
pid=$1 errf=${2:-}
echo "memprobe: pid $pid"
grep -E '^(Rss|Pss_Anon|Pss_File|Anonymous|Locked):' "/proc/$pid/smaps_rollup" | tr -s ' ' | sed 's/^/  /'
grep -E '^(Threads|VmHWM|VmRSS|VmLck):' "/proc/$pid/status" | tr -s ' \t' ' ' | sed 's/^/  /'
# Arenas other than the main one live in 64 MiB-aligned reservations: an rw part (what was used)
# followed by a ---p rest; count the rw parts that start on a 64 MiB boundary.
python3 - "$pid" <<'PY'
import sys
heap, n, kb = 0, 0, 0
for l in open(f"/proc/{sys.argv[1]}/maps"):
    f = l.split()
    a, b = (int(x, 16) for x in f[0].split("-"))
    if len(f) > 5 and f[5] == "[heap]":
        heap = (b - a) // 1024
    elif len(f) == 5 and f[1] == "rw-p" and a % (64 << 20) == 0 and b - a <= 64 << 20:
        n, kb = n + 1, kb + (b - a) // 1024
print(f"  main heap {heap} KiB mapped; {n} arena heaps, {kb} KiB mapped rw")
PY
# Per mapping kind: the anonymous RSS of the largest mappings
awk '/^[0-9a-f]+-/ { name = $6 == "" ? "anon" : $6 } /^Rss:/ { r[name] += $2 } END { for (k in r) if (r[k] > 1024) printf "  rss %-40s %8d KiB\n", k, r[k] }' "/proc/$pid/smaps" | sort -k3 -nr | head -8
if command -v gdb >/dev/null && [ -n "$errf" ]; then
  before=$(wc -l <"$errf")
  gdb -q -batch -p "$pid" -ex 'call (void) malloc_stats()' >/dev/null 2>&1
  sleep 0.2
  tail -n +"$((before + 1))" "$errf" | grep -E 'Arena|system bytes|in use bytes|max mmap' |
    awk '/^Arena/ { a = $0; next } /system bytes/ { s = $NF } /in use bytes/ { printf "  %-10s system %9d  in use %9d\n", (a == "" ? "Total:" : a), s, $NF; a = "" } /max mmap/ { print "  " $0 }'
fi
# MEMPROBE_TRIM=1: then glibc's malloc_trim(0) in the process, and the RSS after it (what free
# pages inside the heaps held)
if command -v gdb >/dev/null && [ -n "${MEMPROBE_TRIM:-}" ]; then
  gdb -q -batch -p "$pid" -ex 'call (int) malloc_trim(0)' >/dev/null 2>&1
  grep -E '^Rss:' "/proc/$pid/smaps_rollup" | tr -s ' ' | sed 's/^/  after malloc_trim(0): /'
fi
