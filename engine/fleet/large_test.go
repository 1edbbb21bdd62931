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

// bigSnapshot is a node of n 1.00-share GPUs owned by one agent, with
// kernels holding random hundredths on a random part of them (none when
// busy is 0): issue 23's node with many devices.
func bigSnapshot(n int, busy float64, seed uint64) *model.Snapshot {
	r := rand.New(rand.NewPCG(seed, 23))
	devs := make([]model.Device, 0, n+1)
	ids := make([]model.DeviceID, 0, n)
	for i := range n {
		id := model.DeviceID(fmt.Sprintf("gpu-%05d", i))
		ids = append(ids, id)
		devs = append(devs, model.Device{ID: id, Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount,
			Capacity: model.MustDec("1.00"), Index: i, NUMANode: i % 2})
	}
	devs = append(devs, model.Device{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes,
		Capacity: model.NewDec(64<<30, 0), NUMANode: -1})
	s := &model.Snapshot{Node: "big", Devices: devs, Agents: []model.Agent{
		{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": ids}, Mem: model.NewDec(64<<30, 0)},
	}}
	var ks []*model.Kernel
	for i, id := range ids {
		if r.Float64() >= busy {
			continue
		}
		amt := model.NewDec(int64(1+r.IntN(99)), -2)
		ks = append(ks, &model.Kernel{ID: model.KernelID(fmt.Sprintf("k%05d", i)), Agent: "a1",
			Slots: model.ResourceSlot{model.SlotCUDAShares: amt},
			Alloc: model.Allocations{model.SlotCUDAShares: {id: amt}}})
	}
	s.SetKernels(ks)
	return s
}

// TestSummarizeLargeNode times the summary's search on issue 23's large
// nodes (more devices than MaxNodeDevices, so Summarize itself would skip
// it: this is what the cap guards against, measured); it fails when
// 10,000 devices take more than 20 s (the quadratic search took minutes
// at 2,000).
func TestSummarizeLargeNode(t *testing.T) {
	sizes := []int{500, 2000, 10000}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, n := range sizes {
		for _, busy := range []float64{0, 0.5} {
			for _, ps := range []placement.Settings{{}, {Strategy: alloc.Fill}, {Quantum: model.MustDec("0.25")}, {ForbidFragmentation: true}} {
				if ps.ForbidFragmentation && raceOn && n > 2000 {
					continue // a few seconds under the race detector
				}
				s := bigSnapshot(n, busy, 1)
				set := SettingsFor(s, Settings{Settings: ps})
				start := time.Now()
				l := largest(s, model.SlotCUDAShares, set)
				d := time.Since(start)
				free := placement.NewPlanner(s, set).Agents()[0].Node.FreeOf(model.SlotCUDAShares)
				t.Logf("%5d devices, busy %.1f, %-22s %8s (largest %s of free %s)", n, busy, settingsName(ps), d.Round(time.Millisecond), l, free)
				if d > 20*time.Second {
					t.Errorf("%d devices: %s", n, d)
				}
			}
		}
	}
}

func settingsName(ps placement.Settings) string {
	switch {
	case ps.Strategy == alloc.Fill:
		return "FILL"
	case !ps.Quantum.IsZero():
		return "EVENLY quantum " + ps.Quantum.String()
	case ps.ForbidFragmentation:
		return "EVENLY no fragmentation"
	}
	return "EVENLY"
}

// largestBisect is largest as it was before issue 23: a bisection from
// half of what each agent has free. The reference the new search is
// checked against.
func largestBisect(s *model.Snapshot, slot model.SlotName, settings placement.Settings) model.Dec {
	best := model.Zero
	step := searchStep(slot, settings)
	planner := placement.NewPlanner(s, settings)
	for _, st := range planner.Agents() {
		n, ok := agentCeiling(st, slot, step)
		if !ok {
			continue
		}
		try := func(k int64) (alloc.KernelAllocation, bool) {
			got, err := st.Node.Try(alloc.Request{{Slot: slot, Amount: step.Mul(model.DecFromInt64(k))}})
			return got, err == nil
		}
		lo := int64(0)
		for lo < n {
			mid := lo + (n-lo+1)/2
			if _, ok := try(mid); ok {
				lo = mid
			} else {
				n = mid - 1
			}
		}
		if v := step.Mul(model.DecFromInt64(lo)); best.Less(v) {
			best = v
		}
	}
	if best.IsZero() {
		return model.Zero
	}
	return best
}

// TestTopFitIsABisection: topFit finds the same k as a plain bisection
// for every threshold of a monotone predicate.
func TestTopFitIsABisection(t *testing.T) {
	for n := int64(0); n <= 70; n++ {
		for thr := int64(0); thr <= n+1; thr++ {
			calls := 0
			got := topFit(n, func(k int64) bool { calls++; return k <= thr })
			if want := min(thr, n); got != want {
				t.Fatalf("n %d, fits up to %d: topFit %d, want %d", n, thr, got, want)
			}
			if calls > 4*(bitsLen(n)+1) {
				t.Fatalf("n %d: %d calls", n, calls)
			}
		}
	}
}

func bitsLen(n int64) int {
	b := 0
	for ; n > 0; n >>= 1 {
		b++
	}
	return b
}

// TestLargestMatchesTheBisection: on random nodes (sizes, holdings,
// strategies, quanta, fragmentation forbidden, min memory), the new
// search gives what the old bisection gave.
func TestLargestMatchesTheBisection(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 3))
	below := 0
	for trial := range 60 {
		n := 1 + r.IntN(40)
		s := bigSnapshot(n, r.Float64(), uint64(trial))
		var ps placement.Settings
		switch trial % 5 {
		case 1:
			ps.Strategy = alloc.Fill
		case 2:
			ps.ForbidFragmentation = true
		case 3:
			ps.Quantum = model.MustDec("0.1")
		case 4:
			ps.Quantum = model.MustDec("0.25")
		}
		set := SettingsFor(s, Settings{Settings: ps})
		got, want := largest(s, model.SlotCUDAShares, set), largestBisect(s, model.SlotCUDAShares, set)
		if !got.Equal(want) {
			t.Fatalf("trial %d (%d devices, %+v): largest %s, the bisection %s", trial, n, ps, got, want)
		}
		if belowFree(s, set, got) {
			below++
		}
	}
	// Some answers lie below what is free, so the gallop and the
	// bisection after it ran, not only the first try.
	if below < 5 {
		t.Fatalf("only %d of 60 answers below the free capacity: the search below the top is untested", below)
	}
	// The demo node (slot-based, two agents, overcommits) is checked
	// against a linear scan by TestLargestIsTheAllocatorsAnswer.
}

