package fleet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// shortNode is a node of three 1.00-share GPUs, five cores and 64 GiB,
// split between two agents: a1 has GPU A and cores 0-3, a2 GPUs B and C
// and core 4; no kernels.
func shortNode() *model.Snapshot {
	gpu := func(id string) model.Device {
		return model.Device{ID: model.DeviceID(id), Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount,
			Capacity: model.MustDec("1.00"), NUMANode: 0}
	}
	devs := []model.Device{gpu("A"), gpu("B"), gpu("C")}
	for i := range 5 {
		devs = append(devs, model.Device{ID: model.DeviceID(fmt.Sprint(i)), Name: "cpu", Slot: model.SlotCPU, SlotType: model.SlotTypeCount,
			Capacity: model.One, Index: i, NUMANode: 0})
	}
	devs = append(devs, model.Device{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes,
		Capacity: model.NewDec(64<<30, 0), NUMANode: -1})
	s := &model.Snapshot{Node: "n", Devices: devs, Agents: []model.Agent{
		{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"A"}, "cpu": {"0", "1", "2", "3"}}, Mem: model.NewDec(32<<30, 0)},
		{ID: "a2", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"B", "C"}, "cpu": {"4"}}, Mem: model.NewDec(32<<30, 0)},
	}}
	s.SetKernels(nil)
	return s
}

// TestFitShortFromTheClosestAgent: --fit's short is what the closest
// agent misses, every slot of it from that one agent. cuda.shares=2.5 on
// agents with 1.00 and 2.00 free is 0.50 short (a2), not 1.50 (a1, the
// first in config order); with cpu=2 as well, a1 misses 1.50 of 2.50
// shares (0.6 of the request) and a2 0.50 shares and 1 of 2 cores (0.2 +
// 0.5): a1 is closest, short cuda.shares 1.50 alone, not mixed with a2's
// missing core.
func TestFitShortFromTheClosestAgent(t *testing.T) {
	s := shortNode()
	for _, tc := range []struct{ req, want string }{
		{"cuda.shares=2.5", "a2: cuda.shares 0.50"},
		{"cuda.shares=2.5,cpu=2", "a1: cuda.shares 1.50"},
		// a1: 1 core of 5 missing (0.2); a2: 4 of 5 (0.8).
		{"cuda.shares=1,cpu=5", "a1: cpu 1"},
		// a1: 2.50 of 3.5 shares and 1 of 5 cores (0.91); a2: 1.50 and 4
		// (1.23): both slots from a1.
		{"cuda.shares=3.5,cpu=5", "a1: cuda.shares 2.50, cpu 1"},
		{"cuda.shares=0.5", "fits"},
	} {
		req, err := ParseRequest(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		f := FitRequest(s, req, Settings{})
		got := "fits"
		if !f.OK {
			var parts []string
			for _, x := range f.Short {
				parts = append(parts, fmt.Sprintf("%s %s", x.Slot, x.Amount))
			}
			got = string(f.Closest) + ": " + strings.Join(parts, ", ")
		}
		if got != tc.want {
			t.Errorf("%s: short %q, want %q (%s)", tc.req, got, tc.want, f.Reason)
		}
		if j := fitJSON(f); !f.OK && j.ShortAgent != string(f.Closest) {
			t.Errorf("%s: JSON short_agent %q", tc.req, j.ShortAgent)
		}
	}
}

// TestFitFragmentedWording: with fragmentation disallowed, Backend.AI's
// check refuses a request as fragmented before it counts what is free, so
// the reason says which it is: enough free in total (a2: 0.60 over two
// GPUs for 0.5) or less than asked (a1: 0.30 on one GPU), each with where
// the free shares lie, "1 piece" or "2 pieces".
func TestFitFragmentedWording(t *testing.T) {
	s := shortNode()
	s.SetKernels([]*model.Kernel{
		{ID: "k1", Agent: "a1", State: model.KernelOK, Alloc: model.Allocations{"cuda.shares": {"A": model.MustDec("0.70")}}},
		{ID: "k2", Agent: "a2", State: model.KernelOK, Alloc: model.Allocations{"cuda.shares": {"B": model.MustDec("0.70"), "C": model.MustDec("0.70")}}},
	})
	req, err := ParseRequest("cuda.shares=0.5")
	if err != nil {
		t.Fatal(err)
	}
	f := FitRequest(s, req, Settings{Settings: placement.Settings{ForbidFragmentation: true}})
	want := "agent a1: fragmented: 0.30 free, less than the 0.5 cuda.shares requested; with fragmentation disallowed, " +
		"Backend.AI refuses it as fragmented before it counts what is free (cuda.shares free in 1 piece; 0.30 of it stranded for this size); " +
		"agent a2: fragmented: 0.60 free, enough for the 0.5 cuda.shares requested in total, but not on few enough devices to place it " +
		"without fragmentation (cuda.shares free in 2 pieces; 0.60 of it stranded for this size)"
	if f.OK || f.ErrKind != "FractionalResourceFragmented" || f.Reason != want {
		t.Errorf("ok %v %s:\n got %s\nwant %s", f.OK, f.ErrKind, f.Reason, want)
	}
	if len(f.Short) != 0 {
		t.Errorf("short %v: a2 has enough free in total", f.Short)
	}
}

// TestFitSlotTheNodeLacks: a request for cuda.shares on a node of whole
// GPUs (cuda.device) is refused, naming the slots it has; under 1 it
// "fitted" with nothing placed, as the allocators never saw the slot.
func TestFitSlotTheNodeLacks(t *testing.T) {
	s := shortNode()
	for i := range s.Devices {
		if s.Devices[i].Slot == model.SlotCUDAShares {
			s.Devices[i].Slot, s.Devices[i].Capacity = model.SlotCUDADevice, model.One
		}
	}
	for _, r := range []string{"cuda.shares=0.5", "cuda.shares=0.01", "cuda.shares=2", "cpu=1,cuda.shares=0.5"} {
		req, err := ParseRequest(r)
		if err != nil {
			t.Fatal(err)
		}
		f := FitRequest(s, req, Settings{})
		if f.OK || f.ErrKind != KindNoSuchSlot || f.Reason != "no device of this node has cuda.shares (its slots: cpu, cuda.device, mem)" {
			t.Errorf("%s: %+v", r, f)
		}
	}
	req, _ := ParseRequest("cuda.device=1")
	if f := FitRequest(s, req, Settings{}); !f.OK {
		t.Errorf("cuda.device=1: %+v", f)
	}
}
