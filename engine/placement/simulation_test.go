package placement

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestSimulationOutput: a simulation's JSON document and table say where
// each step landed and why one did not, in the order the steps ran.
func TestSimulationOutput(t *testing.T) {
	devs := []model.Device{gpu("0", 0, "1.0"), gpu("1", 0, "1.0"), memDev("1073741824")}
	sim := &Simulation{Source: "test", Types: model.DefaultSlotTypes()}
	sim.SetDevices(devs, Settings{})
	if len(sim.Slots) != 2 {
		t.Errorf("slots %v, want cuda.shares and mem", sim.Slots)
	}
	res, err := Run(sim.Node, steps(t, "cuda.shares=0.5", "cuda.shares=4", "mem=512m"), RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := CountRequests(res.Steps); n != 3 {
		t.Errorf("CountRequests = %d, want 3", n)
	}
	b, err := json.Marshal(sim.Document(res, "c1"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Case       string `json:"case"`
		Placements []struct {
			Step        int                          `json:"step"`
			Error       string                       `json:"error"`
			Allocations map[string]map[string]string `json:"allocations"`
		} `json:"placements"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	if doc.Case != "c1" || len(doc.Placements) != 3 || !strings.HasPrefix(string(b), `{"schema":"fgtop.simulate/v1","case":"c1","settings":`) {
		t.Fatalf("document: %s", b)
	}
	if got := doc.Placements[0].Allocations["cuda.shares"]; len(got) != 1 {
		t.Errorf("step 1 allocations %v, want one device", got)
	}
	if doc.Placements[1].Error == "" || doc.Placements[1].Allocations != nil {
		t.Errorf("step 2 (4 shares of 2) placed: %+v", doc.Placements[1])
	}
	var out strings.Builder
	if err := sim.WriteTable(&out, res, "c1", func(s string) string { return s }); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	for _, want := range []string{"case c1\n", "source:  test\n", "STEP", "✗ ", "mem root=512m", "alloc_map: {"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
