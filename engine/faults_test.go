package engine_test

import (
	"testing"

	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/internal/testfix"
)

// TestFaults injects each fault of issue 7 into a live engine on real
// files (a scratch root removed and recreated, a kernel directory replaced
// by a symlink out of the root, a 100 MB resource.txt, NUL bytes,
// permission denied) and checks the engine's account at every step; the
// console's rendering of the same snapshots is checked in ui's
// TestFaultsRendered. The scenarios live in enginetest so both run them.
func TestFaults(t *testing.T) {
	for _, sc := range enginetest.Scenarios() {
		t.Run(sc.Name, func(t *testing.T) {
			if sc.AsNobody && testfix.ReexecAsNobody(t) {
				return
			}
			phases := sc.Run(t)
			if len(phases) < 2 {
				t.Fatalf("%d phases", len(phases))
			}
		})
	}
}
