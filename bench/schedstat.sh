#!/usr/bin/env bash
# CPU a second per thread of rocetop (main thread, tokio workers, others), from
# /proc/PID/task/*/schedstat (nanoseconds on a CPU: load on the box does not inflate them as it
# inflates wall-clock times).
#
#   W=$(bench/schedstat.sh wrap path/to/rocetop OUTDIR LABEL)   # prints a wrapper binary's path
#   ROCETOP_BIN=$W ROCETOP_BASE=$(bench/schedstat.sh wrap old/rocetop OUTDIR base) \
#     MODES="stream tuistream" SECS=30 bench/perf.sh
#   bench/schedstat.sh report OUTDIR                            # a table, one row per run
#
# The wrapper starts a detached sampler (reparented away from rocetop, so perf.sh's process-tree
# meter does not count it) and execs the real binary with the same pid. The sampler snapshots
# every thread's schedstat and comm once a second until the process ends. `report` takes the
# window from WARM seconds (default 8: every source up, perf.sh's own 2 s settle) after the first
# snapshot to TAIL seconds (default 2: the quit) before the last, and prints ms on a CPU per
# second of that window for: the main thread (comm "rocetop"), tokio workers ("tokio-rt-worker"),
# the rest, and the whole process; mode is "export" or "tui" from rocetop's arguments.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)

case ${1:-} in
wrap)
  real=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  out=$(mkdir -p "$3" && cd "$3" && pwd)
  label=$4
  mkdir -p "$out/bin.$label"
  # perf.sh runs examples next to the binary only in modes this is not for; the name stays rocetop
  cat >"$out/bin.$label/rocetop" <<EOF
#!/usr/bin/env bash
exec env SCHEDSTAT_REAL='$real' SCHEDSTAT_OUT='$out' SCHEDSTAT_LABEL='$label' '$HERE/schedstat.sh' run "\$@"
EOF
  chmod +x "$out/bin.$label/rocetop"
  echo "$out/bin.$label/rocetop"
  ;;
run)
  shift
  mode=tui
  [ "${1:-}" = export ] && mode=export
  log="$SCHEDSTAT_OUT/$SCHEDSTAT_LABEL.$mode.$(date +%s%N).$$.log"
  # double fork: the sampler's parent exits at once, so it is not rocetop's child
  (setsid python3 "$HERE/schedstat.py" sample "$$" "$log" </dev/null >/dev/null 2>&1 &)
  exec "$SCHEDSTAT_REAL" "$@"
  ;;
report)
  python3 "$HERE/schedstat.py" report "$2"
  ;;
*)
  sed -n '2,17p' "$0" >&2
  exit 2
  ;;
esac
