package partition

import (
	"encoding/json"
	"errors"
	"github.com/fgtop/fgtop/internal/testfix"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

func TestPlan(t *testing.T) {
	held := kernel("2e9b6d43-8c1f-4a7e-b5d2-91c0e7f3a6b8", agentB, gpu4, "0.50")
	type move struct {
		device   string
		from, to []model.AgentID
		stranded int
	}
	tests := []struct {
		name      string
		fixture   string
		req       Request
		kernels   []*model.Kernel
		errors    []string // substrings, in order
		moves     []move
		edits     int
		affected  int
		unchanged []string
		gains     map[model.AgentID][]string
	}{
		{
			name:    "move a free device",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}},
			kernels: []*model.Kernel{held},
			moves:   []move{{"cuda:" + gpu3, []model.AgentID{agentA}, []model.AgentID{agentB}, 0}},
			edits:   2,
			unchanged: []string{"allocation-mode stays manual", "i-gpu-node01-numa0 keeps cpu 0-15; cuda " + gpu1 + "; mem 120g",
				"i-gpu-node01-numa1 keeps cpu 16-31; cuda " + gpu2 + ", " + gpu4 + "; mem 120g"},
			gains: map[model.AgentID][]string{agentB: {"cuda:" + gpu3}},
		},
		{
			name:     "move a held device",
			fixture:  "agent.multi-agent.device-based.toml",
			req:      Request{Moves: []Move{{Device: gpu4, Agent: agentA}}}, // bare id: only cuda has it
			kernels:  []*model.Kernel{held},
			moves:    []move{{"cuda:" + gpu4, []model.AgentID{agentB}, []model.AgentID{agentA}, 1}},
			edits:    2,
			affected: 1,
		},
		{
			// Device-based partitions split mem by amount: cutting it below
			// what the agent's live kernels hold strands them like a move.
			name:     "mem cut below what live kernels hold",
			fixture:  "agent.multi-agent.device-based.toml",
			req:      Request{Mem: []MemSet{{Agent: agentB, Bytes: model.NewDec(8<<30, 0)}}},
			kernels:  []*model.Kernel{memKernel("m1", agentB, 6<<30), memKernel("m2", agentB, 4<<30), memKernel("m3", agentA, 64<<30)},
			edits:    1,
			affected: 1,
		},
		{
			name:    "mem cut that live kernels still fit in",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Mem: []MemSet{{Agent: agentB, Bytes: model.NewDec(16<<30, 0)}}},
			kernels: []*model.Kernel{memKernel("m1", agentB, 6<<30), memKernel("m2", agentB, 4<<30)},
			edits:   1,
		},
		{
			// Issue 28: an id none of the plugin's devices has is refused
			// by fgtop's resolver, listing the node's devices, not written
			// into the draft for agent.toml's validation to refuse.
			name:    "unknown device ID is refused by name",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "cuda:cuda99", Agent: agentA}}},
			errors:  []string{"Unknown device 'cuda:cuda99': no device on this node has that ID or name; name it as PLUGIN:ID, its label (GPU0) or a unique prefix of its id. This node has cuda:" + gpu1 + " (GPU0), cuda:" + gpu2 + " (GPU1), cuda:" + gpu3 + " (GPU2), cuda:" + gpu4 + " (GPU3)"},
		},
		{
			name:    "a key's prefix several devices share",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "cuda:c59395cd", Agent: agentA}}},
			errors:  []string{"device 'cuda:c59395cd' is ambiguous: cuda:" + gpu1 + " (GPU0), cuda:" + gpu2 + " (GPU1), cuda:" + gpu3 + " (GPU2), cuda:" + gpu4 + " (GPU3); name it as PLUGIN:ID"},
		},
		{
			name:    "unknown plugin",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "tpu:0", Agent: agentA}}},
			errors:  []string{"Agent i-gpu-node01-numa0: Unknown device 'tpu'. Available: cpu, cuda, mem"},
			moves:   []move{{"tpu:0", nil, []model.AgentID{agentA}, 0}},
			edits:   1,
		},
		{
			// Issue 28: the console's label and its abbreviation of an id
			// name the device as its id does.
			name:    "move by the console's label",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "GPU2", Agent: agentB}}},
			kernels: []*model.Kernel{held},
			moves:   []move{{"cuda:" + gpu3, []model.AgentID{agentA}, []model.AgentID{agentB}, 0}},
			edits:   2,
		},
		{
			// The refusal of an unknown PLUGIN:ID says a label names a
			// device: with its plugin, as PLUGIN:LABEL, it does too.
			name:    "move by plugin and label",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "cuda:GPU2", Agent: agentB}}},
			kernels: []*model.Kernel{held},
			moves:   []move{{"cuda:" + gpu3, []model.AgentID{agentA}, []model.AgentID{agentB}, 0}},
			edits:   2,
		},
		{
			name:    "a label under another plugin's name",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "cpu:GPU2", Agent: agentB}}},
			errors:  []string{"Unknown device 'cpu:GPU2'"},
		},
		{
			// Not the accelerators: the cores a cpu:ID can name.
			name:    "a core the node does not have lists its cores",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "cpu:99", Agent: agentB}}},
			errors:  []string{"Unknown device 'cpu:99': no device on this node has that ID or name; name it as PLUGIN:ID, its label (GPU0) or a unique prefix of its id. This node has cpu:0-31"},
		},
		{
			name:    "move by the console's abbreviation",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "…2d03", Agent: agentB}}},
			kernels: []*model.Kernel{held},
			moves:   []move{{"cuda:" + gpu3, []model.AgentID{agentA}, []model.AgentID{agentB}, 0}},
			edits:   2,
		},
		{
			name:    "a prefix several devices share",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "c59395cd", Agent: agentB}}},
			errors:  []string{"device 'c59395cd' is ambiguous: cuda:" + gpu1 + " (GPU0), cuda:" + gpu2 + " (GPU1)"},
		},
		{
			name:    "a name nothing has lists the accelerators",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "GPU9", Agent: agentA}}},
			errors:  []string{"Unknown device 'GPU9': no device on this node has that ID or name; name it as PLUGIN:ID, its label (GPU0) or a unique prefix of its id. This node has cuda:" + gpu1 + " (GPU0), cuda:" + gpu2 + " (GPU1), cuda:" + gpu3 + " (GPU2), cuda:" + gpu4 + " (GPU3)"},
		},
		{
			name:    "bare id nobody has",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "nope", Agent: agentA}}},
			errors:  []string{"Unknown device 'nope': no device on this node has that ID"},
		},
		{
			name:    "unknown agent",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "cuda:" + gpu1, Agent: "ghost"}}},
			errors:  []string{`unknown agent "ghost"; the config's agents are: i-gpu-node01-numa0, i-gpu-node01-numa1`},
		},
		{
			// Ids alike but for a letter: the list alone hides which.
			name:    "unknown agent, a typo of one",
			fixture: "agent.multi-agent.slot-based.toml",
			req:     Request{Slots: []SlotSet{{Agent: "i-gpu-nod01-b", Slot: model.SlotCUDAShares, Amount: model.MustDec("1.0")}}},
			errors:  []string{`unknown agent "i-gpu-nod01-b" (did you mean i-gpu-node01-b?); the config's agents are: i-gpu-node01-a, i-gpu-node01-b`},
		},
		{
			// Named at once, not after "add --mode manual" (the tour: the
			// README's --slot example on a shared-mode node).
			name:    "unknown agent on a node not in manual mode",
			fixture: "agent.multi-agent.slot-based.toml",
			req:     Request{Mode: agentconfig.ModeShared, Slots: []SlotSet{{Agent: "i-node-a", Slot: model.SlotCUDAShares, Amount: model.MustDec("1.0")}}},
			errors:  []string{`unknown agent "i-node-a"; the config's agents are: i-gpu-node01-a, i-gpu-node01-b`},
			edits:   3, // the mode and the two agents' tables it drops
		},
		{
			name:    "cores given to two agents",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{CPU: []CPUSet{{Agent: agentA, Spec: "0-16"}}},
			errors:  []string{"Device 'cpu:16' assigned to multiple agents: i-gpu-node01-numa0, i-gpu-node01-numa1"},
			moves:   []move{{"cpu:16", []model.AgentID{agentB}, []model.AgentID{agentA, agentB}, 0}},
			edits:   1,
		},
		{
			name:    "cpu and mem",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{CPU: []CPUSet{{Agent: agentA, Spec: "0-7"}}, Mem: []MemSet{{Agent: agentB, Bytes: model.NewDec(64<<30, 0)}}},
			moves:   []move{{"cpu:8", []model.AgentID{agentA}, nil, 0}, {"cpu:9", []model.AgentID{agentA}, nil, 0}, {"cpu:10", []model.AgentID{agentA}, nil, 0}, {"cpu:11", []model.AgentID{agentA}, nil, 0}, {"cpu:12", []model.AgentID{agentA}, nil, 0}, {"cpu:13", []model.AgentID{agentA}, nil, 0}, {"cpu:14", []model.AgentID{agentA}, nil, 0}, {"cpu:15", []model.AgentID{agentA}, nil, 0}},
			edits:   2,
		},
		{
			name:    "mode switch to auto-split re-deals by natural order",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Mode: "auto-split"},
			kernels: []*model.Kernel{held},
			moves:   []move{{"cuda:" + gpu2, []model.AgentID{agentB}, []model.AgentID{agentA}, 0}, {"cuda:" + gpu3, []model.AgentID{agentA}, []model.AgentID{agentB}, 0}},
			edits:   3,
		},
		{
			name:    "no change",
			fixture: "agent.multi-agent.device-based.toml",
			req:     Request{Moves: []Move{{Device: "cuda:" + gpu1, Agent: agentA}}},
			edits:   0,
		},
		{
			name:    "move in the slot-based format",
			fixture: "agent.multi-agent.slot-based.toml",
			req:     Request{Moves: []Move{{Device: "cuda:" + gpu1, Agent: "i-gpu-node01-a"}}},
			errors:  []string{"devices are not exclusive in the slot-based format"},
		},
		{
			name:    "slot-based cpu count and mem",
			fixture: "agent.multi-agent.slot-based.toml",
			req:     Request{CPU: []CPUSet{{Agent: "i-gpu-node01-a", Spec: "10"}}, Mem: []MemSet{{Agent: "i-gpu-node01-a", Bytes: model.NewDec(100<<30, 0)}}},
			edits:   2,
		},
		{
			name:    "slot-based over-allocation",
			fixture: "agent.multi-agent.slot-based.toml",
			req:     Request{CPU: []CPUSet{{Agent: "i-gpu-node01-a", Spec: "30"}}},
			errors:  []string{"Resource slot 'cpu' is over-allocated"},
			edits:   1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := loadFixture(t, tt.fixture)
			snap := snapshot(fixtureDevices(), tt.kernels...)
			d, errs := Draft(c, InventoryOf(snap), tt.req)
			p := Build(c, d, snap, errs...)
			if len(p.Errors) != len(tt.errors) {
				t.Fatalf("errors = %q, want %d like %q", p.Errors, len(tt.errors), tt.errors)
			}
			for i, w := range tt.errors {
				if !strings.Contains(p.Errors[i], w) {
					t.Errorf("error %d = %q, want %q", i, p.Errors[i], w)
				}
			}
			if len(p.Moves) != len(tt.moves) {
				t.Fatalf("moves = %+v, want %+v", p.Moves, tt.moves)
			}
			for i, w := range tt.moves {
				m := p.Moves[i]
				stranded := 0
				for _, h := range m.Holders {
					if h.Stranded {
						stranded++
					}
				}
				if m.Device != w.device || !slices.Equal(m.From, w.from) || !slices.Equal(m.To, w.to) || stranded != w.stranded {
					t.Errorf("move %d = %s %v->%v stranded %d, want %+v", i, m.Device, m.From, m.To, stranded, w)
				}
			}
			if len(p.Edits) != tt.edits {
				t.Errorf("edits = %+v, want %d", p.Edits, tt.edits)
			}
			if got := len(p.Affected()); got != tt.affected {
				t.Errorf("affected = %q, want %d", p.Affected(), tt.affected)
			}
			for _, u := range tt.unchanged {
				if !slices.Contains(p.Unchanged, u) {
					t.Errorf("unchanged %q missing from %q", u, p.Unchanged)
				}
			}
			for id, g := range tt.gains {
				for _, a := range p.Agents {
					if a.Agent == id && !slices.Equal(a.Gains, g) {
						t.Errorf("%s gains %v, want %v", id, a.Gains, g)
					}
				}
			}
		})
	}
}

