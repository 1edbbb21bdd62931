package fleet

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/fleet"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// TestOvercommitSpansNameTheDevice: a CPU core a fit would put over
// capacity is named as a core ("cpu 4", not a bare "4"), and memory is
// said as a size.
func TestOvercommitSpansNameTheDevice(t *testing.T) {
	f := fleet.Fit{Devices: []placement.DeviceAfter{
		{Slot: model.SlotCPU, Device: "4", TotalAfter: model.MustDec("2"), Capacity: model.MustDec("1"), Overcommit: true},
		{Slot: model.SlotMem, Device: "root", TotalAfter: model.MustDec("549755813888"), Capacity: model.MustDec("274877906944"), Overcommit: true},
		{Slot: model.SlotCUDAShares, Device: "GPU-x", TotalAfter: model.MustDec("1.50"), Capacity: model.MustDec("1.00"), Overcommit: true},
	}}
	var b strings.Builder
	for _, sp := range overcommitSpans(f, deviceNames{{Name: "cuda", ID: "GPU-x"}: "GPU0"}) {
		b.WriteString(sp.Text)
	}
	got := b.String()
	want := " · cpu 4 would hold 2/1 across all agents · mem would hold 512g/256g across all agents · GPU0 would hold 1.50/1.00 across all agents"
	if got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}

// TestOvercommitNamesByPluginAndID: on a node where a CPU core and a GPU
// share an id (cuda_open lists a GPU it cannot identify by its index), a
// :fit that overcommits the core names the core, never the GPU: devices
// are named by plugin and id, as fleet --fit names them.
func TestOvercommitNamesByPluginAndID(t *testing.T) {
	s := &model.Snapshot{Node: "gpu-a", Devices: []model.Device{
		{ID: "0", Name: "cpu", Slot: model.SlotCPU, SlotType: model.SlotTypeCount, Capacity: model.MustDec("1"), NUMANode: 0},
		{ID: "0", Name: "cuda", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.MustDec("1.00"), Index: 0},
		{ID: "root", Name: "mem", Slot: model.SlotMem, SlotType: model.SlotTypeBytes, Capacity: model.NewDec(64<<30, 0), NUMANode: -1},
	}, Agents: []model.Agent{
		{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cpu": {"0"}, "cuda": {"0"}}, Mem: model.NewDec(32<<30, 0)},
		{ID: "a2", Owns: map[model.DeviceName][]model.DeviceID{"cpu": {"0"}, "cuda": {"0"}}, Mem: model.NewDec(32<<30, 0)},
	}}
	// a2 holds the core; a1's allocator does not see it and places there.
	one := model.MustDec("1")
	s.SetKernels([]*model.Kernel{{ID: "k1", Agent: "a2", Slots: model.ResourceSlot{model.SlotCPU: one},
		Alloc: model.Allocations{model.SlotCPU: {"0": one}}}})
	core := model.DeviceKey{Name: "cpu", ID: "0"}
	s.Usage = map[model.DeviceKey]*model.DeviceUsage{core: {Key: core, Held: model.ResourceSlot{model.SlotCPU: one}, Kernels: 1,
		ByAgent: map[model.AgentID]model.ResourceSlot{"a2": {model.SlotCPU: one}}}}
	req, err := fleet.ParseRequest("cpu=1")
	if err != nil {
		t.Fatal(err)
	}
	f := fleet.FitRequest(s, req, fleet.Settings{})
	if !f.OK || !f.Overcommit {
		t.Fatalf("cpu=1 on a core another agent holds: %+v, want a fit that overcommits", f)
	}
	var b strings.Builder
	for _, sp := range overcommitSpans(f, deviceLabels(s)) {
		b.WriteString(sp.Text)
	}
	if got, want := b.String(), " · cpu 0 would hold 2/1 across all agents"; got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
}
