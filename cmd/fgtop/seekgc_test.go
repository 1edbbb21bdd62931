package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestSeekGCCollectsOnlyPastItsHeap: `snapshot --at` runs without a
// collection up to seekHeap, then under queryGC's policy; GOGC from the
// environment wins.
func TestSeekGCCollectsOnlyPastItsHeap(t *testing.T) {
	t.Cleanup(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	seekGC()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GOGC %d before the first collection, want off", p)
	}
	if l := debug.SetMemoryLimit(-1); l != seekHeap {
		t.Fatalf("memory limit %d, want %d", l, seekHeap)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for {
		// The cleanup runs on its own goroutine after the collection.
		if p := debug.SetGCPercent(-1); p == 400 {
			debug.SetGCPercent(400)
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("GOGC %d after a collection, want queryGC's 400", p)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if l := debug.SetMemoryLimit(-1); l != 768<<20 {
		t.Fatalf("memory limit %d after a collection, want 768 MiB", l)
	}

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	seekGC()
	if p := debug.SetGCPercent(-1); p != 150 {
		t.Fatalf("GOGC %d with GOGC=150 in the environment", p)
	}
}
