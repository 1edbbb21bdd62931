package console

import (
	"testing"
	"time"
)

// TestClockOnTheSecond: on the whole second the clock fires at the next
// second's grace, whenever it is restarted, and the first snapshot of
// each second does the tick's work (so the engine's poll on the second
// keeps the clock from firing); off it, a TickInterval and the grace
// after the restart, and half a TickInterval after the last tick.
func TestClockOnTheSecond(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse("15:04:05.000", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		onSecond  bool
		now       string
		next      time.Duration
		last, snp string
		due       bool
	}{
		{true, "10:00:00.300", 750 * time.Millisecond, "10:00:00.001", "10:00:00.600", false},
		{true, "10:00:00.950", 100 * time.Millisecond, "10:00:00.600", "10:00:01.002", true},
		{true, "10:00:01.050", time.Second, "10:00:00.001", "10:00:00.999", false},
		{false, "10:00:00.300", TickInterval + tickGrace, "10:00:00.001", "10:00:00.600", true},
		{false, "10:00:00.950", TickInterval + tickGrace, "10:00:00.600", "10:00:01.002", false},
	} {
		k := &consoleClock{onSecond: c.onSecond}
		if got := k.next(at(c.now)); got != c.next {
			t.Errorf("onSecond %v, restarted at %s: fires %s later, want %s", c.onSecond, c.now, got, c.next)
		}
		if got := k.due(at(c.last), at(c.snp)); got != c.due {
			t.Errorf("onSecond %v, last tick %s, snapshot at %s: tick's work %v, want %v", c.onSecond, c.last, c.snp, got, c.due)
		}
	}
}

// TestClockRestart: the clock rings TickInterval+tickGrace after its last
// restart, once, and not for a timer a restart replaced (restart arms a new
// timer: a ring of the old one, taken or not, must not reach the console).
func TestClockRestart(t *testing.T) {
	c := newConsoleClock(false)
	defer c.stop()
	rang := make(chan time.Time, 4)
	go func() {
		for {
			if c.wait()() == nil {
				return
			}
			rang <- time.Now()
		}
	}()
	period := TickInterval + tickGrace
	time.Sleep(period / 2)
	restarted := time.Now()
	c.restart()
	// The first timer's instant passes: no ring.
	select {
	case at := <-rang:
		t.Fatalf("the clock rang %v after its restart, want %v", at.Sub(restarted), period)
	case <-time.After(period * 3 / 4):
	}
	select {
	case at := <-rang:
		if d := at.Sub(restarted); d < period {
			t.Fatalf("the clock rang %v after its restart, want %v", d, period)
		}
	case <-time.After(period * 2):
		t.Fatalf("the clock did not ring within %v of its restart", period*11/4)
	}
	// A ring the console has not taken yet (no wait is running) is dropped
	// by a restart: the next is the new timer's.
	c2 := newConsoleClock(false)
	defer c2.stop()
	c2.ring <- struct{}{} // as if the replaced timer had rung just before
	c2.restart()
	again := time.Now()
	if at, ok := c2.wait()().(clockMsg); !ok {
		t.Fatalf("wait: %T, want clockMsg", at)
	}
	if d := time.Since(again); d < period {
		t.Fatalf("a replaced timer's ring reached the console %v after the restart, want %v", d, period)
	}
}
