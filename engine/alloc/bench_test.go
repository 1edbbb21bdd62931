package alloc

import (
	"fmt"
	"github.com/fgtop/fgtop/internal/testfix"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// benchGPUMap is 16 one-share GPUs, 8 per NUMA node, with some kernels
// already placed on both nodes.
func benchGPUMap(b *testing.B) *FractionMap {
	b.Helper()
	devs := make([]DeviceSlot, 16)
	for i := range devs {
		devs[i] = DeviceSlot{ID: model.DeviceID(fmt.Sprintf("GPU-%02d", i)), Slot: model.SlotCUDAShares,
			SlotType: model.SlotTypeCount, Capacity: dec("1.00"), NUMANode: intp(i / 8)}
	}
	m := NewFractionMap(devs, Evenly, dec("0.01"), nil)
	existing := Allocation{{Slot: model.SlotCUDAShares, Shares: []Share{
		{"GPU-00", dec("0.50")}, {"GPU-01", dec("0.25")}, {"GPU-03", dec("1.00")},
		{"GPU-09", dec("0.30")}, {"GPU-12", dec("0.60")}, {"GPU-15", dec("0.10")},
	}}}
	if err := m.Apply(existing); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkFractionEvenly is one placement: cuda.shares=1.2, EVENLY,
// fragmentation allowed, first device type with INTERLEAVED affinity, on a
// fresh clone of a map that was never used (so every iteration also derives
// the map's free capacities and orders, which a preview's Try reuses from
// the live map: see BenchmarkTryFractionEvenly).
func BenchmarkFractionEvenly(b *testing.B) {
	base := benchGPUMap(b)
	r := req("cuda.shares", "1.2")
	hint := &AffinityHint{Policy: Interleaved}
	b.ReportAllocs()
	defer testfix.CPUClock(b)()
	for b.Loop() {
		m := base.Clone()
		if _, err := m.Allocate(r, hint, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFractionEvenlyNoFrag is the same with the fragmentation guard.
func BenchmarkFractionEvenlyNoFrag(b *testing.B) {
	base := benchGPUMap(b)
	r := req("cuda.shares", "1.2")
	hint := &AffinityHint{Policy: Interleaved}
	b.ReportAllocs()
	defer testfix.CPUClock(b)()
	for b.Loop() {
		m := base.Clone()
		if _, err := m.Allocate(r, hint, Options{ForbidFragmentation: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDiscreteCPU places cpu=8 on 64 cores (32 per NUMA node, some
// busy), following a GPU on NUMA node 1.
func BenchmarkDiscreteCPU(b *testing.B) {
	base := NewDiscreteMap(cores(64, 32), Evenly, nil)
	var busy []Share
	for i := 0; i < 64; i += 3 {
		busy = append(busy, Share{model.DeviceID(fmt.Sprint(i)), dec("1")})
	}
	if err := base.Apply(Allocation{{Slot: model.SlotCPU, Shares: busy}}); err != nil {
		b.Fatal(err)
	}
	r := req("cpu", "8")
	hint := &AffinityHint{Policy: Interleaved, Devices: []HintDevice{{Name: "cuda", ID: "GPU-09", NUMANode: intp(1)}}}
	b.ReportAllocs()
	defer testfix.CPUClock(b)()
	for b.Loop() {
		m := base.Clone()
		if _, err := m.Allocate(r, hint, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTryFractionEvenly is BenchmarkFractionEvenly as a preview runs
// it: Try on the live map, whose derived state is built once.
func BenchmarkTryFractionEvenly(b *testing.B) {
	maps := map[model.DeviceName]Map{"cuda": benchGPUMap(b)}
	r := req("cuda.shares", "1.2")
	order := []model.DeviceName{"cuda"}
	b.ReportAllocs()
	defer testfix.CPUClock(b)()
	for b.Loop() {
		if _, err := Try(maps, r, order, Interleaved, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
