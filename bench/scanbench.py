#!/usr/bin/env python3
"""The whole-process scan benchmark of BENCHMARKS.md, in one run: the bare
read floor (bench/readfloor), `fgtop snapshot --alloc-map` and the Python
re-scan (bench/pyscan.py) over the same tree, interleaved, RUNS times each,
after warming the page cache. For each program: median and best wall time
(ms resolution, from wait4), median CPU (user+sys) and the largest peak
RSS; then the ratios of the medians, against DESIGN.md's targets, and
Python's ratio to the floor (the best any reader of the files can do).

Three floors run (see bench/readfloor): "floor" reads what fgtop's first
scan must read (every kernel's resource.txt and recovery.json, the failed
open included where there is none: attribution must look) with the fewest
system calls, the floor DESIGN.md's target is measured against;
"floor-rt" reads resource.txt alone the same way (what the records cost a
bare reader); "floor-rf" reads both files with os.ReadFile (an absolute
open, an fstat, a read to EOF into a fresh buffer: the way the floor read
before 2026-11-25); "floor-old" is the floor of the figures before
2026-11-25 exactly (os.ReadFile of resource.txt alone), for comparison with
them. The Python re-scan reads resource.txt only, as before.

    go build -o /tmp/fgtop ./cmd/fgtop && go build -o /tmp/readfloor ./bench/readfloor
    python3 bench/scanbench.py TREE [--runs 9] [--fgtop /tmp/fgtop] [--floor /tmp/readfloor]
"""
import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(argv):
    # Peak RSS comes from /usr/bin/time: a child forked from this Python
    # process would report Python's own pages as its peak. Wall and CPU
    # come from here (GNU time rounds to 10 ms).
    with tempfile.NamedTemporaryFile("r") as rss:
        t = time.perf_counter()
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rss.name] + argv, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        if status != 0:
            sys.exit(f"{argv[0]} failed: status {status}")
        return wall, ru.ru_utime + ru.ru_stime, int(rss.read().split()[-1]) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tree")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--fgtop", default="/tmp/fgtop")
    ap.add_argument("--floor", default="/tmp/readfloor")
    ap.add_argument("--fgtop-base", default="", help="a second fgtop binary (say, the tree before a change), run interleaved as fgtop-b")
    ap.add_argument("--fixtures", default=os.path.join(HERE, "..", "testdata", "fixtures", "backendai"))
    a = ap.parse_args()
    for f in glob.glob(os.path.join(a.tree, "*", "config", "*")):
        with open(f, "rb") as fh:
            fh.read()
    recs = len(glob.glob(os.path.join(a.tree, "*", "config", "recovery.json")))
    progs = {
        "floor": [a.floor, a.tree],
        "floor-rt": [a.floor, "-resource-only", a.tree],
        "floor-rf": [a.floor, "-readfile", a.tree],
        "floor-old": [a.floor, "-readfile", "-resource-only", a.tree],
        "fgtop": [a.fgtop, "snapshot", "--scratch-root", "a=" + a.tree,
                  "--devices", os.path.join(a.fixtures, "mock-accelerator.toml"),
                  "--mock-etcd", os.path.join(a.fixtures, "mock-accelerator.etcd.json"), "--alloc-map"],
        "python": [sys.executable, os.path.join(HERE, "pyscan.py"), a.tree],
    }
    if a.fgtop_base:
        progs["fgtop-b"] = [a.fgtop_base] + progs["fgtop"][1:]
    n = len(os.listdir(a.tree))
    print(f"tree {a.tree}: {n} entries, {recs} recovery.json; {os.cpu_count()} cores; load average before {os.getloadavg()[0]:.2f}")
    res = {k: [] for k in progs}
    for _ in range(a.runs):
        for k, argv in progs.items():
            res[k].append(run(argv))
    print(f"load average after {os.getloadavg()[0]:.2f}")
    med = {}
    for k, rs in res.items():
        walls = [r[0] for r in rs]
        med[k] = statistics.median(walls)
        print(f"{k:9s} wall median {med[k]*1000:6.1f} ms, best {min(walls)*1000:6.1f} ms; "
              f"cpu median {statistics.median(r[1] for r in rs)*1000:6.1f} ms; peak RSS max {max(r[2] for r in rs):5.1f} MiB")
    cpu = {k: statistics.median(r[1] for r in rs) for k, rs in res.items()}
    print(f"fgtop/floor {med['fgtop']/med['floor']:.2f} wall, {cpu['fgtop']/cpu['floor']:.2f} cpu (target <= 1.25); "
          f"fgtop/floor-rf {med['fgtop']/med['floor-rf']:.2f} wall, {cpu['fgtop']/cpu['floor-rf']:.2f} cpu (os.ReadFile, both files); "
          f"fgtop/floor-old {med['fgtop']/med['floor-old']:.2f} wall, {cpu['fgtop']/cpu['floor-old']:.2f} cpu (the old floor)")
    print(f"floor/floor-rt {med['floor']/med['floor-rt']:.2f} wall, {cpu['floor']/cpu['floor-rt']:.2f} cpu (what the records cost a bare reader)")
    print(f"python/fgtop {med['python']/med['fgtop']:.2f}; python/floor {med['python']/med['floor']:.2f}; "
          f"python/floor-old {med['python']/med['floor-old']:.2f} (reported, not a target)")
    if a.fgtop_base:
        print(f"fgtop-b/floor {med['fgtop-b']/med['floor']:.2f} wall, {cpu['fgtop-b']/cpu['floor']:.2f} cpu; "
              f"fgtop/fgtop-b {med['fgtop']/med['fgtop-b']:.2f} wall, {cpu['fgtop']/cpu['fgtop-b']:.2f} cpu")


if __name__ == "__main__":
    main()