// TestPlanModeManualKeepsPartition: switching auto-split -> manual on a
// file without allocation tables writes main's slot-based form unless the
// BEP-1044 form is asked for; either way it writes out the split in
// effect, so nobody gains or loses anything.
func TestPlanModeManualKeepsPartition(t *testing.T) {
	in := "# comment\n[resource]\nallocation-mode = \"auto-split\" # was\nreserved-mem = \"8G\"\n\n[[agents]]\n  [agents.agent]\n  id = \"a\"\n\n[[agents]]\n  [agents.agent]\n  id = \"b\"\n"
	// The tables every agent.toml needs follow, untouched by the edit.
	rest := strings.TrimPrefix(testfix.AgentTOML(in), in)
	c := parseConfig(t, in)
	snap := snapshot(fixtureDevices())
	d, errs := Draft(c, InventoryOf(snap), Request{Mode: "manual"})
	p := Build(c, d, snap, errs...)
	if !p.Valid() || len(p.Moves) != 0 || p.Format != agentconfig.FormatSlotBased {
		t.Fatalf("errors %q moves %+v format %s", p.Errors, p.Moves, p.Format)
	}
	// 32 cores - 1 reserved = 31: 16 + 15; 4 shares: 2 each.
	slot := "# comment\n[resource]\nallocation-mode = \"manual\" # was\nreserved-mem = \"8G\"\n\n[[agents]]\n  [agents.agent]\n  id = \"a\"\n" +
		"  [agents.resource]\n  cpu = 16\n  mem = \"124G\"\n  devices = { \"cuda.shares\" = \"2\" }\n" +
		"\n[[agents]]\n  [agents.agent]\n  id = \"b\"\n" +
		"  [agents.resource]\n  cpu = 15\n  mem = \"124G\"\n  devices = { \"cuda.shares\" = \"2\" }\n" + rest
	if string(p.NewRaw) != slot {
		t.Errorf("got:\n%s\nwant:\n%s", p.NewRaw, slot)
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "even split, in Backend.AI main's slot-based form") }) {
		t.Errorf("notes %q do not say what manual starts from", p.Notes)
	}
	for _, w := range p.Warnings {
		if strings.Contains(w, agentconfig.DraftFormatWarning) {
			t.Errorf("a slot-based plan warns %q", w)
		}
	}

	c = parseConfig(t, in)
	d, errs = Draft(c, InventoryOf(snap), Request{Mode: "manual", Format: agentconfig.FormatDeviceBased})
	p = Build(c, d, snap, errs...)
	// Devices become exclusive: that is the BEP-1044 form's point.
	if !p.Valid() || p.Format != agentconfig.FormatDeviceBased {
		t.Fatalf("errors %q format %s", p.Errors, p.Format)
	}
	want := "# comment\n[resource]\nallocation-mode = \"manual\" # was\nreserved-mem = \"8G\"\n\n[[agents]]\n  [agents.agent]\n  id = \"a\"\n" +
		"  [agents.resource]\n  cpu = [\"0\", \"1\", \"2\", \"3\", \"4\", \"5\", \"6\", \"7\", \"8\", \"9\", \"10\", \"11\", \"12\", \"13\", \"14\", \"15\"]\n  mem = \"124G\"\n  devices = { cuda = [\"" + gpu1 + "\", \"" + gpu2 + "\"] }\n" +
		"\n[[agents]]\n  [agents.agent]\n  id = \"b\"\n" +
		"  [agents.resource]\n  cpu = [\"16\", \"17\", \"18\", \"19\", \"20\", \"21\", \"22\", \"23\", \"24\", \"25\", \"26\", \"27\", \"28\", \"29\", \"30\", \"31\"]\n  mem = \"124G\"\n  devices = { cuda = [\"" + gpu3 + "\", \"" + gpu4 + "\"] }\n" + rest
	if string(p.NewRaw) != want {
		t.Errorf("got:\n%s\nwant:\n%s", p.NewRaw, want)
	}
	if len(p.Warnings) == 0 || !strings.HasPrefix(p.Warnings[0], agentconfig.DraftFormatWarning) {
		t.Errorf("a device-based plan does not say main cannot load it: %q", p.Warnings)
	}
	// Then a move on top, in the same request.
	d, errs = Draft(c, InventoryOf(snap), Request{Mode: "manual", Format: agentconfig.FormatDeviceBased, Moves: []Move{{Device: "cuda:" + gpu2, Agent: "b"}}})
	p = Build(c, d, snap, errs...)
	if !p.Valid() || !slices.ContainsFunc(p.Moves, func(m DeviceMove) bool {
		return m.Device == "cuda:"+gpu2 && slices.Equal(m.To, []model.AgentID{"b"})
	}) {
		t.Fatalf("errors %q moves %+v", p.Errors, p.Moves)
	}
}

