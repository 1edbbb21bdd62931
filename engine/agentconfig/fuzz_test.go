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
