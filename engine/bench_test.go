package engine

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/resourcefile"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/internal/testfix"
	"github.com/fgtop/fgtop/model"
)

// loadedState returns a state holding n kernels parsed from the fixtures,
// spread over the fixture node's four GPUs, and the two specs it alternates.
func loadedState(b testing.TB, n int) (*state, []*resourcefile.Spec) {
	b.Helper()
	inv, err := mockSource(b).Poll(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	var files [][]byte
	for _, name := range []string{"resource.cuda-shares-single.txt", "resource.cuda-shares-split.txt", "resource.cpu-only.txt"} {
		files = append(files, readFixture(b, name))
	}
	parse := func(i int) *resourcefile.Spec {
		s, err := resourcefile.Parse(files[i%len(files)], inv.SlotTypes)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	st := newState(&Options{Node: "bench", Roots: []scratch.Root{{Path: "/r", Agent: "a"}}, Clock: func() time.Time { return time.Unix(0, 0) }})
	st.setInventory(inv)
	// Each kernel gets its own parsed spec, as from its own file.
	for i := 0; i < n; i++ {
		id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-000000000000", i))
		st.upsertKernel(kernelRead{root: "/r", id: id, path: "/r/x", spec: parse(i), rec: benchRecord, recKnown: true})
	}
	specs := []*resourcefile.Spec{parse(0), parse(1)}
	st.snapshot()
	return st, specs
}

// benchRecord is every bench kernel's recovery.json: attribution by the
// record is part of the update's cost.
var benchRecord = &model.KernelRecord{AgentID: "a", SessionType: "batch", Image: "cr.backend.ai/stable/python:3.12"}

// BenchmarkUpdate measures engine time for one changed resource.txt: the
// kernel's old contribution subtracted, the new one added, and a new
// immutable snapshot published. The target is ≤ 1 ms, the same at 100 and
// at 10,000 kernels.
func BenchmarkUpdate(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 50000} {
		b.Run(fmt.Sprintf("kernels=%d", n), func(b *testing.B) {
			st, specs := loadedState(b, n)
			// Each kernel alternates between the two specs, so that every
			// update is a real change whatever n is (with specs[i%2] and an
			// even n, a kernel always got the same spec back: after the
			// first n updates nothing changed at all).
			turn := make([]uint8, n)
			b.ReportAllocs()
			b.ResetTimer()
			defer testfix.CPUClock(b)()
			for i := 0; i < b.N; i++ {
				j := (i * 7919) % n
				turn[j] ^= 1
				id := model.KernelID(fmt.Sprintf("%08x-0000-4000-8000-000000000000", j))
				st.upsertKernel(kernelRead{root: "/r", id: id, path: "/r/x", spec: specs[turn[j]], rec: benchRecord, recKnown: true})
				st.snapshot()
			}
		})
	}
}

// BenchmarkMemoryPerKernel reports the heap the engine keeps per kernel.
func BenchmarkMemoryPerKernel(b *testing.B) {
	const n = 10000
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, _ := loadedState(b, n)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/kernel")
		runtime.KeepAlive(st)
	}
}
