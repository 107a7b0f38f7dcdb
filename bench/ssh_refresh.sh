#!/usr/bin/env bash
# CPU and wall time per refresh of 8 hosts, side by side in one run, on loopback sshd:
#   (a) rocetop's SSH transport (one russh connection per host, an exec channel per command)
#   (b) `ssh host cmd` per host per refresh (the `watch` way)
#   (c) OpenSSH ControlMaster (one master per host, an `ssh` mux client per command)
# Client-side CPU only (user+sys of the client processes). Usage: bench/ssh_refresh.sh [POLLS]
# Only 127.0.0.1 is contacted; every process started here is ended by its pid.
set -eu -o pipefail
POLLS=${1:-50}
HOSTS=8
CMD='LC_ALL=C grep -rs . /sys/class/net/lo/statistics'
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
W=$(mktemp -d /tmp/rocetop-bench.XXXXXX)
PIDS=()
cleanup() {
  for h in $(seq $HOSTS); do
    [ -S "$W/cm$h" ] && ssh -o ControlPath="$W/cm$h" -O exit x >/dev/null 2>&1 || true
  done
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  for f in "$W"/*/sshd.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
  rm -rf "$W"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

mkdir -p /run/sshd
chmod 755 "$W"  # sshd reads authorized_keys as the login user
ssh-keygen -q -t ed25519 -N "" -f "$W/id"
PORTS=()
for h in $(seq $HOSTS); do
  d="$W/h$h"; mkdir -p "$d"; port=$(free_port)
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
MaxStartups 600:30:1000
MaxSessions 20
PermitRootLogin yes
# no ~/.bashrc in sessions (bash skips it at SHLVL>=2): the login user's rc is not what we measure
SetEnv SHLVL=1
CFG
  /usr/sbin/sshd -f "$d/sshd_config" -E "$d/log"
  for _ in $(seq 50); do [ -f "$d/sshd.pid" ] && break; sleep 0.1; done
  echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$d/hostkey.pub")" >>"$W/known_hosts"
  PORTS+=("$port")
done
# The login shell's startup files run for every exec on every approach (root's ~/.bashrc here
# runs `pyenv init`, ~250 ms): log in as a user with a plain /bin/sh so the client is measured.
USER_NAME=${BENCH_USER:-$(id -un)}
if [ -z "${BENCH_USER:-}" ] && [ "$(id -u)" = 0 ]; then
  id rocetoptest >/dev/null 2>&1 || useradd -M -s /bin/sh rocetoptest
  USER_NAME=rocetoptest
fi
SSH=(ssh -q -i "$W/id" -o UserKnownHostsFile="$W/known_hosts" -o StrictHostKeyChecking=yes
     -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -l "$USER_NAME")

echo "building examples/ssh_poll (release)..." >&2
cargo build -q --release --example ssh_poll --manifest-path "$ROOT/Cargo.toml"
POLL="$CARGO_TARGET_DIR/release/examples/ssh_poll"

TIMEFORMAT='%R %U %S'
# measure NAME CMD...: wall and client CPU of the whole loop (children included), per refresh
measure() {
  local name=$1; shift
  local t; t=$( { time "$@" >/dev/null; } 2>&1 | tail -1 )
  read -r real user sys <<<"$t"
  awk -v n="$name" -v r="$real" -v u="$user" -v s="$sys" -v p="$POLLS" \
    'BEGIN { printf "%-28s wall %8.2f ms/refresh   cpu %8.2f ms/refresh\n", n, r*1000/p, (u+s)*1000/p }'
}

watch_way() {
  for _ in $(seq "$POLLS"); do
    for p in "${PORTS[@]}"; do "${SSH[@]}" -p "$p" 127.0.0.1 "$CMD" & done
    wait
  done
}

controlmaster() {
  for _ in $(seq "$POLLS"); do
    local h=0
    for p in "${PORTS[@]}"; do h=$((h+1)); "${SSH[@]}" -o ControlPath="$W/cm$h" -p "$p" 127.0.0.1 "$CMD" & done
    wait
  done
}

echo "== $HOSTS loopback sshd, $POLLS refreshes, user $USER_NAME, command: $CMD"
# (a) rocetop: the example reports steady-state figures itself (connections opened first)
"$POLL" --user "$USER_NAME" --key "$W/id" --known-hosts "$W/known_hosts" --polls "$POLLS" --cmd "$CMD" "${PORTS[@]}" | tee "$W/a.txt"
# (a') the same, whole process (connect + polls + exit) timed from outside, as (b) and (c) are
measure "rocetop (whole process)" "$POLL" --user "$USER_NAME" --key "$W/id" --known-hosts "$W/known_hosts" --polls "$POLLS" --cmd "$CMD" "${PORTS[@]}" | tee "$W/a2.txt"
measure "ssh per command (watch)" watch_way | tee "$W/b.txt"
h=0
for p in "${PORTS[@]}"; do
  h=$((h+1))
  "${SSH[@]}" -o ControlMaster=yes -o ControlPersist=yes -o ControlPath="$W/cm$h" -p "$p" -fN 127.0.0.1
done
measure "OpenSSH ControlMaster" controlmaster | tee "$W/c.txt"

num() { grep -o "$2 *[0-9.]* ms/refresh" "$1" | grep -o '[0-9.]*' | head -1; }
aw=$(num "$W/a.txt" wall); ac=$(num "$W/a.txt" cpu)
bw=$(num "$W/b.txt" wall); bc=$(num "$W/b.txt" cpu)
cw=$(num "$W/c.txt" wall); cc=$(num "$W/c.txt" cpu)
awk -v aw="$aw" -v ac="$ac" -v bw="$bw" -v bc="$bc" -v cw="$cw" -v cc="$cc" 'BEGIN {
  ac = (ac > 0 ? ac : 0.01)
  printf "ratios vs rocetop (steady state): ssh-per-command wall x%.1f cpu x%.1f; ControlMaster wall x%.1f cpu x%.1f\n", bw/aw, bc/ac, cw/aw, cc/ac }'
