package agentconfig

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestUnknownKeyDidYouMean: an unknown key close to one of its table's
// keys warns with the key meant, and an error about that key missing (or
// left at its default) names the typo and its line; a key close to none
// warns as before. Only the words change: the verdict is the loader's.
func TestUnknownKeyDidYouMean(t *testing.T) {
	raw, err := os.ReadFile("testdata/agent.multi-agent.slot-based.toml")
	if err != nil {
		t.Fatal(err)
	}
	base := string(raw)
	for _, c := range []struct {
		name      string
		old, new  string // the first old in the fixture becomes new
		typed     string // the key as written, whose line the error names
		loads     bool
		warning   string // in the warnings
		err       string // in the errors, "" for none; %d is typed's line
		noSuggest bool   // the warning suggests nothing
	}{
		{name: "allocation-mode misspelt", old: "allocation-mode = \"manual\"", new: "allocaton-mode = \"manual\"", typed: "allocaton-mode",
			warning: "unknown key(s) in [resource], ignored by the agent: allocaton-mode (did you mean allocation-mode?)",
			err:     `allocation-mode is "shared": remove this table or set [resource] allocation-mode = "manual" (line %d has allocaton-mode: did you mean allocation-mode?)`},
		{name: "devices misspelt", old: "devices =", new: "devises =", typed: "devises",
			warning: "unknown key(s) in [agents[0].resource], ignored by the agent: devises (did you mean devices?)",
			err:     `agent "i-gpu-node01-a" has none, agent "i-gpu-node01-b" has cuda.shares (line %d has devises: did you mean devices?)`},
		{name: "a required key misspelt", old: "cpu = 15", new: "cpuu = 15", typed: "cpuu",
			warning: "ignored by the agent: cpuu (did you mean cpu?)",
			err:     "cpu is missing, and the agent requires it (line %d has cpuu: did you mean cpu?)"},
		{name: "a table misspelt", old: "[agents.resource]", new: "[agents.resourse]", typed: "resourse",
			warning: "unknown key(s) in [agents[0]], ignored by the agent: resourse (did you mean resource?)",
			err:     `[agents.resource] for agent "i-gpu-node01-a" is missing (line %d has resourse: did you mean resource?)`},
		{name: "a misspelt key of a table that has it", old: "reserved-cpu = 2", new: "reserved-cpu = 2\nreserved-cpus = 2", typed: "reserved-cpus",
			loads: true, warning: "ignored by the agent: reserved-cpus (did you mean reserved-cpu?)"},
		{name: "close to no key", old: "reserved-cpu = 2", new: "reserved-cpu = 2\ngpu-count = 4", typed: "gpu-count",
			loads: true, warning: "ignored by the agent: gpu-count", noSuggest: true},
		{name: "the other spelling of a key read", old: "allocation-mode = \"manual\"", new: "allocation-mode = \"manual\"\nallocation_mode = \"shared\"", typed: "allocation_mode",
			loads: true, warning: "ignored by the agent: allocation_mode", noSuggest: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(base, c.old) {
				t.Fatalf("the fixture lacks %q", c.old)
			}
			text := strings.Replace(base, c.old, c.new, 1)
			line := 0
			for i, l := range strings.Split(text, "\n") {
				if strings.Contains(l, c.typed) {
					line = i + 1
					break
				}
			}
			v := Judge([]byte(text))
			if v.Main != c.loads {
				t.Fatalf("main loads it: %v, want %v (%v)", v.Main, c.loads, v.MainErrors)
			}
			var warns []string
			for _, w := range v.Warnings {
				warns = append(warns, w.Message)
			}
			ws := strings.Join(warns, "\n")
			if !strings.Contains(ws, c.warning) {
				t.Errorf("warnings:\n%s\nwant %q", ws, c.warning)
			}
			if c.noSuggest && strings.Contains(ws, "did you mean") {
				t.Errorf("warnings suggest a key:\n%s", ws)
			}
			if c.err == "" {
				return
			}
			want := fmt.Sprintf(c.err, line)
			var errs []string
			for _, p := range v.MainErrors {
				errs = append(errs, p.Message)
			}
			if es := strings.Join(errs, "\n"); !strings.Contains(es, want) {
				t.Errorf("errors:\n%s\nwant %q", es, want)
			}
		})
	}
}
