package complete

import (
	"slices"
	"testing"
)

func TestCompletes(t *testing.T) {
	for _, c := range []struct {
		name, typ string
		want      bool
	}{
		{"config", "string", true},
		{"scratch-root", "stringArray", true},
		{"json", "bool", false},
		{"cpus", "int", false},
		{"cpu", "stringArray", true},
		{"mem", "stringArray", true},
		{"mem", "string", false}, // simulate's --mem SIZE
		{"move", "stringArray", true},
		{"slot", "string", false},
		{"keep", "duration", true},
	} {
		if got := Completes(c.name, c.typ); got != c.want {
			t.Errorf("Completes(%q, %q) = %v, want %v", c.name, c.typ, got, c.want)
		}
	}
}

func TestStatic(t *testing.T) {
	vs := Static()
	for name, v := range vs {
		kinds := 0
		for _, set := range []bool{v.Words != nil, v.Exts != nil, v.Dirs} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			t.Errorf("--%s completes as %+v: want one of words, files, directories", name, v)
		}
	}
	for _, c := range []struct {
		name string
		want Value
	}{
		{"config", Value{Exts: []string{"toml"}}},
		{"plugin-config", Value{Exts: []string{"json", "toml"}}},
		{"history", Value{Dirs: true}},
		{"strategy", Value{Words: []string{"evenly", "fill"}}},
	} {
		v, ok := vs[c.name]
		if !ok || !slices.Equal(v.Words, c.want.Words) || !slices.Equal(v.Exts, c.want.Exts) || v.Dirs != c.want.Dirs {
			t.Errorf("Static()[%q] = %+v, %v; want %+v", c.name, v, ok, c.want)
		}
	}
	// Read from the node, not fixed.
	for _, name := range []string{"theme", "devices", "agent", "cpu", "mem", "move", "slot", "device"} {
		if _, ok := vs[name]; ok {
			t.Errorf("Static() has --%s, whose values are read from the node", name)
		}
	}
}
