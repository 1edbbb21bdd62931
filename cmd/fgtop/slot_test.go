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
		{[]string{"--slot", "nobody=cuda.shares=1"}, exitBadUsage, `unknown agent "nobody"`},
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

// TestApplyUnattributedKernel: a live kernel whose agent cannot be told
// (no recovery.json, in the scratch root both agents share) may be either
// agent's, so a cut that would leave it above the amount of whichever it
// is refuses without --force, in words that say so; a change it fits under
// whoever runs it applies. One whose recovery.json names an agent the file
// does not list is drift for check, not "ok".
func TestApplyUnattributedKernel(t *testing.T) {
	config, args := slotNode(t)
	fix := testfix.Dir(t, "backendai")
	root := filepath.Join(filepath.Dir(config), "scratches")
	kdir := filepath.Join(root, "2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", "config")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := os.ReadFile(filepath.Join(fix, "resource.cuda-shares-split.txt")) // 1.2 shares, 8 cores
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "resource.txt"), res, 0o644); err != nil {
		t.Fatal(err)
	}
	orig, _ := os.ReadFile(config)
	cut := []string{"--slot", "i-gpu-node01-a=cuda.shares=0.5", "--slot", "i-gpu-node01-b=cuda.shares=0.5"}

	code, out := runCLI(t, args("plan", cut...)...)
	wantCode(t, code, exitOK, out, "agent i-gpu-node01-a holds 1.20 cuda.shares, planned capacity 0.5 if kernel 2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8 is its (its agent cannot be told)",
		"live kernels are affected: apply needs --force")
	code, out = runCLI(t, args("apply", append(cut, "--yes")...)...)
	wantCode(t, code, exitProblem, out, "refusing to apply: live kernels whose agent cannot be told would put i-gpu-node01-a or i-gpu-node01-b above its planned amount if they are its")
	if now, _ := os.ReadFile(config); !bytes.Equal(now, orig) {
		t.Fatal("a refused apply changed the file")
	}
	// 1.2 fits under 1.5 whoever runs it, and b keeps its amount.
	code, out = runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=1.5", "--yes")...)
	wantCode(t, code, exitOK, out, "verified")
	code, out = runCLI(t, args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored")

	rec, err := os.ReadFile(filepath.Join(fix, "recovery.numa0-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec = bytes.ReplaceAll(rec, []byte("21e330bf-e15a-47a9-9183-df27ccd257b6"), []byte("2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8"))
	if err := os.WriteFile(filepath.Join(kdir, "recovery.json"), rec, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, args("check")...)
	wantCode(t, code, exitProblem, out, "drift (1):", "agent-conflict", "which agent.toml does not list")
	code, out = runCLI(t, args("apply", append(cut, "--yes")...)...)
	wantCode(t, code, exitProblem, out, "refusing to apply: live kernels whose agent cannot be told")
	code, out = runCLI(t, args("apply", append(cut, "--yes", "--force")...)...)
	wantCode(t, code, exitOK, out, "verified")
}

// TestApplyUnchecked: without the node's accelerators, the agent's start-up
// checks on a manual file's accelerator amounts cannot run (check says
// "not ok"), so plan says its verdict is only as far as it was checked and
// apply refuses a change of those amounts without --force (one the agent
// would stop on at start-up: 9 shares on a 4-GPU node); a change of cores
// alone applies. A kernel file that cannot be parsed hides what it holds:
// apply refuses then too.
func TestApplyUnchecked(t *testing.T) {
	config, args := slotNode(t)
	noDevices := func(cmd string, extra ...string) []string {
		return append([]string{cmd, "--config", config, "--host-cpus", "0-63", "--host-mem", "512g"}, extra...)
	}
	orig, _ := os.ReadFile(config)
	code, out := runCLI(t, noDevices("plan", "--slot", "i-gpu-node01-a=cuda.shares=9")...)
	wantCode(t, code, exitOK, out, "not checked on this node (1):", "the agent's start-up checks on the accelerator amounts were not run",
		"valid as far as it was checked, 1 file change(s) (not checked: above): apply needs --force")
	code, out = runCLI(t, noDevices("apply", "--slot", "i-gpu-node01-a=cuda.shares=9", "--yes")...)
	wantCode(t, code, exitProblem, out, "refusing to apply: the agent's start-up checks on the accelerator amounts were not run")
	if now, _ := os.ReadFile(config); !bytes.Equal(now, orig) {
		t.Fatal("a refused apply changed the file")
	}
	// With the devices the same change is what it is: invalid.
	code, out = runCLI(t, args("plan", "--slot", "i-gpu-node01-a=cuda.shares=9")...)
	wantCode(t, code, exitBadUsage, out, "over-allocated")
	code, out = runCLI(t, noDevices("apply", "--slot", "i-gpu-node01-a=cpu=9", "--yes")...)
	wantCode(t, code, exitOK, out, "verified")
	code, out = runCLI(t, args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored")

	kdir := filepath.Join(filepath.Dir(config), "scratches", "9a9a9a9a-2222-4a7e-b5d2-91c0e7f3a6b8", "config")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "resource.txt"), []byte("SLOTS={garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, args("apply", "--slot", "i-gpu-node01-b=cuda.shares=0.1", "--yes")...)
	wantCode(t, code, exitProblem, out, "refusing to apply: 1 kernel file(s) could not be read or parsed, so what those kernels hold is not known (--force applies anyway)")
	if now, _ := os.ReadFile(config); !bytes.Equal(now, orig) {
		t.Fatal("a refused apply changed the file")
	}
	code, out = runCLI(t, args("apply", "--slot", "i-gpu-node01-b=cuda.shares=0.1", "--yes", "--force")...)
	wantCode(t, code, exitOK, out, "verified")
}

// TestPlanJSONNamesItsSchema: plan --json, valid or not, is a document a
// script can tell from the others fgtop prints by its first key, as
// snapshot's and the replay's are ("schema": "fgtop.plan/v1").
func TestPlanJSONNamesItsSchema(t *testing.T) {
	_, args := slotNode(t)
	for _, slot := range []string{"i-gpu-node01-a=cuda.shares=1.5", "i-gpu-node01-a=cuda.shares=30"} {
		root := newRootCmd()
		var out, errw bytes.Buffer
		root.SetArgs(args("plan", "--slot", slot, "--json"))
		root.SetOut(&out)
		root.SetErr(&errw)
		_ = root.Execute()
		var doc map[string]any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("--slot %s: not JSON: %v\n%s", slot, err, out.String())
		}
		if doc["schema"] != planSchema || !strings.HasPrefix(out.String(), "{\n  \"schema\": ") {
			t.Errorf("--slot %s: schema %v, want %q first\n%s", slot, doc["schema"], planSchema, out.String())
		}
		if _, ok := doc["judged_by"]; !ok {
			t.Errorf("--slot %s: the plan's own keys are gone:\n%s", slot, out.String())
		}
	}
}
