package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// TestCutShortAtLineEnd: a resource.txt cut at the end of its SLOTS line
// parses (Backend.AI's reader takes it too) but lists none of what SLOTS
// asks for: the kernel says so, naming the slots, instead of reading as
// a healthy kernel that holds nothing. A whole file, a slot asked at 0 and
// a unified slot (no line of its own) say nothing.
func TestCutShortAtLineEnd(t *testing.T) {
	fx := enginetest.Fixtures(t)
	const gpu = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
	head := "SCRATCH_SIZE=0m\nMOUNTS=\n"
	for _, c := range []struct {
		name, text, want string
	}{
		{name: "cut", text: head + `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0.3"}` + "\n",
			want: "requests 1 cpu, 0.3 cuda.shares, 1g mem but lists no allocation of it"},
		{name: "cut-after-cpu", text: head + `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0.3"}` + "\nCUDA.SHARES_SHARES=" + gpu + ":0.3\nCPU_SHARES=0:1\n",
			want: "requests 1g mem but lists no allocation of it"},
		// Cut inside an allocation line, no final newline: read as
		// Backend.AI reads it, and still lacking what SLOTS asks.
		{name: "cut-inside-a-line", text: head + `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0.3"}` + "\nUNIFIED_DEVICES=[]\nCUDA.SHARES_SHA",
			want: "requests 1 cpu, 0.3 cuda.shares, 1g mem but lists no allocation of it"},
		{name: "whole", text: head + `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0.3"}` + "\nCUDA.SHARES_SHARES=" + gpu + ":0.3\nCPU_SHARES=0:1\nMEM_SHARES=root:1073741824\n"},
		{name: "zero", text: head + `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0"}` + "\nCPU_SHARES=0:1\nMEM_SHARES=root:1073741824\n"},
		{name: "unified", text: head + `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0.3"}` + "\n" + `UNIFIED_DEVICES=[["cuda","cuda.shares"]]` + "\nCPU_SHARES=0:1\nMEM_SHARES=root:1073741824\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			const id = "11111111-1111-4111-8111-111111111111"
			snap := buildOneKernel(t, filepath.Join(fx, "mock-accelerator.etcd.json"), id, c.text)
			k := snap.Kernel(id)
			if k == nil {
				t.Fatal("kernel not listed")
			}
			switch {
			case c.want == "" && k.Problem != nil:
				t.Errorf("problem %v", *k.Problem)
			case c.want != "" && (k.Problem == nil || k.Problem.Code != model.IssueNoAllocation || k.Problem.Severity != model.SevWarning || !strings.Contains(k.Problem.Message, c.want)):
				t.Errorf("problem %+v, want a no-allocation warning %q", k.Problem, c.want)
			}
		})
	}
}

// buildOneKernel is a one-shot snapshot of a node on the fixtures' mock
// GPUs (their plugin settings from etcdFile) with one kernel, id, whose
// resource.txt is text.
func buildOneKernel(t *testing.T, etcdFile, id, text string) *model.Snapshot {
	t.Helper()
	fx := enginetest.Fixtures(t)
	src, err := inventory.NewMock(filepath.Join(fx, "mock-accelerator.toml"), etcdFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	root := t.TempDir()
	d := filepath.Join(root, id, "config")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "resource.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	snap, err := engine.Build(context.Background(), engine.Options{Inventory: src, Roots: []scratch.Root{{Path: root, Agent: "i-a"}}})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}
