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
	if err := os.WriteFile(bad, []byte("CID=5b0d3a9e\nthis line is not KEY=VALUE\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, args...)
	wantCode(t, code, exitProblem, out, "unread: ", "the live state was not fully read", bad)
	if strings.Contains(out, "\nok:") || strings.Contains(out, "matches") {
		t.Errorf("check calls a state it could not read ok:\n%s", out)
	}
	code, out = runCLI(t, append(args, "--json")...)
	wantCode(t, code, exitProblem, out, `"status": "unchecked"`, `"live_state_checked": false`, `"unread_files": [`)
}
