//go:build cgo && linux

package plugin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/plugin"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

func writeKernel(t *testing.T, root, id, lines string) {
	t.Helper()
	d := filepath.Join(root, id, "config")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	text := "SCRATCH_SIZE=0m\nMOUNTS=\nUNIFIED_DEVICES=[]\n" + lines
	if err := os.WriteFile(filepath.Join(d, "resource.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestKernelsOnRegisteredDevices: kernels' allocations land on the devices
// the plugin registers, for both plugins, with no unknown-device or
// unsupported-resource issue; the kind comes from the kernels' own lines
// when nothing else says.
func TestKernelsOnRegisteredDevices(t *testing.T) {
	t.Run("open", func(t *testing.T) {
		inner, uuids := nvmlSource(t, 4)
		root := t.TempDir()
		writeKernel(t, root, "11111111-1111-4111-8111-111111111111", "SLOTS={\"cpu\":\"1\",\"mem\":\"1073741824\",\"cuda.device\":\"2\"}\nCUDA.DEVICE_SHARES=1:1,3:1\nCUDA_RESOURCE_VIRTUALIZED=0\n")
		src := plugin.NewSource(inner, plugin.Options{Inputs: plugin.Inputs{Evidence: plugin.ScanEvidence([]string{root})},
			File: plugin.Parse(map[string]string{"device_mask": uuids[2]}), FilePath: "p.json"})
		src.Start(0)
		defer src.Close()
		snap := build(t, src, root)
		if snap.Plugin.Kind != model.PluginCUDAOpen || snap.Plugin.Source != plugin.RuleScratch {
			t.Fatalf("plugin %+v", snap.Plugin)
		}
		for _, id := range []model.DeviceID{"1", "3"} {
			u := snap.Usage[model.DeviceKey{Name: "cuda", ID: id}]
			if u == nil || u.Held[model.SlotCUDADevice].String() != "1" {
				t.Fatalf("cuda:%s holds %v, want 1", id, u)
			}
		}
		noIssue(t, snap, model.IssueUnknownDevice, model.IssueUnsupported, model.IssueOverCapacity)
	})
	t.Run("fractional", func(t *testing.T) {
		inner, uuids := nvmlSource(t, 4)
		root := t.TempDir()
		writeKernel(t, root, "11111111-1111-4111-8111-111111111111", "SLOTS={\"cpu\":\"1\",\"mem\":\"1073741824\",\"cuda.shares\":\"2.5\"}\nCUDA.SHARES_SHARES=GPU-"+uuids[0]+":2.5\nCUDA_RESOURCE_VIRTUALIZED=1\n")
		writeKernel(t, root, "22222222-2222-4222-8222-222222222222", "SLOTS={\"cpu\":\"1\",\"mem\":\"1073741824\",\"cuda.shares\":\"1.48\"}\nCUDA.SHARES_SHARES=GPU-"+uuids[0]+":1.48\n")
		src := plugin.NewSource(inner, plugin.Options{File: plugin.Parse(map[string]string{"allocation_mode": "fractional", "unit_mem": "20g"}), FilePath: "p.json"})
		src.Start(0)
		defer src.Close()
		snap := build(t, src, root)
		key := model.DeviceKey{Name: "cuda", ID: model.DeviceID("GPU-" + uuids[0])}
		u := snap.Usage[key]
		if u == nil || u.Held[model.SlotCUDAShares].String() != "3.98" {
			t.Fatalf("%s holds %v, want 3.98", key, u)
		}
		for _, d := range snap.Devices {
			if d.Key() == key && d.Capacity.String() != "3.98" {
				t.Fatalf("capacity %s", d.Capacity)
			}
		}
		noIssue(t, snap, model.IssueUnknownDevice, model.IssueUnsupported, model.IssueOverCapacity)
	})
}

// TestDisagreeingKernelNamed: a cuda.shares kernel on a node fgtop
// mirrors as cuda_open is an issue that names the rule, not a silent
// choice.
func TestDisagreeingKernelNamed(t *testing.T) {
	inner, uuids := nvmlSource(t, 2)
	root := t.TempDir()
	writeKernel(t, root, "11111111-1111-4111-8111-111111111111", "SLOTS={\"cuda.shares\":\"0.5\"}\nCUDA.SHARES_SHARES=GPU-"+uuids[0]+":0.5\n")
	src := plugin.NewSource(inner, plugin.Options{Inputs: plugin.Inputs{Flag: model.PluginCUDAOpen, Evidence: plugin.ScanEvidence([]string{root})}})
	src.Start(0)
	defer src.Close()
	snap := build(t, src, root)
	var unsupported, evidence bool
	for _, i := range snap.Issues {
		switch i.Code {
		case model.IssueUnsupported:
			unsupported = strings.Contains(i.Message, "--cuda-plugin") && strings.Contains(i.Message, "decided by flag")
		case model.IssuePluginEvidence:
			evidence = true
		}
	}
	if !unsupported || !evidence {
		t.Fatalf("want an unsupported-resource issue naming the rule and a plugin-evidence issue: %v", snap.Issues)
	}
}

func build(t *testing.T, src *plugin.Source, root string) *model.Snapshot {
	t.Helper()
	snap, err := engine.Build(context.Background(), engine.Options{Inventory: src, Roots: []scratch.Root{{Path: root, Agent: "i-a"}}})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func noIssue(t *testing.T, s *model.Snapshot, codes ...string) {
	t.Helper()
	for _, i := range s.Issues {
		for _, c := range codes {
			if i.Code == c {
				t.Errorf("issue %s: %s", i.Code, i.Message)
			}
		}
	}
}

// TestEvidenceFollowsKernels: while the kernels decide, a fractional
// kernel that appears later turns the node fractional at the next look.
func TestEvidenceFollowsKernels(t *testing.T) {
	inner, uuids := nvmlSource(t, 1)
	root := t.TempDir()
	src := plugin.NewSource(inner, plugin.Options{EvidenceRoots: []string{root}, EvidenceEvery: time.Millisecond,
		File: plugin.Parse(map[string]string{"unit_mem": "20g"}), FilePath: "p"})
	src.Start(0)
	defer src.Close()
	inv, err := src.Poll(context.Background())
	if err != nil || inv.Plugin.Kind != model.PluginCUDAOpen || inv.Plugin.Source != plugin.RuleDefault {
		t.Fatalf("%+v %v", inv.Plugin, err)
	}
	writeKernel(t, root, "11111111-1111-4111-8111-111111111111", "SLOTS={\"cuda.shares\":\"0.5\"}\nCUDA.SHARES_SHARES=GPU-"+uuids[0]+":0.5\n")
	time.Sleep(2 * time.Millisecond)
	inv, err = src.Poll(context.Background())
	if err != nil || inv.Plugin.Kind != model.PluginCUDAFractional || inv.Plugin.Source != plugin.RuleScratch || inv.Devices[0].Capacity.String() != "3.98" {
		t.Fatalf("%+v %v %+v", inv.Plugin, err, inv.Devices[0])
	}
}

// TestEvidenceSoonAfterAKernelAppears: while the kernels decide, a new
// kernel's directory makes the kernels be read again at once and a moment
// later (its resource.txt comes after its directory), not only at the
// next EvidenceEvery, so its shares are not an unknown device meanwhile.
func TestEvidenceSoonAfterAKernelAppears(t *testing.T) {
	inner, uuids := nvmlSource(t, 1)
	root := t.TempDir()
	src := plugin.NewSource(inner, plugin.Options{EvidenceRoots: []string{root}, EvidenceEvery: time.Hour,
		File: plugin.Parse(map[string]string{"unit_mem": "20g"}), FilePath: "p"})
	src.Start(0)
	defer src.Close()
	poll := func() *model.PluginInfo {
		t.Helper()
		inv, err := src.Poll(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return inv.Plugin
	}
	if p := poll(); p.Kind != model.PluginCUDAOpen || p.Source != plugin.RuleDefault {
		t.Fatalf("%+v", p)
	}
	// The directory first, then (after a look) its resource.txt.
	id := "11111111-1111-4111-8111-111111111111"
	if err := os.MkdirAll(filepath.Join(root, id, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p := poll(); p.Source != plugin.RuleDefault {
		t.Fatalf("an empty kernel directory decided: %+v", p)
	}
	writeKernel(t, root, id, "SLOTS={\"cuda.shares\":\"0.5\"}\nCUDA.SHARES_SHARES=GPU-"+uuids[0]+":0.5\n")
	deadline := time.Now().Add(5 * time.Second)
	for {
		p := poll()
		if p.Kind == model.PluginCUDAFractional && p.Source == plugin.RuleScratch {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the kernel's resource.txt: %+v", p)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Another kernel: read at once.
	writeKernel(t, root, "22222222-2222-4222-8222-222222222222", "SLOTS={\"cuda.device\":\"1\"}\nCUDA.DEVICE_SHARES=0:1\n")
	inv, err := src.Poll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, is := range inv.Issues {
		if is.Code == model.IssuePluginEvidence {
			found = true
		}
	}
	if !found {
		t.Errorf("a cuda.device kernel beside a cuda.shares one, read at once: no plugin-evidence issue: %v", inv.Issues)
	}
}
