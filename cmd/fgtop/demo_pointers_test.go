package main

import (
	"context"
	"strings"
	"testing"

	"github.com/fgtop/fgtop/engine/demo"
)

// TestDemoPointersWork: every command line the headless demo tells an
// operator to point at its node is taken by that command. simulate was
// told --host-cpus and --host-mem, which it refuses (exit 2).
func TestDemoPointersWork(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	node, err := demo.Start(context.Background(), demo.Options{Seed: 1, Speed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	line := demoPointers(node)
	common, sim, ok := strings.Cut(strings.TrimPrefix(line, "point commands at it with: "), " (fgtop simulate: ")
	if !ok || !strings.HasSuffix(sim, ")") {
		t.Fatalf("no simulate flags in %q", line)
	}
	sim = strings.TrimSuffix(sim, ")")
	for _, tc := range []struct {
		cmd   []string
		flags string
	}{
		{[]string{"check"}, common},
		{[]string{"snapshot"}, common},
		{[]string{"simulate", "--request", "cuda.shares=0.1,cpu=1,mem=1g"}, sim},
	} {
		args := append(append([]string(nil), tc.cmd...), strings.Fields(tc.flags)...)
		if code, out := runCLIQuiet(t, args...); code == exitBadUsage {
			t.Errorf("fgtop %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
}
