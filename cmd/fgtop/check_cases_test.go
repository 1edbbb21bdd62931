package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/internal/testfix"
)

// checkCase is what this test needs of a testdata/fixtures/config-cases.json
// entry: the file and Backend.AI's verdicts.
type checkCase struct {
	ID     string            `json:"id"`
	Input  string            `json:"input"`
	Main   struct{ OK bool } `json:"main"`
	PR8463 struct{ OK bool } `json:"pr8463"`
	// MainStartup is null when main rejects the file.
	MainStartup *struct {
		OK bool `json:"ok"`
	} `json:"main_startup"`
}

// draftOnlyRe is what the output must say about a file only the BEP-1044
// draft loads (fixtures README, "What fgtop is checked for").
var draftOnlyRe = regexp.MustCompile(`(?i)\bmain\b|bep-1044|not loadable`)

// TestCheckConfigCases runs `fgtop check` on every fixture case, on the
// fixture node (the mock GPUs) with a small host and a large one, and
// requires the exit code Backend.AI's verdicts call for: 2 exactly when
// main does not load the file or main's agent would not start on the node
// (a draft-only file included: an agent running main refuses it, and the
// output says so); with --schema bep-1044, 2 whenever the draft refuses
// the file.
func TestCheckConfigCases(t *testing.T) {
	b, err := os.ReadFile(testfix.Dir(t, "config-cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []checkCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 200 {
		t.Fatalf("%d cases, want the fixture's 208", len(cases))
	}
	fix := testfix.Dir(t, "backendai")
	mock, etcd := filepath.Join(fix, "mock-accelerator.toml"), filepath.Join(fix, "mock-accelerator.etcd.json")
	hosts := []struct{ name, cpus, mem string }{{"small", "0-1", "4g"}, {"large", "0-255", "2t"}}
	agree, startupAgree, startupCases := 0, 0, 0
	for _, c := range cases {
		dir := t.TempDir()
		path := filepath.Join(dir, "agent.toml")
		if err := os.WriteFile(path, []byte(c.Input), 0o644); err != nil {
			t.Fatal(err)
		}
		empty := filepath.Join(dir, "scratches")
		if err := os.Mkdir(empty, 0o755); err != nil {
			t.Fatal(err)
		}
		wont := c.MainStartup != nil && !c.MainStartup.OK
		want2 := !c.Main.OK || wont
		draftOnly := !c.Main.OK && c.PR8463.OK
		ok := true
		for _, h := range hosts {
			code, out := runCLIQuiet(t, "check", "--config", path, "--devices", mock, "--mock-etcd", etcd,
				"--scratch-root", empty, "--host-cpus", h.cpus, "--host-mem", h.mem)
			if (code == exitBadUsage) != want2 {
				ok = false
				t.Errorf("%s on the %s host: exit %d; Backend.AI: main ok=%v, pr8463 ok=%v, main start-up ok=%v; want exit 2 = %v\n%s",
					c.ID, h.name, code, c.Main.OK, c.PR8463.OK, !wont, want2, out)
			}
			if draftOnly && !draftOnlyRe.MatchString(out) {
				ok = false
				t.Errorf("%s on the %s host: a file only the BEP-1044 draft loads, but the output does not say main cannot load it:\n%s", c.ID, h.name, out)
			}
			if h.name == "large" {
				dcode, dout := runCLIQuiet(t, "check", "--schema", "bep-1044", "--config", path, "--devices", mock, "--mock-etcd", etcd,
					"--scratch-root", empty, "--host-cpus", h.cpus, "--host-mem", h.mem)
				if !c.PR8463.OK && dcode != exitBadUsage {
					ok = false
					t.Errorf("%s --schema bep-1044: exit %d, but the draft refuses the file; want 2\n%s", c.ID, dcode, dout)
				}
				if draftOnly && c.Main.OK == false && dcode == exitBadUsage && !strings.Contains(dout, "stop at start-up") {
					ok = false
					t.Errorf("%s --schema bep-1044: the draft loads the file, yet exit 2 without a start-up reason\n%s", c.ID, dout)
				}
			}
			if c.MainStartup != nil && h.name == "small" {
				startupCases++
				if (code == exitBadUsage) == wont {
					startupAgree++
				}
			}
		}
		if ok {
			agree++
		}
	}
	t.Logf("config-cases: fgtop check exit codes agree on %d/%d (both hosts); main start-up verdict agrees on %d/%d", agree, len(cases), startupAgree, startupCases)
}

// TestCheckOtherNode: the shared fixture written for a 64-core node passes
// `check` here with that node's cores and memory given, fails with a small
// one, and bad host flags are usage errors.
func TestCheckOtherNode(t *testing.T) {
	fix := testfix.Dir(t, "backendai")
	empty := t.TempDir()
	base := []string{"--config", filepath.Join(fix, "agent.multi-agent.slot-based.toml"),
		"--devices", filepath.Join(fix, "mock-accelerator.toml"), "--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"),
		"--scratch-root", empty}
	code, out := runCLI(t, append([]string{"check"}, append(base, "--host-cpus", "0-63", "--host-mem", "512g")...)...)
	wantCode(t, code, exitOK, out, "Backend.AI main loads this file", "64 cores, 512g memory, 4 cuda")
	code, out = runCLI(t, append([]string{"check"}, append(base, "--host-cpus", "0-3", "--host-mem", "64g")...)...)
	wantCode(t, code, exitBadUsage, out, "the agent would stop at start-up on this node", "ResourceOverAllocatedError", "4 cores, 64g memory")
	code, out = runCLI(t, append([]string{"plan", "--mode", "auto-split"}, append(base, "--host-cpus", "0-63", "--host-mem", "512g")...)...)
	wantCode(t, code, exitOK, out)
	for _, bad := range [][]string{{"--host-cpus", "7-3"}, {"--host-cpus", "x"}, {"--host-mem", "lots"}, {"--host-mem", "0"}} {
		code, out = runCLI(t, append([]string{"check"}, append(base, bad...)...)...)
		wantCode(t, code, exitBadUsage, out, bad[0])
	}
}

