#!/usr/bin/env python3
"""Sampler and report for bench/schedstat.sh (see there).

  schedstat.py sample PID LOG   one snapshot a second of PID's threads until PID ends:
                                lines "t_seconds tid comm ns_on_cpu"
  schedstat.py report DIR       ms on a CPU a second per thread class, one row per log in DIR
"""
import os
import statistics
import sys
import time


def snap(pid):
    rows = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                comm = f.read().strip().replace(" ", "_")
        except (OSError, ValueError):
            continue
        rows.append((tid, comm, ns))
    return rows


def sample(pid, log):
    t0 = time.monotonic()
    with open(log, "w") as out:
        while True:
            time.sleep(1.0 - (time.monotonic() - t0) % 1.0)
            rows = snap(pid)
            if not rows:
                return
            t = time.monotonic() - t0
            for tid, comm, ns in rows:
                out.write(f"{t:.3f} {tid} {comm} {ns}\n")
            out.flush()


def klass(comm):
    if comm.startswith("rocetop") and comm != "rocetop-input":
        return "main"
    if comm.startswith("tokio"):
        return "tokio"
    return "other"


def report(d):
    warm = float(os.environ.get("WARM", "8"))
    tail = float(os.environ.get("TAIL", "2"))
    rows = []
    for name in sorted(os.listdir(d), key=lambda n: n.split(".")[2] if n.count(".") >= 3 else n):
        if not name.endswith(".log"):
            continue
        snaps = {}
        with open(os.path.join(d, name)) as f:
            for line in f:
                t, tid, comm, ns = line.split()
                snaps.setdefault(float(t), {})[tid] = (comm, int(ns))
        ts = sorted(snaps)
        if len(ts) < 3:
            continue
        a = next((t for t in ts if t >= ts[0] + warm), None)
        b = max((t for t in ts if t <= ts[-1] - tail), default=None)
        if a is None or b is None or b <= a:
            continue
        secs = b - a
        per = {"main": 0, "tokio": 0, "other": 0}
        for tid, (comm, ns) in snaps[b].items():
            before = snaps[a].get(tid, (comm, 0))[1]
            per[klass(comm)] += ns - before
        label, mode = name.split(".")[0:2]
        ms = {k: v / 1e6 / secs for k, v in per.items()}
        rows.append((label, mode, secs, ms))
    print(f"{'label':<10} {'mode':<7} {'secs':>5} {'main':>7} {'tokio':>7} {'other':>7} {'total':>7}  (ms on a CPU a second)")
    for label, mode, secs, ms in rows:
        tot = sum(ms.values())
        print(f"{label:<10} {mode:<7} {secs:5.0f} {ms['main']:7.3f} {ms['tokio']:7.3f} {ms['other']:7.3f} {tot:7.3f}")
    groups = {}
    for label, mode, _, ms in rows:
        groups.setdefault((label, mode), []).append(ms)
    print("\nmedians:")
    for (label, mode), l in sorted(groups.items()):
        med = {k: statistics.median(m[k] for m in l) for k in ("main", "tokio", "other")}
        tot = statistics.median(sum(m.values()) for m in l)
        print(f"{label:<10} {mode:<7} n={len(l):<3} {med['main']:7.3f} {med['tokio']:7.3f} {med['other']:7.3f} {tot:7.3f}")
    exp = {label: statistics.median(sum(m.values()) for m in l) for (label, mode), l in groups.items() if mode == "export"}
    for (label, mode), l in sorted(groups.items()):
        if mode == "tui" and label in exp:
            tot = statistics.median(sum(m.values()) for m in l)
            print(f"{label}: tui/export = {tot / exp[label]:.2f}")


if __name__ == "__main__":
    if sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3])
    else:
        report(sys.argv[2])