func TestPlanMoveNeedsManual(t *testing.T) {
	c := parseConfig(t, twoAgents("auto-split", "", ""))
	snap := snapshot(fixtureDevices())
	d, errs := Draft(c, InventoryOf(snap), Request{Format: agentconfig.FormatDeviceBased, Moves: []Move{{Device: "cuda:" + gpu1, Agent: "b"}}})
	p := Build(c, d, snap, errs...)
	if p.Valid() || !strings.Contains(p.Errors[0], "needs allocation-mode manual (it is auto-split): add --mode manual") {
		t.Errorf("errors %q", p.Errors)
	}
}

func TestPlanFromDraftFile(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	draft := parseConfig(t, "[resource]\nallocation-mode = \"manual\"\n[[agents]]\n[agents.agent]\nid = \"i-gpu-node01-numa0\"\n[agents.resource]\ncpu = [\"0\"]\nmem = \"1G\"\ndevices = { cuda = [\""+gpu1+"\", \""+gpu2+"\", \""+gpu3+"\"] }\n[[agents]]\n[agents.agent]\nid = \"i-gpu-node01-numa1\"\n[agents.resource]\ncpu = [\"1\"]\nmem = \"1G\"\ndevices = { cuda = [\""+gpu4+"\"] }\n")
	d, errs := Draft(c, InventoryOf(snap), Request{From: draft})
	p := Build(c, d, snap, errs...)
	if !p.Valid() {
		t.Fatal(p.Errors)
	}
	// cpu, mem and devices of both agents: six values.
	if len(p.Edits) != 6 {
		t.Errorf("edits %+v", p.Edits)
	}
	next, err := agentconfig.Parse(c.Path, p.NewRaw)
	if err != nil || next.Agents[0].Alloc.Devices["cuda"][2] != gpu3 {
		t.Errorf("read back %v %+v", err, next.Agents[0].Alloc)
	}
}

