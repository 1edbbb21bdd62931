package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestCheckManualWithAcceleratorsUnknown: a manual (slot-based) partition
// gives each agent cuda.shares; with the node's accelerators unknown (no
// NVML here, no --devices file) the agent's start-up checks on those
// amounts cannot run, so check says "not checked" and exits 1, never "ok".
func TestCheckManualWithAcceleratorsUnknown(t *testing.T) {
	fix := testfix.Dir(t, "backendai")
	cfg, err := os.ReadFile(filepath.Join(fix, "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(path, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "scratches")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"check", "--config", path, "--devices", "nvml", "--scratch-root", empty, "--host-cpus", "0-63", "--host-mem", "512g"}
	code, out := runCLIQuiet(t, args...)
	if !strings.Contains(out, "unknown") {
		t.Skipf("NVML answers on this machine, so the accelerators are known:\n%s", out)
	}
	if code != exitProblem || strings.Contains("\n"+out, "\nok: ") || !strings.Contains(out, "was not checked") {
		t.Errorf("exit %d, want %d and 'was not checked', no 'ok:':\n%s", code, exitProblem, out)
	}
	code, out = runCLIQuiet(t, append(args, "--json")...)
	var rep struct {
		Status         string `json:"status"`
		StartupChecked *bool  `json:"startup_checked"`
	}
	if err := json.NewDecoder(strings.NewReader(out[strings.Index(out, "{"):])).Decode(&rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != exitProblem || rep.Status != "unchecked" || rep.StartupChecked == nil || *rep.StartupChecked {
		t.Errorf("--json: exit %d, status %q, startup_checked %v; want 1, unchecked, false\n%s", code, rep.Status, rep.StartupChecked, out)
	}
}

// TestCheckSlotTypoWithAcceleratorsUnknown: with the node's accelerators
// unknown, which slots a plugin registers cannot be said, but a slot a
// small edit away from cuda.shares is still warned of as a likely typo
// (check skipped every slot-name warning there before); a slot of another
// plugin's name is not.
func TestCheckSlotTypoWithAcceleratorsUnknown(t *testing.T) {
	fix := testfix.Dir(t, "backendai")
	cfg, err := os.ReadFile(filepath.Join(fix, "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), `"cuda.shares"`) {
		t.Fatalf("the fixture gives no cuda.shares:\n%s", cfg)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.toml")
	// Every agent's, so that the file still loads (every agent lists the
	// same slots).
	typo := strings.ReplaceAll(string(cfg), `"cuda.shares"`, `"cuda.shres"`)
	if err := os.WriteFile(path, []byte(typo), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "scratches")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"check", "--config", path, "--devices", "nvml", "--scratch-root", empty, "--host-cpus", "0-63", "--host-mem", "512g"}
	_, out := runCLIQuiet(t, args...)
	if !strings.Contains(out, "was not checked") {
		t.Skipf("NVML answers on this machine, so the accelerators are known:\n%s", out)
	}
	if !strings.Contains(out, `devices names "cuda.shres", not a slot of the CUDA plugins (did you mean cuda.shares?)`) {
		t.Errorf("no typo warning for cuda.shres:\n%s", out)
	}
	other := strings.ReplaceAll(string(cfg), `"cuda.shares"`, `"rocm.device"`)
	if err := os.WriteFile(path, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out := runCLIQuiet(t, args...); strings.Contains(out, "did you mean") {
		t.Errorf("another plugin's slot warned of as a typo:\n%s", out)
	}
}
