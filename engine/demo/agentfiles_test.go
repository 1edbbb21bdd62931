package demo

import (
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/model"
)

// TestMockResourceData checks the mock plugin's lines against the samples
// in testdata/fixtures/backendai (same settings: unit_mem 40g, unit_proc
// 108, reserved 64 MiB).
func TestMockResourceData(t *testing.T) {
	settings, err := inventory.ParseMockSettings("etcd.json", mockEtcdJSON)
	if err != nil {
		t.Fatal(err)
	}
	const a = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d02"
	const b = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03"
	shares := func(pairs ...string) alloc.Allocation {
		ss := alloc.SlotShares{Slot: model.SlotCUDAShares}
		for i := 0; i < len(pairs); i += 2 {
			ss.Shares = append(ss.Shares, alloc.Share{Device: model.DeviceID(pairs[i]), Amount: model.MustDec(pairs[i+1])})
		}
		return alloc.Allocation{ss}
	}
	tests := []struct {
		name       string
		fractional bool
		alloc      alloc.Allocation
		want       []string
	}{
		{"split over two devices (resource.cuda-shares-split.txt)", true, shares(a, "0.60", b, "0.60"), []string{
			"CUDA_GLOBAL_DEVICE_IDS=0:" + a + ",1:" + b,
			"CUDA_RESOURCE_VIRTUALIZED=1",
			"CUDA_MEMORY_LIMITS=" + a + ":25769803776," + b + ":25769803776",
			"CUDA_PROCESSOR_LIMITS=" + a + ":64," + b + ":64",
			"CUDA_RESERVED_MEMORY=67108864",
		}},
		{"half a device (resource.cuda-shares-single.txt)", true, shares(b, "0.50"), []string{
			"CUDA_GLOBAL_DEVICE_IDS=0:" + b,
			"CUDA_RESOURCE_VIRTUALIZED=1",
			"CUDA_MEMORY_LIMITS=" + b + ":21474836480",
			"CUDA_PROCESSOR_LIMITS=" + b + ":54",
			"CUDA_RESERVED_MEMORY=67108864",
		}},
		{"no GPU (resource.cpu-only.txt)", true, nil, []string{
			"CUDA_GLOBAL_DEVICE_IDS=",
			"CUDA_RESOURCE_VIRTUALIZED=1",
			"CUDA_MEMORY_LIMITS=",
			"CUDA_PROCESSOR_LIMITS=",
			"CUDA_RESERVED_MEMORY=67108864",
		}},
		{"tiny share keeps the SM floor; a zero share is not a device in use", true, shares(a, "0.01", b, "0"), []string{
			"CUDA_GLOBAL_DEVICE_IDS=0:" + a,
			"CUDA_RESOURCE_VIRTUALIZED=1",
			"CUDA_MEMORY_LIMITS=" + a + ":429496729," + b + ":0",
			"CUDA_PROCESSOR_LIMITS=" + a + ":4," + b + ":4",
			"CUDA_RESERVED_MEMORY=67108864",
		}},
		{"MIG slice in fractional mode", true, alloc.Allocation{{Slot: "cuda.device:10g-mig",
			Shares: []alloc.Share{{Device: "MIG-x/5/0", Amount: model.MustDec("1.00")}}}}, []string{
			"CUDA_GLOBAL_DEVICE_IDS=0:MIG-x/5/0",
			"CUDA_RESOURCE_VIRTUALIZED=1",
			"CUDA_MEMORY_LIMITS=",
			"CUDA_PROCESSOR_LIMITS=",
			"CUDA_RESERVED_MEMORY=67108864",
		}},
		{"discrete mode", false, alloc.Allocation{{Slot: model.SlotCUDADevice,
			Shares: []alloc.Share{{Device: "0", Amount: model.One}, {Device: "2", Amount: model.One}}}}, []string{
			"CUDA_GLOBAL_DEVICE_IDS=0:0,1:2",
			"CUDA_RESOURCE_VIRTUALIZED=0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, kv := range mockResourceData(settings, tt.fractional, tt.alloc) {
				got = append(got, kv.key+"="+kv.value)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestKernelMounts(t *testing.T) {
	k := &kernelRec{id: "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", vfolders: []vfolder{
		{host: "/vfroot/local/3f/8a/2c9d41e07b5a4c6e9f1d2b3a4c5d6e7f", name: "llm-finetune"},
		{host: "/vfroot/local/aa/01/7b3c5d9e1f2a4b6c8d0e2f4a6b8c0d2e", name: "datasets", readOnly: true},
	}}
	ms := kernelMounts("/var/lib/backend.ai/scratches", "i-gpu-node01", k)
	var got []string
	for _, m := range ms {
		got = append(got, m.src+":"+m.dst+":"+m.perm)
	}
	want := []string{
		"/var/lib/backend.ai/scratches/2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8/config:/home/config:ro",
		"/var/lib/backend.ai/scratches/2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8/work:/home/work:rw",
		"/etc/localtime:/etc/localtime:ro",
		"/etc/timezone:/etc/timezone:ro",
		"/var/run/backend.ai/ipc/container/agent.i-gpu-node01.sock:/opt/kernel/agent.sock:rw",
		"/vfroot/local/3f/8a/2c9d41e07b5a4c6e9f1d2b3a4c5d6e7f:/home/work/llm-finetune:rw",
		"/vfroot/local/aa/01/7b3c5d9e1f2a4b6c8d0e2f4a6b8c0d2e:/home/work/datasets:ro",
	}
	if !slices.Equal(got[:len(want)], want) {
		t.Errorf("intrinsic and vfolder mounts:\n%s\nwant\n%s", strings.Join(got[:len(want)], "\n"), strings.Join(want, "\n"))
	}
	// The fixture's tail: runner files, the krunner volume, kernel and
	// helpers packages.
	if got[len(got)-3] != "backendai-krunner.v13.x86_64.ubuntu22.04:/opt/backend.ai:ro" {
		t.Errorf("krunner volume mount = %q", got[len(got)-3])
	}
	if n := len(got) - len(want); n != len(runnerFiles)+3 {
		t.Errorf("%d runner mounts, want %d", n, len(runnerFiles)+3)
	}
}
