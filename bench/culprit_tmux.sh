#!/usr/bin/env bash
# Episode-line measurement (not a test): launch `rocetop --demo` at 120x40 under tmux and time, from
# launch, (1) the first episode line on the Overview and (2) that line naming the culprit port and
# node (`Ethernet1/1/2 → ubunturdma6`), with no key pressed; then count the Overview's alert-area
# lines after 120 s. Usage: bench/culprit_tmux.sh [BIN]   (default target/release/rocetop)
set -euo pipefail
BIN=${1:-target/release/rocetop}
S=culprit-$$
DIR=$(mktemp -d)
cd "$DIR"
tmux -L "$S" new-session -d -s "$S" -x 120 -y 40 "env -u NO_COLOR TERM=xterm-256color $OLDPWD/$BIN --demo --config $OLDPWD/config.toml"
trap 'tmux -L "$S" kill-server 2>/dev/null || true; rm -rf "$DIR"' EXIT
t0=$(date +%s.%N)
first="" culprit=""
while :; do
  now=$(date +%s.%N)
  el=$(echo "$now - $t0" | bc)
  screen=$(tmux -L "$S" capture-pane -p -t "$S")
  if [ -z "$first" ] && grep -q " Episode: " <<<"$screen"; then first=$el; fi
  if [ -z "$culprit" ] && grep -q "Ethernet1/1/2 → ubunturdma6" <<<"$screen"; then
    culprit=$el
    grep -A1 " Episode: " <<<"$screen"
  fi
  if (( $(echo "$el > 120" | bc) )); then break; fi
  sleep 0.5
done
echo "first episode line at ${first:-never} s; culprit port and node named at ${culprit:-never} s; keys pressed: 0"
screen=$(tmux -L "$S" capture-pane -p -t "$S")
alerts=$(awk '/^Alerts /{on=1} on' <<<"$screen" | sed '$d' | wc -l)
echo "after 120 s: alert area ${alerts} lines (title and +N more included):"
awk '/^Alerts /{on=1} on' <<<"$screen" | sed '$d'
