package fleet

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/model"
)

// TestLargestMarkedWhenItOvercommits: a node whose largest fit is placed
// only by overcommitting a device (its agents share a GPU that one
// agent's allocator sees free) shows FITS≤ marked with "!", and its
// detail says so with the largest that overcommits nothing: the figure
// --fit agrees with, never a bare number that reads as room.
func TestLargestMarkedWhenItOvercommits(t *testing.T) {
	m := newTestFleet(t, 120, 40)
	marked := 0
	for _, i := range m.Rows {
		n := &m.fl.Nodes[i]
		// Only a live node's fit is known; a stale one's is "-" (its own test).
		if n.Snap == nil || !n.Sum.LargestOvercommits || n.State != fleet.Live {
			fleetPress(m, "j")
			continue
		}
		marked++
		s := stripANSI(fleetScreen(m))
		fleetPress(m, "j")
		if !strings.Contains(s, " "+n.Sum.Largest.String()+"! ") {
			t.Errorf("%s: FITS≤ %s not marked:\n%s", n.Name, n.Sum.Largest, s)
		}
		want := "fits: " + n.Sum.Largest.String() + " (overcommits; " + n.Sum.LargestClear.String() + " does not)"
		if !strings.Contains(s, want) {
			t.Errorf("%s: detail lacks %q:\n%s", n.Name, want, s)
		}
	}
	if marked == 0 {
		t.Fatal("no node of the fixture fleet has a largest fit that overcommits: nothing tested")
	}
}

// TestNoClearFitSaysAnyWould: where every request overcommits (the agent
// the manager sends it to sees free only a GPU other agents fill), the
// detail says so, not "(overcommits; 0 does not)", which read as a
// request of 0 that fits clear.
func TestNoClearFitSaysAnyWould(t *testing.T) {
	m := newTestFleet(t, 80, 24)
	var n *fleet.Node
	for range m.Rows {
		if c := &m.fl.Nodes[m.Rows[m.Cursor]]; c.Snap != nil && c.State == fleet.Live && c.Sum.Slot != "" {
			n = c
			break
		}
		fleetPress(m, "j")
	}
	if n == nil {
		t.Fatal("no live node with GPUs in the fixture fleet: nothing tested")
	}
	n.Sum.LargestOvercommits, n.Sum.LargestClear = true, model.Zero
	s := stripANSI(fleetScreen(m))
	want := "the largest " + string(n.Sum.Slot) + " request that fits: " + n.Sum.Largest.String() + " (overcommits, as any would)"
	if !strings.Contains(s, want) || strings.Contains(s, "0 does not") {
		t.Errorf("the detail does not say %q:\n%s", want, s)
	}
}
