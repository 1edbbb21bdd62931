package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/testfix"
)

// TestCheckMockSettingsUnread: with the agent's etcd unreachable and no
// --mock-etcd, the mock plugin's mode (cuda.device or cuda.shares) and its
// GPUs' capacities are a guess, and nothing that depends on them is judged.
// The tour found check judging against the guess: kernels' cuda.shares
// held "1.60 of 1" (over-capacity, exit 1 as drift), cuda.shares "a slot
// no device provides", "did you mean cuda.device?" for a MIG slice's slot,
// each agent given a "cuda.device 0" the file does not have; plan pointing
// at a warning it never printed, and apply's refusal naming --devices,
// which was passed.
func TestCheckMockSettingsUnread(t *testing.T) {
	config, text, args := mockUnreadTree(t)
	guessed := []string{"over-capacity: cuda", "1.60 of 1", "unsupported-resource", "did you mean", "cuda.device 0", "see its warning", "drift"}
	notJudged := func(what, out string) {
		t.Helper()
		for _, w := range guessed {
			if strings.Contains(out, w) {
				t.Errorf("%s judges against the guessed settings (%q):\n%s", what, w, out)
			}
		}
		// Said once, with etcd's answer and what to pass.
		if n := strings.Count(out, "settings could not be read from the agent's etcd"); n != 1 {
			t.Errorf("%s says %d times that the settings were not read, want once:\n%s", what, n, out)
		}
	}

	code, out := runCLI(t, append([]string{"check"}, args...)...)
	wantCode(t, code, exitProblem, out, "connection refused", "--mock-etcd FILE", "not run: the mock plugin's settings were not read")
	notJudged("check", out)
	code, out = runCLI(t, append([]string{"check", "--json"}, args...)...)
	wantCode(t, code, exitProblem, out, `"status": "unchecked"`, `"live_state_checked": false`, `"startup_checked": false`)

	// The snapshot the console, serve and the exporter show: its issues
	// (the console's Issues pane) judge nothing against the guess either,
	// and its source says the guess first, where a narrow header keeps it.
	code, out = runCLIQuiet(t, append([]string{"snapshot", "--compact"}, args...)...)
	wantCode(t, code, exitOK, out, `"detail":"assumed (the plugin's settings in etcd not read): `)
	for _, w := range []string{`"over-capacity"`, `"unsupported-resource"`} {
		if strings.Contains(out, w) {
			t.Errorf("the snapshot's issues judge against the guessed settings (%s):\n%s", w, out)
		}
	}

	change := []string{"--slot", "i-gpu-node01-a=cuda.shares=1.5"}
	code, out = runCLI(t, append(append([]string{"plan"}, args...), change...)...)
	wantCode(t, code, exitOK, out, "connection refused", "--mock-etcd FILE")
	notJudged("plan", out)

	orig, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, append(append([]string{"apply"}, args...), append(change, "--yes")...)...)
	wantCode(t, code, exitProblem, out, "refusing to apply", "the mock plugin's settings were not read", "--mock-etcd FILE")
	if strings.Contains(out, "pass --devices") {
		t.Errorf("apply's refusal asks for --devices, which was passed:\n%s", out)
	}
	if now, _ := os.ReadFile(config); string(now) != string(orig) {
		t.Fatal("a refused apply changed the file")
	}

	// Shared mode gives no accelerator amounts to judge, but the kernels'
	// cuda.shares were held against the guess all the same: not "ok".
	shared := regexp.MustCompile(`(?m)^  \[agents\.resource\]\n(  [a-z].*\n)+`).ReplaceAllString(
		strings.Replace(text, `allocation-mode = "manual"`, `allocation-mode = "shared"`, 1), "")
	if strings.Contains(shared, "agents.resource") || !strings.Contains(shared, `"shared"`) {
		t.Fatal("fixture changed: the shared-mode config was not made")
	}
	if err := os.WriteFile(config, []byte(shared), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out = runCLI(t, append([]string{"check"}, args...)...)
	wantCode(t, code, exitProblem, out, "slot-based, shared", "was not judged: its settings were not read")
	notJudged("check (shared)", out)
	if strings.Contains(out, "\nok:") || strings.Contains(out, "matches") {
		t.Errorf("check calls holdings judged against nothing ok:\n%s", out)
	}
	code, out = runCLI(t, append([]string{"check", "--json"}, args...)...)
	wantCode(t, code, exitProblem, out, `"status": "unchecked"`, `"live_state_checked": false`, `"startup_checked": true`)
}

