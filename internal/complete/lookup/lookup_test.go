package lookup

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
	"github.com/fgtop/fgtop/model"

	"github.com/fgtop/fgtop/internal/testfix"
)

func TestRegularFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.toml", "a.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.json", filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		want []string
	}{
		{dir, []string{"a.json", "b.toml"}}, // no directory, no link
		{"", nil},
		{filepath.Join(dir, "missing"), nil},
	} {
		if got := RegularFiles(c.dir); !slices.Equal(got, c.want) {
			t.Errorf("RegularFiles(%q) = %q, want %q", c.dir, got, c.want)
		}
	}
}

func TestAgentIDsAndSlotNames(t *testing.T) {
	fx := testfix.Dir(t, "backendai")
	slotBased := filepath.Join(fx, "agent.multi-agent.slot-based.toml")
	mock := filepath.Join(fx, "mock-accelerator.toml")
	etcd := filepath.Join(fx, "mock-accelerator.etcd.json")
	found := func() (string, error) { return slotBased, nil }
	none := func() (string, error) { return "", errors.New("no agent.toml") }
	broken := filepath.Join(t.TempDir(), "agent.toml")
	if err := os.WriteFile(broken, []byte("[[agents"), 0o644); err != nil {
		t.Fatal(err)
	}
	agents := []string{"i-gpu-node01-a", "i-gpu-node01-b"}
	for _, c := range []struct {
		name   string
		n      Node
		agents []string
		slots  []string
	}{
		{"config named", Node{Config: slotBased, Devices: mock, MockEtcd: etcd, find: none}, agents,
			[]string{"cpu", "mem", "cuda.shares"}},
		{"config found", Node{Devices: mock, MockEtcd: etcd, find: found}, agents,
			[]string{"cpu", "mem", "cuda.shares"}},
		// The commands look for agent.toml only where no scratch root is
		// named; its slots are offered all the same.
		{"roots only", Node{Roots: []string{"/x/kernels", "b=/y"}, Devices: mock, MockEtcd: etcd, find: found}, []string{"b", "kernels"},
			[]string{"cpu", "mem", "cuda.shares"}},
		{"roots beside a config", Node{Config: slotBased, Roots: []string{"c=/z"}, Devices: "/nonexistent.toml", find: none},
			append([]string{"c"}, agents...), []string{"cpu", "mem", "cuda.shares"}},
		{"nothing to read", Node{Devices: "/nonexistent.toml", find: none}, nil, []string{"cpu", "mem"}},
		{"a config that does not load", Node{Config: broken, Devices: "/nonexistent.toml", find: found}, nil, []string{"cpu", "mem"}},
	} {
		if got := c.n.AgentIDs(); !slices.Equal(got, c.agents) {
			t.Errorf("%s: AgentIDs() = %q, want %q", c.name, got, c.agents)
		}
		if got := c.n.SlotNames(); !slices.Equal(got, c.slots) {
			t.Errorf("%s: SlotNames() = %q, want %q", c.name, got, c.slots)
		}
	}
}

func TestDeviceIDs(t *testing.T) {
	fx := testfix.Dir(t, "backendai")
	n := Node{Devices: filepath.Join(fx, "mock-accelerator.toml"), MockEtcd: filepath.Join(fx, "mock-accelerator.etcd.json")}
	ids := n.DeviceIDs()
	if len(ids) == 0 || !slices.ContainsFunc(ids, func(s string) bool { return len(s) > 5 && s[:5] == "cuda:" }) {
		t.Errorf("DeviceIDs() = %q, want the mock's cuda devices", ids)
	}
	if slices.ContainsFunc(ids, func(s string) bool { return len(s) > 4 && s[:4] == "mem:" }) {
		t.Errorf("DeviceIDs() = %q offers memory, which moves with --mem", ids)
	}
	if ids := (Node{Devices: "/nonexistent.toml"}).DeviceIDs(); ids != nil {
		t.Errorf("DeviceIDs() of a source that does not open = %q, want none", ids)
	}
}

func TestAccelerators(t *testing.T) {
	dir := t.TempDir()
	rec, err := history.Open(history.Options{Dir: dir, FlushEvery: time.Millisecond, Keep: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	devs := []model.Device{
		{ID: "0", Name: "cuda", Slot: "cuda.shares", Capacity: model.MustDec("1")},
		{ID: "0", Name: "cpu", Slot: "cpu", Capacity: model.MustDec("1")},
		{ID: "root", Name: "mem", Slot: "mem", Capacity: model.MustDec("1024")},
	}
	// The record has to span the completion's now, its latest state.
	for _, at := range []time.Time{time.Now().Add(-time.Minute), time.Now().Add(time.Minute)} {
		rec.Observe(&model.Snapshot{Time: at, Devices: devs})
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := Accelerators(dir), []string{"cuda:0"}; !slices.Equal(got, want) {
		t.Errorf("Accelerators = %q, want %q", got, want)
	}
}

func TestAcceleratorsOfNoRecord(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if got := Accelerators(dir); got != nil {
			t.Errorf("Accelerators(%s) = %q, want none", dir, got)
		}
	}
}
