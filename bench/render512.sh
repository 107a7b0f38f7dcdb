#!/usr/bin/env bash
# Frame time before/after side by side: runs examples/render_time.rs as built from two commits
# (BASE, the binary of the commit before a change, and NEW, this tree's), alternately ROUNDS
# times, on the same machine in one go, so load from elsewhere hits both alike.
#
#   cargo build --release --example render_time      # NEW (this tree)
#   BASE=path/to/render_time-of-the-old-commit bench/render512.sh
#
# On a box whose thread CPU time advances by scheduler ticks (4 ms here), one figure (the mean of
# 5 frames) moves in 0.8 ms steps: take ROUNDS=9 or more and read the medians.
#
# Prints every run's lines prefixed with its binary's label, then the median per line of each
# (tab, nodes) over the rounds. Writes nothing else; redirect to bench/results/ to keep it.
set -euo pipefail
cd "$(dirname "$0")/.."
NEW=${NEW:-${CARGO_TARGET_DIR:-target}/release/examples/render_time}
BASE=${BASE:?set BASE to the render_time binary of the commit to compare against}
ROUNDS=${ROUNDS:-3}
OUT=$(mktemp -d /tmp/render512.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
echo "render_time, 120x40: before = $BASE, after = $NEW; $ROUNDS rounds alternating;" \
  "$(nproc) x $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
  "$BASE" >"$OUT/before.$r"
  "$NEW" >"$OUT/after.$r"
done
# Median "after new data" and "per frame" per (nodes, tab), before and after.
python3 - "$OUT" "$ROUNDS" <<'PY'
import re, sys, statistics, os
out, rounds = sys.argv[1], int(sys.argv[2])
unit = {"ns": 1e-6, "µs": 1e-3, "us": 1e-3, "ms": 1.0, "s": 1e3}
def ms(s):
    m = re.match(r"([\d.]+)(ns|µs|us|ms|s)$", s.strip())
    return float(m.group(1)) * unit[m.group(2)]
pat = re.compile(r"render (\d+) nodes, (\S+)\s+120x40:\s+(\S+) per frame,\s+(\S+) after new data; App::update\s+(\S+) per poll")
res = {}
for side in ("before", "after"):
    for r in range(1, rounds + 1):
        for line in open(os.path.join(out, f"{side}.{r}")):
            m = pat.search(line)
            if m:
                k = (int(m.group(1)), m.group(2))
                res.setdefault(k, {}).setdefault(side, []).append((ms(m.group(3)), ms(m.group(4)), ms(m.group(5))))
print(f"| nodes | tab | redraw before | redraw after | after new data before | after new data after | App::update/poll before | after |")
print("|--:|---|--:|--:|--:|--:|--:|--:|")
for k in sorted(res):
    b, a = res[k].get("before", []), res[k].get("after", [])
    med = lambda v, i: statistics.median(x[i] for x in v) if v else float("nan")
    print(f"| {k[0]} | {k[1]} | {med(b,0):.2f} ms | {med(a,0):.2f} ms | {med(b,1):.2f} ms | {med(a,1):.2f} ms | {med(b,2):.3f} ms | {med(a,2):.3f} ms |")
PY
