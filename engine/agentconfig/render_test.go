package agentconfig

import (
	"bytes"
	"errors"
	"github.com/fgtop/fgtop/internal/testfix"
	"slices"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// diffLines returns the 0-based indexes of lines that differ; a and b must
// have as many lines.
func diffLines(t *testing.T, a, b []byte) []int {
	t.Helper()
	la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
	if len(la) != len(lb) {
		t.Fatalf("line count changed: %d -> %d\n%s", len(la), len(lb), b)
	}
	var out []int
	for i := range la {
		if !bytes.Equal(la[i], lb[i]) {
			out = append(out, i)
		}
	}
	return out
}

func TestRenderNoChangeIsIdentity(t *testing.T) {
	for _, f := range []string{"agent.multi-agent.device-based.toml", "agent.multi-agent.slot-based.toml"} {
		c := loadTestdata(t, f)
		out, changes, err := Render(c, c.Clone())
		if err != nil || len(changes) != 0 || !bytes.Equal(out, c.Raw) {
			t.Errorf("%s: Render(c, clone) changed the file (%v, %d changes)", f, err, len(changes))
		}
	}
}

// TestRenderMoveKeepsEveryOtherByte moves a GPU between the agents of the
// commented fixture: only the two device lists change, and only between
// their brackets.
func TestRenderMoveKeepsEveryOtherByte(t *testing.T) {
	c := loadTestdata(t, "agent.multi-agent.device-based.toml")
	d := c.Clone()
	d.Agents[0].Alloc.Devices["cuda"] = []model.DeviceID{"c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"}
	d.Agents[1].Alloc.Devices["cuda"] = []model.DeviceID{"c59395cd-ac91-4cd3-a1b0-3d2568aa2d02", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04"}
	out, changes, err := Render(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 {
		t.Fatalf("changes = %+v", changes)
	}
	lines := diffLines(t, c.Raw, out)
	if !slices.Equal(lines, []int{47, 59}) {
		t.Fatalf("changed lines %v, want [47 59]", lines)
	}
	ol := bytes.Split(c.Raw, []byte("\n"))
	nl := bytes.Split(out, []byte("\n"))
	for _, i := range lines {
		prefix := "  devices = { cuda = ["
		if !bytes.HasPrefix(ol[i], []byte(prefix)) || !bytes.HasPrefix(nl[i], []byte(prefix)) ||
			!bytes.HasSuffix(ol[i], []byte("] }")) || !bytes.HasSuffix(nl[i], []byte("] }")) {
			t.Errorf("line %d: %q -> %q", i+1, ol[i], nl[i])
		}
	}
	want := `  devices = { cuda = ["c59395cd-ac91-4cd3-a1b0-3d2568aa2d02", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d03", "c59395cd-ac91-4cd3-a1b0-3d2568aa2d04"] }`
	if string(nl[59]) != want {
		t.Errorf("line 60 = %q", nl[59])
	}
	back, err := Parse(c.Path, out)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Agents[1].Alloc.Devices["cuda"]; !slices.Equal(got, d.Agents[1].Alloc.Devices["cuda"]) {
		t.Errorf("read back %v", got)
	}
}

func TestRenderModeSwitchRoundTrip(t *testing.T) {
	c := loadTestdata(t, "agent.multi-agent.device-based.toml")
	d := c.Clone()
	d.Mode = ModeAutoSplit
	for i := range d.Agents {
		d.Agents[i].Alloc, d.Agents[i].OwnAlloc = nil, false
	}
	out, _, err := Render(c, d)
	if err != nil {
		t.Fatal(err)
	}
	auto, err := Parse(c.Path, out)
	if err != nil {
		t.Fatalf("auto-split file: %v\n%s", err, out)
	}
	if auto.Mode != ModeAutoSplit || auto.Agents[0].Alloc != nil || auto.Agents[1].Alloc != nil {
		t.Fatalf("auto-split file: mode %s allocs %v %v", auto.Mode, auto.Agents[0].Alloc, auto.Agents[1].Alloc)
	}
	for _, keep := range []string{"# AUTO_SPLIT variant", "[agents.container]\n  port-range = [31000, 31999]\n", "agent-sock-port = 6008"} {
		if !bytes.Contains(out, []byte(keep)) {
			t.Errorf("lost %q", keep)
		}
	}
	// Back to manual: the tables are written again at the end of each
	// agent's block, with the block's indentation.
	back, _, err := Render(auto, c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(c.Path, back)
	if err != nil {
		t.Fatalf("manual again: %v\n%s", err, back)
	}
	for i := range c.Agents {
		if !slices.Equal(m.Agents[i].Alloc.CPU, c.Agents[i].Alloc.CPU) || !m.Agents[i].Alloc.Mem.Equal(c.Agents[i].Alloc.Mem) ||
			!slices.Equal(m.Agents[i].Alloc.Devices["cuda"], c.Agents[i].Alloc.Devices["cuda"]) {
			t.Errorf("agent %d read back as %+v", i, m.Agents[i].Alloc)
		}
	}
	if !bytes.Contains(back, []byte("  port-range = [30000, 30999]             # keep ranges disjoint\n  [agents.resource]\n  cpu = [\"0\"")) {
		t.Errorf("the new table is not where expected:\n%s", back)
	}
}

func TestRenderEdits(t *testing.T) {
	dev := func(a *Allocation) { a.Devices["cuda"] = []model.DeviceID{"g0", "g2"} }
	tests := []struct {
		name   string
		in     string
		change func(d *Config)
		want   string
	}{
		{
			name:   "replace only the value, keep the comment",
			in:     "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\"0\"]\nmem = \"1G\" # one gig\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
			change: func(d *Config) { d.Agents[0].Alloc.Mem = model.NewDec(3<<30, 0) },
			want:   "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\"0\"]\nmem = \"3G\" # one gig\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
		},
		{
			name: "add devices to a table without them",
			in:   "[[agents]]\n[agents.agent]\nid = \"a\"\n  [agents.resource]\n  cpu = [\"0\"]\n  mem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
			change: func(d *Config) {
				d.Agents[0].Alloc.Devices = map[model.DeviceName][]model.DeviceID{"cuda": {"g0", "g2"}}
			},
			want: "[[agents]]\n[agents.agent]\nid = \"a\"\n  [agents.resource]\n  cpu = [\"0\"]\n  mem = \"1G\"\n  devices = { cuda = [\"g0\", \"g2\"] }\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
		},
		{
			name:   "add a plugin to an inline devices table",
			in:     "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\"0\"]\ndevices = { cuda = [\"g0\"] }\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
			change: func(d *Config) { d.Agents[0].Alloc.Devices["rocm"] = []model.DeviceID{"r0"} },
			want:   "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\"0\"]\ndevices = { cuda = [\"g0\"], rocm = [\"r0\"] }\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
		},
		{
			name:   "devices as a sub-table",
			in:     "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\"0\"]\n[agents.resource.devices]\ncuda = [\"g0\"] # first\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
			change: func(d *Config) { dev(d.Agents[0].Alloc) },
			want:   "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\"0\"]\n[agents.resource.devices]\ncuda = [\"g0\", \"g2\"] # first\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
		},
		{
			name:   "multi-line array keeps the lines and comments of the elements that stay",
			in:     "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\n  \"0\", # zero\n  \"1\",\n]\nmem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
			change: func(d *Config) { d.Agents[0].Alloc.CPU = []model.DeviceID{"0"} },
			want:   "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = [\n  \"0\", # zero\n]\nmem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
		},
		{
			name: "MIG slices listed one per line with comments: one moves out, one moves in",
			in: "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ndevices = { cuda = [\n    \"g1\",\n    # the MIG GPU\n    \"MIG-x/4/0\",   # 3g.20gb\n    'MIG-x/5/0'    # 2g.10gb\n  ] }\n" +
				"[[agents]]\n[agents.agent]\nid = \"b\"\n",
			change: func(d *Config) { d.Agents[0].Alloc.Devices["cuda"] = []model.DeviceID{"MIG-x/4/0", "MIG-x/5/0", "g2"} },
			want: "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ndevices = { cuda = [\n    # the MIG GPU\n    \"MIG-x/4/0\",   # 3g.20gb\n    'MIG-x/5/0',    # 2g.10gb\n    \"g2\",\n  ] }\n" +
				"[[agents]]\n[agents.agent]\nid = \"b\"\n",
		},
		{
			name:   "CRLF multi-line array keeps CRLF",
			in:     "[[agents]]\r\n[agents.agent]\r\nid = \"a\"\r\n[agents.resource]\r\ncpu = [\r\n  \"0\", # zero\r\n  \"1\",\r\n]\r\n[[agents]]\r\n[agents.agent]\r\nid = \"b\"\r\n",
			change: func(d *Config) { d.Agents[0].Alloc.CPU = []model.DeviceID{"1", "2"} },
			want:   "[[agents]]\r\n[agents.agent]\r\nid = \"a\"\r\n[agents.resource]\r\ncpu = [\r\n  \"1\",\r\n  \"2\",\r\n]\r\n[[agents]]\r\n[agents.agent]\r\nid = \"b\"\r\n",
		},
		{
			name: "CRLF and no final newline",
			in:   "[resource]\r\nallocation-mode = \"auto-split\"\r\n[[agents]]\r\n[agents.agent]\r\nid = \"a\"\r\n[[agents]]\r\n[agents.agent]\r\nid = \"b\"",
			change: func(d *Config) {
				d.AllocFormat = FormatDeviceBased
				d.Agents[1].Alloc, d.Agents[1].OwnAlloc = &Allocation{HasCPU: true, CPU: []model.DeviceID{"1"}}, true
			},
			want: "[resource]\r\nallocation-mode = \"auto-split\"\r\n[[agents]]\r\n[agents.agent]\r\nid = \"a\"\r\n[[agents]]\r\n[agents.agent]\r\nid = \"b\"\r\n[agents.resource]\r\ncpu = [\"1\"]\r\n",
		},
		{
			// Main reads the kebab one (the other is an unknown key): so
			// does fgtop, and it edits that one.
			name:   "both spellings of the mode key",
			in:     "[resource]\nallocation_mode = \"manual\"\nallocation-mode = \"shared\"  # counts\n",
			change: func(d *Config) { d.Mode = ModeAutoSplit },
			want:   "[resource]\nallocation_mode = \"manual\"\nallocation-mode = \"auto-split\"  # counts\n",
		},
		{
			name:   "mode key spelled with an underscore",
			in:     "[resource]\nallocation_mode = \"shared\"  # mode\nreserved-cpu = 1\n",
			change: func(d *Config) { d.Mode = ModeAutoSplit },
			want:   "[resource]\nallocation_mode = \"auto-split\"  # mode\nreserved-cpu = 1\n",
		},
		{
			name:   "mode key added to [resource]",
			in:     "[resource]\nreserved-cpu = 1 # keep\n\n[container]\nscratch-root = \"/s\"\n",
			change: func(d *Config) { d.Mode = ModeAutoSplit },
			want:   "[resource]\nreserved-cpu = 1 # keep\nallocation-mode = \"auto-split\"\n\n[container]\nscratch-root = \"/s\"\n",
		},
		{
			name:   "[resource] created at the end",
			in:     "[agent]\nid = \"x\"\n",
			change: func(d *Config) { d.Mode = ModeAutoSplit },
			want:   "[agent]\nid = \"x\"\n\n[resource]\nallocation-mode = \"auto-split\"\n",
		},
		{
			name: "single agent: allocations table removed",
			in:   "[resource]\nallocation-mode = \"manual\"\n\n[resource.allocations] # mine\ncpu = 4\n# between\nmem = \"4G\"\n\n# next\n[container]\n",
			change: func(d *Config) {
				d.Mode = ModeShared
				d.Agents[0].Alloc, d.Agents[0].OwnAlloc, d.GlobalAlloc = nil, false, nil
			},
			want: "[resource]\nallocation-mode = \"shared\"\n\n\n# next\n[container]\n",
		},
		{
			name: "slot amount changed, quoted key kept",
			in:   "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = 15\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"2.0\" }  # two\n[[agents]]\n[agents.agent]\nid = \"b\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"2.0\" }\n",
			change: func(d *Config) {
				d.Agents[0].Alloc.Slots["cuda.shares"] = model.MustDec("1.5")
				d.Agents[0].Alloc.CPUCount = model.NewDec(7, 0)
			},
			want: "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = 7\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"1.5\" }  # two\n[[agents]]\n[agents.agent]\nid = \"b\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"2.0\" }\n",
		},
		{
			name:   "device name removed from an inline table",
			in:     "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ndevices = { cuda = [\"g0\"], rocm = [\"r0\"] }\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
			change: func(d *Config) { delete(d.Agents[0].Alloc.Devices, "cuda") },
			want:   "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ndevices = { rocm = [\"r0\"] }\n[[agents]]\n[agents.agent]\nid = \"b\"\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := Parse("agent.toml", []byte(tt.in))
			if c == nil {
				t.Fatal("input does not parse")
			}
			d := c.Clone()
			tt.change(d)
			out, _, err := Render(c, d)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("got:\n%q\nwant:\n%q", out, tt.want)
			}
		})
	}
}

// TestRenderEveryForm: the edits fgtop makes (drop the tables, write
// them, change a value) work on every TOML form of the same file, and
// leave every other byte as it is.
func TestRenderEveryForm(t *testing.T) {
	tail := "\n[resource]\nallocation-mode = \"manual\" # m\n"
	tests := []struct {
		name string
		in   string
		// dropped is in after auto-split drops the tables; cpu is in with
		// agent b's cpu changed to 3.
		dropped, cpu string
	}{
		{
			name:    "sub-tables",
			in:      "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"2\" }\n[[agents]]\n[agents.agent]\nid = \"b\" # b\n[agents.resource]\ncpu = 1\nmem = \"1G\"\n[agents.resource.devices]\n\"cuda.shares\" = \"2\"\n" + tail,
			dropped: "[[agents]]\n[agents.agent]\nid = \"a\"\n[[agents]]\n[agents.agent]\nid = \"b\" # b\n" + tail,
			cpu:     "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\ndevices = { \"cuda.shares\" = \"2\" }\n[[agents]]\n[agents.agent]\nid = \"b\" # b\n[agents.resource]\ncpu = 3\nmem = \"1G\"\n[agents.resource.devices]\n\"cuda.shares\" = \"2\"\n" + tail,
		},
		{
			name:    "inline resource tables",
			in:      "[[agents]]\nagent = { id = \"a\" }\nresource = { cpu = 1, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } }\n[[agents]]\nagent = { id = \"b\" }\nresource = { cpu = 1, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } } # b\n" + tail,
			dropped: "[[agents]]\nagent = { id = \"a\" }\n[[agents]]\nagent = { id = \"b\" }\n" + tail,
			cpu:     "[[agents]]\nagent = { id = \"a\" }\nresource = { cpu = 1, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } }\n[[agents]]\nagent = { id = \"b\" }\nresource = { cpu = 3, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } } # b\n" + tail,
		},
		{
			name:    "dotted keys",
			in:      "[[agents]]\nagent.id = \"a\"\nresource.cpu = 1\nresource.mem = \"1G\"\nresource.devices.\"cuda.shares\" = \"2\"\n[[agents]]\nagent . id = \"b\"\nresource . cpu = 1 # b\nresource . mem = \"1G\"\nresource . devices . \"cuda.shares\" = \"2\"\n" + tail,
			dropped: "[[agents]]\nagent.id = \"a\"\n[[agents]]\nagent . id = \"b\"\n" + tail,
			cpu:     "[[agents]]\nagent.id = \"a\"\nresource.cpu = 1\nresource.mem = \"1G\"\nresource.devices.\"cuda.shares\" = \"2\"\n[[agents]]\nagent . id = \"b\"\nresource . cpu = 3 # b\nresource . mem = \"1G\"\nresource . devices . \"cuda.shares\" = \"2\"\n" + tail,
		},
		{
			name:    "array, one line",
			in:      "agents = [{ agent = { id = \"a\" }, resource = { cpu = 1, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } } }, { agent = { id = \"b\" }, resource = { cpu = 1, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } } }]\n" + tail,
			dropped: "agents = [{ agent = { id = \"a\" } }, { agent = { id = \"b\" } }]\n" + tail,
			cpu:     "agents = [{ agent = { id = \"a\" }, resource = { cpu = 1, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } } }, { agent = { id = \"b\" }, resource = { cpu = 3, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } } }]\n" + tail,
		},
		{
			name:    "array, multi-line with comments",
			in:      "agents = [\n  # agent a\n  { agent = { id = \"a\" }, resource = { cpu = 1, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } } },\n  # agent b\n  { agent = { id = \"b\" }, resource = { mem = \"1G\", cpu = 1, devices = { \"cuda.shares\" = \"2\" } } },\n]  # end\n" + tail,
			dropped: "agents = [\n  # agent a\n  { agent = { id = \"a\" } },\n  # agent b\n  { agent = { id = \"b\" } },\n]  # end\n" + tail,
			cpu:     "agents = [\n  # agent a\n  { agent = { id = \"a\" }, resource = { cpu = 1, mem = \"1G\", devices = { \"cuda.shares\" = \"2\" } } },\n  # agent b\n  { agent = { id = \"b\" }, resource = { mem = \"1G\", cpu = 3, devices = { \"cuda.shares\" = \"2\" } } },\n]  # end\n" + tail,
		},
		{
			name:    "snake_case mode key",
			in:      "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\n\n[resource]\nallocation_mode = \"manual\" # m\n",
			dropped: "[[agents]]\n[agents.agent]\nid = \"a\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n\n[resource]\nallocation_mode = \"auto-split\" # m\n",
			cpu:     "[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n[agents.resource]\ncpu = 3\nmem = \"1G\"\n\n[resource]\nallocation_mode = \"manual\" # m\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("agent.toml", []byte(testfix.AgentTOML(tt.in)))
			if err != nil {
				t.Fatal(err)
			}
			if c.AllocFormat != FormatSlotBased || len(c.Agents) != 2 {
				t.Fatalf("read as %s with %d agents", c.AllocFormat, len(c.Agents))
			}
			want := testfix.AgentTOML(tt.dropped)
			if !strings.Contains(tt.in, "allocation_mode") {
				want = strings.Replace(want, `allocation-mode = "manual"`, `allocation-mode = "auto-split"`, 1)
			}
			d := c.Clone()
			d.Mode = ModeAutoSplit
			for i := range d.Agents {
				d.Agents[i].Alloc, d.Agents[i].OwnAlloc = nil, false
			}
			out, _, err := Render(c, d)
			if err != nil || string(out) != want {
				t.Fatalf("auto-split: err %v\ngot:\n%s\nwant:\n%s", err, out, want)
			}
			// And back: manual writes the tables in the form the agent
			// entry is written in.
			back, err := Parse("agent.toml", out)
			if err != nil {
				t.Fatal(err)
			}
			m := back.Clone()
			m.Mode = ModeManual
			for i := range m.Agents {
				m.Agents[i].Alloc, m.Agents[i].OwnAlloc = c.Agents[i].Alloc.Clone(), true
			}
			again, _, err := Render(back, m)
			if err != nil {
				t.Fatalf("manual: %v", err)
			}
			r, err := Parse("agent.toml", again)
			if err != nil || r.Mode != ModeManual || r.AllocFormat != FormatSlotBased {
				t.Fatalf("manual: %v\n%s", err, again)
			}
			for i := range r.Agents {
				if got, want := r.Agents[i].Alloc, c.Agents[i].Alloc; got == nil || !got.CPUCount.Equal(want.CPUCount) || !got.Mem.Equal(want.Mem) || !slices.Equal(got.SlotNames(), want.SlotNames()) {
					t.Errorf("manual: agent %d is %+v, want %+v\n%s", i, got, want, again)
				}
			}

			d = c.Clone()
			d.Agents[1].Alloc.CPUCount = model.NewDec(3, 0)
			out, _, err = Render(c, d)
			if want := testfix.AgentTOML(tt.cpu); err != nil || string(out) != want {
				t.Errorf("cpu: err %v\ngot:\n%s\nwant:\n%s", err, out, want)
			}
		})
	}
}

// TestRenderDottedTables: a table made of dotted keys can be dropped,
// changed and extended (a key joins its siblings as one more dotted line).
func TestRenderDottedTables(t *testing.T) {
	in := "[resource]\nallocation-mode = \"manual\"\n[[agents]]\nagent.id = \"a\"\nresource.cpu = [\"0\"]\nresource.mem = \"1G\"\n[[agents]]\nagent.id = \"b\"\n  resource.cpu = [\"1\"] # b\n  resource.mem = \"1G\"\n"
	c, err := Parse("agent.toml", []byte(testfix.AgentTOML(in)))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Clone()
	d.Mode = ModeShared
	for i := range d.Agents {
		d.Agents[i].Alloc, d.Agents[i].OwnAlloc = nil, false
	}
	out, _, err := Render(c, d)
	if want := testfix.AgentTOML("[resource]\nallocation-mode = \"shared\"\n[[agents]]\nagent.id = \"a\"\n[[agents]]\nagent.id = \"b\"\n"); err != nil || string(out) != want {
		t.Errorf("drop: err %v\n%s", err, out)
	}
	// A value change inside the dotted table is a plain value edit.
	d = c.Clone()
	d.Agents[1].Alloc.CPU = []model.DeviceID{"1", "2"}
	out, _, err = Render(c, d)
	if err != nil || !strings.Contains(string(out), "resource.cpu = [\"1\", \"2\"] # b\n") {
		t.Errorf("err %v\n%s", err, out)
	}
	// A new key joins the dotted ones, indented like them.
	d = c.Clone()
	d.Agents[1].Alloc.Devices = map[model.DeviceName][]model.DeviceID{"cuda": {"g1"}}
	out, _, err = Render(c, d)
	if want := "  resource.mem = \"1G\"\n  resource.devices = { cuda = [\"g1\"] }\n"; err != nil || !strings.Contains(string(out), want) {
		t.Errorf("add: err %v\n%s", err, out)
	}
}

func TestSizeText(t *testing.T) {
	for in, want := range map[int64]string{120 << 30: "120G", 1 << 40: "1T", 1536 << 20: "1536M", 1000: "1000", 1024: "1K", 64424509441: "64424509441"} {
		if got := SizeText(model.NewDec(in, 0)); got != want {
			t.Errorf("SizeText(%d) = %q, want %q", in, got, want)
		}
		back, err := model.ParseFiniteBinarySize(SizeText(model.NewDec(in, 0)))
		if err != nil || !back.Equal(model.NewDec(in, 0)) {
			t.Errorf("SizeText(%d) reads back as %s, %v", in, back, err)
		}
	}
}

// TestRenderRefusesArrayOfTables: a file whose resource is [[resource]]
// (an array of tables, fuzz-found in CI) got a new [resource] written
// beside it, which defines the key twice: the rendered file did not
// load. Render refuses, naming the key, before anything is written.
func TestRenderRefusesArrayOfTables(t *testing.T) {
	for _, raw := range []string{"[[resource]]\n", "[[resource]]\nx = 1\n[[resource]]\n"} {
		c, _ := Parse("agent.toml", []byte(raw))
		if c == nil {
			t.Fatalf("%q: no config to edit", raw)
		}
		d := c.Clone()
		d.Mode = ModeAutoSplit
		if d.Mode == c.Mode {
			d.Mode = ModeManual
		}
		out, _, err := Render(c, d)
		if !errors.Is(err, ErrUneditable) || !strings.Contains(err.Error(), "resource is an array of tables ([[resource]])") {
			t.Errorf("%q: %v, want it refused as an array of tables\n%s", raw, err, out)
		}
	}
}
