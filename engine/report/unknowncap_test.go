package report_test

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/report"
	"github.com/fgtop/fgtop/model"
)

// TestUnknownCapacityStatesNone: a GPU whose fractional capacity is
// unknown (the plugin settings were never read) has no capacity, free,
// kernel capacity or alloc-map ratio in the JSON, and reading the JSON
// back keeps it unknown; a GPU with a known capacity keeps all of them.
func TestUnknownCapacityStatesNone(t *testing.T) {
	held := model.MustDec("1.50")
	s := &model.Snapshot{
		Devices: []model.Device{
			{Name: "cuda", ID: "GPU-a", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, CapacityUnknown: true},
			{Name: "cuda", ID: "GPU-b", Slot: model.SlotCUDAShares, SlotType: model.SlotTypeCount, Capacity: model.MustDec("3.98")},
		},
		Usage: map[model.DeviceKey]*model.DeviceUsage{},
	}
	k := &model.Kernel{ID: "3f1c2b4a-5d6e-4f70-8a9b-0c1d2e3f4a5b", State: model.KernelOK,
		Alloc: model.Allocations{model.SlotCUDAShares: {"GPU-a": held, "GPU-b": held}},
		Use: &model.KernelUse{Devices: []model.DeviceUse{
			{Device: model.DeviceKey{Name: "cuda", ID: "GPU-a"}, Held: held, CapacityUnknown: true},
			{Device: model.DeviceKey{Name: "cuda", ID: "GPU-b"}, Held: held, Capacity: model.MustDec("3.98")},
		}}}
	for _, id := range []model.DeviceID{"GPU-a", "GPU-b"} {
		key := model.DeviceKey{Name: "cuda", ID: id}
		s.Usage[key] = &model.DeviceUsage{Key: key, Held: model.ResourceSlot{model.SlotCUDAShares: held}, Kernels: 1}
	}
	s.SetKernels([]*model.Kernel{k})
	j := report.FromSnapshot(s)
	if _, ok := j.AllocMapRatio["GPU-a"]; ok || j.AllocMapRatio["GPU-b"] != "0.3769" {
		t.Errorf("alloc_map_ratio %v, want GPU-b's 1.50/3.98 only", j.AllocMapRatio)
	}
	use := j.Kernels[0].Use.Devices
	if use[0].Capacity != nil || use[1].Capacity == nil || use[1].Capacity.String() != "3.98" {
		t.Errorf("kernel use capacities %v and %v, want absent and 3.98", use[0].Capacity, use[1].Capacity)
	}
	b, err := report.Marshal(j, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `"capacity":"0"`) {
		t.Errorf("a capacity of 0 stated: %s", b)
	}
	doc, _, err := report.ParseLine(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.Model()
	if err != nil {
		t.Fatal(err)
	}
	if u := m.Kernels()[0].Use.Devices; !u[0].CapacityUnknown || u[1].CapacityUnknown {
		t.Errorf("read back: %+v", u)
	}
	if !m.AllocRatioUnknown("GPU-a") || m.AllocRatioUnknown("GPU-b") {
		t.Error("read back: GPU-a's ratio must stay unknown, GPU-b's known")
	}
}
