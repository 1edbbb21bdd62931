package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// slotNode is the slot-based fixture (Backend.AI main's form) on the
// fixture node, 64 cores and 512 GiB, with an empty scratch root.
func slotNode(t *testing.T) (config string, args func(cmd string, extra ...string) []string) {
	t.Helper()
	fix := testfix.Dir(t, "backendai")
	dir := t.TempDir()
	root := filepath.Join(dir, "scratches")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(fix, "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(text), `scratch-root = "/var/lib/backend.ai/scratches"`, `scratch-root = "`+root+`"`, 1)
	config = filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(config, []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	return config, func(cmd string, extra ...string) []string {
		return append([]string{cmd, "--config", config, "--devices", filepath.Join(fix, "mock-accelerator.toml"),
			"--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"), "--host-cpus", "0-63", "--host-mem", "512g"}, extra...)
	}
}

// oracleLoads runs Backend.AI main's own loader on path and returns its
// verdict and per-agent devices.
func oracleLoads(t *testing.T, path string) (bool, string) {
	t.Helper()
	cmd := exec.Command(testfix.Oracle(t), path)
	out, _ := cmd.Output()
	var v struct {
		OK     bool              `json:"ok"`
		Errors []json.RawMessage `json:"errors"`
		Agents []struct {
			ID      string            `json:"id"`
			CPU     json.RawMessage   `json:"cpu"`
			Mem     string            `json:"mem"`
			Devices map[string]string `json:"devices"`
		} `json:"agents"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &v); err != nil {
		t.Fatalf("oracle output %q: %v", out, err)
	}
	var b strings.Builder
	for _, a := range v.Agents {
		b.WriteString(a.ID + " cpu=" + string(a.CPU) + " mem=" + a.Mem)
		for k, d := range a.Devices {
			b.WriteString(" " + k + "=" + d)
		}
		b.WriteString("; ")
	}
	if !v.OK {
		t.Logf("oracle errors: %s", v.Errors)
	}
	return v.OK, b.String()
}

// TestApplySlot: apply --slot sets the agents' slot-based amounts in the
// file, and Backend.AI main's loader reads back exactly them; a typo'd
// slot is refused naming the node's slots (exit 2) and an over-allocation
// is refused in the agent's words (exit 2: a config the agent would
// refuse), the file untouched either time.
func TestApplySlot(t *testing.T) {
	config, args := slotNode(t)
	orig, _ := os.ReadFile(config)

	code, out := runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=1.5", "--slot", "i-gpu-node01-b=cuda.shares=2.5",
		"--slot", "i-gpu-node01-a=cpu=20", "--slot", "i-gpu-node01-b=mem=96G", "--yes")...)
	wantCode(t, code, exitOK, out, "verified")
	ok, agents := oracleLoads(t, config)
	if !ok {
		b, _ := os.ReadFile(config)
		t.Fatalf("Backend.AI main refuses the file apply --slot wrote:\n%s", b)
	}
	for _, want := range []string{"i-gpu-node01-a cpu=20 mem=128849018880 cuda.shares=1.5", "i-gpu-node01-b cpu=15 mem=103079215104 cuda.shares=2.5"} {
		if !strings.Contains(agents, want) {
			t.Errorf("main reads %s; want %s", agents, want)
		}
	}
	code, out = runCLI(t, args("check")...)
	wantCode(t, code, exitOK, out, "ok: Backend.AI main loads this file")

	written, _ := os.ReadFile(config)
	for _, bad := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--slot", "i-gpu-node01-a=cuda.shres=1"}, exitBadUsage, `unknown slot "cuda.shres": did you mean cuda.shares? (the node's slots: cpu, cuda.shares, mem)`},
		{[]string{"--slot", "i-gpu-node01-a=cuda.shares=-1"}, exitBadUsage, "negative"},
		// A typo'd slot is said as such, not as an amount the slot's
		// reading (a size for mem) could not read.
		{[]string{"--slot", "i-gpu-node01-a=memory=64G"}, exitBadUsage, `unknown slot "memory": did you mean mem?`},
		{[]string{"--slot", "i-gpu-node01-a=cuda.shres=abc"}, exitBadUsage, `unknown slot "cuda.shres": did you mean cuda.shares?`},
		{[]string{"--slot", "i-gpu-node01-a"}, exitBadUsage, "want AGENT=SLOT=AMOUNT"},
		{[]string{"--slot", "i-gpu-node01-a=cpu=1.5"}, exitBadUsage, "whole core count"},
		{[]string{"--slot", "nobody=cuda.shares=1"}, exitBadUsage, "unknown agent 'nobody'"},
		{[]string{"--slot", "i-gpu-node01-a=cuda.shares=3"}, exitBadUsage, "Resource slot 'cuda.shares' is over-allocated: with the other agents' amounts as they are, i-gpu-node01-a can have at most 1.50 (it is given 3), i-gpu-node01-b at most 1.00 (it is given 2.5); the agents are given 5.5 in total (i-gpu-node01-a 3 + i-gpu-node01-b 2.5)"},
	} {
		code, out = runCLI(t, args("apply", append(bad.args, "--yes")...)...)
		wantCode(t, code, bad.code, out, bad.want)
		if now, _ := os.ReadFile(config); !bytes.Equal(now, written) {
			t.Fatalf("%v changed the file", bad.args)
		}
	}
	if bytes.Equal(written, orig) {
		t.Fatal("nothing was written")
	}
}

// TestPlanJSONSaysWhoseLoaderJudged: plan --json names the loader whose
// verdict made it valid (main's, for a slot-based file) and carries both.
func TestPlanJSONSaysWhoseLoaderJudged(t *testing.T) {
	_, args := slotNode(t)
	code, out := runCLI(t, args("plan", "--slot", "i-gpu-node01-a=cuda.shares=1.5", "--slot", "i-gpu-node01-b=cuda.shares=2.5", "--json")...)
	wantCode(t, code, exitOK, out, `"judged_by": "main"`, `"loads_on_main": true`)
}
