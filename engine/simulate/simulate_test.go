package simulate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/engine/inventory"
	"github.com/fgtop/fgtop/engine/placement"
	"github.com/fgtop/fgtop/model"
)

// usageMsg is err's message when it is a UsageError, "" when err is nil,
// and the test's failure otherwise.
func usageMsg(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return ""
	}
	var ue *UsageError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v (%T), want a *UsageError", err, err)
	}
	return ue.Msg
}

func TestParseHost(t *testing.T) {
	for _, c := range []struct {
		cpus, numa int
		mem        string
		want       string // the error, "" for none
		memGiven   bool
	}{
		{0, 0, "", "", false},
		{8, 2, "256g", "", true},
		{0, 2, "", "--cpu-numa needs --cpus", false},
		{-1, 0, "", "--cpus and --cpu-numa must not be negative", false},
		{4, -1, "", "--cpus and --cpu-numa must not be negative", false},
		{MaxCPUs + 1, 0, "", "--cpus 4097: at most 4096 cores", false},
		{4, 5, "", "--cpu-numa 5: more NUMA nodes than the 4 cores of --cpus", false},
		{4, 4, "", "", false},
		{0, 0, "0", `--mem "0": want a positive binary size such as 256g`, false},
		{0, 0, "lots", `--mem "lots": want a positive binary size`, false},
	} {
		h, err := ParseHost(c.cpus, c.numa, c.mem)
		got := usageMsg(t, err)
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("ParseHost(%d, %d, %q) = %q, want %q", c.cpus, c.numa, c.mem, got, c.want)
		}
		if err == nil && (h.MemGiven != c.memGiven || h.CPUs != c.cpus || h.CPUNUMA != c.numa) {
			t.Errorf("ParseHost(%d, %d, %q) = %+v", c.cpus, c.numa, c.mem, h)
		}
	}
	if h, _ := ParseHost(0, 0, "1k"); h.Mem.String() != "1024" {
		t.Errorf("--mem 1k = %s bytes, want 1024", h.Mem)
	}
}

func TestAsksHost(t *testing.T) {
	for _, c := range []struct {
		reqs []string
		want bool
	}{
		{nil, false},
		{[]string{"cuda.shares=1"}, false},
		{[]string{"cuda.shares=1", "cpu=2"}, true},
		{[]string{"mem=4g"}, true},
		{[]string{"free=1", "cuda.device=1"}, false},
		// A step that does not parse asks for nothing yet.
		{[]string{"cpu=x"}, false},
	} {
		if got := asksHost(c.reqs); got != c.want {
			t.Errorf("asksHost(%q) = %v, want %v", c.reqs, got, c.want)
		}
	}
}

