package console

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/fgtop/fgtop/model"
	"github.com/fgtop/fgtop/themes"
	"github.com/fgtop/fgtop/ui/kit"
	"github.com/fgtop/fgtop/ui/render"
)

// TestDeviceFiguresTitle: the devices pane titles its figures SHARES only
// where a GPU is counted in fGPU shares. Seen at 80x24 on a cuda_open node
// (etcd down, the default plugin): "HELD/CAPACITY SHARES" over GPU rows of
// "0/1" whole GPUs, while the kernels pane titled the same amounts GPUS.
func TestDeviceFiguresTitle(t *testing.T) {
	gpu := func(id string, slot model.SlotName, capacity string) model.Device {
		return model.Device{Name: "cuda", ID: model.DeviceID(id), Slot: slot, Capacity: model.MustDec(capacity)}
	}
	st := testStyles(t, themes.Mono, true)
	for _, tc := range []struct {
		name string
		devs []model.Device
		want string
	}{
		{"cuda_open", []model.Device{gpu("0", model.SlotCUDADevice, "1"), gpu("1", model.SlotCUDADevice, "1")}, "GPUS"},
		{"fractional", []model.Device{gpu("GPU-a", model.SlotCUDAShares, "3.98")}, "SHARES"},
		{"shares beside a whole device", []model.Device{gpu("GPU-a", model.SlotCUDAShares, "3.98"), gpu("1", model.SlotCUDADevice, "1")}, "SHARES"},
	} {
		d := render.Derive(&model.Snapshot{Devices: tc.devs}, render.DeriveOptions{Th: kit.DefaultThresholds(), G: kit.UnicodeGlyphs(false)}, nil)
		for _, w := range []int{80, 200} {
			head := ansi.Strip(deviceHeaderRow(st, deviceColumns(w, d.DevMeas), false, w))
			if f := strings.Fields(head); len(f) < 3 || f[2] != tc.want {
				t.Errorf("%s, %d columns: header %q, want %s after HELD/CAPACITY", tc.name, w, head, tc.want)
			}
		}
	}
}
