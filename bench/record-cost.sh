#!/usr/bin/env bash
# What recording costs a whole fgtop process per change, end to end: the
# exporter (an engine and an HTTP server, nothing drawn) follows a real
# 10,000-kernel scratch tree through fsnotify while a writer rewrites one
# kernel's resource.txt RATE times a second, once with --history off and
# once recording, in interleaved rounds. The process's CPU comes from
# /proc/PID/task/*/schedstat (nanoseconds): a window with the writer running, and
# a window as long without it (the poll, the collector, the heartbeat),
# whose cost is taken off, so what is left is the CPU the changes cost.
#
#   go run ./bench/mktree -n 10000 -dir /tmp/tree10k -recovery 1
#   FGTOP_BIN=/tmp/fgtop bash bench/record-cost.sh /tmp/tree10k [ROUNDS] [RATE] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$1 rounds=${2:-2} rate=${3:-4} secs=${4:-60}
bin=${FGTOP_BIN:-}
if [[ -z $bin ]]; then
	bin=$(mktemp -d)/fgtop
	GOTOOLCHAIN=local go build -o "$bin" ./cmd/fgtop
fi
work=$(mktemp -d)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
cp -r "$tree" "$work/tree"
# every thread's time on a CPU, in ns (a Go process's threads live as long as it does)
oncpu() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%d", s }'; }
churn() { # rewrite $rate kernels a second for $secs seconds, in place as the agent does
	python3 - "$work/tree" "$rate" "$secs" <<'PY'
import os, random, sys, time
root, rate, secs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
ids = sorted(os.listdir(root))
random.seed(7)
n, t0 = 0, time.monotonic()
while time.monotonic() - t0 < secs:
    p = os.path.join(root, random.choice(ids), "config", "resource.txt")
    with open(p) as f:
        s = f.read()
    # 4 GiB <-> 5 GiB of memory, SLOTS and MEM_SHARES together
    if "MEM_SHARES=root:4g" in s:
        s = s.replace("MEM_SHARES=root:4g", "MEM_SHARES=root:5g").replace('"mem":"4294967296"', '"mem":"5368709120"')
    else:
        s = s.replace("MEM_SHARES=root:5g", "MEM_SHARES=root:4g").replace('"mem":"5368709120"', '"mem":"4294967296"')
    with open(p, "w") as f:
        f.write(s)
    n += 1
    time.sleep(max(0, t0 + n / rate - time.monotonic()))
print(n)
PY
}
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg); $rate changes/s for ${secs}s a window"
echo "# round mode changes busy_ms idle_ms per_change_us"
for round in $(seq "$rounds"); do
	for mode in off on; do
		hist=off
		[[ $mode == on ]] && hist="$work/hist-$round"
		"$bin" exporter --listen 127.0.0.1:0 --scratch-root "a=$work/tree" --devices testdata/fixtures/backendai/mock-accelerator.toml \
			--mock-etcd testdata/fixtures/backendai/mock-accelerator.etcd.json --history "$hist" >/dev/null 2>"$work/err" &
		pid=$!
		sleep 8 # the first scan and the first checkpoint
		a=$(oncpu $pid); sleep "$secs"; b=$(oncpu $pid)
		n=$(churn); sleep 1; c=$(oncpu $pid)
		kill $pid; wait $pid 2>/dev/null || true
		idle=$((b - a)); busy=$((c - b))
		awk -v r="$round" -v m="$mode" -v n="$n" -v busy="$busy" -v idle="$idle" -v s="$secs" \
			'BEGIN { printf "%s %s %d %.1f %.1f %.1f\n", r, m, n, busy/1e6, idle/1e6, (busy - idle*(s+1)/s)/n/1e3 }'
	done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
