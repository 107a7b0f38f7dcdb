#!/bin/sh
# sshd ForceCommand of the simulated NX-OS switch: the three `show` commands rocetop (and the
# `watch` baseline) send, answered from the files bench/perf/fabric.py rewrites every second.
D="$FABRIC/switch"
case "$SSH_ORIGINAL_COMMAND" in
  "show queuing interface"*) exec cat "$D/queuing.txt" ;;
  "show interface priority-flow-control"*) exec cat "$D/pfc.txt" ;;
  "show interface flowcontrol"*) exec cat "$D/flowcontrol.txt" ;;
  *) echo "% Invalid command at '^' marker."; exit 1 ;;
esac
