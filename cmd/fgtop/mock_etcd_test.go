package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/internal/etcdtest"
	"github.com/fgtop/fgtop/internal/testfix"
)

// TestMockSettingsFromTheAgentsEtcd: with --devices mock-accelerator.toml
// and no --mock-etcd, the mock plugin's settings are read as its agents
// read them, from the etcd agent.toml names (config/plugins/accelerator/
// mock/, a node scope over the global one). The tour found them never
// read: discrete mode assumed in silence, and `check` saying the agent
// would stop at start-up (exit 2) on a fractional node whose etcd said so.
// Where they cannot be read, nothing is judged against the guess (exit 1,
// said); a --mock-etcd file is taken as before, etcd unread.
func TestMockSettingsFromTheAgentsEtcd(t *testing.T) {
	etcd := etcdtest.Start(t)
	const ns = "fgtop-mock-test"
	global := "/sorna/" + ns + "/config/plugins/accelerator/mock/"
	for k, v := range map[string]string{"allocation_mode": "fractional", "unit_mem": "40g", "unit_proc": "108", "quantum_size": "0.1"} {
		etcd.Put(global+k, v)
	}
	fix := testfix.Dir(t, "backendai")
	cfg := etcdSlotConfig(t, etcd, ns)
	check := func(extra ...string) (int, string) {
		args := append([]string{"check", "--config", cfg, "--devices", filepath.Join(fix, "mock-accelerator.toml"),
			"--host-cpus", "0-63", "--host-mem", "512g"}, extra...)
		return runCLI(t, args...)
	}

	code, out := check()
	wantCode(t, code, exitOK, out, "the agent starts on this node", "4 cuda")
	if strings.Contains(out, "cuda.device") {
		t.Fatalf("the fractional settings in etcd were not taken (cuda.device registered):\n%s", out)
	}

	// One agent's node scope sets another mode: one mock device list
	// cannot be both agents', so nothing is judged against it.
	etcd.Put("/sorna/"+ns+"/nodes/agents/i-gpu-node01-b/config/plugins/accelerator/mock/allocation_mode", "discrete")
	code, out = check()
	wantCode(t, code, exitProblem, out, "set them differently", "were not checked")
	etcd.Delete("/sorna/" + ns + "/nodes/agents/i-gpu-node01-b/config/plugins/accelerator/mock/allocation_mode")

	// A value the plugin refuses is bad input, as in a --mock-etcd file.
	etcd.Put(global+"unit_proc", "1")
	code, out = check()
	wantCode(t, code, exitBadUsage, out, "unit_proc", "below the plugin's minimum")
	etcd.Put(global+"unit_proc", "108")

	// simulate on the live tree places on the settings etcd holds.
	code, out = runCLI(t, "simulate", "--config", cfg, "--devices", filepath.Join(fix, "mock-accelerator.toml"), "--request", "cuda.shares=0.5")
	wantCode(t, code, exitOK, out, "fractional mode", "cuda.shares GPU")

	// --mock-etcd wins: etcd is not read (stopped, it would be said).
	etcd.Stop()
	code, out = check("--mock-etcd", filepath.Join(fix, "mock-accelerator.etcd.json"))
	wantCode(t, code, exitOK, out, "the agent starts on this node")
	if strings.Contains(out, "etcd") {
		t.Fatalf("--mock-etcd given, yet etcd was read:\n%s", out)
	}

	// etcd down: the guess is said, and the start-up checks are not run
	// against it (it was exit 2, "the agent would stop at start-up").
	code, out = check()
	wantCode(t, code, exitProblem, out, "could not be read from the agent's etcd", "connection refused", "--mock-etcd FILE", "was not checked")
	if strings.Contains(out, "would stop at start-up") {
		t.Fatalf("a verdict judged against guessed settings:\n%s", out)
	}
	// simulate places nothing on a guess.
	code, out = runCLI(t, "simulate", "--config", cfg, "--devices", filepath.Join(fix, "mock-accelerator.toml"), "--request", "cuda.shares=0.5")
	wantCode(t, code, exitBadUsage, out, "could not be read from the agent's etcd", "--mock-etcd FILE")
}

// etcdSlotConfig is the fixtures' slot-based agent.toml with its [etcd]
// pointed at etcd under namespace ns and its scratch root in a temporary
// directory; it returns the file's path.
func etcdSlotConfig(t *testing.T, etcd *etcdtest.Server, ns string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testfix.Dir(t, "backendai"), "agent.multi-agent.slot-based.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	scratch := filepath.Join(dir, "scratches")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(etcd.Endpoint, ":")
	text := strings.NewReplacer(
		`namespace = "local"`, `namespace = "`+ns+`"`,
		`addr = { host = "127.0.0.1", port = 2379 }`, `addr = { host = "`+host+`", port = `+port+` }`,
		"/var/lib/backend.ai/scratches", scratch,
	).Replace(string(raw))
	if !strings.Contains(text, `port = `+port) || !strings.Contains(text, ns) || !strings.Contains(text, scratch) {
		t.Fatal("the fixture's [etcd] or scratch root was not rewritten: the test would prove nothing")
	}
	cfg := filepath.Join(dir, "agent.toml")
	if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}
