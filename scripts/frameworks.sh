#!/usr/bin/env bash
# Real training frameworks as clients of rocetop's log follower: a few CPU steps of
# the real Hugging Face Trainer and of real torch.distributed DDP over Gloo (2 processes under
# torchrun), writing the logs those libraries print, and their own record of what they did.
#
#   scripts/frameworks.sh install       create (or reuse) the pinned venv; prints its path
#   scripts/frameworks.sh run OUTDIR    install if needed, then train both; writes in OUTDIR:
#       hf_trainer.log          the Trainer's stdout+stderr (tqdm bars with CR, the log dicts)
#       trainer_state.json      the Trainer's own record (log_history: step, loss, ...)
#       ddp.log                 torchrun's console: `[default0]:iter N: loss X, time Yms` lines
#       ddp_truth_rank{0,1}.json each rank's own record of every step's loss and duration
#
# tests/e2e/frameworks_real.rs runs `run` while rocetop's follower tails both logs, and
# scripts/test.sh runs `install` first. ROCETOP_FRAMEWORKS=0 skips both.
#
# Versions: scripts/frameworks/requirements.txt (torch 2.15.0, transformers 5.23.0, accelerate
# 1.15.0, every dependency pinned, installed with --no-deps). The venv lives in
# ${ROCETOP_FRAMEWORKS_CACHE:-$HOME/.cache/rocetop/frameworks-<hash of the pins and python>}.
#
# Cost, measured on the 2-core development machine (shared, busy), Python 3.11, PyPI only:
#   torch's PyPI wheel for Linux x86_64 is its CUDA build (514 MiB), and `import torch` needs the
#   CUDA libraries it links; download.pytorch.org (where the CPU-only wheel lives) is not
#   reachable here. `pip install --no-deps torch` plus its pure-Python deps does not import
#   ("libcudart.so.13: cannot open shared object file"). torch's full dependency set is 2,861 MiB
#   of wheels (triton, cusolver, cuda-bindings, ... included); the libraries it links at load time
#   and no more (requirements.txt) make 2,349 MiB; with transformers, accelerate and their
#   pure-Python deps the 51 pinned wheels are 2,403 MiB.
#   First `install`: 142 s alone, 218 s beside a cargo build; 4.3 GB on disk.
#   Cached `install`: about 1.5 s (hashing the pins, finding the venv's marker file).
#   `run`: 37-49 s (the Trainer's 16 steps ~20-30 s, most of it importing torch and transformers;
#   DDP's 2 x 20 iterations ~15-18 s, most of it torchrun and its 2 processes starting).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
req="$here/frameworks/requirements.txt"
py=${ROCETOP_FRAMEWORKS_PYTHON:-python3}

say() { echo "frameworks.sh: $*" >&2; }

# Exit codes the test reads: 3 = no python3 with venv (scripts/test.sh installs it),
# 4 = cannot be installed here (Python older than torch 2.15 supports, PyPI unreachable, no
# wheel for this platform).
venv_path() {
  if [ -n "${ROCETOP_FRAMEWORKS_CACHE:-}" ]; then
    echo "$ROCETOP_FRAMEWORKS_CACHE"
    return
  fi
  local id
  id=$({ cat "$req"; "$py" -c 'import sys; print(sys.version, sys.platform)'; } | sha256sum | cut -c1-16)
  echo "$HOME/.cache/rocetop/frameworks-$id"
}

install() {
  if ! command -v "$py" >/dev/null 2>&1; then
    say "no $py"
    return 3
  fi
  if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    say "$("$py" -V 2>&1) is older than torch 2.15 supports (3.11)"
    return 4
  fi
  if ! "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    say "$py has no venv/ensurepip (Debian: python3-venv)"
    return 3
  fi
  local venv
  venv=$(venv_path)
  mkdir -p "$(dirname "$venv")"
  # One installer at a time (scripts/test.sh and a test run side by side).
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$venv.lock"
    flock 9
  fi
  if [ -f "$venv/.complete" ]; then
    echo "$venv"
    return 0
  fi
  say "installing the pinned frameworks into $venv (first run: ~2.4 GB from PyPI)"
  local t0=$SECONDS
  rm -rf "$venv"
  if ! "$py" -m venv "$venv"; then
    say "could not create a venv with $py"
    return 3
  fi
  # --no-deps: the pins list every package; pip must not pull the CUDA packages torch declares.
  # Few retries and a short timeout: without PyPI this should fail in about a minute, not ten.
  if ! "$venv/bin/python" -m pip install --no-cache-dir --no-deps --disable-pip-version-check \
    --retries 2 --timeout 30 --progress-bar off -q -r "$req"; then
    say "pip install failed (is PyPI reachable?)"
    rm -rf "$venv"
    return 4
  fi
  if ! "$venv/bin/python" -c 'import torch, transformers, accelerate, torch.distributed as d
assert d.is_gloo_available()'; then
    say "the installed frameworks do not import"
    rm -rf "$venv"
    return 4
  fi
  touch "$venv/.complete"
  say "installed in $((SECONDS - t0)) s, $(du -sh "$venv" | cut -f1) on disk"
  echo "$venv"
}

# A run that fails says which and shows the end of its log, where the error is.
failed() {
  local rc=$? what=$1 log=$2
  say "$what failed (exit $rc); the end of $log:"
  tail -n 40 "$log" >&2
  exit 1
}

run() {
  local out=$1 venv
  venv=$(install)
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  # The model is built from a config: nothing is fetched from the Hub, and nothing may try.
  export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 TOKENIZERS_PARALLELISM=false
  # Gloo and torchrun's rendezvous stay on the loopback interface.
  export GLOO_SOCKET_IFNAME=lo MASTER_ADDR=127.0.0.1
  local t0=$SECONDS
  "$venv/bin/python" "$here/frameworks/hf_trainer.py" "$out" >"$out/hf_trainer.log" 2>&1 ||
    failed "Hugging Face Trainer" "$out/hf_trainer.log"
  say "Hugging Face Trainer: $((SECONDS - t0)) s"
  t0=$SECONDS
  # torchrun, as `python -m`: --tee 3 prefixes each rank's lines with `[default<local rank>]:`.
  "$venv/bin/python" -m torch.distributed.run --standalone --nproc_per_node=2 --tee 3 \
    --log-dir "$out/torchrun" "$here/frameworks/ddp_gloo.py" "$out" >"$out/ddp.log" 2>&1 ||
    failed "DDP over Gloo" "$out/ddp.log"
  say "DDP over Gloo, 2 processes: $((SECONDS - t0)) s"
}

if [ "${ROCETOP_FRAMEWORKS:-1}" = 0 ]; then
  say "ROCETOP_FRAMEWORKS=0: skipped"
  exit 0
fi
case "${1:-}" in
  install) install ;;
  run) run "${2:?usage: frameworks.sh run OUTDIR}" ;;
  *)
    echo "usage: scripts/frameworks.sh install | run OUTDIR" >&2
    exit 2
    ;;
esac
