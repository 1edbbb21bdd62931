package engine

import (
	"context"
	"testing"
	"time"
)

// TestSendLatestReplacesStaleValue: a reader that has not taken the last
// state gets the newest one, not a backlog, and the sender never blocks.
func TestSendLatestReplacesStaleValue(t *testing.T) {
	out := make(chan int, 1)
	for v := 1; v <= 3; v++ {
		if !sendLatest(context.Background(), out, v) {
			t.Fatalf("send %d refused", v)
		}
	}
	if got := <-out; got != 3 {
		t.Fatalf("reader got %d, want the newest, 3", got)
	}
	select {
	case v := <-out:
		t.Fatalf("a stale value %d was left behind", v)
	default:
	}
}

// TestSendLatestEndsWithContext: with nobody reading an unbuffered
// channel, the send gives up when the context ends.
func TestSendLatestEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if sendLatest(ctx, make(chan int), 1) {
		t.Fatal("sent on a channel nobody reads")
	}
}

// TestPollChangedSendsOnlyChanges: a kick polls at once; an unchanged value
// is not sent again.
func TestPollChangedSendsOnlyChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kick, out := make(chan struct{}), make(chan int, 1)
	vals := make(chan int, 10)
	get := func() int { return <-vals }
	go pollChanged(ctx, time.Hour, kick, out, 0, get, func(a, b int) bool { return a == b })
	vals <- 0 // the same as the start: not sent
	kick <- struct{}{}
	vals <- 5
	kick <- struct{}{}
	if got := <-out; got != 5 {
		t.Fatalf("got %d, want 5", got)
	}
	// Two kicks: the second is taken only once the first poll is over.
	vals <- 5
	vals <- 5
	kick <- struct{}{}
	kick <- struct{}{}
	select {
	case v := <-out:
		t.Fatalf("an unchanged %d was sent again", v)
	default:
	}
	vals <- 7
	kick <- struct{}{}
	if got := <-out; got != 7 {
		t.Fatalf("got %d, want 7", got)
	}
}