func TestPlanSingleAgent(t *testing.T) {
	c := parseConfig(t, "[agent]\nid = \"solo\"\n\n[resource]\nallocation-mode = \"manual\"\nreserved-cpu = 1\n\n[resource.allocations]  # the only agent\ncpu = 8\nmem = \"16G\"\ndevices = { \"cuda.shares\" = \"2\" }\n")
	snap := snapshot(fixtureDevices())
	p := plan(t, c, snap, Request{CPU: []CPUSet{{Agent: "solo", Spec: "12"}}})
	if !p.Valid() || len(p.Edits) != 1 || p.Edits[0].Key != "resource.allocations.cpu" || p.Edits[0].New != "12" {
		t.Fatalf("errors %q edits %+v", p.Errors, p.Edits)
	}
	if got := p.Next.Agent("solo").Capacity[model.SlotCPU]; !got.Equal(model.NewDec(12, 0)) {
		t.Errorf("cpu capacity %s", got)
	}
	p = plan(t, c, snap, Request{Mode: "shared"})
	if !p.Valid() || !strings.Contains(string(p.NewRaw), "allocation-mode = \"shared\"") || strings.Contains(string(p.NewRaw), "allocations") {
		t.Fatalf("errors %q\n%s", p.Errors, p.NewRaw)
	}
}