// TestCheckDraftSchemaOnly: a file only the draft's schema loads, for a
// reason other than the device-based form, keeps the draft sentence
// (scripts match it) but does not claim the file is in the draft's form.
func TestCheckDraftSchemaOnly(t *testing.T) {
	fix := testfix.Dir(t, "backendai")
	args := []string{"check", "--config", filepath.Join("testdata", "draft-schema-only.toml"),
		"--devices", filepath.Join(fix, "mock-accelerator.toml"), "--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"),
		"--scratch-root", t.TempDir(), "--host-cpus", "0-63", "--host-mem", "512g"}
	// Main refuses it: that is the verdict unless the draft is asked for.
	code, out := runCLI(t, args...)
	wantCode(t, code, exitBadUsage, out, "Backend.AI main refuses to load this file", "line 11: agent.initial-resource-group-name: must be a string")
	if strings.Contains(out, agentconfig.DraftFormatWarning) {
		t.Errorf("a file not in the draft's form is called one:\n%s", out)
	}
	code, out = runCLI(t, append(args, "--schema", "bep-1044")...)
	wantCode(t, code, exitOK, out, agentconfig.DraftFormatWarning+" (only the draft's schema accepts it, though it is not in the draft's device-based form",
		"main: line 11: agent.initial-resource-group-name: must be a string")
}

// TestCheckMissingScratchRoot: the slot-based fixture, which main loads
// and starts with on a 64-core node, whose scratch root does not exist:
// the kernels were not seen, so check says the live state was not checked
// and exits 1, never "ok"; --json says so too. With the root there, ok.
func TestCheckMissingScratchRoot(t *testing.T) {
	fix := testfix.Dir(t, "backendai")
	dir := t.TempDir()
	root := filepath.Join(dir, "scratches")
	text, err := os.ReadFile(filepath.Join(fix, "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "agent.toml")
	edited := strings.Replace(string(text), `scratch-root = "/var/lib/backend.ai/scratches"`, `scratch-root = "`+root+`"`, 1)
	if edited == string(text) {
		t.Fatal("fixture changed: no scratch-root line")
	}
	if err := os.WriteFile(config, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"check", "--config", config,
		"--devices", filepath.Join(fix, "mock-accelerator.toml"), "--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"),
		"--host-cpus", "0-63", "--host-mem", "512g"}
	code, out := runCLI(t, args...)
	wantCode(t, code, exitProblem, out, "the live state was not checked", root)
	if strings.Contains(out, "ok:") || strings.Contains(out, "matches") {
		t.Errorf("check claims a state it did not read:\n%s", out)
	}
	code, out = runCLI(t, append(args, "--json")...)
	wantCode(t, code, exitProblem, out, `"status": "unchecked"`, `"live_state_checked": false`, `"loads_on_main": true`)

	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, args...)
	wantCode(t, code, exitOK, out, "ok: Backend.AI main loads this file")
}