// TestSnapshotMockSettingsUnread: the snapshot the console, serve, the
// exporter and the history read gives no capacity of a GPU whose mock
// plugin settings were not read (its mode, and so its slot and capacity,
// a guess). The tour found the console's row "1.60/1" and a bar at 160%:
// an over-committed GPU, from kernels' 1.60 cuda.shares over the discrete
// guess's 1. The MIG slice, a capacity of 1 in either mode, keeps it; the
// gpu_alloc_map ratio leaves the GPU out and says what would give it.
func TestSnapshotMockSettingsUnread(t *testing.T) {
	_, _, args := mockUnreadTree(t)
	snapshot := func(extra ...string) (string, string) {
		t.Helper()
		root := newRootCmd()
		var stdout, stderr bytes.Buffer
		root.SetArgs(append(append([]string{"snapshot"}, args...), extra...))
		root.SetOut(&stdout)
		root.SetErr(&stderr)
		root.SetIn(strings.NewReader(""))
		if err := root.Execute(); err != nil {
			t.Fatalf("snapshot %v: %v\n%s", extra, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	out, _ := snapshot("--json")
	var doc struct {
		Devices []struct {
			ID       string            `json:"id"`
			Capacity *string           `json:"capacity"`
			Free     *string           `json:"free"`
			Held     map[string]string `json:"held"`
		} `json:"devices"`
		Source struct {
			Detail string `json:"detail"`
		} `json:"source"`
		Ratio map[string]string `json:"alloc_map_ratio"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("snapshot --json: %v\n%s", err, out)
	}
	const gpu = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"
	seen := map[string]bool{}
	for _, d := range doc.Devices {
		switch {
		case d.ID == gpu:
			seen[gpu] = true
			if d.Capacity != nil || d.Free != nil || d.Held["cuda.shares"] != "1.60" {
				t.Errorf("%s: capacity %v, free %v, held %v: want the 1.60 held and no capacity or free (unknown)", d.ID, orNone(d.Capacity), orNone(d.Free), d.Held)
			}
		case strings.HasPrefix(d.ID, "MIG-"):
			seen["mig"] = true
			if d.Capacity == nil || *d.Capacity != "1" {
				t.Errorf("MIG slice %s: capacity %v, want 1 (the same in either mode)", d.ID, orNone(d.Capacity))
			}
		}
	}
	if !seen[gpu] || !seen["mig"] {
		t.Fatalf("the snapshot lacks the GPU or the MIG slice:\n%s", out)
	}
	if strings.Contains(doc.Source.Detail, " 4 cuda.device") {
		t.Errorf("the source detail totals the guessed GPUs: %q", doc.Source.Detail)
	}
	if r, ok := doc.Ratio[gpu]; ok {
		t.Errorf("alloc_map_ratio gives %s %s, a ratio over the guessed capacity", gpu, r)
	}
	out, errText := snapshot("--alloc-map")
	if strings.Contains(out, gpu) || !strings.Contains(errText, "--alloc-map leaves out "+gpu) || !strings.Contains(errText, "--mock-etcd FILE") ||
		strings.Contains(errText, "--fgpu-capacity") {
		t.Errorf("--alloc-map: want %s left out, and --mock-etcd named (not the CUDA plugin's flags):\n%s\nstderr: %s", gpu, out, errText)
	}
}

// orNone is a JSON string that may be absent, as a message says it.
func orNone(p *string) string {
	if p == nil {
		return "(none)"
	}
	return *p
}

// mockUnreadTree writes a node whose agents' etcd cannot be read (a port
// nothing listens on), with a mock plugin of four GPUs and a MIG slice and
// two kernels holding 0.8 cuda.shares each of one GPU: within its capacity
// in fractional mode, beyond the 1 of the discrete guess. It returns the
// config's path and text and the flags that read the node.
func mockUnreadTree(t *testing.T) (config, text string, args []string) {
	t.Helper()
	fix := testfix.Dir(t, "backendai")
	dir := t.TempDir()
	root := filepath.Join(dir, "scratches")

	// A port nothing listens on: etcd cannot be read.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()

	raw, err := os.ReadFile(filepath.Join(fix, "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text = strings.NewReplacer(
		`port = 2379 }`, `port = `+port+` }`,
		"/var/lib/backend.ai/scratches", root,
	).Replace(string(raw))
	// Each agent gives an amount of the MIG slice's slot too.
	shares := `devices = { "cuda.shares" = "2.0" }`
	text = strings.Replace(text, shares, `devices = { "cuda.shares" = "2.0", "cuda.device:10g-mig" = "1" }`, 1)
	text = strings.Replace(text, shares, `devices = { "cuda.shares" = "2.0", "cuda.device:10g-mig" = "0" }`, 1)
	if !strings.Contains(text, "port = "+port) || !strings.Contains(text, root) || strings.Count(text, "10g-mig") != 2 {
		t.Fatal("fixture changed: its [etcd], scratch root or devices were not rewritten")
	}
	config = filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	mraw, err := os.ReadFile(filepath.Join(fix, "mock-accelerator.toml"))
	if err != nil {
		t.Fatal(err)
	}
	mtext := strings.Replace(string(mraw), "\ndevices = [\n", "\ndevices = [\n"+
		`  { mother_uuid = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d05", model_name = "MIG-10g", numa_node = 0, subproc_count = 14, memory_size = "10G", is_mig_device = true },`+"\n", 1)
	if mtext == string(mraw) {
		t.Fatal("fixture changed: no devices list in mock-accelerator.toml")
	}
	mock := filepath.Join(dir, "mock-accelerator.toml")
	if err := os.WriteFile(mock, []byte(mtext), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two kernels hold 0.8 cuda.shares each of one GPU: within its
	// capacity in fractional mode, beyond the 1 of the discrete guess.
	for i, id := range []string{"11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"} {
		kdir := filepath.Join(root, id, "config")
		if err := os.MkdirAll(kdir, 0o755); err != nil {
			t.Fatal(err)
		}
		res := "SCRATCH_SIZE=0m\nMOUNTS=\n" + `SLOTS={"cpu":"1","mem":"1073741824","cuda.shares":"0.8"}` +
			"\nUNIFIED_DEVICES=[]\nCUDA.SHARES_SHARES=c59395cd-ac91-4cd3-a1b0-3d2568aa2d01:0.80\nCPU_SHARES=" + strconv.Itoa(i) + ":1\nMEM_SHARES=root:1g\n"
		if err := os.WriteFile(filepath.Join(kdir, "resource.txt"), []byte(res), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	return config, text, []string{"--config", config, "--devices", mock, "--host-cpus", "0-63", "--host-mem", "512g"}
}
