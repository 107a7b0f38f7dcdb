#!/usr/bin/env bash
# Capture one second of the simulated fabric of bench/perf.sh (bench/perf/fabric.py) as the raw
# outputs rocetop's collectors receive, for examples/poll_cpu.rs (parsers + store, no network):
#
#   bench/perf/capture.sh OUT [N=8]
#
# OUT/node<i>.hw       the sysfs dump of node i (the same `grep -rs .` command rocetop sends)
# OUT/node<i>.ethtool  `echo ethtool -S enp<i>s0; ethtool -S enp<i>s0` (751 mlx5 counters + PFC)
# OUT/sw.{queuing,pfc,flowcontrol}   the NX-OS switch's three `show` outputs (32 edge ports)
# OUT/fabric           the simulated sysfs trees (node<i>.hw names paths under it)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${1:?usage: capture.sh OUT [N]}
N=${2:-8}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
F="$OUT/fabric"
rm -rf "$F"
python3 bench/perf/fabric.py "$F" "$N" & pid=$!
for _ in $(seq 100); do [ -f "$F/ready" ] && break; sleep 0.1; done
# Stop it after its first full tick so the files stay as they are.
kill "$pid"; wait "$pid" 2>/dev/null || true
[ -f "$F/ready" ] || { echo "fabric.py did not start" >&2; exit 1; }
for i in $(seq "$N"); do
  sys="$F/n$i/sys"
  ib="$sys/class/infiniband/rocep11s0/ports/*"
  LC_ALL=C grep -rs . $ib/hw_counters $ib/counters $ib/state $ib/gid_attrs/ndevs "$sys/class/net/enp${i}s0/statistics" >"$OUT/node$i.hw" || true
  (export FABRIC=$F PATH=$ROOT/bench/perf/bin:$PATH; echo "ethtool -S enp${i}s0"; LC_ALL=C ethtool -S "enp${i}s0") >"$OUT/node$i.ethtool"
done
cp "$F/switch/queuing.txt" "$OUT/sw.queuing"
cp "$F/switch/pfc.txt" "$OUT/sw.pfc"
cp "$F/switch/flowcontrol.txt" "$OUT/sw.flowcontrol"
wc -c "$OUT"/node1.* "$OUT"/sw.* | sed 's/^/capture: /' >&2
