package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/hostile"
	"github.com/fgtop/fgtop/internal/untrusted"
	"github.com/fgtop/fgtop/model"
)

// TestHostileKernelFiles: a resource.txt and a recovery.json written from
// a kernel's reach, with escape sequences in every name the console shows
// (device ids, the container id, unified devices, the image, the
// architecture, the agent id), reach the snapshot escaped; a broken file's
// issue quotes nothing raw.
func TestHostileKernelFiles(t *testing.T) {
	config, root := sharedConfig(t)
	const k0, k1, k2 = "00000000-0000-4000-8000-000000000000", "11111111-1111-4111-8111-111111111111",
		"22222222-2222-4222-8222-222222222222"
	evilDev := "gpu\x1b]52;c;cm0gLXJmIH4K\x07"
	text := string(gpuKernel(t, gpu01, "0.50", "3"))
	text = strings.Replace(text, "CUDA.SHARES_SHARES="+gpu01, "CUDA.SHARES_SHARES="+evilDev, 1)
	text = strings.Replace(text, "UNIFIED_DEVICES=[]", `UNIFIED_DEVICES=[["\u001b[2J","cuda\u009b"]]`, 1)
	text = strings.Replace(text, "CID=", "CID=\x1b]8;;http://evil/\x1b\\", 1)
	writeKernel(t, root, k0, []byte(text))
	writeRecord(t, root, k0, numa0)
	writeKernel(t, root, k1, gpuKernel(t, gpu02, "0.30", "20"))
	rec := string(readFixture(t, "recovery.numa0-batch.json"))
	rec = strings.ReplaceAll(rec, "21e330bf-e15a-47a9-9183-df27ccd257b6", k1)
	rec = strings.Replace(rec, `"name":"python-pytorch"`, `"name":"\u001b]8;;http://x/\u001b\\py\u001b]8;;\u001b\\"`, 1)
	rec = strings.Replace(rec, `"architecture":"x86_64"`, `"architecture":"x86\u001b[31m\r\n\u202e"`, 1)
	if err := os.WriteFile(filepath.Join(root, k1, "config", "recovery.json"), []byte(rec), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(gpuKernel(t, gpu03, "0.20", "4")), ":0.20\n", ":0.2\x1b]52;c;x\x07\n", 1)
	writeKernel(t, root, k2, []byte(broken))

	snap, err := Build(context.Background(), viewOptions(t, config))
	if err != nil {
		t.Fatal(err)
	}
	check := func(s string) string {
		if f := hostile.Foreign(s); len(f) > 0 {
			t.Errorf("raw text entered the snapshot: %q: %v", s, f)
		}
		return s
	}
	untrusted.Apply(snap, check)
	for _, k := range snap.Kernels() {
		untrusted.Apply(k, check)
	}
	for _, u := range snap.Usage {
		hs := u.Holdings()
		untrusted.Apply(&hs, check)
	}
	k := kernelOf(t, snap, k0)
	if _, ok := k.Alloc[model.SlotCUDAShares][model.DeviceID(untrusted.Text(evilDev))]; !ok {
		t.Errorf("the planted device id is not kept escaped: %v", k.Alloc)
	}
	if !strings.Contains(k.Container, `\x1b]8;;`) {
		t.Errorf("container id %q", k.Container)
	}
	if r := kernelOf(t, snap, k1).Record; r == nil || r.Architecture != `x86\x1b[31m\x0d\x0a\u202e` {
		t.Errorf("record %+v", r)
	}
	if kernelOf(t, snap, k2).State != model.KernelBroken {
		t.Errorf("the broken file parsed")
	}
}