func TestCheckSource(t *testing.T) {
	dir := t.TempDir()
	list := filepath.Join(dir, "devices.json")
	if err := os.WriteFile(list, []byte(`[{"id": "0", "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": 0}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		n    Node
		want string
	}{
		{"empty node of a source", Node{Devices: "auto"}, ""},
		{"live tree of a source", Node{Devices: "auto", Live: true, AgentGiven: true}, ""},
		{"live tree of a list", Node{Devices: list, Live: true}, "--devices " + list + ": a device list is for simulations on an empty node"},
		{"agent on an empty node", Node{Devices: list, AgentGiven: true}, "--agent needs --config or --scratch-root"},
		{"mock-etcd beside a list", Node{Devices: list, MockEtcd: "etcd.json"}, "--mock-etcd etcd.json: the mock plugin's settings apply only to a mock-accelerator.toml"},
		{"mock-etcd beside a source", Node{Devices: "auto", MockEtcd: "etcd.json"}, ""},
	} {
		got := usageMsg(t, c.n.CheckSource())
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestJudgeHost(t *testing.T) {
	for _, c := range []struct {
		name  string
		ds    []placement.HostDoubt
		notes []string
		err   string
	}{
		{"none", nil, nil, ""},
		{"notes", []placement.HostDoubt{
			{Slot: model.SlotCPU, Here: "2 cores"},
			{Slot: model.SlotMem, Here: "7.6 GiB", Evidence: "agent a's kernels hold 9 GiB"},
		}, []string{
			"cpu: this machine's 2 cores stand for the node's (another node's: --cpus N (and --cpu-numa K))",
			"mem: this machine's 7.6 GiB stand for the node's (another node's: --mem SIZE); agent a's kernels hold 9 GiB",
		}, ""},
		{"another node's", []placement.HostDoubt{
			{Slot: model.SlotMem, Here: "7.6 GiB"},
			{Slot: model.SlotCPU, Here: "2 cores", Contradiction: "the kernels hold core 7"},
		}, nil, "simulate: a request asks for cpu, and the tree of --config/--scratch-root is another node's: the kernels hold core 7; give that node's cpu with --cpus N (and --cpu-numa K)"},
	} {
		notes, err := judgeHost(c.ds)
		if got := usageMsg(t, err); got != c.err {
			t.Errorf("%s: error %q, want %q", c.name, got, c.err)
		}
		if strings.Join(notes, "\n") != strings.Join(c.notes, "\n") {
			t.Errorf("%s: notes %q, want %q", c.name, notes, c.notes)
		}
	}
}

func TestMockUnread(t *testing.T) {
	degraded := model.SourceInfo{Kind: inventory.KindMock, Health: inventory.HealthDegraded}
	for _, c := range []struct {
		name string
		snap model.Snapshot
		want string
	}{
		{"read", model.Snapshot{Source: model.SourceInfo{Kind: inventory.KindMock, Health: inventory.HealthOK}}, ""},
		{"another source degraded", model.Snapshot{Source: model.SourceInfo{Kind: inventory.KindNVML, Health: inventory.HealthDegraded}}, ""},
		{"why said", model.Snapshot{Source: degraded, Issues: []model.Issue{
			{Code: model.IssueDeviceSource, Severity: model.SevWarning, Message: "etcd 127.0.0.1:1 unreachable: fgtop assumes discrete mode"},
		}}, "simulate: etcd 127.0.0.1:1 unreachable: a placement on the plugin's defaults may be wrong; give the settings with --mock-etcd FILE"},
		{"nothing said", model.Snapshot{Source: degraded}, "simulate: the mock plugin's settings were not read: give them with --mock-etcd FILE"},
	} {
		if got := usageMsg(t, mockUnread(&c.snap)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// writeFile writes data to name under t's temporary directory.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const twoCases = `[
 {"id": "a", "map_class": "FractionAllocMap", "device_name": "cuda", "slot_name": "cuda.shares", "slot_type": "count",
  "strategy": "EVENLY", "quantum_size": "0.01", "affinity_policy": "INTERLEAVED", "allow_resource_fragmentation": true,
  "devices": [{"id": "0", "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": 0}],
  "operations": [{"op": "allocate", "kernel": "k1", "request": {"cuda.shares": "0.5"}}]},
 {"id": "b", "map_class": "FractionAllocMap", "device_name": "cuda", "slot_name": "cuda.shares", "slot_type": "count",
  "strategy": "EVENLY", "quantum_size": "0.01", "affinity_policy": "INTERLEAVED", "allow_resource_fragmentation": true,
  "devices": [{"id": "0", "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": 0}],
  "operations": [{"op": "allocate", "kernel": "k1", "request": {"cuda.shares": "2"}}]}
]`

func TestLoadCases(t *testing.T) {
	cases := writeFile(t, "cases.json", twoCases)
	empty := writeFile(t, "empty.json", "[]")
	bad := writeFile(t, "bad.json", "{")
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, c := range []struct {
		path, id string
		ids      []string
		want     string
	}{
		{cases, "", []string{"a", "b"}, ""},
		{cases, "b", []string{"b"}, ""},
		{cases, "c", nil, "--case-id c: no such case in " + cases},
		{empty, "", nil, "--case " + empty + ": no cases"},
		{bad, "", nil, "--case " + bad + ": "},
		{missing, "", nil, "--case " + missing + ": no such file (looked for " + missing + ")"},
	} {
		got, err := loadCases(c.path, c.id)
		if msg := usageMsg(t, err); c.want == "" && msg != "" || !strings.HasPrefix(msg, c.want) {
			t.Errorf("loadCases(%s, %q): %q, want %q", filepath.Base(c.path), c.id, msg, c.want)
		}
		var ids []string
		for _, k := range got {
			ids = append(ids, k.ID)
		}
		if strings.Join(ids, ",") != strings.Join(c.ids, ",") {
			t.Errorf("loadCases(%s, %q) = %v, want %v", filepath.Base(c.path), c.id, ids, c.ids)
		}
	}
}

func TestRunCases(t *testing.T) {
	cases := writeFile(t, "cases.json", twoCases)
	flagsBad := errors.New("--strategy \"x\": want evenly or fill")
	for _, c := range []struct {
		name, id string
		flags    error
		runs     int
		err      string // a UsageError's, or the flags' error
	}{
		{name: "all", runs: 2},
		{name: "one", id: "a", runs: 1},
		// The file is read before the flags: its error is said first.
		{name: "no such case", id: "c", flags: flagsBad, err: "--case-id c: no such case in " + cases},
		{name: "flags", flags: flagsBad, err: flagsBad.Error()},
	} {
		runs, err := RunCases(cases, c.id, func() (placement.CaseOverrides, error) { return placement.CaseOverrides{}, c.flags }, false)
		var got string
		if err != nil {
			got = err.Error()
		}
		if got != c.err || len(runs) != c.runs {
			t.Errorf("%s: %d runs, %q; want %d, %q", c.name, len(runs), got, c.runs, c.err)
		}
		if err != nil && (c.flags == nil || c.id != "") != errors.As(err, new(*UsageError)) {
			t.Errorf("%s: %T, want the flags' own error back or a UsageError", c.name, err)
		}
	}
}

func TestOutcomeErr(t *testing.T) {
	for _, c := range []struct {
		o    Outcome
		want string
	}{
		{Outcome{Requests: 2}, ""},
		{Outcome{Unplaced: 1, Requests: 3, FailedFrees: 1}, "1 of 3 request(s) could not be placed"},
		{Outcome{Requests: 3, FailedFrees: 2}, "2 free(s) failed (see the steps above)"},
	} {
		var got string
		if err := c.o.Err(); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%+v: %q, want %q", c.o, got, c.want)
		}
	}
}

// fakeSource is a device source of one reading.
type fakeSource struct {
	inv      *inventory.Inventory
	err      error
	closeErr error
}

func (s *fakeSource) Poll(context.Context) (*inventory.Inventory, error) { return s.inv, s.err }
func (s *fakeSource) Close() error                                       { return s.closeErr }

func gpu(id string) model.Device {
	return model.Device{ID: model.DeviceID(id), Name: "cuda", Slot: "cuda.shares", SlotType: model.SlotTypeCount, Capacity: model.MustDec("1"), NUMANode: 0}
}

func TestEmptyNode(t *testing.T) {
	list := writeFile(t, "devices.json", `[{"id": "0", "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": 0}]`)
	listWithCPU := writeFile(t, "host.json", `[{"id": "0", "slot_name": "cpu", "capacity": "1", "numa_node": 0}]`)
	emptyList := writeFile(t, "none.json", `[]`)
	openFails := errors.New("the open's own error")
	frac := &inventory.Inventory{Devices: []model.Device{gpu("0")}, Fractional: true, Quantum: model.MustDec("0.1"),
		Issues: []model.Issue{{Severity: model.SevWarning, Message: "a warning"}, {Severity: model.SevWarning, File: "etcd.json", Message: "unit_mem ignored"}}}
	for _, c := range []struct {
		name  string
		n     Node
		src   *fakeSource
		err   string // a UsageError's message (prefix), "" for none
		plain error  // another error, returned as it is
		warns string
		devs  int
	}{
		{name: "device list", n: Node{Devices: list}, devs: 1},
		{name: "device list, host given", n: Node{Devices: list, Host: Host{CPUs: 2}}, devs: 3},
		{name: "device list of cores, host given", n: Node{Devices: listWithCPU, Host: Host{CPUs: 2}}, err: "--devices " + listWithCPU + " lists cpu devices already; drop --cpus/--mem"},
		{name: "empty device list", n: Node{Devices: emptyList}, err: "--devices " + emptyList + ": no devices"},
		{name: "device list missing", n: Node{Devices: "/nonexistent/devices.json"}, err: "--devices: open /nonexistent/devices.json"},
		{name: "source does not open", n: Node{Devices: "auto"}, src: &fakeSource{}, plain: openFails},
		{name: "source of no devices", n: Node{Devices: "auto"}, src: &fakeSource{inv: &inventory.Inventory{}}, err: "--devices auto: no devices to simulate on"},
		{name: "source", n: Node{Devices: "mock.toml", MockEtcd: "etcd.json"}, src: &fakeSource{inv: frac, closeErr: errors.New("busy")}, devs: 1,
			warns: "close device source: busy|a warning|--mock-etcd etcd.json: unit_mem ignored"},
		{name: "source of no quantum", n: Node{Devices: "auto"}, src: &fakeSource{inv: &inventory.Inventory{Devices: []model.Device{gpu("0")}, Fractional: true}},
			err: "simulate: the quantum_size of the fractional maps is unknown"},
		{name: "source of no quantum, flag gives it", n: Node{Devices: "auto", QuantumSet: true}, src: &fakeSource{inv: &inventory.Inventory{Devices: []model.Device{gpu("0")}, Fractional: true}}, devs: 1},
		{name: "source fails", n: Node{Devices: "auto"}, src: &fakeSource{err: errors.New("nvml gone")}, plain: errors.New("simulate: device inventory: nvml gone")},
		// A misspelt plugin left every request of it unplaced (exit 1):
		// refused, with the names the flag takes.
		{name: "allocation order misspelt", n: Node{Devices: list, OrderSet: true, Settings: placement.Settings{Order: []model.DeviceName{"cuda", "cpux"}}},
			err: `--allocation-order: unknown device plugin "cpux" (did you mean cpu?); want a comma-separated list of cuda, rocm, tpu, cpu, mem`},
		{name: "allocation order of plugins the node lacks", n: Node{Devices: list, OrderSet: true, Settings: placement.Settings{Order: placement.DefaultOrder}}, devs: 1},
		{name: "bad etcd file", n: Node{Devices: "mock.toml", MockEtcd: "etcd.json"}, src: &fakeSource{inv: &inventory.Inventory{
			Issues: []model.Issue{{Severity: model.SevError, File: "etcd.json", Message: "allocation_mode \"x\""}}}},
			err: "--mock-etcd etcd.json: allocation_mode \"x\""},
	} {
		var warns []string
		c.n.Warn = func(l string) { warns = append(warns, l) }
		open := func() (inventory.Source, error) {
			if c.src == nil {
				t.Fatalf("%s: opened a device list's source", c.name)
			}
			if c.plain == openFails {
				return nil, openFails
			}
			return c.src, nil
		}
		set, err := c.n.EmptyNode(context.Background(), open)
		switch {
		case c.plain != nil:
			if err == nil || err.Error() != c.plain.Error() {
				t.Errorf("%s: err %v, want %v", c.name, err, c.plain)
			}
			continue
		case c.err != "":
			if got := usageMsg(t, err); !strings.HasPrefix(got, c.err) {
				t.Errorf("%s: %q, want %q", c.name, got, c.err)
			}
			continue
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := deviceCount(set.Sim); got != c.devs {
			t.Errorf("%s: %d devices, want %d", c.name, got, c.devs)
		}
		if got := strings.Join(warns, "|"); got != c.warns {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.warns)
		}
	}
}

func TestPlace(t *testing.T) {
	list := writeFile(t, "devices.json", `[{"id": "0", "slot_name": "cuda.shares", "capacity": "1.0", "numa_node": 0}]`)
	for _, c := range []struct {
		reqs                         []string
		err                          string
		unplaced, requests, badFrees int
		warns                        string
	}{
		{reqs: []string{"cuda.shares=0.5", "cuda.shares=0.6", "free=1", "free=1"}, unplaced: 1, requests: 2, badFrees: 1},
		{reqs: []string{"cuda.shares=0"}, requests: 1,
			warns: `--request "cuda.shares=0" asks for nothing: Backend.AI drops amounts of 0, so this step allocates nothing`},
		{reqs: []string{"cuda.shres=1"}, err: "--request "},
		{reqs: []string{"cuda.shares=-1"}, err: "--request "},
		{reqs: []string{"free=3"}, err: "--request: "},
	} {
		n := Node{Devices: list}
		var warns []string
		n.Warn = func(l string) { warns = append(warns, l) }
		n.Requests = c.reqs
		set, err := n.EmptyNode(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := n.Place(set, false)
		if c.err != "" {
			if got := usageMsg(t, err); !strings.HasPrefix(got, c.err) {
				t.Errorf("%q: %q, want %q", c.reqs, got, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.reqs, err)
		}
		if out.Unplaced != c.unplaced || out.Requests != c.requests || out.FailedFrees != c.badFrees {
			t.Errorf("%q: %d of %d unplaced, %d frees failed; want %d of %d, %d", c.reqs, out.Unplaced, out.Requests, out.FailedFrees, c.unplaced, c.requests, c.badFrees)
		}
		if got := strings.Join(warns, "|"); got != c.warns {
			t.Errorf("%q: warnings %q, want %q", c.reqs, got, c.warns)
		}
	}
}

// deviceCount counts the devices of sim's maps.
func deviceCount(sim *placement.Simulation) int {
	n := 0
	for _, p := range sim.Node.Plugins() {
		n += len(p.Devices)
	}
	return n
}

func TestOverrides(t *testing.T) {
	s := placement.Settings{Strategy: alloc.Fill, Policy: alloc.PreferSingleNode, Quantum: model.MustDec("0.05")}
	for _, c := range []struct {
		given []string
		want  string
	}{
		{nil, "strategy=<nil> policy=<nil> quantum=0 forbid=<nil>"},
		{[]string{"strategy", "quantum"}, "strategy=FILL policy=<nil> quantum=0.05 forbid=<nil>"},
		{[]string{"affinity", "no-fragmentation"}, "strategy=<nil> policy=PREFER_SINGLE_NODE quantum=0 forbid=true"},
		{[]string{"allocation-order"}, "strategy=<nil> policy=<nil> quantum=0 forbid=<nil>"},
	} {
		o := Overrides(s, true, func(name string) bool { return slices.Contains(c.given, name) })
		got := fmt.Sprintf("strategy=%s policy=%s quantum=%s forbid=%s", deref(o.Strategy), deref(o.Policy), o.Quantum, deref(o.ForbidFragmentation))
		if got != c.want {
			t.Errorf("Overrides given %q = %s, want %s", c.given, got, c.want)
		}
	}
}

// deref prints *p, "<nil>" for nil.
func deref[T any](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}