func TestRequestEmpty(t *testing.T) {
	if !(Request{}).Empty() || (Request{Mode: "manual"}).Empty() {
		t.Error("Empty")
	}
}

// memKernel is a live kernel of agent holding bytes of host memory.
func memKernel(id string, agent model.AgentID, bytes int64) *model.Kernel {
	return &model.Kernel{ID: model.KernelID(id), Agent: agent, State: model.KernelOK,
		Alloc: model.Allocations{model.SlotMem: {"root": model.NewDec(bytes, 0)}}}
}

// TestFormatIsKept: an edit keeps the file's format; tables already in the
// file are never converted, and asking for that is refused up front, with
// the way to do it.
func TestFormatIsKept(t *testing.T) {
	snap := snapshot(fixtureDevices())
	slot := loadFixture(t, "agent.multi-agent.slot-based.toml")
	dev := loadFixture(t, "agent.multi-agent.device-based.toml")
	tests := []struct {
		name  string
		cfg   *agentconfig.Config
		req   Request
		valid bool
		want  string // in an error, or the plan's format when valid
	}{
		{"slot-based keeps slot-based", slot, Request{CPU: []CPUSet{{Agent: "i-gpu-node01-a", Spec: "8"}}}, true, "slot-based"},
		{"device-based keeps device-based", dev, Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}, true, "device-based"},
		{"no converting slot tables", slot, Request{Format: agentconfig.FormatDeviceBased}, false, "--format asks for the device-based format, but the file's allocation tables are slot-based"},
		{"no converting device tables", dev, Request{Format: agentconfig.FormatSlotBased, Mode: agentconfig.ModeManual}, false, "switch to auto-split first"},
		{"dropping the tables takes any format", slot, Request{Format: agentconfig.FormatDeviceBased, Mode: agentconfig.ModeAutoSplit}, true, "device-based"},
		{"a device-based draft on slot tables", slot, Request{From: dev}, false, "the draft " + dev.Path + " asks for the device-based format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, errs := Draft(tt.cfg, InventoryOf(snap), tt.req)
			p := Build(tt.cfg, d, snap, errs...)
			if p.Valid() != tt.valid {
				t.Fatalf("valid %v, errors %q", p.Valid(), p.Errors)
			}
			if tt.valid {
				if string(p.Format) != tt.want {
					t.Errorf("format %s, want %s", p.Format, tt.want)
				}
				if tt.want == "device-based" && tt.cfg == dev && (!p.DraftFormat || !strings.HasPrefix(p.Warnings[0], agentconfig.DraftFormatWarning)) {
					t.Errorf("a device-based file's plan does not say main cannot load it: %q", p.Warnings)
				}
				return
			}
			if !slices.ContainsFunc(p.Errors, func(e string) bool { return strings.Contains(e, tt.want) }) {
				t.Errorf("errors %q, want one saying %q", p.Errors, tt.want)
			}
			// The refusal alone: tables of the other format judged as if
			// they had been taken read as the file's own errors ("slot
			// 'cuda.shares' ... is missing", "internal: edits ... overlap").
			if len(p.Errors) != 1 {
				t.Errorf("errors %q, want the refusal alone", p.Errors)
			}
			if _, err := Apply(p, ApplyOptions{Actor: operator}); !errors.Is(err, ErrInvalidPlan) {
				t.Errorf("apply: %v", err)
			}
		})
	}
}

