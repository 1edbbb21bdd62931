package history

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// TestLargeNodeSeekMatchesLive: on a node large enough for the kernels to
// be decoded in parts (interned, over goroutines), a seek at many moments
// gives the document the live snapshot gave, with one processor and with
// several, across a checkpoint.
func TestLargeNodeSeekMatchesLive(t *testing.T) {
	kernels, steps := parallelDecode+500, 900
	if testing.Short() {
		steps = 300
	}
	dir := t.TempDir()
	start := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	node := newWeekNode(3, kernels, start)
	rec, err := Open(Options{Dir: dir, Clock: func() time.Time { return node.t }, MaxSize: 1 << 40,
		CheckpointEvery: time.Duration(steps/2) * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var live []seen
	rng := rand.New(rand.NewPCG(5, 5))
	first := node.snapshot()
	rec.Observe(first)
	rec.Flush()
	live = append(live, seen{first, docOf(t, first)})
	for i := 0; i < steps; i++ {
		s := node.step()
		rec.Observe(s)
		rec.Flush()
		if i == steps-1 || rng.IntN(steps/12) == 0 {
			live = append(live, seen{s, docOf(t, s)})
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if segs, _ := listSegments(dir); len(segs) < 2 {
		t.Fatalf("%d segments: the test wants a checkpoint in the middle", len(segs))
	}
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		for _, s := range live {
			res := mustAt(t, dir, s.snap.Time)
			if !res.Exact || len(res.Missing) > 0 {
				t.Fatalf("seq %d: not exact: %v", s.snap.Seq, res.Missing)
			}
			if d := docOf(t, res.Snap); !bytes.Equal(d, s.doc) {
				t.Fatalf("GOMAXPROCS %d, seq %d differs:\n%s", procs, s.snap.Seq, firstDiff(s.doc, d))
			}
		}
		runtime.GOMAXPROCS(old)
	}
	t.Logf("%d moments compared, %d kernels", len(live), kernels)
}