// TestRollbackSaysTheRestoredFileWillNotLoad: undoing the apply that
// fixed a file main refused restores the refused bytes (as asked), and
// says before it does that an agent restarted with them will not start.
func TestRollbackSaysTheRestoredFileWillNotLoad(t *testing.T) {
	config, args := slotNode(t)
	text, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	// Agent a without its devices: all agents must declare the same.
	edited := string(text)
	i := strings.Index(edited, "  devices = ")
	j := strings.Index(edited[i:], "\n")
	if i < 0 || j < 0 {
		t.Fatal("fixture changed")
	}
	if err := os.WriteFile(config, []byte(edited[:i]+edited[i+j+1:]), 0o640); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, args("check")...)
	wantCode(t, code, exitBadUsage, out)
	code, out = runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=2.0", "--yes")...)
	wantCode(t, code, exitOK, out, "the current config breaks a rule")
	code, out = runCLI(t, args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored: ", "warning: the version to restore breaks a rule Backend.AI main checks when it loads the file", "an agent restarted with it will not start")
	code, out = runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=2.0", "--yes")...)
	wantCode(t, code, exitOK, out)
	code, out = runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=1.5", "--yes")...)
	wantCode(t, code, exitOK, out)
	// A version that loads restores without a word of it.
	code, out = runCLI(t, args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored: ")
	if strings.Contains(out, "warning: the version to restore") {
		t.Errorf("a loadable version warned:\n%s", out)
	}
}

// TestRollbackJudgesTheLiveKernels: a rollback is judged as apply judges
// a plan. Restoring an amount below what an agent's live kernels hold is
// refused (exit 1, the file untouched) unless --force, naming the
// kernels; restoring a file the agent's start-up checks refuse on this
// node (more shares given than the node has) says so before it goes on.
// It restored both with exit 0 and no word.
func TestRollbackJudgesTheLiveKernels(t *testing.T) {
	config, args := slotNode(t)
	addSlotKernel(t, config, "i-gpu-node01-a") // 0.90 of GPU1
	text, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	setA := func(amount string) {
		t.Helper()
		edited := strings.Replace(string(text), `devices = { "cuda.shares" = "2.0" }`, `devices = { "cuda.shares" = "`+amount+`" }`, 1)
		if edited == string(text) {
			t.Fatal("fixture changed: no devices line")
		}
		if err := os.WriteFile(config, []byte(edited), 0o640); err != nil {
			t.Fatal(err)
		}
	}

	// a given 0.5 while its kernel holds 0.90; an apply gives it 2.0.
	setA("0.5")
	code, out := runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=2.0", "--yes")...)
	wantCode(t, code, exitOK, out, "verified")
	applied, _ := os.ReadFile(config)
	code, out = runCLI(t, args("rollback", "--yes")...)
	wantCode(t, code, exitProblem, out, "live kernels the restored partition affects (1):",
		"agent i-gpu-node01-a's kernels hold 0.90 cuda.shares, more than its restored 0.5",
		"refusing to roll back: the live kernels of i-gpu-node01-a hold more than the restored amount (--force rolls back anyway)")
	if now, _ := os.ReadFile(config); string(now) != string(applied) {
		t.Fatal("a refused rollback wrote the file")
	}
	code, out = runCLI(t, args("rollback", "--yes", "--force")...)
	wantCode(t, code, exitOK, out, "restored: ")

	// a given 3.0 beside b's 2.0 on four GPUs of 1.0: the agent stops at
	// start-up (ResourceOverAllocatedError). An apply fixes it; undoing
	// that apply says what it restores.
	setA("3.0")
	code, out = runCLI(t, args("check")...)
	wantCode(t, code, exitBadUsage, out)
	code, out = runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=2.0", "--yes")...)
	wantCode(t, code, exitOK, out, "verified")
	code, out = runCLI(t, args("rollback", "--yes")...)
	wantCode(t, code, exitOK, out, "restored: ", "warning: the version to restore fails the agent's start-up checks on this node", "an agent restarted with it will not start")
	if strings.Contains(out, "live kernels the restored partition affects") {
		t.Errorf("a rollback that leaves every kernel within its agent's amount named some:\n%s", out)
	}
}

// TestRollbackRefusesUnreadKernels: a kernel file that cannot be read
// hides what it holds, and apply refuses then without --force; a rollback
// is judged as apply judges a plan, so it refuses too. It restored with
// exit 0 and no word.
func TestRollbackRefusesUnreadKernels(t *testing.T) {
	config, args := slotNode(t)
	code, out := runCLI(t, args("apply", "--slot", "i-gpu-node01-a=cuda.shares=1.0", "--yes")...)
	wantCode(t, code, exitOK, out, "verified")
	applied, _ := os.ReadFile(config)
	kdir := filepath.Join(filepath.Dir(config), "scratches", "9a9a9a9a-2222-4a7e-b5d2-91c0e7f3a6b8", "config")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kdir, "resource.txt"), []byte("SLOTS={garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, args("rollback", "--yes")...)
	wantCode(t, code, exitProblem, out, "refusing to roll back: 1 kernel file(s) could not be read or parsed, so what those kernels hold is not known (--force rolls back anyway)")
	if now, _ := os.ReadFile(config); string(now) != string(applied) {
		t.Fatal("a refused rollback wrote the file")
	}
	// Without the node's GPUs the restored cuda.shares cannot be checked
	// against them: said, as a failed check is.
	code, out = runCLI(t, "rollback", "--config", config, "--host-cpus", "0-63", "--host-mem", "512g", "--yes")
	wantCode(t, code, exitProblem, out, "warning: the agent's start-up checks on the restored accelerator amounts were not run", "refusing to roll back: 1 kernel file(s)")
	code, out = runCLI(t, args("rollback", "--yes", "--force")...)
	wantCode(t, code, exitOK, out, "restored: ")
}
