#!/usr/bin/env bash
# replay-rounds.sh OLD NEW WEEK [ROUNDS]: plan --replay 7d on the bench week
# (FGTOP_HISTORY_DIR=WEEK FGTOP_HISTORY_WEEK=168 go test -run TestWeekBench
# ./engine/history), two fgtop binaries alternated, each run after an 8 s
# pause (a first run after a pause pays this VM's page faults: BENCHMARKS.md),
# then history --device cuda:3 over the same week; the replay's outputs are
# compared.
set -euo pipefail
old=$1 new=$2 week=$3 rounds=${4:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for _ in $(seq "$rounds"); do
	for b in old new; do
		bin=${!b}
		sleep 8
		/usr/bin/time -f "$b replay %e s wall %U user %S sys %M KB" "$bin" plan --replay 7d --until 2026-11-27T00:00:00Z \
			--history "$week" >"$out/$b.txt" 2>"$out/$b.err" || true
		tail -1 "$out/$b.err"
	done
done
for b in old new; do
	bin=${!b}
	sleep 8
	/usr/bin/time -f "$b history %e s wall %U user %S sys %M KB" "$bin" history --device cuda:3 --history "$week" >/dev/null 2>"$out/h.err" || true
	tail -1 "$out/h.err"
done
if cmp -s "$out/old.txt" "$out/new.txt"; then echo "same output"; else echo "outputs differ"; fi
