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
	// The plugin flags too (docs/plugins.md: refused with the demo); they
	// were taken and ignored by snapshot, exporter and serve --demo.
	for _, args := range [][]string{{"snapshot", "--demo", "--config", "x.toml"}, {"snapshot", "--seed", "2"},
		{"snapshot", "--demo", "--cuda-plugin", "open"}, {"snapshot", "--demo", "--fgpu-capacity", "3"},
		{"snapshot", "--demo", "--plugin-config", "x.json"}} {
		if code, out := runCLIQuiet(t, args...); code != exitBadUsage {
			t.Errorf("%v: exit %d: %s", args, code, out)
		}
	}
}

// TestDemoIdleAfter: the demo node served by snapshot, exporter or serve
// marks idle kernels after the demo's own --idle-after default (its
// kernels live minutes), and a --idle-after given is taken; before, the
// flag was ignored with --demo and the engine's 10-minute default used.
func TestDemoIdleAfter(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	for _, tc := range []struct {
		args []string
		want float64
	}{
		{nil, demoIdleAfter.Seconds()},
		{[]string{"--idle-after", "90s"}, 90},
		{[]string{"--idle-after", "0"}, 0},
	} {
		args := append([]string{"snapshot", "--demo", "--compact"}, tc.args...)
		code, out := runCLIQuiet(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d: %s", args, code, out)
		}
		var s report.Snapshot
		if err := json.Unmarshal([]byte(out), &s); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
		if s.IdleAfterS != tc.want {
			t.Errorf("%v: idle_after_s %v, want %v", args, s.IdleAfterS, tc.want)
		}
	}
	if code, out := runCLIQuiet(t, "snapshot", "--demo", "--idle-after", "-1s"); code != exitBadUsage {
		t.Errorf("--idle-after -1s: exit %d: %s", code, out)
	}
}
