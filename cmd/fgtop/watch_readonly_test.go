package main

import (
	"strings"
	"testing"
)

// TestWatchTakesReadOnly: `fgtop watch --readonly` says what watch alone
// says (here: the console needs a terminal), not "unknown flag", and help
// does not list a flag that changes nothing.
func TestWatchTakesReadOnly(t *testing.T) {
	code, out := runCLIQuiet(t, "watch", "--readonly", "--history", "off")
	if code != exitBadUsage || strings.Contains(out, "unknown flag") || !strings.Contains(out, "not a terminal") {
		t.Fatalf("exit %d, want the terminal's refusal (exit %d):\n%s", code, exitBadUsage, out)
	}
	if _, help := runCLIQuiet(t, "watch", "--help"); strings.Contains(help, "--readonly") {
		t.Fatalf("watch's help lists --readonly:\n%s", help)
	}
}
