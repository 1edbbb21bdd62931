package agentconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fgtop/fgtop/model"
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
