package agentconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fgtop/fgtop/model"
	toml "github.com/pelletier/go-toml/v2"
)

// FuzzParse feeds the loader arbitrary bytes: it must never panic, a
// config it returns must validate without panicking, and rendering a
// config onto itself must give back the very same bytes.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"agent.multi-agent.device-based.toml", "agent.multi-agent.slot-based.toml"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("[resource]\nallocation-mode = \"manual\"\n[resource.allocations]\ncpu = 4\nmem = \"4G\"\n"))
	f.Add([]byte("[[agents]]\nagent.id = \"a\"\nresource = { cpu = [\"0\"], mem = \"1G\", devices = { cuda = \"x\" } }\n[[agents]]\n[agents.agent]\nid = \"b\"\n"))
	f.Add([]byte("[[agents]]\n[agents.resource]\ndevices = { cuda.shares = 0.5, \"x.y\" = [1] }\n"))
	f.Add([]byte("[resource]\r\nreserved-mem = \"1.5g\"\r\nallocation_mode = 'auto-split'\r\n[[agents]]\r\n[[agents]]"))
	devs := []model.Device{
		{ID: "0", Name: "cpu", Slot: model.SlotCPU, Capacity: model.One},
		{ID: "x", Name: "cuda", Slot: model.SlotCUDAShares, Capacity: model.One},
		{ID: "root", Name: "mem", Slot: model.SlotMem, Capacity: model.NewDec(1<<30, 0)},
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := Parse("agent.toml", raw)
		if c == nil {
			if err == nil {
				t.Fatal("nil config without an error")
			}
			return
		}
		if len(c.Agents) == 0 {
			t.Fatal("a loaded config has no agent")
		}
		c.Validate(devs)
		c.Validate(nil)
		out, changes, err := Render(c, c.Clone())
		if err == nil && (len(changes) != 0 || !bytes.Equal(out, raw)) {
			t.Fatalf("Render(c, c) changed the file: %+v", changes)
		}
	})
}

// FuzzReflowList checks the comment-keeping rewrite of one-per-line lists:
// whatever the old array text, a rewrite it accepts must read back as
// exactly the new list.
func FuzzReflowList(f *testing.F) {
	f.Add("[\n  \"0\", # zero\n  \"1\",\n]", "1,2")
	f.Add("[\n    \"g1\",\n    # the MIG GPU\n    \"MIG-x/4/0\",   # 3g.20gb\n    'MIG-x/5/0'    # 2g.10gb\n  ]", "MIG-x/5/0,g2,MIG-x/4/0")
	f.Add("[\r\n  \"a\\\"b\",\r\n]", "a\"b,c")
	f.Fuzz(func(t *testing.T, old, csv string) {
		if !utf8.ValidString(csv) {
			return // a TOML file is UTF-8: no device id is anything else
		}
		ids := strings.Split(csv, ",")
		out, ok := reflowList(old, ids)
		if !ok {
			return
		}
		var doc struct {
			X []string `toml:"x"`
		}
		if err := toml.Unmarshal([]byte("x = "+out+"\n"), &doc); err != nil {
			if toml.Unmarshal([]byte("x = "+old+"\n"), &doc) != nil {
				return // the old text was not valid TOML either
			}
			t.Fatalf("rewrite of %q does not parse: %v\n%s", old, err, out)
		}
		if !slices.Equal(doc.X, ids) {
			t.Fatalf("rewrite of %q reads %q, want %q\n%s", old, doc.X, ids, out)
		}
	})
}

