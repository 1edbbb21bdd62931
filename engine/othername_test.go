package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestUnknownDeviceNamesTheGPU: an allocation naming a listed GPU in
// another plugin's form (here GPU-<uuid> where the GPUs are registered by
// bare UUID) is still an unknown device, and the issue says which GPU it
// is and why; an id no GPU answers to gets no such hint.
func TestUnknownDeviceNamesTheGPU(t *testing.T) {
	root, opts := fixtureTree(t)
	split := string(readFixture(t, "resource.cuda-shares-split.txt"))
	const gpu = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"
	other := strings.ReplaceAll(split, gpu+":0.60", "GPU-"+gpu+":0.60")
	other = strings.ReplaceAll(other, "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02:0.60", "ffffffff-0000-0000-0000-000000000000:0.60")
	writeKernel(t, root, "11111111-1111-4111-8111-111111111111", []byte(other))
	snap, err := Build(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	got := map[model.DeviceID]string{}
	for _, iss := range snap.Issues {
		if iss.Code == model.IssueUnknownDevice {
			got[iss.Device.ID] = iss.Message
		}
	}
	if m := got["GPU-"+gpu]; !strings.Contains(m, "that is cuda:"+gpu+"'s UUID") || !strings.Contains(m, "--cuda-plugin") {
		t.Errorf("GPU-%s: %q, want the GPU it names", gpu, m)
	}
	if m, ok := got["ffffffff-0000-0000-0000-000000000000"]; !ok || strings.Contains(m, "that is") {
		t.Errorf("ffffffff...: %q (present %v), want an unknown device without a hint", m, ok)
	}
}
