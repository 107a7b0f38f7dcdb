#!/usr/bin/env bash
# Fuzz every parser kind, the recording reader and the config loader with cargo-fuzz (libFuzzer),
# SECS seconds each (default 60). The growing corpus lives in fuzz/corpus/<target> (not in git);
# the seeds in fuzz/seeds/<target> (in git) start it. Crashes land in fuzz/artifacts/<target>.
#
#   scripts/fuzz.sh                 # every target, 60 s each
#   SECS=600 scripts/fuzz.sh parse_ethtool parse_nxos_queuing
#
# cargo-fuzz needs `cargo install cargo-fuzz` and nightly features: a nightly toolchain if rustup has
# one, else the stable one with RUSTC_BOOTSTRAP=1 (FUZZ_TOOLCHAIN picks one explicitly).
# Without sanitizers (--sanitizer none) the build is quicker and the parsers are safe Rust anyway:
# what we look for is panics, hangs and memory blow-ups. A summary line per target is printed:
# "target: N execs, C crashes".
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
SECS=${SECS:-60}
if [ -z "${FUZZ_TOOLCHAIN:-}" ] && cargo +nightly --version >/dev/null 2>&1; then
    FUZZ_TOOLCHAIN=nightly
fi
TOOLCHAIN=${FUZZ_TOOLCHAIN:-stable}
[ "$TOOLCHAIN" = nightly ] || export RUSTC_BOOTSTRAP=1
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-$PWD/target}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +"$TOOLCHAIN" fuzz list)
fi
cargo +"$TOOLCHAIN" fuzz build --sanitizer none -O >/dev/null
mkdir -p logs
status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "seeds/$t" "artifacts/$t"
    log="logs/$t.log"
    # -rss_limit_mb: a parser that balloons on some input is a finding too.
    # The binary built above, run directly: `cargo fuzz run` would rebuild whenever src/ changed.
    if ! "$CARGO_TARGET_DIR/$(rustc +"$TOOLCHAIN" -vV | sed -n 's/^host: //p')/release/$t" \
        -artifact_prefix="artifacts/$t/" "corpus/$t" "seeds/$t" \
        -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
        -print_final_stats=1 >"$log" 2>&1; then
        status=1
    fi
    execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo '?')
    crashes=$(find "artifacts/$t" -type f | wc -l)
    echo "$t: $execs execs, $crashes crashes$( [ "$crashes" -gt 0 ] && echo " (see fuzz/artifacts/$t, log $log)")"
done
exit $status
