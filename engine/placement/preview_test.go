package placement

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/alloc"
	"github.com/fgtop/fgtop/model"
)

const gib = 1 << 30

// twoAgentNode is a node of four 1.00-share GPUs (A, B on NUMA node 0; C,
// D on node 1), eight cores (0-3 on node 0, 4-7 on node 1) and 64 GiB,
// split between two agents (device-based partition, 32 GiB each), with
// live kernels:
//
//	k-a1  agent a1: A 0.70, B 0.70, cores 0 and 1, 8 GiB
//	k-a2  agent a2: C 0.30
//	k-dr  agent a2: A 0.10 (A belongs to a1: drift, not loaded)
func twoAgentNode() *model.Snapshot {
	devs := []model.Device{gpu("A", 0, "1.00"), gpu("B", 0, "1.00"), gpu("C", 1, "1.00"), gpu("D", 1, "1.00")}
	for i := range 8 {
		devs = append(devs, core(i, i/4))
	}
	devs = append(devs, memDev(fmt.Sprint(64*gib)))
	s := &model.Snapshot{
		Devices: devs,
		Agents: []model.Agent{
			{ID: "a1", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"A", "B"}, "cpu": {"0", "1", "2", "3"}}, Mem: model.NewDec(32*gib, 0)},
			{ID: "a2", Owns: map[model.DeviceName][]model.DeviceID{"cuda": {"C", "D"}, "cpu": {"4", "5", "6", "7"}}, Mem: model.NewDec(32*gib, 0)},
		},
	}
	s.SetKernels([]*model.Kernel{
		{ID: "k-a1", Agent: "a1", State: model.KernelOK, Alloc: model.Allocations{
			"cuda.shares": {"A": dec("0.70"), "B": dec("0.70")},
			"cpu":         {"0": dec("1"), "1": dec("1")},
			"mem":         {"root": model.NewDec(8*gib, 0)},
		}},
		{ID: "k-a2", Agent: "a2", State: model.KernelOK, Alloc: model.Allocations{"cuda.shares": {"C": dec("0.30")}}},
		{ID: "k-broken", Agent: "a2", State: model.KernelBroken},
		{ID: "k-dr", Agent: "a2", State: model.KernelStale, Alloc: model.Allocations{"cuda.shares": {"A": dec("0.10")}}},
	})
	return s
}