func cmpOr(d, def model.Dec) model.Dec {
	if d.IsZero() {
		return def
	}
	return d
}

// BenchmarkLargest is the summary's search on issue 23's large nodes
// (half of the devices partly held), EVENLY with the default quantum.
func BenchmarkLargest(b *testing.B) {
	for _, n := range []int{500, 2000, 10000} {
		s := bigSnapshot(n, 0.5, 1)
		set := SettingsFor(s, Settings{})
		b.Run(fmt.Sprintf("devices=%d", n), func(b *testing.B) {
			for b.Loop() {
				largest(s, model.SlotCUDAShares, set)
			}
		})
	}
}

// TestClearFitIsBounded: clearFit never answers a size that is not clear,
// walks the first sizes below the top one by one (exact there), and makes
// at most clearFitLinear + log2(top) tries however far below the answer is.
func TestClearFitIsBounded(t *testing.T) {
	for _, tc := range []struct{ lo, upTo, want int64 }{
		{10, 10, 10}, {10, 7, 7}, {40, 9, 9}, {40, 0, 0}, {1000, 5, 3}, {1 << 40, 1, 1},
	} {
		calls := 0
		got := clearFit(tc.lo, func(k int64) bool { calls++; return k <= tc.upTo })
		if got != tc.want {
			t.Errorf("clearFit(%d) clear up to %d: %d, want %d", tc.lo, tc.upTo, got, tc.want)
		}
		if bound := clearFitLinear + 64; calls > bound {
			t.Errorf("clearFit(%d): %d tries, more than %d", tc.lo, calls, bound)
		}
	}
}

// BenchmarkLargestNoFragmentation is BenchmarkLargest with fragmentation
// forbidden, where the answer lies far below the free capacity (issue
// 23's superlinear path): the search capped by the fragmentation guard's
// bound, and (the baseline, at the sizes where it ends in minutes) not.
func BenchmarkLargestNoFragmentation(b *testing.B) {
	for _, n := range []int{500, 2000, 10000} {
		s := bigSnapshot(n, 0.5, 1)
		set := SettingsFor(s, Settings{Settings: placement.Settings{ForbidFragmentation: true}})
		for _, capped := range []bool{false, true} {
			if !capped && n > 2000 {
				continue
			}
			b.Run(fmt.Sprintf("devices=%d/capped=%v", n, capped), func(b *testing.B) {
				for b.Loop() {
					largestSearch(s, model.SlotCUDAShares, set, capped)
				}
			})
		}
	}
}
