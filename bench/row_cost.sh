#!/usr/bin/env bash
# Cost per row of a big switch answer: a 13.6 MB NX-API PFC reply
# (125k ports) and the same ports as an NX-OS text table, through `rocetop parse nxos-pfc`
# (--format prom and json: peak RSS from GNU time) and through examples/row_cost.rs (exact heap
# bytes from a counting allocator: parse, the store holding the series, each render).
# Before and after run side by side: BASE_BIN / BASE_EX are binaries built from the commit before
# (default /work/tgt/hostile/baseline-{rocetop,row_cost}); NEW_BIN / NEW_EX from this tree.
#
#   bench/row_cost.sh [ROWS=125000]    results: $OUT, default bench/results/row_cost-<date>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-125000}
T=${CARGO_TARGET_DIR:-target}
BASE_BIN=${BASE_BIN:-/work/tgt/hostile/baseline-rocetop}
BASE_EX=${BASE_EX:-/work/tgt/hostile/baseline-row_cost}
NEW_BIN=${NEW_BIN:-$T/release/rocetop}
NEW_EX=${NEW_EX:-$T/release/examples/row_cost}
OUT=${OUT:-bench/results/row_cost-$(date -u +%Y%m%d).txt}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT

"$NEW_EX" gen text "$ROWS" >"$W/pfc.txt"
"$NEW_EX" gen json "$ROWS" >"$W/pfc.json"
"$NEW_EX" gen text 1 >"$W/one.txt"
"$NEW_EX" gen json 1 >"$W/one.json"

rss() { # BIN FILE FORMAT -> peak RSS in KiB
    /usr/bin/time -f %M -o "$W/rss" "$1" parse nxos-pfc "$2" --format "$3" --name sw >/dev/null
    cat "$W/rss"
}

{
    echo "# bench/row_cost.sh $ROWS rows, $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# input: text $(stat -c %s "$W/pfc.txt") B, json $(stat -c %s "$W/pfc.json") B"
    echo "# peak RSS of 'rocetop parse nxos-pfc FILE --format F' in KiB; per row = (peak - peak of a 1-row input) / rows"
    for which in base new; do
        if [ $which = base ]; then B=$BASE_BIN; else B=$NEW_BIN; fi
        for input in txt json; do
            for f in prom json; do
                one=$(rss "$B" "$W/one.$input" $f)
                big=$(rss "$B" "$W/pfc.$input" $f)
                echo "rss $which $input $f peak_kib=$big base_kib=$one per_row_b=$(( (big - one) * 1024 / ROWS ))"
            done
        done
    done
    echo "# heap bytes (counting allocator, examples/row_cost.rs): peaks above the input held"
    for which in base new; do
        if [ $which = base ]; then E=$BASE_EX; else E=$NEW_EX; fi
        for input in txt json; do
            echo "heap $which $input $("$E" measure "$W/pfc.$input" 2>"$W/per")"
            echo "#    $(cat "$W/per")"
        done
    done
} | tee "$OUT"
