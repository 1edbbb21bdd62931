#!/usr/bin/env bash
# The long fuzz run (not part of CI): every target (or those named as
# arguments) for FUZZTIME (default 10m) on one worker at low priority, then
# the corpus it grew is kept under the package's testdata/fuzz/TARGET so
# `go test` replays it from then on. Exec counts go to FUZZLOG.
#
#   FUZZTIME=10m bash .ci/fuzz-long.sh [FuzzName ...]
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
fuzztime="${FUZZTIME:-10m}"
log="${FUZZLOG:-fuzz-long.log}"
cache="$(go env GOCACHE)/fuzz"
while read -r pkg dir target; do
	if (($#)) && [[ " $* " != *" $target "* ]]; then continue; fi
	echo "== $pkg $target ($fuzztime) $(date -u +%FT%TZ)" | tee -a "$log"
	if ! nice -n 19 go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -parallel=1 "$pkg" >"$log.$target.out" 2>&1; then
		echo "FINDING or failure in $pkg $target: see $log.$target.out (a crasher is kept under testdata/fuzz)" | tee -a "$log"
	fi
	grep -E '^(fuzz: elapsed|ok|FAIL|---)' "$log.$target.out" | tail -n 3 | tee -a "$log"
	src="$cache/$pkg/$target"
	if [[ -d "$src" ]]; then
		mkdir -p "$dir/testdata/fuzz/$target"
		cp -n "$src"/* "$dir/testdata/fuzz/$target/" 2>/dev/null || true
		echo "corpus kept: $(ls "$dir/testdata/fuzz/$target" | wc -l) files in $dir/testdata/fuzz/$target" | tee -a "$log"
	fi
done < <(bash .ci/fuzz-targets.sh)
