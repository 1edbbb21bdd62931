package partition

import (
	"fmt"
	"github.com/fgtop/fgtop/internal/testfix"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/agentconfig"
	"github.com/fgtop/fgtop/model"
)

func ids(xs ...string) []model.DeviceID {
	out := make([]model.DeviceID, len(xs))
	for i, x := range xs {
		out[i] = model.DeviceID(x)
	}
	return out
}

func TestDeal(t *testing.T) {
	tests := []struct {
		devices int
		agents  int
		want    []int
	}{
		{5, 3, []int{2, 2, 1}},
		{2, 5, []int{1, 1, 0, 0, 0}},
		{0, 2, []int{0, 0}},
		{4, 2, []int{2, 2}},
		{7, 1, []int{7}},
	}
	for _, tt := range tests {
		var in []model.DeviceID
		for i := range tt.devices {
			in = append(in, model.DeviceID(fmt.Sprint(i)))
		}
		got := Deal(in, tt.agents)
		var sizes []int
		next := 0
		for _, part := range got {
			sizes = append(sizes, len(part))
			for _, id := range part {
				if id != model.DeviceID(fmt.Sprint(next)) {
					t.Errorf("Deal(%d, %d): not dealt from the front: %v", tt.devices, tt.agents, got)
				}
				next++
			}
		}
		if !slices.Equal(sizes, tt.want) {
			t.Errorf("Deal(%d devices, %d agents) sizes = %v, want %v", tt.devices, tt.agents, sizes, tt.want)
		}
	}
}

func TestSplitAmount(t *testing.T) {
	tests := []struct {
		total string
		n     int
		want  []string
	}{
		{"10", 3, []string{"4", "3", "3"}},
		{"11", 3, []string{"4", "4", "3"}},
		{"266287972352", 2, []string{"133143986176", "133143986176"}},
		{"266287972353", 2, []string{"133143986177", "133143986176"}},
		{"1", 4, []string{"1", "0", "0", "0"}},
	}
	for _, tt := range tests {
		got := SplitAmount(model.MustDec(tt.total), tt.n)
		var s []string
		for _, d := range got {
			s = append(s, d.String())
		}
		if !slices.Equal(s, tt.want) {
			t.Errorf("SplitAmount(%s, %d) = %v, want %v", tt.total, tt.n, s, tt.want)
		}
	}
}

func twoAgents(mode, a, b string) string {
	return fmt.Sprintf("[resource]\nallocation-mode = %q\nreserved-cpu = 2\nreserved-mem = \"8G\"\n[[agents]]\n[agents.agent]\nid = \"a\"\n%s\n[[agents]]\n[agents.agent]\nid = \"b\"\n%s\n", mode, a, b)
}

func TestEffectiveDeviceBased(t *testing.T) {
	gpus := []string{"cuda10", "cuda2", "cuda1", "cuda0", "cuda3"}
	devs := hostDevices(5, gpus, 64)
	inv := Inventory{Devices: devs}
	three := "[resource]\nallocation-mode = \"auto-split\"\nreserved-mem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"a\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n[[agents]]\n[agents.agent]\nid = \"c\"\n"
	tests := []struct {
		name string
		text string
		// want is agent -> plugin -> ids; nil agent map means "every device".
		want map[model.AgentID]map[model.DeviceName][]model.DeviceID
		mem  map[model.AgentID]string
	}{
		{
			name: "shared: every agent every device",
			text: twoAgents("shared", "", ""),
			want: map[model.AgentID]map[model.DeviceName][]model.DeviceID{"a": nil, "b": nil},
			mem:  map[model.AgentID]string{"a": "0", "b": "0"},
		},
		{
			name: "auto-split: natural sort, dealt from the front",
			text: three,
			want: map[model.AgentID]map[model.DeviceName][]model.DeviceID{
				"a": {"cuda": ids("cuda0", "cuda1"), "cpu": ids("0", "1")},
				"b": {"cuda": ids("cuda2", "cuda3"), "cpu": ids("2", "3")},
				"c": {"cuda": ids("cuda10"), "cpu": ids("4")},
			},
			// 64 GiB - 1 GiB = 67645734912 = 3 * 22548578304 exactly.
			mem: map[model.AgentID]string{"a": "22548578304", "b": "22548578304", "c": "22548578304"},
		},
		{
			name: "manual: as configured, unlisted plugins empty",
			text: twoAgents("manual", "[agents.resource]\ncpu = [\"0\", \"1\"]\nmem = \"10G\"\ndevices = { cuda = [\"cuda10\"] }", "[agents.resource]\ncpu = [\"2\"]\nmem = \"20G\""),
			want: map[model.AgentID]map[model.DeviceName][]model.DeviceID{
				"a": {"cuda": ids("cuda10"), "cpu": ids("0", "1")},
				"b": {"cuda": ids(), "cpu": ids("2")},
			},
			mem: map[model.AgentID]string{"a": "10737418240", "b": "21474836480"},
		},
		{
			name: "one agent is shared whatever the mode",
			text: "[resource]\nallocation-mode = \"auto-split\"\n",
			want: map[model.AgentID]map[model.DeviceName][]model.DeviceID{"agent": nil},
			mem:  map[model.AgentID]string{"agent": "0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseConfigAs(t, tt.text, agentconfig.FormatDeviceBased)
			p := Effective(c, inv)
			if len(p.Agents) != len(tt.want) {
				t.Fatalf("%d agents", len(p.Agents))
			}
			for id, want := range tt.want {
				a := p.Agent(id)
				if want == nil {
					if a.Owns != nil {
						t.Errorf("%s owns %v, want every device", id, a.Owns)
					}
				} else {
					for name, w := range want {
						if !slices.Equal(a.Owns[name], w) {
							t.Errorf("%s %s = %v, want %v", id, name, a.Owns[name], w)
						}
					}
				}
				if a.Mem.String() != tt.mem[id] {
					t.Errorf("%s mem = %s, want %s", id, a.Mem, tt.mem[id])
				}
			}
		})
	}
}

