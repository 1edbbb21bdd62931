package enginetest

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// ScriptedHost is the virtual host StartScripted's node runs on: 128
// cores and 1 TiB, so that nothing depends on the machine running the
// test.
var ScriptedHost = inventory.HostOptions{CPUs: cpuRange(128), MemBytes: 1 << 40}

func cpuRange(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// StartScripted starts a live engine for a test that scripts a node's
// history: the agent.toml at config (which must load without issues), a
// fresh scratch root (a temp dir) for each of agents in place of the
// config's, the fixtures' four mock A100s with their etcd settings on
// ScriptedHost, clock as the engine's time (the script moves it), no
// periodic poll, no process or health probes, and a config change taken
// up 5 ms after it. It returns the running engine and each agent's root.
func StartScripted(t testing.TB, config string, clock func() time.Time, agents ...model.AgentID) (*Live, map[model.AgentID]string) {
	t.Helper()
	v, err := engine.LoadConfigView(config)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Issues) > 0 {
		t.Fatalf("the scripted agent.toml has problems: %v", v.Issues)
	}
	var opts engine.Options
	v.Apply(&opts)
	roots := map[model.AgentID]string{}
	opts.Roots = nil
	for _, id := range agents {
		roots[id] = t.TempDir()
		opts.Roots = append(opts.Roots, scratch.Root{Path: roots[id], Agent: id})
	}
	opts.RootsOverridden = true
	fx := Fixtures(t)
	src, err := inventory.NewMock(filepath.Join(fx, "mock-accelerator.toml"), filepath.Join(fx, "mock-accelerator.etcd.json"),
		inventory.NewHost(ScriptedHost))
	if err != nil {
		t.Fatal(err)
	}
	opts.Inventory, opts.Node, opts.PollEvery, opts.Clock = src, "node-replay", time.Hour, clock
	opts.NoProcs, opts.NoHealth = true, true
	opts.ConfigDebounce = 5 * time.Millisecond
	return Start(t, opts), roots
}
