package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/report"
)

// TestSnapshotDemo: snapshot --demo prints the demo node's account, marked
// as the demo source, with kernels holding shares; the source flags it
// replaces and --seed without it are usage errors.
func TestSnapshotDemo(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	code, out := runCLIQuiet(t, "snapshot", "--demo", "--seed", "3", "--compact")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, out)
	}
	var s report.Snapshot
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if s.Source.Kind != "demo" || s.Node != "fgtop-demo" || len(s.Kernels) == 0 || len(s.Devices) == 0 {
		t.Fatalf("not the demo node: source %+v node %q, %d kernels, %d devices", s.Source, s.Node, len(s.Kernels), len(s.Devices))
	}
	code, out = runCLIQuiet(t, "snapshot", "--demo", "--alloc-map")
	if code != exitOK || !strings.Contains(out, `"0.`) && !strings.Contains(out, `"1.`) {
		t.Fatalf("alloc map: exit %d: %s", code, out)
	}
	for _, args := range [][]string{{"snapshot", "--demo", "--config", "x.toml"}, {"snapshot", "--seed", "2"}} {
		if code, out := runCLIQuiet(t, args...); code != exitBadUsage {
			t.Errorf("%v: exit %d: %s", args, code, out)
		}
	}
}
