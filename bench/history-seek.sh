#!/bin/bash
# Seek timings of a recorded week (BENCHMARKS.md, "History"), two builds
# compared in the same run, three rounds interleaved.
#   FGTOP_HISTORY_DIR=/tmp/week FGTOP_HISTORY_WEEK=168 go test -count=1 -timeout 60m -run TestWeekBench ./engine/history
#   go run ./bench/mktree -n 10000 -dir /tmp/tree10k -recovery 1
#   bench/history-seek.sh OLD_FGTOP NEW_FGTOP /tmp/week /tmp/tree10k
set -eu
old=$1 new=$2 week=$3 tree=$4
fx=$(cd "$(dirname "$0")/.." && pwd)/testdata/fixtures/backendai
t() { /usr/bin/time -f "%e s wall, %U+%S s CPU, %M KB" "$@" 2>&1 >/dev/null | tail -1; }
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in 1 2 3; do
	for b in "$old" "$new"; do
		for at in 2026-11-23T00:30:00Z 2026-11-23T11:59:00Z 2026-11-25T06:10:00Z; do
			echo "$round $b snapshot --at $at: $(t "$b" snapshot --at $at --history "$week")"
		done
		echo "$round $b live snapshot --json: $(t "$b" snapshot --json --scratch-root i-gpu-node01-numa0="$tree" \
			--devices "$fx/mock-accelerator.toml" --mock-etcd "$fx/mock-accelerator.etcd.json")"
		echo "$round $b history --device cuda:3: $(t "$b" history --device cuda:3 --history "$week")"
		echo "$round $b history --device cuda:3 --since 1d: $(t "$b" history --device cuda:3 --since 2026-11-26T00:00:00Z --history "$week")"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
