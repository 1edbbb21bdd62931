package partition

import (
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestUnknownNote: with a working device source and GPUs whose capacity
// is unknown (the plugin settings were never read), the note says so and
// names the GPUs and the flags that tell, not --devices; with no
// accelerator source it still asks for --devices.
func TestUnknownNote(t *testing.T) {
	gpus := []model.Device{
		{Name: "cuda", ID: "GPU-a", Slot: model.SlotCUDAShares, CapacityUnknown: true},
		{Name: "cuda", ID: "GPU-b", Slot: model.SlotCUDAShares, Capacity: model.One},
		{Name: "cpu", ID: "0", Slot: "cpu", Capacity: model.One},
	}
	for _, tc := range []struct {
		name     string
		inv      Inventory
		want     []string
		dontWant string
	}{
		{"capacity unknown", Inventory{Devices: gpus, Source: model.SourceInfo{Kind: "nvml", Health: "ok", Detail: "NVML: 2 GPU(s)"}},
			[]string{"GPU-a", "--fgpu-capacity", "--plugin-config"}, "--devices"},
		{"no source", Inventory{Devices: gpus[2:], Source: model.SourceInfo{Kind: "none", Detail: "NVML: driver not loaded"}},
			[]string{"accelerator devices are unknown (NVML: driver not loaded)", "pass --devices"}, "--fgpu-capacity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.inv.UnknownNote()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			if strings.Contains(got, tc.dontWant) {
				t.Errorf("%q says %q", got, tc.dontWant)
			}
			if strings.Contains(got, "GPU-b") {
				t.Errorf("%q names GPU-b, whose capacity is known", got)
			}
		})
	}
}
