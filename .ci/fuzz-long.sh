#!/usr/bin/env bash
# The long fuzz run (not part of CI): every target (or those named as
# arguments) for FUZZTIME (default 10m) on one worker at low priority, then
# the corpus it grew is kept under the package's testdata/fuzz/TARGET so
# `go test` replays it from then on. Exec counts go to FUZZLOG.
#
#   FUZZTIME=10m bash .ci/fuzz-long.sh [FuzzName|pkgdir/FuzzName ...]
#
# e.g. `bash .ci/fuzz-long.sh engine/agentconfig/FuzzParse FuzzParseDec`.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOTOOLCHAIN=local
fuzztime="${FUZZTIME:-10m}"
log="${FUZZLOG:-fuzz-long.log}"
cache="$(go env GOCACHE)/fuzz"
while read -r pkg dir target; do
	rel="${dir#"$PWD"/}"
	if (($#)) && [[ " $* " != *" $target "* && " $* " != *" $rel/$target "* ]]; then continue; fi
	out="$log.${rel//\//_}.$target.out"
	echo "== $pkg $target ($fuzztime) $(date -u +%FT%TZ)" | tee -a "$log"
	if ! nice -n 19 go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" -fuzzminimizetime="${FUZZMINIMIZETIME:-10s}" -parallel=1 -timeout=0 "$pkg" >"$out" 2>&1; then
		echo "FINDING or failure in $pkg $target: see $out (a crasher is kept under testdata/fuzz)" | tee -a "$log"
	fi
	grep -E '^(fuzz: elapsed|ok|FAIL|---)' "$out" | tail -n 3 | tee -a "$log"
	src="$cache/$pkg/$target"
	if [[ -d "$src" ]]; then
		mkdir -p "$dir/testdata/fuzz/$target"
		cp -n "$src"/* "$dir/testdata/fuzz/$target/" 2>/dev/null || true
		echo "corpus kept: $(ls "$dir/testdata/fuzz/$target" | wc -l) files in $dir/testdata/fuzz/$target" | tee -a "$log"
	fi
done < <(bash .ci/fuzz-targets.sh)
