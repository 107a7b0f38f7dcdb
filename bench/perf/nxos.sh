#!/bin/sh
# sshd ForceCommand of the simulated NX-OS switch: the three `show` commands rocetop (and the
# `watch` baseline) send every poll, answered from the files bench/perf/fabric.py rewrites every tick.
D="$FABRIC/switch"
case "$SSH_ORIGINAL_COMMAND" in
  "show queuing interface"*) exec cat "$D/queuing.txt" ;;
  "show interface priority-flow-control"*) exec cat "$D/pfc.txt" ;;
  "show interface flowcontrol"*) exec cat "$D/flowcontrol.txt" ;;
  # The topology read (once at start, then every 5 min): a switch with LLDP off and no QoS
  # policy answers with nothing, so the TUI's "every source up" is reachable.
  "show lldp neighbors"*|"show queuing pfc-queue"*|"show interface Ethernet"*|"show running-config ipqos"*) exit 0 ;;
  *) echo "% Invalid command at '^' marker."; exit 1 ;;
esac
