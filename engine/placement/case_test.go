package placement

import (
	"github.com/fgtop/fgtop/internal/testfix"
	"os"
	"testing"
)

func loadCorpus(t testing.TB) []Case {
	t.Helper()
	b, err := os.ReadFile(testfix.Dir(t, "alloc-cases.json"))
	if err != nil {
		t.Fatalf("reading the parity corpus: %v", err)
	}
	cs, err := ParseCases(b)
	if err != nil {
		t.Fatalf("parsing the parity corpus: %v", err)
	}
	return cs
}

// TestCorpusThroughSimulation runs every case of alloc-cases.json as a
// simulation (Case.Setup, Run with Trace) and checks every operation with
// Case.Check: allocations, error kinds and the full state after each step.
func TestCorpusThroughSimulation(t *testing.T) {
	cases := loadCorpus(t)
	ops, bad := 0, 0
	for _, c := range cases {
		devs, s, steps, err := c.Setup()
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		res, err := Run(NewNode(devs, s), steps, RunOptions{Trace: true})
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		ops += len(steps)
		for _, m := range c.Check(res) {
			bad++
			t.Errorf("%s: %s", c.ID, m)
		}
	}
	t.Logf("%d cases, %d operations, %d mismatches", len(cases), ops, bad)
}