func req(t testing.TB, s string) alloc.Request {
	t.Helper()
	st, err := ParseStep(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st.Request
}

// outcome renders one agent's preview compactly: its allocation or error
// kind, then its stranded shares.
func outcome(a AgentPreview) string {
	var b strings.Builder
	if a.OK() {
		b.WriteString(FlattenAllocation(a.Alloc).String())
	} else {
		b.WriteString(a.ErrKind)
	}
	for _, s := range a.Stranded {
		fmt.Fprintf(&b, " stranded %s", s.Total)
		for _, d := range s.Devices {
			fmt.Fprintf(&b, " %s:%s", d.Device, d.Stranded)
		}
	}
	return b.String()
}

func TestPreview(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings Settings
		request  string
		want     map[model.AgentID]string
		reasons  map[model.AgentID]string // substrings of Reason
	}{
		{
			name: "fits on both, split on a1", request: "cuda.shares=0.5",
			want: map[model.AgentID]string{"a1": "{cuda.shares: {A: 0.25, B: 0.25}} stranded 0", "a2": "{cuda.shares: {C: 0.50}} stranded 0"},
		},
		{
			name: "fragmentation not allowed", settings: Settings{ForbidFragmentation: true}, request: "cuda.shares=0.5",
			want: map[model.AgentID]string{
				"a1": "FractionalResourceFragmented stranded 0.60 A:0.30 B:0.30",
				"a2": "{cuda.shares: {C: 0.50}} stranded 0.20 C:0.20",
			},
			reasons: map[model.AgentID]string{"a1": "fragmented"},
		},
		{
			name: "insufficient", request: "cuda.shares=2",
			want:    map[model.AgentID]string{"a1": "InsufficientResource stranded 0", "a2": "InsufficientResource stranded 0"},
			reasons: map[model.AgentID]string{"a1": "insufficient cuda.shares: 0.60 free, 2 requested", "a2": "1.70 free"},
		},
		{
			name: "cores and memory stay in the partition", request: "cuda.shares=1,cpu=2,mem=16g",
			want: map[model.AgentID]string{
				"a1": "InsufficientResource stranded 0",
				"a2": "{cuda.shares: {D: 1.00}, cpu: {4: 1, 5: 1}, mem: {root: 17179869184}} stranded 0",
			},
		},
		{
			name: "the agent's mem share is its capacity", request: "mem=30g",
			want: map[model.AgentID]string{"a1": "InsufficientResource", "a2": "{mem: {root: 3.221225472E+10}}"},
			// Sizes, as the request was written (it said 25769803776
			// free, 32212254720 requested).
			reasons: map[model.AgentID]string{"a1": "insufficient mem: 24g free, 30g requested"},
		},
		{
			name: "below the quantum", settings: Settings{Quantum: dec("0.25")}, request: "cuda.shares=0.1",
			want:    map[model.AgentID]string{"a1": "NotMultipleOfQuantum", "a2": "NotMultipleOfQuantum"},
			reasons: map[model.AgentID]string{"a1": "below the quantum (0.25)"},
		},
		{
			name: "exclusive slots", request: "cuda.shares=1,cuda.device=1",
			want:    map[model.AgentID]string{"a1": "InvalidResourceCombination stranded 0", "a2": "InvalidResourceCombination stranded 0"},
			reasons: map[model.AgentID]string{"a1": "exclusive"},
		},
		{
			name: "no such plugin", request: "rocm.device=1",
			want: map[model.AgentID]string{"a1": "KeyError", "a2": "KeyError"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPlanner(twoAgentNode(), tc.settings)
			pv := p.Preview(req(t, tc.request))
			if len(pv.Agents) != 2 {
				t.Fatalf("%d agents", len(pv.Agents))
			}
			for _, a := range pv.Agents {
				if got := outcome(a); got != tc.want[a.Agent] {
					t.Errorf("%s: %s, want %s", a.Agent, got, tc.want[a.Agent])
				}
				if want := tc.reasons[a.Agent]; want != "" && !strings.Contains(a.Reason, want) {
					t.Errorf("%s: reason %q lacks %q", a.Agent, a.Reason, want)
				}
				if !a.OK() && a.Reason == "" {
					t.Errorf("%s: failure without a reason", a.Agent)
				}
			}
			// Previews never change the planner's maps.
			again := p.Preview(req(t, tc.request))
			for i := range again.Agents {
				if outcome(again.Agents[i]) != outcome(pv.Agents[i]) {
					t.Errorf("a second preview differs: %s vs %s", outcome(again.Agents[i]), outcome(pv.Agents[i]))
				}
			}
		})
	}
}

func TestPlannerAgents(t *testing.T) {
	p := NewPlanner(twoAgentNode(), Settings{})
	ags := p.Agents()
	if len(ags) != 2 {
		t.Fatalf("%d agents", len(ags))
	}
	a1, a2 := ags[0], ags[1]
	if got := a1.Node.State().String(); got != "{cuda.shares: {A: 0.70, B: 0.70}, cpu: {0: 1, 1: 1, 2: 0, 3: 0}, mem: {root: 8589934592}}" {
		t.Errorf("a1 state %s", got)
	}
	if got := a2.Node.State().String(); got != "{cuda.shares: {C: 0.30, D: 0}, cpu: {4: 0, 5: 0, 6: 0, 7: 0}, mem: {root: 0}}" {
		t.Errorf("a2 state %s", got)
	}
	if a2.Kernels != 2 || len(a2.Skipped) != 1 || a2.Skipped[0].Kernel != "k-dr" {
		t.Errorf("a2: %d kernels loaded, skipped %+v", a2.Kernels, a2.Skipped)
	}
	if got := sharesString(a1.Node.AllocMap(a1.Live)); got != "{A=0.70 B=0.70}" {
		t.Errorf("a1 alloc map %s", got)
	}
	pv := p.Preview(req(t, "cuda.shares=0.8"))
	if got := fmt.Sprint(pv.Placeable()); got != "[a2]" {
		t.Errorf("placeable on %s", got)
	}
	if f := pv.Agents[1].Free; len(f) != 1 || f[0].Amount.String() != "1.70" {
		t.Errorf("a2 free %+v", f)
	}

	// Without agents the node is one agent with every device and kernel.
	s := twoAgentNode()
	s.Agents = nil
	p = NewPlanner(s, Settings{})
	if len(p.Agents()) != 1 {
		t.Fatalf("%d agents", len(p.Agents()))
	}
	if got := p.Agents()[0].Node.Plugin("cuda").Map().Allocations().String(); got != "{cuda.shares: {A: 0.80, B: 0.70, C: 0.30, D: 0}}" {
		t.Errorf("whole node %s", got)
	}

	// An agent whose partition has no GPUs.
	s = twoAgentNode()
	s.Agents[1].Owns = map[model.DeviceName][]model.DeviceID{"cpu": {"4"}}
	pv = NewPlanner(s, Settings{}).Preview(req(t, "cuda.shares=0.1"))
	if a := pv.Agents[1]; a.OK() || !strings.Contains(a.Reason, "owns no cuda devices") {
		t.Errorf("a2 without GPUs: %s (%s)", outcome(a), a.Reason)
	}
}

