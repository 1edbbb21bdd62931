package history

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fgtop/fgtop/model"
)

// TestStallIsAGap: one recorder, stopped for a minute (SIGSTOP, then
// SIGCONT), wrote nothing meanwhile, not even its heartbeat; its loop,
// woken a minute after it last woke, says so in the record (a stall
// record), and that minute is a gap of its own segment, as one between
// recorders. At a moment inside it the node is the one last recorded
// before it, not exact, the stall missing; history lists it, a kernel that
// left during it ends at its start with "?" (Gone), one that stayed
// across it keeps one interval, one first seen after it ends where it was
// seen to; the sequential and the parallel walks and the sessions walk
// agree. A quiet node whose recorder beats has no stall. So too where
// the first snapshot after the stall opens a new segment (a node suspended
// across the checkpoint's time): the stall ends the old segment, and the
// new one's checkpoint and first polls carry its changes.
func TestStallIsAGap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
	}{{"one segment", 0}, {"rotated after it", 40 * time.Second}} {
		t.Run(tc.name, func(t *testing.T) { testStallIsAGap(t, tc.every) })
	}
}

func testStallIsAGap(t *testing.T, ckptEvery time.Duration) {
	dir := t.TempDir()
	node := newSynth(5, 0)
	stays := sharesKernel(node, "aaaaaaaa-0000-4000-8000-000000000001", "1", "0.30")
	leaves := sharesKernel(node, "bbbbbbbb-0000-4000-8000-000000000002", "1", "0.50")
	// Gone by the first poll after the stall.
	goesIn := sharesKernel(node, "dddddddd-0000-4000-8000-000000000004", "1", "0.05")
	node.ks[stays.ID], node.ks[leaves.ID], node.ks[goesIn.ID] = stays, leaves, goesIn
	rec, err := Open(Options{Dir: dir, CheckpointEvery: ckptEvery, Clock: func() time.Time { return node.t }})
	if err != nil {
		t.Fatal(err)
	}
	// As Run does: each wake of its loop noted (the machine's clock is
	// the node's here), then what woke it.
	rec.now = func() time.Time { return node.t }
	observe := func() {
		rec.woke()
		rec.Observe(node.snap())
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		node.t = node.t.Add(time.Second)
		observe()
	}
	// Quiet, but beating: not a stall.
	for range 3 {
		node.t = node.t.Add(DefaultBeatEvery)
		rec.woke()
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	node.t = node.t.Add(time.Second)
	observe()
	quietAt := node.t.Add(-DefaultBeatEvery - 2*time.Second)
	lastSeen := node.t
	node.t = node.t.Add(60 * time.Second) // stopped: nothing written
	delete(node.ks, goesIn.ID)
	back := node.t
	// The first snapshot handed over after it can be one polled before
	// it; what changed in it shows a poll later. A kernel first seen
	// after it, gone a poll later, is seen to go.
	brief := sharesKernel(node, "cccccccc-0000-4000-8000-000000000003", "1", "0.10")
	node.ks[brief.ID] = brief
	observe()
	delete(node.ks, leaves.ID)
	delete(node.ks, brief.ID)
	node.t = node.t.Add(time.Second)
	briefGone := node.t
	observe()
	for range 3 {
		node.t = node.t.Add(time.Second)
		observe()
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}

	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if wantSegs := map[bool]int{false: 1, true: 2}[ckptEvery > 0]; len(rd.segs) != wantSegs || wantSegs == 2 && !rd.segs[1].Start.Equal(back) {
		t.Fatalf("%d segments, want %d (the second from %s)", len(rd.segs), wantSegs, back.Format(time.TimeOnly))
	}
	inside := lastSeen.Add(30 * time.Second)
	res, err := rd.At(inside)
	if err != nil {
		t.Fatal(err)
	}
	if res.Exact || len(res.Missing) != 1 || !res.Missing[0].From.Equal(lastSeen) || !res.Missing[0].To.Equal(back) {
		t.Fatalf("At inside the stall: exact %v, missing %v; want not exact, %s to %s missing", res.Exact, res.Missing,
			lastSeen.Format(time.TimeOnly), back.Format(time.TimeOnly))
	}
	if !res.Snap.Time.Equal(lastSeen) || len(res.Snap.Kernels()) != 3 {
		t.Errorf("At inside the stall: the node at %s with %d kernels, want as last recorded (%s, 3)",
			res.Snap.Time.Format(time.TimeOnly), len(res.Snap.Kernels()), lastSeen.Format(time.TimeOnly))
	}
	for _, at := range []time.Time{quietAt, lastSeen, back, back.Add(time.Second)} {
		res, err := rd.At(at)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Exact || len(res.Missing) > 0 {
			t.Errorf("At %s, outside the stall: exact %v, missing %v", at.Format(time.TimeOnly), res.Exact, res.Missing)
		}
	}

	seq, err := rd.historySeq(Filter{Device: "cuda:1"})
	if err != nil {
		t.Fatal(err)
	}
	par := rd.historyPar(Filter{Device: "cuda:1"}, 2)
	sess, err := rd.Sessions(time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		fmt.Sprintf("aaaaaaaa 0.30 to %s gone false open true", node.t.Format(time.TimeOnly)),
		fmt.Sprintf("bbbbbbbb 0.50 to %s gone true open false", lastSeen.Format(time.TimeOnly)),
		fmt.Sprintf("dddddddd 0.05 to %s gone true open false", lastSeen.Format(time.TimeOnly)),
		fmt.Sprintf("cccccccc 0.10 to %s gone false open false", briefGone.Format(time.TimeOnly)),
	}
	for name, res := range map[string]*HistoryResult{"sequential": seq, "parallel": par} {
		var got []string
		for _, iv := range res.Intervals {
			got = append(got, fmt.Sprintf("%s %s to %s gone %v open %v", iv.Kernel[:8], iv.Amounts[model.SlotCUDAShares],
				iv.To.Format(time.TimeOnly), iv.Gone, iv.Open))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\n got %q\nwant %q", name, got, want)
		}
		if len(res.Missing) != 1 || !res.Missing[0].From.Equal(lastSeen) || !res.Missing[0].To.Equal(back) || !strings.Contains(res.Missing[0].Why, "recorder was not running or was held up") || !strings.Contains(res.Missing[0].Why, "a write blocked") {
			t.Errorf("%s: missing %v, want the stall", name, res.Missing)
		}
	}
	if len(sess.Missing) != 1 || !sess.Missing[0].From.Equal(lastSeen) {
		t.Errorf("sessions: missing %v, want the stall", sess.Missing)
	}
	var got []string
	for _, ks := range sess.Sessions {
		got = append(got, fmt.Sprintf("%s to %s gone %v", ks.Kernel[:8], ks.To.Format(time.TimeOnly), ks.Gone))
	}
	wantSess := []string{
		fmt.Sprintf("aaaaaaaa to %s gone false", node.t.Format(time.TimeOnly)),
		fmt.Sprintf("bbbbbbbb to %s gone true", lastSeen.Format(time.TimeOnly)),
		fmt.Sprintf("dddddddd to %s gone true", lastSeen.Format(time.TimeOnly)),
		fmt.Sprintf("cccccccc to %s gone false", briefGone.Format(time.TimeOnly)),
	}
	if fmt.Sprint(got) != fmt.Sprint(wantSess) {
		t.Errorf("sessions:\n got %q\nwant %q", got, wantSess)
	}
}
