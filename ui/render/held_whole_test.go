package render

import (
	"testing"

	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/ui/kit"
)

// TestDevRowHeldWhole: a MIG slice held as a resource.txt writes it
// ("1.00") reads 1/1, as a whole device and a core held do; an fGPU's
// shares keep their digits (h27demo: the demo's console showed 1.00/1).
func TestDevRowHeldWhole(t *testing.T) {
	mig := model.Device{Name: "cuda", ID: "MIG-5e3d9a41-02c7-4f1b-9d86-0c1a2b3ca105/4/0", Parent: "5e3d9a41-02c7-4f1b-9d86-0c1a2b3ca105",
		Slot: "cuda.device:20g-mig", Capacity: model.MustDec("1")}
	gpu := model.Device{Name: "cuda", ID: "5e3d9a41-02c7-4f1b-9d86-0c1a2b3ca103", Slot: model.SlotCUDAShares, Capacity: model.MustDec("1.00")}
	whole := model.Device{Name: "cuda", ID: "5e3d9a41-02c7-4f1b-9d86-0c1a2b3ca104", Slot: model.SlotCUDADevice, Capacity: model.MustDec("1")}
	s := &model.Snapshot{
		Devices: []model.Device{gpu, whole, mig},
		Usage: map[model.DeviceKey]*model.DeviceUsage{
			mig.Key():   {Key: mig.Key(), Held: model.ResourceSlot{mig.Slot: model.MustDec("1.00")}, Kernels: 1},
			gpu.Key():   {Key: gpu.Key(), Held: model.ResourceSlot{gpu.Slot: model.MustDec("0.40")}, Kernels: 1},
			whole.Key(): {Key: whole.Key(), Held: model.ResourceSlot{whole.Slot: model.MustDec("1.0")}, Kernels: 1},
		},
	}
	d := Derive(s, DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
	want := map[model.DeviceID]string{mig.ID: "1/1", gpu.ID: "0.40/1.00", whole.ID: "1/1"}
	seen := 0
	for _, r := range d.Devs {
		if w, ok := want[r.Dev.ID]; ok {
			seen++
			if got := r.Held + "/" + r.Capacity; got != w {
				t.Errorf("%s: %s, want %s", r.Dev.ID, got, w)
			}
		}
	}
	if seen != len(want) {
		t.Fatalf("%d of %d devices derived: %+v", seen, len(want), d.Devs)
	}
}
