#!/usr/bin/env python3
"""Each program's bursts of work at rest, from the scheduler's own record.

Reads `perf script` output of `perf record -a -e sched:sched_switch` on
stdin; arguments are NAME=PID pairs. A program's threads are its PID's
tasks (read from /proc while it runs). For each program it prints, over
the record's span: its on-CPU time a second (from the switches in and
out, not sampled), its wake-ups a second (switches in), its bursts a
second (runs of its threads' switches with no gap over 20 ms between
them) and the bursts' span (first switch in to last switch out) at the
median and p90; then the same per thread, the busiest first. The Go
runtime's monitor (sysmon) is the thread with the most wake-ups at rest:
while any P runs it sleeps 20 us at a time, so its count follows the
bursts' span.

    perf record -a -e sched:sched_switch -o s.data -- sleep 30
    perf script -i s.data | python3 bench/restspan.py fgtop=1234 nvtop=1240
"""
import collections
import os
import re
import statistics
import sys

SWITCH = re.compile(r"\s([\d.]+):\s+sched:sched_switch:.*\bprev_pid=(\d+)\b.*==>.*\bnext_pid=(\d+)\b")
GAP = 0.020


def main(argv):
    progs = {}
    owner = {}
    for arg in argv:
        name, _, pid = arg.partition("=")
        if not pid.isdigit():
            sys.exit(f"restspan: {arg!r}: want NAME=PID")
        progs[name] = pid
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                owner[tid] = name
        except OSError as e:
            sys.exit(f"restspan: {name} (pid {pid}) is not running: {e}")
    since = {}
    busy = collections.defaultdict(float)
    ins = collections.Counter()
    stamps = collections.defaultdict(list)
    first = last = None
    for line in sys.stdin:
        m = SWITCH.search(line)
        if not m:
            continue
        t, prev, nxt = float(m.group(1)), m.group(2), m.group(3)
        first = t if first is None else first
        last = t
        if prev in owner and prev in since:
            busy[prev] += t - since.pop(prev)
            stamps[owner[prev]].append(t)
        if nxt in owner:
            since[nxt] = t
            ins[nxt] += 1
            stamps[owner[nxt]].append(t)
    if first is None or last <= first:
        sys.exit("restspan: no sched_switch records on stdin")
    dur = last - first
    for name, pid in progs.items():
        spans, start, prev = [], None, None
        for t in stamps[name]:
            if prev is not None and t - prev > GAP:
                spans.append(prev - start)
                start = None
            start = t if start is None else start
            prev = t
        if start is not None:
            spans.append(prev - start)
        spans.sort()
        tids = [tid for tid, who in owner.items() if who == name]
        on = sum(busy[tid] for tid in tids)
        wk = sum(ins[tid] for tid in tids)
        p50 = statistics.median(spans) * 1e3 if spans else 0
        p90 = spans[min(len(spans) - 1, int(len(spans) * 0.9))] * 1e3 if spans else 0
        print(f"{name:8s} {dur:5.1f} s: on-CPU {on / dur * 1e3:6.3f} ms/s  wake-ups {wk / dur:5.1f}/s  "
              f"bursts {len(spans) / dur:4.2f}/s  burst span p50 {p50:5.2f} ms  p90 {p90:5.2f} ms")
        for tid in sorted(tids, key=lambda x: -ins[x]):
            if ins[tid]:
                print(f"           thread {tid}: {ins[tid] / dur:5.1f} wake-ups/s  {busy[tid] / dur * 1e3:6.3f} ms/s")


if __name__ == "__main__":
    main(sys.argv[1:])
