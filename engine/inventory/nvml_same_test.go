//go:build cgo && linux

package inventory

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// TestNVMLSameReadingSameTelemetry: a GPU whose readings hold still
// publishes the telemetry of the poll before (the same pointer: no
// allocation, and the engine's comparison is a pointer compare); a
// reading that moves gets a telemetry of its own, and the one published
// before is left as it was (snapshots hold it).
func TestNVMLSameReadingSameTelemetry(t *testing.T) {
	m := newDGX(t, "dgxh100")
	var temp atomic.Uint32
	temp.Store(40)
	m.devs[1].GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return temp.Load(), nvml.SUCCESS }
	src := NewNVML(m.lib, nvmlOpts(t, NVMLOptions{}), nil)
	ctx := context.Background()
	poll := func() *Inventory {
		t.Helper()
		inv, err := src.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	a, b := poll(), poll()
	ga, gb := gpus(a), gpus(b)
	if len(ga) != 8 || len(gb) != 8 {
		t.Fatalf("%d and %d GPUs", len(ga), len(gb))
	}
	for i := range ga {
		if ga[i].Telemetry == nil || ga[i].Telemetry != gb[i].Telemetry {
			t.Errorf("GPU %d: a still reading is published anew", i)
		}
	}
	if !Equal(a, b) {
		t.Error("two still readings are unequal")
	}
	temp.Store(41)
	c := poll()
	gc := gpus(c)
	if gc[1].Telemetry == gb[1].Telemetry || gc[1].Telemetry.TempC.V != 41 || gb[1].Telemetry.TempC.V != 40 {
		t.Errorf("GPU 1 moved: new %+v, published before %+v", gc[1].Telemetry.TempC, gb[1].Telemetry.TempC)
	}
	if gc[0].Telemetry != gb[0].Telemetry {
		t.Error("GPU 0 held still, yet its telemetry is new")
	}
	if Equal(b, c) {
		t.Error("a moved reading compares equal")
	}
}

// TestNVMLSameReadingSameInventory: a poll that reads what the last one
// read returns the last Inventory itself; a change of any reading, in
// turn (a GPU's telemetry, its processes, a slow value, a lost GPU, the
// host's affinity), gives a new one, equal to what a source without the
// last reading to return reads, and a poll after it returns that one
// again.
func TestNVMLSameReadingSameInventory(t *testing.T) {
	m := newDGX(t, "dgxh100")
	temp, capMW := uint32(40), uint32(700000)
	var procs []nvml.ProcessInfo
	lost := false
	m.devs[1].GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return temp, nvml.SUCCESS }
	m.devs[2].GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return procs, nvml.SUCCESS }
	m.devs[3].GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return capMW, nvml.SUCCESS }
	mem := m.devs[4].GetMemoryInfoFunc
	m.devs[4].GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		if lost {
			return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST
		}
		return mem()
	}
	env := hostLayout{online: "0-3", memKB: 16 << 20}.write(t)
	opts := nvmlOpts(t, NVMLOptions{SlowEvery: -1})
	src := NewNVML(m.lib, opts, env.host(time.Hour))
	// ref reads the same GPUs, but always builds its reading anew.
	ref := NewNVML(m.lib, opts, env.host(time.Hour))
	ctx := context.Background()
	poll := func(s *NVMLSource) *Inventory {
		t.Helper()
		inv, err := s.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return inv
	}
	// Every reading returned stays as it was: the source reuses its own
	// buffers, never one a reading holds.
	type kept struct{ inv, was *Inventory }
	var keep []kept
	hold := func(inv *Inventory) {
		was := *inv
		was.Devices = slices.Clone(inv.Devices)
		was.Issues = slices.Clone(inv.Issues)
		was.SlotTypes = maps.Clone(inv.SlotTypes)
		keep = append(keep, kept{inv, &was})
	}
	defer func() {
		for i, k := range keep {
			if !Equal(k.inv, k.was) || len(k.inv.Devices) != len(k.was.Devices) {
				t.Errorf("reading %d changed after it was returned", i)
			}
		}
	}()
	last := poll(src)
	hold(last)
	if again := poll(src); again != last {
		t.Fatal("a poll that read the same built a new reading")
	}
	for _, step := range []struct {
		name   string
		change func()
	}{
		{"a GPU's temperature", func() { temp = 41 }},
		{"a process on a GPU", func() { procs = []nvml.ProcessInfo{{Pid: 4242, UsedGpuMemory: 1 << 30}} }},
		{"the enforced power limit", func() { capMW = 650000 }},
		{"a GPU lost", func() { lost = true }},
		{"the host's affinity", func() { env.aff = []int{0, 1} }},
	} {
		step.change()
		got := poll(src)
		hold(got)
		if got == last || Equal(got, last) {
			t.Fatalf("%s: the reading did not change", step.name)
		}
		ref.prevInv = nil
		if want := poll(ref); !Equal(got, want) {
			t.Fatalf("%s: got\n%+v\nwant (a new source)\n%+v", step.name, got, want)
		}
		if again := poll(src); again != got {
			t.Fatalf("%s: a poll after it that read the same built a new reading", step.name)
		}
		last = got
	}
}