// TestPlanJudgedByTheChosenFormatsLoader: a file only the BEP-1044 draft
// loads (a key main removed) is judged by main's loader unless the plan
// writes the draft's device-based form, as check --schema: either way the
// plan says whose verdict it is and carries both.
func TestPlanJudgedByTheChosenFormatsLoader(t *testing.T) {
	in := "[resource]\nallocation-mode = \"shared\"\nreserved-mem = \"8G\"\n\n[[agents]]\n  [agents.agent]\n  id = \"a\"\n  scaling-group = \"default\"\n\n[[agents]]\n  [agents.agent]\n  id = \"b\"\n"
	snap := snapshot(fixtureDevices())
	tests := []struct {
		name       string
		req        Request
		judge      string
		valid      bool
		draftLoads bool
		label      string
	}{
		// Without the judge, a file only the draft loads passed as valid.
		{"auto-split, no tables", Request{Mode: agentconfig.ModeAutoSplit}, JudgeMain, false, true, "Backend.AI main's loader"},
		{"manual slot-based", Request{Mode: agentconfig.ModeManual, Format: agentconfig.FormatSlotBased}, JudgeMain, false, false, "Backend.AI main's loader"},
		{"manual device-based", Request{Mode: agentconfig.ModeManual, Format: agentconfig.FormatDeviceBased}, JudgeDraft, true, true, "the BEP-1044 draft's loader (PR #8463)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseConfig(t, in)
			d, errs := Draft(c, InventoryOf(snap), tt.req)
			p := Build(c, d, snap, errs...)
			if p.JudgedBy != tt.judge || p.JudgeLabel() != tt.label {
				t.Errorf("judged by %q (%s), want %q", p.JudgedBy, p.JudgeLabel(), tt.judge)
			}
			if p.Valid() != tt.valid {
				t.Errorf("valid %v, want %v: %q", p.Valid(), tt.valid, p.Errors)
			}
			if p.LoadsOnMain || p.LoadsOnDraft != tt.draftLoads {
				t.Errorf("loads on main %v, on the draft %v", p.LoadsOnMain, p.LoadsOnDraft)
			}
			if !tt.valid && !slices.ContainsFunc(p.Errors, func(e string) bool { return strings.Contains(e, "scaling-group was removed in Backend.AI main") }) {
				t.Errorf("errors %q do not give main's reason", p.Errors)
			}
		})
	}
}

