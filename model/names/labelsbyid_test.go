package names

import (
	"maps"
	"testing"

	"github.com/fgtop/fgtop/model"
)

func TestLabelsByID(t *testing.T) {
	for _, tt := range []struct {
		name string
		devs []model.Device
		want map[model.DeviceID]string
	}{
		{"GPUs by index, MIG by instance, no cpu or mem", []model.Device{
			{ID: "GPU-a", Name: "cuda", Index: 0}, {ID: "GPU-b", Name: "cuda", Index: 1},
			{ID: "MIG-GPU-b/4/0", Name: "cuda", Parent: "GPU-b"}, {ID: "0", Name: "cpu"}, {ID: "root", Name: "mem"},
		}, map[model.DeviceID]string{"GPU-a": "GPU0", "GPU-b": "GPU1", "MIG-GPU-b/4/0": "MIG 4/0"}},
		{"another plugin by its name", []model.Device{{ID: "r0", Name: "rocm", Index: 1}}, map[model.DeviceID]string{"r0": "rocm1"}},
		{"indices that collide: plugin and position", []model.Device{
			{ID: "x", Name: "cuda", Index: 0}, {ID: "y", Name: "cuda", Index: 0},
		}, map[model.DeviceID]string{"x": "cuda#0", "y": "cuda#1"}},
	} {
		if got := LabelsByID(tt.devs); !maps.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}
