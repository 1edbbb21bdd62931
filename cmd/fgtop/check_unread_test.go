package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestCheckUnreadKernelFile: a kernel whose resource.txt does not parse
// is a live state check did not read: it says so, names the file, and
// exits 1. It printed the parse error as a note and then "ok ... the live
// state matches the config" with exit 0.
func TestCheckUnreadKernelFile(t *testing.T) {
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
	kdir := filepath.Join(root, "5b0d3a9e-7c2f-4e1a-9b8d-6f4c2e1a0b3d", "config")
	if err := os.MkdirAll(kdir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"check", "--config", config,
		"--devices", filepath.Join(fix, "mock-accelerator.toml"), "--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"),
		"--host-cpus", "0-63", "--host-mem", "512g"}
	code, out := runCLI(t, args...)
	wantCode(t, code, exitOK, out, "ok: Backend.AI main loads this file")

	bad := filepath.Join(kdir, "resource.txt")
	slots := `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0.5"}`
	orig, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	// As the agent writes it: SCRATCH_SIZE, MOUNTS, SLOTS, then the
	// allocation lines. Without MOUNTS= a file is refused as one the
	// agent cannot read, whatever else it lacks: the cut ones below
	// would not reach the check of what SLOTS asks for.
	head := "SCRATCH_SIZE=0m\nMOUNTS=\n" + slots
	for _, c := range []struct{ name, text, why string }{
		{"not KEY=VALUE", "CID=5b0d3a9e\nthis line is not KEY=VALUE\n", ""},
		// A file cut as it is written or copied: plan and apply skipped
		// the first (a torn file, a warning the live console lets
		// settle) and all three passed the last two (they parse).
		{"torn inside SLOTS", "SCRATCH_SIZE=0m\nMOUNTS=\n" + slots[:30], "no newline"},
		{"cut at a line's end", head + "\nUNIFIED_DEVICES=[]\n", "but lists no allocation of it"},
		{"cut inside an allocation line", head + "\nUNIFIED_DEVICES=[]\nCUDA.SHARES_SHA", "but lists no allocation of it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(bad, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out := runCLI(t, args...)
			wantCode(t, code, exitProblem, out, "unread: ", "the live state was not fully read", bad, c.why)
			if strings.Contains(out, "\nok:") || strings.Contains(out, "matches") {
				t.Errorf("check calls a state it could not read ok:\n%s", out)
			}
			code, out = runCLI(t, append(args, "--json")...)
			wantCode(t, code, exitProblem, out, `"status": "unchecked"`, `"live_state_checked": false`, `"unread_files": [`)

			change := []string{"--slot", "i-gpu-node01-b=cuda.shares=0.5"}
			plan := append(append([]string{"plan"}, args[1:]...), change...)
			_, out = runCLI(t, plan...)
			if !strings.Contains(out, bad) {
				t.Errorf("plan does not name the unread file:\n%s", out)
			}
			apply := append(append([]string{"apply"}, args[1:]...), append(change, "--yes")...)
			code, out = runCLI(t, apply...)
			wantCode(t, code, exitProblem, out, "refusing to apply: 1 kernel file(s) could not be read or parsed, so what those kernels hold is not known (--force applies anyway)")
			if now, _ := os.ReadFile(config); string(now) != string(orig) {
				t.Fatal("a refused apply changed the file")
			}
		})
	}
}
