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

// TestFleetOnceChecksTheme: --theme is the console's, but a name that is no
// theme is bad usage whatever the run: with --once, --fit or --at it was
// never read, and a typo printed the table and exited 0.
func TestFleetOnceChecksTheme(t *testing.T) {
	for _, mode := range [][]string{{"--once"}, {"--fit", "cuda.shares=1"}, {"--at", "-1m"}} {
		args := append([]string{"fleet", "--prometheus", "http://127.0.0.1:1", "--timeout", "1s", "--theme", "nosuch"}, mode...)
		code, out := runCLI(t, args...)
		wantCode(t, code, exitBadUsage, out, `unknown theme "nosuch"`)
		if !strings.Contains(out, "mono") {
			t.Errorf("%v: the error does not list the themes:\n%s", mode, out)
		}
	}
}
