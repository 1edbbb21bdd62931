package main

import (
	"strings"
	"testing"
)

// TestFleetHasNoHistoryFlag: the fleet's console records nothing, so
// --history (which the node consoles share) is no flag of fleet's: it was
// listed as "record the node's history into DIR" and did nothing.
func TestFleetHasNoHistoryFlag(t *testing.T) {
	code, out := runCLI(t, "fleet", "--hosts", "127.0.0.1:1", "--once", "--history", t.TempDir())
	wantCode(t, code, exitBadUsage, out, "unknown flag: --history")
	if _, out := runCLI(t, "fleet", "--help"); strings.Contains(out, "      --history ") {
		t.Fatalf("fleet --help lists --history:\n%s", out)
	}
}
