package history

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// countdownCtx is a context whose Err turns to Canceled after a number of
// looks: a read cancelled part way through a segment, at a known place.
type countdownCtx struct {
	context.Context
	left atomic.Int64
}

func (c *countdownCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// TestReadsStopWhenCancelled: AtContext and StepContext give up once
// their context is done, before a segment and inside one, so a console's
// read that a newer one replaced (or whose session ended) stops reading
// the record (issue 31: each viewer `:at` read on after its session).
func TestReadsStopWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(3, 8)
	got := recordSynth(t, dir, node, 2000, 50, Options{})
	last := got[len(got)-1].snap.Time
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.AtContext(context.Background(), last); err != nil {
		t.Fatalf("a whole read: %v", err)
	}
	for _, looks := range []int64{0, 1, 3} {
		ctx := &countdownCtx{Context: context.Background()}
		ctx.left.Store(looks)
		res, err := rd.AtContext(ctx, last)
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Fatalf("cancelled after %d looks: %v, %v (want context.Canceled)", looks, res, err)
		}
		ctx.left.Store(looks)
		if tm, ok := rd.StepContext(ctx, got[0].snap.Time, 1); ok {
			t.Fatalf("step cancelled after %d looks found %v", looks, tm)
		}
	}
	// The record has 2000 ticks: a scan that looked once per ctxEvery
	// ticks looked many times more than 3, so the 3-look read stopped
	// inside the segment, not at its end.
	ctx := &countdownCtx{Context: context.Background()}
	ctx.left.Store(1 << 40)
	if _, err := rd.AtContext(ctx, last); err != nil {
		t.Fatal(err)
	}
	if looks := 1<<40 - ctx.left.Load(); looks < 10 {
		t.Fatalf("a read of 2000 ticks looked at its context %d times", looks)
	}
	if tm, ok := rd.StepContext(context.Background(), got[0].snap.Time, 1); !ok || !tm.After(got[0].snap.Time) {
		t.Fatalf("step: %v %v", tm, ok)
	}
}

// TestSessionsStopsItsReadAheadWhenCancelled: Sessions reads the next
// segment ahead in a goroutine; a cancelled Sessions returns with that
// goroutine ended (it stops inside its segment too), not reading on
// after the call.
func TestSessionsStopsItsReadAheadWhenCancelled(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(8, 16)
	recordSynth(t, dir, node, 3000, 50, Options{})
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rd.Sessions(time.Time{}, time.Time{}); err != nil {
		t.Fatalf("a whole read: %v", err)
	}
	for range 5 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rd.SetContext(ctx)
		base := runtime.NumGoroutine()
		res, err := rd.Sessions(time.Time{}, time.Time{})
		if !errors.Is(err, context.Canceled) || res != nil {
			t.Fatalf("cancelled: %v, %v (want context.Canceled)", res, err)
		}
		// The read-ahead closes its channel as it ends: give it the
		// moment to finish returning, which on a loaded machine (CI under
		// -race on two cores) took more than 20 yields (a read that went
		// on would take a whole segment's decompression).
		n := runtime.NumGoroutine()
		for end := time.Now().Add(20 * time.Millisecond); n > base && time.Now().Before(end); {
			runtime.Gosched()
			time.Sleep(100 * time.Microsecond)
			n = runtime.NumGoroutine()
		}
		if n > base {
			t.Fatalf("%d goroutines after a cancelled Sessions, %d before: its read-ahead reads on", n, base)
		}
	}
}

// TestCancelledSpanIsNotKept: a read cancelled while it looks for the
// record's end (At of a moment outside the record) returns the context's
// error, not an outside error naming a wrong end, and the reader does not
// keep that wrong end for its later answers.
func TestCancelledSpanIsNotKept(t *testing.T) {
	dir := t.TempDir()
	node := newSynth(3, 8)
	got := recordSynth(t, dir, node, 500, 50, Options{})
	last := got[len(got)-1].snap.Time
	rd, err := OpenReader(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rd.SetContext(ctx)
	now := last.Add(time.Second)
	rd.Now = func() time.Time { return now }
	if res, err := rd.At(now.Add(time.Hour)); !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("cancelled read of a moment to come: %v, %v (want context.Canceled)", res, err)
	}
	rd.SetContext(nil)
	_, to, err := rd.Span()
	if err != nil || !to.Equal(last) {
		t.Fatalf("span after a cancelled read ends %s (%v), want %s", to, err, last)
	}
}
