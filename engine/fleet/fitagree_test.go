package fleet

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// TestLargestAgreesWithFit: FITS≤ and --fit follow one rule on the same
// snapshot. Every size up to the largest fit is a --fit "fits" and every
// size above is not; a size --fit places only by overcommitting counts
// (the agent's allocator would place it), and FITS≤ says so where its
// own size overcommits. The tour found the demo's FITS≤ at 0 next to
// `--fit cuda.shares=0.1` answering "fits" with an OVERCOMMIT, exit 0.
func TestLargestAgreesWithFit(t *testing.T) {
	sawOver := false
	for seed := int64(1); seed <= 8; seed++ {
		s := demoSnapshot(t, seed)
		set := Settings{}
		sum := Summarize(s, set)
		step := SettingsFor(s, set).Quantum
		if step.IsZero() {
			step = placement.DefaultQuantum
		}
		for k := int64(1); ; k++ {
			amt := step.Mul(model.DecFromInt64(k))
			f := FitRequest(s, alloc.Request{{Slot: sum.Slot, Amount: amt}}, set)
			if within := !sum.Largest.Less(amt); f.OK != within {
				t.Fatalf("seed %d: --fit %s %s=%s (overcommit %v: %s), FITS≤ %s", seed, map[bool]string{true: "fits", false: "does not fit"}[f.OK], sum.Slot, amt, f.Overcommit, f.Reason, sum.Largest)
			}
			if f.OK && f.Overcommit {
				sawOver = true
			}
			if sum.Largest.Less(amt) {
				break
			}
		}
		if sum.LargestOvercommits {
			f := FitRequest(s, alloc.Request{{Slot: sum.Slot, Amount: sum.Largest}}, set)
			if !f.Overcommit {
				t.Errorf("seed %d: FITS≤ %s marked as overcommitting, --fit of it overcommits nothing", seed, sum.Largest)
			}
			// --once says it too: JSON and the table.
			j := nodeJSON(&Node{Addr: "a:1", Name: s.Node, State: Live, Snap: s, Sum: sum})
			if !j.LargestOvercommits || j.LargestClear == nil || !j.LargestClear.Equal(sum.LargestClear) {
				t.Errorf("seed %d: JSON largest_fit_overcommits %v largest_fit_clear %v, want true and %s", seed, j.LargestOvercommits, j.LargestClear, sum.LargestClear)
			}
			var b strings.Builder
			WriteTable(&b, JSONFleet{Nodes: []JSONNode{j}})
			if !strings.Contains(b.String(), " "+sum.Largest.String()+"! ") {
				t.Errorf("seed %d: the table's LARGEST is not marked:\n%s", seed, b.String())
			}
		}
	}
	if !sawOver {
		t.Fatal("no demo seed fits a size only by overcommitting: the case the tour found is not tested")
	}
}
