package local

import (
	"context"
	"runtime/debug"
	"testing"
)

// TestAtRestAfterScan: the console lowers GOGC once the engine is ready,
// not before, and leaves it alone when the environment sets GOGC or
// GOMEMLIMIT (its Ps: TestGovernProcs).
func TestAtRestAfterScan(t *testing.T) {
	gcPercent := func() int { p := debug.SetGCPercent(100); debug.SetGCPercent(p); return p }
	for _, tc := range []struct {
		name       string
		tune       func(context.Context, <-chan struct{})
		env        []string
		get        func() int
		set        func(int)
		from, rest int // the setting before, and the one at rest
	}{
		{"GOGC", gcAfterScan, []string{"GOGC", "GOMEMLIMIT"},
			gcPercent, func(n int) { debug.SetGCPercent(n) }, 100, gcPercentAtRest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.get()
			t.Cleanup(func() { tc.set(before) })
			tc.set(tc.from)
			for _, env := range tc.env {
				t.Setenv(env, "")
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			tc.tune(ctx, make(chan struct{})) // never ready: returns with ctx
			if got := tc.get(); got != tc.from {
				t.Fatalf("%d before the engine was ready, want %d", got, tc.from)
			}
			ready := make(chan struct{})
			close(ready)
			for _, env := range tc.env {
				t.Setenv(env, "200")
				tc.tune(context.Background(), ready)
				if got := tc.get(); got != tc.from {
					t.Fatalf("%d with %s in the environment, want it left alone (%d)", got, env, tc.from)
				}
				t.Setenv(env, "")
			}
			tc.tune(context.Background(), ready)
			if got := tc.get(); got != tc.rest {
				t.Fatalf("%d after the first scan, want %d", got, tc.rest)
			}
		})
	}
}