// TestPlanWarnsMemBeyondHost: plan warns, as check notes, of a manual
// partition that gives its agents more memory together than the host has
// (the file loads; the manager may send them more than the host has).
func TestPlanWarnsMemBeyondHost(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.slot-based.toml")
	snap := snapshot(hostDevices(32, []string{gpu1, gpu2, gpu3, gpu4}, 236))
	d, errs := Draft(c, InventoryOf(snap), Request{})
	p := Build(c, d, snap, errs...)
	if !p.Valid() || !slices.ContainsFunc(p.Warnings, func(w string) bool {
		return strings.Contains(w, "240g in all) is more than the host's 236g") && strings.Contains(w, "the manager may send them more memory")
	}) {
		t.Errorf("valid %v, errors %q, warnings %q", p.Valid(), p.Errors, p.Warnings)
	}
}

// TestPlanWarnsCPUBeyondHost: as TestPlanWarnsMemBeyondHost for cores in
// the slot-based form: 17 + 17 cores given on a 32-core host loads, but
// the manager may send the agents more work than the cores run, and plan
// said "valid" with no word of it (the tour). 16 + 16 is no warning;
// check notes it and does not fail on it.
func TestPlanWarnsCPUBeyondHost(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.slot-based.toml")
	snap := snapshot(hostDevices(32, []string{gpu1, gpu2, gpu3, gpu4}, 512))
	for _, tc := range []struct {
		each string
		warn bool
	}{{"17", true}, {"16", false}} {
		n := model.MustDec(tc.each)
		req := Request{Slots: []SlotSet{{Agent: "i-gpu-node01-a", Slot: model.SlotCPU, Amount: n}, {Agent: "i-gpu-node01-b", Slot: model.SlotCPU, Amount: n}}}
		d, errs := Draft(c, InventoryOf(snap), req)
		p := Build(c, d, snap, errs...)
		warned := slices.ContainsFunc(p.Warnings, func(w string) bool {
			return strings.Contains(w, "in all) is more than the host's 32 cores")
		})
		if !p.Valid() || warned != tc.warn {
			t.Errorf("cpu %s each on 32 cores: valid %v, errors %q, warnings %q (want a warning: %v)", tc.each, p.Valid(), p.Errors, p.Warnings, tc.warn)
		}
	}
	iss := CPUBeyondHost(Effective(c, InventoryOf(snapshot(hostDevices(24, []string{gpu1}, 512)))))
	if iss == nil || iss.Code != model.IssueDriftCPUBeyond || !strings.Contains(iss.Message, "30 in all) is more than the host's 24 cores") {
		t.Errorf("15 + 15 on 24 cores: %+v", iss)
	}
}

