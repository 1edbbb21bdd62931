//go:build cgo && linux

package plugin_test

import (
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/model"
)

// TestLostGPUByIndex: a GPU lost before fgtop started has no readable
// UUID, the id its NVML source gives. cuda_open registers GPUs by index,
// so there it is listed, lost, by its index, with one issue on that row,
// and a kernel holding it is shown on it, not on an unknown device; so is
// the issue of a GPU lost at the first poll. The fractional plugin's id is
// the UUID: there the GPU stays out, said once.
func TestLostGPUByIndex(t *testing.T) {
	for _, kind := range []string{model.PluginCUDAOpen, model.PluginCUDAFractional} {
		t.Run(kind, func(t *testing.T) {
			srv, uuids := h100Node(t, 4)
			srv.Devices[2].(*server.Device).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
			srv.Devices[3].(*server.Device).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
			dir := t.TempDir()
			inner := inventory.NewNVML(srv, inventory.NVMLOptions{SysRoot: dir, ProcRoot: dir}, nil)
			root := t.TempDir()
			if kind == model.PluginCUDAOpen {
				writeKernel(t, root, "11111111-1111-4111-8111-111111111111", "SLOTS={\"cpu\":\"1\",\"mem\":\"1073741824\",\"cuda.device\":\"1\"}\nCUDA.DEVICE_SHARES=2:1\n")
			}
			src := plugin.NewSource(inner, plugin.Options{Inputs: plugin.Inputs{Flag: kind}})
			src.Start(0)
			defer src.Close()
			snap := build(t, src, root)
			lost := map[model.DeviceID]bool{}
			var listed []string
			for _, d := range snap.Devices {
				if d.Name == "cuda" {
					listed = append(listed, string(d.ID))
					lost[d.ID] = d.Telemetry != nil && d.Telemetry.Lost
				}
			}
			about := func(sub string) []model.Issue {
				var out []model.Issue
				for _, is := range snap.Issues {
					if strings.Contains(is.Message, sub) {
						out = append(out, is)
					}
				}
				return out
			}
			noIssue(t, snap, model.IssueUnknownDevice)
			switch kind {
			case model.PluginCUDAOpen:
				if strings.Join(listed, " ") != "0 1 2 3" || !lost["2"] || !lost["3"] || lost["1"] {
					t.Fatalf("listed %v, lost %v: want 0-3 with 2 and 3 lost", listed, lost)
				}
				if is := about("index 2"); len(is) != 1 || is[0].Device != (model.DeviceKey{Name: "cuda", ID: "2"}) || !strings.Contains(is[0].Message, "is lost") {
					t.Errorf("issues about GPU 2: %v, want one, on cuda:2, saying it is lost", is)
				}
				if is := about("index 3"); len(is) != 1 || is[0].Device != (model.DeviceKey{Name: "cuda", ID: "3"}) {
					t.Errorf("issues about GPU 3: %v, want one, on cuda:3", is)
				}
				if u := snap.Usage[model.DeviceKey{Name: "cuda", ID: "2"}]; u == nil || u.Held[model.SlotCUDADevice].String() != "1" {
					t.Errorf("cuda:2 holds %v, want the kernel's 1", u)
				}
			default:
				want := "GPU-" + uuids[0] + " GPU-" + uuids[1] + " GPU-" + uuids[3]
				if strings.Join(listed, " ") != want {
					t.Fatalf("listed %v, want %s", listed, want)
				}
				if is := about("index 2"); len(is) != 1 || !strings.Contains(is[0].Message, "cannot read its UUID") {
					t.Errorf("issues about GPU 2: %v, want one saying it is not listed", is)
				}
			}
		})
	}
}
