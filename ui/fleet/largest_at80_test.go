package fleet

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/fleet"
)

// TestLargestFitReadsAt80: at 80 columns a live node's detail keeps its
// largest fit, the figure the line is for. The line began with the free
// shares and their pieces, so the cut fell after "the largest cuda.shares
// request that fits:" and before the number, on every live node.
func TestLargestFitReadsAt80(t *testing.T) {
	m := newTestFleet(t, 80, 24)
	checked := 0
	for _, i := range m.Rows {
		n := &m.fl.Nodes[i]
		if n.Snap == nil || n.State != fleet.Live || n.Sum.Slot == "" || n.Sum.Unknown > 0 || n.Sum.QuantumUnknown {
			fleetPress(m, "j")
			continue
		}
		checked++
		s := stripANSI(fleetScreen(m))
		fleetPress(m, "j")
		want := "the largest " + string(n.Sum.Slot) + " request that fits: " + n.Sum.Largest.String()
		switch {
		case n.Sum.LargestOvercommits && n.Sum.LargestClear.IsZero():
			want += " (overcommits, as any would)"
		case n.Sum.LargestOvercommits:
			want += " (overcommits; " + n.Sum.LargestClear.String() + " does not)"
		}
		if !strings.Contains(s, want) {
			t.Errorf("%s at 80 columns: the detail lacks %q:\n%s", n.Name, want, s)
		}
	}
	if checked == 0 {
		t.Fatal("no live node with a largest fit in the fixture fleet: nothing tested")
	}
}