func TestEffectiveScalingAndReserved(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	devs := hostDevices(32, []string{gpu1, gpu2, gpu3, gpu4, "c59395cd-ac91-4cd3-a1b0-3d2568aa2d05"}, 256)
	p := Effective(c, Inventory{Devices: devs})
	a := p.Agent(agentA)
	// 2 of 5 GPUs: scaling 0.4, reserved 5 - min(2, 5) = 3.
	if got := a.Scaling[model.SlotCUDAShares]; !got.Equal(model.MustDec("0.4")) {
		t.Errorf("cuda.shares scaling = %s, want 0.4", got)
	}
	if got := a.Reserved[model.SlotCUDAShares]; !got.Equal(model.NewDec(3, 0)) {
		t.Errorf("cuda.shares reserved = %s, want 3", got)
	}
	// 16 of 32 - 2 cores.
	if got := a.Scaling[model.SlotCPU]; !got.Equal(model.MustDec("0.5333333333333333333333333333")) {
		t.Errorf("cpu scaling = %s", got)
	}
	if got := a.Capacity[model.SlotMem]; !got.Equal(model.NewDec(120<<30, 0)) {
		t.Errorf("mem capacity = %s", got)
	}
	if len(p.Unowned) != 1 || Key(p.Unowned[0]) != "cuda:c59395cd-ac91-4cd3-a1b0-3d2568aa2d05" {
		t.Errorf("unowned = %v", p.Unowned)
	}
}

func TestEffectiveSlotBased(t *testing.T) {
	devs := fixtureDevices()
	inv := Inventory{Devices: devs}
	tests := []struct {
		name string
		text string
		cpu  []string
		gpu  []string
		mem  []string
	}{
		{"shared", twoAgents("shared", "", ""), []string{"30", "30"}, []string{"4", "4"}, []string{"0", "0"}},
		// cpu: divmod(30, 2); cuda.shares: 4 / 2 unrounded; mem: divmod(248G, 2).
		{"auto-split", twoAgents("auto-split", "", ""), []string{"15", "15"}, []string{"2", "2"}, []string{"133143986176", "133143986176"}},
		{"manual", twoAgents("manual", "[agents.resource]\ncpu = 15\nmem = \"120G\"\ndevices = { \"cuda.shares\" = \"2.0\" }", "[agents.resource]\ncpu = 10\nmem = \"100G\"\ndevices = { \"cuda.shares\" = \"1.5\" }"),
			[]string{"15", "10"}, []string{"2.0", "1.5"}, []string{"128849018880", "107374182400"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := agentconfig.ParseAssuming("agent.toml", []byte(testfix.AgentTOML(tt.text)), agentconfig.FormatSlotBased)
			if err != nil {
				t.Fatal(err)
			}
			p := Effective(c, inv)
			if p.Exclusive || !slices.Contains(p.Notes, NoteNotExclusive) {
				t.Errorf("slot-based partition must say devices are not exclusive: %v", p.Notes)
			}
			for i, a := range p.Agents {
				if a.Owns != nil {
					t.Errorf("%s owns %v, want every device", a.ID, a.Owns)
				}
				if got := a.Capacity[model.SlotCPU].String(); got != tt.cpu[i] {
					t.Errorf("%s cpu = %s, want %s", a.ID, got, tt.cpu[i])
				}
				if got := a.Capacity[model.SlotCUDAShares].String(); got != tt.gpu[i] {
					t.Errorf("%s cuda.shares = %s, want %s", a.ID, got, tt.gpu[i])
				}
				if got := a.Mem.String(); got != tt.mem[i] {
					t.Errorf("%s mem = %s, want %s", a.ID, got, tt.mem[i])
				}
			}
		})
	}
}

