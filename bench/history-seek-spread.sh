#!/bin/bash
# snapshot --at over a recorded week (BENCHMARKS.md, "History: seek"), two
# builds interleaved moment by moment: the worst moments (the last second
# before a checkpoint: a whole 12 h segment replayed) and 12 random ones
# (fixed seed), indented (the default) and --compact.
#   FGTOP_HISTORY_DIR=/tmp/week FGTOP_HISTORY_WEEK=168 go test -count=1 -timeout 60m -run TestWeekBench ./engine/history
#   bench/history-seek-spread.sh OLD_FGTOP NEW_FGTOP /tmp/week [ROUNDS]
set -eu
old=$1 new=$2 week=$3 rounds=${4:-1}
t() { /usr/bin/time -f "%e %U %S %M" "$@" 2>&1 >/dev/null | tail -1; }
worst="2026-11-21T11:59:59Z 2026-11-23T23:59:59Z 2026-11-25T11:59:59Z"
# 12 moments of the week (2026-11-20T00:00Z + 0..604799 s), seed 20.
random=$(awk 'BEGIN { srand(20); for (i = 0; i < 12; i++) printf "%d\n", 1795132800 + int(rand() * 604800) }' |
	while read -r s; do date -u -d "@$s" +%Y-%m-%dT%H:%M:%SZ; done)
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# kind moment build form wall user sys maxrss_kb"
for round in $(seq "$rounds"); do
	for at in $worst $random; do
		kind=random
		case " $worst " in *" $at "*) kind=worst ;; esac
		for form in indent compact; do
			flag=""
			[ $form = compact ] && flag=--compact
			for b in "$old" "$new"; do
				echo "$kind $at $(basename "$b") $form $(t "$b" snapshot --at "$at" --history "$week" $flag)"
			done
		done
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
