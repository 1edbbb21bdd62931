package model

import (
	"fmt"
	"testing"
)

// TestAllocRatio pins the cases upstream's own tests pin
// (tests/agent/test_resources.py, TestScanGPUAllocMap and
// TestNormalizeDeviceAlloc, domain/backendai.md §2).
func TestAllocRatio(t *testing.T) {
	dev := func(id DeviceID, slot SlotName, capacity string) Device {
		return Device{ID: id, Name: "cuda", Slot: slot, Capacity: MustDec(capacity)}
	}
	k := func(id KernelID, al Allocations) *Kernel { return &Kernel{ID: id, Alloc: al} }
	d := func(s string) Dec { return MustDec(s) }
	const mig SlotName = "cuda.device:1g.5gb-mig"
	cases := []struct {
		name    string
		devices []Device
		kernels []*Kernel
		want    string
	}{
		{"0.5 of capacity 2", []Device{dev("0", SlotCUDAShares, "2")},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"0": d("0.5")}})}, "map[0:0.2500]"},
		{"0.5 + 0.25 of capacity 1, two kernels", []Device{dev("0", SlotCUDAShares, "1")},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"0": d("0.5")}}), k("b", Allocations{SlotCUDAShares: {"0": d("0.25")}})}, "map[0:0.7500]"},
		{"1 of capacity 3", []Device{dev("0", SlotCUDADevice, "3")},
			[]*Kernel{k("a", Allocations{SlotCUDADevice: {"0": d("1")}})}, "map[0:0.3333]"},
		{"capacity unknown: the raw amount", nil,
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"0": d("0.5")}})}, "map[0:0.5000]"},
		{"capacity zero: the raw amount", []Device{dev("0", SlotCUDAShares, "0")},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"0": d("0.5")}})}, "map[0:0.5000]"},
		{"capacity for another slot only: the raw amount", []Device{dev("0", SlotCUDAShares, "13.5")},
			[]*Kernel{k("a", Allocations{SlotCUDADevice: {"0": d("1")}})}, "map[0:1.0000]"},
		{"shares and a whole device on one GPU, each by its own capacity", []Device{dev("0", SlotCUDAShares, "4"), {ID: "0", Name: "cuda", Slot: SlotCUDADevice, Capacity: One}},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"0": d("1")}}), k("b", Allocations{SlotCUDADevice: {"0": d("1")}})}, "map[0:1.2500]"},
		{"MIG slots count, cpu and mem never appear", []Device{dev("MIG-x/3/0", mig, "1"), {ID: "0", Name: "cpu", Slot: SlotCPU, Capacity: One}},
			[]*Kernel{k("a", Allocations{mig: {"MIG-x/3/0": d("1")}, SlotCPU: {"0": d("1")}, SlotMem: {"root": d("1073741824")}})}, "map[MIG-x/3/0:1.0000]"},
		{"other accelerators never appear", nil,
			[]*Kernel{k("a", Allocations{"rocm.device": {"0": d("1")}})}, "map[]"},
		{"1/3 + 1/3 rounds the exact sum, not each term", []Device{dev("0", SlotCUDAShares, "3")},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"0": d("1")}}), k("b", Allocations{SlotCUDAShares: {"0": d("1")}})}, "map[0:0.6667]"},
		{"half-even at the fifth place", []Device{dev("0", SlotCUDAShares, "1")},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"0": d("0.00005")}}), k("b", Allocations{SlotCUDAShares: {"1": d("0.00015")}})}, "map[0:0.0000 1:0.0002]"},
		{"fractional capacity unknown (settings never read): left out, not a ratio over 1",
			[]Device{{ID: "GPU-a", Name: "cuda", Slot: SlotCUDAShares, CapacityUnknown: true}, dev("GPU-b", SlotCUDAShares, "3.98")},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"GPU-a": d("1.5"), "GPU-b": d("1.99")}})}, "map[GPU-b:0.5000]"},
		{"mock plugin's settings unread: shares on a GPU whose slot and capacity are a guess: left out",
			[]Device{{ID: "u0", Name: "cuda", Slot: SlotCUDADevice, CapacityUnknown: true}, dev("u1", SlotCUDAShares, "1")},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"u0": d("1.6"), "u1": d("0.5")}})}, "map[u1:0.5000]"},
		{"over-committed above 1", []Device{dev("0", SlotCUDAShares, "1")},
			[]*Kernel{k("a", Allocations{SlotCUDAShares: {"0": d("0.8")}}), k("b", Allocations{SlotCUDAShares: {"0": d("0.4")}})}, "map[0:1.2000]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := &Snapshot{Devices: c.devices, Usage: usageOf(c.kernels)}
			s.SetKernels(c.kernels)
			got := map[DeviceID]string{}
			for id, v := range s.AllocRatio() {
				got[id] = QuantizeAllocRatio(v).String()
			}
			if fmt.Sprint(got) != c.want {
				t.Fatalf("got %v, want %s", got, c.want)
			}
		})
	}
}

// usageOf sums the kernels' allocations per device, as the engine does.
func usageOf(ks []*Kernel) map[DeviceKey]*DeviceUsage {
	out := map[DeviceKey]*DeviceUsage{}
	for _, k := range ks {
		for slot, devs := range k.Alloc {
			for id, v := range devs {
				key := DeviceKey{Name: slot.DeviceName(), ID: id}
				u := out[key]
				if u == nil {
					u = &DeviceUsage{Key: key, Held: ResourceSlot{}}
					out[key] = u
				}
				u.Held[slot] = u.Held[slot].Add(v)
			}
		}
	}
	return out
}
