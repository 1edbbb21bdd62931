package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine"
	"github.com/fgtop/fgtop/engine/enginetest"
	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/scratch"
	"github.com/fgtop/fgtop/model"
)

// week is a scripted week on a real node: a real scratch tree per agent,
// a real agent.toml (slot-based, two agents), the fixtures' mock GPUs on a
// virtual host, a real engine following the tree with a clock the script
// sets, and the real recorder writing what the engine publishes.
type week struct {
	t      *testing.T
	base   time.Time
	now    atomic.Int64
	roots  map[model.AgentID]string
	config string
	live   *enginetest.Live
	rec    *history.Recorder
	dir    string
	files  *enginetest.Files
}

const (
	agentA = model.AgentID("i-node-a")
	agentB = model.AgentID("i-node-b")
)

// slotConfig is the two agents' agent.toml with their cuda.shares amounts.
func slotConfig(a, b string) string {
	var sb strings.Builder
	sb.WriteString(`[etcd]
namespace = "local"
addr = { host = "127.0.0.1", port = 2379 }

[agent]
backend = "docker"
rpc-listen-addr = { host = "0.0.0.0", port = 6001 }

[container]
scratch-type = "hostdir"
scratch-root = "/var/lib/backend.ai/scratches"
port-range = [30000, 31999]

[resource]
allocation-mode = "manual"
`)
	for i, amt := range []string{a, b} {
		id := []model.AgentID{agentA, agentB}[i]
		fmt.Fprintf(&sb, `
[[agents]]
  [agents.agent]
  id = %q
  agent-sock-port = %d
  [agents.resource]
  cpu = 60
  mem = "480G"
  devices = { "cuda.shares" = %q }
`, id, 6007+i, amt)
	}
	return sb.String()
}

func newWeek(t *testing.T, a, b string) *week {
	t.Helper()
	w := &week{t: t, base: time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC), roots: map[model.AgentID]string{}, dir: t.TempDir(), files: enginetest.NewFiles(t)}
	w.now.Store(w.base.UnixNano())
	clock := func() time.Time { return time.Unix(0, w.now.Load()) }
	cfgDir := t.TempDir()
	w.config = filepath.Join(cfgDir, "agent.toml")
	if err := os.WriteFile(w.config, []byte(slotConfig(a, b)), 0o644); err != nil {
		t.Fatal(err)
	}
	v, err := engine.LoadConfigView(w.config)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Issues) > 0 {
		t.Fatalf("the scripted agent.toml has problems: %v", v.Issues)
	}
	var opts engine.Options
	v.Apply(&opts)
	opts.Roots = nil
	for _, id := range []model.AgentID{agentA, agentB} {
		w.roots[id] = t.TempDir()
		opts.Roots = append(opts.Roots, scratch.Root{Path: w.roots[id], Agent: id})
	}
	opts.RootsOverridden = true
	cpus := make([]int, 128)
	for i := range cpus {
		cpus[i] = i
	}
	fx := enginetest.Fixtures(t)
	src, err := inventory.NewMock(filepath.Join(fx, "mock-accelerator.toml"), filepath.Join(fx, "mock-accelerator.etcd.json"),
		inventory.NewHost(inventory.HostOptions{CPUs: cpus, MemBytes: 1 << 40}))
	if err != nil {
		t.Fatal(err)
	}
	opts.Inventory = src
	opts.Node = "node-replay"
	opts.PollEvery = time.Hour
	opts.Clock = clock
	opts.NoProcs, opts.NoHealth = true, true
	opts.ConfigDebounce = 5 * time.Millisecond
	w.live = enginetest.Start(t, opts)
	w.rec, err = history.Open(history.Options{Dir: w.dir, FlushEvery: time.Millisecond, Clock: clock, Keep: 30 * 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if w.rec != nil {
			w.rec.Close()
		}
	})
	w.observe(func(*model.Snapshot) error { return nil })
	return w
}

// at sets the clock to the week's start plus d.
func (w *week) at(d time.Duration) { w.now.Store(w.base.Add(d).UnixNano()) }

// observe waits for the engine's snapshot cond accepts and records it.
func (w *week) observe(cond func(*model.Snapshot) error) *model.Snapshot {
	w.t.Helper()
	s := w.live.Wait(w.t, "the scripted change", 20*time.Second, cond)
	if w.rec == nil {
		return s // no recorder runs
	}
	w.rec.Observe(s)
	if err := w.rec.Flush(); err != nil {
		w.t.Fatal(err)
	}
	return s
}

// start makes kernel n of agent run at d, holding shares (device index
// into the mock GPUs, amount).
func (w *week) start(d time.Duration, agent model.AgentID, n int, shares ...enginetest.Share) {
	w.t.Helper()
	w.at(d)
	id := enginetest.KernelID(n)
	enginetest.MustWriteKernel(w.t, w.roots[agent], id, w.files.Resource(w.roots[agent], id, shares))
	w.observe(func(s *model.Snapshot) error {
		if k := s.Kernel(model.KernelID(id)); k == nil || k.Alloc == nil {
			return fmt.Errorf("kernel %s not seen yet", id)
		}
		return nil
	})
}

// stop ends kernel n at d.
func (w *week) stop(d time.Duration, agent model.AgentID, n int) {
	w.t.Helper()
	w.at(d)
	id := enginetest.KernelID(n)
	if err := os.RemoveAll(filepath.Join(w.roots[agent], id)); err != nil {
		w.t.Fatal(err)
	}
	w.observe(func(s *model.Snapshot) error {
		if s.Kernel(model.KernelID(id)) != nil {
			return fmt.Errorf("kernel %s still seen", id)
		}
		return nil
	})
}

// gpu is mock GPU i.
func gpu(i int) model.DeviceID { return enginetest.MockDevices[i] }

func share(i int, amt string) enginetest.Share {
	return enginetest.Share{Dev: gpu(i), Amount: model.MustDec(amt)}
}

// reader closes the recorder and opens the record.
func (w *week) reader() *history.Reader {
	w.t.Helper()
	w.at(7 * 24 * time.Hour)
	w.observe(func(*model.Snapshot) error { return nil })
	if err := w.rec.Close(); err != nil {
		w.t.Fatal(err)
	}
	rd, err := history.OpenReader(w.dir)
	if err != nil {
		w.t.Fatal(err)
	}
	return rd
}
