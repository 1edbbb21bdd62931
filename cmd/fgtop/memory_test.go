package main

import (
	"context"
	"runtime/debug"
	"testing"
)

// TestGCAfterScan: the console lowers GOGC once the engine is ready, not
// before, and not when the environment sets GOGC or GOMEMLIMIT.
func TestGCAfterScan(t *testing.T) {
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	percent := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gcAfterScan(ctx, make(chan struct{})) // never ready: returns with ctx
	if p := percent(); p != 100 {
		t.Fatalf("GOGC %d before the engine was ready, want 100", p)
	}
	ready := make(chan struct{})
	close(ready)
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv(env, "200")
		gcAfterScan(context.Background(), ready)
		if p := percent(); p != 100 {
			t.Fatalf("GOGC %d with %s in the environment, want it left alone", p, env)
		}
		t.Setenv(env, "")
	}
	gcAfterScan(context.Background(), ready)
	if p := percent(); p != gcPercentAtRest {
		t.Fatalf("GOGC %d after the first scan, want %d", p, gcPercentAtRest)
	}
}
