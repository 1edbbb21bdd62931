package gcpolicy

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestSeekCollectsOnlyPastItsHeap: `snapshot --at` runs without a
// collection up to SeekHeap, then under Query's policy; GOGC from the
// environment wins.
func TestSeekCollectsOnlyPastItsHeap(t *testing.T) {
	t.Cleanup(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	Seek()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GOGC %d before the first collection, want off", p)
	}
	if l := debug.SetMemoryLimit(-1); l != SeekHeap {
		t.Fatalf("memory limit %d, want %d", l, SeekHeap)
	}
	runtime.GC()
	deadline := time.Now().Add(5 * time.Second)
	for {
		// The cleanup runs on its own goroutine after the collection.
		if p := debug.SetGCPercent(-1); p == 400 {
			debug.SetGCPercent(400)
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("GOGC %d after a collection, want Query's 400", p)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if l := debug.SetMemoryLimit(-1); l != 768<<20 {
		t.Fatalf("memory limit %d after a collection, want 768 MiB", l)
	}

	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150)
	Seek()
	if p := debug.SetGCPercent(-1); p != 150 {
		t.Fatalf("GOGC %d with GOGC=150 in the environment", p)
	}
}

// TestOneShotThenDefault: a one-shot scan runs without a collection up to
// OneShotHeap, then under the runtime's default policy.
func TestOneShotThenDefault(t *testing.T) {
	t.Cleanup(func() {
		debug.SetGCPercent(100)
		debug.SetMemoryLimit(math.MaxInt64)
	})
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	OneShot()
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Fatalf("GOGC %d before the first collection, want off", p)
	}
	if l := debug.SetMemoryLimit(-1); l != OneShotHeap {
		t.Fatalf("memory limit %d, want %d", l, OneShotHeap)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		if l := debug.SetMemoryLimit(-1); l == math.MaxInt64 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("memory limit %d after a collection, want none", l)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p := debug.SetGCPercent(-1); p != 100 {
		t.Fatalf("GOGC %d after a collection, want 100", p)
	}

	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(100)
	OneShot()
	if p := debug.SetGCPercent(-1); p != 100 {
		t.Fatalf("GOGC %d with GOMEMLIMIT in the environment, want it left at 100", p)
	}
}

// TestServeRestores: serve's limit is set and restored; GOGC in the
// environment leaves it alone.
func TestServeRestores(t *testing.T) {
	t.Cleanup(func() { debug.SetMemoryLimit(math.MaxInt64) })
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	debug.SetMemoryLimit(math.MaxInt64)
	restore := Serve()
	if l := debug.SetMemoryLimit(-1); l != ServeHeap {
		t.Fatalf("memory limit %d, want %d", l, ServeHeap)
	}
	restore()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("memory limit %d after restore, want none", l)
	}
	t.Setenv("GOGC", "80")
	Serve()()
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Fatalf("memory limit %d with GOGC set, want none", l)
	}
}
