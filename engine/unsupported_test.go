package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/model"
)

// TestUnsupportedWhileBlind: a kernel holds cuda.shares while the GPU
// source is unavailable (here the plugin settings disable it): the issue
// says fgtop cannot see the GPUs, not that Backend.AI would refuse the
// slot (UnsupportedResource), which it said while blind.
func TestUnsupportedWhileBlind(t *testing.T) {
	fx := enginetest.Fixtures(t)
	etcd := filepath.Join(t.TempDir(), "etcd.json")
	if err := os.WriteFile(etcd, []byte(`{"allocation_mode":"Fractional"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, etcd string
		want, not  string
	}{
		{name: "blind", etcd: etcd, want: "the device source is unavailable, so the GPUs that provide it may be ones it cannot see", not: "UnsupportedResource"},
		{name: "seeing", etcd: filepath.Join(fx, "mock-accelerator.etcd.json")},
	} {
		t.Run(c.name, func(t *testing.T) {
			// A slot the mock's GPUs never register, held on one of them.
			text := "SCRATCH_SIZE=0m\nMOUNTS=\nSLOTS={\"cuda.shares\":\"0.5\"}\nCUDA.SHARES_SHARES=c59395cd-ac91-4cd3-a1b0-3d2568aa2d01:0.5\n"
			snap := buildOneKernel(t, c.etcd, "11111111-1111-4111-8111-111111111111", text)
			var msgs []string
			for _, i := range snap.Issues {
				if i.Code == model.IssueUnsupported {
					msgs = append(msgs, i.Message)
				}
			}
			if c.want == "" {
				if len(msgs) != 0 {
					t.Errorf("the GPUs are seen and provide cuda.shares: %q", msgs)
				}
				return
			}
			if len(msgs) != 1 || !strings.Contains(msgs[0], c.want) || strings.Contains(msgs[0], c.not) {
				t.Errorf("unsupported-resource issues %q, want one saying %q", msgs, c.want)
			}
		})
	}
}
