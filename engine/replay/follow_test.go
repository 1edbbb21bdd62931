package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fgtop/fgtop/engine/history"
)

// followedAgrees checks that the run fed as rd's [from, to) is read
// (LoadStarted, its notes handed over every so many) is the run after
// the read (Load, then Run under the partitions in force): the record,
// the text and the JSON of the report the same, with opts. It returns
// why the fed run was made again ("": it stood).
func followedAgrees(t *testing.T, what string, rd *history.Reader, from, to time.Time, opts Options, every int) string {
	t.Helper()
	opts.Fidelity = true
	want, err := Load(rd, from, to)
	if err != nil {
		t.Fatal(err)
	}
	got, p, err := loadStarted(rd, from, to, opts, every)
	if err != nil {
		t.Fatal(err)
	}
	gotRes := p.Wait()
	wantRes := Run(want, want.AsItWas(), opts)
	for i := range max(len(want.Sessions), len(got.Sessions)) {
		if i >= len(want.Sessions) || i >= len(got.Sessions) {
			t.Fatalf("%s: %d sessions read after, %d as it ran", what, len(want.Sessions), len(got.Sessions))
		}
		if a, b := sessionLine(&want.Sessions[i]), sessionLine(&got.Sessions[i]); a != b {
			t.Fatalf("%s: session %d\nafter the read %s\nas it ran      %s", what, i, a, b)
		}
	}
	text := func(rec *Record, res *Result) (string, string) {
		doc := NewDoc(rec, res, nil)
		var sb strings.Builder
		if err := doc.WriteText(&sb); err != nil {
			t.Fatal(err)
		}
		js, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return sb.String(), string(js)
	}
	wt, wj := text(want, wantRes)
	gt, gj := text(got, gotRes)
	if wt != gt {
		t.Errorf("%s (every %d, redo %q): the text differs\nafter the read:\n%s\nas it ran:\n%s", what, every, p.redo, wt, gt)
	}
	if wj != gj {
		t.Errorf("%s (every %d, redo %q): the JSON differs\nafter the read:\n%s\nas it ran:\n%s", what, every, p.redo, wj, gj)
	}
	if fmt.Sprint(wantRes.Disagreements) != fmt.Sprint(gotRes.Disagreements) || wantRes.SameMoment != gotRes.SameMoment ||
		wantRes.Compared != gotRes.Compared || wantRes.Skipped != gotRes.Skipped || wantRes.short != gotRes.short {
		t.Errorf("%s (every %d, redo %q): the runs differ\nafter the read %+v\nas it ran      %+v", what, every, p.redo, wantRes, gotRes)
	}
	return p.redo
}

// TestFollowedRunIsTheRunAfter: on the scripted week, whole and cut at
// several spans, handing the walk's notes over one by one and in
// batches, the run fed as the record is read is the run after the read,
// and it stands (no agent learnt late, no partition change, nothing out
// of order); on the record whose partition changes inside the span, and
// the one with a gap, it is the same too (made again where it must be).
func TestFollowedRunIsTheRunAfter(t *testing.T) {
	w := scriptedWeek(t)
	rd := w.reader()
	from, to, err := rd.Span()
	if err != nil {
		t.Fatal(err)
	}
	span := to.Sub(from)
	for _, every := range []int{1, 3, 0} {
		for _, o := range []Options{{}, {Word: 1}} {
			if why := followedAgrees(t, "the scripted week", rd, from, to, o, every); why != "" {
				t.Errorf("every %d: the fed run was made again: %s", every, why)
			}
			for i := range 5 {
				a := from.Add(span * time.Duration(i) / 6)
				b := a.Add(span * time.Duration(2+i) / 9)
				if why := followedAgrees(t, fmt.Sprintf("the scripted week, %s..%s", a, b), rd, a, b, o, every); why != "" {
					t.Errorf("every %d, %s..%s: the fed run was made again: %s", every, a, b, why)
				}
			}
		}
	}
}

// countdown is a context whose reads stop after n checks of it: a read
// stopped at every point of the walk in turn.
type countdown struct {
	context.Context
	n atomic.Int64
}

func (c *countdown) Err() error {
	if c.n.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestFollowedRunLeaksNothing: a read stopped by its context, at every
// point of the walk in turn (the fed run taking notes beside it), ends
// with an error and no goroutine left behind.
func TestFollowedRunLeaksNothing(t *testing.T) {
	w := scriptedWeek(t)
	rd := w.reader()
	base := runtime.NumGoroutine()
	inWalk := 0
	for n := int64(0); n < 400; n += 3 {
		c := &countdown{Context: context.Background()}
		c.n.Store(n)
		rd.SetContext(c)
		_, p, err := loadStarted(rd, time.Time{}, time.Time{}, Options{}, 1)
		if err == nil {
			p.Wait()
			continue
		}
		if strings.Contains(err.Error(), "reading the sessions") {
			inWalk++
		}
	}
	rd.SetContext(nil)
	if inWalk == 0 {
		t.Fatal("no read was stopped inside the walk")
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
	t.Logf("%d reads stopped inside the walk", inWalk)
}

// TestFollowedRunBench is the comparison on the bench week
// (FGTOP_REPLAY_BENCH_DIR, as TestReplayBench).
func TestFollowedRunBench(t *testing.T) {
	dir := os.Getenv("FGTOP_REPLAY_BENCH_DIR")
	if dir == "" {
		t.Skip("set FGTOP_REPLAY_BENCH_DIR to a history directory")
	}
	rd, err := history.OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	from, to, err := rd.Span()
	if err != nil {
		t.Fatal(err)
	}
	if why := followedAgrees(t, "the bench week", rd, from, to, Options{Word: Printed}, 0); why != "" {
		t.Errorf("the fed run was made again: %s", why)
	}
}