// TestStranded covers the stranded-capacity rules one by one.
func TestStranded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		devs     []model.Device
		held     model.Allocations
		settings Settings
		request  string
		want     string // "total [device:stranded ...]", or "-" for none computed
	}{
		{
			name: "fragmentation allowed: nothing stranded", devs: []model.Device{gpu("A", 0, "1.00"), gpu("B", 0, "1.00")},
			held: model.Allocations{"cuda.shares": {"A": dec("0.70")}}, request: "0.5", want: "0",
		},
		{
			name: "below the quantum grid", devs: []model.Device{gpu("A", 0, "0.75"), gpu("B", 0, "0.75")},
			settings: Settings{Quantum: dec("0.1")}, request: "0.5", want: "0.10 A:0.05 B:0.05",
		},
		{
			name: "less than min_memory free", devs: []model.Device{gpu("A", 0, "1.00"), gpu("B", 0, "1.00")},
			held: model.Allocations{"cuda.shares": {"A": dec("0.995")}}, settings: Settings{Quantum: dec("0.001")},
			request: "0.5", want: "0.005 A:0.005",
		},
		{
			name: "whole requests: too small, and left over", devs: []model.Device{gpu("A", 0, "1.00"), gpu("B", 0, "1.00"), gpu("C", 0, "1.00")},
			held: model.Allocations{"cuda.shares": {"A": dec("0.70"), "B": dec("0.30")}}, settings: Settings{ForbidFragmentation: true},
			request: "0.5", want: "0.50 A:0.30 B:0.20",
		},
		{
			name: "whole requests off the quantum need an extra quantum", devs: []model.Device{gpu("A", 0, "1.0")},
			settings: Settings{ForbidFragmentation: true, Quantum: dec("0.1")}, request: "0.15", want: "0.1 A:0.1",
		},
		{
			name: "split without fragmentation: too small for the smallest part",
			devs: []model.Device{gpu("A", 0, "1.00"), gpu("B", 0, "1.00"), gpu("C", 0, "1.00"), gpu("D", 0, "1.00")},
			held: model.Allocations{"cuda.shares": {"A": dec("0.60")}}, settings: Settings{ForbidFragmentation: true},
			request: "2", want: "0.40 A:0.40",
		},
		{
			name: "FILL without fragmentation and no device big enough", devs: []model.Device{gpu("A", 0, "1.00"), gpu("B", 0, "1.00")},
			held:     model.Allocations{"cuda.shares": {"A": dec("0.70"), "B": dec("0.60")}},
			settings: Settings{ForbidFragmentation: true, Strategy: alloc.Fill}, request: "0.5", want: "0.70 A:0.30 B:0.40",
		},
		{
			name: "FILL without fragmentation, one device big enough", devs: []model.Device{gpu("A", 0, "1.00"), gpu("B", 0, "1.00")},
			held:     model.Allocations{"cuda.shares": {"A": dec("0.70")}},
			settings: Settings{ForbidFragmentation: true, Strategy: alloc.Fill}, request: "0.5", want: "0",
		},
		{
			name: "over-committed device", devs: []model.Device{gpu("A", 0, "1.00")},
			held: model.Allocations{"cuda.shares": {"A": dec("1.20")}}, request: "0.5", want: "0",
		},
		{
			name: "request below the quantum", devs: []model.Device{gpu("A", 0, "1.00")},
			settings: Settings{Quantum: dec("0.25")}, request: "0.1", want: "-",
		},
		{
			name: "discrete slot", devs: []model.Device{wholeGPU("0", 0)}, request: "1", want: "-",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNode(tc.devs, tc.settings)
			if tc.held != nil {
				if _, skipped := n.Load(tc.held); len(skipped) > 0 {
					t.Fatalf("skipped %v", skipped)
				}
			}
			slot := tc.devs[0].Slot
			s, ok := n.Stranded(slot, dec(tc.request))
			got := "-"
			if ok {
				got = s.Total.String()
				for _, d := range s.Devices {
					got += fmt.Sprintf(" %s:%s", d.Device, d.Stranded)
					if d.Why == "" {
						t.Errorf("%s: no reason", d.Device)
					}
				}
			}
			if got != tc.want {
				t.Errorf("stranded %s, want %s", got, tc.want)
			}
		})
	}
}
