#!/usr/bin/env bash
# Lists every fuzz target of the module, one "IMPORTPATH DIR TARGET" per line.
set -euo pipefail
cd "$(dirname "$0")/.."
while read -r dir pkg; do
	compgen -G "$dir/*_test.go" >/dev/null || continue
	for t in $(grep -hoE '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' "$dir"/*_test.go | sed -E 's/^func (Fuzz[A-Za-z0-9_]+).*/\1/' | sort -u); do
		echo "$pkg $dir $t"
	done
done < <(go list -f '{{.Dir}} {{.ImportPath}}' ./...)
