package engine

import (
	"context"
	"time"
)

// sendLatest puts v on out, a channel of capacity 1 that carries a state,
// not events: a value the reader has not taken yet is replaced, so a slow
// reader gets the newest state and never a backlog. Only one goroutine
// sends on out, so once the stale value is taken the send cannot find the
// channel full again; it waits only for an unbuffered reader. It reports
// false when ctx ended first.
func sendLatest[T any](ctx context.Context, out chan T, v T) bool {
	select {
	case out <- v:
		return true
	default:
	}
	select {
	case <-out:
	default:
	}
	select {
	case out <- v:
		return true
	case <-ctx.Done():
		return false
	}
}

// pollChanged calls get every `every` and after each kick, and sends what
// it returns (sendLatest) when same says it differs from the last value
// sent, last to begin with. It returns when ctx ends.
func pollChanged[T any](ctx context.Context, every time.Duration, kick <-chan struct{}, out chan T, last T, get func() T, same func(a, b T) bool) {
	check := func() {
		if v := get(); !same(v, last) && sendLatest(ctx, out, v) {
			last = v
		}
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			check()
		case <-kick:
			check()
		}
	}
}