// FuzzRenderEdits feeds the editor arbitrary agent.toml files in any TOML
// form and makes the edits fgtop offers: drop every allocation table
// (auto-split), write them again (manual), change one agent's cpu and mem.
// Render may refuse (ErrUneditable, up front); what it renders must load,
// in the mode and with the values asked for.
func FuzzRenderEdits(f *testing.F) {
	for _, s := range []string{
		"[[agents]]\n[agents.agent]\nid = \"a\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\n[[agents]]\n[agents.agent]\nid = \"b\"\n[agents.resource]\ncpu = 1\nmem = \"1G\"\n[resource]\nallocation-mode = \"manual\"\n",
		"agents = [{ agent = { id = \"a\" }, resource = { cpu = 1, mem = \"1G\" } }, { agent = { id = \"b\" }, resource = { cpu = 1, mem = \"1G\" } }]\n[resource]\nallocation-mode = \"manual\"\n",
		"agents = [\n  # a\n  { agent = { id = \"a\" } },\n  { agent = { id = \"b\" } },\n]\n[resource]\nallocation_mode = \"auto-split\"\n",
		"[resource]\nallocation-mode = \"manual\"\n[[agents]]\nagent.id = \"a\"\nresource.cpu = 1\nresource.mem = \"1G\"\nresource.devices.\"cuda.shares\" = \"2\"\n[[agents]]\nagent . id = \"b\"\nresource . cpu = 1\nresource . mem = \"1G\"\n",
		"[[agents]]\nagent = { id = \"a\" }\nresource = { cpu = 1, mem = \"1G\" }\n[[agents]]\nagent = { id = \"b\" }\nresource = { cpu = 1, mem = \"1G\" }\n[resource]\nallocation-mode = \"manual\"\n",
		"[resource]\nallocation-mode = \"manual\"\n[resource.allocations]\ncpu = 1\nmem = \"1G\"\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, _ := Parse("agent.toml", raw)
		if c == nil || c.AllocFormat != FormatSlotBased {
			return
		}
		check := func(what string, d *Config, mode string) *Config {
			out, _, err := Render(c, d)
			if err != nil {
				return nil // refused before anything is written
			}
			n, _ := ParseAssuming("agent.toml", out, FormatSlotBased)
			if n == nil {
				t.Fatalf("%s: the rendered file does not load:\n%s\n--- from:\n%s", what, out, raw)
			}
			if n.Mode != mode || len(n.Agents) != len(c.Agents) {
				t.Fatalf("%s: mode %s with %d agents, want %s with %d:\n%s", what, n.Mode, len(n.Agents), mode, len(c.Agents), out)
			}
			return n
		}
		d := c.Clone()
		d.Mode = ModeAutoSplit
		for i := range d.Agents {
			d.Agents[i].Alloc, d.Agents[i].OwnAlloc = nil, false
		}
		d.GlobalAlloc = nil
		if n := check("auto-split", d, ModeAutoSplit); n != nil {
			for _, a := range n.Agents {
				if a.OwnAlloc && c.Format != FormatSingle {
					t.Fatalf("auto-split kept a table:\n%s", n.Raw)
				}
			}
		}
		d = c.Clone()
		d.Mode = ModeManual
		want := &Allocation{HasCPU: true, CPUCount: model.NewDec(3, 0), HasMem: true, Mem: model.NewDec(1<<30, 0),
			Slots: map[model.SlotName]model.Dec{"cuda.shares": model.NewDec(15, -1)}}
		for i := range d.Agents {
			d.Agents[i].Alloc, d.Agents[i].OwnAlloc = want.Clone(), true
		}
		if c.Format == FormatSingle {
			d.GlobalAlloc = d.Agents[0].Alloc
		}
		if n := check("manual", d, ModeManual); n != nil {
			for _, a := range n.Agents {
				if a.Alloc == nil || !a.Alloc.CPUCount.Equal(want.CPUCount) || !a.Alloc.Mem.Equal(want.Mem) || !a.Alloc.Slots["cuda.shares"].Equal(model.NewDec(15, -1)) {
					t.Fatalf("manual: agent %s reads %+v:\n%s\n--- from:\n%s", a.ID, a.Alloc, n.Raw, raw)
				}
			}
		}
	})
}