func TestFill(t *testing.T) {
	c := loadFixture(t, "agent.multi-agent.device-based.toml")
	p := Effective(c, Inventory{Devices: fixtureDevices()})
	agents := []model.Agent{{ID: agentA}, {ID: agentB}, {ID: "other"}}
	p.Fill(agents)
	if !agents[0].OwnsDevice(model.DeviceKey{Name: "cuda", ID: gpu1}) || agents[0].OwnsDevice(model.DeviceKey{Name: "cuda", ID: gpu2}) {
		t.Errorf("agent a owns %v", agents[0].Owns)
	}
	if !agents[1].Mem.Equal(model.NewDec(120<<30, 0)) || agents[2].Owns != nil {
		t.Errorf("fill: %+v", agents)
	}
}

// TestFillLeavesOutWhatTheFileDoesNotGive: a manual slot-based agent
// whose file gives no readable amount of a slot (cpu = "fifteen") is not
// given 0 of it: the console's agents pane and the snapshot's "given" said
// "cpu 0 of 32", a figure the file never held.
func TestFillLeavesOutWhatTheFileDoesNotGive(t *testing.T) {
	text := twoAgents("manual", "[agents.resource]\ncpu = \"fifteen\"\nmem = \"120G\"\ndevices = { \"cuda.shares\" = \"2.0\" }",
		"[agents.resource]\ncpu = 10\nmem = \"100G\"\ndevices = { \"cuda.shares\" = \"1.5\" }")
	// The file the agent refuses still loads, its problems listed: the
	// console watches the node with it.
	c, err := agentconfig.ParseAssuming("agent.toml", []byte(testfix.AgentTOML(text)), agentconfig.FormatSlotBased)
	if c == nil {
		t.Fatal(err)
	}
	p := Effective(c, Inventory{Devices: fixtureDevices()})
	agents := []model.Agent{{ID: p.Agents[0].ID}, {ID: p.Agents[1].ID}}
	p.Fill(agents)
	if v, ok := agents[0].Given[model.SlotCPU]; ok {
		t.Errorf("%s: given cpu %s, which its file does not give", agents[0].ID, v)
	}
	if got := agents[0].Given[model.SlotCUDAShares].String(); got != "2.0" {
		t.Errorf("%s: given cuda.shares %s, want 2.0", agents[0].ID, got)
	}
	if got := agents[1].Given[model.SlotCPU].String(); got != "10" {
		t.Errorf("%s: given cpu %s, want 10", agents[1].ID, got)
	}
}

func TestIDRanges(t *testing.T) {
	tests := map[string][]model.DeviceID{
		"0-7,16":  ids("0", "1", "2", "3", "4", "5", "6", "7", "16"),
		"3":       ids("3"),
		"none":    nil,
		"a, b":    ids("a", "b"),
		"01, 2":   ids("01", "2"),
		"0-1,3-4": ids("4", "3", "1", "0"),
	}
	for want, in := range tests {
		if got := IDRanges(in); got != want {
			t.Errorf("IDRanges(%v) = %q, want %q", in, got, want)
		}
	}
	got, err := ParseIDRanges("0-3, 8,10-11")
	if err != nil || strings.Join(func() []string {
		s := []string{}
		for _, id := range got {
			s = append(s, string(id))
		}
		return s
	}(), ",") != "0,1,2,3,8,10,11" {
		t.Errorf("ParseIDRanges = %v, %v", got, err)
	}
	for _, bad := range []string{"", "3-1", "a-b", ","} {
		if _, err := ParseIDRanges(bad); err == nil {
			t.Errorf("ParseIDRanges(%q) accepted", bad)
		}
	}
}

// TestEffectiveSlotBasedUnknownAccelerators: on a node whose accelerators
// are unknown (no GPU source), a manual slot-based file's device amounts
// are still what each agent is given: the plan, the agents pane and the
// editor show and edit them (the node's total is what is unknown). On a
// node whose accelerators are known, a slot no plugin registers is not.
func TestEffectiveSlotBasedUnknownAccelerators(t *testing.T) {
	text := twoAgents("manual", "[agents.resource]\ncpu = 15\nmem = \"120G\"\ndevices = { \"cuda.shares\" = \"2.0\" }", "[agents.resource]\ncpu = 10\nmem = \"100G\"\ndevices = { \"cuda.shares\" = \"1.5\" }")
	c, err := agentconfig.ParseAssuming("agent.toml", []byte(testfix.AgentTOML(text)), agentconfig.FormatSlotBased)
	if err != nil {
		t.Fatal(err)
	}
	host := hostDevices(32, nil, 256)
	p := Effective(c, Inventory{Devices: host, AcceleratorsUnknown: true})
	for i, want := range []string{"2.0", "1.5"} {
		if got, ok := p.Agents[i].Capacity[model.SlotCUDAShares]; !ok || got.String() != want {
			t.Errorf("%s cuda.shares = %s (%v), want %s", p.Agents[i].ID, got, ok, want)
		}
	}
	if _, ok := p.Totals[model.SlotCUDAShares]; ok {
		t.Errorf("a total of cuda.shares on a node whose accelerators are unknown: %v", p.Totals)
	}
	known := Effective(c, Inventory{Devices: host})
	if _, ok := known.Agents[0].Capacity[model.SlotCUDAShares]; ok {
		t.Errorf("cuda.shares given on a node that registers no such slot: %v", known.Agents[0].Capacity)
	}
}
