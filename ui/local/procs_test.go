package local

import (
	"context"
	"slices"
	"testing"

	"github.com/fgtop/fgtop/model"
)

// TestGovernProcs: after the first scan the console runs on one P, takes
// a second (never more) when a snapshot's content changes and gives it
// back after quietPolls snapshots of one content; before the engine is
// ready, with GOMAXPROCS in the environment or on one core it sets
// nothing past that.
func TestGovernProcs(t *testing.T) {
	// gens are the snapshots' contents in order: 0 is a snapshot with no
	// generation (a new content each time), -1 the same pointer again.
	quiet := func(gen uint64) []int64 {
		g := make([]int64, quietPolls)
		for i := range g {
			g[i] = int64(gen)
		}
		return g
	}
	cat := func(parts ...[]int64) []int64 { return slices.Concat(parts...) }
	for _, tc := range []struct {
		name    string
		env     string // GOMAXPROCS
		ready   bool
		initial int
		gens    []int64
		want    []int // the calls to set, in order
	}{
		{"never ready", "", false, 8, []int64{1, 2}, nil},
		{"GOMAXPROCS set", "3", true, 8, []int64{1, 2}, nil},
		{"one core", "", true, 1, []int64{1, 2, 3}, []int{1}},
		{"at rest", "", true, 8, cat([]int64{1}, quiet(1), quiet(1)), []int{1}},
		{"the first snapshot is no change", "", true, 8, []int64{7}, []int{1}},
		{"a change takes two Ps, never more", "", true, 8, []int64{1, 2, 3, 4}, []int{1, 2}},
		{"quiet gives the P back", "", true, 8, cat([]int64{1, 2}, quiet(2)), []int{1, 2, 1}},
		{"one short of quiet keeps it", "", true, 8, cat([]int64{1, 2}, quiet(2)[1:]), []int{1, 2}},
		{"a change restarts the count", "", true, 8,
			cat([]int64{1, 2}, quiet(2)[1:], []int64{3}, quiet(3)[1:], []int64{3}), []int{1, 2, 1}},
		{"busy again after quiet", "", true, 4, cat([]int64{1, 2}, quiet(2), []int64{5}), []int{1, 2, 1, 2}},
		{"no generation is a change", "", true, 2, []int64{0, 0}, []int{1, 2}},
		{"the same snapshot is no change", "", true, 2, cat([]int64{0}, []int64{-1, -1, -1, -1, -1}), []int{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMAXPROCS", tc.env)
			snaps := make(chan *model.Snapshot, len(tc.gens))
			var prev *model.Snapshot
			for _, g := range tc.gens {
				s := prev
				if g >= 0 || s == nil {
					s = &model.Snapshot{Gen: uint64(max(g, 0))}
				}
				snaps <- s
				prev = s
			}
			close(snaps)
			ready := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			if tc.ready {
				close(ready)
			} else {
				cancel()
			}
			defer cancel()
			var calls []int
			procs := tc.initial
			governProcs(ctx, ready, snaps, func(n int) int {
				calls = append(calls, n)
				p := procs
				procs = n
				return p
			})
			if !slices.Equal(calls, tc.want) {
				t.Fatalf("set %v, want %v", calls, tc.want)
			}
		})
	}
}
