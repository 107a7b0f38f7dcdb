#!/usr/bin/env bash
# The live screen against one NX-OS switch answering PORTS ports (20k ports once cost the
# TUI 0.7 core and 507 MB), over loopback OpenSSH only: the switch is an sshd ForceCommand
# that answers `show interface priority-flow-control` with the table of tests/e2e/hostile.rs,
# rewritten every second with the pause counters of a port in ten moving (the other commands answer
# nothing). The TUI runs under tmux at 120x40 polling every second; after its first full screen, CPU
# seconds and peak RSS of its process over SECS seconds (bench/perf/meter.py, /proc VmHWM). BASE and
# NEW run one after the other against the same switch.
#
#   BASE=old/rocetop [NEW=target/release/rocetop] [PORTS=20000] [SECS=60] bench/switch20k.sh
# Needs sshd, tmux, python3. As root it logs in as `rocetoptest` (created if missing), as perf.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
PORTS=${PORTS:-20000}
SECS=${SECS:-60}
NEW=${NEW:-${CARGO_TARGET_DIR:-target}/release/rocetop}
BASE=${BASE:-}
W=$(mktemp -d /tmp/rocetop-sw20k.XXXXXX)
chmod 755 "$W"
SOCK="rocetop-sw20k-$$"
PIDS=()
cleanup() {
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  [ -f "$W/sshd.pid" ] && kill "$(cat "$W/sshd.pid")" 2>/dev/null || true
  rm -rf "$W"
}
trap cleanup EXIT
USER_NAME=$(id -un)
if [ "$(id -u)" = 0 ]; then
  id rocetoptest >/dev/null 2>&1 || useradd -M -s /bin/sh rocetoptest
  USER_NAME=rocetoptest
fi

python3 - "$W" "$PORTS" <<'PY' &
import os, sys, time
d, n = sys.argv[1], int(sys.argv[2])
k = 0
while True:
    rows = [
        f"{f'Ethernet{1 + i // 1000}/{1 + i % 1000}/1':<19}Auto On  (8)   "
        f"{i + (3 * k if i % 10 == 0 else 0):<11}{2 * i + (k if i % 10 == 0 else 0):<10}\n"
        for i in range(n)
    ]
    # The layout of bench/perf/fabric.py (NX-OS 7.x, src/collect/demo/render.rs).
    t = "\n" + "=" * 60 + "\nPort               Mode Oper(VL bmap)  RxPPP      TxPPP     \n" + "=" * 60 + "\n\n"
    with open(d + "/pfc.tmp", "w") as f:
        f.write(t + "".join(rows))
    os.chmod(d + "/pfc.tmp", 0o644)
    os.replace(d + "/pfc.tmp", d + "/pfc.txt")
    k += 1
    time.sleep(1)
PY
PIDS+=($!)
for _ in $(seq 100); do [ -f "$W/pfc.txt" ] && break; sleep 0.1; done
cat >"$W/answer.sh" <<SH
#!/bin/sh
case "\$SSH_ORIGINAL_COMMAND" in
  "show interface priority-flow-control"*) exec cat "$W/pfc.txt" ;;
  *) exit 0 ;;
esac
SH
chmod 755 "$W/answer.sh"
mkdir -p /run/sshd
ssh-keygen -q -t ed25519 -N "" -f "$W/id"
ssh-keygen -q -t ed25519 -N "" -f "$W/hostkey"
cp "$W/id.pub" "$W/authorized_keys"
chmod 644 "$W/authorized_keys" "$W/id.pub"
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
cat >"$W/sshd_config" <<CFG
Port $PORT
ListenAddress 127.0.0.1
HostKey $W/hostkey
AuthorizedKeysFile $W/authorized_keys
PidFile $W/sshd.pid
PasswordAuthentication no
StrictModes no
UsePAM no
PermitRootLogin yes
ForceCommand $W/answer.sh
CFG
/usr/sbin/sshd -f "$W/sshd_config" -E "$W/sshd.log"
for _ in $(seq 50); do [ -f "$W/sshd.pid" ] && break; sleep 0.1; done
echo "[127.0.0.1]:$PORT $(cut -d' ' -f1-2 "$W/hostkey.pub")" >"$W/known_hosts"
cat >"$W/c.toml" <<T
demo = false
[ssh]
known_hosts = "$W/known_hosts"
identity_file = "$W/id"
[poll]
mode = "exec"
interval = "1s"
retention = "15m"

[[switch]]
name = "leaf1"
host = "127.0.0.1"
port = $PORT
user = "$USER_NAME"
os = "nxos"
T

run_tui() { # NAME BIN
  local t0 first=- pid cpu rss
  tmux -L "$SOCK" new-session -d -s tui -x 120 -y 40 "exec $2 --config $W/c.toml"
  pid=$(tmux -L "$SOCK" display -p -t tui '#{pane_pid}')
  t0=$(date +%s%N)
  for _ in $(seq 1200); do
    if tmux -L "$SOCK" capture-pane -p -t tui | grep -qE "sources ([0-9]+): \1 up"; then
      first=$((($(date +%s%N) - t0) / 1000000))
      break
    fi
    sleep 0.05
  done
  read -r cpu _ < <(python3 bench/perf/meter.py "$SECS" "$pid")
  rss=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
  tmux -L "$SOCK" capture-pane -p -t tui >"$W/$1.screen"
  tmux -L "$SOCK" send-keys -t tui q
  sleep 0.5
  tmux -L "$SOCK" kill-session -t tui 2>/dev/null || true
  [ -z "${SHOW:-}" ] || cat "$W/$1.screen" "$W/sshd.log" >&2
  echo "tui $1 ports=$PORTS secs=$SECS first_screen_ms=$first cpu_s=$cpu core=$(python3 -c "print(round($cpu / $SECS, 3))") peak_rss_kib=$rss"
}

echo "# bench/switch20k.sh $PORTS ports, $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "$BASE" ] || run_tui base "$BASE"
run_tui new "$NEW"
