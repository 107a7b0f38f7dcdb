#!/usr/bin/env python3
"""CPU and memory of process trees, from /proc.

  meter.py SECS ROOT_PID...              over SECS seconds
  meter.py SECS ROOT_PID... -- CMD ARG...  while CMD runs (SECS ignored), CMD's tree included

print `cpu_seconds peak_rss_kib` of the trees under the roots: live descendants included, the CPU of
children that ended is in their parents' cutime/cstime (and CMD's in its wait4 rusage); RSS is the
peak of the trees' summed RSS, sampled twice a second."""
import os
import subprocess
import sys
import time

TCK = os.sysconf("SC_CLK_TCK")


def table():
    procs = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                s = f.read()
            with open(f"/proc/{p}/statm") as f:
                rss_pages = int(f.read().split()[1])
        except OSError:
            continue
        rest = s[s.rindex(")") + 2:].split()
        ppid = int(rest[1])
        ticks = sum(int(x) for x in rest[11:15])  # utime stime cutime cstime
        procs[int(p)] = (ppid, ticks, rss_pages * os.sysconf("SC_PAGE_SIZE") // 1024)
    return procs


def tree(procs, roots):
    kids = {}
    for pid, (ppid, _, _) in procs.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = set(), [r for r in roots if r in procs]
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.add(p)
        todo.extend(kids.get(p, []))
    return out


def totals(roots):
    procs = table()
    t = tree(procs, roots)
    return sum(procs[p][1] for p in t), sum(procs[p][2] for p in t)


def main():
    secs = float(sys.argv[1])
    args = sys.argv[2:]
    cmd = args[args.index("--") + 1:] if "--" in args else []
    roots = [int(x) for a in args[:len(args) - len(cmd) - (1 if cmd else 0)] for x in a.split()]
    c0, peak = totals(roots)
    child = subprocess.Popen(cmd).pid if cmd else None
    end, ru = time.time() + secs, None
    while True:
        if child:
            pid, _, r = os.wait4(child, os.WNOHANG)
            if pid:
                ru = r
                break
        elif time.time() >= end:
            break
        time.sleep(0.5 if child else min(0.5, max(0.0, end - time.time())))
        _, rss = totals(roots + ([child] if child else []))
        peak = max(peak, rss)
    c1, rss = totals(roots)
    cpu = (c1 - c0) / TCK + (ru.ru_utime + ru.ru_stime if ru else 0)
    print(f"{cpu:.2f} {max(peak, rss)}")


if __name__ == "__main__":
    main()