// TestPlanJSONKeys: plan --json's lists that Build always computes are
// present, [] when empty, and its flags false rather than absent, so that
// a script tells "none" from "not computed"; only what was not computed
// (edits of a draft that could not be rendered, unread kernels of a node
// not read) is absent.
func TestPlanJSONKeys(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	snap := snapshot(fixtureDevices())
	always := []string{"agents", "moves", "strained", "unchanged", "edits", "errors", "warnings", "notes", "unread"}
	for _, tc := range []struct {
		name string
		req  Request
	}{
		{"no change", Request{}},
		{"a free device moves", Request{Moves: []Move{{Device: "cuda:" + gpu3, Agent: agentB}}}},
	} {
		d, errs := Draft(c, InventoryOf(snap), tc.req)
		p := Build(c, d, snap, errs...)
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for _, k := range always {
			if _, ok := doc[k].([]any); !ok {
				t.Errorf("%s: %q is %v, want a list ([] for none)\n%s", tc.name, k, doc[k], b)
			}
		}
		for _, k := range []string{"draft_format", "accel_unchecked"} {
			if _, ok := doc[k].(bool); !ok {
				t.Errorf("%s: %q is %v, want true or false\n%s", tc.name, k, doc[k], b)
			}
		}
		for _, a := range doc["agents"].([]any) {
			for _, k := range []string{"gains", "losses", "capacity"} {
				if _, ok := a.(map[string]any)[k].([]any); !ok {
					t.Errorf("%s: agent's %q is %v, want a list\n%s", tc.name, k, a.(map[string]any)[k], b)
				}
			}
		}
		for _, m := range doc["moves"].([]any) {
			for _, k := range []string{"from", "to", "holders"} {
				if _, ok := m.(map[string]any)[k].([]any); !ok {
					t.Errorf("%s: move's %q is %v, want a list\n%s", tc.name, k, m.(map[string]any)[k], b)
				}
			}
		}
	}
	// Not computed: absent, not [].
	d, errs := Draft(c, InventoryOf(snap), Request{})
	b, err := json.Marshal(Build(c, d, nil, errs...))
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, `"unread"`) || !strings.Contains(s, `"edits":[]`) {
		t.Errorf("a plan on a node not read: %s", s)
	}
}
