package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
)

// TestStartRunsEveryOtherPartOnce: parts 1..n-1 run once each, on their
// own, and wait returns only when they are all done; part 0 is the
// caller's.
func TestStartRunsEveryOtherPartOnce(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		var ran [5]atomic.Int32
		release := make(chan struct{})
		wait := Start(n, func(p int) {
			<-release
			ran[p].Add(1)
		})
		close(release)
		wait()
		for p := range n {
			want := int32(1)
			if p == 0 {
				want = 0
			}
			if got := ran[p].Load(); got != want {
				t.Errorf("n=%d: part %d ran %d times, want %d", n, p, got, want)
			}
		}
	}
}

func TestParts(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tt := range []struct{ n, threshold, max, want int }{
		{n: 10, threshold: 100, max: 4, want: 1},
		{n: 100, threshold: 100, max: 4, want: min(procs, 4)},
		{n: 1000, threshold: 100, max: 1, want: 1},
	} {
		if got := Parts(tt.n, tt.threshold, tt.max); got != tt.want {
			t.Errorf("Parts(%d, %d, %d) = %d, want %d", tt.n, tt.threshold, tt.max, got, tt.want)
		}
	}
}
