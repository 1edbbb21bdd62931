package fleet

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// spreadSnapshot is a node of n devices of capacity 1.00 owned by one
// agent, each held by a kernel for a random amount drawn from few values
// (so that many devices share a free amount, where the guard's leftover
// quanta matter), some fully free.
func spreadSnapshot(n int, r *rand.Rand) *model.Snapshot {
	s := bigSnapshot(n, 0, 1)
	vals := []int64{0, 0, 1, 25, 33, 50, 50, 67, 75, 99, 100}
	var ks []*model.Kernel
	for i, d := range s.Devices {
		if d.Slot != model.SlotCUDAShares {
			continue
		}
		v := vals[r.IntN(len(vals))]
		if v == 0 {
			continue
		}
		amt := model.NewDec(v, -2)
		ks = append(ks, &model.Kernel{ID: model.KernelID(fmt.Sprintf("k%05d", i)), Agent: "a1",
			Slots: model.ResourceSlot{model.SlotCUDAShares: amt},
			Alloc: model.Allocations{model.SlotCUDAShares: {d.ID: amt}}})
	}
	s.SetKernels(ks)
	return s
}

// TestGuardBoundAdmitsNothingAbove: on random nodes, no request above
// guardBound places with fragmentation forbidden (EVENLY and FILL,
// quanta 0.01, 0.1, 0.25), every size between the bound and the free
// capacity tried through the allocator; and the bound is reached (the
// largest fit equals it) often enough that it is not a loose cap.
func TestGuardBoundAdmitsNothingAbove(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 4))
	tight := 0
	const trials = 80
	for trial := range trials {
		s, ps, n := guardTrial(r, trial, 24)
		set := SettingsFor(s, Settings{Settings: ps})
		step := cmpOr(set.Quantum, placement.DefaultQuantum)
		st := placement.NewPlanner(s, set).Agents()[0]
		bound := guardBound(st.Node.Plugin("cuda").Map().SlotFree(model.SlotCUDAShares), step)
		top, _ := st.Node.FreeOf(model.SlotCUDAShares).QuoInteger(step)
		hi, _ := top.Int64()
		for k := bound + 1; k <= hi; k++ {
			if _, err := st.Node.Try(alloc.Request{{Slot: model.SlotCUDAShares, Amount: step.Mul(model.DecFromInt64(k))}}); err == nil {
				t.Fatalf("trial %d (%d devices, %+v): %s places, above the guard's bound %s", trial, n, ps,
					step.Mul(model.DecFromInt64(k)), step.Mul(model.DecFromInt64(bound)))
			}
		}
		if l := largest(s, model.SlotCUDAShares, set); l.Equal(step.Mul(model.DecFromInt64(bound))) {
			tight++
		}
	}
	if tight < trials/4 {
		t.Fatalf("the largest fit reached the bound in only %d of %d nodes", tight, trials)
	}
}

// guardTrial is the node and settings of a trial: 1 to maxN devices,
// held at random or on a few shared values, fragmentation forbidden,
// EVENLY or FILL, quanta 0.01, 0.1 or 0.25.
func guardTrial(r *rand.Rand, trial, maxN int) (*model.Snapshot, placement.Settings, int) {
	n := 1 + r.IntN(maxN)
	var s *model.Snapshot
	if trial%2 == 0 {
		s = bigSnapshot(n, r.Float64(), uint64(trial))
	} else {
		s = spreadSnapshot(n, r)
	}
	ps := placement.Settings{ForbidFragmentation: true}
	if trial%3 == 1 {
		ps.Strategy = alloc.Fill
	}
	switch trial % 4 {
	case 1:
		ps.Quantum = model.MustDec("0.1")
	case 2:
		ps.Quantum = model.MustDec("0.25")
	}
	return s, ps, n
}

// belowFree says whether a largest fit lies below the node's free
// capacity, counted in the settings' steps: the search ran below its
// first try.
func belowFree(s *model.Snapshot, set placement.Settings, got model.Dec) bool {
	step := cmpOr(set.Quantum, placement.DefaultQuantum)
	free := placement.NewPlanner(s, set).Agents()[0].Node.FreeOf(model.SlotCUDAShares)
	top, _ := free.QuoInteger(step)
	return got.Less(step.Mul(top))
}

// TestGuardBoundChangesNoAnswer: with fragmentation forbidden, the
// search capped by guardBound answers what the uncapped one does, on
// random nodes (held at random or on a few shared values; EVENLY and
// FILL; quanta 0.01, 0.1, 0.25).
func TestGuardBoundChangesNoAnswer(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 5))
	below := 0
	for trial := range 120 {
		s, ps, n := guardTrial(r, trial, 48)
		set := SettingsFor(s, Settings{Settings: ps})
		got, want := largestSearch(s, model.SlotCUDAShares, set, true), largestSearch(s, model.SlotCUDAShares, set, false)
		if !got.Equal(want) {
			t.Fatalf("trial %d (%d devices, %+v): capped %s, uncapped %s", trial, n, ps, got, want)
		}
		if belowFree(s, set, got) {
			below++
		}
	}
	if below < 30 {
		t.Fatalf("only %d of 120 answers below the free capacity: the cap is barely exercised", below)
	}
}

// TestLargestNoFragmentationIsBounded times the summary with
// fragmentation forbidden on a node of 10,000 devices, half of them
// partly held, where the answer lies far below the free capacity: the
// search capped by the guard's bound spent 129 s here in the EVENLY search
// at the answer (windows of every size, each built), and 11 s at 2,000
// devices uncapped; now about a tenth of a second. It fails over 10 s,
// a margin for a loaded machine that a quadratic search cannot meet.
// (TestEvenlyFastIsNearLinear in engine/alloc counts the windows.)
func TestLargestNoFragmentationIsBounded(t *testing.T) {
	if raceOn {
		t.Skip("the race detector slows the allocator about twentyfold: this times it")
	}
	s := bigSnapshot(10000, 0.5, 1)
	set := SettingsFor(s, Settings{Settings: placement.Settings{ForbidFragmentation: true}})
	start := time.Now()
	l := largest(s, model.SlotCUDAShares, set)
	d := time.Since(start)
	t.Logf("10000 devices, fragmentation forbidden: largest %s in %s", l, d.Round(time.Millisecond))
	if d > 10*time.Second {
		t.Fatalf("10000 devices: %s", d)
	}
	// On this node the answer is the guard's bound itself (an O(n log n)
	// count of its own): a search that now refused the request there
	// would show.
	pl := placement.NewPlanner(s, set).Agents()[0].Node.Plugin("cuda")
	bound := guardBound(pl.Map().SlotFree(model.SlotCUDAShares), placement.DefaultQuantum)
	if want := placement.DefaultQuantum.Mul(model.DecFromInt64(bound)); !l.Equal(want) {
		t.Fatalf("10000 devices: largest %s, the guard's bound %s", l, want)
	}
}
