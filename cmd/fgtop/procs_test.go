package main

import (
	"context"
	"runtime"
	"testing"
)

// TestOneProcAfterScan: the console drops to one P once the engine is
// ready, not before, and leaves a GOMAXPROCS the user set alone.
func TestOneProcAfterScan(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	t.Cleanup(func() { runtime.GOMAXPROCS(before) })
	runtime.GOMAXPROCS(2)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	oneProcAfterScan(ctx, make(chan struct{})) // never ready: returns with ctx
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("GOMAXPROCS %d before the engine was ready, want 2", n)
	}

	ready := make(chan struct{})
	close(ready)
	t.Setenv("GOMAXPROCS", "2")
	oneProcAfterScan(context.Background(), ready)
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Fatalf("GOMAXPROCS %d with GOMAXPROCS=2 in the environment, want 2", n)
	}

	t.Setenv("GOMAXPROCS", "")
	oneProcAfterScan(context.Background(), ready)
	if n := runtime.GOMAXPROCS(0); n != 1 {
		t.Fatalf("GOMAXPROCS %d after the first scan, want 1", n)
	}
}
